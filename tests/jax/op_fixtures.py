#!/usr/bin/env python3
"""Write tests/hlo/ops/fixtures.txt: what XLA (through jax.lax on the CPU) computes for every
element-wise op on every element type it applies to, on edge values (NaN, +-inf, +-0,
subnormals, the largest values, integer extremes, shift amounts past the width), for
tests/hlo/test_hlo_ops.cpp to compare the evaluator with.

One case per line, tab-separated:
  op  attributes  result-type  operand-types(,)  operand 0 ... operand n-1  expected
where op and attributes are HLO text (`compare` with `, direction=LT`), each operand and the
expected result are space-separated bit patterns in hex (pred 0/1), and an operand of one value
where the others have more is a scalar (clamp's bounds). Lines starting with '#' are comments.
Ops jax.lax does not offer (power on integers, compare's type=TOTALORDER) run as one-op
StableHLO modules compiled by jax's XLA CPU client; the others through jax.jit of the jax.lax op.

--check FILE regenerates into a temporary file and exits 1 when it differs from FILE (exit 77
when jax cannot be imported). Deterministic: same jax version, same file.
"""
import argparse
import itertools
import os
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax starts: no probing for accelerators
try:
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np
    from jax import lax
    from jax.extend import backend
except ImportError as e:
    MISSING = e
else:
    MISSING = None

TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
         "f64"]
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]


def dtype(t):
    return {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
            "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
            "f16": np.float16, "bf16": jnp.bfloat16, "f32": np.float32, "f64": np.float64}[t]


def bits(t):
    return {"pred": 8, "f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(t) or int(t[1:])


def hexes(t, a):
    a = np.asarray(a).reshape(-1)
    if t == "pred":
        return " ".join("1" if v else "0" for v in a)
    u = a.view({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits(t)])
    return " ".join(format(int(v), "x") for v in u)


def values(t):
    """Edge values of type t."""
    if t == "pred":
        return np.array([False, True], dtype=np.bool_)
    if t in INTS:
        info = np.iinfo(dtype(t))
        vs = [0, 1, -1, 2, 3, -3, 7, -8, 31, 32, 63, 64, 100, info.min, info.max, info.min + 1,
              info.max - 1, info.max // 2 + 1]
        return np.array([v % (1 << bits(t)) if t[0] == "u" else v for v in vs],
                        dtype=object).astype(dtype(t))
    f = np.float32 if t == "bf16" else dtype(t)
    fi = ml_dtypes.finfo(dtype(t))
    vs = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 0.1, -7.25, 100.0, 1e4, -3e4,
          float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
          -float(fi.smallest_subnormal), float(fi.tiny) * 3.5, np.inf, -np.inf, np.nan]
    if t in ("f32", "f64"):
        vs += [1e30, -1e-30, 88.5, -103.0, 1e9 + 0.5]
    if t == "f64":
        vs += [1e300, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1.0 + 2.0 ** -52]
    return np.array(vs, dtype=f).astype(dtype(t))


def pairs(t):
    """Two operands: every pair of a subset of the edge values."""
    v = values(t)
    if t in INTS:  # 0 1 -1 2 -3 -8 32 64 min max
        sub = v[[0, 1, 2, 3, 5, 7, 9, 11, 13, 14]]
    elif t == "pred":
        sub = v
    else:
        sub = v[[0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 15, 18, 19, 21, 22, 23]]
    a, b = zip(*itertools.product(sub, sub))
    return np.array(a, dtype=v.dtype), np.array(b, dtype=v.dtype)


MLIR = {"pred": "i1", "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}


def raw(op, t, rt, *xs):
    """One StableHLO op (its text after the operands) on arrays of type t, compiled by XLA."""
    mt = MLIR.get(t) or ("ui" if t[0] == "u" else "i") + t[1:]
    mr = MLIR.get(rt) or ("ui" if rt[0] == "u" else "i") + rt[1:]
    n = xs[0].size
    args = ", ".join(f"%a{i}: tensor<{n}x{mt}>" for i in range(len(xs)))
    ops = ", ".join(f"%a{i}" for i in range(len(xs)))
    text = (f"module @m {{\n  func.func public @main({args}) -> tensor<{n}x{mr}> {{\n"
            f"    %0 = {op.format(ops=ops, n=n, t=mt, r=mr)}\n"
            f"    return %0 : tensor<{n}x{mr}>\n  }}\n}}\n")
    ex = backend.get_backend().compile_and_load(text, jax.devices()[:1])
    return np.asarray(ex.execute([jax.device_put(x) for x in xs])[0])


def cases():
    jax.config.update("jax_enable_x64", True)
    rm = lax.RoundingMethod
    float_unary = {
        "abs": lax.abs, "sign": lax.sign, "floor": lax.floor, "ceil": lax.ceil,
        "round-nearest-afz": lambda x: lax.round(x, rm.AWAY_FROM_ZERO),
        "round-nearest-even": lambda x: lax.round(x, rm.TO_NEAREST_EVEN),
        "exponential": lax.exp, "exponential-minus-one": lax.expm1, "log": lax.log,
        "log-plus-one": lax.log1p, "logistic": lax.logistic, "tanh": lax.tanh, "sqrt": lax.sqrt,
        "rsqrt": lax.rsqrt, "cbrt": lax.cbrt, "erf": lax.erf, "sine": lax.sin,
        "cosine": lax.cos, "tan": lax.tan, "negate": lax.neg,
    }
    int_unary = {"abs": lax.abs, "sign": lax.sign, "negate": lax.neg, "not": lax.bitwise_not,
                 "popcnt": lax.population_count, "count-leading-zeros": lax.clz}
    arith = {"add": lax.add, "subtract": lax.sub, "multiply": lax.mul, "divide": lax.div,
             "remainder": lax.rem, "power": lax.pow, "maximum": lax.max, "minimum": lax.min}
    bitwise = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor}
    shifts = {"shift-left": lax.shift_left,
              "shift-right-arithmetic": lax.shift_right_arithmetic,
              "shift-right-logical": lax.shift_right_logical}
    dirs = {"EQ": lax.eq, "NE": lax.ne, "LT": lax.lt, "LE": lax.le, "GT": lax.gt, "GE": lax.ge}

    def run(f, *xs):
        return np.asarray(jax.jit(f)(*[jnp.asarray(x) for x in xs]))

    for t in FLOATS:
        # The edge values and a spread of ordinary ones, for the functions' ulp errors.
        spread = np.array([s * 1.37 ** k for k in range(-30, 31, 3) for s in (1, -1)])
        x = np.concatenate([values(t), spread.astype(np.float32).astype(dtype(t))])
        for op, f in float_unary.items():
            yield op, "", t, [t], [x], run(f, x)
        yield "is-finite", "", "pred", [t], [x], run(lax.is_finite, x)
        a, b = pairs(t)
        for op, f in {**arith, "atan2": lax.atan2}.items():
            yield op, "", t, [t, t], [a, b], run(f, a, b)
    for t in INTS:
        x = values(t)
        for op, f in int_unary.items():
            if op != "abs" or t[0] == "s":  # StableHLO's abs takes signed types only
                yield op, "", t, [t], [x], run(f, x)
        a, b = pairs(t)
        for op, f in {**arith, **bitwise, **shifts}.items():
            r = (raw("stablehlo.power {ops} : tensor<{n}x{t}>", t, t, a, b) if op == "power"
                 else run(f, a, b))
            yield op, "", t, [t, t], [a, b], r
    p = values("pred")
    a, b = pairs("pred")
    yield "not", "", "pred", ["pred"], [p], run(lax.bitwise_not, p)
    for op, f in bitwise.items():
        yield op, "", "pred", ["pred", "pred"], [a, b], run(f, a, b)
    for t in TYPES:
        a, b = pairs(t)
        for d, f in dirs.items():
            yield "compare", f", direction={d}", "pred", [t, t], [a, b], run(f, a, b)
        if t in FLOATS:
            for d in dirs:
                yield ("compare", f", direction={d}, type=TOTALORDER", "pred", [t, t], [a, b],
                       raw(f"stablehlo.compare {d}, {{ops}}, TOTALORDER : (tensor<{{n}}x{{t}}>, "
                           "tensor<{n}x{t}>) -> tensor<{n}x{r}>", t, "pred", a, b))
        pr = (np.arange(a.size) % 3 == 0)
        yield "select", "", t, ["pred", t, t], [pr, a, b], run(lax.select, pr, a, b)
    for t in INTS + FLOATS:
        x = values(t)
        lo, hi = values(t)[[3, 6]] if t in INTS else values(t)[[3, 9]]
        lo, hi = (lo, hi) if t[0] != "u" else (values(t)[1], values(t)[6])
        lo_a, hi_a = np.full_like(x, lo), np.full_like(x, hi)
        hi_a[-1] = lo  # a bound above the other: XLA's order of max then min decides
        yield ("clamp", "", t, [t, t, t], [np.array([lo], dtype=x.dtype), x,
                                           np.array([hi], dtype=x.dtype)],
               run(lambda l, v, h: lax.clamp(l.reshape(()), v, h.reshape(())),
                   np.array([lo], dtype=x.dtype), x, np.array([hi], dtype=x.dtype)))
        yield "clamp", "", t, [t, t, t], [lo_a, x, hi_a], run(lax.clamp, lo_a, x, hi_a)
    for src in TYPES:
        x = values(src)
        if src in FLOATS:
            extra = [1e10, -1e10, 255.5, 256.0, -128.5, -129.0, 65535.5, 65536.0, 2.0 ** 31,
                     -2.0 ** 31 - 1, 2.0 ** 32, 3.0e38, 1.0 + 2.0 ** -9, 1.0 + 2.0 ** -8]
            if src == "f64":
                extra += [2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e20, 1.0 + 2.0 ** -24,
                          1.0 + 2.0 ** -24 + 2.0 ** -40, 65520.0, 65519.99,
                          1.0 + 2.0 ** -8 + 2.0 ** -30, 1.0 + 2.0 ** -11 + 2.0 ** -40]
            with np.errstate(over="ignore"):  # beyond the type's range: inf, as XLA gives
                x = np.concatenate([x, np.array(extra, dtype=np.float64).astype(x.dtype)])
        for dst in TYPES:
            if dst != src:
                yield ("convert", "", dst, [src], [x],
                       run(lambda v, d=dtype(dst): lax.convert_element_type(v, d), x))
            if dst != src and "pred" not in (src, dst) and bits(src) == bits(dst):
                yield ("bitcast-convert", "", dst, [src], [x],
                       run(lambda v, d=dtype(dst): lax.bitcast_convert_type(v, d), x))


def write(path):
    with open(path, "w") as f:
        f.write(f"# generated by tests/jax/op_fixtures.py with jax {jax.__version__}; do not edit\n")
        for op, attrs, rt, its, ins, out in cases():
            fields = [op, attrs, rt, ",".join(its)]
            fields += [hexes(t, v) for t, v in zip(its, ins)]
            fields.append(hexes(rt, out))
            f.write("\t".join(fields) + "\n")


def main():
    if MISSING:
        print(f"SKIP: jax cannot be imported ({MISSING})")
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "hlo", "ops", "fixtures.txt")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=default)
    parser.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    if not args.check:
        write(args.out)
        return 0
    with tempfile.TemporaryDirectory() as d:
        fresh = os.path.join(d, "fixtures.txt")
        write(fresh)
        with open(fresh) as a, open(args.check) as b:
            new, old = a.read().splitlines(), b.read().splitlines()
    diff = [f"line {i + 1}:\n  committed {o!r}\n  jax now   {n!r}"
            for i, (n, o) in enumerate(itertools.zip_longest(new, old)) if n != o]
    for line in diff[:10]:
        print(line)
    print(f"{len(diff)} lines differ" if diff else f"{len(new)} lines agree")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
