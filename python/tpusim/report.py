"""What a call measured: the figures `tpusim run` reports (tools/common/run_report.c), taken from
the same runtime counters, as Python values and pandas DataFrames; or read back from the JSON
report of `tpusim run --json` or `tpusim gemm --json` (Report.load)."""
import functools
import json
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
    layers: one row per device operation (GEMM or convolution; a loop's dot once, with its
    iterations); per_core: with a chip of several cores, each core's figures (else None);
    compiler_report: the compiler's text (what runs on the device, what on the host, the
    quantization); host_seconds: the host program's own ops;
    host: what they were, per opcode; device_macs_percent: the device's share of the MACs;
    precision: what the device operations computed in. A run's JSON report (Report.load) also
    gives images, and accuracy_percent and agreement_percent when it was run with labels and
    expected predictions (else None)."""

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
    host_rows: list = field(repr=False)  # what `host` is made of
    images: int = None
    accuracy_percent: float = None
    agreement_percent: float = None

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

    @property
    def precision(self):
        """The layers' dtypes: "int8", "bf16", "int8+bf16" when both ran, None with no layers."""
        return "+".join(sorted({l["dtype"] for l in self.layer_rows}, reverse=True)) or None

    @functools.cached_property
    def host(self):
        """The host program's own work per opcode (count, MACs, bytes produced; all batches),
        most MACs first: what the device did not do."""
        return pd.DataFrame(self.host_rows, columns=["opcode", "count", "macs", "bytes"])

    @property
    def device_macs_percent(self):
        """The device's share of the model's multiply-accumulates."""
        device = sum(l["macs"] * l["submissions"] for l in self.layer_rows)
        host = sum(h["macs"] for h in self.host_rows)
        return 100 * _ratio(device, device + host)

    @functools.cached_property
    def per_core(self):
        if not self.core_rows:
            return None
        per_core = pd.DataFrame(self.core_rows).rename_axis("core")
        per_core["mem_stall_percent"] = 100 * per_core["mem_stall_cycles"] / per_core["cycles"]
        return per_core

    @functools.cached_property
    def roofline(self):
        """The roofline's figures, one row per layer: `intensity`, MACs per byte of memory
        traffic (`macs` / `bytes`, a submission's); `macs_per_cycle`, what it achieved: its
        MACs over its cycles, times the cores busy at once on average (`cycles` /
        `device_cycles`, 1 on a lone core), as a chip's cores run their batches side by side.
        The roofs are compute_roof (N^2 MACs a cycle per core, times the cores) and memory_roof
        (the port's bytes a cycle: `intensity` times it is the memory's roof)."""
        layers = self.layers
        busy = _ratio(self.cycles, self.device_cycles) if self.core_rows else 1.0
        out = pd.DataFrame({"name": layers["name"], "kind": layers["kind"],
                            "intensity": layers["macs"] / layers["bytes"],
                            "macs_per_cycle": layers["macs"] * layers["submissions"]
                            / layers["cycles"] * busy})
        return out

    @property
    def compute_roof(self):
        """MACs a cycle at best: N^2 per core, times the cores."""
        return self.array_n ** 2 * self.cores

    @property
    def memory_roof(self):
        """The memory port's bytes a cycle."""
        return self.mem_bytes_per_cycle

    def plot_roofline(self, **kw):
        """tpusim.plot.roofline of this report: the Figure (save= writes a PNG)."""
        from . import plot
        return plot.roofline(self, **kw)

    @classmethod
    def load(cls, path):
        """A Report from the JSON report of `tpusim run --json` (every layer) or of
        `tpusim gemm --json` (its GEMM as the one layer, named "gemm"). Counts the JSON gives
        per batch or as ratios come back as sums (a layer's cycles, ideal and bound cycles)."""
        with open(path) as f:
            j = json.load(f)
        return (_from_gemm_json if "gemm" in j and "layers" not in j else _from_run_json)(j)

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
            host_rows=d["host_ops"],
            **timing,
        )

    def __str__(self):
        loops = any(l["iterations"] > 1 for l in self.layer_rows)
        cols = ["name", "kind", "dtype", "m", "k", "n"] + ["iterations"] * loops + [
            "cycles_per_batch", "mxu_utilization_percent", "cycles_over_bound"]
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
            f"MACs on the device:        {self.device_macs_percent:.1f} %"
            + ("  most of the model's MACs run on the host"
               if self.device_macs_percent < 50 else ""),
        ]
        if self.host_rows:
            host = self.host.copy()
            host[["count", "macs", "bytes"]] //= max(self.batches, 1)
            lines += ["host program, per batch:", host.to_string(index=False)]
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


def _from_run_json(j):
    """tools/common/run_report.c's summary_json."""
    chip = j.get("chip")
    rows = []
    for l in j["layers"]:
        cycles = round(l["cycles_per_batch"] * j["batches"])
        row = {k: l[k] for k in ("name", "kind", "segment", "op", "fused", "macs", "bytes",
                                 "submissions")}
        row["iterations"] = l.get("iterations", 1)  # reports from before loops were summed
        row["dtype"] = "bf16" if "bf16" in l["flags"] else "int8"
        row.update(m=l.get("m", 0), k=l.get("k", 0), n=l.get("n", 0))
        if l["kind"] == "conv2d":
            row.update(input=tuple(l["input"]), output=tuple(l["output"]),
                       kernel=tuple(l["kernel"]))
        row.update(cycles=cycles, ideal_cycles=l["mxu_utilization_percent"] / 100 * cycles,
                   bound_cycles=cycles / l["cycles_over_bound"])
        rows.append(row)
    sim = j["simulation"]
    return Report(
        array_n=j["array_n"], cores=j.get("cores", 1),
        mem_latency=j["memory"]["latency_cycles"],
        mem_bytes_per_cycle=j["memory"]["bytes_per_cycle"], batches=j["batches"],
        cycles=j["cycles"]["total"],
        device_cycles=chip["elapsed_cycles"] if chip else j["cycles"]["total"],
        submissions=j["submissions"], bit_exact_submissions=j["bit_exact_submissions"],
        mxu_utilization_percent=j["mxu_utilization_percent"],
        cycles_over_bound=j["cycles_over_bound"], device_seconds=sim["device_seconds"],
        host_seconds=sim["host_seconds"], wall_seconds=sim["wall_seconds"], compiled=False,
        compile_seconds=0.0, compiler_report="", layer_rows=rows, host_rows=j["host_ops"],
        core_rows=[{k: c[k] for k in ("submissions", "cycles", "mem_stall_cycles", "mxu_busy")}
                   for c in j["per_core"]] if chip else [],
        images=j["images"], accuracy_percent=j.get("accuracy", {}).get("percent"),
        agreement_percent=j.get("agreement", {}).get("percent"))


def _from_gemm_json(j):
    """tools/tpusim/report.c's report_json: a lone core's or, with "chip", a chip's (its cores'
    cycles summed, as a run's are)."""
    g, chip, bound = j["gemm"], j.get("chip"), j["lower_bound"]
    cycles = chip["core_cycles"] if chip else j["cycles"]["total"]
    n2 = j["array_n"] ** 2
    per_core = j.get("per_core", [])
    subs = sum(1 for c in per_core if c["rows"]) if chip else 1  # cores without rows submit none
    row = {"name": "gemm", "kind": "gemm", "segment": 0, "op": 0, "fused": "",
           "dtype": "bf16" if g["b_dtype"] == "bfloat16" else "int8",
           "macs": j["macs"], "bytes": bound["memory_bytes"], "submissions": 1, "iterations": 1,
           "m": g["m"], "k": g["k"], "n": g["n"], "cycles": cycles,
           "ideal_cycles": j["macs"] / n2,
           "bound_cycles": cycles / bound["cycles_over_bound"]}
    return Report(
        array_n=j["array_n"], cores=j.get("cores", 1),
        mem_latency=j["memory"]["latency_cycles"],
        mem_bytes_per_cycle=j["memory"]["bytes_per_cycle"], batches=1, cycles=cycles,
        device_cycles=chip["elapsed_cycles"] if chip else cycles,
        submissions=subs, bit_exact_submissions=subs,
        mxu_utilization_percent=j["mxu_utilization_percent"],
        cycles_over_bound=bound["cycles_over_bound"], device_seconds=j["simulation"]["wall_seconds"],
        host_seconds=0.0, wall_seconds=j["simulation"]["wall_seconds"], compiled=False,
        compile_seconds=0.0, compiler_report="", layer_rows=[row], host_rows=[],
        core_rows=[{"submissions": int(c["rows"] > 0), "cycles": c["cycles"],
                    "mem_stall_cycles": c["mem_stall_cycles"], "mxu_busy": c["mxu_busy"]}
                   for c in per_core])

