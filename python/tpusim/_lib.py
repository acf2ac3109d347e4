"""libtpusim.so, opened once with cffi in ABI mode, and what the other modules share to call it:
the constants of its table, numpy dtypes as HLO element types, numpy arrays as hlo_arrays, and the
runtime's statuses as exceptions.

Where the library is found, first match:
  1. $TPUSIM_LIBRARY, the path of the library;
  2. libtpusim.so beside this file (a copy placed into an installed package);
  3. the build tree whose venv runs Python: <build>/venv is sys.prefix, the library is
     <build>/lib/libtpusim.so (what `make` installs the package for).
"""
import os
import sys
from pathlib import Path

import cffi
import numpy as np

from ._cdef import CDEF
from .errors import ArgumentError, DeviceError, LibraryError, MismatchError, RunError

LIBRARY_NAME = "libtpusim.so"

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    env = os.environ.get("TPUSIM_LIBRARY")
    if env:
        return [Path(env)]
    return [Path(__file__).with_name(LIBRARY_NAME), Path(sys.prefix).parent / "lib" / LIBRARY_NAME]


def _open():
    tried = _candidates()
    for path in tried:
        if path.is_file():
            try:
                return ffi.dlopen(str(path)), path
            except OSError as e:
                raise LibraryError(f"{path}: {e}") from e
    raise LibraryError(
        f"{LIBRARY_NAME} not found (tried {', '.join(map(str, tried))}): build it with `make` "
        "(build/lib), or set TPUSIM_LIBRARY to its path"
    )


lib, path = _open()


def _abi():
    n = ffi.new("size_t *")
    table = lib.tpusim_abi(n)
    return {ffi.string(table[i].name).decode(): table[i].value for i in range(n[0])}


ABI = _abi()


def _check_layout():
    """Every struct of the cdef has its size in the table, and every size and offset the table
    gives is the cdef's."""
    bad = []
    for name, value in ABI.items():
        struct, _, field = name.partition(".")
        if name[0].isupper():
            continue  # a constant
        mine = ffi.offsetof(struct, field) if field else ffi.sizeof(struct)
        if mine != value:
            bad.append(f"{name}: {mine} in _cdef.py, {value} in the library")
    for struct in ffi.list_types()[0]:
        if ffi.typeof(struct).kind == "struct" and struct not in ABI and struct != "tpurt":
            bad.append(f"{struct}: no size in the library's table (python/abi.c)")
    if bad:
        raise LibraryError(f"{path} does not match python/tpusim/_cdef.py: " + "; ".join(bad))


_check_layout()

# numpy dtype <-> HLO element type (the evaluator's types; bfloat16 is ml_dtypes', which JAX
# brings).
_DTYPES = {
    "bool": "HLO_PRED",
    "int8": "HLO_S8",
    "int16": "HLO_S16",
    "int32": "HLO_S32",
    "int64": "HLO_S64",
    "uint8": "HLO_U8",
    "uint16": "HLO_U16",
    "uint32": "HLO_U32",
    "uint64": "HLO_U64",
    "float16": "HLO_F16",
    "bfloat16": "HLO_BF16",
    "float32": "HLO_F32",
    "float64": "HLO_F64",
}
_TYPES = {ABI[t]: d for d, t in _DTYPES.items()}


def hlo_type(dtype):
    """The HLO element type of a numpy dtype; None if there is none."""
    name = _DTYPES.get(np.dtype(dtype).name)
    return ABI[name] if name else None


def numpy_dtype(t):
    """The numpy dtype of HLO element type t, one of a model input's or output's (tpub_sig_type:
    f32, bf16, f16, s8, u8, s32, s64); bfloat16 is ml_dtypes'."""
    if _TYPES[t] == "bfloat16":
        import ml_dtypes  # only then: numpy has no bfloat16 of its own

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_TYPES[t])


class HloArray:
    """A numpy array copied into a new hlo_array (freed with this object)."""

    def __init__(self, a):
        a = np.ascontiguousarray(a)
        t = hlo_type(a.dtype)
        if t is None:
            raise ArgumentError(f"an array of {a.dtype}: no HLO element type is one")
        dims = ffi.new("int64_t[]", list(a.shape) or [0])
        ptr = lib.hlo_array_new(t, a.ndim, dims)
        if ptr == ffi.NULL:
            raise MemoryError(f"hlo_array of {a.dtype}{list(a.shape)}")
        self.ptr = ffi.gc(ptr, lib.hlo_array_free)
        ffi.memmove(ptr.data, a, a.nbytes)


def status_name(st):
    return ffi.string(lib.tpurt_status_name(st)).decode()


def raise_status(st, message):
    """Raises the exception of runtime status st (not TPURT_OK) with message."""
    name = status_name(st)
    if st == ABI["TPURT_E_MISMATCH"]:
        cls = MismatchError
    elif st in (ABI[s] for s in ("TPURT_E_DEVICE", "TPURT_E_FIRMWARE", "TPURT_E_CORE",
                                  "TPURT_E_TIMEOUT")):
        cls = DeviceError
    else:
        cls = RunError
    raise cls(message or name, name)
