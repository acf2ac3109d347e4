"""tpusim.sweep: one simulation per point of a grid of device configurations, as independent
Dask tasks, collected into a pandas DataFrame.

Each task runs in process through the library (tpusim.compile, tpusim.Runtime), in a worker that
loads libtpusim.so itself: cffi's handles belong to the process that opened them, so tasks are
sent as the model and the point, never as a runtime. By default the tasks run on Dask's local
process pool (one process per host core, nothing to start); a dask.distributed Client runs them
on its cluster instead."""
import itertools
import os
import sys
import time

import numpy as np

from .errors import ArgumentError, Error

# A sweep's parameters: its first columns, and the order its plots group them in.
PARAMETERS = ("array", "cores", "mem_latency", "mem_bandwidth")
# The columns of a sweep's DataFrame after the parameters.
COLUMNS = ("cycles", "device_cycles", "mxu_utilization_percent", "cycles_over_bound",
           "mem_stall_cycles", "submissions", "bit_exact", "wall_seconds", "error")


class Gemm:
    """The model of a sweep that is one GEMM: C = A . B, A [m, k] and B [k, n] random (seeded)
    float32, compiled for each point's array and run once per core (each core its own A, m rows),
    int8 as the compiler quantizes it."""

    def __init__(self, m, k, n, seed=0):
        self.m, self.k, self.n, self.seed = m, k, n, seed

    def __repr__(self):
        return f"Gemm({self.m}, {self.k}, {self.n})"

    def __call__(self, array, cores, mem_latency, mem_bandwidth, verify):
        from . import compiler
        from .runtime import Runtime

        rng = np.random.default_rng(self.seed)
        w = rng.standard_normal((self.k, self.n)).astype(np.float32)
        xs = [rng.random((self.m, self.k), dtype=np.float32) for _ in range(cores)]
        hlo = (f"HloModule gemm\nENTRY main {{\n  w = f32[{self.k},{self.n}] parameter(0)\n"
               f"  x = f32[{self.m},{self.k}] parameter(1)\n"
               f"  ROOT d = f32[{self.m},{self.n}] dot(x, w), lhs_contracting_dims={{1}}, "
               "rhs_contracting_dims={0}\n}\n")
        pkg = compiler.compile(hlo, weights={0: w}, calibrate=[np.concatenate(xs)], array=array,
                               name="gemm.hlo")
        rt = Runtime(pkg, cores=cores, mem_latency=mem_latency, mem_bandwidth=mem_bandwidth,
                     verify=verify)
        return rt.measure(lambda: rt.run_batches([[x] for x in xs]))[1]


def run_point(model, point, verify=True):
    """One row of a sweep: the point's parameters and what model measured there, or the error
    it raised (a tpusim.Error's message) with the figures left empty."""
    t0 = time.perf_counter()
    row = dict(point)
    try:
        r = model(**point, verify=verify)
        row.update(cycles=r.cycles, device_cycles=r.device_cycles,
                   mxu_utilization_percent=r.mxu_utilization_percent,
                   cycles_over_bound=r.cycles_over_bound,
                   mem_stall_cycles=sum(c["mem_stall_cycles"] for c in r.core_rows),
                   submissions=r.submissions, bit_exact=r.bit_exact, error=None)
    except Error as e:
        row.update({c: None for c in COLUMNS}, error=f"{type(e).__name__}: {e}")
    row["wall_seconds"] = time.perf_counter() - t0
    return row


def sweep(model, *, array=(16,), cores=(1,), mem_latency=(None,), mem_bandwidth=(None,),
          verify=True, client=None, workers=None, save=None, progress=False):
    """Runs model at every combination of the parameters, one Dask task each, and returns a
    DataFrame: one row per point, the parameters (array, cores, mem_latency, mem_bandwidth;
    None: the memory model's default) then COLUMNS. A point that fails is a row with its
    error.

    model: a GEMM's shape (m, k, n), or a callable model(array=, cores=, mem_latency=,
    mem_bandwidth=, verify=) returning a tpusim.Report (e.g. a Gemm, or one that runs a
    tpusim.jit function), which Dask sends to the workers (cloudpickle: a closure or lambda
    will do). client: a dask.distributed Client (its cluster runs the tasks); else Dask's local
    process pool of `workers` processes (default: the host's cores). save: a .csv or .parquet
    path the DataFrame is written to. progress: show the tasks' progress (Dask's progress bar
    on stdout; a client's in a notebook's widget or on the console)."""
    import contextlib

    import dask
    import pandas as pd

    if isinstance(model, tuple):
        model = Gemm(*model)
    if not callable(model):
        raise ArgumentError(f"sweep: model {model!r}: a GEMM's (m, k, n) or a callable")
    grid = [dict(zip(PARAMETERS, p)) for p in itertools.product(
        *(v if isinstance(v, (list, tuple)) else [v]
          for v in (array, cores, mem_latency, mem_bandwidth)))]
    tasks = [dask.delayed(run_point, pure=True)(model, p, verify) for p in grid]
    if client is not None:
        futures = client.compute(tasks)
        if progress:
            from dask.distributed import progress as show
            show(futures)
        rows = client.gather(futures)
    else:
        from dask.diagnostics import ProgressBar

        with ProgressBar() if progress else contextlib.nullcontext():
            rows = dask.compute(*tasks, scheduler="processes", num_workers=workers)
    df = pd.DataFrame(list(rows), columns=[*PARAMETERS, *COLUMNS])
    if save is not None:
        # Whole or not at all: written beside save, then renamed over it.
        tmp = f"{save}.tmp{os.getpid()}"
        try:
            (df.to_parquet if str(save).endswith(".parquet") else df.to_csv)(tmp, index=False)
            os.replace(tmp, save)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return df


def _ints(text, what):
    """'8,16,32' as [8, 16, 32]; an ArgumentError naming the option otherwise."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise ArgumentError(f"{what} '{text}': positive integers separated by commas")
    return values


def main(argv=None):
    """tpusim sweep: a GEMM at every combination of the options' values, on Dask; prints the
    table. Exit 0 when every point ran, 1 when one failed (its row holds the error), 2 on a usage
    error."""
    import argparse

    p = argparse.ArgumentParser(
        prog="tpusim sweep", description="Runs a GEMM at every combination of device "
        "configurations, one Dask task each (docs/python.md).")
    p.add_argument("--gemm", required=True, metavar="M,K,N", help="the GEMM's shape")
    p.add_argument("--array", default="16", metavar="N,...", help="array sizes (default 16)")
    p.add_argument("--cores", default="1", metavar="C,...", help="core counts (default 1)")
    p.add_argument("--mem-latency", metavar="L,...", help="memory latencies in cycles "
                   "(default: the memory model's)")
    p.add_argument("--mem-bandwidth", metavar="B,...", help="memory bytes per cycle "
                   "(default: the memory model's)")
    p.add_argument("--no-verify", action="store_true", help="skip the golden model's check")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="W",
                       help="local worker processes (default: the host's cores)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="a dask.distributed scheduler to run the tasks on")
    p.add_argument("-o", "--output", metavar="FILE", help="the table as CSV (or .parquet)")
    p.add_argument("--plot", metavar="PNG", help="cycles and utilization against --x")
    p.add_argument("--x", help="--plot's parameter on the x axis (default: the first that varies)")
    p.add_argument("--progress", action="store_true", help="show the tasks' progress")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return e.code
    try:
        m, k, n = _ints(a.gemm, "--gemm")
    except ValueError:
        print(f"tpusim sweep: --gemm '{a.gemm}': M,K,N", file=sys.stderr)
        return 2
    except ArgumentError as e:
        print(f"tpusim sweep: {e}", file=sys.stderr)
        return 2
    try:
        grid = dict(array=_ints(a.array, "--array"), cores=_ints(a.cores, "--cores"),
                    mem_latency=_ints(a.mem_latency, "--mem-latency") if a.mem_latency else [None],
                    mem_bandwidth=(_ints(a.mem_bandwidth, "--mem-bandwidth")
                                   if a.mem_bandwidth else [None]))
        client = None
        if a.scheduler:
            from dask.distributed import Client
            client = Client(a.scheduler)
        df = sweep((m, k, n), **grid, verify=not a.no_verify, client=client, workers=a.workers,
                   save=a.output, progress=a.progress)
        if a.plot:
            from . import plot
            plot.sweep(df, x=a.x, save=a.plot)
    except (ArgumentError, OSError, ImportError, ValueError) as e:
        print(f"tpusim sweep: {e}", file=sys.stderr)
        return 2
    import pandas as pd

    with pd.option_context("display.max_columns", None, "display.width", 200):
        print(df.convert_dtypes().to_string(index=False, na_rep="-"))
    failed = df["error"].notna()
    for _, row in df[failed].iterrows():
        point = ", ".join(f"{k} {row[k]:g}" for k in PARAMETERS if pd.notna(row[k]))
        print(f"tpusim sweep: {point}: {row['error']}", file=sys.stderr)
    return 1 if failed.any() else 0
