"""Tessera for Python: distributed n-d arrays over MPI ranks (mpi4py) and GPUs, with NumPy
semantics. Start with tessera.init() (or let the first call do it), run under mpirun:

    import numpy as np, tessera as ts
    ts.init()                                        # mpi4py COMM_WORLD, a GPU per rank where there are GPUs
    u = ts.random.uniform(size=(256, 256, 256), split=0)
    v = 2.0 * u + np.sin(u)                          # lazy; one fused kernel when materialized
    print(float(np.sum(v)))                          # stays distributed (__array_function__)
    U = ts.fft.rfftn(v)                              # distributed FFT
"""
import ctypes as _ctypes

import numpy as _np


def _share_the_cxx_runtime():
    """Puts libstdc++ in the process's global symbol scope before the compiled core loads. NumPy 2
    (C++ inside) loads libstdc++ first, privately; a Tessera library that holds its own copies of
    libstdc++'s template statics (the locale facets' ids) would then bind to those instead of the
    ones libstdc++ uses, and its streams would find no facets. Global first, every library binds to
    libstdc++'s own."""
    try:
        _ctypes.CDLL("libstdc++.so.6", mode=_ctypes.RTLD_GLOBAL)
    except OSError:
        pass  # not a GNU runtime: nothing to share


_share_the_cxx_runtime()

from . import _errors  # noqa: E402  (after the runtime is shared)
from ._errors import (Busy, BackendUnavailable,  # noqa: E402
                      CommError, CompileError, ConsistencyError, CudaError,
                      DeviceMismatch, DtypeMismatch, InternalError, InvalidArgument, InvalidHandle, IoError,
                      LayoutMismatch, OutOfMemory, ShapeMismatch, TesseraError)
from ._runtime import Runtime, finalize, init, runtime
from ._array import ndarray
from ._functions import (all, any, arange, argmax, argmin, argsort, asarray, bincount, broadcast_to, compress, copy,
                         cumprod, cumsum, dot, empty, flatnonzero, from_shards, full, full_like, histogram, linspace,
                         matmul, max, mean, min, nonzero, norm, ones, ones_like, prod, put, ravel, reshape, sort, std,
                         sum, take, transpose, var, where, zeros, zeros_like)
from ._kernels import ElementwiseKernel, ReductionKernel
from . import fft, io, linalg, random
from ._tessera import version as _version

__version__ = _version()
amin, amax = min, max

# NumPy's ufuncs act on tessera arrays (lazily, fused); they are also tessera's functions.
(sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, exp, expm1, log, log1p, sqrt, absolute, negative,
 floor, ceil, conjugate, add, subtract, multiply, divide, true_divide, power, minimum, maximum, arctan2,
 equal, not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or, logical_not) = (
    _np.sin, _np.cos, _np.tan, _np.arcsin, _np.arccos, _np.arctan, _np.sinh, _np.cosh, _np.tanh, _np.exp,
    _np.expm1, _np.log, _np.log1p, _np.sqrt, _np.absolute, _np.negative, _np.floor, _np.ceil, _np.conjugate,
    _np.add, _np.subtract, _np.multiply, _np.divide, _np.true_divide, _np.power, _np.minimum, _np.maximum,
    _np.arctan2, _np.equal, _np.not_equal, _np.less, _np.less_equal, _np.greater, _np.greater_equal,
    _np.logical_and, _np.logical_or, _np.logical_not)
abs = absolute
bool_, int32, int64, float32, float64, complex64, complex128 = (
    _np.bool_, _np.int32, _np.int64, _np.float32, _np.float64, _np.complex64, _np.complex128)
