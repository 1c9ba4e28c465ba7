import numpy as np
import pytest

import tessera as ts
from tessera import _functions
from conftest import tol, values

SHAPE = (9, 7, 5)
ORDERED = [np.int32, np.int64, np.float32, np.float64]


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=tol(np.asarray(want).dtype) * 10, atol=1e-5)


@pytest.mark.parametrize("dtype", ORDERED)
def test_sort_argsort(dtype):
    x = values((41,), dtype)
    a = ts.asarray(x, split=0)
    np.testing.assert_array_equal(ts.sort(a).numpy(), np.sort(x))
    np.testing.assert_array_equal(np.sort(a).numpy(), np.sort(x))
    np.testing.assert_array_equal(x[ts.argsort(a).numpy()], np.sort(x))
    y = values(SHAPE, dtype)
    np.testing.assert_array_equal(np.sort(ts.asarray(y, split=1), axis=None).numpy(), np.sort(y, axis=None))


@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("split", [0, 2, (0, 1), None])
def test_sort_argsort_along_axes(dtype, split):
    x = values(SHAPE, dtype)
    if np.dtype(dtype).kind == "f":
        x[1, 2, :3] = [np.nan, -0.0, 0.0]  # NaNs last; -0.0 and 0.0 tie (stable)
    x[3, :, 1] = x[3, 0, 1]  # ties along axis 1
    a = ts.asarray(x, split=split)
    for axis in (0, 1, 2, -1):
        got = ts.sort(a, axis=axis)
        assert got.shape == x.shape and got.dtype == x.dtype
        np.testing.assert_array_equal(got.numpy(), np.sort(x, axis=axis))
        idx = ts.argsort(a, axis=axis)
        assert idx.dtype == np.int64
        np.testing.assert_array_equal(idx.numpy(), np.argsort(x, axis=axis, kind="stable"))
        close((got + a).numpy(), np.sort(x, axis=axis) + x)  # the result lies like its input
    np.testing.assert_array_equal(np.sort(a).numpy(), np.sort(x))  # NumPy's default: the last axis
    np.testing.assert_array_equal(np.argsort(a, axis=0).numpy(), np.argsort(x, axis=0, kind="stable"))
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        ts.sort(a, axis=3)


def test_sort_along_axis_of_uneven_and_empty_blocks():
    x = values((3, 11), np.float64)  # 3 rows over up to 4 ranks: some hold none
    a = ts.asarray(x, split=0)
    np.testing.assert_array_equal(ts.sort(a, axis=0).numpy(), np.sort(x, axis=0))
    np.testing.assert_array_equal(ts.argsort(a, axis=1).numpy(), np.argsort(x, axis=1, kind="stable"))
    e = ts.asarray(np.zeros((0, 5)), split=0)
    assert ts.sort(e, axis=1).shape == (0, 5)


@pytest.mark.parametrize("dtype", ORDERED + [np.complex64, np.bool_])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_scans(dtype, axis):
    x = values(SHAPE, dtype)
    if np.dtype(dtype).kind in "fc":
        x = x / 3
    a = ts.asarray(x, split=(0, 1))
    got = ts.cumsum(a, axis=axis)
    assert got.dtype == np.cumsum(x, axis=axis).dtype
    close(got.numpy(), np.cumsum(x, axis=axis))
    close(np.cumprod(a, axis=axis).numpy(), np.cumprod(x, axis=axis))
    close((got + a).numpy(), np.cumsum(x, axis=axis) + x)  # the scan lies like its input


@pytest.mark.parametrize("split", [0, 2, (0, 1)])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_arg_and_library_axis_reductions(split, axis):
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=split)
    assert ts.argmax(a) == x.argmax() and ts.argmin(a) == x.argmin() and a.argmax() == x.argmax()
    np.testing.assert_array_equal(ts.argmax(a, axis=axis).numpy(), x.argmax(axis=axis))
    np.testing.assert_array_equal(np.argmin(a, axis=axis).numpy(), x.argmin(axis=axis))
    # The C++ library's reductions along an axis (what GPU arrays use), checked on the host.
    for op, f in ((_functions._SUM, np.sum), (_functions._MAX, np.max), (_functions._MIN, np.min)):
        close(_functions.reduce_along(a, op, axis).numpy(), f(x, axis=axis))
        close(_functions.reduce_along(a, op, axis, keepdims=True).numpy(), f(x, axis=axis, keepdims=True))
    close(_functions._axis_reduce_cxx(a, (0, 2), "sum", np.dtype(np.float64), False).numpy(), x.sum(axis=(0, 2)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_matmul(dtype):
    m, n = values((12, 9), dtype), values((9, 6), dtype, 1)
    A, B = ts.asarray(m, split=0), ts.asarray(n, split=1)
    close((A @ B).numpy(), m @ n)
    close(np.matmul(A, B).numpy(), m @ n)
    close(ts.dot(A, B).numpy(), m @ n)
    v = values((10,), dtype)
    close(ts.dot(ts.asarray(v, split=0), ts.asarray(v, split=0)), np.dot(v, v))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("n", [0, 3, 41])
def test_bincount(dtype, n, runtime):
    x = (np.arange(n) * 7 % 11).astype(dtype)
    a = ts.asarray(x, split=0)
    np.testing.assert_array_equal(ts.bincount(a), np.bincount(x))
    np.testing.assert_array_equal(np.bincount(a, minlength=15), np.bincount(x, minlength=15))
    with pytest.raises(ValueError):
        ts.bincount(ts.asarray(np.array([1, -2, 3]), split=0))
    with pytest.raises(TypeError):
        ts.bincount(ts.asarray(np.array([1.0, 2.0]), split=0))
    w = values((n,), np.float64, seed=3)
    np.testing.assert_allclose(ts.bincount(a, weights=ts.asarray(w, split=0)), np.bincount(x, weights=w),
                               rtol=1e-12, atol=1e-12 * np.abs(w).sum())
    np.testing.assert_allclose(np.bincount(a, weights=w, minlength=20), np.bincount(x, weights=w, minlength=20),
                               rtol=1e-12, atol=1e-12 * np.abs(w).sum())


def test_take_histogram_nonzero():
    x = values((50,), np.float64)
    a = ts.asarray(x, split=0)
    idx = [49, 0, 7, 7, 23]
    np.testing.assert_array_equal(ts.take(a, idx).numpy(), x[idx])
    np.testing.assert_array_equal(np.take(a, ts.asarray(np.array(idx), split=0)).numpy(), x[idx])
    counts, edges = ts.histogram(a, bins=7)
    c, e = np.histogram(x, bins=7)
    np.testing.assert_array_equal(counts, c)
    np.testing.assert_allclose(edges, e)
    counts, _ = np.histogram(a, bins=4, range=(-1, 1))
    np.testing.assert_array_equal(counts, np.histogram(x, bins=4, range=(-1, 1))[0])
    np.testing.assert_array_equal(ts.flatnonzero(a > 1).numpy(), np.flatnonzero(x > 1))
    np.testing.assert_array_equal(np.nonzero(a > 1)[0].numpy(), np.nonzero(x > 1)[0])
    y3 = values((5, 6, 4), np.float64)
    for split in (0, 2, (0, 1)):
        got = np.nonzero(ts.asarray(y3, split=split) > 0)
        want = np.nonzero(y3 > 0)
        assert len(got) == 3
        for g, w in zip(got, want):
            assert g.dtype == np.int64
            np.testing.assert_array_equal(g.numpy(), w)
    assert all(g.shape == (0,) for g in np.nonzero(ts.zeros((3, 4), split=0)))
    y = values(SHAPE, np.int32)
    np.testing.assert_array_equal(ts.flatnonzero(ts.asarray(y, split=1)).numpy(), np.flatnonzero(y))


@pytest.mark.parametrize("split", [0, 1])
def test_ravel_put_compress(split):
    x = values((7, 5), np.float64)
    a = ts.asarray(x, split=split)
    np.testing.assert_array_equal(ts.ravel(a).numpy(), x.ravel())
    np.testing.assert_allclose(np.cumsum(a).numpy(), np.cumsum(x))  # the flattened array's
    np.testing.assert_array_equal(np.compress(a > 0.5, a).numpy(), x[x > 0.5])
    y = x.copy()
    np.put(a, [0, 34, 12], [-1.0, -2.0, -3.0])
    np.put(y, [0, 34, 12], [-1.0, -2.0, -3.0])
    ts.put(a, ts.asarray(np.array([3, 4]), split=0), 9.0)
    np.put(y, [3, 4], 9.0)
    np.testing.assert_array_equal(a.numpy(), y)
    for axis in (0, 1, -1):
        cond = np.arange(x.shape[axis]) % 3 != 1
        np.testing.assert_array_equal(np.compress(cond, a, axis=axis).numpy(), np.compress(cond, y, axis=axis))
        short = cond[:-2]  # NumPy: a shorter condition leaves the rest out
        np.testing.assert_array_equal(ts.compress(short, a, axis=axis).numpy(), np.compress(short, y, axis=axis))
        dist = ts.asarray(cond, split=0)  # a tessera condition stays distributed
        np.testing.assert_array_equal(ts.compress(dist, a, axis=axis).numpy(), np.compress(cond, y, axis=axis))
    none = np.compress(np.zeros(7, bool), a, axis=0)
    assert none.shape == (0, 5)
    with pytest.raises(IndexError):
        np.compress(np.ones(9, bool), a, axis=0)
    with pytest.raises(ValueError, match="1-d"):
        np.compress(np.ones((7, 1), bool), a, axis=0)


@pytest.mark.parametrize("split", [0, 1, None])
def test_histogram_edges_weights_density(split):
    x = values((23, 7), np.float64, seed=5)
    x[3, 2] = np.nan  # outside every bin, as NumPy's
    x[4, 4] = 3.0  # on the last edge: the last bin is closed
    a = ts.asarray(x, split=split)
    w = values((23, 7), np.float64, seed=6)
    for bins in ([-3.0, -1.0, 0.0, 0.5, 3.0], np.linspace(-2, 2, 9), list(np.geomspace(0.01, 3, 70))):
        c, e = ts.histogram(a, bins=bins)
        want, edges = np.histogram(x, bins=bins)
        np.testing.assert_array_equal(c, want)
        np.testing.assert_array_equal(e, edges)
        cw, _ = np.histogram(a, bins=bins, weights=ts.asarray(w, split=split))
        np.testing.assert_allclose(cw, np.histogram(x, bins=bins, weights=w)[0], rtol=1e-12, atol=1e-12 * np.abs(w).sum())
        cd, _ = ts.histogram(a, bins=bins, density=True)
        np.testing.assert_allclose(cd, np.histogram(x, bins=bins, density=True)[0], rtol=1e-12)
    cw, _ = ts.histogram(a, bins=5, range=(-2, 2), weights=w)  # NumPy weights, the same on every rank
    np.testing.assert_allclose(cw, np.histogram(x, bins=5, range=(-2, 2), weights=w)[0], rtol=1e-12, atol=1e-11)
