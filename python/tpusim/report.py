"""What a call measured: the figures `tpusim run` reports (tools/common/run_report.c), taken from
the same runtime counters, as Python values and pandas DataFrames."""
import functools
from dataclasses import dataclass, field

import pandas as pd


_FORMATS = {"cycles_per_batch": "{:,.0f}".format, "mxu_utilization_percent": "{:.1f}".format,
            "cycles_over_bound": "{:.3f}".format}


def _ratio(a, b):
    return a / b if b else float("nan")


@dataclass
class Report:
    """One call of a tpusim.jit function (or any stretch of runs of a Runtime).

    cycles: device cycles of all its submissions (firmware included), summed over cores;
    device_cycles: the device's clock edges (less than cycles when a chip's cores run side by
    side); mxu_utilization_percent and cycles_over_bound: against the layers' ideal (MACs / N^2)
    and lower-bound cycles; bit_exact_submissions of submissions agreed with the golden model;
    layers: one row per device operation (GEMM or convolution); per_core: with a chip of several
    cores, each core's figures (else None); compiler_report: the compiler's text (what runs on
    the device, what on the host, the quantization); host_seconds: the host program's own ops."""

    array_n: int
    cores: int
    mem_latency: int
    mem_bytes_per_cycle: int
    batches: int
    cycles: int
    device_cycles: int
    submissions: int
    bit_exact_submissions: int
    mxu_utilization_percent: float
    cycles_over_bound: float
    device_seconds: float
    host_seconds: float
    wall_seconds: float
    compiled: bool
    compile_seconds: float
    compiler_report: str = field(repr=False)
    layer_rows: list = field(repr=False)  # what `layers` is made of, as dicts
    core_rows: list = field(repr=False)  # what `per_core` is made of

    @property
    def bit_exact(self):
        """Every submission agreed with the golden model."""
        return self.bit_exact_submissions == self.submissions

    @functools.cached_property
    def layers(self):
        """A DataFrame, made when first asked for: pandas costs more than a small model's run."""
        layers = pd.DataFrame(self.layer_rows)
        if len(layers):
            layers["cycles_per_batch"] = layers["cycles"] / max(self.batches, 1)
            layers["mxu_utilization_percent"] = 100 * layers["ideal_cycles"] / layers["cycles"]
            layers["cycles_over_bound"] = layers["cycles"] / layers["bound_cycles"]
        return layers

    @functools.cached_property
    def per_core(self):
        if not self.core_rows:
            return None
        per_core = pd.DataFrame(self.core_rows).rename_axis("core")
        per_core["mem_stall_percent"] = 100 * per_core["mem_stall_cycles"] / per_core["cycles"]
        return per_core

    @classmethod
    def from_runs(cls, info, d, **timing):
        """From Runtime.info() and the delta of two Runtime.snapshot()s."""
        ideal = sum(l["ideal_cycles"] for l in d["layers"])
        bound = sum(l["bound_cycles"] for l in d["layers"])
        return cls(
            array_n=info["array_n"],
            cores=info["cores"],
            mem_latency=info["mem_latency"],
            mem_bytes_per_cycle=info["mem_bytes_per_cycle"],
            batches=d["runs"],
            cycles=d["cycles"],
            device_cycles=d["device_cycles"],
            submissions=d["submissions"],
            bit_exact_submissions=d["verified"],
            mxu_utilization_percent=100 * _ratio(ideal, d["cycles"]),
            cycles_over_bound=_ratio(d["cycles"], bound),
            device_seconds=d["device_seconds"],
            host_seconds=d["host_seconds"],
            layer_rows=d["layers"],
            core_rows=d["cores"],
            **timing,
        )

    def __str__(self):
        cols = ["name", "kind", "m", "k", "n", "cycles_per_batch", "mxu_utilization_percent",
                "cycles_over_bound"]
        lines = [
            f"array:                     {self.array_n} x {self.array_n}, {self.cores} core(s)",
            f"memory:                    latency {self.mem_latency} cycles, "
            f"{self.mem_bytes_per_cycle} bytes/cycle",
            f"batches:                   {self.batches}",
            "layers, per batch:",
            self.layers[cols].to_string(index=False, formatters=_FORMATS)
            if len(self.layers) else "  (none)",
            f"cycles:                    {self.cycles:,}",
            f"MXU utilization:           {self.mxu_utilization_percent:.1f} %",
            f"cycles / lower bound:      {self.cycles_over_bound:.3f}",
        ]
        if self.core_rows:
            lines.append(f"chip elapsed cycles:       {self.device_cycles:,}  "
                         f"({self.cycles / self.device_cycles:.2f} cores busy at once, on average)")
        lines += [
            f"bit-exact vs golden model: {self.bit_exact_submissions}/{self.submissions} "
            "submissions",
            f"wall time:                 {self.wall_seconds:.3f} s"
            + (f" (compiling {self.compile_seconds:.3f} s)" if self.compiled else ""),
        ]
        return "\n".join(lines)
