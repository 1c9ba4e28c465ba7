"""tessera.io: parallel .npy and Zarr files of distributed arrays (every rank writes its part;
numpy.load and zarr-python read the files, and tessera reads theirs)."""
import json
import os

import numpy as np

from . import _dtypes, _runtime, _tessera
from ._functions import asarray, zeros


def save_npy(path, a):
    """One .npy file of the whole array (collective)."""
    a = asarray(a)
    _tessera.save_npy(a._handle(), os.fspath(path))


def _npy_header(path):
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(f)
    if fortran:
        raise ValueError(f"{path}: Fortran-ordered .npy files are not read by tessera")
    return shape, dtype


def load_npy(path, split=None, grid=None, halo=0, device=None):
    """The array of a .npy file, distributed by `split` (collective; every rank reads its part)."""
    return _load(path, _npy_header, _tessera.load_npy, split, grid, halo, device)


def _extent_list(extents, a, what):
    """One extent per axis of a, or [] for None (the writer's default)."""
    if extents is None:
        return []
    ex = [int(c) for c in extents]
    if len(ex) != a.ndim:
        raise ValueError(f"{what} {tuple(extents)} for a {a.ndim}-D array")
    return ex


def save_zarr(path, a, chunks=None, compressor=None, *, format=2, shard=None, level=None, durable=False):
    """A Zarr directory store (collective; every rank writes the chunks it holds).

    chunks: one extent per axis (None: the largest block); compressor: None (raw), "zlib" (written
    as gzip in format 3), "gzip", "zstd", "blosc" (LZ4 with byte shuffle, zarr-python's default) or
    "blosc-lz4", "blosc-lz4hc", "blosc-blosclz", "blosc-zstd", "blosc-zlib"; format: 2 or 3;
    shard: format 3, one extent per axis, each a multiple of the chunk's (one file per shard: its
    inner chunks and an index); level: the compressor's level (None: its default); durable: every
    file fsynced before the call returns."""
    a = asarray(a)
    if compressor is not None and not isinstance(compressor, str):
        raise TypeError(f"compressor {compressor!r}: a name such as 'zstd' or 'blosc-lz4', or None")
    _tessera.save_zarr(a._handle(), os.fspath(path), _extent_list(chunks, a, "chunks"), int(format),
                       compressor or "none", -1 if level is None else int(level), _extent_list(shard, a, "shard"),
                       bool(durable))


def _zarr_meta(path):
    v3, v2 = os.path.join(path, "zarr.json"), os.path.join(path, ".zarray")
    if os.path.exists(v3):
        with open(v3) as f:
            m = json.load(f)
        names = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "float32": np.float32,
                 "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}
        if m.get("data_type") not in names:
            raise ValueError(f"{path}: data type {m.get('data_type')!r} is not one of tessera's")
        return tuple(m["shape"]), np.dtype(names[m["data_type"]])
    if os.path.exists(v2):
        with open(v2) as f:
            m = json.load(f)
        return tuple(m["shape"]), np.dtype(m["dtype"]).newbyteorder("=")
    raise FileNotFoundError(f"{path}: no zarr.json or .zarray (not a Zarr array)")


def load_zarr(path, split=None, grid=None, halo=0, device=None):
    """The array of a Zarr v2 or v3 store, distributed by `split` (collective)."""
    return _load(path, _zarr_meta, _tessera.load_zarr, split, grid, halo, device)


def _load(path, read_meta, read_data, split, grid, halo, device):
    """A new array of the file's shape and dtype (read_meta), filled by the collective read_data."""
    path = os.fspath(path)
    shape, dtype = read_meta(path)
    a = zeros(shape, dtype, split, grid, halo, device)
    read_data(a._id, path)
    return a


def save_hdf5(path, a, name="data", chunks=None, compression=None, compression_opts=None, xdmf=False, spacing=1.0):
    """Dataset `name` of the HDF5 file `path` (created, or the dataset replaced) by parallel HDF5;
    chunks and compression="gzip" (level compression_opts, default 4) as h5py's create_dataset
    (collective). h5py reads the file. xdmf=True (or a path) also writes the XDMF sidecar
    (path with .xmf) that ParaView opens: a uniform grid `spacing` apart (write_xdmf)."""
    if compression not in (None, "gzip"):
        raise NotImplementedError(f"compression {compression!r}: tessera writes raw or 'gzip' HDF5 datasets")
    a = asarray(a)
    ch = _extent_list(chunks, a, "chunks")
    level = 0 if compression is None else int(4 if compression_opts is None else compression_opts)
    if level and not ch:
        raise ValueError("gzip compression needs chunks (as h5py's)")
    _tessera.save_hdf5(a._handle(), os.fspath(path), str(name), ch, level)
    if xdmf:
        xmf = os.path.splitext(os.fspath(path))[0] + ".xmf" if xdmf is True else os.fspath(xdmf)
        _on_rank_0(a._rt, write_xdmf, xmf, path, name, a.shape, a.dtype, spacing)


def _on_rank_0(rt, fn, *args):
    """fn(*args) on rank 0 alone; every rank returns when it is done, or raises what it raised
    (collective: the others never wait for a rank 0 that failed)."""
    error = None
    if rt.rank == 0:
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 (given to every rank below)
            error = e
    failed = rt.comm.bcast(None if error is None else (type(error), str(error)), root=0)
    if error is not None:
        raise error
    if failed is not None:
        kind, message = failed
        raise kind(f"on rank 0: {message}")


def write_xdmf(xmf, h5, name, shape, dtype, spacing=1.0):
    """The XDMF sidecar `xmf` of dataset `name` of HDF5 file `h5` (written relative to the .xmf's
    directory): node values of a uniform 2-D or 3-D grid of `shape`, `spacing` apart, origin 0;
    real and integer dtypes. Local (one rank)."""
    xmf, h5 = os.fspath(xmf), os.fspath(h5)
    rel = os.path.relpath(os.path.abspath(h5), os.path.dirname(os.path.abspath(xmf)))
    _tessera.write_xdmf(xmf, rel, str(name), [int(n) for n in shape], _dtypes.code(_dtypes.dtype_of(dtype)),
                        float(spacing))


def _hdf5_meta(path, name):
    try:
        import h5py
    except ImportError as e:
        raise ImportError("tessera.io.load_hdf5 reads the dataset's shape and type with h5py "
                          "(Debian: python3-h5py)") from e
    try:
        with h5py.File(path, "r") as f:
            d = f[name]
            return tuple(d.shape), np.dtype(d.dtype)
    except (OSError, KeyError) as e:
        raise FileNotFoundError(f"{path}: no HDF5 dataset {name!r} ({e})") from e


def load_hdf5(path, name="data", split=None, grid=None, halo=0, device=None):
    """Dataset `name` of an HDF5 file, distributed by `split` (collective)."""
    path = os.fspath(path)
    shape, dtype = _hdf5_meta(path, name)
    a = zeros(shape, dtype, split, grid, halo, device)
    _tessera.load_hdf5(a._id, path, str(name))
    return a


def save_checkpoint(path, arrays, step=0, time=0.0, attributes=None):
    """A checkpoint directory of named arrays (a dict name -> tessera array), with the step, the
    time and string attributes; it replaces `path` atomically when complete (collective)."""
    rt = _runtime.runtime()
    w = _tessera.checkpoint_writer_create(rt.grid((rt.size,)), os.fspath(path))
    try:
        _tessera.checkpoint_set(w, int(step), float(time), {str(k): str(v) for k, v in (attributes or {}).items()})
        for name, a in arrays.items():
            _tessera.checkpoint_add(w, str(name), asarray(a)._handle())
        _tessera.checkpoint_commit(w)
    finally:
        _tessera.checkpoint_writer_free(w)


class Checkpoint:
    """A checkpoint opened for reading (a context manager): .step, .time, .attribute(key), and
    .load(name, out) filling an existing array of any layout and device (collective)."""

    def __init__(self, path):
        rt = _runtime.runtime()
        self._r = _tessera.checkpoint_reader_create(rt.grid((rt.size,)), os.fspath(path))
        self.step, self.time = _tessera.checkpoint_info(self._r)

    def attribute(self, key):
        return _tessera.checkpoint_attribute(self._r, str(key))

    def load(self, name, out):
        _tessera.checkpoint_load(self._r, str(name), out._handle())
        return out

    def close(self):
        if self._r is not None:
            _tessera.checkpoint_reader_free(self._r)
            self._r = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def load_checkpoint(path):
    return Checkpoint(path)
