"""tpusim.torch: PyTorch models on the simulated TPU, without torch_xla (docs/python.md).

`torch.compile(net, backend="tpusim", options={...})` runs each graph dynamo captures through
tpusim.jit's machinery (a package per shape, weights hashed per call, the same options and
Report), lowered by torch.export and torch-mlir (`fx.export_and_import(..., output_type=
"stablehlo")`) instead of JAX. `export(net, example, path)` writes a package for the command-line
tools the same way. Parameters and buffers are the weights, a dict keyed by their state-dict names
("f.0.weight"), so two of one shape never need telling apart by shape. Needs torch and torch-mlir
(python/requirements-torch.txt) and JAX (for tpusim.jit's pytrees); `import tpusim` does not
import this module.
"""
import re

import numpy as np
import torch
from torch_mlir import fx

from ._jax import Jitted
from .errors import ArgumentError

# tpusim.jit's keywords that options= may set (weights are always the graph's own).
OPTIONS = ("array", "cores", "precision", "calibrate", "mem_latency", "mem_bandwidth", "verify",
           "max_cycles")

last_report = None
"""The Report of the last graph the backend ran (a forward pass with graph breaks runs several)."""

_INT = object()  # a placeholder's slot: a size of a dynamic-shape graph, not a tensor
_STATE = re.compile(r"\._(?:modules|parameters|buffers)\['([^']*)'\]|\.([A-Za-z_]\w*)")


def _numpy(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


def _jitted(fn, name, options):
    """tpusim.jit's callable for fn(weights, inputs) (weights: a dict by state-dict names), with
    options' keywords (OPTIONS; calibrate's tensors as numpy)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ArgumentError(f"options {unknown}: tpusim takes {', '.join(OPTIONS)}")
    c = options.get("calibrate")
    if c is not None:
        options["calibrate"] = (tuple(_numpy(t) for t in c) if isinstance(c, (tuple, list))
                                else _numpy(c))
    kw = dict(array=16, cores=1, precision="int8", calibrate=None, mem_latency=None,
              mem_bandwidth=None, verify=True, max_cycles=0)
    kw.update(options)

    def f(weights, *inputs):
        return fn(weights, inputs)

    f.__name__ = name
    return Jitted(f, weights=(0,), lower=lambda _, specs: _lower(fn, specs), **kw)


class _Flat(torch.nn.Module):
    """fn with its weights and inputs as flat arguments, as tpusim.jit numbers them (the weights
    first, in the sorted order of their names), for torch.export."""

    def __init__(self, fn, names):
        super().__init__()
        self.fn, self.names = fn, names

    def forward(self, *leaves):
        n = len(self.names)
        return self.fn(dict(zip(self.names, leaves[:n])), leaves[n:])


def _lower(fn, specs):
    import jax

    leaves = jax.tree_util.tree_leaves(specs)
    args = tuple(torch.from_numpy(np.zeros(s.shape, s.dtype)) for s in leaves)
    program = torch.export.export(_Flat(fn, sorted(specs[0])), args)
    text = str(fx.export_and_import(program, output_type="stablehlo"))
    outputs = len(program.graph_signature.user_outputs)
    return text, jax.tree_util.tree_structure(tuple(range(outputs)))


def _slot(node):
    """A placeholder's state-dict name (a parameter or a buffer dynamo lifted into an input:
    L['self']._modules['f']._modules['0']._parameters['weight'] is "f.0.weight"), _INT for a
    size, None for one of the model's inputs."""
    if isinstance(node.meta.get("example_value"), torch.SymInt):
        return _INT
    source = node.meta["grapharg"].source.name
    if "._parameters[" not in source and "._buffers[" not in source:
        return None
    root = re.match(r"\w+\['[^']*'\]", source)
    return ".".join(a or b for a, b in _STATE.findall(source[root.end():]))


class _Graph:
    """What the backend returns for one captured graph: its weights read from the call's own
    arguments each call (tpusim.jit compiles again when their values change), one tpusim.jit per
    value of the sizes a dynamic-shape graph takes, which compiles again only for new shapes."""

    def __init__(self, gm, options):
        self._gm, self._options, self._jitted = gm, options, {}
        self._slots = [_slot(n) for n in gm.graph.nodes if n.op == "placeholder"]
        if (options or {}).get("cores", 1) > 1 and _INT in self._slots:
            raise ArgumentError("cores > 1 splits the batch: compile for static shapes, "
                                "torch.compile(..., dynamic=False)")

    def _function(self, sizes):
        def fn(weights, inputs):
            given, size = iter(inputs), iter(sizes)
            return self._gm(*(next(size) if s is _INT else next(given) if s is None
                              else weights[s] for s in self._slots))

        return _jitted(fn, "graph", self._options)

    def __call__(self, *args):
        global last_report
        weights, inputs, sizes = {}, [], []
        for s, a in zip(self._slots, args):
            if s is _INT:
                sizes.append(int(a))
            elif s is None:
                inputs.append(_numpy(a))
            else:
                weights[s] = _numpy(a)
        key = tuple(sizes)
        if key not in self._jitted:
            self._jitted[key] = self._function(key)
        jitted = self._jitted[key]
        outs = jitted(weights, *inputs)
        last_report = jitted.last_report
        return tuple(torch.from_numpy(np.array(o)) for o in outs)


def backend(gm, example_inputs, options=None):
    """The torch._dynamo backend "tpusim": gm, the FX graph dynamo captured (its parameters and
    buffers lifted into inputs), run through tpusim.jit with options' keywords (OPTIONS)."""
    del example_inputs  # each call's own arguments are compiled, on their shapes
    return _Graph(gm, options)


def export(net, example, path=None, **options):
    """net's forward pass on example (a tensor, or a tuple of one per input), compiled with
    tpusim.jit's keywords (int8 calibrated on example, or on calibrate=), written to path as a
    .tpub for tpusim run when a path is given; returns the Package. net should be in eval mode,
    as it runs on the device (batch norm's running statistics, no dropout)."""
    # Batch norm's num_batches_tracked (an integer, used in training only) stays the module's.
    state = {k: v for k, v in (*net.named_parameters(), *net.named_buffers())
             if v.is_floating_point()}

    def fn(weights, inputs):
        return torch.func.functional_call(net, weights, tuple(inputs))

    examples = example if isinstance(example, tuple) else (example,)
    pkg = _jitted(fn, type(net).__name__, options).package(
        {k: _numpy(v) for k, v in state.items()}, *(_numpy(x) for x in examples))
    if path is not None:
        pkg.save(path)
    return pkg


if "tpusim" not in torch._dynamo.list_backends(exclude_tags=()):
    # Not installed with the package's entry point (which names this function) but imported from
    # the tree: register it here.
    torch._dynamo.register_backend(backend, name="tpusim")
