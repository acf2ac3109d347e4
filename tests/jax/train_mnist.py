#!/usr/bin/env python3
"""models/mnist_train's committed JAX training step, compiled by `tpuc --precision bf16` and
trained by `tpusim train` for STEPS steps from its init.safetensors, against the same run in JAX.

Checks: all five dots of the step on the device in bf16 (two forward, the hidden activation's
gradient and both weight gradients; none among the host's ops); predict.mlir's inputs are the
step's state inputs by name, plus its data input; the loss falls (the mean of the last STEPS/4
steps below FALL times the first STEPS/4); and the losses follow JAX's with bf16 operands and
fp32 sums (jax_losses.npy row 1) over the same batches (tpusim train's seeded shuffle, which
export.py reproduces):
  - each of the first EXACT_STEPS steps within EXACT_TOL: the device rounds the same operands to
    bf16, so the two differ only by the order of their fp32 sums (the host program's reductions
    and the array's against XLA's CPU code), measured at most 7e-7; JAX float32 is 1.5e-5 away
    at step 1 and 6.5e-4 by step 10, so a device computing in f32, or other rows, fails;
  - the mean of the last STEPS/2 steps within MEAN_TOL (relative) of JAX bf16's: from step 11 on,
    one such sum-order difference flips a bf16 rounding of a parameter, and at the learning rate
    of 0.3 the runs part like two float32 runs with different sum orders (1e-3 by step 17, like
    JAX float32's own distance from the bf16 run), while their loss stays the same in the mean
    (measured 0.15 % over steps 21-40; 0.02 % over the second epoch).
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
EXACT_STEPS = 10
EXACT_TOL = 5e-6
MEAN_TOL = 0.02
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
    diff = np.abs(device - ref["bf16"])[:EXACT_STEPS]
    if not diff.max() <= EXACT_TOL:
        problems.append(f"step {diff.argmax() + 1}: loss {device[diff.argmax()]:.7f}, JAX bf16 "
                        f"{ref['bf16'][diff.argmax()]:.7f}, beyond {EXACT_TOL}")
    half = STEPS // 2
    mean, want = device[half:].mean(), ref["bf16"][half:].mean()
    if not abs(mean - want) <= MEAN_TOL * want:
        problems.append(f"mean loss of steps {half + 1}-{STEPS} {mean:.5f}, JAX bf16 {want:.5f}")
    return not problems, "; ".join(problems) or (
        f"{STEPS} steps, loss {first:.4f} -> {last:.4f}; first {EXACT_STEPS} steps within {diff.max():.2g} "
        f"of JAX bf16; mean of steps {half + 1}-{STEPS} {mean:.5f}, JAX bf16 {want:.5f}")


def main():
    args = mlp.arguments(__doc__)

    def results(work, export):
        yield "models/mnist_train trained on the device", *test(args, work)

    return mlp.run_all(args, "train-mnist-", results)


if __name__ == "__main__":
    sys.exit(main())
