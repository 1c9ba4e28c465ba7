#!/usr/bin/env python3
"""Passes over memory of one 3-D forward FFT of bench_fft (one rank, one GPU), by ncu: each kernel
of the first forward transform with the DRAM bytes it read and wrote and its time, in passes (one
read of the whole input and one write of the whole output = 1 pass; c2c: the array twice; r2c: the
real array and its n^2 (n/2 + 1) complex spectrum), and their sum: how many passes the plan makes
(docs/fft.md, "Passes over memory").

  python3 apps/bench/fft_passes.py BUILD/apps/bench_fft [--n 512] [--type c2c|r2c] [--precision single|double]
  python3 apps/bench/fft_passes.py --parse NCU_CSV --n 512 [--type ...] [--precision ...]
                                   (an `ncu --csv` log already taken)

The plan's form follows the environment (TESSERA_FFT_PLANE_KERNEL, TESSERA_FFT_AXIS_KERNEL, ...).
Exit code 77 when ncu is missing."""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"]
# ncu's units (its CSV and text pages spell times both ways), to bytes and seconds.
SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
         "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1, "ns": 1e-9, "us": 1e-6, "ms": 1e-3,
         "s": 1}
# The kernels of a transform: Tessera's passes and cuFFT's (whose kernel names contain "fft").
FFT_KERNELS = ("axis0_kernel", "plane_kernel", "plane_real_kernel", "fft")


def kernels(lines):
    """(name, {metric: value in bytes or seconds}) per profiled kernel, in launch order."""
    rows = csv.reader(line for line in lines if line.startswith('"'))
    header = next(rows, None)
    if header is None:
        raise SystemExit("fft_passes: no CSV rows in the ncu log")
    col = {h: i for i, h in enumerate(header)}
    for h in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"):
        if h not in col:
            raise SystemExit(f"fft_passes: the ncu log has no '{h}' column (columns: {header})")
    found = {}
    for r in rows:
        unit = r[col["Metric Unit"]]
        if unit not in SCALE:
            raise SystemExit(f"fft_passes: unknown unit '{unit}' of {r[col['Metric Name']]}")
        value = float(r[col["Metric Value"]].replace(",", "")) * SCALE[unit]
        k = found.setdefault(r[col["ID"]], (r[col["Kernel Name"]], {}))
        k[1][r[col["Metric Name"]]] = value
    return [found[i] for i in sorted(found, key=int)]


def first_transform(ks):
    """The FFT kernels from the first one up to (not including) the next launch of that first one."""
    fft = [k for k in ks if any(f in k[0] for f in FFT_KERNELS)]
    if not fft:
        raise SystemExit("fft_passes: no FFT kernel among the profiled ones")
    first = fft[0][0]
    one = [fft[0]]
    for k in fft[1:]:
        if k[0] == first:
            break
        one.append(k)
    return one


def short(name):
    """The kernel's own name and template arguments, without namespaces and parameters."""
    base = name.replace("void ", "").replace("<unnamed>::", "").split("(")[0].strip()
    head = base.split("<")[0]
    return (head.split("::")[-1] + base[len(head):])[:60]


def pass_bytes(n, kind, precision):
    """Bytes of one pass: the forward's input read once and its output written once."""
    real = 4 if precision == "single" else 8
    if kind == "c2c":
        return 2 * n ** 3 * 2 * real
    return n ** 3 * real + n * n * (n // 2 + 1) * 2 * real


def report(ks, n, kind, precision):
    one = pass_bytes(n, kind, precision)
    print(f"fft passes: one {n}^3 {kind} {precision} forward, a pass {one / 1e9:.3f} GB (input read, output written)")
    total_passes = total_s = 0.0
    for name, m in first_transform(ks):
        rd, wr, t = (m.get(x, 0.0) for x in METRICS)
        passes = (rd + wr) / one
        total_passes, total_s = total_passes + passes, total_s + t
        print(f"  {short(name):<60} read {rd / 1e9:6.3f} GB  write {wr / 1e9:6.3f} GB  {t * 1e3:7.3f} ms  "
              f"{passes:5.2f} passes")
    print(f"  total: {total_passes:.2f} passes, {total_s * 1e3:.3f} ms")


def profile(bench, n, kind, precision):
    ncu = shutil.which("ncu")
    if not ncu:
        print("fft_passes: ncu not found")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "ncu.csv")
        cmd = [ncu, "--csv", "--log-file", log, "--metrics", ",".join(METRICS), "--launch-count", "16",
               bench, str(n), str(n), str(n), "--type", kind, "--precision", precision, "--iters", "1",
               "--warmup", "1"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(log) as f:
            return kernels(f.read().splitlines())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="?", help="bench_fft")
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--type", default="c2c", choices=["c2c", "r2c"])
    ap.add_argument("--precision", default="single", choices=["single", "double"])
    ap.add_argument("--parse", help="an ncu --csv log to read instead of running ncu")
    a = ap.parse_args()
    if not a.parse and not a.bench:
        ap.error("give bench_fft's path or --parse")
    if a.parse:
        with open(a.parse) as f:
            ks = kernels(f.read().splitlines())
    else:
        ks = profile(a.bench, a.n, a.type, a.precision)
    report(ks, a.n, a.type, a.precision)


if __name__ == "__main__":
    main()
