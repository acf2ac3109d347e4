#!/usr/bin/env python3
"""Random JAX MLPs through tpuc and `tpusim run`, compared with JAX's float32 outputs.

Each model in MODELS gets seeded random He-initialized weights (no training), is exported the way
models/mnist/export.py exports MNIST (HLO text in JAX's short style, safetensors named after the HLO
parameters; a bf16 model's weights are bf16 and it converts its float32 input to bf16 first), compiled by tpuc with calibration inputs, run on the simulated device by
`tpusim run` on different test inputs, and compared with the exported function as JAX runs it.

Tolerance. The device computes with int8 weights (per column) and int8 activations (per tensor), so
every product carries a rounding error of up to about 1/254 of its operands' ranges, and a ReLU
hidden layer handed on as int8 adds one more rounding of up to 1/254 of its range. Summed over K
terms these errors mostly cancel (they grow like sqrt(K), not K): measured, the largest error of a
model is 1-2.5% of its largest |output|. A value beyond its calibrated range is clamped, an error
that can be as large as the excess (with 128 calibration rows one such row cost 5% of max |JAX|), so
calibration uses many rows of the test inputs' distribution, as a real calibration set would. We
require:
  - logits: max |device - JAX| <= REL_TOL * max |JAX| over the test set;
  - log_softmax: the same bound on the logits gives |error| <= 2 * REL_TOL * max |JAX logits| on the
    log-probabilities (log_softmax moves by at most the logits' error plus that of their logsumexp),
    and argmax agreement >= MIN_AGREEMENT (near-ties may flip);
  - every model: all GEMMs on the device in one segment, every hidden layer's ReLU fused and handed
    on as int8 on the device, every bias fused, and the input quantized to u8 or s8 as its sign says
    (the compiler's report), so that the test exercises what it claims to.

Usage: random_mlp.py --tpuc BIN --tpusim BIN --array N [--work-dir DIR]
Prints per-model figures and `N passed, M failed`; exits 0 when all pass, 1 on any failure, 77 (the
ctest SKIP_RETURN_CODE) when jax cannot be imported.
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import namedtuple

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax starts: no probing for accelerators
try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError as e:
    MISSING = e
else:
    MISSING = None

SKIP = 77
REL_TOL = 0.05
MIN_AGREEMENT = 0.95
CALIB_ROWS = 1024  # at least 8 batches of every model's batch size
TEST_ROWS = 256  # fresh rows from the same distribution; 95% agreement allows 12 flips
SEED = 4242
MAX_CYCLES = 2_000_000  # per submission, ~80x the largest here: a device hang fails in seconds

# sizes: input, hidden..., output. bias: one flag per layer. inputs: "signed" (standard normal, A is
# s8) or "unit" (uniform [0, 1), A is u8). output: "logits" or "log_softmax" (of float32 logits).
# dtype: the weights' and the layers' ("float32" or "bfloat16").
Model = namedtuple("Model", "name sizes batch bias inputs output dtype", defaults=("float32",))
MODELS = [
    Model("mnist_like", (784, 100, 10), 16, (True, True), "unit", "logits"),
    Model("small_signed", (50, 37, 3), 8, (True, True), "signed", "log_softmax"),
    Model("deep_signed", (64, 45, 29, 10), 16, (True, True, True), "signed", "logits"),
    Model("deep_nobias", (20, 24, 17, 5), 1, (True, False, True), "unit", "log_softmax"),
    Model("nobias_first", (100, 30, 6), 8, (False, True), "unit", "logits"),
    Model("single_row", (13, 70, 9), 1, (True, False), "signed", "logits"),
    Model("wide_hidden", (96, 300, 33), 8, (True, True), "signed", "log_softmax"),
    Model("bf16_deep", (64, 45, 29, 10), 16, (True, True, True), "signed", "logits", "bfloat16"),
    Model("bf16_unit", (100, 30, 6), 8, (True, True), "unit", "log_softmax", "bfloat16"),
]


def load_mnist_export():
    """models/mnist/export.py as a module: the safetensors writer and the HLO parameter reader."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "mnist", "export.py")
    spec = importlib.util.spec_from_file_location("mnist_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_params(model, rng):
    """He-initialized weights, small random biases (of the model's dtype), keyed w1, b1, w2, ..."""
    params = {}
    dtype = jnp.dtype(model.dtype)
    for i, (fan_in, fan_out) in enumerate(zip(model.sizes, model.sizes[1:]), 1):
        params[f"w{i}"] = (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(dtype)
        if model.bias[i - 1]:
            params[f"b{i}"] = (0.1 * rng.standard_normal(fan_out)).astype(dtype)
    return params


def random_inputs(model, rng, rows):
    shape = (rows, model.sizes[0])
    x = rng.standard_normal(shape) if model.inputs == "signed" else rng.random(shape)
    return x.astype(np.float32)


def check_report(model, report):
    """Problems with where the compiler put things, from its report (docs/compiler.md)."""
    layers = len(model.sizes) - 1
    problems = []
    placed = re.search(r"\(GEMMs: (\d+), segments: (\d+)\)", report)
    if not placed or placed.groups() != (str(layers), "1"):
        problems.append(f"expected {layers} GEMMs in 1 segment, report says "
                        f"'{placed.group(0) if placed else 'no GEMMs'}'")
    for what, want in (("stays on the device", layers - 1), ("(relu)", layers - 1), ("(bias)", sum(model.bias))):
        if report.count(what) != want:
            problems.append(f"expected {want} GEMMs with '{what}', the report shows {report.count(what)}")
    a_type = "s8" if model.inputs == "signed" else "u8"
    host_type = "bf16" if model.dtype == "bfloat16" else "f32"
    if not re.search(rf"A = '[^']*' {host_type} -> {a_type},", report):
        problems.append(f"expected the input quantized to {a_type}")
    return problems


def run(cmd, log):
    """Run cmd with its output in log; return an error string, or None on success."""
    with open(log, "w", encoding="utf-8") as f:
        done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False)
    if done.returncode:
        with open(log, encoding="utf-8") as f:
            tail = f.read().strip().splitlines()[-3:]
        return f"{os.path.basename(cmd[0])} exited {done.returncode}: " + " | ".join(tail)
    return None


def compile_and_run(hlo, params, calib, test_x, want, args, work, export, max_cycles=MAX_CYCLES, names=None,
                    precision="int8"):
    """Write a model's files into work, compile it with tpuc and run test_x on the device.

    hlo is jax.jit(f).lower(x, params).as_text(dialect="hlo"): x is parameter 0 and the leaves of
    params follow in the pytree's flattening order (sorted keys); the weights are saved as float32
    safetensors named after those HLO parameters. tpuc calibrates on calib; `tpusim run` (which
    verifies every submission against the golden model) runs test_x, each submission within
    max_cycles; want is JAX's output, saved beside the device's. names ({number: name}) are the
    parameters when hlo is another text of the same function (StableHLO, an optimized dump), whose
    tensors then bind by number. precision "bf16" compiles with `tpuc --precision bf16`, which
    calibrates nothing (calib is then unused). Returns (error or None, tpuc's
    report, the device's output, the run's JSON report); the error also covers an output of
    another shape or type than want's and a submission that was not bit-exact.
    """
    names = names or export.entry_parameters(hlo)
    leaves = jax.tree_util.tree_leaves(params)
    if sorted(names) != list(range(len(leaves) + 1)):
        return f"unexpected ENTRY parameters {names}", None, None, None
    os.makedirs(work, exist_ok=True)
    hlo_file, weights, calib_file, x_file, tpub, tpuc_log, y_file, run_json = (os.path.join(work, f) for f in (
        "model.hlo", "model.safetensors", "calib.npy", "test_x.npy", "model.tpub", "tpuc.txt", "device_y.npy",
        "run.json"))
    with open(hlo_file, "w", encoding="utf-8") as f:
        f.write(hlo)
    export.save_safetensors(weights, [(names[i + 1], leaf) for i, leaf in enumerate(leaves)],
                            {**{names[i + 1]: str(i + 1) for i in range(len(leaves))}, "input": f"{names[0]}=0"})
    np.save(x_file, test_x)
    np.save(os.path.join(work, "jax_y.npy"), want)

    if precision == "int8":
        np.save(calib_file, calib)
    how = ["--calibrate", calib_file] if precision == "int8" else ["--precision", precision]
    error = run([args.tpuc, hlo_file, "--weights", weights, *how, "--array", str(args.array), "-o", tpub], tpuc_log)
    if error:
        return error, None, None, None
    with open(tpuc_log, encoding="utf-8") as f:
        report = f.read()
    error = run([args.tpusim, "run", tpub, "--input", x_file, "--output", y_file, "--max-cycles", str(max_cycles),
                 "--json", run_json, "--quiet"], os.path.join(work, "run.txt"))
    if error:
        return error, report, None, None
    got = np.load(y_file)
    with open(run_json, encoding="utf-8") as f:
        stats = json.load(f)
    if got.shape != want.shape or got.dtype != np.float32:
        error = f"device output {got.dtype}{list(got.shape)}, expected float32{list(want.shape)}"
    elif not 0 < stats["bit_exact_submissions"] == stats["submissions"]:
        error = f"{stats['bit_exact_submissions']} of {stats['submissions']} submissions bit-exact"
    return error, report, got, stats


def test_model(model, index, args, work, export):
    """Export, compile, run and compare one model; return (passed, figures text)."""
    rng = np.random.default_rng(SEED + index)
    params = random_params(model, rng)
    calib = random_inputs(model, rng, CALIB_ROWS)
    test_x = random_inputs(model, rng, TEST_ROWS)
    layers = len(model.sizes) - 1

    def logits(x, params):
        h = x.astype(model.dtype)
        for i in range(1, layers + 1):
            h = h @ params[f"w{i}"]
            if f"b{i}" in params:
                h = h + params[f"b{i}"]
            if i < layers:
                h = jax.nn.relu(h)
        return h.astype(jnp.float32)

    def predict(x, params):
        z = logits(x, params)
        return jax.nn.log_softmax(z, axis=-1) if model.output == "log_softmax" else z

    x_spec = jax.ShapeDtypeStruct((model.batch, model.sizes[0]), jnp.float32)
    lowered = jax.jit(predict).lower(x_spec, params)
    compiled = lowered.compile()
    hlo = lowered.as_text(dialect="hlo")
    batches = range(0, TEST_ROWS, model.batch)
    want = np.concatenate([np.asarray(compiled(test_x[i:i + model.batch], params)) for i in batches])
    want_logits = np.asarray(jax.jit(logits)(test_x, params))

    error, report, got, _ = compile_and_run(hlo, params, calib, test_x, want, args, work, export)
    if error:
        return False, error
    problems = check_report(model, report)

    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    scale = float(np.max(np.abs(want)))
    agree = float(np.mean(np.argmax(got, axis=1) == np.argmax(want, axis=1)))
    if model.output == "log_softmax":
        bound = 2 * REL_TOL * float(np.max(np.abs(want_logits)))
        if agree < MIN_AGREEMENT:
            problems.append(f"argmax agreement {agree:.1%} < {MIN_AGREEMENT:.0%}")
    else:
        bound = REL_TOL * scale
    if not err <= bound:  # NaN fails too
        problems.append(f"max abs error {err:.4g} > bound {bound:.4g}")
    figures = (f"max abs error {err:.4g} (bound {bound:.4g}), relative {err / scale:.2%} of max |JAX| "
               f"{scale:.4g}, argmax agreement {agree:.1%}")
    return not problems, "; ".join([figures] + problems)


def arguments(doc, *extra):
    """The command line the random_* tests share (tpuc, tpusim, array size, work directory), plus
    extra (flags, keywords) pairs for argparse's add_argument."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tpuc", required=True, help="the tpuc binary")
    parser.add_argument("--tpusim", required=True, help="the tpusim binary")
    parser.add_argument("--array", type=int, required=True, help="array size N (a model tpusim was built with)")
    parser.add_argument("--work-dir", help="keep every model's files here (default: a temporary directory)")
    for flags, keywords in extra:
        parser.add_argument(*flags, **keywords)
    return parser.parse_args()


def run_all(args, prefix, results):
    """Prints each (label, passed, text) that results(work, export) yields, with the seconds it took,
    then the tally; work is args.work_dir or a temporary directory removed at the end. Returns the
    exit code: 0 when all pass, 1 on any failure, SKIP when jax cannot be imported."""
    if MISSING:
        print(f"SKIP: jax cannot be imported ({MISSING})")
        return SKIP
    export = load_mnist_export()
    work = args.work_dir or tempfile.mkdtemp(prefix=prefix)
    passed = failed = 0
    try:
        start = time.monotonic()
        for label, ok, text in results(work, export):
            print(f"{'PASS' if ok else 'FAIL'}: {label} ({time.monotonic() - start:.1f} s): {text}", flush=True)
            passed, failed = passed + ok, failed + (not ok)
            start = time.monotonic()
    finally:
        if not args.work_dir:
            shutil.rmtree(work)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    args = arguments(__doc__)

    def results(work, export):
        for index, model in enumerate(MODELS):
            ok, text = test_model(model, index, args, os.path.join(work, model.name), export)
            yield (f"{model.name} ({'-'.join(map(str, model.sizes))}, batch {model.batch}, {model.inputs} inputs, "
                   f"{model.output}, bias {''.join('y' if b else 'n' for b in model.bias)})"), ok, text

    return run_all(args, "random-mlp-", results)

if __name__ == "__main__":
    sys.exit(main())
