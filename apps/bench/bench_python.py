#!/usr/bin/env python3
"""The Python package on one GPU, beside CuPy and beside the C++ figures, in one run:
  - fused expressions on 2^28 elements (z[...] = a*b+c, np.exp(a)*b and a*np.sin(b)+np.exp(a),
    f32 and f64, on bench_local --jit's constant operands; it times the same three from C++) against
    CuPy's ElementwiseKernel of the same expression (GB/s: the bytes read and written once);
  - the host time per call of a small z[...] = a + b (256 elements) against cupy.add(out=) and a
    CuPy ElementwiseKernel call;
  - what the C++ benchmarks time, from Python: sum of 2^28 (GB/s, bench_local's "sum"), the c64
    512^3 FFT (ms, bench_fft; with out= as bench_fft reuses its output, and without), matmul
    8192^3 (TFLOP/s, bench_algorithms) and sort of 2^28 f32 keys (Gkeys/s, bench_algorithms);
  - that cupy.asarray(a.local) is the shard's own memory.
Every figure is a median; tessera and its peer alternate within each round. Lines are
"py <figure> <type> tessera <value> <peer> <value> ratio <tessera/peer>" (higher is better for
rates; for times the ratio is peer/tessera), or "py <figure> <type> <value> <unit>" for the ones
the C++ benchmarks print (apps/bench/gpu_python_vs_cxx.sh puts them side by side).

    mpirun -np 1 python3 apps/bench/bench_python.py [--quick]      (PYTHONPATH=<build>/python)
"""
import argparse
import statistics
import time

import numpy as np

import tessera as ts
from tessera import _tessera

try:
    import cupy as cp
except ImportError:  # the C++ comparisons still run
    cp = None


def sync_all(rt):
    _tessera.runtime_synchronize(rt.id)
    if cp is not None:
        cp.cuda.Device().synchronize()


def alternate(rt, fns, rounds=7, calls=10):
    """The median seconds per call of each function, the functions taking turns in each round."""
    times = [[] for _ in fns]
    for f in fns:
        f()
    for _ in range(rounds):
        for i, f in enumerate(fns):
            sync_all(rt)
            t0 = time.perf_counter()
            for _ in range(calls):
                f()
            sync_all(rt)
            times[i].append((time.perf_counter() - t0) / calls)
    return [statistics.median(t) for t in times]


def fused(rt, n):
    for dt in (np.float32, np.float64):
        # bench_local --jit's operands (0.5, 0.6, 0.7 everywhere), so that the C++ figure beside this
        # one reads the same values (what sin and exp cost depends on them).
        a, b, c = (ts.full((n,), v, dtype=dt, split=0) for v in (0.5, 0.6, 0.7))
        z = ts.zeros((n,), dtype=dt, split=0)
        ca, cb, cc = (cp.asarray(x.local) for x in (a, b, c))  # the same values, CuPy's own output
        cz = cp.empty(n, dt)
        cases = [("a*b+c", lambda: z.__setitem__(Ellipsis, a * b + c), "z = a * b + c", 4),
                 ("exp(a)*b", lambda: z.__setitem__(Ellipsis, np.exp(a) * b), "z = exp(a) * b", 3),
                 ("a*sin(b)+exp(a)", lambda: z.__setitem__(Ellipsis, a * np.sin(b) + np.exp(a)),
                  "z = a * sin(b) + exp(a)", 3)]
        for name, ours, body, nbytes in cases:
            k = cp.ElementwiseKernel("T a, T b, T c", "T z", body)
            t, tc = alternate(rt, [ours, lambda: k(ca, cb, cc, cz)], rounds=15)
            gb = nbytes * n * np.dtype(dt).itemsize / 1e9
            print(f"py fused:{name} {np.dtype(dt).name} tessera {gb / t:.1f} cupy-ElementwiseKernel {gb / tc:.1f} "
                  f"ratio {tc / t:.3f}", flush=True)
            np.testing.assert_allclose(cp.asnumpy(cz[:1000]), cp.asnumpy(cp.asarray(z.local)[:1000]), rtol=1e-6)
        del a, b, c, z, ca, cb, cc, cz


def host_us(fn, batches=21, calls=200):
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def small_call(rt):
    """Host time per call of small (256-element f64) additions, the same statement in both
    libraries where both have it, and CuPy's fastest forms; the launch floor beside them."""
    s, t = ts.random.uniform(size=(256,), split=0), ts.random.uniform(size=(256,), split=0)
    zz = ts.zeros((256,), split=0)
    ca, cb, co = cp.random.random(256), cp.random.random(256), cp.empty(256)
    k = cp.ElementwiseKernel("T a, T b", "T z", "z = a + b", "tessera_bench_add")
    empty = cp.RawKernel('extern "C" __global__ void tessera_bench_empty() {}', "tessera_bench_empty")

    def tessera_assign():
        zz[...] = s + t

    def cupy_assign():
        co[...] = ca + cb

    fns = {"tessera:z[...]=a+b": tessera_assign, "cupy:z[...]=a+b": cupy_assign,
           "tessera:np.add(out=)": lambda: np.add(s, t, out=zz), "cupy:np.add(out=)": lambda: np.add(ca, cb, out=co),
           "cupy:cupy.add(out=)": lambda: cp.add(ca, cb, out=co), "cupy:ElementwiseKernel": lambda: k(ca, cb, co),
           "cupy:empty-RawKernel": lambda: empty((1,), (1,), ())}
    us = {}
    for _ in range(2):  # two passes, alternating; the second counts
        for name, f in fns.items():
            for _ in range(200):
                f()
            sync_all(rt)
            us[name] = host_us(f)
    sync_all(rt)
    print("py small-a+b(256) f64 " + " ".join(f"{k} {v:.2f}" for k, v in us.items()) + " us-per-call", flush=True)
    for same in ("z[...]=a+b", "np.add(out=)"):
        print(f"py small-a+b(256) f64 same statement {same}: tessera {us['tessera:' + same]:.2f} cupy "
              f"{us['cupy:' + same]:.2f} us ratio {us['cupy:' + same] / us['tessera:' + same]:.3f}", flush=True)
    best = min(us["cupy:cupy.add(out=)"], us["cupy:ElementwiseKernel"])
    print(f"py small-a+b(256) f64 tessera z[...]=a+b {us['tessera:z[...]=a+b']:.2f} against CuPy's fastest form "
          f"{best:.2f} us ratio {best / us['tessera:z[...]=a+b']:.3f} (launch floor {us['cupy:empty-RawKernel']:.2f})",
          flush=True)
    view = cp.asarray(zz.local)
    assert view.data.ptr == zz.local.__cuda_array_interface__["data"][0]
    print("py zero-copy cupy.asarray(a.local) shares the shard's memory: yes", flush=True)


def like_cxx(rt, n, edge, fft_n):
    for dt in (np.float32, np.float64):
        a = ts.random.uniform(size=(n,), dtype=dt, split=0, seed=4)
        (t,) = alternate(rt, [lambda: ts.sum(a)], rounds=15)
        print(f"py sum {'f32' if dt == np.float32 else 'f64'} {n * np.dtype(dt).itemsize / t / 1e9:.1f} GB/s",
              flush=True)
        del a
    x = ts.random.uniform(size=(fft_n,) * 3, dtype=np.float32, split=0, seed=5).astype(np.complex64)
    x._handle()
    F = ts.fft.fftn(x)
    t_out, t_new = alternate(rt, [lambda: ts.fft.fftn(x, out=F), lambda: ts.fft.fftn(x)], rounds=7, calls=5)
    print(f"py fftn(out=) c64 {t_out * 1e3:.3f} ms", flush=True)
    print(f"py fftn c64 {t_new * 1e3:.3f} ms", flush=True)
    del x, F
    for dt in (np.float32, np.float64):
        A = ts.random.uniform(size=(edge, edge), dtype=dt, split=0, seed=6)
        B = ts.random.uniform(size=(edge, edge), dtype=dt, split=0, seed=7)
        (t,) = alternate(rt, [lambda: A @ B], rounds=5, calls=3)
        print(f"py matmul {'f32' if dt == np.float32 else 'f64'} {2.0 * edge ** 3 / t / 1e12:.2f} TFLOP/s", flush=True)
        del A, B
    keys = ts.random.uniform(size=(n,), dtype=np.float32, split=0, seed=8)
    (t,) = alternate(rt, [lambda: ts.sort(keys)], rounds=7, calls=3)
    print(f"py sort f32 {n / t / 1e9:.3f} Gkeys/s", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log2", type=int, default=28)
    p.add_argument("--matmul", type=int, default=8192)
    p.add_argument("--fft", type=int, default=512)
    p.add_argument("--only", default="fused,small,cxx")
    o = p.parse_args()
    rt = ts.init(device="cuda")
    parts = o.only.split(",")
    if cp is None and ("fused" in parts or "small" in parts):
        print("bench_python: CuPy is missing: the CuPy comparisons are skipped", flush=True)
        parts = [x for x in parts if x == "cxx"]
    if "fused" in parts:
        fused(rt, 1 << o.log2)
    if "small" in parts:
        small_call(rt)
    if "cxx" in parts:
        like_cxx(rt, 1 << o.log2, o.matmul, o.fft)
    ts.finalize()


if __name__ == "__main__":
    main()
