#!/usr/bin/env python3
"""models/mnist_train's committed PyTorch/XLA training steps (torch_sgd.hlo, torch_adadelta.hlo),
compiled by `tpuc --precision bf16` and trained by `tpusim train` for STEPS steps from their
initial state, against torch_xla's own run of the same batches (torch_*_losses.json, written by
export_torch.py on the CPU in float32), then evaluated through torch_predict.hlo, torch_xla's
forward pass (`tpusim train --eval`). Needs neither torch nor numpy.

Checks, for each optimizer:
  - all five dots of the step (two forward, the hidden activation's gradient, both weight
    gradients) on the device in bf16, none among the host's ops;
  - the step's parameters are the initial state's tensors by name, and x and y (tpusim train
    then binds the state by these names, and refuses a tensor of another name or shape);
  - step 1's loss within FIRST_TOL of torch_xla's: the same parameters and rows, the device
    rounding the dots' operands to bf16 (measured 1.9e-5 for both; a wrong binding, another
    batch or an unscaled input is off by far more);
  - the mean loss of steps STEPS/2+1..STEPS within MEAN_TOL (relative) of torch_xla's: from step
    2 on the bf16 roundings move the parameters a little apart from float32's, and the loss of
    single steps with them (up to 1.1e-2 measured), but not its mean (measured 0.097 % for SGD,
    0.062 % for Adadelta);
  - the loss falls (the mean of the last STEPS/4 steps below FALL times the first STEPS/4's);
  - the test accuracy on the 2,000 test digits within ACC_TOL points of torch_xla's after the same
    steps.
Usage: train_torch_xla.py --tpuc BIN --tpusim BIN --array N --work-dir DIR; exits 0 when it
passes, 1 when not.
"""
import argparse
import json
import os
import re
import subprocess
import sys

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models")
MODEL, MNIST = os.path.join(MODELS, "mnist_train"), os.path.join(MODELS, "mnist")
OPTIMIZERS = ("sgd", "adadelta")
STEPS = 64  # all the reference losses
FIRST_TOL = 1e-4
MEAN_TOL = 0.01
FALL = 0.9
ACC_TOL = 1.0
SEED = 20240  # export_torch.py's: the shuffle its torch_xla run reproduces


def run(cmd, log):
    """None when cmd succeeds (its output in log), else the error."""
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    with open(log, "w", encoding="utf-8") as f:
        f.write(done.stdout + done.stderr)
    return None if done.returncode == 0 else f"{os.path.basename(cmd[0])} exited {done.returncode}: see {log}"


def safetensors_names(path):
    """The tensor names of a safetensors file, in data order."""
    with open(path, "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    header.pop("__metadata__", None)
    return sorted(header, key=lambda name: header[name]["data_offsets"][0])


def compile_predict(args, work):
    """(package, None) of torch_predict.hlo, or (None, the error)."""
    package = os.path.join(work, "predict.tpub")
    error = run([args.tpuc, os.path.join(MODEL, "torch_predict.hlo"), "--array", str(args.array), "--precision",
                 "bf16", "-o", package], os.path.join(work, "predict.tpuc.txt"))
    return (None, error) if error else (package, None)


def test(args, opt, work, predict):
    """(passed, message) for one optimizer's step."""
    hlo, state = os.path.join(MODEL, f"torch_{opt}.hlo"), os.path.join(MODEL, f"torch_{opt}.safetensors")
    package = os.path.join(work, f"{opt}.tpub")
    report = os.path.join(work, f"{opt}.tpuc.txt")
    error = run([args.tpuc, hlo, "--array", str(args.array), "--precision", "bf16", "-o", package], report)
    if error:
        return False, error
    with open(report, encoding="utf-8") as f:
        text = f.read()
    problems = []
    on_device = len(re.findall(r"^  dot\.\d+: bf16 on the device", text, re.M))
    host = re.search(r"^\s*on the host: (.*)$", text, re.M)
    if on_device != 5 or not host or "(dot)" in host.group(1):
        problems.append(f"expected 5 dots on the device in bf16, found {on_device}")
    with open(hlo, encoding="utf-8") as f:
        inputs = re.findall(r"([\w.-]+): \w+\[", re.search(r"^ENTRY \S+ \((.*?)\) ->", f.read(), re.M).group(1))
    if sorted(inputs) != sorted(safetensors_names(state) + ["x", "y"]):
        problems.append(f"the step's parameters {inputs} are not the state's tensors, x and y")
    csv, log = os.path.join(work, f"{opt}.loss.csv"), os.path.join(work, f"{opt}.train.txt")
    error = run([args.tpusim, "train", package, "--data", os.path.join(MODEL, "train_x_u8.npy"), "--labels",
                 os.path.join(MODEL, "train_y.npy"), "--batch", "32", "--steps", str(STEPS), "--seed", str(SEED),
                 "--state", state, "--loss-csv", csv, "--eval", predict, "--test-data",
                 os.path.join(MNIST, "test_x_u8.npy"), "--test-labels", os.path.join(MNIST, "test_y.npy")],
                log)
    if error:
        return False, error
    with open(log, encoding="utf-8") as f:
        accuracy = float(re.search(r"^test accuracy:\s+([\d.]+) %", f.read(), re.M).group(1))
    with open(csv, encoding="utf-8") as f:
        device = [float(line.split(",")[2]) for line in f.read().splitlines()[1:]]
    with open(os.path.join(MODEL, f"torch_{opt}_losses.json"), encoding="utf-8") as f:
        ref_run = json.load(f)
    ref, ref_accuracy = ref_run["losses"][:STEPS], 100 * ref_run["test_accuracy"]
    if len(device) != STEPS:
        return False, f"{len(device)} losses in {csv}, expected {STEPS}"
    if not abs(device[0] - ref[0]) <= FIRST_TOL:
        problems.append(f"step 1: loss {device[0]:.7f}, torch_xla {ref[0]:.7f}, beyond {FIRST_TOL}")
    half, quarter = STEPS // 2, STEPS // 4
    mean, want = sum(device[half:]) / half, sum(ref[half:]) / half
    if not abs(mean - want) <= MEAN_TOL * want:
        problems.append(f"mean loss of steps {half + 1}-{STEPS} {mean:.5f}, torch_xla {want:.5f}")
    first, last = sum(device[:quarter]) / quarter, sum(device[-quarter:]) / quarter
    if not last < FALL * first:
        problems.append(f"the loss does not fall: {first:.4f} -> {last:.4f}")
    if not abs(accuracy - ref_accuracy) <= ACC_TOL:
        problems.append(f"test accuracy {accuracy:.2f} %, torch_xla {ref_accuracy:.2f} %")
    return not problems, "; ".join(problems) or (
        f"step 1 loss {device[0]:.6f} (torch_xla {ref[0]:.6f}); mean of steps {half + 1}-{STEPS} {mean:.5f} "
        f"(torch_xla {want:.5f}); test accuracy {accuracy:.2f} % (torch_xla {ref_accuracy:.2f} %)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tpuc", required=True)
    parser.add_argument("--tpusim", required=True)
    parser.add_argument("--array", type=int, required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    predict, error = compile_predict(args, args.work_dir)
    if error:
        print(f"FAIL torch_predict: {error}")
        return 1
    failed = 0
    for opt in OPTIMIZERS:
        passed, message = test(args, opt, args.work_dir, predict)
        failed += not passed
        print(f"{'ok' if passed else 'FAIL'} torch_{opt}: {message}")
    print(f"{len(OPTIMIZERS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
