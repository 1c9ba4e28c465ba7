import numpy as np
import pytest

import tessera as ts
from conftest import values

SHAPE = (17, 13, 5)
KEYS = [np.s_[3:11], np.s_[2:15:3, :, ::2], np.s_[..., 1:4], np.s_[16:], np.s_[5:5], np.s_[::4, ::5, 1:2],
        np.s_[-3:, 2:9:2, -1], np.s_[:, :, 0], np.s_[1:2, 3:4, 2:3]]


@pytest.mark.parametrize("split", [0, 1, (0, 1), None])
@pytest.mark.parametrize("key", range(len(KEYS)))
def test_read(split, key):
    x = values(SHAPE, np.float64)
    a = ts.asarray(x, split=split)
    k = KEYS[key]
    got = a[k]
    np.testing.assert_array_equal(got.numpy(), x[k])
    assert got.shape == x[k].shape


def test_integer_index_on_a_split_axis_raises():
    a = ts.asarray(values(SHAPE, np.float64), split=0)
    with pytest.raises(NotImplementedError):
        a[3]
    np.testing.assert_array_equal(a[3:4].numpy()[0], values(SHAPE, np.float64)[3])


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
