#!/usr/bin/env python3
"""models/mnist_train's committed JAX training step, compiled by `tpuc --precision bf16` and
trained by `tpusim train` for STEPS steps from its init.safetensors, against the same run in JAX.

Checks: all five dots of the step on the device in bf16 (two forward, the hidden activation's
gradient and both weight gradients; none among the host's ops); predict.mlir's inputs are the
step's state inputs by name, plus its data input; the loss falls (the mean of the last STEPS/4
steps below FALL times the first STEPS/4); and every step's loss is within TOL of JAX's with
bf16 operands and fp32 sums (jax_losses.npy row 1). The device rounds the same operands to bf16
as that run, so the two differ only by the order of their fp32 sums (K * 2^-24 of the sum of
magnitudes) and where that flips a bf16 rounding of the next step's parameters; measured:
at most 2e-6 over 40 steps. TOL = 1e-4 is 50 times that and still 5 times below JAX float32's
own distance from the bf16 run by step 40 (5e-4): a device computing in f32, or taking other
rows (the batches are tpusim train's seeded shuffle, reproduced by export.py), fails.

Usage: train_mnist.py --tpuc BIN --tpusim BIN --array N [--work-dir DIR]; exits 0 when it passes,
1 when not, 77 (the ctest SKIP_RETURN_CODE) when jax cannot be imported.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_mlp as mlp  # noqa: E402  (sets JAX_PLATFORMS before jax starts, or records MISSING)

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "mnist_train")
sys.path.insert(0, MODEL)
if not mlp.MISSING:
    import numpy as np

    import compare  # noqa: E402  (models/mnist_train/compare.py)

STEPS = 40
TOL = 1e-4
FALL = 0.9
SEED = 20240  # export.py's: the shuffle its JAX run reproduces


def inputs(args, package):
    """The input names `tpusim run PACKAGE` lists when given none."""
    done = subprocess.run([args.tpusim, "run", package], capture_output=True, text=True, check=False)
    return re.findall(r"'([^']+)' \w+\[", done.stderr)


def test(args, work):
    os.makedirs(work, exist_ok=True)
    step, predict = os.path.join(work, "step.tpub"), os.path.join(work, "predict.tpub")
    for src, out in (("step.mlir", step), ("predict.mlir", predict)):
        error = mlp.run([args.tpuc, os.path.join(MODEL, src), "--array", str(args.array), "--precision", "bf16",
                         "-o", out], os.path.join(work, src + ".txt"))
        if error:
            return False, error
    with open(os.path.join(work, "step.mlir.txt"), encoding="utf-8") as f:
        report = f.read()
    problems = []
    on_device = len(re.findall(r"^  dot\.\d+: bf16 on the device", report, re.M))
    host = re.search(r"^\s*on the host: (.*)$", report, re.M)
    if on_device != 5 or not host or "(dot)" in host.group(1):
        problems.append(f"expected 5 dots on the device in bf16, found {on_device}")
    step_in, predict_in = inputs(args, step), inputs(args, predict)
    if step_in[:4] != predict_in[:4] or len(step_in) != 6 or len(predict_in) != 5:
        problems.append(f"predict's inputs {predict_in} are not the step's state and data {step_in}")
    csv = os.path.join(work, "loss.csv")
    error = mlp.run([args.tpusim, "train", step, "--data", os.path.join(MODEL, "train_x_u8.npy"), "--labels",
                     os.path.join(MODEL, "train_y.npy"), "--batch", "32", "--steps", str(STEPS), "--state",
                     os.path.join(MODEL, "init.safetensors"), "--seed", str(SEED), "--loss-csv", csv],
                    os.path.join(work, "train.txt"))
    if error:
        return False, error
    device = compare.device_losses(csv)
    ref = compare.jax_losses(os.path.join(MODEL, "jax_losses.npy"), STEPS)
    quarter = STEPS // 4
    first, last = device[:quarter].mean(), device[-quarter:].mean()
    if not last < FALL * first:
        problems.append(f"the loss does not fall: {first:.4f} -> {last:.4f}")
    diff = np.abs(device - ref["bf16"])
    if not diff.max() <= TOL:
        problems.append(f"step {diff.argmax() + 1}: loss {device[diff.argmax()]:.6f}, JAX bf16 "
                        f"{ref['bf16'][diff.argmax()]:.6f}, beyond {TOL}")
    far = np.abs(device - ref["float32"]).max()
    return not problems, "; ".join(problems) or (
        f"{STEPS} steps, loss {first:.4f} -> {last:.4f}; largest |device - JAX bf16| {diff.max():.2g}, "
        f"|device - JAX float32| {far:.2g}")


def main():
    args = mlp.arguments(__doc__)

    def results(work, export):
        yield "models/mnist_train trained on the device", *test(args, work)

    return mlp.run_all(args, "train-mnist-", results)


if __name__ == "__main__":
    sys.exit(main())
