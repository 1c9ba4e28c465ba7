#!/usr/bin/env python3
"""Checks heat3d's output files.

  check_output.py DIR N HAVE_PNG     the restart test's files (below)
  check_output.py --png DIR N STEP...   the PNG test's: matplotlib's pictures of each step's slice

DIR/a holds a Zarr snapshot (u_000010.zarr) and the checkpoint (a Zarr v3 group), DIR/b the .npy snapshot of step 20,
its slice (u_000020_slice.npy and .json) and its PNG. The .npy must load with numpy, have shape (N, N, N), dtype
float64, and match the sine mode cos(x) sin(2y) sin(3z) up to one amplitude (the decay factor) to 1e-12; the slice
must be its plane x = pi. The PNG is plot_slice.py's (matplotlib) or, where heat3d found no matplotlib, the bare
colour map (N x N enlarged by a whole factor to at least 512), which HAVE_PNG (libpng) says to expect.
With --png (run by heat3d's Python), exit 77 (skipped) when that Python cannot import matplotlib.
"""
import json
import os
import struct
import sys
import zlib

try:
    import numpy as np
except ImportError:
    print("numpy missing: skipped")
    sys.exit(77)


def png_chunks(path):
    """The PNG's size and its text chunks (keyword -> text)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", (path, data[:8])
    pos, size, text = 8, None, {}
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"tEXt":
            k, _, v = body.partition(b"\0")
            text[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt":
            k, _, v = body.partition(b"\0")
            text[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"IEND":
            break
        pos += 12 + n
    return size, text


def by_matplotlib(text):
    return "matplotlib" in text.get("Software", "").lower()


def check_slice(d, stem, u, n, step):
    """STEM_slice.npy is u's plane x = pi (index n // 2) and STEM_slice.json describes it."""
    s = np.load(os.path.join(d, stem + "_slice.npy"))
    assert s.shape == (1, n, n) and s.dtype == u.dtype, (s.shape, s.dtype)
    if u.ndim == 3:
        assert np.array_equal(s[0], u[n // 2]), "the slice is not the plane x = pi"
    meta = json.load(open(os.path.join(d, stem + "_slice.json")))
    assert meta["step"] == step and meta["shape"] == [n, n, n] and meta["axis"] == 0, meta
    assert meta["index"] == n // 2 and abs(meta["lengths"][1] - 2 * np.pi) < 1e-15, meta
    return s, meta


def restart_files(d, n, have_png):
    u = np.load(os.path.join(d, "b", "u_000020.npy"))
    assert u.shape == (n, n, n) and u.dtype == np.float64, (u.shape, u.dtype)
    x = 2 * np.pi * np.arange(n) / n
    mode = np.cos(x)[:, None, None] * np.sin(2 * x)[None, :, None] * np.sin(3 * x)[None, None, :]
    amp = float(np.sum(u * mode) / np.sum(mode * mode))
    err = np.linalg.norm(u - amp * mode) / np.linalg.norm(amp * mode)
    assert 0 < amp < 1 and err < 1e-12, (amp, err)
    check_slice(os.path.join(d, "b"), "u_000020", u, n, 20)

    meta = json.load(open(os.path.join(d, "a", "u_000010.zarr", ".zarray")))
    assert meta["shape"] == [n, n, n] and meta["dtype"] == "<f8", meta
    ckpt = json.load(open(os.path.join(d, "a", "checkpoint", "zarr.json")))
    assert ckpt["node_type"] == "group" and ckpt["attributes"]["step"] == 10, ckpt
    field = json.load(open(os.path.join(d, "a", "checkpoint", "u", "zarr.json")))
    assert field["node_type"] == "array" and field["shape"] == [n, n, n], field

    png = os.path.join(d, "b", "u_000020.png")
    if os.path.exists(png):
        (w, h), text = png_chunks(png)
        if not by_matplotlib(text):  # the bare colour map: the plane, enlarged by a whole factor
            side = n * max(1, 512 // n)
            assert (w, h) == (side, side), (w, h)
    else:
        assert not have_png, f"{png} missing"
    print(f"heat3d files ok: amplitude {amp:.6f}, mode error {err:.1e}")


def png_files(d, n, steps):
    try:
        import matplotlib  # noqa: F401  (only whether it imports)
    except ImportError:
        print(f"{sys.executable} has no matplotlib: heat3d draws bare PNGs; skipped")
        sys.exit(77)
    for step in steps:
        stem = f"u_{step:06d}"
        s, meta = check_slice(d, stem, np.empty(0), n, step)
        assert meta["colormap"] == "inferno" and meta["time"] > 0, meta
        (w, h), text = png_chunks(os.path.join(d, stem + ".png"))
        assert by_matplotlib(text), (stem, text)
        assert w >= 400 and h >= 400, (w, h)  # a figure, not the 20 x 20 plane
    print(f"heat3d PNGs ok: {len(steps)} drawn by matplotlib ({w} x {h})")


def main():
    if sys.argv[1] == "--png":
        png_files(sys.argv[2], int(sys.argv[3]), [int(s) for s in sys.argv[4:]])
    else:
        restart_files(sys.argv[1], int(sys.argv[2]), sys.argv[3] in ("1", "ON", "TRUE", "true"))


if __name__ == "__main__":
    main()
