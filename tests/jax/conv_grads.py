#!/usr/bin/env python3
"""jax.grad of a small CNN's loss with respect to its input and its kernels, through tpuc and
`tpusim run`, against JAX's float32 gradients.

The CNN: a 3x3 convolution with stride 2 and padding 1, ReLU, a 3x3 convolution with stride 1,
loss the mean of its squares; and the same with the second convolution depthwise
(feature_group_count 5), whose weight gradient has batch_group_count 5. Its gradients are what a training step computes: each
convolution's input gradient (a transposed convolution: lhs_dilate 2 with the kernel reversed,
b01f_01oi->b01f, for the strided one) and weight gradient (the activation gradient as the kernel,
contracted over the batch: f01b_i01o->01bf, rhs_dilate 2 for the strided one). The kernels are
bound as constants (safetensors), so a weight gradient's "kernel" is the one computed at run time.
The three gradients are returned as one [batch, -1] array (flattened, concatenated, zero-padded to
rows of the batch) so that `tpusim run` runs one batch.

Checks: tpuc's report places every convolution on the device (none among the host's ops), and
every element is within REL_TOL of the largest |gradient|, random_cnn.py's int8 bound: the
gradients pass through up to three int8 quantizations (input, run-time kernel, hand-off), as
random_cnn.py's deepest models do.

Usage: conv_grads.py --tpuc BIN --tpusim BIN --array N [--work-dir DIR]; exits 0 when it passes,
1 when not, 77 (the ctest SKIP_RETURN_CODE) when jax cannot be imported.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_mlp as mlp  # noqa: E402  (sets JAX_PLATFORMS before jax starts, or records MISSING)

if not mlp.MISSING:
    import jax
    import jax.numpy as jnp
    import numpy as np

REL_TOL = 0.05
BATCH = 8
SEED = 77
NHWC = ("NHWC", "HWIO", "NHWC")


def loss(x, params, groups):
    h = jax.lax.conv_general_dilated(x, params["w1"], (2, 2), ((1, 1), (1, 1)), dimension_numbers=NHWC)
    h = jax.nn.relu(h)
    y = jax.lax.conv_general_dilated(h, params["w2"], (1, 1), ((1, 1), (1, 1)), dimension_numbers=NHWC,
                                     feature_group_count=groups)
    return jnp.mean(y * y)


def grads(x, params, groups):
    dx, dp = jax.grad(loss, argnums=(0, 1))(x, params, groups)
    flat = jnp.concatenate([dx.ravel(), dp["w1"].ravel(), dp["w2"].ravel()])
    flat = jnp.pad(flat, (0, -flat.size % BATCH))
    return flat.reshape(BATCH, -1)


def test(args, work, export, groups):
    rng = np.random.default_rng(SEED)
    params = {"w1": (rng.standard_normal((3, 3, 2, 5)) / 4).astype(np.float32),
              "w2": (rng.standard_normal((3, 3, 5 // groups, 4 if groups == 1 else 5)) / 6).astype(np.float32)}
    calib = rng.standard_normal((8 * BATCH, 11, 9, 2)).astype(np.float32)
    test_x = calib[:BATCH]  # calibrated on the batch it runs, among others: what differs is the device's
    step = jax.jit(grads, static_argnums=2)
    hlo = step.lower(jax.ShapeDtypeStruct(test_x.shape, jnp.float32), params, groups).as_text(dialect="hlo")
    if groups > 1 and f"batch_group_count={groups}" not in hlo:
        return False, f"JAX's depthwise weight gradient has no batch_group_count={groups}"
    want = np.asarray(step(test_x, params, groups))
    error, report, got, _ = mlp.compile_and_run(hlo, params, calib, test_x, want, args, work, export)
    if error:
        return False, error
    placed = re.search(r"convolutions: (\d+),", report)
    host = re.search(r"^\s*on the host: (.*)$", report, re.M)
    problems = []
    if not placed or int(placed.group(1)) != 6:
        problems.append(f"expected 6 convolutions on the device, report: {placed and placed.group(0)}")
    if not host or "convolution" in host.group(1):
        problems.append(f"a convolution on the host: {host and host.group(1)}")
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    scale = float(np.max(np.abs(want)))
    if not err <= REL_TOL * scale:
        problems.append(f"max error {err:.4g} beyond {REL_TOL} of max |gradient| {scale:.4g}")
    return not problems, "; ".join(problems) or f"6 convolutions on the device, max error {err / scale:.2%} of max |gradient|"


def main():
    args = mlp.arguments(__doc__)

    def results(work, export):
        yield "jax.grad of a CNN's loss", *test(args, work, export, 1)
        yield "jax.grad of a CNN's loss, the second convolution depthwise", *test(args, work, export, 5)

    return mlp.run_all(args, "conv-grads-", results)


if __name__ == "__main__":
    sys.exit(main())
