#!/usr/bin/env python3
"""heat3d in Python: explicit diffusion u_t = alpha * lap(u) on the periodic box [0, 2pi)^3 with the
7-point stencil, halos exchanged by tessera each step, the stencil applied to each rank's shard
without a copy: by NumPy on the host, by CuPy on a GPU (--device cuda; CuPy runs on tessera's
stream, the one the shard's __cuda_array_interface__ names). --check compares with the scheme's
exact solution: from u0 = sin x sin y sin z every step multiplies u by g = 1 - 6 c (1 - cos h),
c = alpha dt / h^2.

    mpirun -np 4 python3 apps/python/heat3d.py --n 64 --steps 50 --check [--device cuda]
"""
import argparse
import math
import time

import numpy as np

import tessera as ts
from shards import Shards

sh = Shards("host")  # replaced in main() by the runtime's device


def initial(u, h):
    """sin x sin y sin z on this rank's block."""
    x = [np.sin(h * np.arange(s.start, s.stop)) for s in u.block]
    sh.view(u.local)[...] = sh.xp.asarray(x[0][:, None, None] * x[1][None, :, None] * x[2][None, None, :])


def step(u, c):
    """One explicit Euler step: halos, then the stencil on the interior."""
    u.exchange_halos()
    p = sh.view(u.shard(halos=True))
    mid = p[1:-1, 1:-1, 1:-1]
    lap = (p[2:, 1:-1, 1:-1] + p[:-2, 1:-1, 1:-1] + p[1:-1, 2:, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 1:-1, 2:]
           + p[1:-1, 1:-1, :-2] - 6.0 * mid)
    mid += c * lap


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=64, help="cells per axis")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--split", default="0", help="the split: an axis, or axes like 0,1")
    ap.add_argument("--check", action="store_true", help="compare with the scheme's exact solution")
    ap.add_argument("--device", default="host", help="host, or cuda (the stencil by CuPy)")
    o = ap.parse_args()
    global sh
    sh = Shards(o.device)
    rt = ts.init(device=o.device)
    split = tuple(int(a) for a in o.split.split(",")) if "," in o.split else int(o.split)
    h = 2 * math.pi / o.n
    dt = 0.9 * h * h / (6 * o.alpha)  # stable: c < 1/6
    c = o.alpha * dt / (h * h)
    u = ts.zeros((o.n,) * 3, split=split, halo=1, periodic=True)
    with sh.on_tessera_stream(u):
        initial(u, h)
        norm0 = float(ts.linalg.norm(u))
        t0 = time.perf_counter()
        for _ in range(o.steps):
            step(u, c)
        u.synchronize()
    rt.comm.Barrier()
    elapsed = time.perf_counter() - t0
    if rt.rank == 0:
        cells = o.n ** 3 * o.steps / elapsed
        print(f"heat3d.py: {o.steps} steps of {o.n}^3 on {rt.size} ranks in {elapsed:.3f} s ({cells:.3e} cells/s)")
    if o.check:
        g = 1 - 6 * c * (1 - math.cos(h))
        exact = ts.zeros((o.n,) * 3, split=split, halo=1, periodic=True)
        with sh.on_tessera_stream(exact):
            initial(exact, h)
        exact *= g ** o.steps
        err = float(ts.linalg.norm(u - exact)) / norm0
        tol = 1e-13 * max(1, o.steps)
        ok = err <= tol
        if rt.rank == 0:
            print(f"heat3d.py: L2 error vs the scheme's exact solution {err:.3e} of |u0| (tolerance {tol:.1e}): "
                  f"check {'passed' if ok else 'FAILED'}")
        if not ok:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
