#!/usr/bin/env python3
"""Draws heat3d's slices as PNGs a person reads: the plane in units of the box on both axes, a
colour bar with values, the step and simulated time in the title (matplotlib, Agg).

  plot_slice.py DIR/u_000020_slice.npy [...]   one PNG per slice: DIR/u_000020.png
  plot_slice.py SLICE.npy -o OUT.png           one slice, any name
  plot_slice.py --probe                        exit 0 when numpy and matplotlib import, else 77

A slice is what heat3d --output writes at each snapshot: the plane x = x_i (i = nx/2) of u as a
.npy of shape (1, ny, nz), and beside it a .json with what the picture needs (step, time, the
global shape, the plane's index, the box lengths, the colour map). Without the .json, the plane is
drawn on the 2 pi-periodic box with no step or time. Colours span +-max|u| (the mode is signed).
heat3d runs this script once, after its timed loop, with every slice of the run.
"""
import argparse
import json
import math
import os
import sys
from fractions import Fraction


def probe():
    try:
        import matplotlib
        import numpy  # noqa: F401

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except Exception as e:  # ImportError, or a broken backend
        print(f"{sys.executable} cannot draw with matplotlib: {e}")
        return 77
    return 0


def pi_text(x):
    """x as a multiple of pi where it is a simple one (pi/2, 2pi/3), else a decimal."""
    f = Fraction(x / math.pi).limit_denominator(64)
    if abs(float(f) * math.pi - x) > 1e-9 * max(1.0, abs(x)):
        return f"{x:.4g}"
    if f == 0:
        return "0"
    num = "π" if f.numerator == 1 else f"{f.numerator}π"
    return num if f.denominator == 1 else f"{num}/{f.denominator}"


def meta_of(npy_path):
    stem = npy_path[: -len(".npy")] if npy_path.endswith(".npy") else npy_path
    path = stem + ".json"
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def png_of(npy_path):
    stem = npy_path[: -len(".npy")] if npy_path.endswith(".npy") else npy_path
    return (stem[: -len("_slice")] if stem.endswith("_slice") else stem) + ".png"


def draw(npy_path, png_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    u = np.load(npy_path)
    if u.ndim == 3 and u.shape[0] == 1:
        u = u[0]
    if u.ndim != 2:
        raise ValueError(f"{npy_path}: a slice is 2-D (or 1 x ny x nz), not {u.shape}")
    m = meta_of(npy_path)
    ny, nz = u.shape
    shape = m.get("shape", [None, ny, nz])
    lengths = m.get("lengths", [2 * math.pi] * 3)
    axis_names = "xyz"
    a = int(m.get("axis", 0))
    rows, cols = [b for b in range(3) if b != a]
    hy, hz = lengths[rows] / ny, lengths[cols] / nz
    vmax = float(np.max(np.abs(u))) if u.size else 0.0
    if not vmax > 0:
        vmax = 1.0

    fig, ax = plt.subplots(figsize=(6.4, 5.4), dpi=120, constrained_layout=True)
    # Cell centres at the grid points j*h: each pixel spans [j*h - h/2, j*h + h/2].
    im = ax.imshow(u, origin="lower", cmap=m.get("colormap", "viridis"), vmin=-vmax, vmax=vmax,
                   extent=(-hz / 2, lengths[cols] - hz / 2, -hy / 2, lengths[rows] - hy / 2),
                   interpolation="nearest" if max(ny, nz) < 256 else "antialiased")
    for axis, length in ((ax.xaxis, lengths[cols]), (ax.yaxis, lengths[rows])):
        if abs(length - 2 * math.pi) < 1e-12:
            axis.set_major_locator(MultipleLocator(math.pi / 2))
            axis.set_major_formatter(FuncFormatter(lambda v, _: pi_text(v)))
    ax.set_xlabel(axis_names[cols])
    ax.set_ylabel(axis_names[rows])
    bar = fig.colorbar(im, ax=ax, shrink=0.9)
    bar.set_label(m.get("quantity", "u"))

    if "index" in m and shape[a]:
        where = f"{axis_names[a]} = {pi_text(m['index'] * lengths[a] / shape[a])}"
    else:
        where = f"{axis_names[a]} = const"
    plane = f"{m.get('quantity', 'u')}({where}, {axis_names[rows]}, {axis_names[cols]})"
    title = f"{m.get('program', 'heat3d')}: {plane}"
    if "step" in m:
        title += f"\nstep {m['step']}, t = {m.get('time', float('nan')):.4g}"
    if all(shape):
        title += f", {'×'.join(str(s) for s in shape)} {m.get('dtype', '')}".rstrip()
    ax.set_title(title)
    fig.savefig(png_path)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("slices", nargs="*", help="slice .npy files (heat3d's DIR/u_NNNNNN_slice.npy)")
    p.add_argument("-o", "--output", help="the PNG (one slice only; default: beside the slice)")
    p.add_argument("--probe", action="store_true", help="exit 0 if matplotlib can draw, else 77")
    a = p.parse_args()
    if a.probe:
        return probe()
    if not a.slices:
        p.error("no slice given")
    if a.output and len(a.slices) != 1:
        p.error("-o takes one slice")
    if probe() != 0:
        return 77
    for s in a.slices:
        out = a.output or png_of(s)
        draw(s, out)
        print(f"plot_slice: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
