"""Writes gru_scan.hlo and gru_scan.mlir: a GRU scanned over time with jax.lax.scan (batch 4,
5 steps, 5 features, state 6: its constants within the StableHLO parser's token limit), its
weights constants of the module (printed in full), the last state its result;
tests/runtime/test_golden_run.cpp runs both on the device.

    python3 tests/hlo/stablehlo/gru_scan.py   (JAX 0.10)
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
B, T, F, H = 4, 5, 5, 6


def main():
    rng = np.random.default_rng(0)
    wx = jnp.asarray(rng.normal(0, 0.4, (F, 3 * H)), jnp.float32)
    wh = jnp.asarray(rng.normal(0, 0.4, (H, 3 * H)), jnp.float32)
    b = jnp.asarray(rng.normal(0, 0.1, (3 * H,)), jnp.float32)

    def gru(x):
        def cell(h, xt):
            gx, gh = xt @ wx + b, h @ wh
            r = jax.nn.sigmoid(gx[:, :H] + gh[:, :H])
            z = jax.nn.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
            n = jnp.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
            return (1 - z) * n + z * h, None

        h0 = jnp.zeros((x.shape[0], H), jnp.float32)
        return jax.lax.scan(cell, h0, jnp.swapaxes(x, 0, 1))[0]

    lowered = jax.jit(gru).lower(jax.ShapeDtypeStruct((B, T, F), jnp.float32))
    hlo = lowered.compiler_ir("hlo").as_hlo_text(print_large_constants=True)
    for name, text in (("gru_scan.hlo", hlo), ("gru_scan.mlir", str(lowered.compiler_ir("stablehlo")))):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
