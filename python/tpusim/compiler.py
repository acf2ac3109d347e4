"""The compiler in process: HLO or StableHLO text and weights as numpy arrays in, a package out
(compiler/tpuc.h's tpuc_compile, package/tpub.h's tpub_package)."""
import numpy as np

from ._lib import ABI, HloArray, ffi, lib
from .errors import ArgumentError, CompileError

PRECISIONS = {"int8": "TPUC_INT8", "bf16": "TPUC_BF16"}  # tpuc_precision's names


class Package:
    """A compiled package, held in memory: `report` is the compiler's report (what runs on the
    device and what on the host, each operation's precision, the quantization chosen); `save`
    writes it as a .tpub file for `tpusim run`; `tpusim.Runtime(package, ...)` opens it on a
    simulated device."""

    def __init__(self, name):
        self.name = name
        self.ptr = ffi.gc(ffi.new("tpub_package *"), lib.tpub_free)

    @property
    def report(self):
        return ffi.string(self.ptr.report).decode()

    @property
    def array_n(self):
        return self.ptr.array_n

    def save(self, path):
        err = ffi.new("hlo_error *")
        if lib.tpub_save(self.ptr, str(path).encode(), err):
            raise ArgumentError(f"{path}: {ffi.string(err.msg).decode()}")


def compile(text, *, weights=(), calibrate=(), array=16, precision="int8", name="model",
            allow_nonfinite=False):
    """Compiles HLO or StableHLO text (as JAX's lower(...).as_text() or PyTorch/XLA print it).

    weights: parameter number -> numpy array (a dict, or a sequence with None for the inputs),
    each of its parameter's dtype and shape, bound as `tpuc --weights` binds a file's tensors; the
    other parameters are the model's inputs. calibrate: one array per input (in parameter order)
    of the input's shape but any number of rows, the samples the int8 ranges are calibrated on.
    precision: how the float dots and convolutions run on the device (`tpuc --precision`):
    "int8", quantized from the calibration samples, or "bf16", bf16 operands and fp32 sums with
    no calibration (samples given are ignored, and the report says so).
    name: the model's name in messages. Raises CompileError with the compiler's located message.
    """
    if precision not in PRECISIONS:
        raise ArgumentError(f"precision={precision!r}: 'int8' or 'bf16'")
    if isinstance(text, str):
        text = text.encode()
    by_number = dict(weights) if isinstance(weights, dict) else dict(enumerate(weights))
    n = max(by_number, default=-1) + 1
    held = {k: HloArray(np.asarray(a)) for k, a in by_number.items() if a is not None}
    w = ffi.new("hlo_array *[]", [held[k].ptr if k in held else ffi.NULL for k in range(n)] or 1)
    cal = [HloArray(np.asarray(a)) for a in calibrate]
    c = ffi.new("hlo_array *[]", [a.ptr for a in cal] or 1)
    keep = [ffi.new("char[]", text), ffi.new("char[]", name.encode())]
    opts = ffi.new(
        "tpuc_options *",
        {
            "hlo_path": keep[1],
            "hlo_text": keep[0],
            "hlo_len": len(text),
            "weights": w if held else ffi.NULL,
            "n_weights": n if held else 0,
            "array_n": array,
            "calib": c,
            "n_calib": len(cal),
            "allow_nonfinite": allow_nonfinite,
            "precision": ABI[PRECISIONS[precision]],
        },
    )
    pkg = Package(name)
    err = ffi.new("hlo_error *")
    if lib.tpuc_compile(opts, pkg.ptr, err):
        raise CompileError(ffi.string(err.msg).decode(), name, err.line, err.col, text.decode())
    return pkg
