"""Writes the small Zarr v3 stores of fixtures/zarr3/ by hand, from the v3 specification.

Debian's zarr-python (2.13) cannot write Zarr v3, so the stores are laid out here byte by byte
(numpy for the element bytes, numcodecs for gzip/zstd/blosc, a table CRC-32C). Their values are
value_at(global flat index) of tests/distributed/io_test_util.hpp. tests/distributed/
test_io_zarr_codecs.cpp (V3Fixtures) loads them; launch/gpu-check io has tensorstore's
zarr3 driver read them (and Tessera's own v3 output) on the GPU machine, where tensorstore is.

  python3 tests/io/make_zarr3_fixtures.py [OUT_DIR]   (default: tests/io/fixtures/zarr3)
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
from numcodecs import GZip, Zstd, Blosc


def value_at(dtype, shape):
    g = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return (g * 7 - 5).astype(dt)
    if dt.kind == "f":
        return (g * 0.5 - 3).astype(dt)
    return (g * 0.5 - 1j * g).astype(dt)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def chunks_of(a, chunk):
    """(index, slices) of every chunk of the regular grid, in C order."""
    grid = [-(-s // c) for s, c in zip(a.shape, chunk)]
    for idx in np.ndindex(*grid):
        yield idx, tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunk))


def padded(a, sl, chunk, fill):
    out = np.full(chunk, fill, dtype=a.dtype)
    part = a[sl]
    out[tuple(slice(0, n) for n in part.shape)] = part
    return out


def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def meta(shape, dtype, chunk, codecs, fill, keys=("default", "/")):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk)}},
            "chunk_key_encoding": {"name": keys[0], "configuration": {"separator": keys[1]}},
            "fill_value": fill, "codecs": codecs, "attributes": {"made_by": "make_zarr3_fixtures.py"}}


def key(idx, keys):
    parts = [str(i) for i in idx]
    return keys[1].join((["c"] if keys[0] == "default" else []) + parts)


def write_meta(d, m):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "zarr.json"), "w") as f:
        json.dump(m, f, indent=2)


def f4_gzip(out):
    d = os.path.join(out, "f4_gzip")
    a, chunk = value_at("<f4", (7, 5)), (3, 2)
    write_meta(d, meta(a.shape, "float32", chunk, [{"name": "bytes", "configuration": {"endian": "little"}},
                                                  {"name": "gzip", "configuration": {"level": 5}}], 0.0))
    for idx, sl in chunks_of(a, chunk):
        put(os.path.join(d, key(idx, ("default", "/"))), GZip(5).encode(padded(a, sl, chunk, 0).tobytes()))


def f8_transpose(out):
    # transpose [2, 1, 0] then big-endian bytes then Blosc-LZ4 with shuffle; v2 chunk keys "i.j.k".
    d = os.path.join(out, "f8_transpose_be_blosc_v2keys")
    a, chunk, keys = value_at("<f8", (5, 4, 3)), (2, 4, 3), ("v2", ".")
    blosc = Blosc("lz4", 5, Blosc.SHUFFLE)
    write_meta(d, meta(a.shape, "float64", chunk,
                       [{"name": "transpose", "configuration": {"order": [2, 1, 0]}},
                        {"name": "bytes", "configuration": {"endian": "big"}},
                        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                            "typesize": 8, "blocksize": 0}}], "NaN", keys))
    for idx, sl in chunks_of(a, chunk):
        c = padded(a, sl, chunk, np.nan).transpose(2, 1, 0).astype(">f8")
        put(os.path.join(d, key(idx, keys)), blosc.encode(np.ascontiguousarray(c).tobytes()))


def shard_bytes(block, inner, encode, fill_absent=(), crc=True, at_end=True):
    """One shard: inner chunks in C order, then (or before) the index of (offset, nbytes) pairs."""
    grid = [s // c for s, c in zip(block.shape, inner)]
    n = int(np.prod(grid))
    index_size = 16 * n + (4 if crc else 0)
    body, index = b"", []
    for idx in np.ndindex(*grid):
        if idx in fill_absent:
            index.append((2**64 - 1, 2**64 - 1))
            continue
        sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, inner))
        e = encode(np.ascontiguousarray(block[sl]))
        index.append(((0 if at_end else index_size) + len(body), len(e)))
        body += e
    ix = b"".join(struct.pack("<QQ", o, s) for o, s in index)
    if crc:
        ix += struct.pack("<I", crc32c(ix))
    return body + ix if at_end else ix + body


def i8_sharded(out):
    # shards (4, 6) of inner chunks (2, 3) with zstd; index with crc32c at the end; inner chunk
    # (1, 1) of shard (0, 0) is absent and reads as the fill value 42.
    d = os.path.join(out, "i8_shard_crc32c_missing")
    a, shard, inner = value_at("<i8", (9, 6)), (4, 6), (2, 3)
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner),
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}
    write_meta(d, meta(a.shape, "int64", shard, [sharding], 42))
    for idx, sl in chunks_of(a, shard):
        absent = {(1, 1)} if idx == (0, 0) else set()
        data = shard_bytes(padded(a, sl, shard, 42), inner, lambda c: Zstd(3).encode(c.astype("<i8").tobytes()), absent)
        put(os.path.join(d, key(idx, ("default", "/"))), data)


def c8_index_start(out):
    d = os.path.join(out, "c8_shard_index_start")
    a, shard, inner = value_at("<c8", (6,)), (6,), (2,)
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": "start"}}
    write_meta(d, meta(a.shape, "complex64", shard, [sharding], [0.0, 0.0]))
    put(os.path.join(d, "c", "0"), shard_bytes(a, inner, lambda c: c.astype("<c8").tobytes(), crc=False, at_end=False))


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "zarr3")
    shutil.rmtree(out, ignore_errors=True)
    for make in (f4_gzip, f8_transpose, i8_sharded, c8_index_start):
        make(out)
    print("wrote Zarr v3 fixtures to %s" % out)
