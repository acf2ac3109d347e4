"""tpusim.sweep: one simulation per point of a grid of device configurations, as independent
Dask tasks, collected into a pandas DataFrame.

Each task runs in process through the library (tpusim.compile, tpusim.Runtime), in a worker that
loads libtpusim.so itself: cffi's handles belong to the process that opened them, so tasks are
sent as the model and the point, never as a runtime. By default the tasks run on Dask's local
process pool (one process per host core, nothing to start); a dask.distributed Client runs them
on its cluster instead."""
import itertools
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
        (df.to_parquet if str(save).endswith(".parquet") else df.to_csv)(save, index=False)
    return df
