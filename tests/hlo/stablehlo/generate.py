"""Writes the StableHLO samples of tests/hlo/test_stablehlo.cpp: for each function the MLIR
text JAX prints (jax.jit(f).lower(...).as_text(), <name>.mlir), the same module in XLA's HLO
(as_text(dialect="hlo"), <name>.hlo), and for some the generic op form (<name>.generic.mlir) or
the text with locations (debug_info=True: argument names, <name>.loc.mlir); "donate" lowers with
the arguments before the last two (a training step's params and optimizer state, before its x
and y) donated (input_output_alias / tf.aliasing_output). The training steps train_* are
tests/jax/train_steps.py's, at small sizes.

    python3 tests/hlo/stablehlo/generate.py   (JAX 0.10)
"""
import os
import sys

import jax
import jax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "jax"))
import train_steps  # noqa: E402


def mlp(params, x):
    h = jnp.maximum(x @ params["w1"] + params["b1"], 0)
    return h @ params["w2"] + params["b2"]


def mnist_predict(w1, b1, w2, b2, x):  # models/mnist/export.py's predict
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.log_softmax(h @ w2 + b2, axis=-1)


def cnn(x, k1, k2, w):
    y = jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = jax.lax.conv_general_dilated(y, k2, (2, 2), ((1, 0), (0, 1)), rhs_dilation=(1, 1),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y.reshape(y.shape[0], -1) @ w


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def argmax(x):
    return jnp.argmax(x, axis=1), jnp.max(x, axis=0)


def misc(x, i):  # pad, transpose, iota, select, integer arithmetic, constants, reductions
    b = jnp.pad(x, ((1, 0), (0, 2)), constant_values=-1.5)
    c = x * jnp.array([1.0, 2.0, jnp.inf, 0.5, -0.0, 3.0])
    d = jnp.where(x.T > 0, x.T, jnp.float32(jnp.nan)) + jnp.arange(4, dtype=jnp.float32)
    f = (i * 3 + jnp.array([1, -2, 3, 7], jnp.int32)).astype(jnp.float32)
    g = x.reshape(2, 12).sum(axis=1) + x.max()
    return b, c, d, f, g


def slicing(x):  # slice, concatenate, clamp
    return jnp.concatenate([x[1:3, ::2], jnp.clip(x[:2, 1:4], -0.5, 0.5)], axis=0)


def sgd_step(params, x, y):  # a training step: its parameters donated, so outputs alias them
    def loss(p):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        logp = jax.nn.log_softmax(h @ p["w2"] + p["b2"])
        return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, 3), axis=-1))
    value, grad = jax.value_and_grad(loss)(params)
    return jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, params, grad), value


TRAIN_MLP = train_steps.param_shapes("mlp", 6, 8, 3)
TRAIN_CNN = train_steps.param_shapes("cnn", (6, 2), 4, 3)
ADAM_STATE = {"m": TRAIN_MLP, "v": TRAIN_MLP, "t": ((), jnp.int32)}
ADAM_CNN_STATE = {"m": TRAIN_CNN, "v": TRAIN_CNN, "t": ((), jnp.int32)}
SAMPLES = [
    ("mlp", mlp, ({"w1": (4, 8), "b1": (8,), "w2": (8, 3), "b2": (3,)}, (2, 4)), ("loc", "generic")),
    ("mnist_mlp", mnist_predict, ((784, 256), (256,), (256, 10), (10,), (16, 784)), ("loc",)),
    ("cnn", cnn, ((2, 6, 6, 3), (3, 3, 3, 4), (2, 2, 4, 5), (20, 7)), ("generic",)),
    ("softmax", softmax, ((3, 5),), ()),
    ("layernorm", layernorm, ((4, 6), (6,), (6,)), ()),
    ("argmax", argmax, ((3, 5),), ("generic",)),
    ("misc", misc, ((4, 6), ((4,), jnp.int32)), ("generic",)),
    ("slicing", slicing, ((4, 6),), ("generic",)),
    ("sgd_step", sgd_step, ({"w1": (4, 8), "b1": (8,), "w2": (8, 3), "b2": (3,)}, (2, 4),
                            ((2,), jnp.int32)), ("donate",)),
    ("train_mlp_momentum", train_steps.momentum(train_steps.mlp), (TRAIN_MLP, TRAIN_MLP, (4, 6), ((4,), jnp.int32)),
     ("donate",)),
    ("train_mlp_adam", train_steps.adam(train_steps.mlp), (TRAIN_MLP, ADAM_STATE, (4, 6), ((4,), jnp.int32)),
     ("donate",)),
    ("train_cnn_momentum", train_steps.momentum(train_steps.cnn), (TRAIN_CNN, TRAIN_CNN, (2, 6, 6, 2),
                                                                   ((2,), jnp.int32)), ("donate",)),
    ("train_cnn_adam", train_steps.adam(train_steps.cnn), (TRAIN_CNN, ADAM_CNN_STATE, (2, 6, 6, 2),
                                                           ((2,), jnp.int32)), ("donate",)),
]


def spec(s):
    if isinstance(s, dict):
        return {k: spec(v) for k, v in s.items()}
    if len(s) == 2 and isinstance(s[0], tuple):
        return jax.ShapeDtypeStruct(s[0], s[1])
    return jax.ShapeDtypeStruct(s, jnp.float32)


def write(name, text):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(text.replace(HERE + "/", ""))


def main():
    for name, fn, args, extra in SAMPLES:
        donate = tuple(range(len(args) - 2)) if "donate" in extra else ()
        lowered = jax.jit(fn, donate_argnums=donate).lower(*[spec(a) for a in args])
        write(f"{name}.mlir", lowered.as_text())
        write(f"{name}.hlo", lowered.as_text(dialect="hlo"))
        if "loc" in extra:
            write(f"{name}.loc.mlir", lowered.as_text(debug_info=True))
        if "generic" in extra:
            ir = lowered.compiler_ir("stablehlo")
            write(f"{name}.generic.mlir", ir.operation.get_asm(print_generic_op_form=True))


if __name__ == "__main__":
    main()
