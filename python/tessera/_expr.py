"""Lazy elementwise expressions and their lowering to the runtime kernel compiler's IR.

An expression is a tree of Leaf (a materialized array), Const (a Python or NumPy scalar) and Node
(a ufunc over children). Result types are NumPy's: each node's dtype is what the ufunc gives
for its operands' dtypes and scalars (computed on empty arrays, so NumPy's own promotion rules
apply, weak Python scalars included). Materializing evaluates the tree into one array:
  - on the host, with NumPy on each rank's shard (results identical to NumPy by construction);
  - on a GPU, as one fused kernel: the tree becomes the IR (local/jit/ir.hpp), with explicit
    casts wherever NumPy converts an operand, and the runtime kernel compiler (NVRTC) compiles
    it once per structure and types.
"""
import numpy as np

from . import _dtypes

# IR operations (tessera::local::jit::Op, in order).
_IR_OPS = ["load", "scalar", "neg", "logical_not", "abs", "sqrt", "exp", "log", "sin", "cos", "tan", "tanh",
           "real", "imag", "conj", "cast", "add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge",
           "logical_and", "logical_or", "minimum", "maximum", "pow", "rsqrt", "expm1", "log1p", "sinh", "cosh",
           "asin", "acos", "atan", "floor", "ceil", "round", "arg", "atan2", "where", "floor_divide", "remainder",
           "isnan", "isinf", "isfinite", "sign", "square", "reciprocal", "log2", "log10", "exp2", "cbrt",
           "logical_xor", "positive"]
IR = {name: i for i, name in enumerate(_IR_OPS)}

# NumPy ufuncs the expressions take, with their IR operation (None: host only).
UFUNCS = {
    np.negative: "neg", np.logical_not: "logical_not", np.absolute: "abs", np.sqrt: "sqrt", np.exp: "exp",
    np.log: "log", np.sin: "sin", np.cos: "cos", np.tan: "tan", np.tanh: "tanh", np.conjugate: "conj",
    np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div", np.equal: "eq",
    np.not_equal: "ne", np.less: "lt", np.less_equal: "le", np.greater: "gt", np.greater_equal: "ge",
    np.logical_and: "logical_and", np.logical_or: "logical_or", np.minimum: "minimum", np.maximum: "maximum",
    np.power: "pow", np.expm1: "expm1", np.log1p: "log1p", np.sinh: "sinh", np.cosh: "cosh",
    np.arcsin: "asin", np.arccos: "acos", np.arctan: "atan", np.floor: "floor", np.ceil: "ceil",
    np.arctan2: "atan2", np.floor_divide: "floor_divide", np.remainder: "remainder", np.rint: "round",
    np.square: "square", np.sign: "sign", np.isnan: "isnan", np.isinf: "isinf", np.isfinite: "isfinite",
    np.log2: "log2", np.log10: "log10", np.exp2: "exp2", np.cbrt: "cbrt", np.reciprocal: "reciprocal",
    np.logical_xor: "logical_xor", np.positive: "positive",
}
# The operand kinds (numpy.dtype.kind) the GPU kernels of these take; others run on host arrays only.
_GPU_KINDS = {
    "floor_divide": "iuf", "remainder": "iuf", "isnan": "biuf", "isinf": "biuf", "isfinite": "biuf", "sign": "iuf",
    "square": "iufc", "reciprocal": "fc", "log2": "f", "log10": "f", "exp2": "f", "cbrt": "f", "round": "f",
}
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
_LOGICAL = {"logical_and", "logical_or", "logical_not", "logical_xor"}
_PREDICATES = {"isnan", "isinf", "isfinite"}  # a bool of the argument in its own type


# Every expression has, besides its dtype:
#   sig     its structure and types, hashable, without the arrays' identities or the scalars'
#           values where their types alone decide (what its lowering depends on);
#   leaves  the arrays it reads, depth first, repeats included;
#   consts  its scalars, depth first;
#   tkey    what NumPy's result types depend on (_type_key).
# They are built as the tree is, so that a repeated assignment finds its kernel without lowering.
class Leaf:
    __slots__ = ("array", "dtype", "sig", "leaves", "consts", "tkey")

    def __init__(self, array):
        self.array, self.dtype = array, array.dtype
        self.sig = self.tkey = self.dtype
        self.leaves, self.consts = (array,), ()


class Const:
    __slots__ = ("value", "dtype", "sig", "leaves", "consts", "tkey")

    def __init__(self, value):
        self.value = value
        self.dtype = np.asarray(value).dtype  # the value's own type; promotion uses the value itself
        self.tkey = _type_key(self)
        self.sig, self.leaves, self.consts = ("scalar", self.tkey), (), (self,)


def _compose(e, head, args):
    """e's sig, leaves and consts from its arguments'."""
    e.tkey = e.dtype
    e.sig = (head, e.dtype) + tuple(a.sig for a in args)
    e.leaves = tuple(x for a in args for x in a.leaves)
    e.consts = tuple(x for a in args for x in a.consts)


class Node:
    """ufunc(*args) of NumPy's result dtype; op and operand: its IR operation and the type it
    computes in (Lowered.operand_type), set by node() (None for casts and host-only ufuncs)."""
    __slots__ = ("ufunc", "args", "dtype", "op", "operand", "sig", "leaves", "consts", "tkey")

    def __init__(self, ufunc, args, dtype, op=None, operand=None):
        self.ufunc, self.args, self.dtype, self.op, self.operand = ufunc, args, dtype, op, operand
        if len(args) == 2:  # (the common case, spelled out: it runs on every operator)
            a, b = args
            self.sig, self.tkey = (ufunc, dtype, a.sig, b.sig), dtype
            self.leaves, self.consts = a.leaves + b.leaves, a.consts + b.consts
        else:
            _compose(self, ufunc, args)


class Where:
    __slots__ = ("args", "dtype", "sig", "leaves", "consts", "tkey")

    def __init__(self, args, dtype):
        self.args, self.dtype = args, dtype
        _compose(self, "where", args)


def _probe(x):
    """A stand-in for NumPy's type rules: an empty array of the dtype, or the scalar itself."""
    return x.value if isinstance(x, Const) else np.empty(0, x.dtype)


# NumPy 2 promotes Python scalars by their kind alone (NEP 50); NumPy 1 by their values.
_WEAK_SCALARS = int(np.__version__.split(".")[0]) >= 2
_result_types = {}


def _type_key(x):
    """What NumPy's result type depends on: an array's dtype, a scalar's type (and value where
    NumPy 1 looks at it)."""
    if type(x) is not Const:
        return x.dtype
    v = x.value
    if _WEAK_SCALARS and (type(v) in (bool, float, complex) or (type(v) is int and -2**31 <= v < 2**31)):
        return type(v)  # (larger ints: NumPy checks that they fit, so the value is the key)
    return (x.dtype, v) if not _WEAK_SCALARS else x.dtype


def node(ufunc, args):
    """The node ufunc(*args) with NumPy's result dtype (TypeError where NumPy has no loop)."""
    key = (ufunc, args[0].tkey, args[1].tkey) if len(args) == 2 else (ufunc,) + tuple(a.tkey for a in args)
    try:
        known = _result_types.get(key)
    except TypeError:  # an unhashable scalar value
        key, known = None, None
    if known is None:
        out = ufunc(*[_probe(a) for a in args])
        dtype = np.asarray(out).dtype
        _dtypes.dtype_of(dtype)  # a result type Tessera lacks (float16, ...) is a TypeError
        op = UFUNCS.get(ufunc)
        known = (dtype, op, Lowered.operand_type(op, Node(ufunc, args, dtype)) if op else None)
        if key is not None and len(_result_types) < 4096:
            _result_types[key] = known
    return Node(ufunc, args, *known)


def where(args):
    out = np.where(*[_probe(a) for a in args])
    return Where(args, _dtypes.dtype_of(np.asarray(out).dtype))


def cast(x, dtype):
    """x as dtype (astype): an identity node the evaluators turn into a conversion."""
    return Node(None, [x], np.dtype(dtype))


# ---- host evaluation ----
def evaluate_host(e, view):
    """NumPy's value of e, where view(array) is an array's local interior."""
    if isinstance(e, Leaf):
        return view(e.array)
    if isinstance(e, Const):
        return e.value
    vals = [evaluate_host(a, view) for a in e.args]
    if isinstance(e, Where):
        return np.where(*vals)
    if e.ufunc is None:
        return np.asarray(vals[0]).astype(e.dtype)
    return e.ufunc(*vals)


def leaves(e, out=None):
    out = [] if out is None else out
    if isinstance(e, Leaf):
        out.append(e.array)
    elif isinstance(e, (Node, Where)):
        for a in e.args:
            leaves(a, out)
    return out


# ---- lowering to the IR ----
_scalars = {}


def scalar_bytes(value, dtype):
    """A scalar's bytes in dtype, remembered (bounded) for the values expressions repeat."""
    key = (type(value), value, dtype)
    try:
        b = _scalars.get(key) if value != 0 else None  # (0.0 and -0.0 are equal keys)
    except TypeError:
        return np.asarray(value).astype(dtype).tobytes()
    if b is None:
        b = np.asarray(value).astype(dtype).tobytes()
        if len(_scalars) < 4096:
            _scalars[key] = b
    return b


class Lowered:
    """The IR node list ((op, dtype code, a, b, c, slot) tuples), operands, scalar bytes and the
    type each scalar is converted to."""

    def __init__(self):
        self.nodes, self.operands, self.scalars, self.wants = [], [], [], []

    def signature(self):
        """The structure and types of the lowered kernel, hashable (the operands' dtypes are in
        their load nodes; strides are the caller's part of a plan's key)."""
        return tuple(self.nodes)

    @staticmethod
    def operand_type(op, e):
        """The type NumPy computes op in: the common type of the operands for comparisons, bool
        for logical operations, the argument's own type for abs/conj of complex values, else the
        result type."""
        if op in _LOGICAL:
            return np.dtype(np.bool_)
        if op in _COMPARISONS:
            return np.result_type(*[_probe(a) for a in e.args])
        if op in _PREDICATES or (op in ("abs", "conj") and e.args[0].dtype.kind == "c"):
            return e.args[0].dtype
        return e.dtype


_LOAD, _SCALAR, _CAST, _WHERE = IR["load"], IR["scalar"], IR["cast"], IR["where"]
_BOOL = np.dtype(np.bool_)


def lower(e, out_dtype):
    """The IR of `out = e` (e converted to out_dtype): each array loads once however often e
    reads it, each shared node is computed once, and a cast sits wherever NumPy converts a
    value. (This runs on every assignment of a GPU expression: one plain function.)"""
    L = Lowered()
    _emit(e, np.dtype(out_dtype), L.nodes, L.operands, L.scalars, L.wants, {})
    return L


def _emit(e, want, nodes, operands, scalars, wants, done):
    """The node of e converted to dtype `want`, appended to nodes (with its operands, scalars)."""
    codes = _dtypes.CODES
    t = type(e)
    if t is Const:
        scalars.append(scalar_bytes(e.value, want))
        wants.append(want)
        nodes.append((_SCALAR, codes[want], -1, -1, -1, len(scalars) - 1))
        return len(nodes) - 1
    key = id(e.array) if t is Leaf else id(e)
    i = done.get(key)
    if i is None:
        if t is Leaf:
            operands.append(e.array)
            nodes.append((_LOAD, codes[e.dtype], -1, -1, -1, len(operands) - 1))
        elif t is Where:
            c = _emit(e.args[0], _BOOL, nodes, operands, scalars, wants, done)
            x = _emit(e.args[1], e.dtype, nodes, operands, scalars, wants, done)
            y = _emit(e.args[2], e.dtype, nodes, operands, scalars, wants, done)
            nodes.append((_WHERE, codes[e.dtype], c, x, y, -1))
        elif e.ufunc is None:  # astype: a conversion
            i = _emit(e.args[0], e.dtype, nodes, operands, scalars, wants, done)
        else:
            if e.op is None or e.operand.kind not in _GPU_KINDS.get(e.op, e.operand.kind):
                what = e.ufunc.__name__ + ("" if e.op is None else f" of {e.operand}")
                raise NotImplementedError(f"{what} has no GPU kernel in the runtime kernel compiler yet (it runs on "
                                          "host arrays)")
            args = e.args
            a = _emit(args[0], e.operand, nodes, operands, scalars, wants, done)
            b = _emit(args[1], e.operand, nodes, operands, scalars, wants, done) if len(args) > 1 else -1
            nodes.append((IR[e.op], codes[e.dtype], a, b, -1, -1))
        if i is None:
            i = len(nodes) - 1
        done[key] = i
    if e.dtype == want:
        return i
    nodes.append((_CAST, codes[want], i, -1, -1, -1))
    return len(nodes) - 1
