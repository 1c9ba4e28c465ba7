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
           "asin", "acos", "atan", "floor", "ceil", "round", "arg", "atan2", "where"]
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
    np.arctan2: "atan2", np.floor_divide: None, np.remainder: None, np.rint: None, np.square: None,
    np.sign: None, np.isnan: None, np.isinf: None, np.isfinite: None, np.log2: None, np.log10: None,
    np.exp2: None, np.cbrt: None, np.reciprocal: None, np.logical_xor: None, np.positive: None,
}
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
_LOGICAL = {"logical_and", "logical_or", "logical_not"}


class Leaf:
    __slots__ = ("array", "dtype")

    def __init__(self, array):
        self.array, self.dtype = array, array.dtype


class Const:
    __slots__ = ("value", "dtype")

    def __init__(self, value):
        self.value = value
        self.dtype = np.asarray(value).dtype  # the value's own type; promotion uses the value itself


class Node:
    __slots__ = ("ufunc", "args", "dtype")

    def __init__(self, ufunc, args, dtype):
        self.ufunc, self.args, self.dtype = ufunc, args, dtype


class Where:
    __slots__ = ("args", "dtype")

    def __init__(self, args, dtype):
        self.args, self.dtype = args, dtype


def _probe(x):
    """A stand-in for NumPy's type rules: an empty array of the dtype, or the scalar itself."""
    return x.value if isinstance(x, Const) else np.empty(0, x.dtype)


# NumPy 2 promotes Python scalars by their kind alone (NEP 50); NumPy 1 by their values.
_WEAK_SCALARS = int(np.__version__.split(".")[0]) >= 2
_result_types = {}


def _type_key(x):
    """What NumPy's result type depends on: an array's dtype, a scalar's type (and value where
    NumPy 1 looks at it)."""
    if isinstance(x, Const):
        v = x.value
        if _WEAK_SCALARS and (type(v) in (bool, float, complex) or (type(v) is int and -2**31 <= v < 2**31)):
            return type(v)  # (larger ints: NumPy checks that they fit, so the value is the key)
        return (x.dtype, v) if not _WEAK_SCALARS else x.dtype
    return x.dtype


def node(ufunc, args):
    """The node ufunc(*args) with NumPy's result dtype (TypeError where NumPy has no loop)."""
    key = (ufunc,) + tuple(_type_key(a) for a in args)
    try:
        dtype = _result_types.get(key)
    except TypeError:  # an unhashable scalar value
        key, dtype = None, None
    if dtype is None:
        out = ufunc(*[_probe(a) for a in args])
        dtype = np.asarray(out).dtype
        _dtypes.dtype_of(dtype)  # a result type Tessera lacks (float16, ...) is a TypeError
        if key is not None and len(_result_types) < 4096:
            _result_types[key] = dtype
    return Node(ufunc, args, dtype)


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
class Lowered:
    """The IR node list ((op, dtype code, a, b, c, slot) tuples), operands and scalar bytes."""

    def __init__(self):
        self.nodes, self.operands, self.scalars = [], [], []
        self._done = {}  # id of an array or node already lowered -> its node (each loads or computes once)

    def add(self, op, dtype, a=-1, b=-1, c=-1, slot=-1):
        nodes = self.nodes
        nodes.append((IR[op], _dtypes.CODES[dtype], a, b, c, slot))  # dtype: a NumPy dtype already
        return len(nodes) - 1

    def as_type(self, e, dtype):
        """Lowers e, converted to dtype (a cast node where NumPy converts it; scalars in place)."""
        if type(e) is Leaf:
            i = self.load(e)
            return i if e.dtype == dtype else self.add("cast", np.dtype(dtype), i)
        dtype = np.dtype(dtype)
        if isinstance(e, Const):
            self.scalars.append(np.asarray(e.value).astype(dtype).tobytes())
            return self.add("scalar", dtype, slot=len(self.scalars) - 1)
        i = self.lower(e)
        return i if e.dtype == dtype else self.add("cast", dtype, i)

    def load(self, e):
        """The load of leaf e's array: one operand however often the expression reads it."""
        i = self._done.get(id(e.array))
        if i is None:
            self.operands.append(e.array)
            i = self._done[id(e.array)] = self.add("load", e.dtype, slot=len(self.operands) - 1)
        return i

    def lower(self, e):
        if isinstance(e, Leaf):
            return self.load(e)
        if isinstance(e, Const):
            return self.as_type(e, e.dtype)
        i = self._done.get(id(e))
        if i is None:
            i = self._done[id(e)] = self.lower_node(e)
        return i

    def lower_node(self, e):
        if isinstance(e, Where):
            c = self.as_type(e.args[0], np.bool_)
            return self.add("where", e.dtype, c, self.as_type(e.args[1], e.dtype), self.as_type(e.args[2], e.dtype))
        if e.ufunc is None:  # astype
            return self.as_type(e.args[0], e.dtype)
        op = UFUNCS.get(e.ufunc)
        if op is None:
            raise NotImplementedError(f"{e.ufunc.__name__} has no GPU kernel in the runtime kernel compiler yet "
                                      "(it runs on host arrays)")
        operand = self.operand_type(op, e)
        ids = [self.as_type(a, operand) for a in e.args]
        return self.add(op, e.dtype, *ids)

    @staticmethod
    def operand_type(op, e):
        """The type NumPy computes op in: the common type of the operands for comparisons, bool
        for logical operations, the argument's own type for abs/conj of complex values, else the
        result type."""
        if op in _LOGICAL:
            return np.dtype(np.bool_)
        if op in _COMPARISONS:
            return np.result_type(*[_probe(a) for a in e.args])
        if op in ("abs", "conj") and e.args[0].dtype.kind == "c":
            return e.args[0].dtype
        return e.dtype


    def signature(self):
        """The structure and types of the lowered kernel, hashable (the operands' dtypes are in
        their load nodes; strides are the caller's part of a plan's key)."""
        return tuple(self.nodes)


def lower(e, out_dtype):
    """The IR of `out = e` (e converted to out_dtype)."""
    L = Lowered()
    L.as_type(e, out_dtype)
    return L
