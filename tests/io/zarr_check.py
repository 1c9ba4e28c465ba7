"""Zarr interop with zarr-python 2 (see tests/io/zarr_interop.cpp for the values).

  zarr_check.py check DIR   opens the arrays zarr_interop wrote and checks every element (the
                            Zarr v3 ones, which zarr-python 2 cannot open, through their
                            zarr.json and Python's gzip module);
  zarr_check.py write DIR   writes arrays (several dtypes, every compressor of CODECS, edge
                            chunks, nested chunk keys, missing chunks, order F and big-endian)
                            for zarr_interop read DIR.
Exits 77 (skipped) when zarr cannot be imported.
"""
import gzip
import json
import os
import sys

try:
    import numpy as np
    import zarr
    from numcodecs import Blosc, GZip, Zlib, Zstd
except ImportError as e:
    print("zarr-python not available (%s): skipped" % e)
    sys.exit(77)

# name: (dtype, shape, chunks, compressed)
ARRAYS = {
    "f8_2d_zlib": ("<f8", (17, 13), (5, 4), True),
    "f4_2d_none": ("<f4", (9, 6), (4, 4), False),
    "i4_3d_zlib": ("<i4", (7, 5, 3), (3, 2, 2), True),
    "i8_1d_none": ("<i8", (11,), (4,), False),
    "b1_2d_zlib": ("|b1", (6, 7), (4, 3), True),
    "c8_1d_none": ("<c8", (10,), (3,), False),
    "c16_2d_zlib": ("<c16", (5, 4), (2, 3), True),
}


# Every v2 compressor, by the names zarr_interop.cpp uses.
CODECS = {
    "none": None,
    "zlib": Zlib(level=1),
    "gzip": GZip(level=1),
    "zstd": Zstd(level=1),
    "blosc_lz4_shuffle": Blosc("lz4", 5, Blosc.SHUFFLE),
    "blosc_lz4hc_noshuffle": Blosc("lz4hc", 3, Blosc.NOSHUFFLE),
    "blosc_blosclz_bitshuffle": Blosc("blosclz", 5, Blosc.BITSHUFFLE),
    "blosc_zstd": Blosc("zstd", 2, Blosc.SHUFFLE),
    "blosc_zlib": Blosc("zlib", 1, Blosc.SHUFFLE),
}
# name: (dtype, shape, chunks) of the arrays written once per codec
CODEC_ARRAYS = {"f4": ("<f4", (7, 5, 4), (3, 2, 4)), "c16": ("<c16", (6, 5), (4, 2))}


def values(dtype, shape):
    flat = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return flat % 3 == 1
    if dt.kind == "c":
        return ((flat + 1) - 0.5j * flat).astype(dt)
    return (flat + 1).astype(dt)


def v3_gzip_problems(path, dtype, shape, level):
    """What is wrong with the Zarr v3 array at path, written by Compressor::zlib: its codecs must be
    the standard bytes + gzip (Zarr v3 has no zlib) and each chunk gzip-framed (RFC 1952)."""
    with open(os.path.join(path, "zarr.json")) as f:
        meta = json.load(f)
    want = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": level}}]
    if meta["codecs"] != want:
        return ["codecs %s" % meta["codecs"]]
    chunk = meta["chunk_grid"]["configuration"]["chunk_shape"]
    a = values(dtype, shape)
    for idx in np.ndindex(*[-(-s // c) for s, c in zip(shape, chunk)]):
        try:
            with open(os.path.join(path, "c", *map(str, idx)), "rb") as f:
                got = np.frombuffer(gzip.decompress(f.read()), dtype=dtype).reshape(chunk)
        except (OSError, EOFError, ValueError) as e:
            return ["chunk %s: %s" % (idx, e)]
        part = a[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunk))]
        if not np.array_equal(got[tuple(slice(0, n) for n in part.shape)], part):
            return ["chunk %s differs" % (idx,)]
    return []


def check_v3(d):
    bad = 0
    for name, dtype, shape, level in [("v3_f8_2d_zlib", "<f8", (17, 13), 1), ("v3_i4_3d_zlib6", "<i4", (7, 5, 3), 6),
                                      ("ckpt_v3/phi", "<f4", (9, 6, 4), 1)]:
        problems = v3_gzip_problems(os.path.join(d, name), dtype, shape, level)
        print("%s: %s" % (name, "; ".join(problems) or "ok"))
        bad += bool(problems)
    with open(os.path.join(d, "ckpt_v3", "zarr.json")) as f:
        group = json.load(f)
    ok = group["node_type"] == "group" and group["attributes"]["fields"][0]["name"] == "phi"
    print("ckpt_v3: %s" % ("ok" if ok else "not a group of phi: %s" % group))
    return bad + (not ok)


def check(d):
    bad = check_v3(d)
    for name, (dtype, shape, chunks, compressed) in ARRAYS.items():
        a = zarr.open(os.path.join(d, name), mode="r")
        got = a[...]
        problems = []
        if a.dtype != np.dtype(dtype):
            problems.append("dtype %s" % a.dtype)
        if a.shape != shape or a.chunks != chunks:
            problems.append("shape %s chunks %s" % (a.shape, a.chunks))
        if (a.compressor is not None) != compressed:
            problems.append("compressor %s" % a.compressor)
        if not np.array_equal(got, values(dtype, shape)):
            problems.append("values differ")
        print("%s: %s" % (name, "; ".join(problems) or "ok"))
        bad += bool(problems)
    for cname, codec in CODECS.items():
        for suffix, (dtype, shape, chunks) in CODEC_ARRAYS.items():
            name = "codec_%s_%s" % (cname, suffix)
            a = zarr.open(os.path.join(d, name), mode="r")
            ok = np.array_equal(a[...], values(dtype, shape)) and a.compressor == codec
            print("%s: %s" % (name, "ok" if ok else "values or compressor differ (%s)" % a.compressor))
            bad += not ok
    a = zarr.open(os.path.join(d, "f8_3d_F_BE"), mode="r")
    ok = a.order == "F" and a.dtype == np.dtype(">f8") and np.array_equal(a[...], values("<f8", (6, 5, 4)))
    print("f8_3d_F_BE: %s" % ("ok" if ok else "order %s dtype %s or values differ" % (a.order, a.dtype)))
    bad += not ok
    return 1 if bad else 0


def write(d):
    os.makedirs(d, exist_ok=True)
    for name, (dtype, shape, chunks, compressed) in ARRAYS.items():
        a = zarr.open(os.path.join(d, name), mode="w", shape=shape, chunks=chunks, dtype=dtype,
                      compressor=Zlib(level=1) if compressed else None)
        a[...] = values(dtype, shape)
    a = zarr.open(os.path.join(d, "f4_2d_nested"), mode="w", shape=(9, 6), chunks=(4, 4), dtype="<f4",
                  compressor=Zlib(level=1), dimension_separator="/")
    a[...] = values("<f4", (9, 6))
    # Only the first 5 elements are written: chunks 2..4 stay missing and read as the fill value.
    a = zarr.open(os.path.join(d, "f8_1d_fill"), mode="w", shape=(20,), chunks=(4,), dtype="<f8",
                  compressor=None, fill_value=7.0)
    a[:5] = values("<f8", (20,))[:5]
    for cname, codec in CODECS.items():
        for suffix, (dtype, shape, chunks) in CODEC_ARRAYS.items():
            a = zarr.open(os.path.join(d, "codec_%s_%s" % (cname, suffix)), mode="w", shape=shape, chunks=chunks,
                          dtype=dtype, compressor=codec)
            a[...] = values(dtype, shape)
    a = zarr.open(os.path.join(d, "f8_3d_F_BE"), mode="w", shape=(6, 5, 4), chunks=(4, 3, 2), dtype=">f8",
                  order="F", compressor=Zstd(level=3))
    a[...] = values("<f8", (6, 5, 4))
    a = zarr.open(os.path.join(d, "i4_2d_F_BE_blosc"), mode="w", shape=(9, 7), chunks=(4, 4), dtype=">i4", order="F")
    a[...] = values("<i4", (9, 7))  # zarr-python's default compressor: Blosc-LZ4, shuffle
    open(os.path.join(d, "done"), "w").close()
    print("wrote %d arrays to %s" % (len(ARRAYS) + 2, d))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "write"):
        print("usage: zarr_check.py check|write DIR")
        sys.exit(2)
    sys.exit(check(sys.argv[2]) if sys.argv[1] == "check" else write(sys.argv[2]))
