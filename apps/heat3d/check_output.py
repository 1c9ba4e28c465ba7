#!/usr/bin/env python3
"""Checks the files of the heat3d restart test: check_output.py DIR N HAVE_PNG.

DIR/a holds a Zarr snapshot (u_000010.zarr) and the checkpoint (a Zarr v3 group), DIR/b the .npy snapshot of step 20
and its PNG. The .npy must load with numpy, have shape (N, N, N), dtype float64, and match the
sine mode cos(x) sin(2y) sin(3z) up to one amplitude (the decay factor) to 1e-12.
"""
import json
import os
import struct
import sys

try:
    import numpy as np
except ImportError:
    print("numpy missing: skipped")
    sys.exit(77)


def main():
    d, n, have_png = sys.argv[1], int(sys.argv[2]), sys.argv[3] in ("1", "ON", "TRUE", "true")
    u = np.load(os.path.join(d, "b", "u_000020.npy"))
    assert u.shape == (n, n, n) and u.dtype == np.float64, (u.shape, u.dtype)
    x = 2 * np.pi * np.arange(n) / n
    mode = np.cos(x)[:, None, None] * np.sin(2 * x)[None, :, None] * np.sin(3 * x)[None, None, :]
    amp = float(np.sum(u * mode) / np.sum(mode * mode))
    err = np.linalg.norm(u - amp * mode) / np.linalg.norm(amp * mode)
    assert 0 < amp < 1 and err < 1e-12, (amp, err)

    meta = json.load(open(os.path.join(d, "a", "u_000010.zarr", ".zarray")))
    assert meta["shape"] == [n, n, n] and meta["dtype"] == "<f8", meta
    ckpt = json.load(open(os.path.join(d, "a", "checkpoint", "zarr.json")))
    assert ckpt["node_type"] == "group" and ckpt["attributes"]["step"] == 10, ckpt
    field = json.load(open(os.path.join(d, "a", "checkpoint", "u", "zarr.json")))
    assert field["node_type"] == "array" and field["shape"] == [n, n, n], field

    if have_png:
        with open(os.path.join(d, "b", "u_000020.png"), "rb") as f:
            head = f.read(24)
        assert head[:8] == b"\x89PNG\r\n\x1a\n", head
        w, h = struct.unpack(">II", head[16:24])
        side = n * max(1, 512 // n)  # the x = pi plane (n x n), enlarged by a whole factor
        assert (w, h) == (side, side), (w, h)
    print(f"heat3d files ok: amplitude {amp:.6f}, mode error {err:.1e}")


if __name__ == "__main__":
    main()
