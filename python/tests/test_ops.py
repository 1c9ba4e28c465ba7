import numpy as np
import pytest

import tessera as ts
from tessera import _dtypes, _expr, _tessera
from conftest import DTYPES, FLOATS, NUMERIC, tol, values

SHAPE = (9, 7, 4)


def pair(dtype, split=0, seed=0):
    x, y = values(SHAPE, dtype, seed), values(SHAPE, dtype, seed + 1)
    return ts.asarray(x, split=split), ts.asarray(y, split=split), x, y


def same(got, want, dtype=None):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    t = tol(dtype or want.dtype) if want.dtype.kind in "fc" else 0
    if t:
        np.testing.assert_allclose(got, want, rtol=t, atol=t)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_arithmetic(dtype):
    a, b, x, y = pair(dtype)
    same((a + b).numpy(), x + y)
    same((a - b).numpy(), x - y)
    same((a * b).numpy(), x * y)
    same((2 * a + b * 3).numpy(), 2 * x + y * 3)
    same((-a).numpy(), -x)
    same(abs(a).numpy(), abs(x))
    if np.dtype(dtype).kind != "i":
        same((a / (abs(b) + 1)).numpy(), x / (abs(y) + 1))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_comparisons_and_where(dtype):
    a, b, x, y = pair(dtype)
    for got, want in [(a < b, x < y), (a <= b, x <= y), (a > 0, x > 0), (a >= b, x >= y), (a == b, x == y),
                      (a != b, x != y)]:
        same(got.numpy(), want)
    same(ts.where(a > b, a, b).numpy(), np.where(x > y, x, y))
    same(np.where(a > 0, a, 0).numpy(), np.where(x > 0, x, 0))
    m = (a > 0) & (b > 0)
    same(m.numpy(), (x > 0) & (y > 0))
    same((~m).numpy(), ~((x > 0) & (y > 0)))
    same(((a > 0) | (b > 0)).numpy(), (x > 0) | (y > 0))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ufunc", [np.sin, np.cos, np.tan, np.exp, np.tanh, np.sinh, np.cosh, np.arctan, np.floor,
                                   np.ceil, np.expm1, np.exp2, np.cbrt, np.rint])
def test_ufuncs(ufunc, dtype):
    a, _, x, _ = pair(dtype)
    same(ufunc(a).numpy(), ufunc(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_ufuncs_of_positive_values(dtype):
    a, b, x, y = pair(dtype)
    pa, px = abs(a) + 0.5, abs(x) + 0.5
    for f in (np.sqrt, np.log, np.log1p, np.log2, np.log10, np.reciprocal):
        same(f(pa).numpy(), f(px))
    same(np.reciprocal(a + 1j).numpy(), np.reciprocal(x + 1j))
    same(np.arcsin(a / 4).numpy(), np.arcsin(x / 4))
    same(np.power(pa, 1.5).numpy(), np.power(px, 1.5))
    same((pa ** 2).numpy(), px ** 2)
    same(np.arctan2(a, b).numpy(), np.arctan2(x, y))
    same(np.minimum(a, b).numpy(), np.minimum(x, y))
    same(np.maximum(a, 0.0).numpy(), np.maximum(x, 0.0))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_numpys_division_rounding_and_predicates(dtype):
    """floor_divide and remainder take the divisor's sign (NumPy's, not C++'s truncation), by
    zero too; isnan/isinf/isfinite, sign, square, positive: on every device as NumPy."""
    a, b, x, y = pair(dtype)
    y = y.copy()
    y.flat[::5] = -y.flat[::5]
    y.flat[::7] = 0  # NumPy: 0 for integers (with a warning), inf/nan for reals
    if np.dtype(dtype).kind == "f":
        x = x.copy()
        x.flat[1:4] = [np.nan, np.inf, -np.inf]
    a, b = ts.asarray(x, split=0), ts.asarray(y, split=0)
    with np.errstate(all="ignore"):
        same((a // b).numpy(), x // y)
        same((a % b).numpy(), x % y)
        same(np.floor_divide(a, 3).numpy(), np.floor_divide(x, 3))
        same(np.remainder(-a, 4).numpy(), np.remainder(-x, 4))
        for f in (np.isnan, np.isinf, np.isfinite):
            same(f(a).numpy(), f(x))
        same(np.sign(a).numpy(), np.sign(x))
        same(np.square(a).numpy(), np.square(x))
        same((+a).numpy(), +x)
        same(np.logical_xor(a > 0, b > 0).numpy(), np.logical_xor(x > 0, y > 0))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex(dtype):
    a, b, x, y = pair(dtype)
    same((a * b + a).numpy(), x * y + x)
    same(np.conjugate(a).numpy(), np.conjugate(x))
    same(np.absolute(a).numpy(), np.absolute(x))
    same(np.exp(a).numpy(), np.exp(x))


def test_promotion_is_numpys():
    for dx, dy in [(np.int32, np.float32), (np.int64, np.float32), (np.float32, np.float64), (np.int32, np.int64),
                   (np.float32, np.complex64), (np.bool_, np.int32)]:
        x, y = values(SHAPE, dx), values(SHAPE, dy, 1)
        a, b = ts.asarray(x, split=0), ts.asarray(y, split=0)
        same((a + b).numpy(), x + y)
    a = ts.asarray(values(SHAPE, np.float32), split=0)
    assert (a * 2.0).dtype == (values(SHAPE, np.float32) * 2.0).dtype  # weak Python scalars
    i = ts.asarray(values(SHAPE, np.int32), split=0)
    assert (i / 2).dtype == np.float64 and (i + 1).dtype == np.int32


def test_lazy_until_read_and_fused_assignment():
    a, b, x, y = pair(np.float64)
    z = ts.zeros(SHAPE, split=0)
    e = a * b + 1.0
    assert e._expr is not None  # nothing computed yet
    z[...] = e
    same(z.numpy(), x * y + 1.0)
    z[...] = np.exp(a) * b
    same(z.numpy(), np.exp(x) * y)
    z[:] = 3
    same(z.numpy(), np.full(SHAPE, 3.0))
    np.multiply(a, b, out=z)
    same(z.numpy(), x * y)


def test_repeated_assignments_read_their_own_arrays_and_scalars():
    """A destination remembers the kernel of its last expression (GPU arrays): the same structure
    over other arrays, other scalars or another shape of tree must not reuse it."""
    a, b, x, y = pair(np.float64)
    c = ts.asarray(x * 3, split=0)
    z = ts.zeros(SHAPE, split=0)
    for k in range(3):
        z[...] = a + b
        same(z.numpy(), x + y)
        z[...] = c + b  # same structure, another array
        same(z.numpy(), x * 3 + y)
        z[...] = a * (k + 0.5)  # a new scalar each time
        same(z.numpy(), x * (k + 0.5))
        z[...] = a + a  # one array read twice
        same(z.numpy(), x + x)
        z[...] = b + a
        same(z.numpy(), y + x)
    d = ts.asarray(y, split=0)
    z[...] = d * b
    same(z.numpy(), y * y)
    del d
    e = ts.asarray(x, split=0)  # may reuse d's memory and handle slot
    z[...] = e * b
    same(z.numpy(), x * y)
    for k in range(2):  # ufuncs with out= take the same repeat path
        np.add(a, b, out=z)
        same(z.numpy(), x + y)
        np.add(c, b, out=z)
        same(z.numpy(), x * 3 + y)
        np.multiply(a, k + 0.5, out=z)
        same(z.numpy(), x * (k + 0.5))


def test_repeat_matches_only_the_same_structure_over_the_same_arrays():
    """The per-destination kernel of GPU assignments (_tessera.Repeat, made here without a kernel:
    it only matches): the same arrays and structure repeat, with each call's scalars in the
    kernel's types; other arrays, structures, scalar types or a dead array do not."""
    a, b, x, y = pair(np.float64)
    c = ts.asarray(x, split=0)
    i = ts.asarray(values(SHAPE, np.int32), split=0)
    for t in (a, b, c, i):
        t._view(False)
    views = lambda e: tuple(t._views for t in e.leaves)

    def repeat(e, wants=()):
        return _tessera.Repeat(None, e.sig, views(e), 0, [], [_dtypes.code(w) for w in wants])

    e = (a + b)._expr
    r = repeat(e)
    assert r.match((a + b)._expr) == []
    assert r.match((c + b)._expr) is None  # another array
    assert r.match((b + a)._expr) is None
    assert r.match((a - b)._expr) is None  # another structure
    assert r.match((a + b + b)._expr) is None
    # NumPy 2 types Python scalars by kind alone: a new value repeats. NumPy 1 looks at values
    # (the structure holds them): only the same value does.
    new = (lambda v, old: v) if _expr._WEAK_SCALARS else (lambda v, old: old)
    s = repeat((a * 2.0)._expr, [np.float64])
    assert s.match((a * new(3.5, 2.0))._expr) == [np.float64(new(3.5, 2.0)).tobytes()]
    assert s.match((a * 1j)._expr) is None  # a complex scalar: another result type
    assert s.match((a * np.float32(2))._expr) is None  # a NumPy scalar: another structure
    k = repeat((i + 7)._expr, [np.int32])
    assert k.match((i + new(-5, 7))._expr) == [np.int32(new(-5, 7)).tobytes()]
    f = repeat((a * 2.0 + 1.0)._expr, [np.float64, np.float64])
    assert f.match((a * new(0.25, 2.0) + new(-1.0, 1.0))._expr) == [np.float64(new(0.25, 2.0)).tobytes(),
                                                                  np.float64(new(-1.0, 1.0)).tobytes()]
    z = repeat((a * (1 + 2j))._expr, [np.complex128])
    assert z.match((a * new(3 - 4j, 1 + 2j))._expr) == [np.complex128(new(3 - 4j, 1 + 2j)).tobytes()]
    c._id = None  # a freed array (as finalize() leaves it)
    try:
        assert repeat((c + b)._expr).match((c + b)._expr) is None
    finally:
        c._id = c._views[0]
    with pytest.raises(ts.InvalidArgument, match="only matches"):
        r.run((a + b)._expr)  # no kernel: it only matches


def test_inplace():
    a, b, x, y = pair(np.float64)
    a += b
    a *= 2
    a -= 1
    a /= 4
    same(a.numpy(), ((x + y) * 2 - 1) / 4)
    i = ts.asarray(values(SHAPE, np.int32), split=0)
    with pytest.raises(TypeError):
        i /= 2  # float into int: NumPy's same_kind rule refuses too


@pytest.mark.parametrize("dtype", DTYPES)
def test_astype(dtype):
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=1)
    same(a.astype(dtype).numpy(), x.astype(dtype))


def test_halo_arrays_compute_on_interiors():
    x, y = values(SHAPE, np.float64), values(SHAPE, np.float64, 1)
    a = ts.asarray(x, split=0, halo=1)
    b = ts.asarray(y, split=0, halo=1)
    same((a * b - a).numpy(), x * y - x)


def test_host_only_ufuncs_name_themselves_on_gpus():
    """What the GPU kernels do not take is refused when lowered, naming the ufunc and its type."""
    leaf = lambda d: _expr.Leaf(type("A", (), {"dtype": np.dtype(d)})())
    for e, out in [(_expr.node(np.sign, [leaf(np.complex64)]), np.complex64),
                   (_expr.node(np.reciprocal, [leaf(np.int32)]), np.int32)]:
        with pytest.raises(NotImplementedError, match="has no GPU kernel"):
            _expr.lower(e, out)


def test_generated_kernels_compile(runtime):
    """The IR that GPU arrays launch, compiled by NVRTC here (no GPU needed)."""
    if not _tessera.nvrtc_available():
        pytest.skip("no NVRTC in this build")
    if runtime.rank != 0:
        return
    leaf = lambda d: _expr.Leaf(type("A", (), {"dtype": np.dtype(d)})())
    exprs = [
        (_expr.node(np.add, [_expr.node(np.multiply, [leaf(np.float32), leaf(np.float32)]), leaf(np.float32)]),
         np.float32),
        (_expr.node(np.multiply, [_expr.node(np.exp, [leaf(np.float64)]), leaf(np.float64)]), np.float64),
        (_expr.node(np.less, [leaf(np.int32), _expr.Const(0.5)]), np.bool_),
        (_expr.where([_expr.node(np.greater, [leaf(np.float64), _expr.Const(0)]), leaf(np.int32), _expr.Const(0)]),
         np.float64),
        (_expr.node(np.absolute, [leaf(np.complex64)]), np.float32),
        (_expr.node(np.true_divide, [leaf(np.int64), _expr.Const(2)]), np.float64),
        (_expr.cast(leaf(np.float64), np.int32), np.int32),
        (_expr.node(np.logical_and, [leaf(np.bool_), leaf(np.bool_)]), np.bool_),
        (_expr.cast(_expr.Const(1), np.float64), np.float64),  # full(): a scalar alone
        (_expr.cast(_expr.Const(3), np.complex64), np.complex64),
        (_expr.node(np.equal, [leaf(np.complex128), leaf(np.complex128)]), np.bool_),
        (_expr.node(np.power, [leaf(np.float32), _expr.Const(1.5)]), np.float32),
        (_expr.node(np.maximum, [leaf(np.int32), _expr.Const(0)]), np.int32),
        (_expr.cast(leaf(np.bool_), np.float32), np.float32),
        (_expr.node(np.floor_divide, [leaf(np.int32), leaf(np.int32)]), np.int32),
        (_expr.node(np.remainder, [leaf(np.float64), _expr.Const(3.0)]), np.float64),
        (_expr.node(np.isnan, [leaf(np.float32)]), np.bool_),
        (_expr.node(np.isinf, [leaf(np.int64)]), np.bool_),
        (_expr.node(np.isfinite, [leaf(np.float64)]), np.bool_),
        (_expr.node(np.sign, [leaf(np.int64)]), np.int64),
        (_expr.node(np.square, [leaf(np.complex64)]), np.complex64),
        (_expr.node(np.reciprocal, [leaf(np.complex128)]), np.complex128),
        (_expr.node(np.log2, [leaf(np.int32)]), np.float64),
        (_expr.node(np.cbrt, [leaf(np.float32)]), np.float32),
        (_expr.node(np.logical_xor, [leaf(np.bool_), leaf(np.bool_)]), np.bool_),
        (_expr.node(np.rint, [leaf(np.float64)]), np.float64),
    ]
    for e, out in exprs:
        L = _expr.lower(e, out)
        code = ts._dtypes.code(out)
        for linear in (True, False):
            assert _tessera.jit_compile(list(L.nodes), code, 3, linear, 90) > 0


@pytest.mark.parametrize("split", [0, 1, (0, 1)])
def test_broadcasting(split, runtime):
    x = values((9, 7, 5), np.float64)
    a = ts.asarray(x, split=split)
    row, col = values((5,), np.float64, seed=1), values((9, 1, 1), np.float64, seed=2)
    r, c = ts.asarray(row, split=0), ts.asarray(col, split=0)
    np.testing.assert_allclose((a + r).numpy(), x + row)
    np.testing.assert_allclose((r * a).numpy(), row * x)
    np.testing.assert_allclose(np.maximum(a, c).numpy(), np.maximum(x, col))
    np.testing.assert_allclose((c - r).numpy(), col - row)  # neither has the result's shape
    assert (c - r).shape == (9, 1, 5)
    big = values((9, 7, 5), np.float64, seed=3)[:, :1, :]  # (9, 1, 5): a take rather than a copy per rank
    m = ts.asarray(big, split=0)
    np.testing.assert_allclose((a / (m + 4)).numpy(), x / (big + 4))
    a += r
    x += row
    np.testing.assert_allclose(a.numpy(), x)
    np.testing.assert_allclose(ts.broadcast_to(r, (3, 5)).numpy(), np.broadcast_to(row, (3, 5)))
    np.testing.assert_allclose(np.broadcast_to(c, (9, 2, 3)).numpy(), np.broadcast_to(col, (9, 2, 3)))
    if a.device == "host":  # a NumPy operand of a host array: every rank writes its own block
        np.testing.assert_allclose((a * row).numpy(), x * row)
        np.testing.assert_allclose((x == a).numpy(), x == x)
    with pytest.raises(ValueError):
        ts.broadcast_to(r, (5, 4))


def test_where_broadcasts(runtime):
    x = values((6, 5), np.float64)
    a = ts.asarray(x, split=0)
    row = values((5,), np.float64, seed=4)
    r = ts.asarray(row, split=0)
    np.testing.assert_array_equal(np.where(a > 0, a, r).numpy(), np.where(x > 0, x, row))
    np.testing.assert_array_equal(ts.where(r > 0, 1.0, a).numpy(), np.where(row > 0, 1.0, x))
    col = ts.asarray(x[:, :1], split=0)
    np.testing.assert_array_equal(ts.where(col > 0, r, 0.0).numpy(), np.where(x[:, :1] > 0, row, 0.0))
    if a.device == "host":
        np.testing.assert_array_equal(ts.where(a > 0, a, row).numpy(), np.where(x > 0, x, row))
    with pytest.raises(ts.ShapeMismatch):
        ts.where(a > 0, a, ts.zeros((4,), split=0))


def test_shape_functions():
    a = ts.zeros((6, 5, 4), split=1)
    assert np.shape(a) == (6, 5, 4) and np.ndim(a) == 3 and np.size(a) == 120 and np.size(a, axis=-1) == 4


def test_where_of_the_condition_alone():
    x = values((6, 5), np.float64)
    a = ts.asarray(x, split=1)
    for got, want in zip(np.where(a > 0.5), np.where(x > 0.5)):
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError, match="both or neither"):
        ts.where(a > 0, a)
