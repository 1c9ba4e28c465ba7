"""Basic slicing of distributed arrays with global indices (NumPy's basic indexing: integers,
slices, Ellipsis). Reading a[key] makes a new distributed array: each rank cuts its part of the
selection from its own block into the shard of a layout of uneven blocks on the same grid, and
one redistribute balances them. Selections the blocks cannot cut in order (negative steps, an
integer on a split axis) gather their elements by global flat index instead (take), reshaped. Assigning
a[key] = value writes a scalar (or a NumPy array of the selection's shape) into the part of the
selection each rank holds. The same on the host and on GPUs (the C API's boxes of a block)."""
import builtins

import numpy as np

from . import _dtypes, _tessera
from ._array import DEVICE, HOST, _can_cast, ndarray


def expand(key, ndim):
    """The key as a tuple of one entry per axis (Ellipsis and missing trailing axes as ':')."""
    if not isinstance(key, tuple):
        key = (key,)
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if builtins.any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (ndim - len(key) + 1) + key[i + 1:]
    if len(key) > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {len(key)} were indexed")
    return key + (slice(None),) * (ndim - len(key))


def normalize(key, shape):
    """Per axis (start, stop, step) of the selection and the axes an integer index removes."""
    key = expand(key, len(shape))
    ranges, dropped = [], []
    for axis, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            k = int(k) % n
            ranges.append((k, k + 1, 1))
            dropped.append(axis)
        elif isinstance(k, slice):
            start, stop, step = k.indices(n)
            ranges.append((start, max(start, stop) if step > 0 else min(start, stop), step))
        else:
            raise IndexError(f"only integers, slices and '...' index tessera arrays (basic indexing), "
                             f"not {type(k).__name__}")
    return ranges, tuple(dropped)


def count(start, stop, step):
    return max(0, -(-(stop - start) // step))


def first_at_or_after(lo, start, step):
    """The index k of the first selected position start + k*step >= lo."""
    return max(0, -(-(lo - start) // step))


def piece(lo, hi, r):
    """The selection's positions [k0, k1) that fall in the block [lo, hi), and their local box
    (start, stop, step) in the block's indices (stop within the block)."""
    start, stop, step = r
    n = count(start, stop, step)
    k0 = min(n, first_at_or_after(lo, start, step))
    k1 = max(k0, min(n, first_at_or_after(hi, start, step)))
    if k1 == k0:
        return k0, k1, (0, 0, 1)
    first = start + k0 * step - lo
    return k0, k1, (first, first + (k1 - k0 - 1) * step + 1, step)


def _box(parts):
    """The C API's box of the pieces: lists of starts, stops and steps."""
    return [list(b) for b in zip(*(p[2] for p in parts))]


def _check(a):
    if a._key is None or a._key[0] != "block":
        raise NotImplementedError("slicing needs an array of a block layout (resplit it first)")


def _by_index(a, ranges, dropped):
    """The selection as a take of its global flat indices (computed elementwise on balanced 1-D
    blocks, in the selection's row-major order), reshaped: any steps, any layout."""
    return gather_selection(a, [(start, step, count(start, stop, step)) for start, stop, step in ranges], dropped)


def unravel(i, shape):
    """The row-major coordinates in `shape` of the flat positions i (an int64 tessera array), one
    lazy int64 array per axis."""
    for d, m in enumerate(shape):
        inner = int(np.prod(shape[d + 1:], dtype=np.int64))
        c = i // inner if inner > 1 else i
        yield c % m if d > 0 else c


def gather_permuted(a, perm):
    """a with its axes in the order `perm` (NumPy's transpose): output axis k runs along a's
    axis perm[k]; balanced row blocks."""
    return gather_selection(a, [(0, 1, a.shape[p]) for p in perm], source=perm)


def flat_positions(a, axes, source=None):
    """The global flat indices in a of the product of per-axis positions, in row-major order of
    the selection: (a 1-D int64 tessera array on balanced blocks, the selection's shape). Per
    output axis (start, step, count), or a 1-D int64 tessera array of positions, along a's axis
    source[k] (default: the same axis)."""
    from . import _functions
    source = range(a.ndim) if source is None else source
    out_shape = tuple(x.shape[0] if isinstance(x, ndarray) else x[2] for x in axes)
    n = int(np.prod(out_shape, dtype=np.int64))
    i = _functions.arange(n, dtype=np.int64, split=0, device=a.device)
    flat = i * 0
    for x, c, p in zip(axes, unravel(i, out_shape), source):
        stride = int(np.prod(a.shape[p + 1:], dtype=np.int64))
        flat = flat + (_functions.take(x, c) if isinstance(x, ndarray) else c * x[1] + x[0]) * stride
    return flat, out_shape


def gather_selection(a, axes, dropped=(), source=None):
    """a's elements at the product of per-axis positions (see flat_positions), gathered by global
    flat index in row-major order and reshaped."""
    from . import _functions
    flat, out_shape = flat_positions(a, axes, source)
    taken = _functions.take(a, flat)
    kept = tuple(out_shape[d] for d in range(len(out_shape)) if d not in dropped)
    if not kept:
        return taken.numpy().reshape(())[()]
    return _functions.reshape(taken, kept) if kept != (flat.size,) else taken


def _is_index_array(k):
    return isinstance(k, (ndarray, np.ndarray, list))


def _mask_of(a, key):
    """The boolean mask when key is one boolean array of a's whole shape (n-D), else None."""
    k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if not isinstance(k, (ndarray, np.ndarray, list)) or a.ndim == 1:
        return None
    kind = k.dtype if isinstance(k, (ndarray, np.ndarray)) else np.asarray(k).dtype
    if kind != np.bool_ or len(k.shape if hasattr(k, "shape") else np.shape(k)) != a.ndim:
        return None
    shape = tuple(k.shape) if hasattr(k, "shape") else np.shape(k)
    if shape != a.shape:
        d = next(i for i, (m, n) in enumerate(zip(shape, a.shape)) if m != n)
        raise IndexError(f"boolean index did not match indexed array along axis {d}; size of axis is {a.shape[d]} "
                         f"but size of corresponding boolean axis is {shape[d]}")
    if isinstance(k, ndarray):
        return k
    from . import _functions
    m = _functions.zeros_like(a, np.bool_)
    _functions._write_block(m, np.asarray(k)[m.block])
    return m


def _positions(a, k, axis):
    """An index array along `axis` as 1-D int64 tessera positions (negative ones wrapped, bounds
    checked; a boolean array: where it is true) and the index's shape."""
    from . import _functions
    n = a.shape[axis]
    if isinstance(k, ndarray) and k.device != a.device:
        raise IndexError(f"an index array on {k.device} for an array on {a.device}: move it with .to()")
    if (k.dtype if isinstance(k, ndarray) else np.asarray(k).dtype) == np.bool_:
        m = k if isinstance(k, ndarray) else np.asarray(k)
        if m.ndim != 1 or m.shape[0] != n:
            raise IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is {n} "
                             f"but size of corresponding boolean axis is {m.shape[0] if m.ndim else 0}")
        p = _functions.flatnonzero(m) if isinstance(m, ndarray) else _functions.asarray(
            np.flatnonzero(m).astype(np.int64), split=0, device=a.device)
        return p, p.shape
    v = _index_values(a, k, axis)
    if not isinstance(v, ndarray):
        return _functions.asarray(np.ascontiguousarray(v.ravel()), split=0, device=a.device), v.shape
    p = _functions.ravel(v)
    if p._key is None or p._key[0] != "block":
        p = p.resplit(0)
    return p, k.shape


def _advanced(a, key):
    """For a key with index arrays (NumPy's advanced indexing: one array among slices and
    integers, or arrays and integers on every axis, broadcast together): the selection's global
    flat positions in a (a 1-D int64 tessera array, in the result's row-major order) and the
    result's shape. None for a basic key."""
    entries = expand(key, a.ndim)
    arrays = [d for d, k in enumerate(entries) if _is_index_array(k)]
    if not arrays:
        return None
    if len(arrays) > 1:
        if any(isinstance(k, slice) for k in entries):
            raise NotImplementedError("several index arrays beside slices: tessera broadcasts index arrays together "
                                      "where every axis takes an array or an integer (a[rows, cols]); index the "
                                      "arrays' axes first, then slice")
        return _pointwise(a, entries)
    ax = arrays[0]
    positions, index_shape = _positions(a, entries[ax], ax)
    ranges, dropped = normalize(entries[:ax] + (slice(None),) + entries[ax + 1:], a.shape)
    sel = [(st, sp, count(st, so, sp)) for st, so, sp in ranges]
    sel[ax] = positions
    # Integers are advanced indices too: apart from the array (a slice between them), NumPy puts
    # the index's axes first.
    advanced = sorted(set(dropped) | {ax})
    order = list(range(a.ndim))
    if advanced != list(range(advanced[0], advanced[-1] + 1)):
        order = [ax] + [d for d in range(a.ndim) if d != ax]
    shape = []
    for d in order:
        if d == ax:
            shape += list(index_shape)
        elif d not in dropped:
            shape.append(sel[d][2])
    flat, _ = flat_positions(a, [sel[d] for d in order], source=order)
    return flat, tuple(shape)


def _index_values(a, k, axis):
    """An integer index (array, list or int) along `axis`, bounds checked, negatives wrapped: a
    NumPy int64 array, or a tessera int64 array (lazy) of k's shape."""
    from . import _functions
    n = a.shape[axis]
    if isinstance(k, ndarray):
        if k.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        if k.size:
            hi, lo = int(_functions.max(k)), int(_functions.min(k))
            if hi >= n or lo < -n:
                raise IndexError(f"index {hi if hi >= n else lo} is out of bounds for axis {axis} with size {n}")
        return k.astype(np.int64) + (k < 0).astype(np.int64) * n
    v = np.asarray(k)
    if v.size == 0:
        v = v.astype(np.int64)
    if v.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if v.size and (v.max() >= n or v.min() < -n):
        bad = v.max() if v.max() >= n else v.min()
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    return (v % n if n else v).astype(np.int64)


def _pointwise(a, entries):
    """a[i0, i1, ...] with every axis indexed by an integer array or an integer, broadcast together
    as NumPy's: (the flat positions, the broadcast shape)."""
    from . import _functions
    values = [_index_values(a, k, d) for d, k in enumerate(entries)]
    shapes = [v.shape for v in values]
    try:
        full = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(map(str, shapes))) from None
    # The layout a tessera index array of another shape is broadcast onto: one of the full shape
    # if any, else a new one (made only when needed).
    like = next((v for v in values if isinstance(v, ndarray) and v.shape == full), None)
    flat = None
    for d, v in enumerate(values):
        if not full:
            p = _functions.asarray(np.asarray(v).reshape(1), split=0, device=a.device)
        elif isinstance(v, ndarray) and v.shape == full:
            p = _functions.ravel(v)
        elif isinstance(v, ndarray):
            if like is None:
                like = _functions.empty(full, dtype=np.int64, split=0, device=a.device)
            p = _functions.ravel(_functions.broadcast_like(v, like))
        else:
            p = _functions.asarray(np.ascontiguousarray(np.broadcast_to(v, full)).ravel(), split=0, device=a.device)
        if p._key is None or p._key[0] != "block" or p._key[2] != (0,):
            p = p.resplit(0)
        term = p * int(np.prod(a.shape[d + 1:], dtype=np.int64))
        flat = term if flat is None else flat + term
    return flat, full


def _advanced_get(a, adv):
    from . import _functions
    flat, shape = adv
    taken = _functions.take(a, flat)
    if not shape:
        return taken.numpy().reshape(())[()]
    return taken if shape == (flat.size,) else _functions.reshape(taken, shape)


def get(a, key):
    _check(a)
    mask = _mask_of(a, key)
    if mask is not None:
        from . import _functions
        return _functions.compress(mask, a)
    adv = _advanced(a, key)
    if adv is not None:
        return _advanced_get(a, adv)
    ranges, dropped = normalize(key, a.shape)
    if any(r[2] < 0 for r in ranges) or (dropped and any(a._key[2][ax] >= 0 for ax in dropped)):
        return _by_index(a, ranges, dropped)
    rt = a._rt
    parts = [piece(lo, hi, r) for lo, hi, r in zip(a._lo, a._hi, ranges)]
    out_shape = tuple(count(*r) for r in ranges)
    _, _, split, dims, _, _ = a._key
    # The pieces' boundaries along each split axis, in grid order (every rank's, gathered).
    grid_id = rt.grid(dims)
    _, coords = _tessera.grid_info(grid_id)
    spans = rt.comm.allgather((tuple(coords), tuple((p[0], p[1]) for p in parts)))
    concat = []
    for axis, g in enumerate(split):
        if g < 0:
            concat += [0, out_shape[axis]]
            continue
        by_coord = {}
        for c, sp in spans:
            by_coord[c[g]] = sp[axis]
        bounds = [by_coord[c][0] for c in sorted(by_coord)] + [out_shape[axis]]
        concat += bounds
    layout = _tessera.layout_create_offsets(grid_id, list(out_shape), list(split), concat)
    key = ("slice", layout)
    rt._layouts[key] = layout
    # Each rank's piece, cut from its block on the array's device; then one redistribute balances them.
    uneven = ndarray(rt, key, a.dtype, a.device, layout=layout)
    _tessera.array_copy_box(uneven._id, a._handle(), *_box(parts))
    balanced_key = ("block", out_shape, split, dims, (0,) * a.ndim, (0,) * a.ndim)
    out = ndarray(rt, balanced_key, a.dtype, a.device)
    _tessera.redistribute(uneven._id, out._id)
    uneven._release()
    if not dropped:
        return out
    kept = [i for i in range(a.ndim) if i not in dropped]
    if not kept:
        return out.numpy().reshape(())[()]
    # Integer indices remove whole, unsplit axes of extent 1: the balanced blocks of the smaller
    # shape are the same memory, adopted without a copy.
    small_key = ("block", tuple(out_shape[i] for i in kept), tuple(split[i] for i in kept), dims, (0,) * len(kept),
                 (0,) * len(kept))
    address, shape, _ = out._view(False)
    elements = int(np.prod(shape, dtype=np.int64))
    memory = HOST if a.device == "host" else DEVICE
    h = _tessera.array_adopt(rt.layout(small_key), _dtypes.code(a.dtype), address if elements else 0, elements,
                             memory, 0)
    return ndarray(rt, small_key, a.dtype, a.device, handle=h, keep=out)


def put(a, key, value):
    """a[key] = value for a scalar, a NumPy array or a tessera array of the selection's shape.
    Positive steps and local values: each rank writes the part of the selection its block holds.
    Negative steps or a distributed value: one scatter by global flat index (tessera.put) of the
    value's elements in the selection's row-major order."""
    _check(a)
    mask = _mask_of(a, key)
    if mask is not None:
        from . import _functions
        flat = _functions.flatnonzero(mask)
        return put_values(a, flat, flat.shape, value)
    adv = _advanced(a, key)
    if adv is not None:
        flat, shape = adv
        return put_values(a, flat, shape, value)
    ranges, dropped = normalize(key, a.shape)
    full = tuple(count(*r) for r in ranges)
    want = tuple(n for i, n in enumerate(full) if i not in dropped)
    if isinstance(value, ndarray) or any(r[2] < 0 for r in ranges):
        return _put_by_index(a, ranges, want, value)
    parts = [piece(lo, hi, r) for lo, hi, r in zip(a._lo, a._hi, ranges)]
    h = a._handle()
    v = np.asarray(value)
    mine = tuple(p[1] - p[0] for p in parts)
    if v.ndim == 0:
        _check_cast(value, v, a)
        values = np.full(mine, v, dtype=a.dtype)
    else:
        if v.shape != want:
            raise ValueError(f"could not broadcast input array from shape {v.shape} into shape {want}")
        values = np.ascontiguousarray(v.reshape(full)[tuple(slice(p[0], p[1]) for p in parts)], dtype=a.dtype)
    if values.size:
        _tessera.array_write_box(h, *_box(parts), values.ctypes.data, values.size)


def _check_cast(value, v, a):
    if not np.can_cast(v.dtype, a.dtype, "same_kind") and not isinstance(value, (int, float, complex, bool)):
        raise TypeError(f"cannot assign {v.dtype} values to a {a.dtype} array (casting rule 'same_kind')")


def _put_by_index(a, ranges, want, value):
    flat, _ = flat_positions(a, [(start, step, count(start, stop, step)) for start, stop, step in ranges])
    put_values(a, flat, want, value)


def put_values(a, flat, want, value):
    """a.flat[flat] = value, the value a scalar or an array of shape `want` in the row-major order
    of `flat` (a NumPy array, or a tessera array on a's device; moved to flat's blocks)."""
    from . import _functions
    from ._errors import DeviceMismatch
    if flat.size == 0:
        return
    if isinstance(value, ndarray):
        if value.device != a.device:
            raise DeviceMismatch(f"assigning an array on {value.device} into one on {a.device} (rank {a._rt.rank}): "
                                 f"move it with .to()")
        if value.shape != want and value.size != 1:
            raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {want}")
        if value.size == 1 and value.shape != want:
            return _functions.put(a, flat, value.numpy().reshape(()).astype(a.dtype)[()])
        if not _can_cast(value.dtype, a.dtype):
            raise TypeError(f"cannot assign {value.dtype} values to a {a.dtype} array (casting rule 'same_kind')")
        values = _functions.ravel(value)
    else:
        v = np.asarray(value)
        if v.ndim == 0:
            _check_cast(value, v, a)
            return _functions.put(a, flat, v.astype(a.dtype)[()])
        if v.shape != want:
            raise ValueError(f"could not broadcast input array from shape {v.shape} into shape {want}")
        values = _functions.asarray(np.ascontiguousarray(v, dtype=a.dtype).ravel(), split=0, device=a.device)
    # The values on the blocks of the indices (balanced 1-D blocks), in a's dtype.
    if values._key != flat._key:
        values = values.resplit(0)
    _functions.put(a, flat, values)
