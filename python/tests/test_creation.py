import numpy as np
import pytest

import tessera as ts
from conftest import DTYPES, SPLITS, local_values, values

SHAPE = (17, 13, 5)  # uneven blocks at 2-4 ranks


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_ones_full(dtype, split):
    z = ts.zeros(SHAPE, dtype=dtype, split=split)
    assert z.shape == SHAPE and z.dtype == np.dtype(dtype) and z.ndim == 3 and z.size == np.prod(SHAPE)
    np.testing.assert_array_equal(z.numpy(), np.zeros(SHAPE, dtype))
    np.testing.assert_array_equal(ts.ones(SHAPE, dtype=dtype, split=split).numpy(), np.ones(SHAPE, dtype))
    f = ts.full(SHAPE, 1, dtype=dtype, split=split)
    np.testing.assert_array_equal(f.numpy(), np.full(SHAPE, 1, dtype))


@pytest.mark.parametrize("split", [0, None])
def test_arange_linspace(split):
    np.testing.assert_array_equal(ts.arange(23, split=split).numpy(), np.arange(23))
    np.testing.assert_array_equal(ts.arange(3, 40, 4, split=split).numpy(), np.arange(3, 40, 4))
    np.testing.assert_allclose(ts.arange(0.5, 7.0, 0.25, split=split).numpy(), np.arange(0.5, 7.0, 0.25))
    assert ts.arange(5, dtype=np.float32).dtype == np.float32
    np.testing.assert_allclose(ts.linspace(-1, 2, 29, split=split).numpy(), np.linspace(-1, 2, 29), rtol=1e-15)
    np.testing.assert_allclose(ts.linspace(0, 1, 10, endpoint=False).numpy(), np.linspace(0, 1, 10, endpoint=False))


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_asarray_and_gather(dtype, split, runtime):
    x = values(SHAPE, dtype)
    a = ts.asarray(x, split=split)
    np.testing.assert_array_equal(a.numpy(), x)
    g = a.gather(root=runtime.size - 1)
    if runtime.rank == runtime.size - 1:
        np.testing.assert_array_equal(g, x)
    else:
        assert g is None
    # This rank's block is its part of the global array.
    np.testing.assert_array_equal(local_values(a.local), x[a.block])


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex64])
def test_asarray_from_one_root(dtype, runtime):
    x = values((9, 4), dtype) if runtime.rank == 0 else None
    a = ts.asarray(x, split=1, root=0)
    np.testing.assert_array_equal(a.numpy(), values((9, 4), dtype))


def test_empty_blocks(runtime):
    # More ranks than rows: some blocks are empty.
    x = np.arange(2 * 3, dtype=np.float64).reshape(2, 3)
    a = ts.asarray(x, split=0)
    np.testing.assert_array_equal(a.numpy(), x)
    assert float(ts.sum(a)) == x.sum()
    e = ts.zeros((0, 4), split=0)
    assert e.numpy().shape == (0, 4) and float(ts.sum(e)) == 0.0


def test_random_is_the_same_on_any_split():
    u0 = ts.random.uniform(size=(11, 7, 3), split=0, seed=5)
    u1 = ts.random.uniform(size=(11, 7, 3), split=(1, 2), seed=5)
    un = ts.random.uniform(size=(11, 7, 3), split=None, seed=5)
    np.testing.assert_array_equal(u0.numpy(), u1.numpy())
    np.testing.assert_array_equal(u0.numpy(), un.numpy())
    v = u0.numpy()
    assert v.min() >= 0 and v.max() < 1 and 0.4 < v.mean() < 0.6
    n = ts.random.normal(2.0, 0.5, size=(4000,), split=0, seed=1).numpy()
    assert abs(n.mean() - 2.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    a, b = ts.random.uniform(size=(50,)), ts.random.uniform(size=(50,))
    assert not np.array_equal(a.numpy(), b.numpy())  # successive calls draw new streams
    f32 = ts.random.uniform((8, 8), split=0, dtype=np.float32)  # the shape first, as in the house's examples
    assert f32.dtype == np.float32 and f32.shape == (8, 8)


def test_from_shards_without_copy(runtime):
    r, n = runtime.rank, runtime.size
    mine = np.full((r + 1, 3), float(r))  # uneven blocks: rank r holds r + 1 rows
    a = ts.from_shards(mine, split=0)
    assert a.shape == (n * (n + 1) // 2, 3)
    view = a.local
    assert view.ctypes.data == mine.ctypes.data  # the shard is the caller's memory
    mine[0, 0] = -1.0  # a write through the caller's array shows in the distributed array
    whole = a.numpy()
    starts = np.cumsum([0] + [k + 1 for k in range(n)])
    for k in range(n):
        np.testing.assert_array_equal(whole[starts[k] + 1:starts[k + 1]], float(k))
        assert whole[starts[k], 0] == -1.0


def test_local_views_are_the_shard(runtime):
    a = ts.zeros((12, 6), split=0, halo=1)
    inner, padded = a.local, a.shard(halos=True)
    assert padded.shape == a._padded
    assert inner.shape == tuple(h - l for l, h in zip(a._lo, a._hi))
    if runtime.device != "host":
        # The interior starts one padded row and one element into the padded shard.
        start = padded.__cuda_array_interface__["data"][0] + (a._padded[1] + 1) * 8
        if inner.size:
            assert inner.__cuda_array_interface__["data"][0] == start
        assert inner.__cuda_array_interface__["strides"] == (a._padded[1] * 8, 8)
        assert inner.__dlpack_device__() == (2, int(runtime.device.split(":")[1]))
        np.testing.assert_array_equal(padded.get(), 0.0)
        return
    if inner.size:
        assert inner.ctypes.data == padded[1:, 1:].ctypes.data
    inner[...] = 7.0  # written through the view, seen by tessera
    assert float(ts.sum(a)) == 7.0 * 72
    # __array_interface__ and __dlpack__ come with the NumPy view.
    assert "data" in inner.__array_interface__
    np.testing.assert_array_equal(np.from_dlpack(inner), inner)


def test_halo_exchange_periodic(runtime):
    x = np.arange(16 * 4, dtype=np.float64).reshape(16, 4)
    a = ts.asarray(x, split=0, halo=(1, 0), periodic=(True, False))
    a.exchange_halos()
    p = local_values(a.shard(halos=True))
    lo, hi = a._lo[0], a._hi[0]
    if hi > lo:
        np.testing.assert_array_equal(p[0], x[(lo - 1) % 16])
        np.testing.assert_array_equal(p[-1], x[hi % 16])
    h = a.exchange_halos_begin()
    h.end()


def test_resplit_and_to(runtime):
    x = values((10, 9), np.float64)
    a = ts.asarray(x, split=0)
    b = a.resplit(1)
    assert b.split == 1
    np.testing.assert_array_equal(b.numpy(), x)
    assert a.to(runtime.device) is a
    h = a.to("host")
    assert h.device == "host"
    np.testing.assert_array_equal(h.numpy(), x)
