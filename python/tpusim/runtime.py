"""A package on a simulated device (runtime/tpurt.h): run it on numpy arrays, read its
statistics."""
import os
import time
from collections import namedtuple

import numpy as np

from ._lib import ABI, ffi, lib, numpy_dtype, raise_status
from .errors import ArgumentError

Tensor = namedtuple("Tensor", "name dtype shape")
Tensor.__doc__ = "A model input or output as the runtime takes or gives it."

_STATS = ("runs", "submissions", "verified", "cycles", "device_seconds", "host_seconds",
          "device_cycles")
_LAYER_COUNTS = ("submissions", "cycles", "ideal_cycles", "bound_cycles")
_CORE_COUNTS = ("submissions", "cycles", "mem_stall_cycles", "mxu_busy")
_HOST_COUNTS = ("count", "macs", "bytes")


class Runtime:
    """tpurt_open of a Package on a device of its array size: cores 1 is a lone tpu_core, 2..8 a
    chip of that many on one memory port (each runs its own batches: run_batches); mem_latency
    and mem_bandwidth (bytes per cycle) are the memory model's timing, None its defaults; every
    submission is checked against the golden model unless verify is False; max_cycles bounds
    each submission (0: no bound)."""

    def __init__(self, package, cores=1, mem_latency=None, mem_bandwidth=None, verify=True,
                 max_cycles=0):
        if not 1 <= cores <= ABI["TPUSIM_CORES_MAX"]:
            raise ArgumentError(f"cores={cores}: 1..{ABI['TPUSIM_CORES_MAX']}")
        self.package = package  # tpurt_open requires it to outlive the runtime
        self._config = ffi.new("tpusim_config *", {
            "cores": cores if cores > 1 else 0,
            "mem_latency": mem_latency or 0,
            "mem_bytes_per_cycle": mem_bandwidth or 0,
        })
        opts = ffi.new("tpurt_options *")
        lib.tpurt_options_default(opts)
        opts.device = self._config
        opts.verify = int(bool(verify))
        opts.max_cycles = max_cycles
        rt = ffi.new("tpurt **")
        err = ffi.new("char[]", 1024)
        st = lib.tpurt_open(package.ptr, opts, rt, err, 1024)
        if st:
            raise_status(st, ffi.string(err).decode())
        self._rt = ffi.gc(rt[0], lib.tpurt_close)
        self.cores = lib.tpurt_cores(self._rt)
        self.inputs = [self._tensor(lib.tpurt_get_input, i) for i in range(lib.tpurt_n_inputs(self._rt))]
        self.outputs = [self._tensor(lib.tpurt_get_output, i)
                        for i in range(lib.tpurt_n_outputs(self._rt))]
        # Per output, the input it updates (the model's input_output_alias or tf.aliasing_output:
        # a training step's new parameters), else None.
        self.updates = [k if k >= 0 else None for k in
                        (lib.tpurt_output_updates(self._rt, j) for j in range(len(self.outputs)))]

    def _check(self, st):
        if st:
            raise_status(st, ffi.string(lib.tpurt_last_error(self._rt)).decode())

    def _tensor(self, get, i):
        t = ffi.new("tpurt_tensor *")
        self._check(get(self._rt, i, t))
        return Tensor(ffi.string(t.name).decode(), numpy_dtype(t.type), tuple(t.dims[0:t.rank]))

    def _buffers(self, arrays):
        """The inputs of one batch as contiguous arrays of the signatures' dtypes and shapes."""
        if len(arrays) != len(self.inputs):
            raise ArgumentError(f"{len(arrays)} inputs, the package takes {len(self.inputs)}")
        out = []
        for a, sig in zip(arrays, self.inputs):
            a = np.asarray(a)
            if a.shape != sig.shape:
                raise ArgumentError(f"input '{sig.name}': shape {a.shape}, the package's is "
                                    f"{sig.shape}")
            out.append(np.ascontiguousarray(a, dtype=sig.dtype))
        return out

    def run(self, *inputs):
        """One evaluation (a batch): the outputs as new numpy arrays."""
        return self.run_batches([inputs])[0]

    def run_batches(self, batches):
        """Up to `cores` batches side by side, batch i on core i (tpurt_run_batches; one batch
        is tpurt_run): a list of each batch's outputs."""
        if not 1 <= len(batches) <= self.cores:
            raise ArgumentError(f"{len(batches)} batches on {self.cores} cores")
        ins = [self._buffers(b) for b in batches]
        outs = [[np.empty(t.shape, t.dtype) for t in self.outputs] for _ in batches]
        n_in, n_out = len(self.inputs), len(self.outputs)
        in_ptrs = [ffi.new("void *[]", [ffi.from_buffer(a) for a in b] or 1) for b in ins]
        out_ptrs = [ffi.new("void *[]", [ffi.from_buffer(a) for a in b] or 1) for b in outs]
        if len(batches) == 1:
            st = lib.tpurt_run(self._rt, in_ptrs[0], n_in, out_ptrs[0], n_out)
        else:
            st = lib.tpurt_run_batches(self._rt, len(batches), ffi.new("void *const *[]", in_ptrs),
                                       n_in, ffi.new("void *const *[]", out_ptrs), n_out)
        self._check(st)
        return outs

    def trace(self, path, window=None):
        """Records the next run's waveform into path (VCD if it ends in .vcd, else FST; GTKWave's
        save file beside it), from its first submission to its end, or only cycles [from, to)
        of window = (from, to) counted from there (to None: to the end). Raises RunError (I/O)
        at once when path cannot be written."""
        first, last = window if window is not None else (0, None)
        if first < 0 or (last is not None and last <= first):
            raise ArgumentError(f"window={window!r}: (from, to) with 0 <= from < to")
        self._check(lib.tpurt_trace(self._rt, os.fsencode(path), first, last or 0))

    def measure(self, fn, t0=None, compiled=False, compile_seconds=0.0):
        """fn() and the Report of the runs it made on this runtime: (fn's result, Report). t0:
        the perf_counter the Report's wall time counts from (default: now)."""
        from .report import Report

        t0 = time.perf_counter() if t0 is None else t0
        before = self.snapshot()
        out = fn()
        d = delta(self.snapshot(), before)
        return out, Report.from_runs(self.info(), d, wall_seconds=time.perf_counter() - t0,
                                     compiled=compiled, compile_seconds=compile_seconds,
                                     compiler_report=self.package.report)

    def info(self):
        """The device: array_n, memory size and timing, cores (tpu_info)."""
        i = ffi.new("tpu_info *")
        self._check(lib.tpurt_get_info(self._rt, i))
        return {f: getattr(i, f) for f in ("array_n", "mem_size", "mem_latency",
                                           "mem_bytes_per_cycle", "cores")}

    def snapshot(self):
        """The runtime's counters so far (all runs): a dict of tpurt_stats, 'layers' (one dict
        per operation, tpurt_layer's), 'host_ops' (the host program's work per opcode,
        tpurt_host_op's) and 'cores' (per core of a chip)."""
        s = ffi.new("tpurt_stats *")
        self._check(lib.tpurt_get_stats(self._rt, s))
        snap = {f: getattr(s, f) for f in _STATS}
        snap["layers"] = [self._layer(i) for i in range(lib.tpurt_n_layers(self._rt))]
        snap["host_ops"] = {}
        for i in range(lib.tpurt_n_host_ops(self._rt)):
            h = ffi.new("tpurt_host_op *")
            self._check(lib.tpurt_get_host_op(self._rt, i, h))
            snap["host_ops"][ffi.string(h.opcode).decode()] = {
                f: getattr(h, f) for f in _HOST_COUNTS}
        snap["cores"] = []
        for k in range(self.cores if self._config.cores else 0):
            c = ffi.new("tpurt_core_stats *")
            self._check(lib.tpurt_get_core_stats(self._rt, k, c))
            snap["cores"].append({f: getattr(c, f) for f in _CORE_COUNTS})
        return snap

    def _layer(self, i):
        l = ffi.new("tpurt_layer *")
        self._check(lib.tpurt_get_layer(self._rt, i, l))
        conv = l.kind == ABI["TPUB_OP_CONV2D"]
        reduce = l.kind == ABI["TPURT_ALL_REDUCE"]
        d = {
            "name": ffi.string(l.name).decode(),
            "kind": "all-reduce" if reduce else "conv2d" if conv else "gemm",
            "segment": l.segment,
            "op": l.index,
            "m": l.m, "k": l.k, "n": l.n,
            "fused": ffi.string(l.fused).decode(),
            "dtype": (("f32" if l.flags & ABI["TPU_REDUCE_F32"] else "s32") if reduce
                      else "bf16" if l.flags & ABI["TPU_GEMM_BF16"] else "int8"),
            "macs": l.macs,
            "bytes": l.bytes,
            "iterations": l.iterations,
        }
        if conv:
            v = l.conv
            d["input"] = (v.batch, v.h, v.w, v.c)  # NHWC
            d["output"] = (v.batch, l.oh, l.ow, v.cout)
            d["kernel"] = (v.kh, v.kw)
        d.update({f: getattr(l, f) for f in _LAYER_COUNTS})
        return d


def delta(after, before):
    """The counters of the runs between two snapshots."""
    d = {f: after[f] - before[f] for f in _STATS}
    d["layers"] = [dict(a, **{f: a[f] - b[f] for f in _LAYER_COUNTS})
                   for a, b in zip(after["layers"], before["layers"])]
    zero = dict.fromkeys(_HOST_COUNTS, 0)
    d["host_ops"] = [dict(opcode=op, **{f: a[f] - before["host_ops"].get(op, zero)[f]
                                        for f in _HOST_COUNTS})
                     for op, a in after["host_ops"].items()
                     if a["count"] != before["host_ops"].get(op, zero)["count"]]
    d["cores"] = [{f: a[f] - b[f] for f in _CORE_COUNTS}
                  for a, b in zip(after["cores"], before["cores"])]
    return d
