"""tpusim from Python: the compiler and the runtime of the simulated TPU in process, over
libtpusim.so (cffi), tpusim.jit for JAX functions, tpusim.sweep over device configurations on
Dask, and tpusim.plot's pictures (imported on its own: it needs matplotlib). See
docs/python.md."""
from ._jax import jit
from ._sweep import Gemm, sweep
from .compiler import Package, compile
from .errors import (ArgumentError, CompileError, DeviceError, Error, LibraryError, MismatchError,
                     RunError)
from .report import Report
from .runtime import Runtime, Tensor


__all__ = ["ArgumentError", "CompileError", "DeviceError", "Error", "Gemm", "LibraryError",
           "MismatchError", "Package", "Report", "RunError", "Runtime", "Tensor", "compile",
           "jit", "sweep"]
__version__ = "0.1.0"
