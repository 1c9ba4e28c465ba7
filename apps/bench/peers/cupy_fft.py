#!/usr/bin/env python3
"""CuPy's peers of poisson and bench_fft on the same GPU, median of CUDA-event timings:
  poisson: rfftn -> multiply by -1/|k|^2 -> irfftn of an n^3 float64 array (what poisson --n n does);
  c2c:     fftn / ifftn of an n^3 complex64 array; r2c: rfftn / irfftn of an n^3 float32 array;
  slab2d:  one GPU's 2-D pass of an n^3 complex64 slab FFT over --ranks GPUs (fftn over the two
           inner axes of an (n/ranks, n, n) array).
One line per figure: "<what> <n> ms <value>". Exit code 77 when CuPy is missing."""
import argparse

from peer_timing import cupy, median_ms

cp = cupy("cupy_fft")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--what", default="poisson,c2c,r2c")
    ap.add_argument("--ranks", type=int, default=4)
    a = ap.parse_args()
    n, what = a.n, a.what.split(",")
    cp.fft.config.get_plan_cache().clear()
    if "poisson" in what:
        k = cp.fft.fftfreq(n, d=1.0 / n) * (2 * cp.pi / (2 * cp.pi))  # integer wavenumbers on [0, 2pi)^3
        kz = cp.fft.rfftfreq(n, d=1.0 / n)
        k2 = k[:, None, None] ** 2 + k[None, :, None] ** 2 + kz[None, None, :] ** 2
        k2[0, 0, 0] = 1.0
        inv = -1.0 / k2
        inv[0, 0, 0] = 0.0
        f = cp.random.random((n, n, n), dtype=cp.float64)
        print(f"poisson {n} ms {median_ms(lambda: cp.fft.irfftn(cp.fft.rfftn(f) * inv, s=f.shape)):.4f}")
        del f, inv, k2
    if "c2c" in what:
        x = (cp.random.random((n, n, n), dtype=cp.float32) + 0j).astype(cp.complex64)
        print(f"c2c-forward {n} ms {median_ms(lambda: cp.fft.fftn(x)):.4f}")
        print(f"c2c-backward {n} ms {median_ms(lambda: cp.fft.ifftn(x)):.4f}")
        del x
    if "r2c" in what:
        r = cp.random.random((n, n, n), dtype=cp.float32)
        h = cp.fft.rfftn(r)
        print(f"r2c-forward {n} ms {median_ms(lambda: cp.fft.rfftn(r)):.4f}")
        print(f"c2r-backward {n} ms {median_ms(lambda: cp.fft.irfftn(h, s=r.shape)):.4f}")
    if "slab2d" in what:
        s = cp.ones((n // a.ranks, n, n), cp.complex64)
        print(f"slab2d-{a.ranks} {n} ms {median_ms(lambda: cp.fft.fftn(s, axes=(1, 2))):.4f}")


if __name__ == "__main__":
    main()
