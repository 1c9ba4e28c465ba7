"""Element types: NumPy dtypes and the C API's codes (tessera_dtype)."""
import numpy as np

# tessera_dtype values (tessera.h).
CODES = {
    np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.complex64): 2, np.dtype(np.complex128): 3,
    np.dtype(np.int32): 4, np.dtype(np.int64): 5, np.dtype(np.bool_): 6,
}
NAMES = "bool, int32, int64, float32, float64, complex64, complex128"


def dtype_of(dtype, default=np.float64):
    """The NumPy dtype of `dtype` (anything np.dtype takes); TypeError for one Tessera lacks."""
    if dtype is None:
        dtype = default
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"data type {dtype!r} not understood (tessera has {NAMES})") from e
    if d not in CODES:
        raise TypeError(f"tessera has no {d} arrays (its element types: {NAMES})")
    return d


def code(d):
    return CODES[np.dtype(d)]


def from_code(c):
    """The NumPy dtype of a tessera_dtype code."""
    return next(d for d, k in CODES.items() if k == c)


def real_of(d):
    return np.dtype(np.float32) if np.dtype(d) in (np.complex64, np.float32) else np.dtype(np.float64)


def complex_of(d):
    return np.dtype(np.complex64) if np.dtype(d) in (np.complex64, np.float32) else np.dtype(np.complex128)
