#!/usr/bin/env python3
"""Write the convolution and reduce-window parser samples of tests/hlo from JAX, and print what
JAX computes for them on the inputs tests/hlo/test_hlo_conv.cpp builds.

Writes into --tests-hlo-dir (default: tests/hlo beside this directory):
  conv_jax.hlo          a small CNN as jax.jit(cnn).lower(...).as_text(dialect="hlo"): a 3x3 SAME
                        convolution with bias and ReLU, 2x2 max pooling, a grouped convolution with
                        stride 2 and asymmetric padding, 3x3 average pooling (a reduce-window sum
                        with padding), a dense layer and log-softmax
  conv_jax_dump.hlo     the same module as XLA dumps it (XLA_FLAGS=--xla_dump_to), before
                        optimizations
  conv_jax_argmax.hlo   2x2 max pooling that also returns the position of each maximum: a variadic
                        reduce-window over (values, iota)
Then prints, for each module, its outputs on parameters k whose element i is
((i * 37 + k * 11) % 23 - 11) / 8 (exact in float32), for the test to compare with.
Everything is fixed: two runs with the same package versions give identical files.
"""
import argparse
import glob
import os
import shutil
import tempfile

import numpy as np


def param(k, shape):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 37 + k * 11) % 23 - 11) / 8).astype(np.float32).reshape(shape)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests-hlo-dir", default=os.path.join(here, "..", "hlo"))
    args = parser.parse_args()

    dump_dir = tempfile.mkdtemp(prefix="conv-xla-dump-")
    # XLA reads XLA_FLAGS when jax creates its CPU backend: before the first jax use.
    os.environ["XLA_FLAGS"] = " ".join(filter(None, [
        os.environ.get("XLA_FLAGS"), f"--xla_dump_to={dump_dir}",
        "--xla_dump_hlo_module_re=^jit_cnn$"]))
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
    nhwc = ("NHWC", "HWIO", "NHWC")

    def cnn(x, w1, b1, w2, w3, b3):
        y = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=nhwc)
        y = jax.nn.relu(y + b1)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        y = lax.conv_general_dilated(y, w2, (2, 2), ((1, 0), (0, 1)), dimension_numbers=nhwc,
                                     feature_group_count=2)
        y = lax.reduce_window(y, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1),
                              ((0, 0), (1, 1), (1, 1), (0, 0))) / 9
        return jax.nn.log_softmax(y.reshape(y.shape[0], -1) @ w3 + b3, axis=-1)

    def argmax_pool(x):
        idx = lax.broadcasted_iota(jnp.int32, x.shape, 1) * x.shape[2] + \
            lax.broadcasted_iota(jnp.int32, x.shape, 2)

        def pick(a, b):
            take_a = (a[0] > b[0]) | (a[0] != a[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
            return jnp.where(take_a, a[0], b[0]), jnp.where(take_a, a[1], b[1])
        return lax.reduce_window((x, idx), (-jnp.inf, jnp.int32(0)), pick, (1, 2, 2), (1, 2, 2),
                                 "VALID")

    cnn_args = [param(0, (2, 8, 8, 1)), param(1, (3, 3, 1, 4)), param(2, (4,)),
                param(3, (3, 3, 2, 6)), param(4, (6, 3)), param(5, (3,))]
    pool_args = [param(0, (2, 6, 6))]
    modules = [("conv_jax.hlo", cnn, cnn_args), ("conv_jax_argmax.hlo", argmax_pool, pool_args)]
    for name, f, fargs in modules:
        text = jax.jit(f).lower(*fargs).as_text(dialect="hlo")
        with open(os.path.join(args.tests_hlo_dir, name), "w", encoding="utf-8") as out:
            out.write(text)
        outs = jax.jit(f)(*fargs)
        for o in outs if isinstance(outs, tuple) else (outs,):
            print(name, o.dtype, ", ".join(f"{v:.9g}" for v in np.asarray(o).ravel()))
    dumps = glob.glob(os.path.join(dump_dir, "*jit_cnn*before_optimizations.txt"))
    if len(dumps) != 1:
        raise SystemExit(f"expected one dump of jit_cnn, found {dumps}")
    shutil.copy(dumps[0], os.path.join(args.tests_hlo_dir, "conv_jax_dump.hlo"))
    shutil.rmtree(dump_dir)


if __name__ == "__main__":
    main()
