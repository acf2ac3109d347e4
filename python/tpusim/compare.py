"""Runs side by side, from their JSON reports (`tpusim run --json`): `python -m tpusim.compare
RUN.json ...` prints the table, as make demo does for its int8 and bf16 runs."""
import sys
from pathlib import Path

import pandas as pd

from .report import Report, _ratio


def table(paths):
    """One row per report: the package, the precision, the images, accuracy against the labels
    and agreement with the expected predictions (percent; None when the run had none), cycles per
    image, MXU utilization."""
    rows = []
    for p in paths:
        r = Report.load(p)
        rows.append({"package": Path(p).stem, "precision": r.precision, "images": r.images,
                     "accuracy %": r.accuracy_percent, "agreement %": r.agreement_percent,
                     "cycles/image": _ratio(r.cycles, r.images),
                     "MXU util %": r.mxu_utilization_percent})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    print(table(sys.argv[1:]).to_string(index=False, float_format="{:,.2f}".format))
