"""tpusim from Python: the compiler and the runtime of the simulated TPU in process, over
libtpusim.so (cffi), and tpusim.jit for JAX functions. See docs/python.md."""
from ._jax import jit
from .compiler import Package, compile
from .errors import (ArgumentError, CompileError, DeviceError, Error, LibraryError, MismatchError,
                     RunError, UnsupportedError)
from .report import Report
from .runtime import Runtime, Tensor


__all__ = ["ArgumentError", "CompileError", "DeviceError", "Error", "LibraryError",
           "MismatchError", "Package", "Report", "RunError", "Runtime", "Tensor",
           "UnsupportedError", "compile", "jit"]
__version__ = "0.1.0"
