#!/usr/bin/env python3
"""Compares two builds of Tessera on this machine, side by side in one run: bench_local (2^28
elements, with its axis-sum, strided-copy and cast figures), bench_fft 512^3 c2c, heat3d --n 512
and bench_io (1 rank, --io-gib GiB of float32: .npy and Zarr v2/v3, raw and Blosc-LZ4), each run
alternately (A, B, A, B, ...) `--rounds` times (A first in even rounds, B first in odd ones); prints the median of each figure and the ratio B/A (for times, A/B: > 1 means B is faster).

  apps/bench/ab_builds.py OLD_BUILD NEW_BUILD [--rounds 3]
"""
import argparse
import re
import statistics
import subprocess
import sys


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"ab_builds: {' '.join(cmd)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return out.stdout


def bench_local(build):
    text = run([f"{build}/apps/bench_local", "--min-log2", "28", "--max-log2", "28", "--reps", "20"])
    figures = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[1] in ("f32", "f64"):
            figures[f"triad {f[1]} GB/s"] = float(f[4])
            figures[f"sum {f[1]} GB/s"] = float(f[6])
            figures[f"copy {f[1]} GB/s"] = float(f[8])
        elif len(f) == 5 and f[0] == "figure":  # axis sums, strided and transposing copies, the cast
            figures[f"{f[1]} {f[2]} GB/s"] = float(f[4])
    return figures


def bench_fft(build):
    text = run([f"{build}/apps/bench_fft", "512", "512", "512", "--iters", "10"])
    m = re.search(r"forward ([0-9.]+) ms.*backward ([0-9.]+) ms", text)
    if not m:
        sys.exit("ab_builds: no timing in bench_fft's output:\n" + text)
    return {"fft 512^3 c2c forward ms": float(m.group(1)), "fft 512^3 c2c backward ms": float(m.group(2))}


def heat3d(build):
    text = run([f"{build}/apps/heat3d/heat3d", "--n", "512", "--steps", "500"])
    m = re.search(r"cells/s, ([0-9.e+]+) GB/s", text)
    if not m:
        sys.exit("ab_builds: no throughput in heat3d's output:\n" + text)
    return {"heat3d 512^3 double GB/s": float(m.group(1))}


IO_GIB = 1


def bench_io(build):
    subprocess.run(["sync"], check=False)  # the other side's files written back first
    text = run([f"{build}/apps/bench_io", "--gib", str(IO_GIB), "--reps", "3", "--formats", "npy,zarr,zarr3",
                "--codecs", "raw,blosc-lz4", "--dir", "/tmp/ab_builds_io"])
    figures = {}
    for line in text.splitlines():
        f = line.split()  # RESULT tessera FORMAT CODEC OP GB/s
        if len(f) == 6 and f[0] == "RESULT":
            figures[f"io {f[2]} {f[3]} {f[4]} GB/s"] = float(f[5])
    if not figures:
        sys.exit("ab_builds: no RESULT lines in bench_io's output:\n" + text)
    return figures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", help="build directory A (before)")
    p.add_argument("b", help="build directory B (after)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--io-gib", type=float, default=IO_GIB, help="bench_io's array size (0: no bench_io)")
    p.add_argument("--only", default="local,fft,heat3d,io", help="comma list of local, fft, heat3d, io")
    o = p.parse_args()
    named = {"local": bench_local, "fft": bench_fft, "heat3d": heat3d, "io": bench_io}
    benches = [named[n] for n in o.only.split(",") if n != "io" or o.io_gib > 0]
    globals()["IO_GIB"] = o.io_gib
    samples = {}
    for r in range(o.rounds):
        # A first in even rounds, B first in odd ones: neither side always inherits the other's
        # dirty page cache or warm clocks.
        sides = (("A", o.a), ("B", o.b)) if r % 2 == 0 else (("B", o.b), ("A", o.a))
        for side, build in sides:
            for bench in benches:
                for key, value in bench(build).items():
                    samples.setdefault(key, {"A": [], "B": []})[side].append(value)
    print(f"{'figure':30s} {'A (median)':>12s} {'B (median)':>12s} {'B vs A':>8s}")
    for key, s in samples.items():
        a, b = statistics.median(s["A"]), statistics.median(s["B"])
        ratio = a / b if key.endswith(" ms") else b / a  # > 1: B is faster
        print(f"{key:30s} {a:12.4g} {b:12.4g} {ratio:8.3f}")


if __name__ == "__main__":
    main()
