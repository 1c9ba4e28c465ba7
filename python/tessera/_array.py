"""tessera.ndarray: a distributed array with NumPy semantics over the C API's sharded arrays.

Every rank holds one shard (its block of the global array, plus halos). Arithmetic, comparisons
and the ufuncs of _expr.UFUNCS build a lazy expression; it is evaluated when assigned
(`z[...] = a * b + c`) or read (reductions, .local, .numpy(), files, FFTs): with NumPy on the
host, as one fused NVRTC kernel on a GPU. Operands must share layout and device: the package
never redistributes or copies between devices on its own (resplit() and to() are explicit).
"""
import numpy as np

from . import _dtypes, _expr, _runtime, _tessera
from ._errors import DeviceMismatch, LayoutMismatch, ShapeMismatch

HOST, DEVICE = 0, 1  # tessera_memory
_AxisError = getattr(getattr(np, "exceptions", np), "AxisError")


def normalize_axis(axis, ndim):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"axis {axis!r} is not an integer")
    if not -ndim <= axis < ndim:
        raise _AxisError(int(axis), ndim)
    return int(axis) % ndim


def check_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"shape {shape!r} is not a tuple of integers")
    try:
        shape = tuple(int(n) for n in shape)
    except (TypeError, ValueError) as e:
        raise TypeError(f"shape {shape!r} is not a tuple of integers") from e
    if not 1 <= len(shape) <= 4:
        raise ValueError(f"tessera arrays have 1 to 4 dimensions, not {len(shape)} (shape {shape})")
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed (shape {shape})")
    return shape


def split_axes(split, ndim):
    """split as a tuple of array axes (Heat's split: None, an axis, or a tuple of axes)."""
    if split is None:
        return ()
    axes = (split,) if isinstance(split, (int, np.integer)) and not isinstance(split, bool) else split
    try:
        axes = tuple(normalize_axis(a, ndim) for a in axes)
    except TypeError as e:
        raise TypeError(f"split {split!r} is not an axis or a tuple of axes") from e
    if len(set(axes)) != len(axes):
        raise ValueError(f"split {split!r} names an axis twice")
    return axes


def block_key(rt, shape, split=0, grid=None, halo=0, periodic=False):
    """The key of a block layout: ('block', shape, split per array axis, grid dims, halo, periodic)."""
    ndim = len(shape)
    axes = split_axes(split, ndim)
    if grid is None:
        dims = (rt.size,) if len(axes) <= 1 else (0,) * len(axes)
    else:
        dims = tuple(int(d) for d in ((grid,) if isinstance(grid, (int, np.integer)) else grid))
        if len(dims) < max(1, len(axes)):
            raise ValueError(f"grid {grid!r} has fewer axes than split {split!r}")
    per_axis = [-1] * ndim
    for g, a in enumerate(axes):
        per_axis[a] = g
    halo = (int(halo),) * ndim if isinstance(halo, (int, np.integer)) else tuple(int(h) for h in halo)
    periodic = (bool(periodic),) * ndim if isinstance(periodic, (bool, int)) else tuple(bool(p) for p in periodic)
    if len(halo) != ndim or len(periodic) != ndim or any(h < 0 for h in halo):
        raise ValueError(f"halo {halo} / periodic {periodic}: one non-negative width / flag per axis ({ndim})")
    return ("block", tuple(shape), tuple(per_axis), dims, halo, tuple(int(p) for p in periodic))


class _Shaped:
    """ndim and size from a shape (arrays and their shards)."""

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


class Shard(_Shaped):
    """One rank's shard on a GPU: __cuda_array_interface__ (v3) and __dlpack__, without a copy.
    It keeps its array alive."""

    def __init__(self, array, halos):
        self._array, self._halos = array, halos
        self._ptr, self.shape, self._strides = array._view(halos)
        self.dtype = array.dtype

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self._ptr, False), "version": 3,
                "strides": self._strides, "stream": _tessera.array_stream(self._array._id) or 1}

    def __dlpack__(self, stream=None, **kwargs):
        _tessera.array_synchronize(self._array._id)
        return _tessera.to_dlpack(self._array._id, self._halos)

    def get(self):
        """A NumPy copy of the shard (CuPy's name for it): explicit, after the array's work."""
        out = np.empty(self.shape, self.dtype)
        if out.size:
            halo = self._array.halo if self._halos else (0,) * len(self.shape)
            _tessera.array_read_box(self._array._id, [-h for h in halo], [n - h for n, h in zip(self.shape, halo)],
                                    [1] * len(self.shape), out.ctypes.data, out.size)
        return out

    def __dlpack_device__(self):
        return (2, int(self._array.device.split(":")[1]) if ":" in self._array.device else 0)

    def __repr__(self):
        return f"<tessera shard {self.shape} {self.dtype} on {self._array.device}>"


def _operator(ufunc, reflected=False):
    """The method of a binary arithmetic operator (ndarray._binary with the common case, an array
    of the same layout, spelled out: it runs on every operator of every expression)."""
    def method(self, other):
        if type(other) is not ndarray:
            return self._binary(ufunc, other, reflected)
        if other.shape != self.shape:
            return self._binary(ufunc, other, reflected)
        if other._key is not self._key or self._key is None or other.device != self.device:
            check_compatible(self, other)
        a = self._expr if self._expr is not None else _expr.Leaf(self)
        b = other._expr if other._expr is not None else _expr.Leaf(other)
        return ndarray._pending(self, _expr.node(ufunc, [b, a] if reflected else [a, b]))
    return method


class ndarray(_Shaped):
    """A distributed n-d array (1-4 dimensions) with one shard per rank."""

    __array_priority__ = 100

    # ---- construction (package internal) ----
    def __init__(self, rt, key, dtype, device, layout=None, handle=None, keep=None, expr=None):
        self._rt, self._key, self.dtype, self.device = rt, key, np.dtype(dtype), device
        self._layout = layout if layout is not None else rt.layout(key)
        self._id, self._keep, self._expr = handle, keep, expr
        info = _tessera.layout_info(self._layout)
        self.shape = tuple(info["shape"])
        self._lo, self._hi, self._padded = tuple(info["lo"]), tuple(info["hi"]), tuple(info["padded"])
        block = [h - l for l, h in zip(self._lo, self._hi)]
        self.halo = tuple((p - b) // 2 if b > 0 else 0 for p, b in zip(self._padded, block))
        splits = _tessera.layout_split(self._layout)
        order = sorted((g, a) for a, g in enumerate(splits) if g >= 0)
        self.split = tuple(a for _, a in order) if len(order) != 1 else order[0][1]
        if not order:
            self.split = None
        self._views, self._foreign = None, False  # _foreign: over a caller's memory and stream (from_shards)
        self._last = None  # the kernel of the last expression assigned to it (launch())
        if handle is None and expr is None:
            self._allocate()
        elif handle is not None:
            rt.track(self)

    @classmethod
    def _pending(cls, like, e):
        """A pending array holding expression e, of like's layout and device (made on every
        operator: a copy of like's geometry, no call into the library)."""
        a = cls.__new__(cls)
        a._rt, a._key, a.dtype, a.device, a._layout = like._rt, like._key, e.dtype, like.device, like._layout
        a._id, a._keep, a._expr, a._views, a._foreign, a._last = None, None, e, None, False, None
        a.shape, a._lo, a._hi, a._padded, a.halo, a.split = (like.shape, like._lo, like._hi, like._padded, like.halo,
                                                              like.split)
        return a

    def _allocate(self):
        """A zero-filled shard: on the runtime's GPU by the C API, on the host as NumPy memory."""
        self._rt.track(self)
        if self.device == "host":
            buf = np.zeros(self._padded, dtype=self.dtype)
            self._id = _tessera.array_adopt(self._layout, _dtypes.code(self.dtype), buf.ctypes.data, buf.size, HOST, 0)
            self._keep = buf
        else:
            self._id = _tessera.array_create(self._layout, _dtypes.code(self.dtype))

    def _release(self):
        if self._id is not None:
            _tessera.array_free(self._id)
            self._id = None

    def __del__(self):
        # An array dropped while its runtime runs gives its shard back at once.
        try:
            if self._id is not None and self._rt.id is not None:
                self._release()
        except Exception:  # interpreter teardown: the runtime's finalize frees what is left
            pass

    # ---- properties ----

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def T(self):
        """The axes reversed (NumPy's a.T): see tessera.transpose."""
        from . import _functions
        return _functions.transpose(self)

    def transpose(self, *axes):
        from . import _functions
        return _functions.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def reshape(self, *shape, order="C"):
        """NumPy's a.reshape(shape) (row-major): balanced row blocks of the new shape."""
        from . import _functions
        return _functions.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    @property
    def block(self):
        """This rank's block of the global index space, a tuple of slices."""
        return tuple(slice(l, h) for l, h in zip(self._lo, self._hi))

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        pending = ", pending" if self._expr is not None else ""
        return (f"tessera.ndarray(shape={self.shape}, dtype={self.dtype}, split={self.split}, "
                f"device='{self.device}'{pending})")

    # ---- materialization ----
    def _handle(self):
        """The C API handle, evaluating a pending expression first."""
        self._rt.check_alive()
        if self._expr is not None:
            e, self._expr = self._expr, None
            self._allocate()
            assign(self, e)
        if self._id is None:
            raise _errors_freed()
        return self._id

    def _view_geometry(self, halos):
        """(shape, strides in bytes, byte offset) of the shard's interior or padded view."""
        it = self.dtype.itemsize
        strides, s = [], it
        for n in reversed(self._padded):
            strides.append(s)
            s *= n
        strides = tuple(reversed(strides))
        if halos:
            return self._padded, strides, 0
        block = tuple(h - l for l, h in zip(self._lo, self._hi))
        offset = sum(h * st for h, st in zip(self.halo, strides)) if all(block) else 0
        return block, strides, offset

    def _view(self, halos):
        """(address, shape, strides in bytes) of the shard's interior, or of all of it with halos
        (an array's memory never moves: kept after the first call)."""
        views = self._views
        if views is None or views[0] != self._id:
            ptr, _, _ = _tessera.array_info(self._id)
            inner, padded = self._view_geometry(False), self._view_geometry(True)
            views = self._views = (self._id, (ptr + inner[2], inner[0], inner[1]), (ptr, padded[0], padded[1]))
        return views[2] if halos else views[1]

    def shard(self, halos=False):
        """This rank's shard, without a copy: a NumPy array on the host; on a GPU an object with
        __cuda_array_interface__ and __dlpack__ (cupy.asarray / torch.from_dlpack take it)."""
        self._handle()
        if self.device != "host":
            return Shard(self, halos)
        holder = _HostView(self, *self._view(halos))
        return np.asarray(holder)

    @property
    def local(self):
        """This rank's block (no halos), without a copy (see shard())."""
        return self.shard(halos=False)

    def numpy(self):
        """The whole array as a NumPy array on every rank (collective)."""
        h = self._handle()
        whole = ndarray(self._rt, block_key(self._rt, self.shape, None), self.dtype, self.device)
        _tessera.redistribute(h, whole._id)
        out = np.empty(self.shape, dtype=self.dtype)
        _tessera.array_read(whole._id, out.ctypes.data, out.size)
        whole._release()
        return out

    def gather(self, root=0):
        """The whole array as a NumPy array on rank `root`, None on the others (collective)."""
        h = self._handle()
        mine = self._rt.rank == root
        out = np.empty(self.shape, dtype=self.dtype) if mine else None
        _tessera.gather(h, int(root), out.ctypes.data if mine else 0, out.size if mine else 0, HOST)
        return out

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a tessera.ndarray is distributed: a.numpy() (every rank) or a.gather(root) "
                        "(one rank) makes a NumPy array explicitly; a.local is this rank's shard")

    def __bool__(self):
        raise ValueError("the truth value of a distributed array is ambiguous: use tessera.any / tessera.all")

    def to(self, device):
        """A copy of the array on `device` ("host" or the runtime's GPU); self if it is there."""
        target = self._rt.device_kind(device)
        if target == self.device:
            return self
        out = ndarray(self._rt, self._key, self.dtype, target, layout=self._layout)
        _tessera.redistribute(self._handle(), out._id)
        return out

    def copy(self):
        return _from_expr(self, _expr.cast(_expr.Leaf(self), self.dtype))

    def astype(self, dtype, copy=True):
        d = _dtypes.dtype_of(dtype)
        if d == self.dtype and not copy:
            return self
        return _from_expr(self, _expr.cast(self._as_expr(), d))

    def synchronize(self):
        _tessera.array_synchronize(self._handle())

    # ---- layout changes and halos (collective) ----
    def resplit(self, split, grid=None):
        """The array redistributed to `split` (an axis, a tuple of axes or None: replicated)."""
        periodic = self._key[5] if self._key and self._key[0] == "block" else False
        key = block_key(self._rt, self.shape, split, grid, self.halo, periodic)
        out = ndarray(self._rt, key, self.dtype, self.device)
        _tessera.redistribute(self._handle(), out._id)
        return out

    def redistribute(self, split, grid=None):
        return self.resplit(split, grid)

    def exchange_halos(self):
        _tessera.halo_exchange(self._handle())

    def exchange_halos_begin(self):
        """Starts the halo exchange; the returned object's end() completes it."""
        return _PendingHalo(_tessera.halo_exchange_begin(self._handle()))

    # ---- expressions ----
    def _as_expr(self):
        return self._expr if self._expr is not None else _expr.Leaf(self)

    def _operand(self, other):
        """other as an expression node: a scalar, or an array of this layout and device."""
        if isinstance(other, ndarray):
            check_compatible(self, other)
            return other._as_expr()
        if isinstance(other, (bool, int, float, complex, np.generic)) or (
                isinstance(other, np.ndarray) and other.ndim == 0):
            return _expr.Const(other[()] if isinstance(other, np.ndarray) else other)
        return None

    def _broadcast_with(self, other):
        """(self, other) brought to one shape and layout where NumPy would broadcast them: the
        smaller operand is materialized on the larger one's layout (a new array split along the
        broadcast shape's longest axis when neither is as large as the result). Scalars and
        operands of self's shape come back as they are; other objects are left to _operand."""
        shape = getattr(other, "shape", None)
        if not isinstance(other, (ndarray, np.ndarray)) or shape == () or (isinstance(other, ndarray)
                                                                           and shape == self.shape):
            return self, other
        from . import _functions
        _, (me, other) = _functions.broadcast_operands((self, other))
        return me, other

    def _binary(self, ufunc, other, reflected=False):
        me, other = self._broadcast_with(other)
        o = me._operand(other)
        if o is None:
            return NotImplemented
        args = [o, me._as_expr()] if reflected else [me._as_expr(), o]
        return _from_expr(me, _expr.node(ufunc, args))

    def _unary(self, ufunc):
        return _from_expr(self, _expr.node(ufunc, [self._as_expr()]))

    def _inplace(self, ufunc, other):
        if isinstance(other, (ndarray, np.ndarray)) and other.shape not in (self.shape, ()):
            me, other = self._broadcast_with(other)
            if me is not self:
                raise ShapeMismatch(f"non-broadcastable output operand with shape {self.shape} doesn't match the "
                                    f"broadcast shape {me.shape} (rank {self._rt.rank})")
        o = self._operand(other)
        if o is None:
            return NotImplemented
        e = _expr.node(ufunc, [self._as_expr(), o])
        if not np.can_cast(e.dtype, self.dtype, "same_kind"):
            raise _errors_ufunc_cast(ufunc, e.dtype, self.dtype)
        self._handle()
        assign(self, e)
        return self

    __add__ = _operator(np.add)
    __radd__ = _operator(np.add, True)
    __sub__ = _operator(np.subtract)
    __rsub__ = _operator(np.subtract, True)
    __mul__ = _operator(np.multiply)
    __rmul__ = _operator(np.multiply, True)
    __truediv__ = _operator(np.true_divide)
    __rtruediv__ = _operator(np.true_divide, True)
    __floordiv__ = lambda s, o: s._binary(np.floor_divide, o)
    __rfloordiv__ = lambda s, o: s._binary(np.floor_divide, o, True)
    __mod__ = lambda s, o: s._binary(np.remainder, o)
    __rmod__ = lambda s, o: s._binary(np.remainder, o, True)
    __pow__ = lambda s, o: s._binary(np.power, o)
    __rpow__ = lambda s, o: s._binary(np.power, o, True)
    __eq__ = lambda s, o: s._binary(np.equal, o)
    __ne__ = lambda s, o: s._binary(np.not_equal, o)
    __lt__ = lambda s, o: s._binary(np.less, o)
    __le__ = lambda s, o: s._binary(np.less_equal, o)
    __gt__ = lambda s, o: s._binary(np.greater, o)
    __ge__ = lambda s, o: s._binary(np.greater_equal, o)
    __and__ = lambda s, o: s._logical(np.logical_and, o)
    __rand__ = lambda s, o: s._logical(np.logical_and, o)
    __or__ = lambda s, o: s._logical(np.logical_or, o)
    __ror__ = lambda s, o: s._logical(np.logical_or, o)
    __iadd__ = lambda s, o: s._inplace(np.add, o)
    __isub__ = lambda s, o: s._inplace(np.subtract, o)
    __imul__ = lambda s, o: s._inplace(np.multiply, o)
    __itruediv__ = lambda s, o: s._inplace(np.true_divide, o)
    __ipow__ = lambda s, o: s._inplace(np.power, o)
    __neg__ = lambda s: s._unary(np.negative)
    __pos__ = lambda s: s.copy()
    __abs__ = lambda s: s._unary(np.absolute)
    __hash__ = None

    def __matmul__(self, other):
        from . import _functions
        return _functions.matmul(self, other)

    def __rmatmul__(self, other):
        from . import _functions
        return _functions.matmul(other, self)

    def _logical(self, ufunc, other):
        if self.dtype != np.bool_ or (isinstance(other, ndarray) and other.dtype != np.bool_):
            raise TypeError(f"& and | take bool arrays here (tessera has no bitwise integer operations yet); "
                            f"got {self.dtype}")
        return self._binary(ufunc, other)

    def __invert__(self):
        if self.dtype != np.bool_:
            raise TypeError(f"~ takes bool arrays here, not {self.dtype}")
        return self._unary(np.logical_not)

    def __setitem__(self, key, value):
        # z[...] = e once more, e of the structure and arrays of z's last assignment (on a GPU):
        # what that one checked holds again, the kernel runs with e's scalars.
        if (key is Ellipsis and type(value) is ndarray and self._last is not None and value._expr is not None
                and self._id is not None and self._last.run(value._expr)):
            return
        if key is not Ellipsis and not _whole_key(key):
            from . import _slicing
            return _slicing.put(self, key, value)
        o = self._operand(value)
        if o is None:
            raise TypeError(f"cannot assign {type(value).__name__} to a tessera.ndarray")
        if not isinstance(o, _expr.Const) and not _can_cast(o.dtype, self.dtype):
            raise TypeError(f"cannot assign {o.dtype} values to a {self.dtype} array (casting rule 'same_kind')")
        self._handle()
        assign(self, o)

    def __getitem__(self, key):
        """Basic indexing with global indices (integers, slices, ...): a new distributed array."""
        from . import _slicing
        return _slicing.get(self, key)

    # ---- NumPy protocols ----
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if ufunc is np.matmul and method == "__call__" and out is None and not kwargs:
            from . import _functions
            return _functions.matmul(*inputs)
        if method != "__call__" or kwargs or ufunc not in _expr.UFUNCS:
            return NotImplemented
        me = self
        if len(inputs) == 2:  # operands of different shapes broadcast as NumPy's
            i = 0 if inputs[0] is self else 1
            me, other = self._broadcast_with(inputs[1 - i])
            inputs = (me, other) if i == 0 else (other, me)
        args = []
        for x in inputs:
            e = me._operand(x) if x is not me else me._as_expr()
            if e is None:
                return NotImplemented
            args.append(e)
        e = _expr.node(ufunc, args)
        if out is None:
            return _from_expr(me, e)
        target = out[0] if isinstance(out, tuple) else out
        if not isinstance(target, ndarray):
            return NotImplemented
        # np.add(a, b, out=z) again: z[...] = a + b's repeat path, without the result's wrapper.
        if target._last is not None and target._id is not None and target._last.run(e):
            return target
        target[...] = _from_expr(me, e)
        return target

    def __array_function__(self, func, types, args, kwargs):
        from . import _functions
        impl = _functions.HANDLED.get(func)
        if impl is None or not all(issubclass(t, (ndarray, np.ndarray)) for t in types):
            return NotImplemented
        return impl(*args, **kwargs)

    # NumPy-style methods
    def sum(self, axis=None, dtype=None, keepdims=False):
        from . import _functions
        return _functions.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False):
        from . import _functions
        return _functions.prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        from . import _functions
        return _functions.min(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        from . import _functions
        return _functions.max(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, keepdims=False):
        from . import _functions
        return _functions.mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def var(self, axis=None, dtype=None, ddof=0, keepdims=False):
        from . import _functions
        return _functions.var(self, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, dtype=None, ddof=0, keepdims=False):
        from . import _functions
        return _functions.std(self, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)

    def argmin(self, axis=None):
        from . import _functions
        return _functions.argmin(self, axis=axis)

    def argmax(self, axis=None):
        from . import _functions
        return _functions.argmax(self, axis=axis)

    def cumsum(self, axis=None, dtype=None):
        from . import _functions
        return _functions.cumsum(self, axis=axis, dtype=dtype)

    def any(self, axis=None, keepdims=False):
        from . import _functions
        return _functions.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims=False):
        from . import _functions
        return _functions.all(self, axis=axis, keepdims=keepdims)


def _whole(k):
    return k is Ellipsis or (isinstance(k, slice) and k == slice(None))


def _whole_key(key):
    """Whether an index selects the whole array (z[...] = e, z[:] = e)."""
    return _whole(key) or (isinstance(key, tuple) and all(_whole(k) for k in key))


class _HostView:
    """__array_interface__ of a host shard; the NumPy view keeps it (and the array) alive."""

    def __init__(self, array, ptr, shape, strides):
        self._array = array
        self.__array_interface__ = {"shape": tuple(shape), "typestr": array.dtype.str, "data": (ptr, False),
                                    "strides": tuple(strides), "version": 3}


class _PendingHalo:
    def __init__(self, h):
        self._h = h

    def end(self):
        if self._h is not None:
            _tessera.halo_exchange_end(self._h)
            self._h = None


def _errors_freed():
    from ._errors import InvalidHandle
    return InvalidHandle("the array was freed (tessera.finalize() ended its runtime)")


def _errors_ufunc_cast(ufunc, got, want):
    from ._errors import DtypeMismatch
    return DtypeMismatch(f"Cannot cast ufunc '{ufunc.__name__}' output from dtype('{got}') to dtype('{want}') "
                         "with casting rule 'same_kind'")


def check_compatible(a, b):
    """Operands of one elementwise operation: same shape, layout and device (else they raise)."""
    if a.shape != b.shape:
        raise ShapeMismatch(f"operands could not be broadcast together with shapes {a.shape} {b.shape} "
                            "(tessera's elementwise operations take arrays of one shape)")
    if a.device != b.device:
        raise DeviceMismatch(f"operands on {a.device} and {b.device} (rank {a._rt.rank}): move one with .to()")
    if a._key != b._key or a._key is None:
        if a._layout != b._layout and not _tessera.layouts_equal(a._layout, b._layout):
            raise LayoutMismatch(f"operands of shape {a.shape} split {a.split} and {b.split} (halos {a.halo} and "
                                 f"{b.halo}) lie differently (rank {a._rt.rank}): use .resplit() first")


def from_handle(rt, handle, like):
    """An ndarray over a new C API array (an algorithm's result, on its own layout)."""
    layout = _tessera.array_layout(handle)
    key = ("c", layout)
    rt._layouts[key] = layout  # freed with the runtime
    _, dtype_code, _ = _tessera.array_info(handle)
    return ndarray(rt, key, _dtypes.from_code(dtype_code), like.device, layout=layout, handle=handle)


def _from_expr(like, e):
    """A pending array holding expression e, of like's layout and device."""
    return ndarray._pending(like, e)


_casts = {}


def _can_cast(a, b):
    """np.can_cast(a, b, 'same_kind'), remembered (it is asked on every assignment)."""
    r = _casts.get((a, b))
    if r is None:
        r = _casts[(a, b)] = bool(np.can_cast(a, b, "same_kind"))
    return r


def assign(dst, e):
    """Evaluates expression e into dst's interior (dst is materialized)."""
    if isinstance(e, _expr.Const):
        e = _expr.cast(e, dst.dtype)
    if dst.device == "host":
        for leaf in _expr.leaves(e):
            leaf._handle()
        view = dst.shard()
        result = _expr.evaluate_host(e, lambda a: a.shard())
        view[...] = result
        return
    launch(dst, e)  # (it checks that the operands are alive)


class Broadcast:
    """An array read as the block of a larger one: its axes of extent 1 repeat (stride 0). An
    operand of GPU kernels only (var/std along axes subtract a mean so)."""

    def __init__(self, array, like):
        self.array, self.dtype, self.halo, self._shape = array, array.dtype, array.halo, like._view_geometry(False)[0]

    def _handle(self):
        return self.array._handle()

    @property
    def _id(self):
        return self.array._id

    @property
    def _foreign(self):
        return self.array._foreign

    def _view(self, halos):
        address, shape, strides = self.array._view(False)
        return address, self._shape, tuple(0 if n == 1 else s for n, s in zip(shape, strides))


# Kernel plans by expression structure, types and geometries (bounded: cleared when full).
_plans = {}


def in_elements(itemsize, byte_strides):
    return [x // itemsize for x in byte_strides]


def run_ordered(foreign, fn, *args):
    """fn(*args), work on Tessera's stream, ordered after and before the streams of the arrays
    `foreign` (handles of arrays over a caller's memory and stream: from_shards)."""
    if foreign:
        _tessera.streams_before(foreign)
    fn(*args)
    if foreign:
        _tessera.streams_after(foreign)


def launch(dst, e):
    """One fused kernel of the runtime kernel compiler: dst's interior = e. The per-call path of
    small expressions: where dst last took an expression of this structure over the same arrays,
    one launch with the new scalars; else lowering, one dict lookup, one launch."""
    last = dst._last
    if last is not None and last.run(e):
        return
    L = _expr.lower(e, dst.dtype)
    out, shape, strides = dst._view(False)
    if 0 in shape:
        return
    operands = L.operands
    views, geometry, foreign = [], [], []
    # Without halos (or broadcasting) every interior is contiguous and the kernel indexes flat.
    linear = not any(dst.halo)
    for a in operands:
        if a._id is None:
            a._handle()  # a freed array raises
        v = a._view(False)
        views.append(v[0])
        geometry.append(v[2])
        if linear and (any(a.halo) or type(a) is Broadcast):
            linear = False
        if a._foreign:
            foreign.append(a._id)
    key = (dst.device, linear, L.signature(), dst.dtype, shape, strides, tuple(geometry))
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) >= 1024:
            _plans.clear()
        plan = _plans[key] = _tessera.JitPlan(
            L.nodes, _dtypes.code(dst.dtype), list(shape), in_elements(dst.dtype.itemsize, strides),
            [in_elements(a.dtype.itemsize, g) for a, g in zip(operands, geometry)], linear)
    if dst._foreign:
        foreign.append(dst._id)
    # Remembered (_tessera.Repeat: run again when the next expression has this structure over
    # the same arrays, the same view objects) where e reads plain arrays of Tessera's own memory
    # (not broadcast ones, not a caller's) and each scalar once (a subtree e holds twice lowers
    # once: its scalars would not line up with e.consts).
    dst._last = None
    if not foreign and len(L.wants) == len(e.consts) and all(type(a) is ndarray for a in e.leaves):
        dst._last = _tessera.Repeat(plan, e.sig, tuple(a._views for a in e.leaves), out, views,
                                    [_dtypes.CODES[w] for w in L.wants])
    run_ordered(foreign, plan.launch, out, views, L.scalars)