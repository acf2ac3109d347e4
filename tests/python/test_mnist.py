#!/usr/bin/env python3
"""tpusim.jit on the MNIST MLP of models/mnist against the command-line path (tpuc on its HLO text
and safetensors, `tpusim run`): with the same calibration samples the same outputs, bit for bit,
and the same cycles, batch by batch; prints both wall times.

Usage: test_mnist.py --tpuc BIN --tpusim BIN --work-dir DIR [--digits N]. Exits 77 (ctest's skip)
when jax, cffi or pandas cannot be imported."""
import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax starts: no probing for accelerators
try:
    import jax
    import numpy as np

    import tpusim
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MNIST = os.path.join(ROOT, "models", "mnist")
BATCH = 16


def predict(w1, b1, w2, b2, x):
    """models/mnist/export.py's predict: the function mlp.hlo is the text of."""
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.log_softmax(h @ w2 + b2, axis=-1)


def load_weights(path):
    """The float32 tensors of a safetensors file in parameter order (its metadata's numbers)."""
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__")
    tensors = sorted(header.items(), key=lambda kv: int(meta[kv[0]]))
    return [np.frombuffer(raw[8 + n + t["data_offsets"][0]:8 + n + t["data_offsets"][1]],
                          "<f4").reshape(t["shape"]) for _, t in tensors]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--tpusim", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--digits", type=int, default=64)
    a = ap.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    pkg, out, rep = (os.path.join(a.work_dir, f) for f in ("mnist.tpub", "y.npy", "run.json"))
    subprocess.run([a.tpuc, os.path.join(MNIST, "mlp.hlo"), "--weights",
                    os.path.join(MNIST, "mlp.safetensors"), "--calibrate",
                    os.path.join(MNIST, "calib.npy"), "-o", pkg, "--quiet"], check=True)
    subprocess.run([a.tpusim, "run", pkg, "--input", os.path.join(MNIST, "test_x_u8.npy"),
                    "--input-divide", "255", "--limit", str(a.digits), "--output", out,
                    "--json", rep, "--quiet"], check=True)
    want = np.load(out)
    run = json.load(open(rep))

    weights = load_weights(os.path.join(MNIST, "mlp.safetensors"))
    x = np.load(os.path.join(MNIST, "test_x_u8.npy"))[:a.digits].astype(np.float32) / np.float32(255)
    t0 = time.perf_counter()
    f = tpusim.jit(predict, array=16, calibrate=(np.load(os.path.join(MNIST, "calib.npy")),))
    got, cycles = [], []
    for b in range(0, a.digits, BATCH):
        got.append(f(*weights, x[b:b + BATCH]))
        cycles.append(f.last_report.cycles)
        assert f.last_report.bit_exact, f.last_report
    wall = time.perf_counter() - t0
    got = np.concatenate(got)
    failed = []
    if not np.array_equal(got, want):
        failed.append(f"outputs differ: max |jit - run| {np.max(np.abs(got - want))}")
    if sum(cycles) != run["cycles"]["total"] or len(set(cycles)) != 1:
        failed.append(f"cycles: jit {cycles}, tpusim run {run['cycles']['total']} in all")
    if f.compiles != 1:
        failed.append(f"{f.compiles} compiles")
    print(f"{a.digits} digits: {cycles[0]:,} cycles per batch on both; wall time: tpusim.jit "
          f"{wall:.3f} s (compiling included), tpusim run {run['simulation']['wall_seconds']:.3f} s")
    for msg in failed:
        print("FAILED:", msg)
    print(f"{0 if failed else 1} passed, {1 if failed else 0} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
