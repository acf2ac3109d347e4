#!/usr/bin/env python3
"""examples/tour.ipynb executed top to bottom by a Jupyter kernel of this interpreter (nbclient),
in a scratch directory: every cell runs without an error, and the roofline, the wavefront and the
sweep each show a picture.

Usage: test_notebook.py --notebook PATH --work-dir DIR. Exits 77 (ctest's skip) when nbclient,
nbformat or ipykernel cannot be imported."""
import argparse
import os
import sys

try:
    import ipykernel  # noqa: F401  (the kernel nbclient starts)
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--notebook", required=True)
    p.add_argument("--work-dir", required=True)
    a = p.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    nb = nbformat.read(a.notebook, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": a.work_dir}})
    try:
        client.execute()
    except CellExecutionError as e:
        print(f"FAIL: {e}")
        return 1
    nbformat.write(nb, os.path.join(a.work_dir, "tour.ipynb"))  # with its outputs, to look at
    pictures = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and any(
        "image/png" in o.get("data", {}) for o in c.get("outputs", []))]
    sources = {i: nb.cells[i].source for i in pictures}
    missing = [what for what in ("plot_roofline", "plot.dataflow", "plot.sweep")
               if not any(what in s for s in sources.values())]
    if missing:
        print(f"FAIL: no picture from {', '.join(missing)}")
        return 1
    print(f"PASS: {sum(c.cell_type == 'code' for c in nb.cells)} code cells, "
          f"{len(pictures)} pictures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
