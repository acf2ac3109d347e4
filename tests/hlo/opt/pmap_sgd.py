#!/usr/bin/env python3
"""Writes pmap_sgd.opt.hlo beside this file: an SGD step of a small MLP under jax.pmap over 8
CPU devices, gradients and loss averaged with lax.pmean (one tuple all-reduce), as XLA compiles
it for one device (num_partitions=8). Needs jax (tests/requirements.txt)."""
import os
os.environ["XLA_FLAGS"]="--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp
from functools import partial
def loss(p, x, y):
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    logp = jax.nn.log_softmax(h @ p["w2"] + p["b2"])
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, 3), axis=-1))
def step(p, x, y):
    v, g = jax.value_and_grad(loss)(p, x, y)
    g = jax.lax.pmean(g, "i"); v = jax.lax.pmean(v, "i")
    return jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, p, g), v
p = {"w1": jnp.zeros((4,8)), "b1": jnp.zeros(8), "w2": jnp.zeros((8,3)), "b2": jnp.zeros(3)}
f = jax.pmap(step, axis_name="i", donate_argnums=(0,))
P = jax.tree_util.tree_map(lambda a: jnp.stack([a]*8), p)
low = f.lower(P, jnp.zeros((8,2,4)), jnp.zeros((8,2), jnp.int32))
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pmap_sgd.opt.hlo")
open(out, "w").write(low.compile().as_text())
