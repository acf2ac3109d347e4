#!/usr/bin/env python3
"""Random JAX CNNs through tpuc and `tpusim run`, compared with JAX's float32 outputs.

The convolutional sibling of random_mlp.py, whose helpers it imports: each model in MODELS gets
seeded random He-initialized weights (no training), is written as JAX writes convolutions
(jax.lax.conv_general_dilated in NHWC/HWIO, `b01f_01io->b01f`, or NCHW/OIHW, `bf01_oi01->bf01`;
max pooling as jax.lax.reduce_window(x, -inf, jax.lax.max, ...)), exported as HLO text with
safetensors named after the HLO parameters (float32, or bfloat16 for a bf16 model), compiled by tpuc with calibration inputs, run
on the simulated device by `tpusim run` (which checks every submission bit-exact against the
golden model) on other inputs, and compared with the exported function as JAX runs it. Channel
counts follow the array size N (N - 1, N + 1, ...), so that they are never whole tiles.

Tolerance. The device computes with int8 kernels (per output channel) and int8 activations (per
tensor), so every product carries a rounding error of up to about 1/254 of its operands' ranges and
every layer handed on as int8 adds one more rounding of up to 1/254 of its range; max pooling and
ReLU add none (they commute with the requantization). The errors of a layer's kh * kw * c terms
mostly cancel, but they compound over up to four quantized layers (three convolutions and the dense
one). Measured over 20 seeds at N = 8 and 12 at N = 16 (these models, other weights and inputs) and
SEED at both, the largest error of a logits model was at most 3.0% of its largest |output|, and that
of a log_softmax model at most 6.1% of its largest |logit| on the log-probabilities (the error of
two logits and their logsumexp): within the bounds below with a margin of 1.6. A value beyond its
calibrated range is clamped, an error as large as the excess: the last convolutions here have few
values per image (a 1x1 or 2x2 output), so their maxima are tail statistics, and with 1,000
calibration rows 2 of 120 runs (the 20 seeds at N = 8) had one test row that cost 18% of max
|logit|. Calibration therefore uses CALIB_ROWS = 5,000 rows of the test inputs' distribution (tpuc
calibrates them in 0.2-2 s). Random untrained CNNs give close logits to their few classes, so
near-ties flip: argmax agreement was 94.5-100% over those seeds (a broken layout would give about
1/classes). We require:
  - logits: max |device - JAX| <= REL_TOL * max |JAX| over the test set;
  - log_softmax: the same bound on the logits gives |error| <= 2 * REL_TOL * max |JAX logits| on the
    log-probabilities (random_mlp.py), and argmax agreement >= MIN_AGREEMENT;
  - every model (tpuc's report): all convolutions and the dense layer on the device in one
    segment, each convolution with its bias, ReLU and max pooling fused as the model has them and
    handed on as int8 on the device, the input quantized to u8 or s8 as its sign says, and no
    convolution or reduce-window on the host; and the same convolutions (kernel, stride, padding,
    pooling, output channels, fused flags) in the run's JSON layer table, a packed first one as
    the 1x1 convolution of its receptive fields.

Usage: random_cnn.py --tpuc BIN --tpusim BIN --array N [--work-dir DIR]
Prints per-model figures and `N passed, M failed`; exits 0 when all pass, 1 on any failure, 77 (the
ctest SKIP_RETURN_CODE) when jax cannot be imported.
"""
import os
import re
import sys
from collections import namedtuple

sys.dont_write_bytecode = True  # importing random_mlp leaves no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_mlp as mlp  # noqa: E402  (sets JAX_PLATFORMS before jax starts, or records MISSING)

if not mlp.MISSING:
    import jax
    import jax.numpy as jnp
    import numpy as np

REL_TOL = 0.05
MIN_AGREEMENT = 0.90
CALIB_ROWS = 5000  # at least 1000 batches of every model's batch size
TEST_ROWS = 200  # fresh rows from the same distribution, whole batches; 90% agreement allows 20 flips
SEED = 5150
MAX_CYCLES = 2_000_000  # per submission, ~100x the largest here: a device hang fails in seconds

# A convolution: kernel (kh, kw); cout an int or "N", "N-1", "N+1", ... of the array size; stride
# (sh, sw); padding "SAME", "VALID" or ((top, bottom), (left, right)); post: the operations after
# it in the order applied, of "bias", "relu" and "pool"; pool: (window, stride), square.
Conv = namedtuple("Conv", "kernel cout stride padding post pool", defaults=((), None))
# A model: layout "NHWC" (HWIO kernels) or "NCHW" (OIHW); image (h, w); cin like cout; inputs
# "unit" (uniform [0, 1), u8 on the device) or "signed" (standard normal, s8); then the flattened
# features go through a dense layer with bias to `classes` logits, or their log_softmax (of
# float32 logits). dtype: the weights' and the layers' ("float32" or "bfloat16": the float32
# input converted inside).
Model = namedtuple("Model", "name layout image cin convs batch inputs classes output dtype",
                   defaults=("float32",))
MODELS = [
    Model("same3_pool", "NHWC", (12, 12), 1, (
        Conv((3, 3), "N-1", (1, 1), "SAME", ("bias", "relu", "pool"), (2, 2)),
    ), 2, "unit", 10, "logits"),
    Model("two_layer_overlap", "NHWC", (13, 13), 3, (
        Conv((5, 5), "N+1", (1, 1), "SAME", ("bias", "relu")),
        Conv((3, 3), "N-1", (2, 2), "VALID", ("bias", "relu", "pool"), (3, 2)),
    ), 5, "signed", 7, "log_softmax"),
    Model("nchw_torch_like", "NCHW", (12, 12), 3, (
        Conv((3, 3), "N+1", (1, 1), ((1, 1), (1, 1)), ("bias", "relu")),
        Conv((3, 3), "N-1", (1, 1), "VALID", ("bias", "relu", "pool"), (2, 2)),
    ), 1, "unit", 10, "logits"),
    Model("three_layer_full_kernel", "NHWC", (11, 11), "N+1", (
        Conv((1, 1), "N-1", (1, 1), "VALID", ("relu",)),
        Conv((3, 3), "N+1", (2, 2), ((0, 1), (1, 0)), ("bias", "relu")),
        Conv((6, 6), "2N-1", (1, 1), ((1, 0), (0, 1)), ("bias", "relu")),  # the padded 6x6 input
    ), 2, "signed", 5, "log_softmax"),
    Model("stride2_pool_then_relu", "NHWC", (14, 14), 1, (
        Conv((5, 5), "N", (2, 2), "SAME", ("bias", "pool", "relu"), (2, 2)),
    ), 5, "signed", 6, "logits"),
    Model("nchw_pool_bias_relu", "NCHW", (9, 9), "N-1", (
        Conv((3, 3), "N+1", (2, 2), "SAME", ("pool", "bias", "relu"), (3, 2)),
        Conv((1, 1), "N-1", (1, 1), "VALID", ("bias",)),
    ), 2, "unit", 4, "log_softmax"),
    Model("bf16_two_layer", "NHWC", (10, 10), 2, (
        Conv((3, 3), "N+1", (1, 1), "SAME", ("bias", "relu")),
        Conv((3, 3), "N-1", (1, 1), "VALID", ("bias", "relu", "pool"), (2, 2)),
    ), 2, "signed", 5, "logits", "bfloat16"),
]


def channels(spec, n):
    """An int, or "N", "N-1", "2N+1", ... for the array size n."""
    if isinstance(spec, int):
        return spec
    found = re.fullmatch(r"(\d*)N([+-]\d+)?", spec)
    return int(found.group(1) or 1) * n + int(found.group(2) or 0)


def conv(h, k, layer, layout):
    dims = ("NHWC", "HWIO", "NHWC") if layout == "NHWC" else ("NCHW", "OIHW", "NCHW")
    return jax.lax.conv_general_dilated(h, k, layer.stride, layer.padding, dimension_numbers=dims)


def max_pool(h, layer, layout):
    window, step = layer.pool
    spatial = (1, window, window, 1) if layout == "NHWC" else (1, 1, window, window)
    strides = (1, step, step, 1) if layout == "NHWC" else (1, 1, step, step)
    return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, spatial, strides, "VALID")


def input_shape(model, n, rows):
    h, w = model.image
    c = channels(model.cin, n)
    return (rows, h, w, c) if model.layout == "NHWC" else (rows, c, h, w)


def random_params(model, n, rng):
    """He-initialized kernels k1, k2, ... (HWIO or OIHW), biases b1, ... where a layer has one (small
    random values), and the dense layer's wd, bd sized from the flattened features, all of the
    model's dtype."""
    params, dtype = {}, jnp.dtype(model.dtype)
    cin = channels(model.cin, n)
    for i, layer in enumerate(model.convs, 1):
        kh, kw = layer.kernel
        cout = channels(layer.cout, n)
        shape = (kh, kw, cin, cout) if model.layout == "NHWC" else (cout, cin, kh, kw)
        params[f"k{i}"] = (rng.standard_normal(shape) * np.sqrt(2 / (kh * kw * cin))).astype(dtype)
        if "bias" in layer.post:
            params[f"b{i}"] = (0.1 * rng.standard_normal(cout)).astype(dtype)
        cin = cout
    features = jax.eval_shape(lambda x, p: features_of(model, x, p),
                              jax.ShapeDtypeStruct(input_shape(model, n, 1), jnp.float32), params).shape[1]
    params["wd"] = (rng.standard_normal((features, model.classes)) * np.sqrt(2 / features)).astype(dtype)
    params["bd"] = (0.1 * rng.standard_normal(model.classes)).astype(dtype)
    return params


def features_of(model, x, params):
    """The convolutions with their bias, ReLU and pooling, flattened to [rows, features]."""
    h = x.astype(model.dtype)
    for i, layer in enumerate(model.convs, 1):
        h = conv(h, params[f"k{i}"], layer, model.layout)
        for op in layer.post:
            if op == "bias":
                b = params[f"b{i}"]
                h = h + (b if model.layout == "NHWC" else b[:, None, None])
            elif op == "relu":
                h = jax.nn.relu(h)
            else:
                h = max_pool(h, layer, model.layout)
    return h.reshape(h.shape[0], -1)


def random_inputs(model, n, rng, rows):
    shape = input_shape(model, n, rows)
    x = rng.standard_normal(shape) if model.inputs == "signed" else rng.random(shape)
    return x.astype(np.float32)


def check_report(model, report):
    """Problems with where the compiler put things, from its report (docs/compiler.md)."""
    convs = len(model.convs)
    problems = []
    placed = re.search(r"\(GEMMs: (\d+), convolutions: (\d+), segments: (\d+)\)", report)
    if not placed or placed.groups() != ("1", str(convs), "1"):
        problems.append(f"expected 1 GEMM and {convs} convolutions in 1 segment, report says "
                        f"'{placed.group(0) if placed else 'no convolutions'}'")
    lines = re.findall(r"^\s*conv \d+ .*$", report, re.M)
    if len(lines) != convs:
        problems.append(f"expected {convs} 'conv' lines, the report shows {len(lines)}")
    for layer, line in zip(model.convs, lines):
        want = {"(bias)": "bias" in layer.post, "(relu)": "relu" in layer.post,
                f"(max pool {layer.pool[0]}x{layer.pool[0]} stride {layer.pool[1]}x{layer.pool[1]})"
                if layer.pool else "(max pool": bool(layer.pool), "stays on the device": True}
        for what, present in want.items():
            if (what in line) != present:
                problems.append(f"'{line.strip()}' {'lacks' if present else 'has'} '{what}'")
    host = re.search(r"^\s*on the host: (.*)$", report, re.M)
    if not host or re.search(r"convolution|reduce-window|reduce_window", host.group(1)):
        problems.append(f"on the host: '{host.group(1) if host else '(no such line)'}'")
    a_type = "s8" if model.inputs == "signed" else "u8"
    host_type = "bf16" if model.dtype == "bfloat16" else "f32"
    if not re.search(rf"input = '[^']*' {host_type} -> {a_type},", report):
        problems.append(f"expected the input quantized to {a_type}")
    return problems


def check_layers(model, n, stats, packed):
    """Problems with the run's JSON layer table: the convolutions as the model has them, the first
    as the 1x1 convolution of its receptive fields when tpuc packed it (its report's first conv
    has a 'packed:' line; docs/compiler.md)."""
    problems = []
    convs = [layer for layer in stats["layers"] if layer["kind"] == "conv2d"]
    if len(convs) != len(model.convs):
        return [f"expected {len(model.convs)} conv2d layers in the run, found {len(convs)}"]
    for i, (layer, got) in enumerate(zip(model.convs, convs)):
        pads = layer.padding if not isinstance(layer.padding, str) else \
            jax.lax.padtype_to_pads(model.image if i == 0 else got["input"][1:3], layer.kernel,
                                    layer.stride, layer.padding)
        want = {"kernel": list(layer.kernel), "cout": channels(layer.cout, n), "stride": list(layer.stride),
                "pad": [int(p) for side in pads for p in side],
                "pool": {"window": [layer.pool[0]] * 2, "stride": [layer.pool[1]] * 2} if layer.pool else None}
        if i == 0 and packed:
            want.update(kernel=[1, 1], stride=[1, 1], pad=[0, 0, 0, 0])
            if got["input"][3] != layer.kernel[0] * layer.kernel[1] * channels(model.cin, n):
                problems.append(f"conv2d '{got.get('name')}': input {got['input']}, packed from "
                                f"{layer.kernel} x {model.cin} channels")
        for key, value in want.items():
            if got[key] != value:
                problems.append(f"conv2d '{got.get('name')}': {key} {got[key]}, expected {value}")
        flags = set(got["flags"])
        for flag in ("bias", "relu", "pool"):
            if (flag in flags) != (flag in layer.post):
                problems.append(f"conv2d '{got.get('name')}': flags {sorted(flags)}")
                break
        if "out_int8" not in flags:
            problems.append(f"conv2d '{got.get('name')}': result not int8")
    return problems


def test_model(model, index, args, work, export):
    """Export, compile, run and compare one model; return (passed, figures text)."""
    n = args.array
    rng = np.random.default_rng(SEED + index)
    params = random_params(model, n, rng)
    calib = random_inputs(model, n, rng, CALIB_ROWS)
    test_x = random_inputs(model, n, rng, TEST_ROWS)

    def logits(x, params):
        return (features_of(model, x, params) @ params["wd"] + params["bd"]).astype(jnp.float32)

    def predict(x, params):
        z = logits(x, params)
        return jax.nn.log_softmax(z, axis=-1) if model.output == "log_softmax" else z

    x_spec = jax.ShapeDtypeStruct(input_shape(model, n, model.batch), jnp.float32)
    lowered = jax.jit(predict).lower(x_spec, params)
    compiled = lowered.compile()
    hlo = lowered.as_text(dialect="hlo")
    batches = range(0, TEST_ROWS, model.batch)
    want = np.concatenate([np.asarray(compiled(test_x[i:i + model.batch], params)) for i in batches])
    want_logits = np.asarray(jax.jit(logits)(test_x, params))

    error, report, got, stats = mlp.compile_and_run(hlo, params, calib, test_x, want, args, work, export,
                                                    max_cycles=MAX_CYCLES)
    if error:
        return False, error
    packed = re.search(r"^\s*conv 0 .*\n(\s{6}.*\n)*?\s*packed: ", report, re.M) is not None
    problems = check_report(model, report) + check_layers(model, n, stats, packed)

    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    scale = float(np.max(np.abs(want)))
    logit_scale = float(np.max(np.abs(want_logits)))
    agree = float(np.mean(np.argmax(got, axis=1) == np.argmax(want, axis=1)))
    if model.output == "log_softmax":
        bound = 2 * REL_TOL * logit_scale
        if agree < MIN_AGREEMENT:
            problems.append(f"argmax agreement {agree:.1%} < {MIN_AGREEMENT:.0%}")
    else:
        bound = REL_TOL * scale
    if not err <= bound:  # NaN fails too
        problems.append(f"max abs error {err:.4g} > bound {bound:.4g}")
    relative = f"relative {err / scale:.2%} of max |JAX| {scale:.4g}" + (
        f", {err / logit_scale:.2%} of max |JAX logits| {logit_scale:.4g}" if model.output == "log_softmax" else "")
    figures = (f"max abs error {err:.4g} (bound {bound:.4g}), {relative}, argmax agreement {agree:.1%}, "
               f"{stats['submissions']} submissions, {stats['cycles']['total']} cycles")
    return not problems, "; ".join([figures] + problems)


def describe(model, n):
    convs = ", ".join(
        f"{layer.kernel[0]}x{layer.kernel[1]}/{layer.stride[0]} "
        f"{layer.padding if isinstance(layer.padding, str) else 'pad ' + str(layer.padding)} "
        f"-> {channels(layer.cout, n)}" + "".join(
            f" +{op}" + (f"{layer.pool[0]}/{layer.pool[1]}" if op == "pool" else "") for op in layer.post)
        for layer in model.convs)
    h, w = model.image
    return (f"{model.layout} {h}x{w}x{channels(model.cin, n)}: {convs}; dense {model.classes}, batch {model.batch}, "
            f"{model.inputs} inputs, {model.output}")


def main():
    args = mlp.arguments(__doc__)

    def results(work, export):
        for index, model in enumerate(MODELS):
            ok, text = test_model(model, index, args, os.path.join(work, model.name), export)
            yield f"{model.name} ({describe(model, args.array)})", ok, text

    return mlp.run_all(args, "random-cnn-", results)

if __name__ == "__main__":
    sys.exit(main())
