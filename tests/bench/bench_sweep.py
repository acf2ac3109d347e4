#!/usr/bin/env python3
"""make bench: a 12-point sweep of a GEMM (arrays 8 and 16, memory latencies 16, 32 and 64,
ports of 32 and 64 bytes a cycle) run one point after another in this process, and as
tpusim.sweep on a dask.distributed LocalCluster of 2 single-threaded worker processes started
beforehand (their first task loads the library: counted). Alternates the two REPEATS times and
prints each wall time, the median of each and the median of the pairs' ratios (parallel /
serial); checks that both give the same figures.

Usage: bench_sweep.py [--gemm M,K,N] [--repeats R]."""
import argparse
import logging
import statistics
import sys
import time

import pandas as pd
from dask.distributed import Client, LocalCluster

import tpusim
from tpusim import _sweep

GRID = dict(array=[8, 16], cores=[1], mem_latency=[16, 32, 64], mem_bandwidth=[32, 64])
FIGURES = ["cycles", "device_cycles", "mem_stall_cycles", "bit_exact", "error"]


def serial(model):
    points = [dict(zip(_sweep.PARAMETERS, p)) for p in
              pd.MultiIndex.from_product(list(GRID.values())).tolist()]
    return pd.DataFrame([_sweep.run_point(model, p) for p in points],
                        columns=[*_sweep.PARAMETERS, *_sweep.COLUMNS])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gemm", default="512,512,512")
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    logging.getLogger("distributed").setLevel(logging.ERROR)  # restarts are the bench's own
    model = tpusim.Gemm(*(int(v) for v in a.gemm.split(",")))
    times = {"serial": [], "cluster": []}
    ratios = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            one = serial(model)
            t1 = time.perf_counter()
            many = tpusim.sweep(model, **GRID, client=client)
            t2 = time.perf_counter()
            times["serial"].append(t1 - t0)
            times["cluster"].append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
            client.restart()  # the next repeat's workers load the library again
            if not one[FIGURES].equals(many[FIGURES]) or one["error"].notna().any():
                print("bench_sweep: the cluster's figures differ from the serial run's, or a "
                      "point failed:\n" + one.to_string() + "\n" + many.to_string(),
                      file=sys.stderr)
                return 1
    print(f"sweep of {len(one)} points ({model!r}), {a.repeats} runs each, wall seconds:")
    for k, v in times.items():
        print(f"  {k:8s} " + "  ".join(f"{t:6.2f}" for t in v) + f"   median {statistics.median(v):6.2f}")
    print(f"  LocalCluster of 2 workers / serial: median of the pairs {statistics.median(ratios):.2f} "
          "(same figures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
