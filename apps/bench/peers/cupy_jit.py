#!/usr/bin/env python3
"""CuPy's runtime-compiled kernels beside bench_local --jit on the same GPU: ElementwiseKernel
triads (f32, f64, c64), x*sin(y)+exp(x) (f32, f64), a 10-operand sum of products and a strided
view (a[:, ::2] * 2 into a contiguous array), at 2^k elements; ReductionKernel sums of squares
and L2 norms along axis 1 (2^14 rows), f32 and f64 ("rk <what> <type> GB/s <value>"); then a new kernel's first call
(cold: a source CuPy has never seen, so NVRTC runs) and the host time per call of a small
ElementwiseKernel a + b (256 elements). Lines "ek <expr> <type> GB/s <value>" with bench_local's
byte counts, "ek cold-compile ms <value>", "ek small-a+b us <value>". Exit code 77 without CuPy."""
import argparse
import time
import uuid

from peer_timing import cupy, median_ms

cp = cupy("cupy_jit")


def host_us(fn, batches=20, calls=50):
    times = []
    for _ in range(batches + 1):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    cp.cuda.Device().synchronize()
    return sorted(times[1:])[batches // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--log2", type=int, default=28)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    o = p.parse_args()
    n = 1 << o.log2
    triad = cp.ElementwiseKernel("T a, T b, T c", "T z", "z = a * b + c", "peer_triad")
    sin_exp = cp.ElementwiseKernel("T x, T y", "T z", "z = x * sin(y) + exp(x)", "peer_sin_exp")
    ten = cp.ElementwiseKernel("T a0, T a1, T a2, T a3, T a4, T a5, T a6, T a7, T a8, T a9", "T z",
                               "z = a0 * a1 + a2 * a3 + a4 * a5 + a6 * a7 + a8 * a9", "peer_ten")
    scale = cp.ElementwiseKernel("T x", "T z", "z = x * (T)2", "peer_scale")
    print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}, n = 2^{o.log2}")
    for name, dtype in (("f32", cp.float32), ("f64", cp.float64), ("c64", cp.complex64)):
        size = cp.dtype(dtype).itemsize
        ins = [cp.full(n, 0.5 + 0.1 * i, dtype) for i in range(10)]
        z = cp.empty(n, dtype)
        line = lambda expr, nbytes, fn: print(f"ek {expr} {name} GB/s {nbytes / median_ms(fn, o.warmup, o.reps) / 1e6:.1f}")
        line("triad", 4 * n * size, lambda: triad(ins[0], ins[1], ins[2], z))
        if name != "c64":
            line("x*sin(y)+exp(x)", 3 * n * size, lambda: sin_exp(ins[0], ins[1], z))
            line("10-operand", 11 * n * size, lambda: ten(*ins, z))
            r = 1 << 14
            m = ins[0].reshape(r, n // r)
            half = cp.empty((r, n // r // 2), dtype)
            line("strided-view", 2 * (n // 2) * size, lambda: scale(m[:, ::2], half))
        del ins, z
    sumsq = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "peer_sum_of_squares")
    l2 = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "peer_l2_rows")
    for name, dtype in (("f32", cp.float32), ("f64", cp.float64)):
        x = cp.full(n, 0.5, dtype)
        nbytes = n * cp.dtype(dtype).itemsize
        print(f"rk sum-of-squares {name} GB/s {nbytes / median_ms(lambda: sumsq(x), o.warmup, o.reps) / 1e6:.1f}")
        m = x.reshape(1 << 14, n >> 14)
        print(f"rk l2-norm-axis-1 {name} GB/s {nbytes / median_ms(lambda: l2(m, axis=1), o.warmup, o.reps) / 1e6:.1f}")
        del x, m
    x = cp.ones(1 << 20, cp.float32)
    y = cp.ones(1 << 20, cp.float32)
    fresh = cp.ElementwiseKernel("T x, T y", "T z", "z = x * sin(y) + exp(x); // " + uuid.uuid4().hex, "peer_cold")
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    fresh(x, y)
    cp.cuda.Device().synchronize()
    print(f"ek cold-compile ms {(time.perf_counter() - t0) * 1e3:.2f}")
    add = cp.ElementwiseKernel("T a, T b", "T z", "z = a + b", "peer_add")
    a = cp.ones(256, cp.float64)
    zz = cp.empty(256, cp.float64)
    print(f"ek small-a+b us {host_us(lambda: add(a, a, zz)):.2f}")


if __name__ == "__main__":
    main()
