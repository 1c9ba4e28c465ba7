import numpy as np
import pytest

import tessera as ts
from conftest import NUMERIC, tol, values

SHAPE = (10, 7, 5)


def close(got, want):
    got = got.numpy() if isinstance(got, ts.ndarray) else got
    np.testing.assert_allclose(got, want, rtol=tol(np.asarray(want).dtype) * 10, atol=1e-4)


@pytest.mark.parametrize("split", [0, 2, (0, 1), None])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_whole_array(dtype, split):
    x = values(SHAPE, dtype)
    a = ts.asarray(x, split=split)
    close(np.sum(a), x.sum())
    close(ts.sum(a), x.sum())
    close(a.mean(), x.mean())
    close(ts.linalg.norm(a), np.linalg.norm(x))
    if np.dtype(dtype).kind != "c":
        assert ts.min(a) == x.min() and ts.max(a) == x.max() and np.max(a) == x.max()
        close(np.var(a), x.var())
        close(np.std(a, ddof=1), x.std(ddof=1))


@pytest.mark.parametrize("split", [0, 1, (0, 2), None])
@pytest.mark.parametrize("axis", [0, 1, 2, (0, 2), -1])
def test_along_axes(axis, split):
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=split)
    close(np.sum(a, axis=axis), x.sum(axis=axis))
    close(ts.sum(a, axis=axis, keepdims=True), x.sum(axis=axis, keepdims=True))
    close(ts.max(a, axis=axis), x.max(axis=axis))
    close(ts.min(a, axis=axis), x.min(axis=axis))
    close(ts.mean(a, axis=axis), x.mean(axis=axis))
    close(ts.var(a, axis=axis), x.var(axis=axis))
    close(ts.std(a, axis=axis), x.std(axis=axis))
    small = ts.asarray(x / 3, split=split)
    close(ts.prod(small, axis=axis), (x / 3).prod(axis=axis))


def test_integer_and_bool_reductions():
    x = values(SHAPE, np.int32)
    a = ts.asarray(x, split=0)
    s = ts.sum(a)
    assert s == x.sum() and s.dtype == x.sum().dtype
    assert ts.sum(a, axis=1).dtype == x.sum(axis=1).dtype
    m = a > 0
    assert ts.any(m) == np.any(x > 0) and ts.all(m) == np.all(x > 0)
    assert ts.all(a > -1000) and not ts.any(a > 1000)
    np.testing.assert_array_equal(ts.any(m, axis=0).numpy(), np.any(x > 0, axis=0))
    np.testing.assert_array_equal(ts.all(m, axis=(1, 2)).numpy(), np.all(x > 0, axis=(1, 2)))
    assert ts.sum(m) == np.sum(x > 0)


def test_reduction_of_an_expression():
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=1)
    close(np.sum(np.sin(a) * 2 + a), (np.sin(x) * 2 + x).sum())
    close(ts.sum(a * a, axis=0), (x * x).sum(axis=0))
