#!/usr/bin/env python3
"""CuPy's equivalents of bench_algorithms on the same GPU: matmul (a @ b, n^3, f32 and f64,
TFLOP/s = 2 n^3 / t), sort (cupy.sort of 2^k uniform f32 and random int64 keys, Gkeys/s), argsort
(cupy.argsort, with --argsort) and cumsum (cupy.cumsum of 2^k f32, GB/s = 8 * 2^k / t); median of
CUDA-event timings. Prints one line per figure: "<figure> <type> <unit> <value>". Exit code 77 when
CuPy is missing."""
import argparse

from peer_timing import cupy, median_ms

cp = cupy("cupy_algorithms")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--what", default="matmul,sort,cumsum")
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--log2", type=int, default=28)
    p.add_argument("--argsort", action="store_true")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    o = p.parse_args()
    w, r = o.warmup, o.reps
    print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}")
    rng = cp.random.default_rng(1)
    what = o.what.split(",")
    if "matmul" in what:
        n = o.n
        for t, name in ((cp.float32, "f32"), (cp.float64, "f64")):
            a = rng.random((n, n), dtype=t) * 2 - 1
            b = rng.random((n, n), dtype=t) * 2 - 1
            ms = median_ms(lambda: a @ b, w, r)
            print(f"matmul {name} TFLOP/s {2.0 * n ** 3 / ms / 1e9:.3f}")
            del a, b
    k = 1 << o.log2
    if "sort" in what:
        keys = {"f32": rng.random(k, dtype=cp.float32),
                "i64": rng.integers(-(2 ** 62), 2 ** 62, size=k, dtype=cp.int64)}
        for name, x in keys.items():
            ms = median_ms(lambda: cp.sort(x), w, r)
            print(f"sort {name} Gkeys/s {k / ms / 1e6:.3f}")
            if o.argsort:
                ms = median_ms(lambda: cp.argsort(x), w, r)
                print(f"argsort {name} Gkeys/s {k / ms / 1e6:.3f}")
        del keys
    if "cumsum" in what:
        x = rng.random(k, dtype=cp.float32) * 2 - 1
        ms = median_ms(lambda: cp.cumsum(x), w, r)
        print(f"cumsum f32 GB/s {8.0 * k / ms / 1e6:.3f}")


if __name__ == "__main__":
    main()
