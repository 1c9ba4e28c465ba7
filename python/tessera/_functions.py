"""Array creation, reductions and the NumPy functions tessera.ndarray answers through
__array_function__ (np.sum(a) stays distributed; a NumPy function tessera lacks raises TypeError
instead of gathering the array)."""
import builtins
import math
import operator

import numpy as np

from . import _dtypes, _expr, _runtime, _tessera
from ._array import DEVICE, HOST, Broadcast, block_key, check_shape, from_handle, ndarray, normalize_axis, _from_expr
from ._errors import DeviceMismatch, DtypeMismatch, ShapeMismatch

HANDLED = {}
_SUM, _PROD, _MIN, _MAX, _NORM2 = 0, 1, 2, 3, 4  # tessera_reduce_op


def implements(*numpy_functions):
    def register(f):
        for nf in numpy_functions:
            HANDLED[nf] = f
        return f
    return register


# ---- creation ----
def _new(shape, dtype, split, grid, halo, device, periodic=False, default=np.float64):
    rt = _runtime.runtime()
    shape = check_shape(shape)
    return ndarray(rt, block_key(rt, shape, split, grid, halo, periodic), _dtypes.dtype_of(dtype, default),
                   rt.device_kind(device))


def zeros(shape, dtype=None, split=None, grid=None, halo=0, device=None, periodic=False):
    """A zero-filled array: `split` an axis, a tuple of axes (over a grid of as many axes) or None
    (every rank holds all of it); `grid` the process grid's extents; `halo` widths per axis."""
    return _new(shape, dtype, split, grid, halo, device, periodic)


def empty(shape, dtype=None, split=None, grid=None, halo=0, device=None, periodic=False):
    """As zeros (tessera's new arrays are always zero-filled)."""
    return zeros(shape, dtype, split, grid, halo, device, periodic)


def full(shape, fill_value, dtype=None, split=None, grid=None, halo=0, device=None, periodic=False):
    if dtype is None:
        dtype = np.array(fill_value).dtype
    a = _new(shape, dtype, split, grid, halo, device, periodic)
    a[...] = fill_value
    return a


def ones(shape, dtype=None, split=None, grid=None, halo=0, device=None, periodic=False):
    return full(shape, 1, dtype if dtype is not None else np.float64, split, grid, halo, device, periodic)


def zeros_like(a, dtype=None):
    return ndarray(a._rt, a._key, _dtypes.dtype_of(dtype, a.dtype), a.device, layout=a._layout)


def ones_like(a, dtype=None):
    z = zeros_like(a, dtype)
    z[...] = 1
    return z


def full_like(a, fill_value, dtype=None):
    z = zeros_like(a, dtype)
    z[...] = fill_value
    return z


def _write_block(a, values):
    """Writes this rank's block (a NumPy array of the block's shape) into a's interior."""
    values = np.ascontiguousarray(values, dtype=a.dtype)
    if a.device == "host":
        a.local[...] = values
    else:
        _tessera.array_write(a._id, values.ctypes.data, values.size)


def arange(start, stop=None, step=1, dtype=None, split=None, device=None):
    """NumPy's arange as a 1-D distributed array (each rank computes its block)."""
    if stop is None:
        start, stop = 0, start
    d = _dtypes.dtype_of(dtype if dtype is not None else np.arange(start, start + step, step).dtype)
    n = builtins.max(0, math.ceil((stop - start) / step))
    a = _new((n,), d, split, None, 0, device)
    lo, hi = a._lo[0], a._hi[0]
    _write_block(a, (start + np.arange(lo, hi) * step).astype(d))
    return a


def linspace(start, stop, num=50, endpoint=True, dtype=None, split=None, device=None):
    """NumPy's linspace as a 1-D distributed array."""
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    d = _dtypes.dtype_of(dtype, np.result_type(float(start), float(stop)) if dtype is None else dtype)
    a = _new((num,), d, split, None, 0, device)
    lo, hi = a._lo[0], a._hi[0]
    y = np.arange(lo, hi, dtype=np.float64) * step + start
    if endpoint and num > 1 and hi == num and hi > lo:
        y[-1] = stop
    _write_block(a, y.astype(d))
    return a


def asarray(x, dtype=None, split=None, grid=None, halo=0, device=None, root=None, periodic=False):
    """A distributed copy of a NumPy (or CuPy) array: the same array on every rank (root=None),
    or given on rank `root` alone (scattered). A tessera.ndarray is returned as it is."""
    if isinstance(x, ndarray):
        return x if dtype is None or np.dtype(dtype) == x.dtype else x.astype(dtype)
    rt = _runtime.runtime()
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):
        x = x.get()  # CuPy: its values on the host (the user asked for a copy)
    if root is None:
        x = np.asarray(x, dtype=dtype)
        a = _new(x.shape, x.dtype, split, grid, halo, device, periodic)
        _write_block(a, x[a.block])
        return a
    meta = rt.comm.bcast((np.shape(x), np.asarray(x, dtype=dtype).dtype.str) if rt.rank == root else None, root=root)
    a = _new(meta[0], np.dtype(meta[1]), split, grid, halo, device, periodic)
    buf = np.ascontiguousarray(x, dtype=a.dtype) if rt.rank == root else None
    _tessera.scatter(a._id, int(root), buf.ctypes.data if buf is not None else 0, buf.size if buf is not None else 0,
                     HOST)
    return a


def from_shards(local, split=0):
    """A distributed array over every rank's own array, without a copy: `local` is this rank's
    block (C-contiguous; NumPy, or a GPU array with __cuda_array_interface__ such as CuPy's or
    PyTorch's on the runtime's GPU), the blocks lie in rank order along axis `split`."""
    rt = _runtime.runtime()
    on_gpu = hasattr(local, "__cuda_array_interface__")
    if on_gpu:
        cai = local.__cuda_array_interface__
        shape, dtype, ptr = tuple(cai["shape"]), _dtypes.dtype_of(np.dtype(cai["typestr"])), cai["data"][0]
        if cai.get("strides") not in (None, tuple(np.empty(shape, dtype).strides)):
            raise ValueError("from_shards takes C-contiguous shards (a non-contiguous GPU array was given)")
        stream = cai.get("stream") or 0
        stream = 0 if stream in (1, 2) else stream
    else:
        if not isinstance(local, np.ndarray):
            raise TypeError(f"from_shards takes a NumPy array or a GPU array with __cuda_array_interface__, "
                            f"not {type(local).__name__}")
        if not local.flags.c_contiguous:
            raise ValueError("from_shards takes C-contiguous shards (use np.ascontiguousarray)")
        shape, dtype, ptr, stream = local.shape, _dtypes.dtype_of(local.dtype), local.ctypes.data, 0
    shape = check_shape(shape)
    ax = normalize_axis(split, len(shape))
    shapes = rt.comm.allgather((shape, dtype.str))
    for s, d in shapes:
        if len(s) != len(shape) or builtins.any(s[i] != shape[i] for i in range(len(shape)) if i != ax) or d != dtype.str:
            raise ValueError(f"from_shards: rank shards {[s for s, _ in shapes]} / dtypes {[d for _, d in shapes]} "
                             f"do not fit together along axis {ax}")
    offsets = [0]
    for s, _ in shapes:
        offsets.append(offsets[-1] + s[ax])
    gshape = tuple(offsets[-1] if i == ax else shape[i] for i in range(len(shape)))
    split_list = [-1] * len(shape)
    split_list[ax] = 0
    key = ("shards", gshape, tuple(split_list), (rt.size,), tuple(offsets))
    if key not in rt._layouts:
        concat = []
        for i in range(len(shape)):
            concat += offsets if i == ax else [0, gshape[i]]
        rt._layouts[key] = _tessera.layout_create_offsets(rt.grid((rt.size,)), list(gshape), split_list, concat)
    mem = 1 if on_gpu else HOST
    h = _tessera.array_adopt(rt._layouts[key], _dtypes.code(dtype), ptr, int(np.prod(shape)), mem, stream)
    out = ndarray(rt, key, dtype, rt.device if on_gpu else "host", layout=rt._layouts[key], handle=h, keep=local)
    out._foreign = on_gpu  # the caller's stream orders its kernels too
    return out


# ---- reductions ----
def _whole(a, op):
    """The C API's reduction of a's interior: a NumPy scalar, the same on every rank."""
    raw = _tessera.reduce(a._handle(), op)
    if op in (_SUM, _PROD):
        t = np.dtype(np.int64) if a.dtype.kind in "biu" else a.dtype
    elif op == _NORM2:
        t = _dtypes.real_of(a.dtype) if a.dtype.kind in "fc" else np.dtype(np.float64)
    else:
        t = a.dtype
    return np.frombuffer(raw[:t.itemsize], dtype=t)[0]


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(sorted(set(normalize_axis(x, ndim) for x in axes)))


def _axis_reduce(a, axes, local_fn, op, out_dtype, keepdims):
    """A reduction along `axes` (not all of them): local_fn(block) gives this rank's partial
    (keepdims form), summed/multiplied/... over the ranks that split the reduced axes by the
    group's all-reduce; the result is distributed like a over the kept axes."""
    if a.device != "host":
        return _axis_reduce_cxx(a, axes, op, out_dtype, keepdims)
    if a._key is None or a._key[0] != "block":
        raise NotImplementedError("reductions along an axis need an array of a block layout (resplit it first)")
    _, shape, split, dims, _, _ = a._key
    part = np.ascontiguousarray(local_fn(a.local), dtype=out_dtype)
    grid_axes = sorted(split[x] for x in axes if split[x] >= 0)
    if grid_axes:
        wide = part.dtype == np.bool_
        buf = part.astype(np.int32) if wide else part
        _tessera.axis_all_reduce(a._layout, grid_axes, buf.ctypes.data, buf.size, _dtypes.code(buf.dtype), op, HOST)
        part = buf.astype(np.bool_) if wide else buf
    out_shape = tuple(1 if i in axes else n for i, n in enumerate(shape))
    out_split = tuple(-1 if i in axes else g for i, g in enumerate(split))
    if not keepdims:
        out_shape = tuple(n for i, n in enumerate(out_shape) if i not in axes)
        out_split = tuple(g for i, g in enumerate(out_split) if i not in axes)
        part = part.reshape([n for i, n in enumerate(part.shape) if i not in axes])
    if not out_shape:
        return part.reshape(()).astype(out_dtype)[()]
    key = ("block", out_shape, out_split, dims, (0,) * len(out_shape), (0,) * len(out_shape))
    out = ndarray(a._rt, key, out_dtype, a.device)
    out.local[...] = part
    return out


def _axis_reduce_cxx(a, axes, op, out_dtype, keepdims):
    """The C++ library's reductions along `axes`, one axis at a time (GPU arrays stay on the GPU)."""
    code = {"sum": _SUM, "prod": _PROD, "min": _MIN, "max": _MAX}[op]
    r = a
    for ax in sorted(axes, reverse=True):
        r = from_handle(a._rt, _tessera.reduce_axis(r._handle(), code, ax), a)
    if not keepdims:
        if len(axes) == a.ndim:
            return np.asarray(r.numpy()).reshape(()).astype(out_dtype)[()]
        r = drop_axes(r, axes, a)
    return r if r.dtype == out_dtype else r.astype(out_dtype)


def _reduction(a, axis, keepdims, op, np_reduce, whole_op, dtype=None):
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    if dtype is not None:
        a = a.astype(dtype)
    if len(axes) == a.ndim and not keepdims:
        return _whole(a, whole_op)
    probe = np_reduce(np.zeros((1,) * a.ndim, a.dtype), axis=axes, keepdims=True)
    return _axis_reduce(a, axes, lambda x: np_reduce(x, axis=axes, keepdims=True), op, probe.dtype, keepdims)


@implements(np.sum)
def sum(a, axis=None, dtype=None, keepdims=False):
    return _reduction(a, axis, keepdims, "sum", np.sum, _SUM, dtype)


@implements(np.prod)
def prod(a, axis=None, dtype=None, keepdims=False):
    return _reduction(a, axis, keepdims, "prod", np.prod, _PROD, dtype)


def _ordered(a, op, np_fn, ident_of, axis, keepdims):
    a = asarray(a)
    if a.dtype.kind == "c":
        raise DtypeMismatch(f"{op} of a complex array (no ordering; rank {a._rt.rank})")
    if a.size == 0:
        raise ValueError(f"zero-size array to reduction operation {op}imum which has no identity")
    axes = _axes(axis, a.ndim)
    if len(axes) == a.ndim and not keepdims:
        return _whole(a, _MIN if op == "min" else _MAX)
    ident = ident_of(a.dtype)
    return _axis_reduce(a, axes, lambda x: np_fn(x, axis=axes, keepdims=True, initial=ident), op, a.dtype, keepdims)


def _top(d):
    return True if d == np.bool_ else np.iinfo(d).max if d.kind in "iu" else np.inf


def _bottom(d):
    return False if d == np.bool_ else np.iinfo(d).min if d.kind in "iu" else -np.inf


@implements(np.min, np.amin)
def min(a, axis=None, keepdims=False):
    return _ordered(a, "min", np.min, _top, axis, keepdims)


@implements(np.max, np.amax)
def max(a, axis=None, keepdims=False):
    return _ordered(a, "max", np.max, _bottom, axis, keepdims)


def _count(a, axes):
    return int(np.prod([a.shape[x] for x in axes], dtype=np.int64))


@implements(np.mean)
def mean(a, axis=None, dtype=None, keepdims=False):
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    out = np.dtype(dtype) if dtype is not None else (np.dtype(np.float64) if a.dtype.kind in "biu" else a.dtype)
    total = sum(a, axis=axis, dtype=out, keepdims=keepdims)
    n = _count(a, axes)
    if isinstance(total, ndarray):
        return (total / n).astype(out)
    return (total / n).astype(out) if n else out.type(np.nan)


@implements(np.var)
def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    n = _count(a, axes)
    if len(axes) == a.ndim and not keepdims:
        m = mean(a, dtype=dtype)
        d = a - m
        sq = (np.absolute(d) ** 2) if a.dtype.kind == "c" else d * d
        return sum(sq) / builtins.max(n - ddof, 0)
    work = np.dtype(dtype) if dtype is not None else (np.dtype(np.float64) if a.dtype.kind in "biu" else a.dtype)
    m = mean(a, axis=axes, dtype=work, keepdims=True)
    real = _dtypes.real_of(work) if work.kind == "c" else work
    if a.device != "host":
        return _axis_reduce_cxx(_squared_deviations(a, m, axes, work), axes, "sum", real, keepdims) / builtins.max(
            n - ddof, 0)
    local_mean = m.local
    dev = _axis_reduce(a, axes, lambda x: np.sum(np.abs(x - local_mean) ** 2, axis=axes, keepdims=True), "sum", real,
                       keepdims)
    return dev / builtins.max(n - ddof, 0)


def _squared_deviations(a, m, axes, work):
    """|a - m|^2 as one GPU kernel (pending), m (keepdims) read along `axes` as broadcast: m first
    lies like a over the kept axes, whole along the reduced ones."""
    _, _, split, dims, _, _ = a._key
    key = ("block", m.shape, tuple(-1 if i in axes else g for i, g in enumerate(split)), dims, (0,) * a.ndim,
           (0,) * a.ndim)
    mine = ndarray(a._rt, key, m.dtype, a.device)
    _tessera.redistribute(m._handle(), mine._id)
    x = a._as_expr() if a.dtype == work else _expr.cast(a._as_expr(), work)
    d = _expr.node(np.subtract, [x, _expr.Leaf(Broadcast(mine, a))])
    if work.kind == "c":
        d = _expr.node(np.absolute, [d])
    return _from_expr(a, _expr.node(np.multiply, [d, d]))


@implements(np.std)
def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    v = var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return np.sqrt(v)


def _truth(a, axis, keepdims, is_any):
    """any (is_any) or all: the max or min of a != 0; an empty array is False / True."""
    a = asarray(a)
    nz = (a != 0) if a.dtype != np.bool_ else a
    axes = _axes(axis, a.ndim)
    if len(axes) == a.ndim and not keepdims:
        if a.size == 0:
            return np.bool_(not is_any)
        return np.bool_(_whole(nz.astype(np.int32), _MAX if is_any else _MIN) != 0)
    np_fn = np.any if is_any else np.all
    return _axis_reduce(nz, axes, lambda x: np_fn(x, axis=axes, keepdims=True), "max" if is_any else "min", np.bool_,
                        keepdims)


@implements(np.any)
def any(a, axis=None, keepdims=False):
    return _truth(a, axis, keepdims, True)


@implements(np.all)
def all(a, axis=None, keepdims=False):
    return _truth(a, axis, keepdims, False)


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    """The 2-norm of the flattened array (NumPy's default); other orders raise."""
    if ord is not None or axis is not None or keepdims:
        raise NotImplementedError("tessera.linalg.norm computes the 2-norm of the whole array "
                                  "(ord=None, axis=None) so far")
    return _whole(asarray(x), _NORM2)


@implements(np.where)
def where(condition, x=None, y=None):
    """Elementwise choice (lazy, fused): x where condition, else y. Operands of different shapes
    broadcast as NumPy's (the smaller ones materialized on the largest one's layout). With the
    condition alone: nonzero(condition), as NumPy's."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    arrays = [v for v in (condition, x, y) if isinstance(v, ndarray)]
    if not arrays:
        raise TypeError("tessera.where needs at least one tessera.ndarray")
    like, operands = broadcast_operands((condition, x, y))
    args = [like._operand(v) for v in operands]
    if builtins.any(e is None for e in args):
        raise TypeError("tessera.where takes tessera arrays of one layout and scalars")
    return _from_expr(like, _expr.where(args))


# ---- algorithms of the C++ library (through the C API) ----
_ARGMIN, _ARGMAX = 5, 6


def drop_axes(r, axes, like):
    """r (a C++ reduction of `like` along `axes`, each of extent 1 in r) without those axes, without
    a copy: an array of fewer dimensions over r's memory (same grid, other axes split as before)."""
    if like._key is None or like._key[0] != "block":
        raise NotImplementedError("this reduction needs an array of a block layout (resplit it first)")
    _, shape, split, dims, _, _ = like._key
    keep = [i for i in range(len(shape)) if i not in axes]
    if not keep:
        return r
    key = ("block", tuple(shape[i] for i in keep), tuple(split[i] for i in keep), dims, (0,) * len(keep),
           (0,) * len(keep))
    layout = r._rt.layout(key)
    ptr, _, memory = _tessera.array_info(r._handle())
    n = int(np.prod([h - l for l, h in zip(r._lo, r._hi)], dtype=np.int64))
    h = _tessera.array_adopt(layout, _dtypes.code(r.dtype), ptr, n, memory, 0)
    return ndarray(r._rt, key, r.dtype, r.device, layout=layout, handle=h, keep=r)


def reduce_along(a, op, axis, keepdims=False):
    """The C++ library's reduction along one axis (op: _SUM, _PROD, _MIN, _MAX, _ARGMIN, _ARGMAX)."""
    a = asarray(a)
    ax = normalize_axis(axis, a.ndim)
    r = from_handle(a._rt, _tessera.reduce_axis(a._handle(), op, ax), a)
    return r if keepdims else drop_axes(r, (ax,), a)


def _arg(a, axis, is_max):
    a = asarray(a)
    if a.size == 0:
        raise ValueError(f"attempt to get {'argmax' if is_max else 'argmin'} of an empty sequence")
    if axis is None:
        return np.int64(_tessera.argreduce(a._handle(), is_max))
    return reduce_along(a, _ARGMAX if is_max else _ARGMIN, axis)


@implements(np.argmin)
def argmin(a, axis=None):
    """Index of the first minimum: flat (axis=None) or along an axis (an int64 array)."""
    return _arg(a, axis, False)


@implements(np.argmax)
def argmax(a, axis=None):
    return _arg(a, axis, True)


_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _sorted(a, axis, indices, kind, order):
    a = asarray(a)
    if kind not in _SORT_KINDS:  # (every kind gives the stable sort's result)
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if axis is None:  # NumPy's: the flattened array
        return from_handle(a._rt, _tessera.sort(a._handle(), indices), a)
    return from_handle(a._rt, _tessera.sort_axis(a._handle(), indices, normalize_axis(axis, a.ndim)), a)


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None):
    """Sorted along `axis` (default the last; NaNs last), on a's layout, as numpy.sort; axis=None
    sorts the flattened array (a 1-D result). A split axis is redistributed away for the sort and
    the result back. Every `kind` sorts stably."""
    return _sorted(a, axis, False, kind, order)


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None):
    """The indices along `axis` that sort each row (stable, whatever `kind`), as
    numpy.argsort(a, axis, kind="stable"); axis=None: the flat indices that sort the flattened
    array."""
    return _sorted(a, axis, True, kind, order)


def _scan(a, axis, dtype, product):
    a = asarray(a)
    if dtype is not None:
        a = a.astype(dtype)
    if axis is None:
        a, axis = ravel(a), 0  # NumPy's cumsum of the flattened array
    return from_handle(a._rt, _tessera.scan(a._handle(), product, normalize_axis(axis, a.ndim)), a)


@implements(np.cumsum)
def cumsum(a, axis=None, dtype=None):
    return _scan(a, axis, dtype, False)


@implements(np.cumprod)
def cumprod(a, axis=None, dtype=None):
    return _scan(a, axis, dtype, True)


@implements(np.matmul)
def matmul(a, b):
    """a @ b of two 2-D arrays (or 3-D, batched along axis 0) of one floating dtype (SUMMA)."""
    if not isinstance(a, ndarray) or not isinstance(b, ndarray):
        return NotImplemented
    if a.device != b.device:
        from ._errors import DeviceMismatch
        raise DeviceMismatch(f"matmul of arrays on {a.device} and {b.device} (rank {a._rt.rank})")
    return from_handle(a._rt, _tessera.matmul(a._handle(), b._handle()), a)


@implements(np.dot)
def dot(a, b):
    """matmul for 2-D arrays; the inner product (a NumPy scalar) for 1-D ones."""
    if isinstance(a, ndarray) and isinstance(b, ndarray) and a.ndim == 1 and b.ndim == 1:
        return sum(a * b)
    return matmul(a, b)


@implements(np.take)
def take(a, indices):
    """a's elements at the flat indices (NumPy's take with axis=None): a 1-D array."""
    a = asarray(a)
    idx = indices if isinstance(indices, ndarray) else asarray(np.asarray(indices, dtype=np.int64), split=0,
                                                               device=a.device)
    if idx.dtype != np.int64:
        idx = idx.astype(np.int64)
    return from_handle(a._rt, _tessera.take(a._handle(), idx._handle()), a)


def broadcast_operands(values):
    """The tessera and NumPy arrays among `values` (at least one tessera array; scalars and 0-d
    arrays stay) on one layout of NumPy's broadcast shape: (the array whose layout they share,
    the values). That is the first tessera array of that shape, else a new array split as
    split_for says, into which the first tessera array is broadcast. A NumPy operand of a GPU
    array raises DeviceMismatch (an explicit move, never a silent one)."""
    arrays = [v for v in values if isinstance(v, ndarray)]
    shapes = [v.shape for v in values if isinstance(v, (ndarray, np.ndarray))]
    try:
        full = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeMismatch(f"operands could not be broadcast together with shapes {' '.join(map(str, shapes))} "
                            f"(rank {arrays[0]._rt.rank})") from None
    like = next((v for v in arrays if v.shape == full), None)
    out = []
    if like is None:
        first = arrays[0]
        like = empty(full, dtype=first.dtype, split=split_for(first, full), device=first.device)
        broadcast_like(first, like, like)
        values = [like if v is first else v for v in values]
    for v in values:
        if isinstance(v, np.ndarray) and v.ndim or isinstance(v, ndarray) and v.shape != full:
            if isinstance(v, np.ndarray) and like.device != "host":
                raise DeviceMismatch(f"a NumPy operand for an array on {like.device} (rank {like._rt.rank}): "
                                     f"tessera.asarray(x, device=...) moves it explicitly")
            v = broadcast_like(v, like)
        out.append(v)
    return like, out


def split_for(a, shape):
    """The axis to split an array of `shape` that a broadcasts into: a's own split axis where it
    is whole there, else the longest axis."""
    if isinstance(a.split, int) and a.split >= len(shape) - a.ndim:
        axis = a.split + len(shape) - a.ndim
        if shape[axis] == a.shape[a.split]:
            return axis
    return builtins.max(range(len(shape)), key=lambda d: shape[d])


def broadcast_like(x, like, out=None):
    """x (a NumPy or tessera array) broadcast to like's shape, on like's layout and device (a new
    array of x's dtype). A NumPy array (the same on every rank): each rank writes its block. A
    tessera array: replicated to every rank where that moves no more than the broadcast result
    (x small against it), else gathered by global flat index (one take) and redistributed."""
    out = zeros_like(like, x.dtype) if out is None else out
    if isinstance(x, np.ndarray):
        _write_block(out, np.broadcast_to(x, like.shape)[out.block])
        return out
    if x.device != like.device:
        raise DeviceMismatch(f"operands on {x.device} and {like.device} (rank {x._rt.rank}): move one with .to()")
    if x.size * x._rt.size <= like.size:
        _write_block(out, np.broadcast_to(x.numpy(), like.shape)[out.block])
        return out
    from . import _slicing
    lead = like.ndim - x.ndim
    i = arange(like.size, dtype=np.int64, split=0, device=like.device)
    flat = i * 0
    for d, c in enumerate(_slicing.unravel(i, like.shape)):
        j = d - lead
        if j >= 0 and x.shape[j] != 1:
            flat = flat + c * int(np.prod(x.shape[j + 1:], dtype=np.int64))
    taken = take(x, flat)
    rows = reshape(taken, like.shape) if like.ndim > 1 else taken
    _tessera.redistribute(rows._handle(), out._handle())
    return out


@implements(np.broadcast_to)
def broadcast_to(array, shape, subok=False):
    """NumPy's broadcast_to as a new distributed array (NumPy's is a read-only view; tessera's
    blocks hold the values): split along a's split axis where that stays whole, else the longest."""
    a = asarray(array)
    shape = check_shape(shape)
    try:
        if tuple(np.broadcast_shapes(a.shape, shape)) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: "
                         f"{a.shape} and requested shape {shape}") from None
    if shape == a.shape:
        return a.copy()
    out = empty(shape, dtype=a.dtype, split=split_for(a, shape), device=a.device)
    return broadcast_like(a, out, out)


_EDGES_PER_PASS = 32  # comparisons fused into one expression when binning by explicit edges


def _uniform(edges):
    """Whether explicit edges are numpy.linspace's over their range (the histogram's own bins)."""
    return edges.size >= 2 and np.array_equal(edges, np.linspace(edges[0], edges[-1], edges.size))


def _bin_keys(a, edges):
    """Per element of a (flattened) the index of its bin among explicit `edges` (NumPy's: half-open
    bins, the last closed), -1 outside them or for NaN: an int64 array. The comparisons with the
    interior edges are summed in fused passes of _EDGES_PER_PASS."""
    x = ravel(a)
    x = x if x._key is not None and x._key[0] == "block" else x.resplit(0)
    key = zeros_like(x, np.int64)
    inner = edges[1:-1]
    for i in builtins.range(0, inner.size, _EDGES_PER_PASS):
        e = None
        for edge in inner[i:i + _EDGES_PER_PASS]:
            t = (x >= edge).astype(np.int64)
            e = t if e is None else e + t
        key[...] = key + e
    inside = (x >= edges[0]) & (x <= edges[-1])
    return where(inside, key, -1)


def _weighted_counts(keys, weights, n):
    """Per key 0..n-1 the sum of the weights of the elements holding it (float64, a NumPy array
    on every rank); keys outside [0, n) count for nothing. The keys are sorted carrying their
    weights (one distributed sort), the weights summed in that order (a prefix sum), and each
    bin's sum is the prefix sums' difference across it (bin ends from the keys' histogram)."""
    if keys.size == 0:
        return np.zeros(n, dtype=np.float64)
    order = argsort(keys)
    prefix = cumsum(take(weights.astype(np.float64), order))
    below = int(sum(keys < 0))
    counts = np.asarray(_tessera.histogram(keys._handle(), int(n), -0.5, n - 0.5), dtype=np.int64)
    ends = below + np.concatenate(([0], np.cumsum(counts)))
    at = take(prefix, np.maximum(ends - 1, 0)).numpy()
    at[ends == 0] = 0.0
    return np.diff(at)


@implements(np.histogram)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's histogram of the whole array: (counts, edges), NumPy arrays on every rank. A number
    of bins: the distributed histogram kernel; explicit edges: each element's bin from fused
    comparisons, then counted (or weighted) as bincount does."""
    a = asarray(a)
    if isinstance(bins, (int, np.integer)):
        lo, hi = (float(min(a)), float(max(a))) if range is None else (float(range[0]), float(range[1]))
        if lo > hi:
            raise ValueError("max must be larger than min in range parameter.")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, builtins.max(int(bins), 0) + 1)
    else:  # (NumPy ignores range= when the edges are given)
        edges = np.asarray(bins, dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError("`bins` must be 1d, when an array")
        if np.any(np.diff(edges) < 0):
            raise ValueError("`bins` must increase monotonically, when an array")
    counted = isinstance(bins, (int, np.integer))  # (bins < 1 reach the library's InvalidArgument)
    if weights is None and (counted or _uniform(edges)):
        nbins = int(bins) if counted else edges.size - 1
        counts = np.asarray(_tessera.histogram(a._handle(), nbins, float(edges[0]), float(edges[-1])), dtype=np.int64)
    else:
        keys = _bin_keys(a, edges)
        if weights is None:
            counts = np.asarray(_tessera.histogram(keys._handle(), edges.size - 1, -0.5, edges.size - 1.5),
                                dtype=np.int64)
        else:
            counts = _weighted_counts(keys, _weights_like(weights, a), edges.size - 1)
    if density:
        return counts / np.diff(edges) / counts.sum(), edges
    return counts, edges


def _weights_like(weights, a, mismatch="weights should have the same shape as a."):
    """weights (a's shape, else ValueError(mismatch)) flattened."""
    w = weights if isinstance(weights, ndarray) else asarray(np.asarray(weights), device=a.device,
                                                              split=0 if np.ndim(weights) else None)
    if w.shape != a.shape:
        raise ValueError(mismatch)
    return ravel(w)  # (take finds the weights by global position: any layout)


@implements(np.bincount)
def bincount(x, weights=None, minlength=0):
    """NumPy's bincount of a 1-D array of non-negative integers: the count (or the weights' sum)
    of each value, a NumPy array on every rank. Counts: the distributed histogram of unit bins
    centred on the integers; weights: a distributed sort of the values carrying them."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array (bincount takes a 1-D array)")
    if x.dtype.kind not in "biu":
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype}') to dtype('int64') according to the rule 'safe'")
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if x.dtype == np.bool_:
        x = x.astype(np.int32)  # (the histogram counts numbers)
    if x.size and int(min(x)) < 0:
        raise ValueError("'list' argument must have no negative elements")
    n = builtins.max(int(minlength), int(max(x)) + 1 if x.size else 0)
    if weights is not None:
        keys = x.astype(np.int64) if x._key is not None and x._key[0] == "block" else x.resplit(0).astype(np.int64)
        w = _weights_like(weights, x, "The weights and list don't have the same length.")
        return _weighted_counts(keys, w, n) if n else np.zeros(0, dtype=np.float64)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(_tessera.histogram(x._handle(), n, -0.5, n - 0.5), dtype=np.int64)


@implements(np.ravel)
def ravel(a):
    """The array flattened (row-major) to 1-D: a new distributed array (no copy where the rows are
    already split over a 1-D grid)."""
    a = asarray(a)
    if a.ndim == 1:
        return a
    out = from_handle(a._rt, _tessera.ravel(a._handle()), a)
    if out._id is not None and _tessera.array_info(out._id)[0] == _tessera.array_info(a._id)[0]:
        out._keep = a  # a view of a's shard (a host shard is a's NumPy memory): a lives as long
    return out


def _new_shape(newshape, size):
    """NumPy's reading of a reshape's target shape (one -1 inferred), checked against `size`."""
    shape = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(newshape)
    shape = tuple(operator.index(n) for n in shape)
    if builtins.sum(n == -1 for n in shape) > 1:
        raise ValueError("can only specify one unknown dimension")
    if builtins.any(n < -1 for n in shape):
        raise ValueError("negative dimensions not allowed")
    known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
    if -1 in shape:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {newshape}")
        shape = tuple(size // known if n == -1 else n for n in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {newshape}")
    return shape


@implements(np.reshape)
def reshape(a, newshape, order="C"):
    """NumPy's reshape in row-major order: a distributed array of the new shape split along its
    first axis over all ranks (balanced row blocks). The flattened array is redistributed once to
    the 1-D blocks those rows cover, which are then the new array's blocks (no further copy)."""
    a = asarray(a)
    if order != "C":
        raise NotImplementedError(f"tessera.reshape(order={order!r}): row-major order ('C') only")
    shape = _new_shape(newshape, a.size)
    if shape == a.shape and a.ndim == 1:
        return a
    rt = a._rt
    flat = ravel(a)
    key = block_key(rt, check_shape(shape), 0)
    if len(shape) == 1:
        out = ndarray(rt, key, a.dtype, a.device)
        _tessera.redistribute(flat._handle(), out._id)
        return out
    # The rows each rank holds in the new layout, as 1-D blocks of the flattened array.
    target = rt.layout(key)
    grid_id = rt.grid(key[3])
    _, coords = _tessera.grid_info(grid_id)
    info = _tessera.layout_info(target)
    rows = sorted(rt.comm.allgather((tuple(coords), info["lo"][0], info["hi"][0])))
    per_row = int(np.prod(shape[1:], dtype=np.int64))
    bounds = [lo * per_row for _, lo, _ in rows] + [a.size]
    layout = _tessera.layout_create_offsets(grid_id, [a.size], [0], bounds)
    mid_key = ("reshape", layout)
    rt._layouts[mid_key] = layout
    mid = ndarray(rt, mid_key, a.dtype, a.device, layout=layout)
    _tessera.redistribute(flat._handle(), mid._id)
    address, local_shape, _ = mid._view(False)
    elements = int(np.prod(local_shape, dtype=np.int64))
    memory = HOST if a.device == "host" else DEVICE
    h = _tessera.array_adopt(target, _dtypes.code(a.dtype), address if elements else 0, elements, memory, 0)
    return ndarray(rt, key, a.dtype, a.device, handle=h, keep=mid)


def _indices(a, indices):
    idx = indices if isinstance(indices, ndarray) else asarray(np.asarray(indices, dtype=np.int64).ravel(), split=0,
                                                               device=a.device)
    return idx if idx.dtype == np.int64 else idx.astype(np.int64)


@implements(np.put)
def put(a, ind, v):
    """a.flat[ind] = v in place (NumPy's put; v a scalar, or one value per index)."""
    if not isinstance(a, ndarray):
        raise TypeError("tessera.put writes into a tessera.ndarray")
    idx = _indices(a, ind)
    vals = np.broadcast_to(np.asarray(v, dtype=a.dtype), (idx.size,)) if not isinstance(v, ndarray) else None
    values = v.astype(a.dtype) if isinstance(v, ndarray) else zeros_like(idx, a.dtype)
    if vals is not None:
        _write_block(values, vals[values.block])
    _tessera.put(a._handle(), idx._handle(), values._handle())


@implements(np.compress)
def compress(condition, a, axis=None):
    """a's elements where condition (a bool array of a's layout) is true, flattened: a 1-D array.
    Along an axis, NumPy's: the slices along `axis` where the 1-D condition (a NumPy or tessera
    array, at most the axis long) is true, gathered by global index (balanced row blocks)."""
    if axis is not None:
        return _compress_along(condition, asarray(a), axis)
    a = asarray(a)
    mask = condition if isinstance(condition, ndarray) else asarray(condition)
    if mask.dtype != np.bool_:
        mask = mask != 0
    return from_handle(a._rt, _tessera.compress(mask._handle(), a._handle()), a)


@implements(np.transpose)
def transpose(a, axes=None):
    """NumPy's transpose (axes reversed, or permuted by `axes`): a new array of balanced row
    blocks, its elements gathered by global flat index (one take); the identity permutation
    returns a itself."""
    a = asarray(a)
    perm = tuple(range(a.ndim))[::-1] if axes is None else tuple(normalize_axis(x, a.ndim) for x in axes)
    if sorted(perm) != list(range(a.ndim)):
        raise ValueError("axes don't match array")
    if perm == tuple(range(a.ndim)):
        return a
    from . import _slicing
    return _slicing.gather_permuted(a, perm)


def _compress_along(condition, a, axis):
    from . import _slicing
    ax = normalize_axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(condition, ndarray):
        if condition.ndim != 1:
            raise ValueError("condition must be a 1-d array")
        if condition.shape[0] > n:
            raise IndexError(f"index {n} is out of bounds for axis {ax} with size {n}")
        positions = flatnonzero(condition)  # stays distributed: no gather of the condition
    else:
        cond = np.asarray(condition)
        if cond.ndim != 1:
            raise ValueError("condition must be a 1-d array")
        sel = np.flatnonzero(cond)
        if sel.size and sel[-1] >= n:
            raise IndexError(f"index {sel[-1]} is out of bounds for axis {ax} with size {n}")
        positions = asarray(sel.astype(np.int64), split=0, device=a.device)
    axes = [(0, 1, m) for m in a.shape]
    axes[ax] = positions
    return _slicing.gather_selection(a, axes)


@implements(np.flatnonzero)
def flatnonzero(a):
    a = asarray(a)
    return from_handle(a._rt, _tessera.flatnonzero(a._handle()), a)


@implements(np.nonzero)
def nonzero(a):
    """The indices of the nonzero elements, one int64 array per axis (NumPy's), in row-major
    order: flatnonzero's global flat indices unravelled elementwise (balanced 1-D blocks)."""
    a = asarray(a)
    from . import _slicing
    flat = flatnonzero(a)
    return (flat,) if a.ndim == 1 else tuple(_slicing.unravel(flat, a.shape))


@implements(np.shape)
def shape(a):
    return a.shape


@implements(np.ndim)
def ndim(a):
    return a.ndim


@implements(np.size)
def size(a, axis=None):
    return a.size if axis is None else a.shape[normalize_axis(axis, a.ndim)]


@implements(np.copy)
def copy(a):
    return a.copy()

