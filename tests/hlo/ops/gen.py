"""Writes the JAX samples of test_hlo_shape_ops.cpp: <name>.hlo (jax.jit(f).lower(...) as HLO
text), its inputs <name>.in<k>.npy and JAX's result <name>.out.npy; and those of
test_stablehlo_ops.cpp: the same function as StableHLO, <name>.mlir (as_text()) and
<name>.generic.mlir (the generic op form). Run from this directory: python3 gen.py [name ...]"""
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_platforms", "cpu")
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 6)).astype(np.float32)
# Ties and NaN for the sorts: stable order and NaN last, as jnp.sort's comparator puts them.
xs = x.copy()
xs[0, :3] = 0.5
xs[1, 2] = np.nan
xs[2, 0] = -0.0
xs[2, 1] = 0.0

CASES = {
    "concatenate": (lambda a, b: jnp.concatenate([a, b], axis=1), [x, x[:, :3] * 2]),
    "slice": (lambda a: a[2:5], [rng.standard_normal(8).astype(np.float32)]),
    "slice_stride": (lambda a: a[::2, 1::3], [x]),
    "flip": (lambda a: jnp.flip(a, axis=(0, 1)), [x]),
    "dynamic_slice": (lambda a, i: lax.dynamic_slice(a, (i, i + 1), (2, 3)), [x, np.int32(3)]),
    "dynamic_update_slice": (lambda a, u, i: lax.dynamic_update_slice(a, u, (i, -1)),
                             [x, np.ones((2, 2), np.float32), np.int32(1)]),
    "embedding": (lambda t, ids: t[ids], [x, np.array([[0, 3], [2, 9]], np.int32)]),
    "take_along_axis": (lambda a, i: jnp.take_along_axis(a, i, axis=1),
                        [x, np.array([[0, 5, 1], [2, 2, 2], [5, 4, 3], [1, 0, -1]], np.int32)]),
    "sort": (lambda a: jnp.sort(a, axis=1), [xs]),
    "argsort": (lambda a: jnp.argsort(a, axis=1), [xs]),
    "fori_loop": (lambda a: lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, a), [x]),
    "cond": (lambda p, a: lax.cond(p > 0, lambda v: v * 2, lambda v: v - 1, a),
             [np.float32(-1.0), x]),
    "switch": (lambda i, a: lax.switch(i, [lambda v: v * 2, lambda v: v - 1, lambda v: v * v], a),
               [np.int32(7), x]),
    "cumsum": (lambda a: jnp.cumsum(a, axis=1), [x]),
    # Repeated indices add up; index 9 is out of range: its update is dropped.
    "scatter_add": (lambda a, i, v: a.at[i].add(v),
                    [x, np.array([1, 3, 1, 9], np.int32), np.ones((4, 6), np.float32)]),
    "scatter_set": (lambda a, i, v: a.at[i, 2].set(v),
                    [x, np.array([0, 2], np.int32), np.array([7, 8], np.float32)]),
}

for name, (f, args) in CASES.items():
    if sys.argv[1:] and name not in sys.argv[1:]:
        continue
    lowered = jax.jit(f).lower(*args)
    with open(f"{name}.hlo", "w") as out:
        out.write(lowered.as_text(dialect="hlo"))
    with open(f"{name}.mlir", "w") as out:
        out.write(lowered.as_text())
    with open(f"{name}.generic.mlir", "w") as out:
        ir = lowered.compiler_ir("stablehlo")
        out.write(ir.operation.get_asm(print_generic_op_form=True))
    np.save(f"{name}.out.npy", np.asarray(jax.jit(f)(*args)))
    for k, a in enumerate(args):
        np.save(f"{name}.in{k}.npy", np.asarray(a))
