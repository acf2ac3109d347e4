"""tpusim.jit: a JAX function run on the simulated TPU.

On the first call with given shapes and dtypes it lowers f with JAX (StableHLO text), compiles it
in process with the weight arguments' values bound, opens it on a device and runs it; later calls
of the same shapes, with the same weight values, run the package already open. Weights are
arguments (by default all but the last): the compiler needs their values (it quantizes them, or
rounds them to bf16, and places them in device memory), so a call whose weights hold other values
(their bytes' hash) compiles again. In int8 the ranges are calibrated on the first call's inputs,
or on `calibrate`; bf16 needs no calibration.
"""
import hashlib
import time

import numpy as np

from . import compiler
from .errors import ArgumentError
from .runtime import Runtime

# 16-bit float inputs cross as float32, which holds every value exactly, and the lowered function
# converts them back first: int8 calibration takes float32 samples, and one path serves both
# precisions (packages take bf16 and f16 inputs too: tpusim run feeds them from .npy).
NARROW = ("bfloat16", "float16")


def _widened(x):
    return x.astype(np.float32) if x.dtype.name in NARROW else x


def jit(f, *, array=16, cores=1, precision="int8", weights=None, calibrate=None,
        mem_latency=None, mem_bandwidth=None, verify=True, max_cycles=0):
    """f run on the simulated TPU: returns a callable taking f's arguments and returning f's
    outputs (the same pytree) as numpy arrays; see docs/python.md.

    array: the systolic array's size N (a model for it must be built); cores: 1, or 2..8 cores
    of a chip, each running an equal share of every input's leading (batch) dimension; precision:
    "int8" (calibrated) or "bf16" (bf16 operands, fp32 sums, as a TPU v2/v3); weights: the
    numbers of the arguments that are weights (default: all but the last), the others are the
    model's inputs; calibrate: a tuple of sample values of the input arguments (their leading
    dimension any multiple of the call's), instead of the first call's inputs (int8 only);
    mem_latency, mem_bandwidth: the memory's timing (cycles, bytes per cycle; None: the
    defaults); verify: check every submission against the golden model; max_cycles: a budget
    per submission (0: none)."""
    return Jitted(f, array=array, cores=cores, precision=precision, weights=weights,
                  calibrate=calibrate, mem_latency=mem_latency, mem_bandwidth=mem_bandwidth,
                  verify=verify, max_cycles=max_cycles)


class _Entry:
    """One compiled shape signature: its package open on a device."""

    def __init__(self, runtime, out_tree, weights_hash):
        self.runtime, self.out_tree, self.weights_hash = runtime, out_tree, weights_hash


class Jitted:
    """What tpusim.jit returns. compiles: how many times it has compiled; last_report: the
    Report of the last call; report_text: the compiler's report of the last compile."""

    def __init__(self, f, *, array, cores, precision, weights, calibrate, mem_latency,
                 mem_bandwidth, verify, max_cycles, lower=None):
        if precision not in compiler.PRECISIONS:
            raise ArgumentError(f"precision={precision!r}: 'int8' or 'bf16'")
        if precision == "bf16" and calibrate is not None:
            raise ArgumentError("calibrate: precision='bf16' calibrates nothing")
        if not isinstance(array, int) or array < 1:
            raise ArgumentError(f"array={array!r}: an array size N >= 1")
        if not isinstance(cores, int) or cores < 1:
            raise ArgumentError(f"cores={cores!r}: a number of cores >= 1")
        import jax  # here, not above: the package works without JAX

        self._jax = jax
        self.f, self.array, self.cores, self.precision = f, array, cores, precision
        self._lower = lower or self._lower_jax
        self.weights, self.calibrate = weights, calibrate
        self._device = dict(cores=cores, mem_latency=mem_latency, mem_bandwidth=mem_bandwidth,
                            verify=verify, max_cycles=max_cycles)
        self._entries = {}
        self.compiles = 0
        self.last_report = None
        self.__name__ = getattr(f, "__name__", "f")
        self.__doc__ = getattr(f, "__doc__", None)

    def _weight_args(self, n):
        w = tuple(range(n - 1)) if self.weights is None else tuple(self.weights)
        for k in w:
            if not isinstance(k, int) or not -n <= k < n:
                raise ArgumentError(f"weights={self.weights!r}: argument {k!r} of {n}")
        return {k % n for k in w}

    def _leaves(self, arg):
        leaves, tree = self._jax.tree_util.tree_flatten(arg)
        canon = self._jax.dtypes.canonicalize_dtype
        out = []
        for x in leaves:
            a = np.asarray(x)
            out.append(a.astype(canon(a.dtype), copy=False))
        return out, tree

    def package(self, *args):
        """The package of f for these arguments (weights and inputs, as a call takes them),
        compiled without running: what `save` writes for `tpusim run` (tpusim.torch.export)."""
        flat, wargs, inputs = self._split(args)
        return self._package(flat, wargs, inputs)[0]

    def _split(self, args):
        if not args:
            raise ArgumentError(f"{self.__name__}: no arguments (weights and inputs)")
        wargs = self._weight_args(len(args))
        flat = [self._leaves(a) for a in args]
        inputs = [x for i, (leaves, _) in enumerate(flat) if i not in wargs for x in leaves]
        if not inputs:
            raise ArgumentError(f"{self.__name__}: every argument is a weight; the model needs "
                                "an input")
        for x in inputs:
            if self.cores > 1 and (x.ndim == 0 or x.shape[0] % self.cores):
                raise ArgumentError(f"cores={self.cores}: every input's leading dimension must "
                                    f"be a multiple of {self.cores}; an input is {x.shape}")
        return flat, wargs, inputs

    def __call__(self, *args):
        t0 = time.perf_counter()
        flat, wargs, inputs = self._split(args)
        key = tuple((i in wargs, tree, tuple((x.shape, x.dtype.str) for x in leaves))
                    for i, (leaves, tree) in enumerate(flat))
        h = hashlib.blake2b()
        for i in sorted(wargs):
            for x in flat[i][0]:
                h.update(np.ascontiguousarray(x))
        entry = self._entries.get(key)
        compiled = entry is None or entry.weights_hash != h.digest()
        compile_seconds = 0.0
        if compiled:
            self._entries.pop(key, None)  # its device closes with it
            entry = self._compile(flat, wargs, inputs, h.digest())
            self._entries[key] = entry
            compile_seconds = time.perf_counter() - t0
        rt = entry.runtime

        def run():
            if self.cores == 1:
                return rt.run(*inputs)
            shares = [np.split(x, self.cores) for x in inputs]
            per_core = rt.run_batches([list(batch) for batch in zip(*shares)])
            return [np.concatenate(o) for o in zip(*per_core)]

        outs, self.last_report = rt.measure(run, t0, compiled, compile_seconds)
        return self._jax.tree_util.tree_unflatten(entry.out_tree, outs)

    def _compile(self, flat, wargs, inputs, weights_hash):
        pkg, out_tree = self._package(flat, wargs, inputs)
        self.compiles += 1
        return _Entry(Runtime(pkg, **self._device), out_tree, weights_hash)

    def _package(self, flat, wargs, inputs):
        jax = self._jax
        # Each core evaluates its share of the batch: the model is lowered for that share.
        def spec(i, x):
            shape = x.shape if i in wargs or self.cores == 1 else (x.shape[0] // self.cores,
                                                                   *x.shape[1:])
            return jax.ShapeDtypeStruct(shape, x.dtype if i in wargs else _widened(x).dtype)

        def narrowed(*args):
            return self.f(*(a if i in wargs else jax.tree_util.tree_unflatten(
                tree, [y.astype(x.dtype) for y, x in zip(jax.tree_util.tree_leaves(a), leaves)])
                for i, (a, (leaves, tree)) in enumerate(zip(args, flat))))

        specs = [jax.tree_util.tree_unflatten(tree, [spec(i, x) for x in leaves])
                 for i, (leaves, tree) in enumerate(flat)]
        f = narrowed if any(_widened(x) is not x for x in inputs) else self.f
        text, out_tree = self._lower(f, specs)
        weights, number = {}, 0
        for i, (leaves, _) in enumerate(flat):
            for x in leaves:
                if i in wargs:
                    weights[number] = x
                number += 1
        calib = [_widened(x) for x in inputs] if self.precision == "int8" else []
        if self.calibrate is not None:
            samples = self.calibrate if isinstance(self.calibrate, tuple) else (self.calibrate,)
            calib = [_widened(x) for s in samples for x in self._leaves(s)[0]]
            if len(calib) != len(inputs):
                raise ArgumentError(f"calibrate: {len(calib)} arrays for {len(inputs)} inputs")
        pkg = compiler.compile(text, weights=weights, calibrate=calib,
                               array=self.array, precision=self.precision,
                               name=f"{self.__name__}.mlir")
        return pkg, out_tree

    def _lower_jax(self, f, specs):
        """f's StableHLO text for these argument specs (ShapeDtypeStruct pytrees) and its
        outputs' tree; tpusim.torch lowers through torch-mlir instead (the `lower` argument)."""
        # keep_unused: every leaf stays a parameter, numbered in argument order.
        lowered = self._jax.jit(f, keep_unused=True).lower(*specs)
        return lowered.as_text(), lowered.out_tree
