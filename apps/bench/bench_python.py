#!/usr/bin/env python3
"""The Python package on one GPU beside CuPy, in one run: fused expressions on 2^28 elements
(z[...] = a*b+c and np.exp(a)*b, f32 and f64) against CuPy's ElementwiseKernel of the same
expression (GB/s counted as the bytes read and written once), the time per call of a small a+b
(256 elements) against cupy.add, and that cupy.asarray(a.local) is the shard's own memory.

    mpirun -np 1 python3 apps/bench/bench_python.py      (PYTHONPATH=<build>/python)
"""
import time

import cupy as cp
import numpy as np

import tessera as ts
from tessera import _tessera

rt = ts.init(device="cuda")
sync = lambda: _tessera.runtime_synchronize(rt.id)
n = 1 << 28
for dt in (np.float32, np.float64):
    a, b, c = (ts.random.uniform(size=(n,), dtype=dt, split=0, seed=s) for s in (1, 2, 3))
    z = ts.zeros((n,), dtype=dt, split=0)
    for name, f, ck, nbytes in [("a*b+c", lambda: z.__setitem__(Ellipsis, a * b + c), "z = a * b + c", 4),
                                ("exp(a)*b", lambda: z.__setitem__(Ellipsis, np.exp(a) * b), "z = exp(a) * b", 3)]:
        f(); sync()
        t0 = time.perf_counter()
        for _ in range(20): f()
        sync(); t = (time.perf_counter() - t0) / 20
        k = cp.ElementwiseKernel("T a, T b, T c", "T z", ck)
        ca, cb, cc = (cp.random.random(n, dtype=dt) for _ in range(3)); cz = cp.empty(n, dt)
        k(ca, cb, cc, cz); cp.cuda.Device().synchronize()
        t1 = time.perf_counter()
        for _ in range(20): k(ca, cb, cc, cz)
        cp.cuda.Device().synchronize(); tc = (time.perf_counter() - t1) / 20
        gb = nbytes * n * np.dtype(dt).itemsize / 1e9
        print(f"{name} {np.dtype(dt).name}: tessera {gb / t:.0f} GB/s, cupy ElementwiseKernel {gb / tc:.0f} GB/s, ratio {tc / t:.3f}")
    assert np.allclose(np.asarray(z.local)[:5].get() if hasattr(z.local, 'get') else cp.asarray(z.local)[:5].get(), (np.exp(a.numpy()[:5]) * b.numpy()[:5]), rtol=1e-5)
    del a, b, c, z
s = ts.random.uniform(size=(256,), split=0); t2 = ts.random.uniform(size=(256,), split=0); zz = ts.zeros((256,), split=0)
for _ in range(100): zz[...] = s + t2
sync(); t0 = time.perf_counter()
for _ in range(2000): zz[...] = s + t2
sync(); us = (time.perf_counter() - t0) / 2000 * 1e6
ca, cb = cp.random.random(256), cp.random.random(256); co = cp.empty(256)
for _ in range(100): cp.add(ca, cb, out=co)
cp.cuda.Device().synchronize(); t0 = time.perf_counter()
for _ in range(2000): cp.add(ca, cb, out=co)
cp.cuda.Device().synchronize(); usc = (time.perf_counter() - t0) / 2000 * 1e6
print(f"small a+b (256): tessera {us:.2f} us per call, cupy {usc:.2f} us")
x = cp.asarray(zz.local); print("cupy view of the shard shares memory:", x.data.ptr == zz.local.__cuda_array_interface__["data"][0])
