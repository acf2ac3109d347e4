#!/usr/bin/env python3
"""A `tpusim train` loss curve (--loss-csv) of step.mlir against JAX's run of the same batches
(jax_losses.npy, export.py): prints the largest difference from JAX float32 and from JAX with bf16
operands over the steps the device ran, and each run's mean loss over its last LAST steps; with
--csv writes step, loss (the device), jax_float32, jax_bf16 for `tpusim plot --kind loss`.

Usage: compare.py LOSS.csv [--jax jax_losses.npy] [--csv OUT.csv] [--last K]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = ("float32", "bf16")  # jax_losses.npy's rows


def device_losses(path):
    """The loss column of a --loss-csv file (step,epoch,loss), steps 1.. in order."""
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if not np.array_equal(table[:, 0], np.arange(1, len(table) + 1)):
        raise SystemExit(f"{path}: steps are not 1..{len(table)}")
    return table[:, 2]


def jax_losses(path, steps):
    """JAX's losses of the first `steps` steps, {run: array}."""
    table = np.load(path)
    if table.shape[1] < steps:
        raise SystemExit(f"{path}: JAX ran {table.shape[1]} steps, the device {steps}")
    return {run: table[i, :steps].astype(np.float64) for i, run in enumerate(RUNS)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("loss_csv")
    parser.add_argument("--jax", default=os.path.join(HERE, "jax_losses.npy"))
    parser.add_argument("--csv", help="write step, loss, jax_float32, jax_bf16 here")
    parser.add_argument("--last", type=int, default=128, help="steps of the closing mean (default 128, an epoch)")
    args = parser.parse_args()
    device = device_losses(args.loss_csv)
    ref = jax_losses(args.jax, len(device))
    last = min(args.last, len(device))
    print(f"{len(device)} steps; mean loss of the last {last}: device {device[-last:].mean():.6f}, "
          + ", ".join(f"JAX {run} {ref[run][-last:].mean():.6f}" for run in RUNS))
    for run in RUNS:
        diff = np.abs(device - ref[run])
        print(f"  device - JAX {run}: largest |difference| {diff.max():.3g} (step {diff.argmax() + 1})")
    if args.csv:
        table = np.column_stack([np.arange(1, len(device) + 1), device, ref["float32"], ref["bf16"]])
        np.savetxt(args.csv, table, delimiter=",", fmt=["%d", "%.9g", "%.9g", "%.9g"],
                   header="step,loss,jax_float32,jax_bf16", comments="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
