import json
import os

import numpy as np
import pytest

import tessera as ts
from conftest import values


@pytest.mark.parametrize("shape", [(32,), (16, 12), (8, 6, 10)])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_c2c(shape, dtype, norm):
    x = values(shape, dtype)
    a = ts.asarray(x, split=0)
    F = ts.fft.fftn(a, norm=norm)
    t = 1e-3 if dtype == np.complex64 else 1e-9
    np.testing.assert_allclose(F.numpy(), np.fft.fftn(x, norm=norm), rtol=t, atol=t * np.abs(x).sum())
    back = ts.fft.ifftn(F, norm=norm)
    np.testing.assert_allclose(back.numpy(), x, rtol=t, atol=t)
    assert back.split == a.split


@pytest.mark.parametrize("shape", [(16, 12), (8, 6, 10)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_r2c(shape, dtype):
    x = values(shape, dtype)
    a = ts.asarray(x, split=0)
    R = ts.fft.rfftn(a)
    t = 1e-3 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(R.numpy(), np.fft.rfftn(x), rtol=t, atol=t * np.abs(x).sum())
    back = ts.fft.irfftn(R)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_allclose((back - a).numpy(), 0, atol=t)  # the inverse is on a's own layout
    np.testing.assert_allclose(back.numpy(), x, rtol=t, atol=t)


def box_wave(shape, sides, dtype):
    """u = sin(2 pi x / L0) cos(4 pi y / L1) sin(6 pi z / L2) (the first len(shape) factors) on the
    box of sides L, and its Laplacian."""
    grids = np.meshgrid(*[np.arange(n) / n for n in shape], indexing="ij")
    u, k2 = np.ones(shape), 0.0
    for a, g in enumerate(grids):
        u = u * (np.cos if a == 1 else np.sin)(2 * np.pi * (a + 1) * g)
        k2 += (2 * np.pi * (a + 1) / sides[a]) ** 2
    return u.astype(dtype), (-k2 * u).astype(dtype)


@pytest.mark.parametrize("shape", [(256, 6, 8), (10, 12, 8), (16, 12), (32,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("split", [0, 1])
def test_spectral_laplacian_and_its_inverse(shape, dtype, split):
    if len(shape) == 1 and split == 1:
        pytest.skip("a 1-D array has one axis")
    sides = [1.0, 2.0, 3.0][: len(shape)]
    u, f = box_wave(shape, sides, dtype)
    t = 1e-4 if dtype == np.float32 else 1e-10
    a = ts.asarray(f, split=split)
    if len(shape) == 1 and ts.runtime().size > 1:
        with pytest.raises(ts.InvalidArgument, match="Spectral multiply is not defined for a 1-D transform"):
            ts.fft.inverse_laplacian(a, lengths=sides)
        return
    got = ts.fft.inverse_laplacian(a, lengths=sides)
    assert got.dtype == np.dtype(dtype) and got.shape == a.shape and got.split == a.split
    np.testing.assert_allclose(got.numpy(), u, atol=t * np.abs(u).max())
    lap = ts.fft.laplacian(ts.asarray(u, split=split), sides)
    # (-|k|^2 multiplies the round-off at the highest frequencies by up to (pi n / L)^2.)
    t_lap = 3e-3 if dtype == np.float32 else 1e-8
    np.testing.assert_allclose(lap.numpy(), f, atol=t_lap * np.abs(f).max())
    back = ts.fft.irfftn(ts.fft.rfftn(a)) if dtype != np.complex128 else ts.fft.ifftn(ts.fft.fftn(a))
    np.testing.assert_allclose(back.numpy(), f, atol=t * np.abs(f).max())  # the plan is shared


def test_spectral_default_box_and_bad_arguments():
    x = values((16, 12, 10), np.float64)
    a = ts.asarray(x, split=0)
    k = [np.fft.fftfreq(16, 1 / 16), np.fft.fftfreq(12, 1 / 12), np.fft.rfftfreq(10, 1 / 10)]
    k2 = k[0][:, None, None] ** 2 + k[1][None, :, None] ** 2 + k[2][None, None, :] ** 2
    with np.errstate(divide="ignore"):
        want = np.fft.irfftn(np.fft.rfftn(x) * np.where(k2 > 0, -1 / k2, 0), s=x.shape)
    np.testing.assert_allclose(ts.fft.inverse_laplacian(a).numpy(), want, atol=1e-12)
    with pytest.raises(ValueError, match="2 lengths for a 3-D array"):
        ts.fft.laplacian(a, lengths=(1.0, 2.0))
    with pytest.raises(ValueError, match="lengths"):
        ts.fft.laplacian(a, lengths=(1.0, -2.0, 3.0))
    with pytest.raises(ValueError, match="1-3-D"):
        ts.fft.laplacian(ts.zeros((2, 2, 2, 2)))


AXES_CASES = [((9, 8, 10), (1, 2), None), ((9, 8, 10), (0,), None), ((9, 8, 10), (2, 0), None),
              ((9, 8, 10), (0, 1, 2), (12, 5, 10)), ((9, 8, 10), None, (4, 11)), ((6, 5, 4, 3), None, None),
              ((6, 5, 4, 3), (3, 1), (6, 2)), ((12, 10), (-1,), (16,)), ((12, 10), (0,), None)]


def axes_case(case, split, dtype):
    """(shape, axes, s) of AXES_CASES[case], its values, their tessera array and a tolerance."""
    shape, axes, s = AXES_CASES[case]
    x = values(shape, dtype)
    t = 1e-3 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9
    return shape, axes, s, x, ts.asarray(x, split=split), t


@pytest.mark.parametrize("case", range(len(AXES_CASES)))
@pytest.mark.parametrize("split", [0, 1, None])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_c2c_axes_and_sizes(case, split, dtype):
    _, axes, s, x, a, t = axes_case(case, split, dtype)
    for norm in (None, "ortho"):
        F = ts.fft.fftn(a, s=s, axes=axes, norm=norm)
        want = np.fft.fftn(x, s=s, axes=axes, norm=norm)
        assert F.shape == want.shape and F.dtype == np.dtype(dtype)
        np.testing.assert_allclose(F.numpy(), want, rtol=t, atol=t * np.abs(x).sum())
        back = np.fft.ifftn(F, axes=axes, norm=norm)  # __array_function__: stays distributed
        np.testing.assert_allclose(back.numpy(), np.fft.ifftn(want, axes=axes, norm=norm), rtol=t, atol=t)


@pytest.mark.parametrize("case", range(len(AXES_CASES)))
@pytest.mark.parametrize("split", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_r2c_axes_and_sizes(case, split, dtype):
    shape, axes, s, x, a, t = axes_case(case, split, dtype)
    R = ts.fft.rfftn(a, s=s, axes=axes)
    want = np.fft.rfftn(x, s=s, axes=axes)
    assert R.shape == want.shape and R.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    np.testing.assert_allclose(R.numpy(), want, rtol=t, atol=t * np.abs(x).sum())
    n = s if s is not None else [shape[d] for d in (axes if axes is not None else range(len(shape)))]
    back = ts.fft.irfftn(R, s=n, axes=axes)
    np.testing.assert_allclose(back.numpy(), np.fft.irfftn(want, s=n, axes=axes), rtol=t, atol=t)
    # NumPy's default real length (2*(m-1)) for a spectrum of another making
    spec = ts.asarray(want.astype(R.dtype), split=split)
    np.testing.assert_allclose(ts.fft.irfftn(spec, axes=axes).numpy(), np.fft.irfftn(want, axes=axes), rtol=t,
                               atol=t)


def test_one_axis_transforms():
    x = values((10, 12), np.float64)
    a = ts.asarray(x, split=0)
    for n in (None, 7, 16):
        np.testing.assert_allclose(ts.fft.fft(a, n=n).numpy(), np.fft.fft(x, n=n), atol=1e-9)
        np.testing.assert_allclose(np.fft.fft(a, n=n, axis=0).numpy(), np.fft.fft(x, n=n, axis=0), atol=1e-9)
        np.testing.assert_allclose(ts.fft.rfft(a, n=n, axis=0).numpy(), np.fft.rfft(x, n=n, axis=0), atol=1e-9)
        spec = np.fft.rfft(x, axis=1)
        np.testing.assert_allclose(np.fft.irfft(ts.asarray(spec, split=0), n=n).numpy(), np.fft.irfft(spec, n=n),
                                   atol=1e-9)
    np.testing.assert_allclose(ts.fft.fft2(a).numpy(), np.fft.fft2(x), atol=1e-9)
    np.testing.assert_allclose(np.fft.ifft2(a, s=(5, 6)).numpy(), np.fft.ifft2(x, s=(5, 6)), atol=1e-9)
    np.testing.assert_allclose(np.fft.rfft2(a).numpy(), np.fft.rfft2(x), atol=1e-9)
    np.testing.assert_allclose(np.fft.fftn(a).numpy(), np.fft.fftn(x), atol=1e-9)


def test_out_reuses_a_result():
    x = values((8, 6, 10), np.complex128)
    a = ts.asarray(x, split=0)
    F = ts.fft.fftn(a)
    G = ts.fft.fftn(2 * a, out=F)
    assert G is F
    np.testing.assert_allclose(F.numpy(), np.fft.fftn(2 * x), atol=1e-9 * np.abs(x).sum())
    back = ts.fft.ifftn(F)
    assert ts.fft.ifftn(F, out=back) is back
    np.testing.assert_allclose(back.numpy(), 2 * x, atol=1e-9)
    with pytest.raises(ts.DtypeMismatch):
        ts.fft.fftn(a, out=ts.zeros(F.shape, dtype=np.complex64, split=0))
    with pytest.raises(ts.LayoutMismatch):
        ts.fft.fftn(a, out=ts.zeros((8, 6, 12), dtype=np.complex128, split=0))
    with pytest.raises(TypeError):
        ts.fft.fftn(a, out=np.empty((8, 6, 10), np.complex128))
    r = ts.asarray(x.real.copy(), split=0)
    R = ts.fft.rfftn(r)
    assert ts.fft.irfftn(R, out=r) is r


def test_fft_of_real_and_1d():
    x = values((24,), np.float64)
    np.testing.assert_allclose(ts.fft.fft(ts.asarray(x, split=0)).numpy(), np.fft.fft(x), atol=1e-9)
    np.testing.assert_allclose(ts.fft.fftfreq(10, 0.1).numpy(), np.fft.fftfreq(10, 0.1))
    np.testing.assert_allclose(ts.fft.rfftfreq(10).numpy(), np.fft.rfftfreq(10))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex128, np.bool_])
def test_npy_round_trip(dtype, shared_dir, runtime):
    x = values((13, 6, 3), dtype)
    path = os.path.join(shared_dir, f"a_{np.dtype(dtype).name}.npy")
    ts.io.save_npy(path, ts.asarray(x, split=0))
    runtime.comm.Barrier()
    np.testing.assert_array_equal(np.load(path), x)  # numpy reads tessera's file
    back = ts.io.load_npy(path, split=(1, 2))
    np.testing.assert_array_equal(back.numpy(), x)


ZARR_COMPRESSORS = [None, "zlib", "gzip", "zstd", "blosc", "blosc-lz4hc", "blosc-blosclz", "blosc-zstd", "blosc-zlib"]


@pytest.mark.parametrize("compressor", ZARR_COMPRESSORS)
def test_zarr_round_trip(compressor, shared_dir, runtime):
    x = values((13, 10), np.float64)
    path = os.path.join(shared_dir, f"a_{compressor}.zarr")
    ts.io.save_zarr(path, ts.asarray(x, split=0), chunks=(4, 5), compressor=compressor)
    runtime.comm.Barrier()
    back = ts.io.load_zarr(path, split=1)
    np.testing.assert_array_equal(back.numpy(), x)
    zarr = pytest.importorskip("zarr")
    np.testing.assert_array_equal(zarr.open(path, mode="r")[...], x)  # zarr-python reads it


@pytest.mark.parametrize("compressor", ZARR_COMPRESSORS)
def test_zarr_v3_sharded_round_trip(compressor, shared_dir, runtime):
    # Rows split over the ranks: inner chunks of 2 rows lie in one rank's block where the blocks
    # allow it (written in place), else are gathered; the last shard runs past the array's end.
    x = values((13, 6, 4), np.float32)
    path = os.path.join(shared_dir, f"s_{compressor}.zarr")
    ts.io.save_zarr(path, ts.asarray(x, split=0), chunks=(2, 3, 4), compressor=compressor, format=3,
                    shard=(8, 6, 4), durable=True)
    runtime.comm.Barrier()
    for split in (0, 1, None):
        np.testing.assert_array_equal(ts.io.load_zarr(path, split=split).numpy(), x)
    with open(os.path.join(path, "zarr.json")) as f:
        meta = json.load(f)
    assert meta["zarr_format"] == 3 and meta["chunk_grid"]["configuration"]["chunk_shape"] == [8, 6, 4]
    sharding = meta["codecs"][0]
    assert sharding["name"] == "sharding_indexed" and sharding["configuration"]["chunk_shape"] == [2, 3, 4]
    assert sorted(os.listdir(os.path.join(path, "c"))) == ["0", "1"]  # one file per shard: c/0/0/0, c/1/0/0


def test_zarr_levels_and_format_3(shared_dir, runtime):
    x = values((9, 7), np.complex128)
    for level in (1, 9):
        path = os.path.join(shared_dir, f"zstd{level}.zarr")
        ts.io.save_zarr(path, ts.asarray(x, split=1), chunks=(4, 7), compressor="zstd", level=level, format=3)
        runtime.comm.Barrier()
        np.testing.assert_array_equal(ts.io.load_zarr(path, split=0).numpy(), x)
        with open(os.path.join(path, "zarr.json")) as f:
            codecs = json.load(f)["codecs"]
        assert {"name": "zstd", "configuration": {"level": level, "checksum": False}} in codecs, codecs


def test_zarr_bad_options(shared_dir):
    a = ts.asarray(values((6, 4), np.float64), split=0)
    path = os.path.join(shared_dir, "bad.zarr")
    with pytest.raises(ts.InvalidArgument, match="codec 'lz5'"):
        ts.io.save_zarr(path, a, chunks=(2, 2), compressor="lz5")
    with pytest.raises(ts.InvalidArgument, match="level 23"):
        ts.io.save_zarr(path, a, chunks=(2, 2), compressor="zstd", level=23)
    with pytest.raises(ts.InvalidArgument, match="format 3"):
        ts.io.save_zarr(path, a, chunks=(2, 2), shard=(4, 4))  # sharding is Zarr v3's
    with pytest.raises(ts.InvalidArgument, match="multiple of the chunks"):
        ts.io.save_zarr(path, a, chunks=(2, 2), format=3, shard=(3, 4))
    with pytest.raises(ts.InvalidArgument, match="format 4"):
        ts.io.save_zarr(path, a, chunks=(2, 2), format=4)
    with pytest.raises(ValueError, match="shard"):
        ts.io.save_zarr(path, a, chunks=(2, 2), format=3, shard=(4,))
    with pytest.raises(TypeError, match="compressor"):
        ts.io.save_zarr(path, a, chunks=(2, 2), compressor=5)


def test_checkpoint_round_trip(shared_dir):
    x, y = values((11, 6), np.float64), values((9,), np.int32)
    path = os.path.join(shared_dir, "ckpt")
    ts.io.save_checkpoint(path, {"u": ts.asarray(x, split=0), "n": ts.asarray(y, split=0)}, step=42, time=1.5,
                          attributes={"model": "heat"})
    with ts.io.load_checkpoint(path) as c:
        assert c.step == 42 and c.time == 1.5 and c.attribute("model") == "heat"
        u = c.load("u", ts.zeros((11, 6), split=1))  # another layout
        n = c.load("n", ts.zeros((9,), dtype=np.int32, split=0))
    np.testing.assert_array_equal(u.numpy(), x)
    np.testing.assert_array_equal(n.numpy(), y)
    with pytest.raises(ts.IoError):
        ts.io.load_checkpoint(os.path.join(shared_dir, "no_such_checkpoint"))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64, np.bool_])
def test_hdf5_round_trip(dtype, shared_dir, runtime):
    h5py = pytest.importorskip("h5py")
    x = values((10, 7, 3), dtype)
    path = os.path.join(shared_dir, f"a_{np.dtype(dtype).name}.h5")
    try:
        ts.io.save_hdf5(path, ts.asarray(x, split=0), name="fields/u", chunks=(5, 7, 3), compression="gzip")
    except ts.BackendUnavailable:
        pytest.skip("this build has no parallel HDF5")
    runtime.comm.Barrier()
    with h5py.File(path, "r") as f:  # h5py reads tessera's dataset
        np.testing.assert_array_equal(f["fields/u"][...], x)
    back = ts.io.load_hdf5(path, "fields/u", split=(1, 2))
    np.testing.assert_array_equal(back.numpy(), x)
    with pytest.raises(FileNotFoundError):
        ts.io.load_hdf5(path, "no/such/dataset")


def test_xdmf_sidecar(shared_dir, runtime):
    import xml.etree.ElementTree as ET
    xmf = os.path.join(shared_dir, "sub", "u.xmf")
    if runtime.rank == 0:
        os.makedirs(os.path.dirname(xmf), exist_ok=True)
        ts.io.write_xdmf(xmf, os.path.join(shared_dir, "u.h5"), "fields/u", (4, 5, 6), np.float32, spacing=0.5)
        root = ET.parse(xmf).getroot()
        grid = root.find("Domain/Grid")
        assert grid.find("Topology").get("Dimensions") == "4 5 6"
        item = grid.find("Attribute/DataItem")
        assert (item.get("NumberType"), item.get("Precision")) == ("Float", "4")
        assert item.text == "../u.h5:/fields/u"  # relative to the .xmf, as ParaView resolves it
        assert grid.findall("Geometry/DataItem")[1].text.split()[0].startswith("0.5")
        with pytest.raises(ts.IoError):
            ts.io.write_xdmf(xmf, "u.h5", "c", (4, 5), np.complex64)
        with pytest.raises(ValueError):
            ts.io.write_xdmf(xmf, "u.h5", "v", (4,), np.float64)
    x = values((6, 5, 4), np.float64)
    path = os.path.join(shared_dir, "with_sidecar.h5")
    try:
        ts.io.save_hdf5(path, ts.asarray(x, split=0), name="u", xdmf=True)
    except ts.BackendUnavailable:
        return  # no parallel HDF5 in this build: the sidecar alone is checked above
    text = open(os.path.join(shared_dir, "with_sidecar.xmf")).read()
    assert "with_sidecar.h5:/u" in text and 'Dimensions="6 5 4"' in text
    # Rank 0 cannot describe complex values: every rank raises (none waits for it).
    with pytest.raises(ts.IoError):
        ts.io.save_hdf5(os.path.join(shared_dir, "complex.h5"), ts.asarray(x.astype(np.complex128), split=0),
                        name="c", xdmf=True)
