#!/usr/bin/env python3
"""tpusim.plot on real reports: a small MLP run in process and by `tpusim run --json`, a small
GEMM by `tpusim gemm --json --trace`. Each picture is a non-empty PNG and what it draws is the
report's figures (the points' coordinates, read back from the Figure); Report.load reads the
run's JSON as the in-process Report measured it (its precision too, and a bf16 GEMM's);
tpusim.compare's table of two runs' JSON (accuracy and agreement when the run had labels and
expected classes); the dataflow's wavefront agrees with the PEs'
own traced activations; `tpusim plot` exits 0 with a PNG, 2 on bad input.

Usage: test_plot.py --array N --tpusim PATH --work-dir DIR [unittest options]. Exits 77 (ctest's
skip) when numpy, pandas, cffi or matplotlib cannot be imported."""
import argparse
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

try:
    import matplotlib  # noqa: F401
    import numpy as np
    import pandas as pd

    import tpusim
    from tpusim import compare, plot, vcd
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

ARGS = None
MLP = """HloModule mlp
ENTRY main {
  w1 = f32[24,16] parameter(0)
  w2 = f32[16,10] parameter(1)
  x = f32[8,24] parameter(2)
  h = f32[8,16] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  zb = f32[8,16] broadcast(z), dimensions={}
  r = f32[8,16] maximum(h, zb)
  ROOT y = f32[8,10] dot(r, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def png_size(path):
    """(width, height) of a PNG, from its header."""
    b = Path(path).read_bytes()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(b[16:20], "big"), int.from_bytes(b[20:24], "big")


def tool(*args, env=None):
    return subprocess.run([ARGS.tpusim, *map(str, args)], capture_output=True, text=True,
                          env=env)


class Plots(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        d = cls.dir = Path(ARGS.work_dir)
        d.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(3)
        w1 = rng.standard_normal((24, 16)).astype(np.float32)
        w2 = rng.standard_normal((16, 10)).astype(np.float32)
        x = rng.random((8, 24), dtype=np.float32)
        pkg = tpusim.compile(MLP, weights={0: w1, 1: w2}, calibrate=[x], array=ARGS.array,
                             name="mlp.hlo")
        rt = tpusim.Runtime(pkg)
        (y,), cls.mlp = rt.measure(lambda: rt.run(x))
        cls.rt, cls.x = rt, x
        pkg.save(d / "mlp.tpub")
        np.save(d / "x.npy", x)
        r = tool("run", d / "mlp.tpub", "--input", d / "x.npy", "--json", d / "mlp.json",
                 "--quiet")
        assert r.returncode == 0, r.stderr
        # Again with labels (the run's own classes but one) and expected classes (all of them).
        classes = np.argmax(y, axis=1)
        np.save(d / "expect.npy", classes)
        np.save(d / "labels.npy", np.where(np.arange(8) == 0, (classes + 1) % 10, classes))
        r = tool("run", d / "mlp.tpub", "--input", d / "x.npy", "--labels", d / "labels.npy",
                 "--expect", d / "expect.npy", "--json", d / "classes.json", "--quiet")
        assert r.returncode == 0, r.stderr
        r = tool("gemm", "--m", 24, "--k", 40, "--n", 20, "--array", ARGS.array, "--json",
                 d / "gemm.json", "--trace", d / "wave.vcd")
        assert r.returncode == 0, r.stderr

    def check_png(self, path, size):
        self.assertEqual(png_size(path), size)
        self.assertGreater(os.path.getsize(path), 10_000)

    def points(self, fig):
        return fig.axes[0].collections[0].get_offsets()

    def test_roofline_of_the_mlp(self):
        out = self.dir / "mlp.roofline.png"
        fig = self.mlp.plot_roofline(save=out)
        self.check_png(out, (700, 450))
        # The run's JSON, read as JSON: each layer at MACs / bytes and MACs / cycle.
        j = json.loads((self.dir / "mlp.json").read_text())
        want = [(l["macs"] / l["bytes"], l["macs"] * l["submissions"]
                 / (l["cycles_per_batch"] * j["batches"])) for l in j["layers"]]
        np.testing.assert_allclose(self.points(fig), want)
        # The bytes: A, B and C once; the first dot's C is int8 (it feeds the second), read
        # with a scale and shift per column; the last's is int32.
        self.assertEqual([l["bytes"] for l in j["layers"]],
                         [8 * 24 + 24 * 16 + 8 * 16 + 12 * 16, 8 * 16 + 16 * 10 + 8 * 10 * 4])
        self.assertEqual([t.get_text() for t in fig.axes[0].texts[2:]],
                         [l["name"] for l in j["layers"]])
        # The roofs: N^2 MACs a cycle; the port's bytes a cycle times the intensity.
        roof = fig.axes[0].lines[0].get_xydata()
        n2, bw = ARGS.array ** 2, j["memory"]["bytes_per_cycle"]
        np.testing.assert_allclose(roof[:, 1], np.minimum(n2, bw * roof[:, 0]))
        self.assertEqual(roof[:, 1].max(), n2)

    def test_load_reads_the_run_as_measured(self):
        loaded = tpusim.Report.load(self.dir / "mlp.json")
        for f in ("array_n", "cores", "mem_bytes_per_cycle", "batches", "cycles", "submissions",
                  "bit_exact_submissions", "precision"):
            self.assertEqual(getattr(loaded, f), getattr(self.mlp, f), f)
        self.assertEqual(loaded.precision, "int8")
        cols = ["name", "dtype", "macs", "bytes", "submissions", "cycles"]
        pd.testing.assert_frame_equal(loaded.layers[cols], self.mlp.layers[cols])
        pd.testing.assert_frame_equal(loaded.roofline, self.mlp.roofline)
        self.assertAlmostEqual(loaded.mxu_utilization_percent, self.mlp.mxu_utilization_percent)

    def test_compare(self):
        t = compare.table([self.dir / "mlp.json", self.dir / "classes.json"])
        self.assertEqual(list(t["package"]), ["mlp", "classes"])
        self.assertEqual(list(t["precision"]), ["int8", "int8"])
        self.assertEqual(list(t["images"]), [8, 8])
        self.assertTrue(t["accuracy %"].isna()[0])
        self.assertEqual(list(t["accuracy %"])[1:], [87.5])
        self.assertEqual(list(t["agreement %"])[1:], [100.0])
        self.assertEqual(list(t["cycles/image"]), [self.mlp.cycles / 8] * 2)
        self.assertAlmostEqual(t["MXU util %"][0], self.mlp.mxu_utilization_percent)
        r = tool("gemm", "--dtype", "bf16", "--m", 8, "--k", 8, "--n", 8, "--array", ARGS.array,
                 "--json", self.dir / "gemm_bf16.json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(tpusim.Report.load(self.dir / "gemm_bf16.json").precision, "bf16")

    def test_roofline_of_a_gemm_report(self):
        fig = plot.roofline(self.dir / "gemm.json", save=self.dir / "gemm.roofline.png")
        j = json.loads((self.dir / "gemm.json").read_text())
        self.assertEqual(j["lower_bound"]["memory_bytes"], 24 * 40 + 40 * 20 + 24 * 20 * 4)
        np.testing.assert_allclose(self.points(fig), [(j["macs"] / j["lower_bound"]["memory_bytes"],
                                                       j["macs"] / j["cycles"]["total"])])
        self.check_png(self.dir / "gemm.roofline.png", (700, 450))

    def test_dataflow(self):
        n = ARGS.array
        self.assertEqual(vcd.array_size(self.dir / "wave.vcd"), n)
        live = vcd.pe_activity(self.dir / "wave.vcd", n)
        # The PEs' own activations: each nonzero one is in a cycle the model calls live, and
        # every PE computes 24 rows (A's) times the 3 K tiles of 40 at N = 8... at least A's rows.
        a_in = vcd.read_signals(self.dir / "wave.vcd", {
            (r, c): (lambda full, r=r, c=c: full.endswith(f"g_row[{r}].g_col[{c}].a_i")
                     or full.endswith(f"g_row({r}).g_col({c}).a_i")) for r in range(n)
            for c in range(n)})
        for (r, c), a in a_in.items():
            self.assertTrue(np.all(live[a != 0, r, c]), (r, c))
            self.assertGreater(int((a != 0).sum()), 0)
        k_tiles, n_tiles = -(-40 // n), -(-20 // n)
        self.assertEqual(int(live[:, 0, 0].sum()), 24 * k_tiles * n_tiles)
        out = self.dir / "wave.dataflow.png"
        fig = plot.dataflow(self.dir / "wave.vcd", save=out)
        np.testing.assert_array_equal(fig.axes[0].images[0].get_array(),
                                      live.reshape(len(live), n * n).T)
        self.check_png(out, (900, 400))

    def test_runtime_trace(self):
        # The next run's waveform from Python, whole and in a window of it: the same wavefront.
        whole, part = self.dir / "rt.vcd", self.dir / "rt_window.vcd"
        n = ARGS.array
        self.rt.trace(whole)
        self.rt.run(self.x)
        self.rt.trace(part, window=(10, 60))
        self.rt.run(self.x)
        live = vcd.pe_activity(whole, n)
        self.assertGreater(int(live[:, 0, 0].sum()), 0)
        window = vcd.pe_activity(part, n)
        self.assertLessEqual(len(window), 51)
        np.testing.assert_array_equal(window[-50:], live[10:60])
        self.assertTrue((self.dir / "rt.gtkw").exists())
        with self.assertRaisesRegex(tpusim.RunError, "nodir"):
            self.rt.trace(self.dir / "nodir" / "t.vcd")
        with self.assertRaisesRegex(tpusim.ArgumentError, "window"):
            self.rt.trace(whole, window=(5, 5))

    def test_sweep_plot(self):
        df = pd.DataFrame({"array": [4, 8, 4, 8], "cores": 1, "mem_latency": [16, 16, 64, 64],
                           "mem_bandwidth": 64, "cycles": [900, 400, 1200, 600],
                           "mxu_utilization_percent": [40.0, 30.0, 35.0, 25.0], "error": None})
        out = self.dir / "sweep.png"
        fig = plot.sweep(df, save=out)
        cyc = [l.get_xydata().tolist() for l in fig.axes[0].lines]
        self.assertEqual(cyc, [[[4, 900], [8, 400]], [[4, 1200], [8, 600]]])
        util = [l.get_xydata().tolist() for l in fig.axes[1].lines]
        self.assertEqual(util, [[[4, 40], [8, 30]], [[4, 35], [8, 25]]])
        self.assertEqual([t.get_text() for t in fig.axes[0].get_legend().texts],
                         ["mem_latency=16", "mem_latency=64"])
        self.check_png(out, (700, 550))

    def test_loss(self):
        path = self.dir / "loss.csv"
        pd.DataFrame({"step": [0, 10, 20], "loss": [2.3, 1.1, 0.7]}).to_csv(path, index=False)
        fig = plot.loss(path, save=self.dir / "loss.png")
        np.testing.assert_allclose(fig.axes[0].lines[0].get_xydata(),
                                   [[0, 2.3], [10, 1.1], [20, 0.7]])
        (self.dir / "loss.json").write_text(json.dumps([{"step": 1, "loss": 3.0},
                                                        {"step": 2, "loss": 2.0}]))
        fig = plot.loss(self.dir / "loss.json")
        np.testing.assert_allclose(fig.axes[0].lines[0].get_xydata(), [[1, 3.0], [2, 2.0]])
        self.check_png(self.dir / "loss.png", (600, 400))
        with self.assertRaisesRegex(tpusim.ArgumentError, "no column 'loss'"):
            plot.loss(pd.DataFrame({"step": [1]}))

    def test_tpusim_plot(self):
        out = self.dir / "cli.png"
        r = tool("plot", self.dir / "mlp.json", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), str(out))
        self.check_png(out, (700, 450))
        r = tool("plot", self.dir / "wave.vcd", "--kind", "dataflow", "--window", "0:60",
                 "-o", out)
        self.assertEqual(r.returncode, 2)  # the MXU's first row comes later
        self.assertIn("wave.vcd: no PE holds live work in cycles 0..60", r.stderr)
        r = tool("plot", self.dir / "wave.vcd", "--kind", "dataflow")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_png(self.dir / "wave.dataflow.png", (900, 400))
        bad = self.dir / "bad.json"
        bad.write_text("{\"array_n\": 8")
        for args, message in [
            ((bad,), "bad.json: Expecting"),
            ((self.dir / "none.json",), "No such file"),
            ((self.dir / "x.npy", "--kind", "loss"), "x.npy"),
            ((self.dir / "mlp.json", "--kind", "bogus"), "invalid choice: 'bogus'"),
            ((self.dir / "wave.vcd", "--kind", "dataflow", "--window", "a:b"), "--window"),
        ]:
            r = tool("plot", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(message, r.stderr)
        r = tool("plot", self.dir / "mlp.json",
                 env=dict(os.environ, TPUSIM_PYTHON="/nonexistent/python"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot run Python '/nonexistent/python'", r.stderr)
        # An interpreter without the package: the system's.
        r = tool("plot", self.dir / "mlp.json", env=dict(
            {k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            TPUSIM_PYTHON="/usr/bin/python3"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("tpusim plot: No module named", r.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--array", type=int, required=True)
    p.add_argument("--tpusim", required=True)
    p.add_argument("--work-dir", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
