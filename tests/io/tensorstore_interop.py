"""Zarr v3 interop with tensorstore's zarr3 driver (run by launch/gpu-check io on the GPU
machine; Debian has no tensorstore). Values as in tests/io/zarr_interop.cpp: flat index + 1.

  tensorstore_interop.py write DIR   writes ts_* stores (zstd; sharded Blosc; transpose + gzip)
                                     for zarr_interop read3 DIR;
  tensorstore_interop.py check DIR [FIXTURES]   reads zarr_interop write3 DIR's v3 stores, and
                                     the committed fixtures (tests/io/fixtures/zarr3, whose values
                                     are make_zarr3_fixtures.py's) if given.
Exits 77 (skipped) when tensorstore cannot be imported.
"""
import os
import sys

try:
    import numpy as np
    import tensorstore as ts
except ImportError as e:
    print("tensorstore not available (%s): skipped" % e)
    sys.exit(77)

SHAPE = (37, 29, 11)


def values(dtype, shape=SHAPE):
    return (np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) + 1).astype(dtype)


def open_v3(path, **kw):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}, **kw}).result()


def write(d):
    os.makedirs(d, exist_ok=True)
    grid = {"name": "regular", "configuration": {"chunk_shape": [8, 8, 11]}}
    stores = {
        "ts_f4_zstd": ("float32", grid, [{"name": "bytes", "configuration": {"endian": "little"}},
                                          {"name": "zstd", "configuration": {"level": 3}}]),
        "ts_f8_shard_blosc": ("float64", {"name": "regular", "configuration": {"chunk_shape": [16, 16, 11]}},
                              [{"name": "sharding_indexed", "configuration": {
                                  "chunk_shape": [8, 8, 11],
                                  "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                             {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                                                 "shuffle": "shuffle", "typesize": 8}}],
                                  "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                   {"name": "crc32c"}]}}]),
        "ts_i4_transpose_gzip": ("int32", grid, [{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                                                 {"name": "bytes", "configuration": {"endian": "big"}},
                                                 {"name": "gzip", "configuration": {"level": 5}}]),
    }
    for name, (dtype, g, codecs) in stores.items():
        t = open_v3(os.path.join(d, name), create=True, delete_existing=True,
                    metadata={"shape": list(SHAPE), "data_type": dtype, "chunk_grid": g, "codecs": codecs})
        t.write(values(dtype)).result()
        print("wrote %s" % name)
    open(os.path.join(d, "done"), "w").close()
    return 0


def fixture_values(dtype, shape):
    g = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return (g * 7 - 5).astype(dt)
    if dt.kind == "f":
        return (g * 0.5 - 3).astype(dt)
    return (g * 0.5 - 1j * g).astype(dt)


def check(d, fixtures=None):
    bad = 0
    for name, dtype in [("v3_f4_zstd", "float32"), ("v3_f8_shard_blosc", "float64"), ("v3_i4_F_BE_gzip", "int32"),
                        ("v3_f4_zlib", "float32")]:
        got = open_v3(os.path.join(d, name)).read().result()
        ok = np.array_equal(got, values(dtype))
        print("%s: %s" % (name, "ok" if ok else "values differ"))
        bad += not ok
    if fixtures:
        for name, dtype, shape in [("f4_gzip", "<f4", (7, 5)), ("f8_transpose_be_blosc_v2keys", "<f8", (5, 4, 3)),
                                   ("c8_shard_index_start", "<c8", (6,)), ("i8_shard_crc32c_missing", "<i8", (9, 6))]:
            want = fixture_values(dtype, shape)
            if name.startswith("i8"):
                want[2:4, 3:6] = 42  # the absent inner chunk: the fill value
            got = open_v3(os.path.join(fixtures, name)).read().result()
            ok = np.array_equal(got, want)
            print("fixture %s: %s" % (name, "ok" if ok else "values differ"))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "write"):
        print("usage: tensorstore_interop.py write DIR | check DIR [FIXTURES]")
        sys.exit(2)
    sys.exit(write(sys.argv[2]) if sys.argv[1] == "write" else check(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
