"""tessera.ElementwiseKernel: CuPy's string kernels on distributed GPU arrays. The parameter lists
and the body are CuPy's (types concrete or placeholders bound by the first argument that uses
them, outputs as references, `i` the flat index); each rank runs the kernel on its own blocks,
so every array argument must lie alike (one layout, one device: elementwise work needs no
communication). Compiled by the runtime kernel compiler (NVRTC) and cached like fused
expressions."""
import numpy as np

from . import _dtypes, _tessera
from ._array import block_key, check_compatible, in_elements, ndarray, run_ordered
from ._errors import BackendUnavailable

_CONCRETE = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64,
             "complex64": np.complex64, "complex128": np.complex128}


def _params(text):
    """[(type, name)] of a parameter list such as "T x, float32 y"."""
    out = []
    for part in text.split(","):
        words = part.split()
        if not words:
            continue
        if len(words) != 2:
            raise ValueError(f"bad parameter {part.strip()!r} (want 'type name')")
        out.append((words[0], words[1]))
    return out


class ElementwiseKernel:
    """ElementwiseKernel(in_params, out_params, operation, name): k(inputs..., outputs...) runs
    `operation` per element; k(inputs...) allocates the outputs like the first array input."""

    def __init__(self, in_params, out_params, operation, name="tessera_elementwise"):
        self.in_params, self.out_params, self.operation, self.name = in_params, out_params, operation, name
        self._ins, self._outs = _params(in_params), _params(out_params)
        if not self._outs:
            raise ValueError("an ElementwiseKernel needs at least one output parameter")

    def __call__(self, *args):
        n_in, n_out = len(self._ins), len(self._outs)
        if len(args) not in (n_in, n_in + n_out):
            raise TypeError(f"Wrong number of arguments for '{self.name}': {n_in} inputs (and optionally {n_out} "
                            f"outputs), {len(args)} given")
        like = _common_layout(self.name, args)
        new = _output_dtypes(self._ins, self._outs, self.name, args[:n_in]) if len(args) == n_in else []
        if like.device == "host":
            raise BackendUnavailable(f"tessera.ElementwiseKernel '{self.name}' runs on GPU arrays (the runtime kernel "
                                     f"compiler); on host arrays write the expression with NumPy's ufuncs")
        args = list(args) + [ndarray(like._rt, like._key, d, like.device, layout=like._layout) for d in new]
        outputs = args[n_in:]
        for o in outputs:
            if not isinstance(o, ndarray):
                raise TypeError(f"output of '{self.name}' must be a tessera.ndarray, not {type(o).__name__}")
        packed = [self._pack(a) for a in args]
        if 0 in like._view(False)[1]:
            return _result(outputs)  # this rank holds no element
        foreign = [a._id for a in args if isinstance(a, ndarray) and a._foreign]
        run_ordered(foreign, _tessera.run_string_kernel, self.in_params, self.out_params, self.operation, self.name,
                    packed)
        return _result(outputs)

    @staticmethod
    def _pack(a):
        if isinstance(a, ndarray):
            a._handle()
            address, shape, strides = a._view(False)
            return (_dtypes.code(a.dtype), False, address, list(shape), in_elements(a.dtype.itemsize, strides), b"")
        if isinstance(a, (bool, int, float, complex, np.generic)):
            v = np.asarray(a)
            d = _dtypes.dtype_of(v.dtype)
            return (_dtypes.code(d), True, 0, [], [], v.astype(d).tobytes())
        raise TypeError(f"ElementwiseKernel arguments are tessera arrays or scalars, not {type(a).__name__}")


def _common_layout(name, args):
    """The first array argument of kernel `name`, after checking that every array argument lies
    as it does (elementwise work per rank needs no communication)."""
    arrays = [a for a in args if isinstance(a, ndarray)]
    if not arrays:
        raise TypeError(f"'{name}' needs at least one tessera.ndarray argument")
    for a in arrays[1:]:
        check_compatible(arrays[0], a)
    return arrays[0]


def _output_dtypes(ins, outs, name, inputs):
    """The outputs' dtypes: each declared type (a placeholder: the type of the first input of
    that placeholder)."""
    bound = {}
    for (t, _), a in zip(ins, inputs):
        if t not in _CONCRETE and t not in bound:
            bound[t] = a.dtype if isinstance(a, ndarray) else np.asarray(a).dtype
    dtypes = []
    for t, arg in outs:
        if t not in _CONCRETE and t not in bound:
            raise TypeError(f"output '{arg}' of '{name}' has type {t}, which no input binds: pass it")
        dtypes.append(_dtypes.dtype_of(_CONCRETE[t] if t in _CONCRETE else bound[t]))
    return dtypes


def _result(outputs):
    return outputs[0] if len(outputs) == 1 else tuple(outputs)



class ReductionKernel:
    """ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
    name, reduce_type=None), as CuPy's: `map_expr` per element (in terms of the inputs), combined
    by `reduce_expr` (in terms of a and b) from `identity`, then `post_map_expr` (in terms of the
    reduced value a, the outputs and n_reduced, the number of elements reduced: CuPy's
    _in_ind.size()) writes each output; `reduce_type` is the type of a and b (default: the first
    output's).
    k(inputs...) reduces over every element of the distributed inputs (axis=None) and returns the
    outputs as NumPy scalars, the same on every rank (one all-gather of each rank's partials).
    k(inputs..., axis=a, keepdims=False) reduces along an axis or a tuple of axes and returns
    distributed arrays (n_reduced: the elements per output)."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="tessera_reduction", reduce_type=None):
        self._code = [in_params, out_params, map_expr, reduce_expr, post_map_expr, str(identity), name,
                      reduce_type or ""]
        self.name = name
        self._ins, self._outs = _params(in_params), _params(out_params)
        if not self._outs:
            raise ValueError("a ReductionKernel needs at least one output parameter")

    def __call__(self, *args, axis=None, keepdims=False):
        if len(args) != len(self._ins):
            raise TypeError(f"Wrong number of arguments for '{self.name}': {len(self._ins)} inputs, {len(args)} "
                            f"given (the outputs are returned)")
        like = _common_layout(self.name, args)
        axes = tuple(range(like.ndim)) if axis is None else _reduced_axes(axis, like.ndim)
        if like.device == "host":
            raise BackendUnavailable(f"tessera.ReductionKernel '{self.name}' runs on GPU arrays (the runtime kernel "
                                     f"compiler); on host arrays write the reduction with NumPy's functions")
        dtypes = _output_dtypes(self._ins, self._outs, self.name, args)
        if len(axes) < like.ndim:
            return _result(self._along_axes(args, like, axes, dtypes, keepdims))
        values = self._whole(args, like, dtypes)
        if keepdims:
            from ._functions import full
            values = [full((1,) * like.ndim, v, dtype=d, device=like.device) for v, d in zip(values, dtypes)]
        return _result(values)

    def _whole(self, args, like, dtypes):
        """Every element reduced: NumPy scalars, the same on every rank."""
        arrays = [a for a in args if isinstance(a, ndarray)]
        packed = [ElementwiseKernel._pack(a) for a in args]
        foreign = [a._id for a in arrays if a._foreign]
        out = []
        run_ordered(foreign, lambda: out.extend(_tessera.run_reduction_kernel(
            self._code, like._id, packed, [_dtypes.code(d) for d in dtypes])))
        return [np.frombuffer(b, dtype=d)[0] for b, d in zip(out, dtypes)]

    def _along_axes(self, args, like, axes, dtypes, keepdims):
        """Reduced along `axes`: the arrays' reduced axes moved last (one gather by index where they
        are not last already) and joined into one, the rows held whole by every rank (balanced row
        blocks of the kept axes), then each rank's rows reduced by the kernel's row form."""
        from . import _functions
        kept = [d for d in range(like.ndim) if d not in axes]
        perm = kept + list(axes)
        kept_shape = tuple(like.shape[d] for d in kept)
        row = int(np.prod([like.shape[d] for d in axes], dtype=np.int64))
        target = block_key(like._rt, kept_shape + (row,), 0)
        moved = []
        for a in args:
            if not isinstance(a, ndarray):
                moved.append(a)
                continue
            m = _functions.transpose(a, perm) if perm != list(range(like.ndim)) else a
            if m.shape != target[1]:
                m = _functions.reshape(m, target[1])
            if m._key is None or m._key[:4] != target[:4]:
                m = m.resplit(0)
            moved.append(m)
        rows = next(m for m in moved if isinstance(m, ndarray))
        out_key = ("block", kept_shape + (1,), target[2], target[3], (0,) * (len(kept) + 1), target[5])
        outs = [ndarray(like._rt, out_key, d, like.device) for d in dtypes]
        if 0 not in rows._view(False)[1]:
            packed = [ElementwiseKernel._pack(a) for a in moved + outs]
            foreign = [a._id for a in args if isinstance(a, ndarray) and a._foreign]
            run_ordered(foreign, _tessera.run_reduction_rows, self._code, packed)
        shape = tuple(1 if d in axes else like.shape[d] for d in range(like.ndim)) if keepdims else kept_shape
        return [_functions.reshape(o, shape) for o in outs]


def _reduced_axes(axis, ndim):
    from ._array import normalize_axis
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(sorted(normalize_axis(a, ndim) for a in axes))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    return axes
