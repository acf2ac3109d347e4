#!/usr/bin/env python3
"""tpusim.jit (python/tpusim/_jax.py) against JAX: a small MLP and a small CNN within the
tolerance of the repo's JAX tests (tests/jax/random_mlp.py: max |device - JAX| <= 5 % of max |JAX|,
int8 calibrated on the first call's inputs) and bit-exact against the golden model (the report's
counts); the CNN's global average pooling as jnp.mean, its sum on the device; a GRU scanned with
lax.scan, its dots on the device in both precisions, one report layer per dot; the package
reused on the second call (the compiles counter), compiled again on a new shape and on new weight
values; pytrees in and out; bf16 weights; a model on a chip's cores; an unsupported op as a
located CompileError; bad arguments as ArgumentError. precision="bf16": an MLP against JAX float32 within
bf16's rounding bound carried through the layers (tests/jax/random_bf16.py's bf16_bound), with
float32 and with ml_dtypes bfloat16 inputs, and the report's precision.

Usage: test_jit.py --array N [unittest options]. Exits 77 (ctest's skip) when jax, cffi or pandas
cannot be imported."""
import os
import sys
import unittest

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax starts: no probing for accelerators
try:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import tpusim

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jax"))
    from random_bf16 import bf16_bound
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

REL_TOL = 0.05
ARRAY = 8


def he(rng, shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def mlp_params(rng, sizes):
    return [{"w": he(rng, (a, b), a), "b": (0.1 * rng.standard_normal(b)).astype(np.float32)}
            for a, b in zip(sizes, sizes[1:])]


def mlp(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def cnn(params, x):
    h = jax.lax.conv_general_dilated(x, params["k"], (1, 1), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jax.nn.relu(h + params["kb"])
    h = h.reshape(h.shape[0], -1)
    return h @ params["w"] + params["b"]


def cnn_mean(params, x):  # cnn with global average pooling as jnp.mean writes it
    h = jax.lax.conv_general_dilated(x, params["k"], (1, 1), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jax.nn.relu(h + params["kb"])
    return jnp.mean(h, axis=(1, 2)) @ params["w"] + params["b"]


def gru(params, x):  # x [batch, time, features] -> the last state, scanned over time
    H = params["wh"].shape[0]

    def cell(h, xt):
        gx, gh = xt @ params["wx"] + params["b"], h @ params["wh"]
        r = jax.nn.sigmoid(gx[:, :H] + gh[:, :H])
        z = jax.nn.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
        n = jnp.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
        return (1 - z) * n + z * h, None

    h0 = jnp.zeros((x.shape[0], H), jnp.float32)
    return jax.lax.scan(cell, h0, jnp.swapaxes(x, 0, 1))[0]


class Jit(unittest.TestCase):
    def assertClose(self, got, want):
        got, want = np.asarray(got), np.asarray(want)
        self.assertEqual(got.shape, want.shape)
        err, scale = np.max(np.abs(got - want)), np.max(np.abs(want))
        self.assertLessEqual(err, REL_TOL * scale, f"max |device - JAX| {err} of max {scale}")

    def assertBitExact(self, report):
        self.assertGreater(report.submissions, 0)
        self.assertEqual(report.bit_exact_submissions, report.submissions)
        self.assertTrue(report.bit_exact)

    def test_mlp_reuse_and_recompile(self):
        rng = np.random.default_rng(1)
        params = mlp_params(rng, [48, 40, 10])
        x = rng.random((16, 48), dtype=np.float32)
        f = tpusim.jit(mlp, array=ARRAY)
        y = f(params, x)
        self.assertClose(y, mlp(params, x))
        self.assertEqual(f.compiles, 1)
        r = f.last_report
        self.assertBitExact(r)
        self.assertTrue(r.compiled)
        self.assertEqual((r.array_n, r.cores, r.batches), (ARRAY, 1, 1))
        self.assertEqual(list(r.layers["kind"]), ["gemm", "gemm"])
        self.assertEqual(list(r.layers[["m", "k", "n"]].itertuples(index=False, name=None)),
                         [(16, 48, 40), (16, 40, 10)])
        self.assertEqual(r.cycles, int(r.layers["cycles"].sum()))  # one batch: no overhead
        self.assertGreater(r.mxu_utilization_percent, 0)
        self.assertIn("device segment 0", r.compiler_report)
        self.assertEqual(r.precision, "int8")
        self.assertEqual(list(r.layers["dtype"]), ["int8", "int8"])
        # Same shapes and weights: the package and its device again, the same figures.
        x2 = rng.random((16, 48), dtype=np.float32)
        y2 = f(params, x2)
        self.assertEqual(f.compiles, 1)
        self.assertFalse(f.last_report.compiled)
        self.assertClose(y2, mlp(params, x2))
        self.assertEqual(f.last_report.cycles, r.cycles)
        self.assertEqual(f.last_report.batches, 1)
        # A new shape compiles; the old one is still open.
        x3 = rng.random((8, 48), dtype=np.float32)
        self.assertClose(f(params, x3), mlp(params, x3))
        self.assertEqual(f.compiles, 2)
        f(params, x)
        self.assertEqual(f.compiles, 2)
        # New weight values compile again, with them.
        params2 = mlp_params(rng, [48, 40, 10])
        self.assertClose(f(params2, x), mlp(params2, x))
        self.assertEqual(f.compiles, 3)

    def test_cnn(self):
        rng = np.random.default_rng(2)
        params = {"k": he(rng, (3, 3, 2, 8), 18), "kb": np.full(8, 0.05, np.float32),
                  "w": he(rng, (6 * 6 * 8, 10), 288), "b": np.zeros(10, np.float32)}
        x = rng.random((4, 8, 8, 2), dtype=np.float32)
        f = tpusim.jit(cnn, array=ARRAY)
        self.assertClose(f(params, x), cnn(params, x))
        r = f.last_report
        self.assertBitExact(r)
        self.assertEqual(list(r.layers["kind"]), ["conv2d", "gemm"])
        self.assertEqual(r.layers["output"][0], (4, 6, 6, 8))

    def test_cnn_global_mean(self):
        # jnp.mean over H and W: its sum runs on the device as a convolution of ones over the
        # whole plane, the division by H * W on the host.
        rng = np.random.default_rng(5)
        params = {"k": he(rng, (3, 3, 2, 8), 18), "kb": np.full(8, 0.05, np.float32),
                  "w": he(rng, (8, 10), 8), "b": np.zeros(10, np.float32)}
        x = rng.random((4, 8, 8, 2), dtype=np.float32)
        for precision in ("int8", "bf16"):
            f = tpusim.jit(cnn_mean, array=ARRAY, precision=precision)
            self.assertClose(f(params, x), cnn_mean(params, x))
            r = f.last_report
            self.assertBitExact(r)
            self.assertEqual(list(r.layers["kind"]), ["conv2d", "conv2d", "gemm"])
            self.assertEqual(r.layers["output"][1], (4, 1, 1, 8))

    def test_gru_scan(self):
        # lax.scan's while is unrolled (its trip count is a constant): both dots of each step on
        # the device, the first step's h . Wh folded (h is zeros), nothing multiplied on the host;
        # the report has one layer per dot of the body, with its iterations.
        rng = np.random.default_rng(4)
        T, F, H = 6, 10, 12
        params = {"wx": he(rng, (F, 3 * H), F), "wh": he(rng, (H, 3 * H), H),
                  "b": np.full(3 * H, 0.05, np.float32)}
        x = rng.standard_normal((8, T, F)).astype(np.float32)
        for precision in ("int8", "bf16"):
            f = tpusim.jit(gru, array=ARRAY, precision=precision)
            self.assertClose(f(params, x), gru(params, x))
            r = f.last_report
            self.assertBitExact(r)
            self.assertEqual(list(r.layers["kind"]), ["gemm"] * 2)
            self.assertEqual(list(r.layers["iterations"]), [T, T - 1])
            self.assertEqual(list(r.layers["submissions"]), [T, T - 1])
            self.assertNotIn("(while)", r.compiler_report)

    def test_pytree_output_and_weights_argument(self):
        rng = np.random.default_rng(3)
        params = mlp_params(rng, [16, 12])

        def two(x, p):
            y = x @ p[0]["w"] + p[0]["b"]
            return {"y": y, "max": jnp.max(y, axis=1)}

        f = tpusim.jit(two, array=ARRAY, weights=[1])
        x = rng.random((8, 16), dtype=np.float32)
        out = f(x, params)
        want = two(x, params)
        self.assertEqual(set(out), {"y", "max"})
        self.assertClose(out["y"], want["y"])
        self.assertClose(out["max"], want["max"])

    def test_bf16_weights(self):
        rng = np.random.default_rng(6)
        w = jnp.asarray(he(rng, (32, 16), 32), jnp.bfloat16)
        b = jnp.full(16, 0.1, jnp.bfloat16)

        def f(w, b, x):
            return jax.nn.relu(x.astype(jnp.bfloat16) @ w + b).astype(jnp.float32)

        x = rng.random((8, 32), dtype=np.float32)
        g = tpusim.jit(f, array=ARRAY)
        self.assertClose(g(w, b, x), f(w, b, x))
        self.assertBitExact(g.last_report)
        self.assertEqual(len(g.last_report.layers), 1)

    def assertWithinBf16(self, got, params, x):
        want = np.asarray(mlp(params, np.asarray(x, np.float32)), np.float64)
        bound = bf16_bound([(l["w"], l["b"]) for l in params], x)
        err = np.abs(np.asarray(got, np.float64) - want)
        self.assertEqual(got.dtype, np.float32)
        self.assertTrue(np.all(err <= bound), f"max |device - JAX| / bound {np.max(err / bound)}")

    def test_bf16_mlp(self):
        rng = np.random.default_rng(7)
        params = mlp_params(rng, [48, 40, 10])
        x = rng.standard_normal((16, 48)).astype(np.float32)
        f = tpusim.jit(mlp, array=ARRAY, precision="bf16")
        self.assertWithinBf16(f(params, x), params, x)
        r = f.last_report
        self.assertBitExact(r)
        self.assertEqual(r.precision, "bf16")
        self.assertEqual(list(r.layers["dtype"]), ["bf16", "bf16"])
        self.assertIn("bf16 on the device", r.compiler_report)
        self.assertIn("dtype", str(r))
        # Inputs given as bfloat16 (ml_dtypes', as JAX's own): another signature, crossing as
        # float32 (exactly); the same bound, as the device rounds its A to bf16 anyway.
        xb = x.astype(jnp.bfloat16)
        self.assertEqual(xb.dtype.name, "bfloat16")
        y = f(params, xb)
        self.assertEqual(f.compiles, 2)
        self.assertWithinBf16(y, params, xb.astype(np.float32))
        self.assertBitExact(f.last_report)
        self.assertEqual(f.last_report.precision, "bf16")

    def test_cores(self):
        rng = np.random.default_rng(4)
        params = mlp_params(rng, [32, 24, 10])
        x = rng.random((16, 32), dtype=np.float32)
        f = tpusim.jit(mlp, array=4, cores=2)
        try:
            y = f(params, x)
        except tpusim.DeviceError as e:
            if "no chip model" in str(e):
                self.skipTest(str(e))
            raise
        self.assertClose(y, mlp(params, x))
        r = f.last_report
        self.assertBitExact(r)
        self.assertEqual((r.cores, r.batches), (2, 2))
        self.assertEqual(list(r.layers["m"]), [8, 8])  # each core's half of the batch
        self.assertEqual(len(r.per_core), 2)
        self.assertLess(r.device_cycles, r.cycles)  # side by side

    def test_unsupported_op_is_a_located_compile_error(self):
        def chol(w, x):
            return jnp.linalg.cholesky(x @ x.T + w)

        f = tpusim.jit(chol, array=ARRAY)
        with self.assertRaises(tpusim.CompileError) as cm:
            f(np.eye(4, dtype=np.float32), np.ones((4, 4), np.float32))
        e = cm.exception
        self.assertGreater(e.line, 0)
        self.assertTrue(str(e).startswith(f"chol.mlir:{e.line}:{e.col}: "), str(e))
        self.assertIn("custom_call", e.text.splitlines()[e.line - 1])
        self.assertIsInstance(e, tpusim.Error)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(tpusim.ArgumentError, "calibrates nothing"):
            tpusim.jit(mlp, precision="bf16", calibrate=(np.ones((4, 8), np.float32),))
        with self.assertRaisesRegex(tpusim.ArgumentError, "precision='fp8'"):
            tpusim.jit(mlp, precision="fp8")
        with self.assertRaisesRegex(tpusim.ArgumentError, "array=0"):
            tpusim.jit(mlp, array=0)
        rng = np.random.default_rng(5)
        params = mlp_params(rng, [8, 4])
        x = np.ones((6, 8), np.float32)
        with self.assertRaisesRegex(tpusim.ArgumentError, "argument 5 of 2"):
            tpusim.jit(mlp, weights=[5])(params, x)
        with self.assertRaisesRegex(tpusim.ArgumentError, "multiple of 4"):
            tpusim.jit(mlp, array=4, cores=4)(params, x)
        with self.assertRaisesRegex(tpusim.ArgumentError, "cores=9"):
            tpusim.jit(mlp, array=4, cores=9)(params, np.ones((18, 8), np.float32))
        with self.assertRaisesRegex(tpusim.ArgumentError, "no arguments"):
            tpusim.jit(mlp)()
        # No model of that array size in this build: the runtime's message.
        with self.assertRaisesRegex(tpusim.DeviceError, "3"):
            tpusim.jit(mlp, array=3)(params, x)


if __name__ == "__main__":
    if "--array" in sys.argv:
        i = sys.argv.index("--array")
        ARRAY = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    unittest.main(verbosity=2)
