#!/usr/bin/env python3
"""make train: the MNIST MLP's JAX step trained on the device on one core (step.mlir, 32 rows a
step) and data-parallel on a chip of eight (step_dp8.hlo, 8 x 32 rows a step, the gradients
all-reduced), from the same initial parameters on the same shuffled digits (`tpusim train --seed`),
each evaluated on the 2,000 test digits; prints the 1 vs 8 cores table against JAX float32's runs
of the same batches (summary.json) and draws both loss curves. Then the scaling table at the
seeds' per-core batch of 128 (step_b128.mlir, step_dp8_b128.hlo): cycles a step over SCALING_STEPS
steps on 1 and 8 cores, at the memory's default bandwidth and at a quarter of it, with the share
of the 8 cores' step their all-reduce takes.

Usage: cores.py --build BUILD --out DIR [--array N] [--epochs E]. Needs the build's N x 1 and
N x 8 chips; exits 1 when a run fails, or when the device's test accuracy is more than a point
from JAX's."""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MNIST = os.path.join(HERE, "..", "mnist")
CLOCK_HZ = 940e6  # the TPU v2/v3 clock the seeds' timings are at
SCALING_STEPS = 2
SCALING_BANDWIDTHS = (64, 16)  # bytes a cycle: the memory model's default (sim/tpusim.h), a quarter
RUNS = (  # name, package source, cores, JAX float32's run of the same batches in summary.json
    ("1 core", "step.mlir", 1, "float32"),
    ("8 cores", "step_dp8.hlo", 8, "float32, global batch"),
)


def run(cmd, log):
    with open(log, "w", encoding="utf-8") as f:
        r = subprocess.run([str(c) for c in cmd], stdout=f, stderr=subprocess.STDOUT)
    with open(log, encoding="utf-8") as f:
        text = f.read()
    if r.returncode:
        sys.exit(f"cores.py: {' '.join(map(str, cmd[:3]))} ... failed (exit {r.returncode}):\n{text[-2000:]}")
    return text


def figure(text, label):
    m = re.search(rf"^{label}:\s+([\d,.]+)", text, re.M)
    if not m:
        sys.exit(f"cores.py: no '{label}' in tpusim train's output")
    return float(m.group(1).replace(",", ""))


def train(tpusim, pkg, array, cores, log, *options):
    """tpusim train's output for pkg on cores, from init.safetensors on the shuffled digits."""
    return run([tpusim, "train", pkg, "--array", array, "--cores", cores,
                "--data", os.path.join(HERE, "train_x_u8.npy"), "--labels", os.path.join(HERE, "train_y.npy"),
                "--state", os.path.join(HERE, "init.safetensors"), "--seed", "20240", *options], log)


def all_reduce_cycles(text):
    """A core's cycles a step in the all-reduce that tpusim train's output reports."""
    m = re.search(r"^all-reduce:.*\(([\d,]+) each\)", text, re.M)
    if not m:
        sys.exit("cores.py: no all-reduce on the cores in tpusim train's output")
    return float(m.group(1).replace(",", ""))


def scaling(tpuc, tpusim, a):
    """The scaling table's rows: (bandwidth, 1 core's cycles a step, 8 cores', their ratio of
    digits a second, the all-reduce's share of the 8 cores' step) at 128 rows a core."""
    pkgs = {}
    for cores, source in ((1, "step_b128.mlir"), (8, "step_dp8_b128.hlo")):
        pkgs[cores] = os.path.join(a.out, f"scaling{cores}.tpub")
        run([tpuc, os.path.join(HERE, source), "--precision", "bf16", "--array", a.array, "-o", pkgs[cores]],
            os.path.join(a.out, f"scaling{cores}_tpuc.txt"))
    rows = []
    for bw in SCALING_BANDWIDTHS:
        print(f"scaling at 128 rows a core, {bw} bytes a cycle ...", flush=True)
        texts = [train(tpusim, pkgs[c], a.array, c, os.path.join(a.out, f"scaling{c}_bw{bw}.txt"),
                       "--steps", SCALING_STEPS, "--mem-bandwidth", bw, "--log-every", "1000000") for c in (1, 8)]
        one, eight = (figure(t, "device cycles per step") for t in texts)
        rows.append((bw, one, eight, 8 * one / eight, all_reduce_cycles(texts[1]) / eight))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--array", type=int, default=16)
    p.add_argument("--epochs", type=int, default=2)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tpuc, tpusim = (os.path.join(a.build, "bin", t) for t in ("tpuc", "tpusim"))
    with open(os.path.join(HERE, "summary.json"), encoding="utf-8") as f:
        jax_runs = json.load(f)["jax"]
    predict = os.path.join(a.out, "predict.tpub")
    run([tpuc, os.path.join(HERE, "predict.mlir"), "--precision", "bf16", "--array", a.array,
         "-o", predict], os.path.join(a.out, "predict.txt"))
    rows, fails = [], []
    for name, source, cores, jax_run in RUNS:
        tag = f"cores{cores}"
        pkg = os.path.join(a.out, f"{tag}.tpub")
        run([tpuc, os.path.join(HERE, source), "--precision", "bf16", "--array", a.array, "-o", pkg],
            os.path.join(a.out, f"{tag}_tpuc.txt"))
        print(f"training on {name} ...", flush=True)
        text = train(tpusim, pkg, a.array, cores, os.path.join(a.out, f"{tag}_train.txt"),
                     "--epochs", a.epochs, "--log-every", "1000000",
                     "--loss-csv", os.path.join(a.out, f"{tag}_loss.csv"),
                     "--save", os.path.join(a.out, f"{tag}_final.safetensors"),
                     "--eval", predict, "--test-data", os.path.join(MNIST, "test_x_u8.npy"),
                     "--test-labels", os.path.join(MNIST, "test_y.npy"))
        steps = figure(text, "steps")
        cycles = figure(text, "device cycles per step")
        acc = figure(text, "test accuracy")
        per_epoch = steps / a.epochs
        digits = per_epoch * 32 * cores
        jax = jax_runs[jax_run]["test_accuracy"] * 100 if a.epochs == 2 else None
        rows.append((name, 32 * cores, int(per_epoch), cycles, per_epoch * cycles / CLOCK_HZ,
                     digits / (per_epoch * cycles / CLOCK_HZ), figure(text, "MXU utilization"), acc, jax))
        if jax is not None and abs(acc - jax) > 1:
            fails.append(f"{name}: test accuracy {acc:.2f} %, JAX float32 {jax:.2f} %")
        run([tpusim, "plot", os.path.join(a.out, f"{tag}_loss.csv"), "--kind", "loss", "-o",
             os.path.join(a.out, f"{tag}_loss.png")], os.path.join(a.out, f"{tag}_plot.txt"))
    print(f"\nMNIST MLP (784-128-10), bf16 on the {a.array} x {a.array} array, {a.epochs} epoch(s) of "
          f"4,096 digits, simulated time at {CLOCK_HZ / 1e6:.0f} MHz:")
    print("| | rows a step | steps an epoch | device cycles a step | time an epoch | digits/s "
          "| MXU util. | test accuracy | JAX float32 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, batch, per_epoch, cycles, seconds, rate, util, acc, jax in rows:
        print(f"| {name} | {batch} | {per_epoch} | {cycles:,.0f} | {seconds * 1e3:.2f} ms | "
              f"{rate:,.0f} | {util:.1f} % | {acc:.2f} % | {'-' if jax is None else f'{jax:.2f} %'} |")
    print(f"8 cores / 1 core: {rows[1][5] / rows[0][5]:.2f} x the digits per second")
    print(f"loss curves: {a.out}/cores1_loss.png, {a.out}/cores8_loss.png\n")
    table = scaling(tpuc, tpusim, a)
    print(f"\nScaling at 128 rows a core (8 x 128 a step on 8 cores), cycles a step over {SCALING_STEPS} steps:")
    print("| memory bandwidth | 1 core | 8 cores | 8 cores / 1 core, digits/s | all-reduce's share of the step |")
    print("|---|---|---|---|---|")
    for bw, one, eight, ratio, share in table:
        print(f"| {bw} bytes a cycle | {one:,.0f} | {eight:,.0f} | {ratio:.2f} x | {100 * share:.1f} % |")
    for f in fails:
        print(f"FAIL: {f}", file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
