#!/usr/bin/env python3
"""The tpusim package without JAX: libtpusim.so found and checked against the package's
declarations, tpusim.compile on HLO text with weights as numpy arrays, the package saved and run
through tpusim.Runtime against numpy (int8, and bf16 without calibration), a training step
whose outputs update its inputs, and errors as the package's exceptions with the C layer's
messages.

Usage: test_package.py --array N [unittest options]. Exits 77 (ctest's skip) when cffi, numpy or
pandas cannot be imported."""
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import ml_dtypes
    import numpy as np

    import tpusim
    from tpusim import _lib
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

ARRAY = 8
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HLO = """HloModule m
ENTRY main {
  w = f32[24,10] parameter(0)
  x = f32[8,24] parameter(1)
  ROOT d = f32[8,10] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


class Package(unittest.TestCase):
    def test_library(self):
        self.assertTrue(_lib.path.is_file())
        self.assertEqual(_lib.hlo_type(np.float32), _lib.ABI["HLO_F32"])
        self.assertEqual(_lib.numpy_dtype(_lib.ABI["HLO_S8"]), np.int8)
        env = dict(os.environ, TPUSIM_LIBRARY="/nonexistent/libtpusim.so")
        r = subprocess.run([sys.executable, "-c", "import tpusim"], env=env, capture_output=True,
                           text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryError: libtpusim.so not found (tried /nonexistent/libtpusim.so)",
                      r.stderr)

    def test_compile_save_run(self):
        rng = np.random.default_rng(1)
        w = rng.standard_normal((24, 10)).astype(np.float32)
        x = rng.random((8, 24), dtype=np.float32)
        pkg = tpusim.compile(HLO, weights={0: w}, calibrate=[x], array=ARRAY, name="t.hlo")
        self.assertEqual(pkg.array_n, ARRAY)
        self.assertIn("gemm 0  d  8 x 24 x 10", pkg.report)
        with tempfile.TemporaryDirectory() as d:
            pkg.save(os.path.join(d, "t.tpub"))
            self.assertGreater(os.path.getsize(os.path.join(d, "t.tpub")), 24 * 10)
        rt = tpusim.Runtime(pkg)
        self.assertEqual(rt.inputs, [tpusim.Tensor("x", np.dtype(np.float32), (8, 24))])
        self.assertEqual(rt.outputs[0].shape, (8, 10))
        (y,) = rt.run(x)
        want = x @ w
        self.assertLessEqual(np.max(np.abs(y - want)), 0.05 * np.max(np.abs(want)))
        snap = rt.snapshot()
        self.assertEqual((snap["runs"], snap["submissions"], snap["verified"]), (1, 1, 1))
        self.assertEqual(snap["layers"][0]["cycles"], snap["cycles"])
        self.assertEqual(rt.info()["array_n"], ARRAY)
        # A sequence binds weights by position, None for the input.
        pkg2 = tpusim.compile(HLO, weights=[w, None], calibrate=[x], array=ARRAY)
        (y2,) = tpusim.Runtime(pkg2).run(x)
        np.testing.assert_array_equal(y2, y)

    def test_bf16(self):
        # No samples: bf16 weights and A, fp32 sums, within bf16's relative 2^-7 (two rounded
        # operands) of the exact sum of magnitudes, plus fp32's K * 2^-24 on either side.
        rng = np.random.default_rng(3)
        w = rng.standard_normal((24, 10)).astype(np.float32)
        x = rng.standard_normal((8, 24)).astype(np.float32)
        pkg = tpusim.compile(HLO, weights={0: w}, array=ARRAY, precision="bf16")
        self.assertIn("bf16 on the device", pkg.report)
        rt = tpusim.Runtime(pkg)
        (y,) = rt.run(x)
        mags = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64))
        err = np.abs(y - x.astype(np.float64) @ w.astype(np.float64))
        self.assertTrue(np.all(err <= (2.0 ** -7 + 2.0 ** -16 + 52 * 2.0 ** -24) * mags))
        report = rt.measure(lambda: rt.run(x))[1]
        self.assertEqual((report.precision, report.bit_exact), ("bf16", True))
        self.assertEqual(rt.snapshot()["layers"][0]["dtype"], "bf16")
        # A model whose input and output are bfloat16 takes and gives them as they are: the same
        # device result, rounded to bf16 by the model's convert.
        hlo16 = (HLO.replace("x = f32[8,24]", "x = bf16[8,24]").replace("w = f32", "w = bf16")
                 .replace("ROOT d = f32[8,10]", "d = f32[8,10]")
                 .replace("\n}", "\n  ROOT y = bf16[8,10] convert(d)\n}"))
        xb = x.astype(ml_dtypes.bfloat16)
        wb = w.astype(ml_dtypes.bfloat16)
        (y16,) = tpusim.Runtime(tpusim.compile(hlo16, weights={0: wb}, array=ARRAY,
                                               precision="bf16")).run(xb)
        self.assertEqual(y16.dtype, np.dtype(ml_dtypes.bfloat16))
        (yb,) = rt.run(xb.astype(np.float32))
        np.testing.assert_array_equal(y16.view(np.uint16),
                                      yb.astype(ml_dtypes.bfloat16).view(np.uint16))

    def test_host_work(self):
        # A tanh after the dot runs on the host: the report lists it per opcode, once a run.
        hlo = HLO.replace("ROOT d = f32[8,10] dot", "d = f32[8,10] dot")
        hlo = hlo[:hlo.rindex("}")] + "  ROOT t = f32[8,10] tanh(d)\n}\n"
        rng = np.random.default_rng(2)
        w = rng.standard_normal((24, 10)).astype(np.float32)
        x = rng.random((8, 24), dtype=np.float32)
        rt = tpusim.Runtime(tpusim.compile(hlo, weights={0: w}, calibrate=[x], array=ARRAY))
        report = rt.measure(lambda: [rt.run(x) for _ in range(3)])[1]
        self.assertEqual(report.host.to_dict("records"),
                         [{"opcode": "tanh", "count": 3, "macs": 0, "bytes": 3 * 8 * 10 * 4}])
        self.assertEqual(report.device_macs_percent, 100)
        self.assertIn("host program, per batch:", str(report))

    def test_training_step(self):
        # The JAX SGD step of tests/hlo/stablehlo (parameters donated): its updated parameters
        # say which input they update, and fed back step after step the loss falls.
        path = os.path.join(SOURCE, "tests", "hlo", "stablehlo", "sgd_step.mlir")
        with open(path, encoding="utf-8") as f:
            rt = tpusim.Runtime(tpusim.compile(f.read(), array=ARRAY, precision="bf16"))
        self.assertEqual(rt.updates, [0, 1, 2, 3, None])
        rng = np.random.default_rng(3)
        state = [rng.standard_normal(t.shape).astype(np.float32) * 0.3 for t in rt.inputs[:4]]
        x = np.array([[2, 0, 0, 0], [0, 2, 0, 0]], np.float32)
        y = np.array([0, 1], np.int32)
        losses = []
        for _ in range(20):
            outs = rt.run(*state, x, y)
            for out, k in zip(outs, rt.updates):
                if k is not None:
                    state[k] = out
            losses.append(float(outs[-1]))
        self.assertLess(losses[-1], 0.5 * losses[0], losses)

    def test_errors(self):
        bad = HLO.replace("dot(x, w)", "frobnicate(x, w)")
        with self.assertRaises(tpusim.CompileError) as cm:
            tpusim.compile(bad, name="t.hlo", array=ARRAY)
        e = cm.exception
        self.assertEqual((e.file, e.line), ("t.hlo", 5))
        self.assertTrue(str(e).startswith(f"t.hlo:5:{e.col}: "), str(e))
        self.assertIn("frobnicate", str(e))
        w = np.zeros((10, 24), np.float32)  # transposed
        with self.assertRaisesRegex(tpusim.CompileError,
                                    "'w' is f32\\[24,10\\] but its weight is f32\\[10,24\\]"):
            tpusim.compile(HLO, weights={0: w}, array=ARRAY)
        with self.assertRaisesRegex(tpusim.ArgumentError, "precision='fp8': 'int8' or 'bf16'"):
            tpusim.compile(HLO, weights={0: w.T}, array=ARRAY, precision="fp8")
        with self.assertRaisesRegex(tpusim.ArgumentError, "an array of complex64"):
            tpusim.compile(HLO, weights={0: w.T.astype(np.complex64)}, array=ARRAY)
        x = np.ones((8, 24), np.float32)
        rt = tpusim.Runtime(tpusim.compile(HLO, weights={0: w.T}, calibrate=[x], array=ARRAY))
        with self.assertRaisesRegex(tpusim.ArgumentError, r"input 'x': shape \(4, 24\)"):
            rt.run(x[:4])
        with self.assertRaisesRegex(tpusim.ArgumentError, "2 inputs, the package takes 1"):
            rt.run(x, x)
        with self.assertRaisesRegex(tpusim.ArgumentError, "2 batches on 1 cores"):
            rt.run_batches([[x], [x]])


if __name__ == "__main__":
    if "--array" in sys.argv:
        i = sys.argv.index("--array")
        ARRAY = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    unittest.main(verbosity=2)
