#!/usr/bin/env python3
"""The Python package beside the C++ library and CuPy on one GPU, in one run: runs bench_local
(2^N, --jit), bench_distributed (sum of 2^N f32 to a host scalar, as Python's), bench_fft (c2c
single, F^3), bench_algorithms (matmul M^3, sort 2^N) and
bench_python.py, then prints one table: each Python figure, the same figure from C++ and the
ratio Python / C++ (target: >= 0.98), and bench_python's CuPy ratios (target: >= 1.0). The
figures of both languages (sum, FFT, matmul, sort) come from --repeat runs of each, taking turns.

    apps/bench/compare_python.py BUILD_DIR [--log2 28] [--matmul 8192] [--fft 512] [--repeat 3]
"""
import argparse
import os
import re
import statistics
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


def parse_cxx(dist, fft, algos):
    """The C++ figures beside Python's: sum to a host scalar (GB/s), the c64 FFT (ms), matmul
    (TFLOP/s) and sort (Gkeys/s)."""
    cxx = {}
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
    return cxx


def parse_py(py):
    """bench_python's figures of what C++ also times: {(name, type): value}."""
    got = {}
    for line in py.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0] == "py" and f[1] in ("sum", "matmul", "sort"):
            got[(f[1], {"f32": "float32", "f64": "float64"}[f[2]])] = float(f[3])
        elif len(f) >= 4 and f[0] == "py" and f[1].startswith("fftn"):
            got[(f[1], "complex64")] = float(f[3])
    return got


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build")
    p.add_argument("--log2", type=int, default=28)
    p.add_argument("--matmul", type=int, default=8192)
    p.add_argument("--fft", type=int, default=512)
    p.add_argument("--repeat", type=int, default=3,
                   help="runs of the C++ benchmarks and of Python's, taking turns; medians compared")
    o = p.parse_args()
    apps = os.path.join(o.build, "apps")
    env = dict(os.environ, PYTHONPATH=os.path.join(o.build, "python"))

    def python(*only):
        return run(["mpirun", "--oversubscribe", "-np", "1", sys.executable, os.path.join(HERE, "bench_python.py"),
                    "--log2", str(o.log2), "--matmul", str(o.matmul), "--fft", str(o.fft), "--only", ",".join(only)],
                   env=env)

    local = mpirun(f"{apps}/bench_local", "--min-log2", str(o.log2), "--max-log2", str(o.log2), "--no-figures",
                   "--jit")
    py = python("fused", "small")
    # The figures Python shares with C++ move a few percent from one process to the next on one
    # GPU; the two take turns, o.repeat times, and their medians are compared.
    cxx_runs, py_runs = [], []
    for _ in range(o.repeat):
        fft = mpirun(f"{apps}/bench_fft", "--nx", str(o.fft), "--ny", str(o.fft), "--nz", str(o.fft), "--type",
                     "c2c", "--precision", "single")
        dist = mpirun(f"{apps}/bench_distributed", "--tests", "sum", "--n", str(1 << o.log2))
        algos = mpirun(f"{apps}/bench_algorithms", "--what", "matmul,sort", "--n", str(o.matmul), "--log2",
                       str(o.log2))
        cxx_runs.append(parse_cxx(dist, fft, algos))
        py_runs.append(parse_py(python("cxx")))

    jit, on_device = {}, {}
    for line in local.splitlines():
        f = line.split()
        if len(f) >= 9 and f[0].startswith("cuda") and f[1] in ("f32", "f64"):
            on_device["float32" if f[1] == "f32" else "float64"] = float(f[6])  # no host scalar: an upper bound
        m = re.match(r"jit (\S+)\s+(f32|f64)\s+nvcc_GB/s\s+(\S+)\s+jit_GB/s\s+(\S+)", line)
        if m:
            jit[(m.group(1), "float32" if m.group(2) == "f32" else "float64")] = max(float(m.group(3)),
                                                                                      float(m.group(4)))

    names = {"a*b+c": "triad", "exp(a)*b": "exp(x)*y", "a*sin(b)+exp(a)": "x*sin(y)+exp(x)"}
    nan = float("nan")
    print(f"{'figure':<30} {'python':>10} {'c++':>10} {'py/c++':>7}   {'peer':>10} {'py/peer':>7}")
    for line in py.splitlines():
        f = line.split()
        if not f or f[0] != "py":
            continue
        if f[1].startswith("fused:"):
            expr, t = f[1][6:], f[2]
            ours, peer = float(f[4]), float(f[6])
            c = jit.get((names[expr], t))
            print(f"{expr + ' ' + t + ' GB/s':<30} {ours:>10.1f} {c if c else nan:>10.1f} "
                  f"{ours / c if c else nan:>7.3f}   {peer:>10.1f} {ours / peer:>7.3f}")
        elif f[1].startswith("small"):
            print(line)
    units = {"sum": "GB/s", "matmul": "TFLOP/s", "sort": "Gkeys/s"}
    for key in sorted({k for r in py_runs for k in r}):
        ours = statistics.median(r[key] for r in py_runs if key in r)
        name, t = key
        ck = ("fft", "complex64") if name.startswith("fftn") else key
        cs = [r[ck] for r in cxx_runs if ck in r]
        c = statistics.median(cs) if cs else nan
        lower_is_better = name.startswith("fftn")
        ratio = (c / ours if lower_is_better else ours / c) if cs else nan
        label = f"{name} {'c64 ms' if lower_is_better else t + ' ' + units[name]}"
        runs = " ".join(f"{(x[ck] / y[key] if lower_is_better else y[key] / x[ck]):.3f}"
                        for x, y in zip(cxx_runs, py_runs) if ck in x and key in y)
        print(f"{label:<30} {ours:>10.3f} {c:>10.3f} {ratio:>7.3f}   (medians of {len(py_runs)} turns; "
              f"each turn's ratio: {runs or '-'})")
        if name == "sum" and t in on_device:
            print(f"{'sum ' + t + ' GB/s (c++ on device)':<30} {ours:>10.3f} {on_device[t]:>10.3f} "
                  f"{ours / on_device[t]:>7.3f}")


if __name__ == "__main__":
    main()
