#!/usr/bin/env python3
"""CuPy's equivalents of bench_local on the same GPU: triad z = a*b + c (ElementwiseKernel), sum
(cupy.sum) and copy (cupy.copyto), f32, f64, c64 and c128 at 2^k elements; then, on a square
2-D array of 2^k elements (f32, f64), a.sum(axis=0), a.sum(axis=1), copyto of a[:, ::2], copyto
of a.T and (f32) a cast to f64. Median of CUDA-event timings. Prints one line per figure:
"<op> <type> GB/s <value>", bytes counted as bench_local counts them (triad 4 n size, sum n size,
copy 2 n size). Exit code 77 when CuPy is missing."""
import argparse
import sys

from peer_timing import cupy, median_ms

cp = cupy("cupy_local")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--log2", type=int, default=28)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    o = p.parse_args()
    n = 1 << o.log2
    triad = cp.ElementwiseKernel("T a, T b, T c", "T z", "z = a * b + c", "tessera_peer_triad")
    print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}, n = 2^{o.log2}")
    for name, dtype in (("f32", cp.float32), ("f64", cp.float64), ("c64", cp.complex64), ("c128", cp.complex128)):
        a = cp.full(n, 1.5, dtype)
        b = cp.full(n, 2, dtype)
        c = cp.full(n, 0.25, dtype)
        z = cp.empty(n, dtype)
        size = n * cp.dtype(dtype).itemsize
        t = median_ms(lambda: triad(a, b, c, z), o.warmup, o.reps)
        print(f"triad {name} GB/s {4 * size / t / 1e6:.1f}")
        t = median_ms(lambda: a.sum(), o.warmup, o.reps)
        print(f"sum {name} GB/s {size / t / 1e6:.1f}")
        t = median_ms(lambda: cp.copyto(z, a), o.warmup, o.reps)
        print(f"copy {name} GB/s {2 * size / t / 1e6:.1f}")
        if complex(z[-1]) != 1.5:
            sys.exit("cupy_local: copy gave a wrong value")
        del a, b, c, z
    r = 1 << (o.log2 // 2)
    for name, dtype in (("f32", cp.float32), ("f64", cp.float64)):
        size = cp.dtype(dtype).itemsize
        n = r * r
        a = cp.ones((r, r), dtype)
        half = cp.empty((r, r // 2), dtype)
        t2 = cp.empty((r, r), dtype)
        figure = lambda op, nbytes, fn: print(f"{op} {name} GB/s {nbytes / median_ms(fn, o.warmup, o.reps) / 1e6:.1f}")
        figure("axis0-sum", n * size, lambda: a.sum(axis=0))
        figure("axis1-sum", n * size, lambda: a.sum(axis=1))
        figure("strided-copy", 2 * (n // 2) * size, lambda: cp.copyto(half, a[:, ::2]))
        figure("transpose-copy", 2 * n * size, lambda: cp.copyto(t2, a.T))
        if dtype == cp.float32:
            w = cp.empty((r, r), cp.float64)
            figure("cast-to-f64", n * 12, lambda: cp.copyto(w, a))
        del a, half, t2


if __name__ == "__main__":
    main()
