#!/usr/bin/env python3
"""Data-parallel training on a chip's cores: the SGD step of tests/hlo/stablehlo/generate.py's
sgd_step (a 4-8-3 MLP, jax.value_and_grad, lr 0.1) under shard_map over 8 devices, gradients and
loss averaged with lax.pmean, as XLA compiles it for one of 8 CPU devices (num_partitions=8, one
tuple all-reduce), trained by `tpusim train --cores 8` on a chip of 8 cores; against the same
step jitted for the global batch and trained by `tpusim train` on one core, from the same initial
parameters and the same shuffled global batches (one --seed: replica r takes rows [r b, (r+1) b)
of the global batch the one core takes whole).

Checks: every step's loss of the 8 replicas within LOSS_TOL of the one core's, and the final
parameters within PARAM_TOL (relative RMS). Why not equal: both compile with --precision bf16, so
every dot's operands are rounded to bf16 (8 bits of mantissa: 2^-9 relative) with fp32 sums; the
replicas sum 8 partial gradients of 32 rows each (then the all-reduce adds them in replica order)
where the one core sums 256 rows in one dot, so the fp32 sums differ in order, and the bf16
roundings of the activations and gradients differ with them; SGD then carries each step's
difference into the next. A few bf16 ulps per step over 16 steps stays well inside 2%. Prints the
device cycles per global batch on 1 and on 8 cores and the speedup (the all-reduce's sums are
host work, counted in no device cycles).

Usage: data_parallel.py --tpuc BIN --tpusim BIN --array N [--work-dir DIR]; N must have an 8-core
chip built (TPU_CHIPS "Nx8"). Exits 0 when it passes, 1 when not, 77 (the ctest SKIP_RETURN_CODE)
when jax cannot be imported.
"""
import os
import re
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_mlp as mlp  # noqa: E402  (sets JAX_PLATFORMS before jax starts, or records MISSING)

if not mlp.MISSING:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec as P
    from safetensors.numpy import save_file, load_file

    shard_map = getattr(jax, "shard_map", None)
    if shard_map is None:
        from jax.experimental.shard_map import shard_map

R = 8  # replicas and cores
B = 32  # rows per replica
ROWS = 2048  # 8 global batches of 256 per epoch
EPOCHS = 2
SEED = 5
LOSS_TOL = 0.02  # relative, per step
PARAM_TOL = 0.02  # relative RMS of the final parameters
SHAPES = {"b1": (8,), "b2": (3,), "w1": (4, 8), "w2": (8, 3)}  # jax's leaf order: sorted keys


def loss_of(p, x, y):
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    logp = jax.nn.log_softmax(h @ p["w2"] + p["b2"])
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, 3), axis=-1))


def sgd_step(p, x, y):
    value, grad = jax.value_and_grad(loss_of)(p, x, y)
    return jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, p, grad), value


def dp_step(p, x, y):
    value, grad = jax.value_and_grad(loss_of)(p, x, y)
    grad, value = jax.lax.pmean(grad, "i"), jax.lax.pmean(value, "i")
    return jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, p, grad), value


def specs(rows):
    params = {k: jax.ShapeDtypeStruct(s, jnp.float32) for k, s in SHAPES.items()}
    return params, jax.ShapeDtypeStruct((rows, 4), jnp.float32), jax.ShapeDtypeStruct((rows,), jnp.int32)


def input_names(args, package, log):
    """The package's input names in parameter order (tpuc --dump)."""
    error = mlp.run([args.tpuc, "--dump", package], log)
    if error:
        raise RuntimeError(error)
    with open(log, encoding="utf-8") as f:
        return re.findall(r"^  \d+ (\S+): ", f.read().split("outputs (")[0], re.M)


def train(args, work, name, text, params, extra):
    """Compiles text and trains it from params; returns (losses, final params, cycles per step)."""
    hlo, tpub = os.path.join(work, name + ".hlo"), os.path.join(work, name + ".tpub")
    with open(hlo, "w", encoding="utf-8") as f:
        f.write(text)
    log = os.path.join(work, name + ".log")
    error = mlp.run([args.tpuc, hlo, "--array", str(args.array), "--precision", "bf16", "-o", tpub], log)
    if error:
        raise RuntimeError(error)
    names = input_names(args, tpub, log)[:len(SHAPES)]
    save_file({n: params[k] for n, k in zip(names, SHAPES)}, os.path.join(work, name + ".init.st"))
    csv = os.path.join(work, name + ".csv")
    error = mlp.run([args.tpusim, "train", tpub, "--data", os.path.join(work, "x.npy"), "--labels",
                     os.path.join(work, "y.npy"), "--array", str(args.array), "--epochs", str(EPOCHS),
                     "--seed", str(SEED), "--state", os.path.join(work, name + ".init.st"), "--save",
                     os.path.join(work, name + ".final.st"), "--loss-csv", csv, *extra], log)
    if error:
        raise RuntimeError(error)
    with open(log, encoding="utf-8") as f:
        cycles = int(re.search(r"device cycles per step:\s+([\d,]+)", f.read()).group(1).replace(",", ""))
    losses = np.loadtxt(csv, delimiter=",", skiprows=1)[:, 2]
    final = load_file(os.path.join(work, name + ".final.st"))
    return losses, {k: final[n] for n, k in zip(names, SHAPES)}, cycles


def test(args, work):
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(SEED)
    y = (np.arange(ROWS) % 3).astype(np.int32)
    x = (2.0 * np.eye(4, dtype=np.float32)[y] + 0.5 * rng.standard_normal((ROWS, 4))).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    params = {k: (rng.standard_normal(s) / 2).astype(np.float32) for k, s in SHAPES.items()}

    mesh = Mesh(np.array(jax.devices()[:R]), ("i",))
    # Without the replication check the gradients of the replicated parameters are each device's
    # own, which the step's pmean averages (with it, JAX would already sum them over the devices).
    dp = jax.jit(shard_map(dp_step, mesh=mesh, in_specs=(P(), P("i"), P("i")), out_specs=(P(), P()),
                           check_vma=False), donate_argnums=(0,))
    dp_text = dp.lower(*specs(R * B)).compile().as_text()
    one_text = jax.jit(sgd_step, donate_argnums=(0,)).lower(*specs(R * B)).as_text(dialect="hlo")
    if "all-reduce" not in dp_text or "num_partitions=8" not in dp_text:
        return False, "XLA's per-device module has no all-reduce over 8 partitions"

    dp_loss, dp_final, dp_cycles = train(args, work, "dp", dp_text, params, ["--cores", str(R)])
    one_loss, one_final, one_cycles = train(args, work, "one", one_text, params, [])
    problems = []
    if len(dp_loss) != len(one_loss) or len(dp_loss) != EPOCHS * ROWS // (R * B):
        problems.append(f"{len(dp_loss)} and {len(one_loss)} steps")
    else:
        rel = np.abs(dp_loss - one_loss) / np.abs(one_loss)
        if not rel.max() <= LOSS_TOL:
            problems.append(f"step {rel.argmax() + 1}: loss {dp_loss[rel.argmax()]:.6f} on {R} cores, "
                            f"{one_loss[rel.argmax()]:.6f} on one (tolerance {LOSS_TOL:.0%})")
        if not dp_loss[-4:].mean() < dp_loss[:4].mean():
            problems.append(f"the loss does not fall: {dp_loss[:4].mean():.4f} -> {dp_loss[-4:].mean():.4f}")
    for k in SHAPES:
        err = np.sqrt(np.mean((dp_final[k] - one_final[k]) ** 2) / np.mean(one_final[k] ** 2))
        if not err <= PARAM_TOL:
            problems.append(f"final {k}: relative RMS {err:.3%} (tolerance {PARAM_TOL:.0%})")
    figures = (f"{len(dp_loss)} steps, loss {dp_loss[0]:.4f} -> {dp_loss[-1]:.4f}, max loss difference "
               f"{(np.abs(dp_loss - one_loss) / np.abs(one_loss)).max():.2e} (relative); device cycles per global batch "
               f"of {R * B}: {one_cycles} on 1 core, {dp_cycles} on {R} cores "
               f"({one_cycles / dp_cycles:.2f}x)") if not problems or len(dp_loss) == len(one_loss) else ""
    return not problems, "; ".join(problems + [figures] if problems else [figures])


def main():
    args = mlp.arguments(__doc__)

    def results(work, export):
        del export
        try:
            yield f"shard_map SGD step on {R} cores against one core", *test(args, work)
        except RuntimeError as e:
            yield f"shard_map SGD step on {R} cores against one core", False, str(e)

    return mlp.run_all(args, "data-parallel-", results)


if __name__ == "__main__":
    sys.exit(main())
