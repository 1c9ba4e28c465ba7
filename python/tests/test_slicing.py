import numpy as np
import pytest

import tessera as ts
from conftest import values

SHAPE = (17, 13, 5)
KEYS = [np.s_[3:11], np.s_[2:15:3, :, ::2], np.s_[..., 1:4], np.s_[16:], np.s_[5:5], np.s_[::4, ::5, 1:2],
        np.s_[-3:, 2:9:2, -1], np.s_[:, :, 0], np.s_[1:2, 3:4, 2:3],
        # negative steps and integers on split axes: gathered by global index
        np.s_[::-1], np.s_[14:2:-3, :, ::-2], np.s_[3], np.s_[-2, ::-1, 4], np.s_[5:1:-1, 7], np.s_[0:5:-1],
        np.s_[:, ::-4, 1:2]]


@pytest.mark.parametrize("split", [0, 1, (0, 1), None])
@pytest.mark.parametrize("key", range(len(KEYS)))
def test_read(split, key):
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=split)
    k = KEYS[key]
    got = a[k]
    np.testing.assert_array_equal(got.numpy(), x[k])
    assert got.shape == x[k].shape


def test_integer_index_on_a_split_axis_and_negative_steps():
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=0)
    np.testing.assert_array_equal(a[3].numpy(), x[3])
    assert a[3].shape == (13, 5)
    np.testing.assert_array_equal(a[::-1][::-1].numpy(), x)
    assert a[3, 4, 2] == x[3, 4, 2]
    v = ts.asarray(np.arange(10.0), split=0)
    np.testing.assert_array_equal(v[::-1].numpy(), np.arange(10.0)[::-1])
    np.testing.assert_array_equal((v[::-1] + v).numpy(), np.full(10, 9.0))  # a result lies like a new array
    a[::-2, 3] = -1.0  # negative steps scatter by global index
    x = x.copy()
    x[::-2, 3] = -1.0
    np.testing.assert_array_equal(a.numpy(), x)


@pytest.mark.parametrize("split", [0, 1, (0, 1), None])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex128, np.bool_])
def test_reshape(split, dtype):
    x = values(SHAPE, dtype)
    a = ts.asarray(x, split=split)
    for shape in [(13, 17, 5), (-1,), (5, -1), (17 * 13, 5), (1, 17, 13, 5), (85, 13)]:
        got = a.reshape(shape)
        want = x.reshape(shape)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
        assert got.split == 0  # balanced row blocks
    np.testing.assert_array_equal(np.reshape(a, (5, 221)).numpy(), x.reshape(5, 221))
    np.testing.assert_array_equal(a.reshape(13, 85).numpy(), x.reshape(13, 85))
    np.testing.assert_array_equal((a.reshape(-1) * 2).numpy(), x.reshape(-1) * 2)
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape(7, 7)
    with pytest.raises(ValueError, match="one unknown"):
        a.reshape(-1, -1)
    with pytest.raises(NotImplementedError, match="order"):
        a.reshape(-1, order="F")
    e = ts.zeros((0, 4), split=0)
    assert e.reshape(4, 0).shape == (4, 0)


@pytest.mark.parametrize("split", [0, 2, (0, 1)])
def test_write(split):
    x = values(SHAPE, np.int64)
    a = ts.asarray(x, split=split)
    a[2:9, 3] = -1
    x[2:9, 3] = -1
    a[..., ::2] = 7
    x[..., ::2] = 7
    a[1, 1:3, :] = np.full((2, 5), 5)
    x[1, 1:3, :] = 5
    np.testing.assert_array_equal(a.numpy(), x)


def test_boundary_condition_then_expression():
    u = ts.zeros((12, 12), split=0)
    u[0, :] = 1.0
    u[:, -1] = 2.0
    w = u * 2 + 1
    x = np.zeros((12, 12))
    x[0, :] = 1.0
    x[:, -1] = 2.0
    np.testing.assert_array_equal(w.numpy(), x * 2 + 1)
    np.testing.assert_array_equal((u[1:-1, 1:-1] + 1).numpy(), x[1:-1, 1:-1] + 1)


@pytest.mark.parametrize("split", [0, 1, (0, 1), None])
def test_transpose(split):
    x = values(SHAPE, np.float32)
    a = ts.asarray(x, split=split)
    np.testing.assert_array_equal(a.T.numpy(), x.T)
    for axes in [(1, 0, 2), (2, 0, 1), (0, -1, 1)]:
        np.testing.assert_array_equal(np.transpose(a, axes).numpy(), np.transpose(x, axes))
        np.testing.assert_array_equal(a.transpose(*axes).numpy(), x.transpose(*axes))
    assert a.transpose(0, 1, 2) is a
    m = ts.asarray(x[:, :, 0], split=split if split != (0, 1) else 0)
    np.testing.assert_array_equal(m.T.numpy(), x[:, :, 0].T)
    with pytest.raises(ValueError, match="axes"):
        np.transpose(a, (0, 0, 1))


@pytest.mark.parametrize("split", [0, 1, (0, 1), None])
def test_advanced_indexing(split, runtime):
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=split)
    for key in [np.s_[[3, 0, 16, 3]], np.s_[:, [-1, 2]], np.s_[..., [4, 0]], np.s_[2, [1, 5, 7]],
                np.s_[1:9:2, [0, 12], 3], np.s_[3, :, [1, 2]], np.s_[np.array([[1, 2], [3, 4]])],
                np.s_[:, np.arange(13) % 3 == 0], np.s_[[]], np.s_[np.int64(5)]]:
        got = a[key]
        want = x[key]
        if np.ndim(want) == 0:
            assert got == want
            continue
        assert got.shape == want.shape, key
        np.testing.assert_array_equal(got.numpy(), want)
    idx = ts.asarray(np.array([4, -1, 0, 4]), split=0)
    np.testing.assert_array_equal(a[:, idx].numpy(), x[:, [4, -1, 0, 4]])
    mask = x > 0.5
    np.testing.assert_array_equal(a[mask].numpy(), x[mask])
    np.testing.assert_array_equal(a[a > 0.5].numpy(), x[mask])


@pytest.mark.parametrize("split", [0, 2, (0, 1)])
def test_advanced_and_distributed_assignment(split):
    x = values(SHAPE, np.int64)
    a = ts.asarray(x, split=split)
    a[[1, 4, 16]] = -7
    x[[1, 4, 16]] = -7
    a[:, [0, 3], 2] = np.arange(34).reshape(17, 2)
    x[:, [0, 3], 2] = np.arange(34).reshape(17, 2)
    a[x > 20] = 0
    x[x > 20] = 0
    a[a < -20] = np.arange(np.count_nonzero(x < -20))
    x[x < -20] = np.arange(np.count_nonzero(x < -20))
    np.testing.assert_array_equal(a.numpy(), x)
    # a distributed value, any layout, and negative steps
    b = ts.asarray(values((9, 13, 5), np.int64, seed=2), split=1)
    a[2:11] = b
    x[2:11] = b.numpy()
    a[14:1:-3, ::-1, 1] = b[:5, :, 3]
    x[14:1:-3, ::-1, 1] = b.numpy()[:5, :, 3]
    a[1:3, 4] = a[5:7, 4]
    x[1:3, 4] = x[5:7, 4]
    np.testing.assert_array_equal(a.numpy(), x)


@pytest.mark.parametrize("split", [0, 1, None])
def test_index_arrays_broadcast_together(split):
    x = values((7, 6, 5), np.float64)
    a = ts.asarray(x, split=split)
    rows, cols = np.array([0, 6, -1, 3]), np.array([[1], [5]])
    for key in [np.s_[rows, [0, 1, 2, 3], 4], np.s_[rows, cols, 2], np.s_[[1, 2], [3, 4], [0, -1]], np.s_[[], [], []]]:
        np.testing.assert_array_equal(a[key].numpy(), x[key])
        assert a[key].shape == x[key].shape
    t = ts.asarray(np.array([2, 0, 5]), split=0)
    np.testing.assert_array_equal(a[t, t, 1].numpy(), x[[2, 0, 5], [2, 0, 5], 1])
    a[rows, cols, 2] = -1.0
    x[rows, cols, 2] = -1.0
    a[[1, 2], [3, 4], [0, -1]] = np.array([7.0, 8.0])
    x[[1, 2], [3, 4], [0, -1]] = np.array([7.0, 8.0])
    np.testing.assert_array_equal(a.numpy(), x)
    with pytest.raises(IndexError, match="broadcast"):
        a[[0, 1], [0, 1, 2], 0]
    with pytest.raises(NotImplementedError, match="beside slices"):
        a[[0, 1], :, [0, 1]]
