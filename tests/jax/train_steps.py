#!/usr/bin/env python3
"""JAX training steps `(params, opt_state, x, y) -> (params', opt_state', loss)` on the simulated
device: SGD with momentum and Adam (bias-corrected, an int32 step counter in its state), each for
a ReLU MLP and a small CNN (convolution, ReLU, max pooling, convolution, ReLU, dense; cross-entropy
of integer labels), written with jax.value_and_grad, params and opt_state donated. The steps (and the small
samples tests/hlo/stablehlo/generate.py lowers from them) are defined here.

Each step is lowered to HLO text and to StableHLO, compiled by `tpusim.compile(...,
precision="bf16")` and run STEPS times in process (tpusim.Runtime, every submission checked
against the golden model), each step's params' and opt_state' fed to the next as its inputs (the
outputs the donation aliases to them), on a fixed learnable task (labels the argmax of a random
linear map of the inputs). Checks:
  - the compiler's report: every dot and convolution of the step (forward, input and weight
    gradients) on the device in bf16, none on the host;
  - against the same steps in JAX with every dot's and convolution's operands rounded to bf16 and
    float32 sums (bf16_operands: what the device computes, forward and backward), params and
    state after STEPS steps within BF16_REF_RMS relative RMS, each loss within BF16_REF_LOSS,
    both 2^-16 (random_bf16.py's bound for a forward pass). The two differ only in the order of
    the fp32 sums (K * 2^-24 of the sum of magnitudes) and in libm against XLA's exp and log (2
    ulps), and where such a difference flips an operand's rounding to bf16 the flipped element
    moves by 2^-8 of itself (measured over 4 steps: 1e-8 to 6e-8 for the state, at most 1.1e-7
    for a loss);
  - against JAX float32: each loss within F32_LOSS relative (1 %; measured at most 0.31 %), the
    losses falling on both, and the update params_STEPS - params_0 within F32_UPDATE_RMS
    relative RMS, 10 % (measured: the MLP 3.2 % with momentum, 5.7 % with Adam; the CNN 1.5 % and
    3.7 %). That is bf16's error, not the device's (JAX's bf16 operands give the same figures
    against float32): a gradient that is a small difference of larger terms (a bias gradient
    summed over the batch, of rows of softmax - one_hot that sum to zero) keeps less of bf16's
    8 significant bits (the MLP's first bias gradient is 5 % off), and Adam's first steps move
    every parameter by about lr whatever the size of its gradient, so small gradients' errors
    count in full.

Usage: train_steps.py --array N [--steps K]; prints each run's figures; exits 0 when all pass, 1
on any failure, 77 (ctest's skip) when jax, cffi or pandas cannot be imported.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_bf16 as bf16  # noqa: E402  (random_mlp sets JAX_PLATFORMS before jax starts)
from random_mlp import MISSING, SKIP  # noqa: E402

if not MISSING:
    import jax
    import jax.numpy as jnp
    import numpy as np

SEED = 2121
STEPS = 4
BF16_REF_RMS = 2.0 ** -16
BF16_REF_LOSS = 2.0 ** -16
F32_LOSS = 0.01
F32_UPDATE_RMS = 0.1
NHWC = ("NHWC", "HWIO", "NHWC")


def dot(a, b):
    return a @ b


def conv(x, k):
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=NHWC)


def bf16_operands(op):
    """op (dot or conv) as the device computes it: its operands rounded to bf16, the products
    summed in float32; its gradients the same way (the cotangent rounded too)."""
    def rnd(v):
        return v.astype(jnp.bfloat16).astype(jnp.float32)

    @jax.custom_vjp
    def f(a, b):
        return op(rnd(a), rnd(b))

    def fwd(a, b):
        return f(a, b), (rnd(a), rnd(b))

    def bwd(res, g):
        return jax.vjp(op, *res)[1](rnd(g))

    f.defvjp(fwd, bwd)
    return f


def cross_entropy(logits, y):
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, logits.shape[-1]), axis=-1))


def mlp(p, x, dot=dot, conv=conv):
    return dot(jax.nn.relu(dot(x, p["w1"]) + p["b1"]), p["w2"]) + p["b2"]


def cnn(p, x, dot=dot, conv=conv):
    h = jax.nn.relu(conv(x, p["k1"]) + p["kb1"])
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.nn.relu(conv(h, p["k2"]) + p["kb2"])
    return dot(h.reshape(h.shape[0], -1), p["w"]) + p["b"]


def momentum(net, lr=0.1, mu=0.9, **ops):
    """SGD with momentum (PyTorch's form): v' = mu v + g, p' = p - lr v'; opt_state is v."""
    def step(params, v, x, y):
        loss, g = jax.value_and_grad(lambda p: cross_entropy(net(p, x, **ops), y))(params)
        v = jax.tree_util.tree_map(lambda v, g: mu * v + g, v, g)
        return jax.tree_util.tree_map(lambda p, v: p - lr * v, params, v), v, loss
    return step


def adam(net, lr=0.01, b1=0.9, b2=0.999, eps=1e-8, **ops):
    """Adam with bias correction; opt_state is {"m", "v", "t"}, t the int32 step count."""
    def step(params, state, x, y):
        loss, g = jax.value_and_grad(lambda p: cross_entropy(net(p, x, **ops), y))(params)
        t = state["t"] + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], g)
        c1, c2 = 1 - b1 ** t.astype(jnp.float32), 1 - b2 ** t.astype(jnp.float32)
        params = jax.tree_util.tree_map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), params, m, v)
        return params, {"m": m, "v": v, "t": t}, loss
    return step


NETS = {"mlp": mlp, "cnn": cnn}
OPTIMIZERS = {"momentum": momentum, "adam": adam}


def init_state(optimizer, params):
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    return zeros if optimizer == "momentum" else {"m": zeros, "v": zeros, "t": jnp.int32(0)}


def param_shapes(net, features, hidden, classes):
    """The parameters' shapes: an MLP features-hidden-classes on [batch, features] inputs, or a
    CNN on [batch, features, features, channels] ones: hidden 3x3 kernels, max pooling by 2,
    hidden 3x3 kernels again, a dense layer."""
    if net == "mlp":
        return {"w1": (features, hidden), "b1": (hidden,), "w2": (hidden, classes), "b2": (classes,)}
    h, c = features
    return {"k1": (3, 3, c, hidden), "kb1": (hidden,), "k2": (3, 3, hidden, hidden), "kb2": (hidden,),
            "w": ((h // 2) ** 2 * hidden, classes), "b": (classes,)}


def lower(net, optimizer, params, state, x, y):
    """The step lowered with params and opt_state donated (jax.jit's donate_argnums)."""
    step = OPTIMIZERS[optimizer](NETS[net])
    return jax.jit(step, donate_argnums=(0, 1)).lower(params, state, x, y)


# The dots and convolutions of a step: the MLP's 2 forward, 2 weight gradients and the second
# layer's input gradient; the CNN's 3 forward, 3 weight gradients and the input gradients of the
# dense layer and the second convolution (a convolution of the reversed kernel).
DEVICE_OPS = {"mlp": 5, "cnn": 8}
# name, net, optimizer, features (the CNN's: image side and channels), hidden (the CNN's
# kernels), classes, batch
RUNS = [
    ("mlp_momentum", "mlp", "momentum", 64, 32, 10, 16),
    ("mlp_adam", "mlp", "adam", 64, 32, 10, 16),
    ("cnn_momentum", "cnn", "momentum", (8, 1), 8, 10, 8),
    ("cnn_adam", "cnn", "adam", (8, 1), 8, 10, 8),
]


def flat(tree):
    return np.concatenate([np.ravel(np.asarray(leaf, np.float64)) for leaf in jax.tree_util.tree_leaves(tree)])


def check_report(report, device_ops):
    """device_ops dots and convolutions on the device, each in bf16, none on the host (tpuc's
    report, docs/compiler.md)."""
    problems = []
    placed = re.search(r"\(GEMMs: (\d+), (?:convolutions: (\d+), )?segments", report)
    host = re.search(r"^\s*on the host: (.*)$", report, re.M)
    if not placed or sum(int(n or 0) for n in placed.groups()) != device_ops:
        problems.append(f"expected {device_ops} dots and convolutions on the device: {placed and placed.group(0)}")
    if report.count("bf16 on the device") != device_ops:
        problems.append(f"{report.count('bf16 on the device')} operations in bf16, expected {device_ops}")
    if not host or re.search(r"\((dot|convolution)\)", host.group(1)):
        problems.append(f"a dot or convolution on the host: {host and host.group(1)}")
    return problems


def run(spec, dialect, tpusim, array, steps):
    """Runs one step steps times on the device and in JAX; returns (passed, figures)."""
    name, net, optimizer, features, hidden, classes, batch = spec
    rng = np.random.default_rng(SEED)
    shapes = param_shapes(net, features, hidden, classes)
    params = {k: (rng.standard_normal(s) * (np.sqrt(2 / np.prod(s[:-1])) if len(s) > 1 else 0.1)).astype(np.float32)
              for k, s in shapes.items()}
    state = init_state(optimizer, params)
    in_shape = (features,) if net == "mlp" else (*features[:1] * 2, features[1])
    xs = rng.standard_normal((steps, batch, *in_shape)).astype(np.float32)
    teacher = rng.standard_normal((int(np.prod(in_shape)), classes))
    ys = np.argmax(xs.reshape(steps * batch, -1) @ teacher, axis=1).reshape(steps, batch).astype(np.int32)

    lowered = lower(net, optimizer, params, state, xs[0], ys[0])
    text = lowered.as_text(dialect="hlo") if dialect == "hlo" else lowered.as_text()
    pkg = tpusim.compile(text, array=array, precision="bf16", name=f"{name}.{dialect}")
    problems = check_report(pkg.report, DEVICE_OPS[net])
    rt = tpusim.Runtime(pkg, max_cycles=5_000_000)
    leaves, tree = jax.tree_util.tree_flatten((params, state))
    n_state = len(leaves)
    if rt.updates != [*range(n_state), None] or len(rt.inputs) != n_state + 2:
        return False, (f"{len(rt.inputs)} inputs, outputs updating {rt.updates}: expected the "
                       f"{n_state} state leaves to update themselves, x, y and the loss")

    f32 = jax.jit(OPTIMIZERS[optimizer](NETS[net]))
    ref = jax.jit(OPTIMIZERS[optimizer](NETS[net], dot=bf16_operands(dot), conv=bf16_operands(conv)))
    dev, dev_f32, dev_ref = leaves, (params, state), (params, state)
    losses = []
    for s in range(steps):
        out = rt.run(*dev, xs[s], ys[s])
        dev = out[:n_state]  # output k updates input k (checked above)
        *dev_f32, loss_f32 = f32(*dev_f32, xs[s], ys[s])
        *dev_ref, loss_ref = ref(*dev_ref, xs[s], ys[s])
        losses.append((float(out[n_state]), float(loss_ref), float(loss_f32)))
    stats = rt.snapshot()
    if not stats["verified"] == stats["submissions"] > 0:
        problems.append("a submission not verified against the golden model")
    got = jax.tree_util.tree_unflatten(tree, dev)
    rms_ref = bf16.relative_rms(flat(got), flat(dev_ref))
    update = bf16.relative_rms(flat(got[0]) - flat(params), flat(dev_f32[0]) - flat(params))
    loss_ref = max(abs(d - r) / abs(r) for d, r, _ in losses)
    loss_f32 = max(abs(d - f) / abs(f) for d, _, f in losses)
    if not rms_ref <= BF16_REF_RMS:
        problems.append(f"state against JAX's bf16 operands: relative RMS {rms_ref:.3g} > {BF16_REF_RMS:.3g}")
    if not loss_ref <= BF16_REF_LOSS:
        problems.append(f"a loss {loss_ref:.3g} from JAX's bf16 operands' > {BF16_REF_LOSS:.3g}")
    if not loss_f32 <= F32_LOSS:
        problems.append(f"a loss {loss_f32:.3g} from JAX float32's > {F32_LOSS}")
    if not (losses[-1][0] < losses[0][0] and losses[-1][2] < losses[0][2]):
        problems.append("the loss did not fall")
    if not update <= F32_UPDATE_RMS:
        problems.append(f"update against JAX float32: relative RMS {update:.3g} > {F32_UPDATE_RMS}")
    figures = (f"loss {losses[0][0]:.4f} -> "
               f"{losses[-1][0]:.4f} (f32 {losses[0][2]:.4f} -> {losses[-1][2]:.4f}); against JAX's bf16 operands: "
               f"state relative RMS {rms_ref:.2e}, loss {loss_ref:.2e}; against JAX f32: update relative RMS "
               f"{update:.3%}, loss {loss_f32:.3%}")
    return not problems, "; ".join(problems + [figures])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--array", type=int, required=True, help="array size N (a model the library was built with)")
    ap.add_argument("--steps", type=int, default=STEPS, help="steps per run")
    args = ap.parse_args()
    if MISSING:
        print(f"SKIP: jax cannot be imported ({MISSING})")
        return SKIP
    try:
        import tpusim
    except ImportError as e:
        print(f"SKIP: tpusim cannot be imported ({e})")
        return SKIP
    failed = 0
    for spec in RUNS:
        for dialect in ("hlo", "stablehlo"):
            ok, text = run(spec, dialect, tpusim, args.array, args.steps)
            print(f"{'PASS' if ok else 'FAIL'}: {spec[0]} ({dialect}): {text}", flush=True)
            failed += not ok
    print(f"{2 * len(RUNS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
