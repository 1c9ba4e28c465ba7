#!/usr/bin/env python3
"""CuPy's equivalents of bench_local on the same GPU: triad z = a*b + c (ElementwiseKernel), sum
(cupy.sum) and copy (cupy.copyto), f32 and f64 at 2^k elements; median of CUDA-event timings.
Prints one line per figure: "<op> <type> GB/s <value>", bytes counted as bench_local counts them
(triad 4 n size, sum n size, copy 2 n size). Exit code 77 when CuPy is missing."""
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
    for name, dtype in (("f32", cp.float32), ("f64", cp.float64)):
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
        if float(z[-1]) != 1.5:
            sys.exit("cupy_local: copy gave a wrong value")


if __name__ == "__main__":
    main()
