#!/usr/bin/env python3
"""Writes the optimized-dump fixtures of tests/hlo/test_hlo_optimized.cpp: for each model, NAME.hlo
(jax.jit(f).lower(...).as_text(dialect="hlo"), before XLA's optimizations) and NAME.opt.hlo
(.compile().as_text(), what XLA's CPU backend runs: fusions, bitcasts, layouts). Weights are parameters,
so the files stay small; the tests feed both files the same random inputs."""
import os

import jax
import jax.numpy as jnp
from jax import lax

HERE = os.path.dirname(os.path.abspath(__file__))
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
f32 = jnp.float32


def spec(*shape):
    return jax.ShapeDtypeStruct(shape, f32)


def mlp(w1, b1, w2, b2, x):
    """models/mnist's MLP: relu, log_softmax."""
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.log_softmax(h @ w2 + b2, axis=-1)


def mlp_t(w1, b1, w2, x):
    """PyTorch-style weights [out, in]: x @ W.T, softmax."""
    h = jax.nn.relu(x @ w1.T + b1)
    return jax.nn.softmax(h @ w2.T, axis=-1)


def mlp_argmax(w1, b1, w2, b2, x):
    """The MLP's class: a variadic reduce over (value, index)."""
    return jnp.argmax(mlp(w1, b1, w2, b2, x), axis=-1)


def mha(wq, wk, wv, wo, x):
    """Multi-head self-attention: head reshapes and einsums give transposes, copies to other
    layouts and bitcasts."""
    b, s, d = x.shape
    heads = 4
    q, k, v = ((x @ w).reshape(b, s, heads, d // heads) for w in (wq, wk, wv))
    a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d / heads), -1)
    return jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, s, d) @ wo


def cnn(strides, padding, dims):
    """models/mnist_cnn's CNN (conv, relu, conv, relu, 2x2 max pool, fc, relu, fc, log_softmax)."""
    spatial = (1, 2) if dims[0] == "NHWC" else (2, 3)

    def predict(conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b, x):
        bias = (lambda b: b) if dims[0] == "NHWC" else (lambda b: b[:, None, None])
        h = jax.nn.relu(lax.conv_general_dilated(x, conv1_w, strides, padding, dimension_numbers=dims) + bias(conv1_b))
        h = jax.nn.relu(lax.conv_general_dilated(h, conv2_w, (1, 1), "VALID", dimension_numbers=dims) + bias(conv2_b))
        win = tuple(2 if d in spatial else 1 for d in range(4))
        h = lax.reduce_window(h, -jnp.inf, lax.max, win, win, "VALID")
        h = h.reshape(h.shape[0], -1)
        h = jax.nn.relu(h @ fc1_w + fc1_b)
        return jax.nn.log_softmax(h @ fc2_w + fc2_b, axis=-1)

    return predict


MODELS = {
    "mlp": (mlp, [spec(784, 256), spec(256), spec(256, 10), spec(10), spec(16, 784)]),
    "mlp_t": (mlp_t, [spec(32, 64), spec(32), spec(10, 32), spec(4, 64)]),
    "mlp_argmax": (mlp_argmax, [spec(64, 32), spec(32), spec(32, 10), spec(10), spec(4, 64)]),
    "mha": (mha, [spec(32, 32), spec(32, 32), spec(32, 32), spec(32, 32), spec(2, 8, 32)]),
    "cnn_nhwc": (cnn((1, 1), "VALID", ("NHWC", "HWIO", "NHWC")),
                 [spec(3, 3, 1, 8), spec(8), spec(3, 3, 8, 16), spec(16), spec(12 * 12 * 16, 32), spec(32),
                  spec(32, 10), spec(10), spec(2, 28, 28, 1)]),
    "cnn_nchw": (cnn((2, 2), ((1, 1), (1, 1)), ("NCHW", "OIHW", "NCHW")),
                 [spec(4, 1, 3, 3), spec(4), spec(8, 4, 3, 3), spec(8), spec(8 * 6 * 6, 16), spec(16),
                  spec(16, 10), spec(10), spec(2, 1, 28, 28)]),
}

if __name__ == "__main__":
    for name, (fn, args) in MODELS.items():
        lowered = jax.jit(fn).lower(*args)
        with open(os.path.join(HERE, name + ".hlo"), "w") as f:
            f.write(lowered.as_text(dialect="hlo"))
        with open(os.path.join(HERE, name + ".opt.hlo"), "w") as f:
            f.write(lowered.compile().as_text())
