#!/usr/bin/env python3
"""Makes docs/img/roofline.png, dataflow.png and sweep.png (docs/python.md, README) with a build's
venv and tools:

    build/venv/bin/python docs/img/plots.py build

roofline: a four-layer MLP (784-256-128-64-10, batch 64, random weights) run in process on the
16 x 16 array; dataflow: `tpusim gemm --m 8 --k 32 --n 16 --array 8 --trace`, the cycles its
MXU works (8 rows a MATMUL: each wavefront and the waits for weights between them show); sweep:
a 64 x 256 x 128 GEMM on arrays 4, 8, 16 with memory ports of 4, 16 and 64 bytes a cycle (needs
those models built)."""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import tpusim
from tpusim import plot, vcd

HERE = Path(__file__).parent
SIZES = (784, 256, 128, 64, 10)


def mlp_hlo(batch):
    lines = ["HloModule mlp", "ENTRY main {"]
    for i, (k, n) in enumerate(zip(SIZES, SIZES[1:])):
        lines.append(f"  w{i} = f32[{k},{n}] parameter({i})")
    lines.append(f"  x = f32[{batch},{SIZES[0]}] parameter({len(SIZES) - 1})")
    h = "x"
    for i, n in enumerate(SIZES[1:]):
        last = i == len(SIZES) - 2
        lines.append(f"  {'ROOT ' if last else ''}d{i} = f32[{batch},{n}] dot({h}, w{i}), "
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
        if not last:
            lines.append(f"  z{i} = f32[] constant(0)")
            lines.append(f"  b{i} = f32[{batch},{n}] broadcast(z{i}), dimensions={{}}")
            lines.append(f"  r{i} = f32[{batch},{n}] maximum(d{i}, b{i})")
            h = f"r{i}"
    return "\n".join(lines + ["}"]) + "\n"


def main(build):
    rng = np.random.default_rng(0)
    weights = {i: rng.normal(0, 0.05, (k, n)).astype(np.float32)
               for i, (k, n) in enumerate(zip(SIZES, SIZES[1:]))}
    x = rng.random((64, SIZES[0]), dtype=np.float32)
    pkg = tpusim.compile(mlp_hlo(64), weights=weights, calibrate=[x], array=16, name="mlp.hlo")
    rt = tpusim.Runtime(pkg)
    _, report = rt.measure(lambda: rt.run(x))
    report.plot_roofline(save=HERE / "roofline.png")
    with tempfile.TemporaryDirectory() as d:
        wave = Path(d) / "wave.vcd"
        subprocess.run([str(Path(build) / "bin" / "tpusim"), "gemm", "--m", "8", "--k", "32",
                        "--n", "16", "--array", "8", "--trace", str(wave)], check=True,
                       stdout=subprocess.DEVNULL)
        busy = np.flatnonzero(vcd.pe_activity(wave, 8).any(axis=(1, 2)))
        plot.dataflow(wave, window=(busy[0] - 2, busy[-1] + 3), save=HERE / "dataflow.png")
    df = tpusim.sweep((64, 256, 128), array=[4, 8, 16], mem_bandwidth=[4, 16, 64])
    plot.sweep(df, save=HERE / "sweep.png")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build")
