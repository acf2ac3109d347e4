#!/usr/bin/env python3
"""tpusim.sweep on Dask: a GEMM at 4 device configurations (two array sizes, two memory
latencies) and one that is not built, on the local process pool and on a dask.distributed
LocalCluster of 2 workers, each the same rows as the points run one by one in this process; the
failing point is a row with its error; `tpusim sweep`, its table, its exit codes and its CSV.

Usage: test_sweep.py --arrays N,M --tpusim BIN [unittest options]. Exits 77 (ctest's skip) when numpy, pandas,
cffi, dask or distributed cannot be imported."""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import dask  # noqa: F401
    import numpy as np
    import pandas as pd
    from dask.distributed import Client, LocalCluster

    import tpusim
    from tpusim import _sweep
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

ARRAYS = None
TPUSIM = None
FIGURES = ["cycles", "device_cycles", "mxu_utilization_percent", "cycles_over_bound",
           "mem_stall_cycles", "submissions", "bit_exact", "error"]


class Sweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = tpusim.Gemm(16, 40, 24)
        cls.grid = dict(array=ARRAYS, mem_latency=[16, 64])
        cls.serial = pd.DataFrame(
            [_sweep.run_point(cls.model, dict(array=a, cores=1, mem_latency=l,
                                                 mem_bandwidth=None))
             for a in ARRAYS for l in (16, 64)], columns=[*_sweep.PARAMETERS, *_sweep.COLUMNS])

    def check(self, df):
        self.assertEqual(len(df), 4)
        pd.testing.assert_frame_equal(df[list(_sweep.PARAMETERS) + FIGURES],
                                      self.serial[list(_sweep.PARAMETERS) + FIGURES])
        self.assertTrue(df["bit_exact"].all())
        self.assertTrue(df["error"].isna().all())

    def test_serial_points(self):
        s = self.serial
        self.assertTrue((s["cycles"] > 0).all())
        # A longer memory latency costs cycles; a larger array takes fewer.
        by = s.set_index(["array", "mem_latency"])["cycles"]
        for a in ARRAYS:
            self.assertGreater(by[a, 64], by[a, 16])
        self.assertGreater(by[ARRAYS[0], 16], by[ARRAYS[1], 16])
        # The Report the point came from: one submission, its cycles the device's.
        r = self.model(array=ARRAYS[0], cores=1, mem_latency=16, mem_bandwidth=None,
                       verify=True)
        self.assertEqual(r.cycles, by[ARRAYS[0], 16])
        self.assertEqual(r.submissions, 1)

    def test_local_processes(self):
        with tempfile.TemporaryDirectory() as d:
            path = f"{d}/sweep.csv"
            df = tpusim.sweep((16, 40, 24), **self.grid, workers=2, save=path)
            self.check(df)
            back = pd.read_csv(path)
            np.testing.assert_array_equal(back["cycles"], df["cycles"])

    def test_distributed_client(self):
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster, Client(cluster) as client:
            self.check(tpusim.sweep(self.model, **self.grid, client=client))

    def test_a_chips_cores(self):
        df = tpusim.sweep(self.model, array=ARRAYS[0], cores=[1, 2], workers=2, progress=True)
        if df["error"][1] and "no chip model" in df["error"][1]:
            self.skipTest(df["error"][1])
        self.assertEqual(df["submissions"].tolist(), [1, 2])
        self.assertTrue(df["bit_exact"].all())
        self.assertLess(df["device_cycles"][1], df["cycles"][1])  # side by side
        self.assertGreaterEqual(df["mem_stall_cycles"][1], 0)
        # The roofline of a chip's report: both cores' MACs over the chip's elapsed cycles.
        r = self.model(array=ARRAYS[0], cores=2, mem_latency=None, mem_bandwidth=None,
                       verify=True)
        self.assertEqual(r.device_cycles, df["device_cycles"][1])
        self.assertAlmostEqual(r.roofline["macs_per_cycle"][0], 2 * 16 * 40 * 24 / r.device_cycles)
        self.assertEqual(r.compute_roof, 2 * ARRAYS[0] ** 2)

    def test_a_failing_point_is_a_row(self):
        df = tpusim.sweep(self.model, array=[ARRAYS[0], 3], workers=1)
        self.assertEqual(df["error"].isna().tolist(), [True, False])
        self.assertRegex(df["error"][1], r"^DeviceError: .*3")
        self.assertTrue(pd.isna(df["cycles"][1]))
        with self.assertRaisesRegex(tpusim.ArgumentError, "a GEMM's"):
            tpusim.sweep("gemm")

    def test_tpusim_sweep(self):
        def sweep(*args):
            return subprocess.run([TPUSIM, "sweep", *map(str, args)], capture_output=True,
                                  text=True, timeout=300)

        arrays = ",".join(map(str, ARRAYS))
        with tempfile.TemporaryDirectory() as d:
            out = f"{d}/sweep.csv"
            r = sweep("--gemm", "16,40,24", "--array", arrays, "--mem-latency", "16,64",
                      "--workers", 2, "-o", out, "--plot", f"{d}/sweep.png")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("mxu_utilization_percent", r.stdout)
            df = pd.read_csv(out)
            np.testing.assert_array_equal(df["cycles"], self.serial["cycles"])
            self.assertTrue(df["bit_exact"].all())
            self.assertGreater(os.path.getsize(f"{d}/sweep.png"), 10000)
            # A point that cannot run: its row, and exit 1.
            r = sweep("--gemm", "16,40,24", "--array", f"{ARRAYS[0]},3", "--workers", 1,
                      "-o", out)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertRegex(r.stderr, r"tpusim sweep: array 3, cores 1: DeviceError: ")
            self.assertEqual(pd.read_csv(out)["error"].isna().tolist(), [True, False])
            # Usage errors: exit 2 and no table written.
            os.remove(out)
            for args, message in [
                (("--gemm", "16,40"), "--gemm '16,40': M,K,N"),
                (("--gemm", "16,40,24", "--array", "8,x"), "--array '8,x': positive integers"),
                (("--gemm", "16,40,24", "--cores", "0"), "--cores '0'"),
                (("--array", "8"), "the following arguments are required: --gemm"),
                (("--gemm", "1,1,1", "--workers", "2", "--scheduler", "x"), "not allowed with"),
            ]:
                r = sweep(*args, "-o", out)
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--arrays", required=True, help="two array sizes the build has, N,M (N < M)")
    p.add_argument("--tpusim", required=True, help="the tpusim command")
    a, rest = p.parse_known_args()
    ARRAYS = [int(v) for v in a.arrays.split(",")]
    TPUSIM = a.tpusim
    unittest.main(argv=[sys.argv[0], *rest])
