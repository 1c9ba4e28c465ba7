#!/usr/bin/env python3
"""The Python package beside the C++ library and CuPy on one GPU, in one run: runs bench_local
(2^N, --jit), bench_distributed (sum of 2^N f32 to a host scalar, as Python's), bench_fft (c2c
single, F^3), bench_algorithms (matmul M^3, sort 2^N) and
bench_python.py, then prints one table: each Python figure, the same figure from C++ and the
ratio Python / C++ (target: >= 0.98), and bench_python's CuPy ratios (target: >= 1.0).

    apps/bench/compare_python.py BUILD_DIR [--log2 28] [--matmul 8192] [--fft 512]
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env=None):
    print("$ " + " ".join(cmd), flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    print(out, flush=True)
    return out


def mpirun(exe, *args):
    return run(["mpirun", "--oversubscribe", "-np", "1", exe, *args])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build")
    p.add_argument("--log2", type=int, default=28)
    p.add_argument("--matmul", type=int, default=8192)
    p.add_argument("--fft", type=int, default=512)
    o = p.parse_args()
    apps = os.path.join(o.build, "apps")
    local = mpirun(f"{apps}/bench_local", "--min-log2", str(o.log2), "--max-log2", str(o.log2), "--no-figures",
                   "--jit")
    fft = mpirun(f"{apps}/bench_fft", "--nx", str(o.fft), "--ny", str(o.fft), "--nz", str(o.fft), "--type", "c2c",
                 "--precision", "single")
    dist = mpirun(f"{apps}/bench_distributed", "--tests", "sum", "--n", str(1 << o.log2))
    algos = mpirun(f"{apps}/bench_algorithms", "--what", "matmul,sort", "--n", str(o.matmul), "--log2", str(o.log2))
    env = dict(os.environ, PYTHONPATH=os.path.join(o.build, "python"))
    py = run(["mpirun", "--oversubscribe", "-np", "1", sys.executable, os.path.join(HERE, "bench_python.py"),
              "--log2", str(o.log2), "--matmul", str(o.matmul), "--fft", str(o.fft)], env=env)

    cxx = {}
    for line in local.splitlines():
        f = line.split()
        if len(f) >= 9 and f[0].startswith("cuda") and f[1] in ("f32", "f64"):
            t = "float32" if f[1] == "f32" else "float64"
            cxx[("sum-on-device", t)] = float(f[6])  # no host scalar: an upper bound
        m = re.match(r"jit (\S+)\s+(f32|f64)\s+nvcc_GB/s\s+(\S+)\s+jit_GB/s\s+(\S+)", line)
        if m:
            t = "float32" if m.group(2) == "f32" else "float64"
            cxx[("jit:" + m.group(1), t)] = max(float(m.group(3)), float(m.group(4)))
    m = re.search(r"sum\s+f32 1 x (\d+): ([\d.]+) ms", dist)
    if m:  # td::sum: the same distributed sum to a host scalar as Python's
        cxx[("sum", "float32")] = 4 * int(m.group(1)) / float(m.group(2)) / 1e6
    m = re.search(r"forward ([\d.]+) ms", fft)
    if m:
        cxx[("fft", "complex64")] = float(m.group(1))
    for line in algos.splitlines():
        f = line.split()
        if len(f) >= 7 and f[0] in ("matmul", "sort"):
            cxx[(f[0], {"f32": "float32", "f64": "float64"}.get(f[1], f[1]))] = float(f[5])  # the rate

    names = {"a*b+c": "triad", "exp(a)*b": "exp(x)*y", "a*sin(b)+exp(a)": "x*sin(y)+exp(x)"}
    print(f"{'figure':<30} {'python':>10} {'c++':>10} {'py/c++':>7}   {'peer':>10} {'py/peer':>7}")
    for line in py.splitlines():
        f = line.split()
        if not f or f[0] != "py":
            continue
        if f[1].startswith("fused:"):
            expr, t = f[1][6:], f[2]
            ours, peer = float(f[4]), float(f[6])
            c = cxx.get(("jit:" + names[expr], t))
            print(f"{expr + ' ' + t + ' GB/s':<30} {ours:>10.1f} {c if c else float('nan'):>10.1f} "
                  f"{ours / c if c else float('nan'):>7.3f}   {peer:>10.1f} {ours / peer:>7.3f}")
        elif f[1].startswith("small"):
            print(line)
        elif f[1] in ("sum", "matmul", "sort"):
            t = {"f32": "float32", "f64": "float64"}[f[2]]
            c = cxx.get((f[1], t))
            if f[1] == "sum":
                c_dev = cxx.get(("sum-on-device", t))
                print(f"{'sum ' + t + ' GB/s (c++ on device)':<30} {float(f[3]):>10.3f} "
                      f"{c_dev if c_dev else float('nan'):>10.3f} {float(f[3]) / c_dev if c_dev else float('nan'):>7.3f}")
            ours = float(f[3])
            print(f"{f[1] + ' ' + t + ' ' + f[4]:<30} {ours:>10.3f} {c if c else float('nan'):>10.3f} "
                  f"{ours / c if c else float('nan'):>7.3f}")
        elif f[1].startswith("fftn"):
            c = cxx.get(("fft", "complex64"))
            ours = float(f[3])
            print(f"{f[1] + ' c64 ms':<30} {ours:>10.3f} {c if c else float('nan'):>10.3f} "
                  f"{c / ours if c else float('nan'):>7.3f}")


if __name__ == "__main__":
    main()
