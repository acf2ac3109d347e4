#!/usr/bin/env python3
"""io/'s .npy and safetensors readers and writers against numpy, ml_dtypes and safetensors.

Every file goes through io_copy (tests/io/io_copy.c: io/'s reader, then its writer):
  - .npy: arrays of every dtype io/ reads, as np.save writes them (bfloat16 through ml_dtypes, as
    '<V2'; read back as numpy without ml_dtypes saves it, as '|V2'), come out as the same bytes and
    load back equal; '<V2' read as void16 until io_copy says bfloat16 (npy_as_bfloat16); what io/
    refuses (big-endian, float32 for bfloat16) is refused with the descr in the message;
  - safetensors: tensors of every dtype io/ reads, as safetensors.numpy.save_file writes them, come
    out as the same bytes (the reference writer's layout) and load back equal; several metadata
    keys (the reference writes them in a hash map's order: compared as a dict).

Usage: interop.py IO_COPY WORK_DIR
Prints each check and `N passed, M failed`; exits 0 when all pass, 1 on any failure, 77 (the ctest
SKIP_RETURN_CODE) when numpy, ml_dtypes or safetensors cannot be imported.
"""
import os
import subprocess
import sys

try:
    import ml_dtypes
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file
except ImportError as e:
    MISSING = e
else:
    MISSING = None

SKIP = 77


def io_copy(tool, kind, src, dst, *flags):
    """(exit code, stdout, stderr) of io_copy."""
    done = subprocess.run([tool, kind, src, dst, *flags], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def random_array(rng, dtype, shape):
    """Random values of every bit pattern (NaNs included for the floats), as dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    bits = rng.integers(0, 256, int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return bits.view(dtype).reshape(shape)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def npy_checks(tool, work, rng):
    dtypes = {"int8": np.int8, "uint8": np.uint8, "int32": np.int32, "int64": np.int64,
              "float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
    for name, dtype in dtypes.items():
        for shape in ((3, 5), (7,), ()):
            a = random_array(rng, dtype, shape)
            src, dst = os.path.join(work, f"{name}.npy"), os.path.join(work, f"{name}.out.npy")
            np.save(src, a)
            bf16 = ("--bf16",) if name == "bfloat16" else ()
            rc, out, err = io_copy(tool, "npy", src, dst, *bf16)
            back = np.load(dst) if rc == 0 else None
            if back is not None and name == "bfloat16":
                back = back.view(ml_dtypes.bfloat16)
            label = f"npy {name} {shape}"
            if rc:
                yield label, False, err
            else:
                yield label, out == name and read(dst) == read(src) and same_bits(back, a), \
                    f"read as {out}, the same bytes as np.save's: {read(dst) == read(src)}"

    # bfloat16 as '<V2' without --bf16 is raw 2-byte void, written back as numpy writes a plain void
    # array ('|V2'); that file, and the one numpy saves from np.load of a bfloat16 file, read as
    # bfloat16 when the caller says so.
    a = random_array(rng, ml_dtypes.bfloat16, (4, 3))
    src, void = os.path.join(work, "bf16.npy"), os.path.join(work, "void.npy")
    np.save(src, a)
    rc, out, err = io_copy(tool, "npy", src, void)
    yield "npy '<V2' unconverted", rc == 0 and out == "void16" and \
        np.load(void).dtype.str == "|V2" and np.load(void).tobytes() == a.tobytes(), err or out
    resaved, dst = os.path.join(work, "resaved.npy"), os.path.join(work, "resaved.out.npy")
    np.save(resaved, np.load(src))
    rc, out, err = io_copy(tool, "npy", resaved, dst, "--bf16")
    yield "npy '|V2' as bfloat16", rc == 0 and out == "bfloat16" and \
        read(dst) == read(src) and same_bits(np.load(dst).view(ml_dtypes.bfloat16), a), err or out

    for label, array, flags, want in (
            ("npy big-endian float16", np.arange(3, dtype=">f2"), (), "big-endian data ('>f2')"),
            ("npy big-endian bfloat16", a.astype(a.dtype.newbyteorder(">")), (), "big-endian data ('>V2')"),
            ("npy float32 for bfloat16", np.arange(3, dtype=np.float32), ("--bf16",),
             "dtype float32 ('<f4'), expected bfloat16 ('<V2', as ml_dtypes saves it)"),
            ("npy float8", np.zeros(2, dtype=ml_dtypes.float8_e4m3fn), (), "unsupported dtype '<V1'")):
        src, dst = os.path.join(work, "refused.npy"), os.path.join(work, "refused.out.npy")
        np.save(src, array)
        rc, _, err = io_copy(tool, "npy", src, dst, *flags)
        yield label, rc == 1 and want in err and not os.path.exists(dst), err


def st_checks(tool, work, rng):
    dtypes = (np.bool_, np.uint8, np.int8, np.int16, np.uint16, np.float16, ml_dtypes.bfloat16, np.int32,
              np.uint32, np.float32, np.float64, np.int64, np.uint64)
    shapes = ((2, 3), (5,), (), (0, 4), (1, 2, 3))
    tensors = {f"t{i}.{np.dtype(d).name}": random_array(rng, d, shapes[i % len(shapes)])
               for i, d in enumerate(dtypes)}
    src, dst = os.path.join(work, "all.safetensors"), os.path.join(work, "all.out.safetensors")
    save_file(tensors, src, metadata={"format": "np"})
    rc, _, err = io_copy(tool, "st", src, dst)
    if rc:
        yield "safetensors every dtype", False, err
        return
    back = load_file(dst)
    equal = back.keys() == tensors.keys() and all(same_bits(back[k], v) for k, v in tensors.items())
    yield "safetensors every dtype", equal and read(dst) == read(src), \
        f"loads back equal: {equal}, the same bytes as safetensors': {read(dst) == read(src)}"

    meta = {"step": "12", "epoch": "3", "note": "caf\u00e9 \"quoted\"\n"}
    save_file(tensors, src, metadata=meta)
    rc, _, err = io_copy(tool, "st", src, dst)
    got = None
    if rc == 0:
        with safe_open(dst, framework="np") as f:
            got = f.metadata()
    yield "safetensors metadata", rc == 0 and got == meta, err or str(got)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    if MISSING:
        print(f"skipped: {MISSING}")
        return SKIP
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(2024)
    passed = failed = 0
    for checks in (npy_checks, st_checks):
        for label, ok, text in checks(tool, work, rng):
            print(f"{'PASS' if ok else 'FAIL'}: {label}: {text}", flush=True)
            passed, failed = passed + bool(ok), failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
