"""tensorstore beside bench_io: the same float32 array [N, 1024, 1024] (N = 256 per GiB) and
chunks [CHUNK, 1024, 1024], written and read through tensorstore's zarr (v2) and zarr3 drivers,
raw and Blosc-LZ4 (shuffle, level 5); zarr3-shard: the zarr3 driver with sharding_indexed, shards
of SHARD chunks along axis 0 (bench_io's --shard; index at the end with crc32c, as Tessera writes). Prints "RESULT tensorstore FORMAT CODEC OP GB/s" lines
(OP: write, write+fsync, read-warm, read-cold) as bench_io does; launch/gpu-check bench:io pairs
them. One process: tensorstore uses every core on its own thread pools.

  python3 apps/bench/peers/tensorstore_io.py [--gib 2] [--chunk 64] [--shard 4] [--dir DIR] [--reps N]
"""
import argparse
import os
import shutil
import time

import numpy as np
import tensorstore as ts


def spec(fmt, codec, path, shape, chunks, shard=4):
    kv = {"driver": "file", "path": path}
    if fmt == "zarr":
        comp = None if codec == "raw" else {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}
        meta = {"dtype": "<f4", "shape": shape, "chunks": chunks, "compressor": comp, "order": "C"}
        return {"driver": "zarr", "kvstore": kv, "metadata": meta}
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if codec != "raw":
        codecs.append({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}})
    grid = chunks
    if fmt == "zarr3-shard":  # the inner chunks' codecs go inside the shard's
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": chunks, "codecs": codecs, "index_location": "end",
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]
        grid = [chunks[0] * shard] + chunks[1:]
    meta = {"data_type": "float32", "shape": shape, "codecs": codecs,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": grid}}}
    return {"driver": "zarr3", "kvstore": kv, "metadata": meta}


def sync_and_drop(path):
    for root, _, files in os.walk(path):
        for f in files:
            fd = os.open(os.path.join(root, f), os.O_RDONLY)
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, r


def ts_version():
    """tensorstore's version (some builds have no __version__)."""
    try:
        from importlib.metadata import version
        return version("tensorstore")
    except Exception:
        return getattr(ts, "__version__", "?")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gib", type=float, default=2)
    p.add_argument("--chunk", type=int, default=64)
    p.add_argument("--dir", default="tensorstore_io.out")
    p.add_argument("--shard", type=int, default=4, help="zarr3-shard: chunks per shard along axis 0")
    p.add_argument("--formats", default="zarr,zarr3,zarr3-shard")
    p.add_argument("--codecs", default="raw,blosc-lz4")
    p.add_argument("--reps", type=int, default=1, help="repetitions of every measurement (median printed)")
    a = p.parse_args()
    n0 = max(1, int(a.gib * 256))
    shape, chunks = [n0, 1024, 1024], [a.chunk, 1024, 1024]
    data = np.random.default_rng(7).random(shape, dtype=np.float32)
    nbytes = data.nbytes
    print("# tensorstore %s: %.2f GiB float32 %s, chunks %s in %s" % (ts_version(), nbytes / 2**30, shape, chunks, a.dir))
    os.makedirs(a.dir, exist_ok=True)
    for fmt in a.formats.split(","):
        for codec in a.codecs.split(","):
            path = os.path.join(os.path.abspath(a.dir), "ts.%s.%s" % (fmt, codec))
            s = spec(fmt, codec, path, shape, chunks, a.shard)
            runs = []
            for _ in range(a.reps):
                t = ts.open(s, create=True, delete_existing=True).result()
                w, _ = timed(lambda: t.write(data).result())
                warm, got = timed(lambda: ts.open(s).result().read().result())
                # write+fsync as bench_io times it: a second write (tensorstore's file driver
                # fsyncs every file it writes by default), then fsync and drop of every file
                t = ts.open(s, create=True, delete_existing=True).result()
                durable, _ = timed(lambda: (t.write(data).result(), sync_and_drop(path)))
                cold, got = timed(lambda: ts.open(s).result().read().result())
                runs.append((w, warm, durable, cold))
            w, warm, durable, cold = (sorted(r[k] for r in runs)[len(runs) // 2] for k in range(4))
            if not np.array_equal(got, data):
                raise SystemExit("tensorstore_io: %s %s read back differs" % (fmt, codec))
            gb = [nbytes / w / 1e9, nbytes / durable / 1e9, nbytes / warm / 1e9, nbytes / cold / 1e9]
            print("%-6s %-10s write %7.2f  write+fsync %7.2f  read warm %7.2f  read cold %7.2f GB/s" % (fmt, codec, *gb))
            for op, v in zip(["write", "write+fsync", "read-warm", "read-cold"], gb):
                print("RESULT tensorstore %s %s %s %.3f" % (fmt, codec, op, v))
            shutil.rmtree(path)


if __name__ == "__main__":
    main()
