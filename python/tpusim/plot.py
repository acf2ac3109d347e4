"""Pictures of what tpusim measured, with matplotlib: a per-layer roofline, a sweep's cycles and
utilization, the systolic array's wavefront from a trace, a loss curve. Each function returns the
matplotlib Figure (shown inline by a notebook) and writes it as a PNG with save=PATH. The figures
are made without pyplot, so no display or backend is needed and none is left open.

`python -m tpusim.plot FILE --kind roofline|sweep|dataflow|loss [-o OUT.png]` draws one on the
command line; `tpusim plot` runs it (tools/tpusim/main.c). See docs/python.md."""
import argparse
import io
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ._sweep import PARAMETERS
from .errors import ArgumentError, Error
from .report import Report

try:
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    class _Figure(Figure):
        """A Figure a notebook shows inline though no pyplot backend registered Figure's
        display: IPython asks it for its PNG."""

        def _repr_png_(self):
            png = io.BytesIO()
            self.savefig(png, format="png", dpi=100)
            return png.getvalue()
except ImportError:  # the package works without it; drawing says what is missing
    _Figure = None


def _figure(**kw):
    if _Figure is None:
        raise ArgumentError("tpusim.plot needs matplotlib: pip install matplotlib (the package's "
                            "[plot] extra)")
    return _Figure(layout="constrained", **kw)


def _done(fig, save):
    if save is not None:
        fig.savefig(save, dpi=100)
    return fig


def _report(report):
    return report if isinstance(report, Report) else Report.load(report)


def roofline(report, save=None):
    """Each GEMM or convolution of report (a Report, or the path of a `tpusim run --json` or
    `tpusim gemm --json` report) at its arithmetic intensity (MACs per byte of memory traffic)
    and the MACs per cycle it achieved (Report.roofline), under the array's compute roof and the
    memory port's roof; log-log, each point labelled with its layer's name."""
    r = _report(report)
    data = r.roofline
    fig = _figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    x = data["intensity"].to_numpy(float)
    lo, hi = min(x.min(), r.compute_roof / r.memory_roof) / 4, max(x.max(), 1) * 4
    xs = np.geomspace(lo, hi, 200)
    ax.plot(xs, np.minimum(r.compute_roof, r.memory_roof * xs), color="0.3", lw=2, zorder=1)
    ax.axhline(r.compute_roof, color="0.3", ls=":", lw=1)
    ax.text(hi, r.compute_roof, f"compute: {r.compute_roof:,} MACs/cycle "
            f"({r.array_n}x{r.array_n} x {r.cores} core{'s' * (r.cores > 1)})",
            ha="right", va="bottom", fontsize=8)
    ax.text(lo * 1.2, r.memory_roof * lo * 1.4, f"memory: {r.memory_roof} bytes/cycle",
            rotation_mode="anchor", rotation=30, fontsize=8)
    colors = data["kind"].map({"gemm": "tab:blue", "conv2d": "tab:orange"})
    ax.scatter(x, data["macs_per_cycle"], c=list(colors), zorder=2)
    for name, xi, yi in zip(data["name"], x, data["macs_per_cycle"]):
        ax.annotate(name, (xi, yi), xytext=(4, -10), textcoords="offset points", fontsize=7)
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (MACs / byte)",
           ylabel="achieved (MACs / cycle)", xlim=(lo, hi),
           ylim=(min(data["macs_per_cycle"].min(), r.memory_roof * lo) / 2, r.compute_roof * 2),
           title=f"roofline: {len(data)} layer(s), MXU utilization "
                 f"{r.mxu_utilization_percent:.1f} %")
    ax.grid(True, which="major", alpha=0.3)
    return _done(fig, save)


def _frame(table):
    if isinstance(table, pd.DataFrame):
        return table
    path = str(table)
    return pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)


def sweep(table, x=None, save=None):
    """Cycles and MXU utilization against one parameter of a sweep (tpusim.sweep's DataFrame,
    or its CSV or Parquet file): x is "array", "cores", "mem_latency" or "mem_bandwidth"
    (default: the first that varies); one line per combination of the other parameters that
    vary. Rows with an error are left out."""
    df = _frame(table)
    if "error" in df:
        df = df[df["error"].isna()]
    varying = [p for p in PARAMETERS if p in df and df[p].nunique() > 1]
    if x is None:
        if not varying:
            raise ArgumentError("sweep: no parameter varies")
        x = varying[0]
    if x not in df:
        raise ArgumentError(f"sweep: no column {x!r} (the parameters: {', '.join(PARAMETERS)})")
    others = [p for p in varying if p != x]
    fig = _figure(figsize=(7, 5.5))
    ax_c, ax_u = fig.subplots(2, 1, sharex=True)
    groups = df.groupby(others) if others else [((), df)]
    for key, g in groups:
        g = g.sort_values(x)
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{p}={v}" for p, v in zip(others, key)) or None
        ax_c.plot(g[x], g["cycles"], marker="o", label=label)
        ax_u.plot(g[x], g["mxu_utilization_percent"], marker="o", label=label)
    ax_c.set(yscale="log", ylabel="cycles", title=f"sweep: {len(df)} point(s)")
    ax_u.set(xlabel=x, ylabel="MXU utilization (%)", ylim=(0, 100))
    if x in ("array", "cores"):
        ax_u.set_xscale("log", base=2)
        ax_u.set_xticks(sorted(df[x].unique()), [str(v) for v in sorted(df[x].unique())])
    if others:
        ax_c.legend(fontsize=8)
    for ax in (ax_c, ax_u):
        ax.grid(True, alpha=0.3)
    return _done(fig, save)


def dataflow(trace, array=None, window=None, core=0, save=None):
    """The PEs that hold live work in each cycle of a VCD trace (tpusim.vcd.pe_activity): left,
    PE index (row-major) against cycle, where the systolic wavefront runs diagonally; right, the
    array at the cycle when the front reaches half its PEs (live PEs of an n x n grid). array:
    the array's N (default: read from the trace); window: (first, last) cycles of the trace to
    draw; core: which core of a chip."""
    from . import vcd

    n = array or vcd.array_size(trace)
    live = vcd.pe_activity(trace, n, core)
    first, last = window or (0, len(live))
    live = live[first:last]
    if not live.any():
        raise ArgumentError(f"{trace}: no PE holds live work in cycles {first}..{last}")
    fig = _figure(figsize=(9, 4))
    ax, grid = fig.subplots(1, 2, width_ratios=(3, 1))
    cmap = ListedColormap(["white", "tab:blue"])
    ax.imshow(live.reshape(len(live), n * n).T, aspect="auto", interpolation="nearest", cmap=cmap,
              extent=(first - 0.5, first + len(live) - 0.5, n * n - 0.5, -0.5))
    ax.set(xlabel="cycle of the trace", ylabel="PE (row * N + column)",
           title=f"live PEs of the {n}x{n} array, cycle by cycle")
    counts = live.reshape(len(live), -1).sum(axis=1)
    at = int(np.argmax(counts >= max(counts.max(), 1) / 2))
    grid.imshow(live[at], interpolation="nearest", cmap=cmap, vmin=0, vmax=1)
    grid.set(xlabel="column", ylabel="row", title=f"cycle {first + at}")
    return _done(fig, save)


def _steps(table):
    if isinstance(table, pd.DataFrame):
        return table
    path = str(table)
    if path.endswith(".json"):
        with open(path) as f:
            j = json.load(f)
        return pd.DataFrame(j if isinstance(j, list) else j)
    return pd.read_csv(path)


def loss(table, save=None):
    """A training run's loss against its step, from a DataFrame or a CSV or JSON file with
    columns (or keys) step and loss: a JSON list of {"step", "loss"} objects or an object of
    two lists; extra columns (another series, e.g. eval_loss) are drawn too."""
    df = _steps(table)
    for col in ("step", "loss"):
        if col not in df:
            raise ArgumentError(f"loss: no column {col!r} (columns: {', '.join(df.columns)})")
    fig = _figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for col in df.columns.drop("step"):
        if pd.api.types.is_numeric_dtype(df[col]):
            ax.plot(df["step"], df[col], label=col)
    ax.set(xlabel="step", ylabel="loss", title=f"loss: {len(df)} step(s)")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    return _done(fig, save)


KINDS = {"roofline": roofline, "sweep": sweep, "dataflow": dataflow, "loss": loss}


def main(argv=None):
    """tpusim plot: exit 0 having written the PNG, 2 on a usage or input error (matplotlib
    missing included)."""
    p = argparse.ArgumentParser(
        prog="tpusim plot", description="Draws a tpusim report as a PNG (docs/python.md).")
    p.add_argument("file", help="a run or gemm JSON report (roofline), a sweep's CSV (sweep), a "
                   "VCD trace (dataflow), a CSV or JSON of step, loss (loss)")
    p.add_argument("--kind", choices=KINDS, default="roofline")
    p.add_argument("-o", "--output", help="the PNG (default: FILE's name with .KIND.png)")
    p.add_argument("--x", help="sweep: the parameter on the x axis")
    p.add_argument("--array", type=int, help="dataflow: the array's N (default: the trace's)")
    p.add_argument("--window", help="dataflow: FIRST:LAST cycles of the trace")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return e.code
    out = a.output or str(Path(a.file).with_suffix(f".{a.kind}.png"))
    kw = {}
    if a.kind == "sweep":
        kw["x"] = a.x
    if a.kind == "dataflow":
        kw["array"] = a.array
        if a.window:
            try:
                kw["window"] = tuple(int(v) for v in a.window.split(":"))
            except ValueError:
                print(f"tpusim plot: --window: '{a.window}' is not FIRST:LAST", file=sys.stderr)
                return 2
    try:
        KINDS[a.kind](a.file, save=out, **kw)
    except (OSError, ValueError, KeyError, TypeError, Error) as e:
        what = f"no key {e}" if isinstance(e, KeyError) else str(e)
        print(f"tpusim plot: {what if what.startswith(a.file) else f'{a.file}: {what}'}",
              file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
