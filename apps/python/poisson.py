#!/usr/bin/env python3
"""poisson in Python: lap(u) = f on the periodic box [0, 2pi)^3 by a distributed FFT: U = rfftn(f),
U_k *= -1/|k|^2 on each rank's block of the spectrum (U_0 = 0; by NumPy on the host, by CuPy on a
GPU without a copy, on tessera's stream), u = irfftn(U). --check compares with the analytic
solution of f = -3 sin x sin y sin z, u = sin x sin y sin z.

    mpirun -np 4 python3 apps/python/poisson.py --n 64 --check [--device cuda]
"""
import argparse
import math
import time

import numpy as np

import tessera as ts
from shards import Shards

sh = Shards("host")  # replaced in main() by the runtime's device


def sines(a, h):
    x = [np.sin(h * np.arange(s.start, s.stop)) for s in a.block]
    return x[0][:, None, None] * x[1][None, :, None] * x[2][None, None, :]


def solve(f):
    """u with lap(u) = f (the mean of u is 0)."""
    F = ts.fft.rfftn(f)
    n = f.shape
    k = [np.fft.fftfreq(n[0], 1 / n[0]), np.fft.fftfreq(n[1], 1 / n[1]), np.fft.rfftfreq(n[2], 1 / n[2])]
    kb = [k[a][s] for a, s in enumerate(F.block)]
    k2 = kb[0][:, None, None] ** 2 + kb[1][None, :, None] ** 2 + kb[2][None, None, :] ** 2
    with np.errstate(divide="ignore"):
        inv = np.where(k2 > 0, -1.0 / k2, 0.0)
    with sh.on_tessera_stream(F):
        sh.view(F.local)[...] *= sh.xp.asarray(inv)  # this rank's block of the spectrum, in place
    return ts.fft.irfftn(F)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=64, help="cells per axis")
    ap.add_argument("--repeat", type=int, default=3, help="timed solves (the median is printed)")
    ap.add_argument("--check", action="store_true", help="compare with the analytic solution")
    ap.add_argument("--device", default="host", help="host, or cuda (the spectral multiply by CuPy)")
    o = ap.parse_args()
    global sh
    sh = Shards(o.device)
    rt = ts.init(device=o.device)
    h = 2 * math.pi / o.n
    f = ts.zeros((o.n,) * 3, split=0)
    with sh.on_tessera_stream(f):
        sh.view(f.local)[...] = sh.xp.asarray(-3.0 * sines(f, h))
    times = []
    for _ in range(o.repeat):
        t0 = time.perf_counter()
        u = solve(f)
        rt.comm.Barrier()
        times.append(time.perf_counter() - t0)
    if rt.rank == 0:
        print(f"poisson.py: {o.n}^3 on {rt.size} ranks: {1e3 * sorted(times)[len(times) // 2]:.2f} ms per solve")
    if o.check:
        exact = ts.zeros_like(u)  # irfftn returns to f's layout
        with sh.on_tessera_stream(exact):
            sh.view(exact.local)[...] = sh.xp.asarray(sines(exact, h))
        err = float(ts.max(abs(u - exact)))
        ok = err <= 1e-10
        if rt.rank == 0:
            print(f"poisson.py: max error {err:.3e} (tolerance 1.0e-10): check {'passed' if ok else 'FAILED'}")
        if not ok:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
