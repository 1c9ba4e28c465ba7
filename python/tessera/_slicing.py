"""Basic slicing of distributed arrays with global indices (NumPy's basic indexing: integers,
slices, Ellipsis). Reading a[key] makes a new distributed array: each rank cuts its part of the
selection from its own block into the shard of a layout of uneven blocks on the same grid, and
one redistribute balances them. Selections the blocks cannot cut in order (negative steps, an
integer on a split axis) gather their elements by global flat index instead (take), reshaped. Assigning
a[key] = value writes a scalar (or a NumPy array of the selection's shape) into the part of the
selection each rank holds. The same on the host and on GPUs (the C API's boxes of a block)."""
import numpy as np

from . import _dtypes, _tessera
from ._array import DEVICE, HOST, ndarray


def normalize(key, shape):
    """Per axis (start, stop, step) of the selection and the axes an integer index removes."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    if len(key) > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {len(key)} were indexed")
    key = key + (slice(None),) * (len(shape) - len(key))
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


def gather_selection(a, axes, dropped=(), source=None):
    """a's elements at the product of per-axis positions, gathered by global flat index in
    row-major order and reshaped: per output axis (start, step, count), or a 1-D int64 tessera
    array of positions (compress), along a's axis source[k] (default: the same axis)."""
    from . import _functions
    source = range(a.ndim) if source is None else source
    out_shape = tuple(x.shape[0] if isinstance(x, ndarray) else x[2] for x in axes)
    n = int(np.prod(out_shape, dtype=np.int64))
    i = _functions.arange(n, dtype=np.int64, split=0, device=a.device)
    flat = i * 0
    for x, c, p in zip(axes, unravel(i, out_shape), source):
        stride = int(np.prod(a.shape[p + 1:], dtype=np.int64))
        flat = flat + (_functions.take(x, c) if isinstance(x, ndarray) else c * x[1] + x[0]) * stride
    taken = _functions.take(a, flat)
    kept = tuple(out_shape[d] for d in range(len(out_shape)) if d not in dropped)
    if not kept:
        return taken.numpy().reshape(())[()]
    return _functions.reshape(taken, kept) if kept != (n,) else taken


def get(a, key):
    _check(a)
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
    """a[key] = value for a scalar or a NumPy array of the selection's shape (every rank's own):
    each rank writes the part of the selection its block holds."""
    _check(a)
    ranges, dropped = normalize(key, a.shape)
    if any(r[2] < 0 for r in ranges):
        raise NotImplementedError("assigning to a slice with a negative step is not in tessera yet (reading is)")
    parts = [piece(lo, hi, r) for lo, hi, r in zip(a._lo, a._hi, ranges)]
    h = a._handle()
    if isinstance(value, ndarray):
        raise NotImplementedError("assigning a distributed array to a part of another is not in tessera yet "
                                  "(a scalar or a NumPy array of the selection's shape is)")
    v = np.asarray(value)
    mine = tuple(p[1] - p[0] for p in parts)
    if v.ndim == 0:
        if not np.can_cast(v.dtype, a.dtype, "same_kind") and not isinstance(value, (int, float, complex, bool)):
            raise TypeError(f"cannot assign {v.dtype} values to a {a.dtype} array (casting rule 'same_kind')")
        values = np.full(mine, v, dtype=a.dtype)
    else:
        full = tuple(count(*r) for r in ranges)
        want = tuple(n for i, n in enumerate(full) if i not in dropped)
        if v.shape != want:
            raise ValueError(f"could not broadcast input array from shape {v.shape} into shape {want}")
        values = np.ascontiguousarray(v.reshape(full)[tuple(slice(p[0], p[1]) for p in parts)], dtype=a.dtype)
    if values.size:
        _tessera.array_write_box(h, *_box(parts), values.ctypes.data, values.size)
