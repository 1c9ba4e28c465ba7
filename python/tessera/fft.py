"""tessera.fft: distributed FFTs (NumPy's names and keywords). Over every axis of a 1-3-D array,
a distributed plan, made once per layout and type (collective) and kept by the runtime: a forward
transform returns its spectrum on the plan's output layout (transposed: no gather), and the inverse
of a spectrum that came from a forward transform runs back to the original layout. Over some axes
(axes=, or a 4-D array), local transforms of the axes a layout holds whole, with redistributions
between them; s= crops or zero-pads first."""
import builtins
import operator

import numpy as np

from . import _dtypes, _runtime, _tessera
from ._array import from_handle, ndarray, normalize_axis
from ._errors import DeviceMismatch, DtypeMismatch, LayoutMismatch
from ._functions import asarray, implements, zeros

_C2C, _R2C, _C2R = 0, 1, 2
_FORWARD, _BACKWARD = -1, 1
_NORMS = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return _NORMS[norm]


def _axes_and_sizes(a, s, axes, name):
    """NumPy's reading of s= and axes=: the axes transformed (the last len(s) ones when only s is
    given) and the transform's size along each."""
    if axes is None:
        axes = list(range(a.ndim)) if s is None else list(range(a.ndim - len(s), a.ndim))
    else:
        axes = [normalize_axis(x, a.ndim) for x in axes]
    if len(set(axes)) != len(axes):
        raise NotImplementedError(f"tessera.fft.{name}: axes {axes} repeat an axis (transforming it twice)")
    if not axes:
        raise ValueError(f"tessera.fft.{name}: no axes to transform")
    if s is None:
        return axes, [a.shape[x] for x in axes]
    s = [operator.index(n) for n in s]
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    for n in s:
        if n < 1:
            raise ValueError(f"Invalid number of data points ({n}) specified")
    return axes, s


def _fit(a, axes, sizes):
    """a cropped or zero-padded (at the end) along `axes` to `sizes`, as NumPy's s= does."""
    want = list(a.shape)
    for x, n in zip(axes, sizes):
        want[x] = n
    if tuple(want) == a.shape:
        return a
    if a._key is None or a._key[0] != "block":
        a = a.resplit(a.split)
    common = tuple(slice(0, min(n, m)) for n, m in zip(a.shape, want))
    src = a[common] if any(m < n for m, n in zip(want, a.shape)) else a
    if tuple(want) == src.shape:
        return src
    split = src.split if not isinstance(src.split, tuple) else (src.split[0] if src.split else None)
    out = zeros(tuple(want), dtype=a.dtype, split=split, device=a.device)
    out[common] = src
    return out


def _split_over_ranks(x, axis):
    return x._rt.size > 1 and _tessera.layout_split(x._layout)[axis] >= 0


def _resplit_for(x, keep_whole, prefer_not):
    """x redistributed so that the axes `keep_whole` are held whole: split along the longest axis
    outside `prefer_not` (else outside keep_whole)."""
    for pool in ([d for d in range(x.ndim) if d not in prefer_not], [d for d in range(x.ndim) if d not in keep_whole]):
        if pool:
            return x.resplit(builtins.max(pool, key=lambda d: x.shape[d]))
    return x.resplit(None)  # nothing else to split: every rank transforms the whole array


def _along(x, kind, direction, axes, norm, n=0):
    """One local transform along `axes` (held whole) of every rank's block (no communication):
    x's blocks, the last axis n//2+1 (R2C) or n (C2R) long."""
    h = _tessera.fft_along(x._handle(), kind, direction, [int(d) for d in axes], int(n), _norm(norm))
    if x._key is None or x._key[0] != "block":
        return from_handle(x._rt, h, x)
    shape = list(x.shape)
    if kind != _C2C:
        shape[axes[-1]] = n if kind == _C2R else x.shape[axes[-1]] // 2 + 1
    dtype = {_C2C: x.dtype, _R2C: _dtypes.complex_of(x.dtype), _C2R: np.empty(0, x.dtype).real.dtype}[kind]
    _, _, split, dims, _, periodic = x._key
    key = ("block", tuple(shape), split, dims, (0,) * x.ndim, periodic)
    return ndarray(x._rt, key, dtype, x.device, handle=h)


def _c2c_steps(x, axes, direction, norm):
    """C2C along `axes` in local steps: each transforms the axes the layout holds whole, then the
    array is redistributed so that the rest are."""
    remaining = list(axes)
    while remaining:
        here = [d for d in remaining if not _split_over_ranks(x, d)]
        if not here:
            x = _resplit_for(x, remaining[:-1] or remaining, remaining)
            here = [d for d in remaining if not _split_over_ranks(x, d)]
        x = _along(x, _C2C, direction, here, norm)
        remaining = [d for d in remaining if d not in here]
    return x


def _every_axis(x, axes):
    return sorted(axes) == list(range(x.ndim)) and x.ndim <= 3


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
    (NumPy's out=, where it fits exactly: the last pass writes out's memory)."""
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


def _complex(a):
    return a if a.dtype.kind == "c" else a.astype(_dtypes.complex_of(a.dtype))


@implements(np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-D discrete Fourier transform (complex result; real input is transformed as complex
    of its precision). Over every axis of a 1-3-D array: the distributed plan; over some axes (or
    a 4-D array): local transforms of the axes a layout holds whole, redistributing between them.
    s= crops or zero-pads the input first, as NumPy's."""
    a = asarray(a)
    axes, sizes = _axes_and_sizes(a, s, axes, "fftn")
    x = _complex(_fit(a, axes, sizes))
    rt = a._rt
    if not _every_axis(x, axes):
        return _into(_c2c_steps(x, axes, _FORWARD, norm), out)
    # A 1-D transform over several ranks comes out in the four-step's transposed order unless its
    # output keeps the input's layout (natural order, what NumPy users expect).
    p, _, lout, _ = _plan(rt, x, _C2C, same_layout=x.ndim == 1)
    return _transform(rt, p, _FORWARD, x, norm, lout, x.dtype, x._key if x.ndim == 1 else ("fft", lout), out)


@implements(np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None, out=None):
    a = asarray(a)
    axes, sizes = _axes_and_sizes(a, s, axes, "ifftn")
    x = _complex(_fit(a, axes, sizes))
    rt = a._rt
    if not _every_axis(x, axes):
        return _into(_c2c_steps(x, axes, _BACKWARD, norm), out)
    found = _plan_with_output(rt, x._layout, _C2C)
    if found is not None and found[3] == x.dtype:
        p, layout, key, _ = found
    else:  # a spectrum of tessera's making on another layout: a plan that keeps x's layout
        p, _, _, _ = _plan(rt, x, _C2C, same_layout=True)
        layout, key = x._layout, x._key
    return _transform(rt, p, _BACKWARD, x, norm, layout, x.dtype, key, out)


@implements(np.fft.rfftn)
def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-D transform of a real array: the last transformed axis holds n//2+1 frequencies."""
    a = asarray(a)
    if a.dtype.kind == "c":
        raise TypeError(f"tessera.fft.rfftn transforms real arrays, not {a.dtype}")
    axes, sizes = _axes_and_sizes(a, s, axes, "rfftn")
    x = _fit(a if a.dtype.kind == "f" else a.astype(np.float64), axes, sizes)
    rt = a._rt
    if not (_every_axis(x, axes) and axes[-1] == x.ndim - 1):
        last = axes[-1]
        if _split_over_ranks(x, last):
            x = _resplit_for(x, [last], axes)
        here = [d for d in axes[:-1] if not _split_over_ranks(x, d)] + [last]
        y = _along(x, _R2C, _FORWARD, here, norm, x.shape[last])
        return _into(_c2c_steps(y, [d for d in axes if d not in here], _FORWARD, norm), out)
    p, _, lout, _ = _plan(rt, x, _R2C)
    return _transform(rt, p, _FORWARD, x, norm, lout, _dtypes.complex_of(x.dtype), ("fft", lout), out)


@implements(np.fft.irfftn)
def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of rfftn. The real length along the last transformed axis is s[-1], else
    2*(m-1) for m values there, as NumPy's; the inverse of a spectrum rfftn made takes its plan
    (which knows an odd length)."""
    a = asarray(a)
    rt = a._rt
    found = _plan_with_output(rt, a._layout, _R2C) if a.dtype.kind == "c" else None
    if found is not None and (axes is None or tuple(int(x) for x in axes) == tuple(range(a.ndim))):
        p, layout, key, real = found
        info = _tessera.layout_info(layout)
        if s is None or tuple(s) == tuple(info["shape"]):
            return _transform(rt, p, _BACKWARD, a, norm, layout, real, key, out)
    axes, sizes = _axes_and_sizes(a, s, axes, "irfftn")
    last = axes[-1]
    n = sizes[-1] if s is not None else 2 * (a.shape[last] - 1)
    if n < 1:
        raise ValueError(f"Invalid number of data points ({n}) specified")
    x = _fit(_complex(a), axes, sizes[:-1] + [n // 2 + 1])
    x = _c2c_steps(x, axes[:-1], _BACKWARD, norm)
    if _split_over_ranks(x, last):
        x = _resplit_for(x, [last], axes)
    return _into(_along(x, _C2R, _BACKWARD, [last], norm, n), out)


def _into(result, out):
    """result, or written into `out` (NumPy's out=: the same shape and dtype)."""
    if out is None:
        return result
    if not isinstance(out, ndarray):
        raise TypeError(f"out must be a tessera.ndarray, not {type(out).__name__}")
    if out.dtype != result.dtype or out.shape != result.shape:
        raise DtypeMismatch(f"out is {out.dtype} {out.shape}, the transform gives {result.dtype} {result.shape} "
                            f"(rank {result._rt.rank})")
    if out.device != result.device:
        raise DeviceMismatch(f"out is on {out.device}, the transform on {result.device} (rank {result._rt.rank})")
    _tessera.redistribute(result._handle(), out._handle())
    return out


def _one_axis(n, axis):
    return (None if n is None else [n]), [axis]


@implements(np.fft.fft)
def fft(a, n=None, axis=-1, norm=None):
    """The 1-D transform along `axis` (of length n: cropped or zero-padded)."""
    return fftn(a, *_one_axis(n, axis), norm=norm)


@implements(np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None):
    return ifftn(a, *_one_axis(n, axis), norm=norm)


@implements(np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None):
    return rfftn(a, *_one_axis(n, axis), norm=norm)


@implements(np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None):
    return irfftn(a, *_one_axis(n, axis), norm=norm)


@implements(np.fft.fft2)
def fft2(a, s=None, axes=(-2, -1), norm=None):
    return fftn(a, s, axes, norm)


@implements(np.fft.ifft2)
def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return ifftn(a, s, axes, norm)


@implements(np.fft.rfft2)
def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return rfftn(a, s, axes, norm)


@implements(np.fft.irfft2)
def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return irfftn(a, s, axes, norm)


_INVERSE_LAPLACIAN, _LAPLACIAN = 1, 2


def _spectral(a, kind, lengths, name):
    """The plan's round trip with a spectral factor (tessera_fft_apply_spectral) of a 1-3-D array,
    on its own layout."""
    a = asarray(a)
    if not 1 <= a.ndim <= 3:
        raise ValueError(f"tessera.fft.{name}: 1-3-D arrays, not {a.ndim}-D")
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    sides = [] if lengths is None else [float(x) for x in lengths]
    if lengths is not None and len(sides) != a.ndim:
        raise ValueError(f"tessera.fft.{name}: {len(sides)} lengths for a {a.ndim}-D array")
    complex_input = a.dtype.kind == "c"
    p, _, _, _ = _plan(a._rt, a, _C2C if complex_input else _R2C, same_layout=complex_input and a.ndim == 1)
    h = _tessera.fft_apply_spectral(p, a._handle(), kind, sides)
    return ndarray(a._rt, a._key, a.dtype, a.device, layout=a._layout, handle=h)


def inverse_laplacian(a, lengths=None):
    """The u of zero mean with lap(u) = a - mean(a) on the periodic box of sides `lengths` (one per
    axis, default 2*pi): irfftn(rfftn(a) * -1/|k|^2) with 0 at k = 0, k the angular wavenumbers
    (fftn/ifftn for complex a), in one call, on a's layout. On one GPU a 3-D real array whose first
    axis is 256, 512 or 1024 takes three passes over memory (docs/fft.md)."""
    return _spectral(a, _INVERSE_LAPLACIAN, lengths, "inverse_laplacian")


def laplacian(a, lengths=None):
    """The spectral Laplacian of a periodic array: irfftn(rfftn(a) * -|k|^2) (fftn/ifftn for
    complex a), as inverse_laplacian."""
    return _spectral(a, _LAPLACIAN, lengths, "laplacian")


def fftfreq(n, d=1.0, split=None, device=None):
    """NumPy's fftfreq as a distributed 1-D array."""
    return asarray(np.fft.fftfreq(n, d), split=split, device=device)


def rfftfreq(n, d=1.0, split=None, device=None):
    return asarray(np.fft.rfftfreq(n, d), split=split, device=device)
