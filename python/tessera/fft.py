"""tessera.fft: distributed FFTs of whole arrays (NumPy's names and keywords). Plans are made
once per layout and type (collective) and kept by the runtime; a forward transform returns its
spectrum on the plan's output layout (transposed: no gather), and the inverse of a spectrum that
came from a forward transform runs back to the original layout."""
import numpy as np

from . import _dtypes, _runtime, _tessera
from ._array import ndarray
from ._errors import DeviceMismatch, DtypeMismatch, LayoutMismatch
from ._functions import asarray

_C2C, _R2C = 0, 1
_FORWARD, _BACKWARD = -1, 1
_NORMS = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return _NORMS[norm]


def _whole_transform(a, s, axes, name):
    if s is not None and tuple(s) != tuple(a.shape):
        raise NotImplementedError(f"tessera.fft.{name}: s= (padding or cropping) is not in tessera yet")
    if axes is not None and sorted(int(x) % a.ndim for x in axes) != list(range(a.ndim)):
        raise NotImplementedError(f"tessera.fft.{name} transforms every axis (axes=None) so far")
    if a.ndim > 3:
        raise ValueError(f"tessera.fft.{name}: distributed FFTs are 1-3-D, the array is {a.ndim}-D")


def _plan(rt, x, kind, same_layout=False):
    """The plan for arrays of x's layout and dtype: (plan, its input layout, its output layout,
    x's layout key). Inverse transforms return to x's own layout handle and key."""
    key = (x._layout, x.dtype.str, kind, same_layout)
    if key not in rt._plans:
        p = _tessera.fft_plan_create(x._layout, _dtypes.code(x.dtype), kind, 0, same_layout)
        lin, lout = _tessera.fft_plan_layouts(p)
        rt._plans[key] = (p, lin, lout, x._key)
    return rt._plans[key]


def _plan_with_output(rt, layout, kind):
    """(plan, source layout, source key, source dtype) of the cached plan whose output layout is
    `layout` (an earlier forward transform's), or None."""
    for (lay, dstr, k, same), (p, lin, lout, src_key) in rt._plans.items():
        if k == kind and lout == layout:
            return p, lay, src_key, np.dtype(dstr)
    return None


def _transform(rt, p, direction, x, norm, layout, dtype, key, out=None):
    """Runs plan p on x: into a new array (the plan's own result, no copy), or into `out`
    (NumPy's out=, where it fits exactly; one copy more)."""
    if out is None:
        h = _tessera.fft_execute_new(p, direction, x._handle(), _norm(norm))
        return ndarray(rt, key, dtype, x.device, layout=layout, handle=h)
    if not isinstance(out, ndarray):
        raise TypeError(f"out must be a tessera.ndarray, not {type(out).__name__}")
    if out.dtype != dtype:
        raise DtypeMismatch(f"out is {out.dtype}, the transform gives {np.dtype(dtype)} (rank {rt.rank})")
    if out.device != x.device:
        raise DeviceMismatch(f"out is on {out.device}, the transform on {x.device} (rank {rt.rank})")
    if out._layout != layout and not _tessera.layouts_equal(out._layout, layout):
        raise LayoutMismatch(f"out (shape {out.shape}, split {out.split}) does not lie like the transform's result "
                             f"(rank {rt.rank}): pass an earlier result of the same transform")
    _tessera.fft_execute(p, direction, x._handle(), out._handle(), _norm(norm))
    return out


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-D discrete Fourier transform (complex result; real input is transformed as complex
    of its precision)."""
    a = asarray(a)
    _whole_transform(a, s, axes, "fftn")
    x = a if a.dtype.kind == "c" else a.astype(_dtypes.complex_of(a.dtype))
    rt = a._rt
    # A 1-D transform over several ranks comes out in the four-step's transposed order unless its
    # output keeps the input's layout (natural order, what NumPy users expect).
    p, _, lout, _ = _plan(rt, x, _C2C, same_layout=x.ndim == 1)
    return _transform(rt, p, _FORWARD, x, norm, lout, x.dtype, x._key if x.ndim == 1 else ("fft", lout), out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    a = asarray(a)
    _whole_transform(a, s, axes, "ifftn")
    x = a if a.dtype.kind == "c" else a.astype(_dtypes.complex_of(a.dtype))
    rt = a._rt
    found = _plan_with_output(rt, x._layout, _C2C)
    if found is not None and found[3] == x.dtype:
        p, layout, key, _ = found
    else:  # a spectrum of tessera's making on another layout: a plan that keeps x's layout
        p, _, _, _ = _plan(rt, x, _C2C, same_layout=True)
        layout, key = x._layout, x._key
    return _transform(rt, p, _BACKWARD, x, norm, layout, x.dtype, key, out)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-D transform of a real array: the last axis holds n//2+1 frequencies."""
    a = asarray(a)
    _whole_transform(a, s, axes, "rfftn")
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    rt = a._rt
    p, _, lout, _ = _plan(rt, a, _R2C)
    return _transform(rt, p, _FORWARD, a, norm, lout, _dtypes.complex_of(a.dtype), ("fft", lout), out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of rfftn, for a spectrum rfftn returned (its plan knows the real shape)."""
    a = asarray(a)
    rt = a._rt
    found = _plan_with_output(rt, a._layout, _R2C)
    if found is None:
        raise NotImplementedError("tessera.fft.irfftn inverts a spectrum that tessera.fft.rfftn made "
                                  "(the real shape and layout come from its plan)")
    p, layout, key, real = found
    info = _tessera.layout_info(layout)
    if s is not None and tuple(s) != tuple(info["shape"]):
        raise NotImplementedError("tessera.fft.irfftn: s= other than the forward transform's shape")
    return _transform(rt, p, _BACKWARD, a, norm, layout, real, key, out)


def fft(a, n=None, axis=-1, norm=None):
    """The 1-D transform of a 1-D array."""
    a = asarray(a)
    if a.ndim != 1 or n not in (None, a.shape[0]):
        raise NotImplementedError("tessera.fft.fft transforms whole 1-D arrays (n=None); use fftn for n-D")
    return fftn(a, norm=norm)


def ifft(a, n=None, axis=-1, norm=None):
    a = asarray(a)
    if a.ndim != 1 or n not in (None, a.shape[0]):
        raise NotImplementedError("tessera.fft.ifft transforms whole 1-D arrays (n=None); use ifftn for n-D")
    return ifftn(a, norm=norm)


def fftfreq(n, d=1.0, split=None, device=None):
    """NumPy's fftfreq as a distributed 1-D array."""
    return asarray(np.fft.fftfreq(n, d), split=split, device=device)


def rfftfreq(n, d=1.0, split=None, device=None):
    return asarray(np.fft.rfftfreq(n, d), split=split, device=device)
