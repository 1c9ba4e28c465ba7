#!/usr/bin/env python3
"""A scaling model of Tessera's distributed operations: the time of a 3-D FFT (slab and pencil),
a redistribute, a halo step and SUMMA from per-GPU rates and link bandwidths, calibrated on the
2-GPU figures the project measured, checked against the 4-GPU ones, and projected to 8, 64 and
1024 GPUs.

The model (times per rank; P ranks, G GPUs per node, N^3 elements of `elem` bytes):
  - local work moves its bytes through HBM: t_local = passes * 2 * bytes / (P * hbm), where
    `passes` is measured on one GPU (the 3-D FFT's local stages, heat3d's stencil);
  - an all-to-all over a group of p ranks, g of them on this rank's node, sends bytes/P per rank,
    a fraction (g-1)/p over NVLink at `intra` (NCCL bus bandwidth) and (p-g)/p over the node's
    NICs at `nic` per GPU; both links run at once: t = max(intra part, inter part) + p * alpha
    (one message per peer, `alpha` each);
  - the pipeline overlaps the exchange of one chunk with the FFT of another: a fraction
    `overlap` of the shorter of the two is hidden, and each of the C chunks costs `chunk_latency`
    (launches and synchronization): t = t_local + t_comm - overlap * min(...) + C * chunk_latency;
  - slab: one all-to-all over all P ranks (P <= N); pencil (a Pr x Pc grid, Pc = the GPUs of a
    node where it can): two, one over the Pc ranks of a row (on one node) and one over the Pr of a
    column (across nodes);
  - SUMMA (sqrt(P) x sqrt(P)): 2 n^3 / (P * gemm) of GEMM, panels of A and B broadcast along rows
    and columns, 2 n^2 elem / sqrt(P) bytes received per rank, and a fitted cost per panel step;
  - a halo step: the stencil at heat3d's one-GPU rate, 2 faces of n^2 elements per split axis
    exchanged and overlapped with the interior.

    python3 apps/bench/model.py                 the validation table and the projections (markdown)
    python3 apps/bench/model.py --chart DIR     also DIR/model.png (matplotlib)
    python3 apps/bench/model.py --self-test     checks the model's own properties (CTest runs it)
    python3 apps/bench/model.py --check-page docs/gpus-and-slurm.md   the page shows these tables
"""
import argparse
import math
import sys
from dataclasses import dataclass, replace

GB = 1e9


@dataclass(frozen=True)
class Machine:
    """Per-GPU rates and links. Defaults: H200 SXM as measured by the project (one GPU's copy rate,
    NCCL bus bandwidths on NV18 NVLink) and a 400 Gb/s InfiniBand NIC per GPU."""
    hbm: float = 4.2e12  # B/s, the device copy (read + write counted once each)
    intra_2: float = 359.4 * GB  # NCCL/ipc all-to-all bus bandwidth, 2 GPUs (redistribute, 2x H200)
    intra: float = 336.4 * GB  # NCCL all-to-all bus bandwidth, 4+ GPUs of a node (4x H200)
    nic: float = 50 * GB  # per GPU: 400 Gb/s InfiniBand NDR
    alpha_intra: float = 2e-6  # s per peer message inside a node
    alpha_inter: float = 5e-6  # s per peer message across nodes
    gemm_f32: float = 53.6e12  # FLOP/s, one GPU's cuBLAS GEMM (n = 16384)
    gemm_f64: float = 55.2e12
    gpus_per_node: int = 8


# The measured figures the model is checked against (docs/performance/results/*.csv).
ONE_GPU_FFT_MS = {512: 1.744, 1024: 13.69}  # c64 forward, the split 3-D plan
MEASURED = [
    # (what, n, P, chunks, measured, unit)
    ("fft", 1024, 2, 8, 10.27, "ms"),
    ("fft", 512, 2, 4, 1.42, "ms"),
    ("fft", 1024, 4, 8, 6.98, "ms"),
    ("fft", 512, 4, 4, 1.22, "ms"),
    ("redistribute", 1024, 2, 8, 359.4, "GB/s busbw"),
    ("redistribute", 1024, 4, 8, 305.5, "GB/s busbw"),
    ("summa", 16384, 2, 0, 97.0, "TFLOP/s"),
    ("summa", 16384, 4, 0, 189.8, "TFLOP/s"),
    ("halo", 512, 2, 0, 97.3, "% of one GPU"),
    ("halo", 512, 4, 0, 97.1, "% of one GPU"),
]
CALIBRATION_P = 2  # fitted on these; the 4-GPU rows are predictions
SUMMA_PANEL = 1024  # columns per SUMMA step (the fitted time per step stands for its latency)


def intra_bw(m, p):
    return m.intra_2 if p <= 2 else m.intra


def all_to_all(m, bytes_per_rank, p, g):
    """Seconds of one all-to-all over p ranks, g of them on one node (g <= p)."""
    if p <= 1:
        return 0.0
    g = min(g, p)
    inside = bytes_per_rank * (g - 1) / p / intra_bw(m, g)
    outside = bytes_per_rank * (p - g) / p / m.nic
    latency = (g - 1) * m.alpha_intra + (p - g) * m.alpha_inter
    return max(inside, outside) + latency


def fft_local(n, p, elem=8):
    """Seconds of the local stages per rank: the one-GPU plan's passes over 1/p of the data."""
    if n in ONE_GPU_FFT_MS:
        return ONE_GPU_FFT_MS[n] * 1e-3 / p
    base = 1024 if n >= 1024 else 512  # passes per byte as measured at the nearest size
    return ONE_GPU_FFT_MS[base] * 1e-3 * (n / base) ** 3 * (math.log2(n) / math.log2(base)) * elem / 8 / p


@dataclass(frozen=True)
class Overlap:
    fraction: float  # of the shorter of local work and exchange, hidden
    chunk_latency: float  # s per pipeline chunk


def combine(local, comm, chunks, ov):
    return local + comm - ov.fraction * min(local, comm) + chunks * ov.chunk_latency


def pencil_grid(p, g):
    """Pr x Pc with Pc the GPUs of a node where possible (the row exchange stays on the node)."""
    pc = math.gcd(p, g)
    return p // pc, pc


def fft_time(m, ov, n, p, decomposition="slab", chunks=8, elem=8):
    """Seconds of one c2c N^3 forward transform over p GPUs."""
    nbytes = n ** 3 * elem
    local = fft_local(n, p, elem)
    if p == 1:
        return local
    g = min(p, m.gpus_per_node)
    if decomposition == "slab":
        if p > n:
            return math.inf  # a slab needs a plane per rank
        comm = all_to_all(m, nbytes / p, p, g)
    else:
        pr, pc = pencil_grid(p, g)
        if pr > n or pc > n:
            return math.inf
        comm = all_to_all(m, nbytes / p, pc, pc) + all_to_all(m, nbytes / p, pr, 1 if pr > 1 else pr)
    return combine(local, comm, chunks, ov)


def redistribute_busbw(m, ov, n, p, chunks=8, elem=8):
    """NCCL-style bus bandwidth of an axis-0 -> axis-2 redistribute of N^3 over p GPUs of a node."""
    nbytes = n ** 3 * elem
    t = all_to_all(m, nbytes / p, p, min(p, m.gpus_per_node)) + chunks * ov.chunk_latency
    return nbytes / p / t * (p - 1) / p


def summa_tflops(m, ov, n, p, elem=4):
    gemm = m.gemm_f32 if elem == 4 else m.gemm_f64
    q = math.isqrt(p)
    rows, cols = (q, p // q) if q * q != p else (q, q)
    compute = 2 * n ** 3 / (p * gemm)
    received = n * n * elem * (1 / rows + 1 / cols)  # A's panels along a row, B's along a column
    g = min(p, m.gpus_per_node)
    link = intra_bw(m, g) if p <= m.gpus_per_node else min(intra_bw(m, g), m.nic)
    comm = received / link
    steps = n // SUMMA_PANEL
    return 2 * n ** 3 / combine(compute, comm, steps, ov) / 1e12


def halo_efficiency(m, ov, n, p, elem=8):
    """heat3d weak scaling (n^3 per GPU, split along one axis): percent of one GPU's rate."""
    step = n ** 3 * elem * 2 / (0.914 * m.hbm)  # heat3d's one-GPU rate: 91.4% of the copy
    faces = 2 * n * n * elem
    g = min(p, m.gpus_per_node)
    link = intra_bw(m, g) if p <= m.gpus_per_node else m.nic
    comm = faces / link + 2 * m.alpha_intra
    return 100 * step / combine(step, comm, 0, ov)


def predict(m, fits, what, n, p, chunks):
    if what == "fft":
        return fft_time(m, fits["fft"], n, p, "slab", chunks) * 1e3
    if what == "redistribute":
        return redistribute_busbw(m, fits["fft"], n, p, chunks) / GB
    if what == "summa":
        return summa_tflops(m, fits["summa"], n, p)
    return halo_efficiency(m, fits["halo"], n, p)


def fit(m):
    """The overlap of each operation from its 2-GPU figures (the FFT's fraction and chunk latency
    from its two sizes; SUMMA's and the halo step's fraction from one figure each)."""
    rows = [r for r in MEASURED if r[0] == "fft" and r[2] == CALIBRATION_P]
    # t = local + comm - f * min + C * lat: two equations, unknowns f and lat.
    eqs = []
    for _, n, p, c, t, _ in rows:
        local, comm = fft_local(n, p), all_to_all(m, n ** 3 * 8 / p, p, min(p, m.gpus_per_node))
        eqs.append((-min(local, comm), c, t * 1e-3 - local - comm))
    (a1, b1, r1), (a2, b2, r2) = eqs
    det = a1 * b2 - a2 * b1
    f, lat = (r1 * b2 - r2 * b1) / det, (a1 * r2 - a2 * r1) / det
    fits = {"fft": Overlap(min(max(f, 0.0), 1.0), max(lat, 0.0))}
    fits["summa"] = _one_latency(lambda ov: summa_tflops(m, ov, 16384, CALIBRATION_P),
                                 _measured("summa", CALIBRATION_P))
    fits["halo"] = _one_fraction(lambda ov: halo_efficiency(m, ov, 512, CALIBRATION_P),
                                 _measured("halo", CALIBRATION_P), higher=True)
    return fits


def _one_latency(model, target):
    """No overlap, and the time per panel step whose prediction (a rate) is closest to target."""
    lo, hi = 0.0, 1e-2
    for _ in range(80):
        mid = (lo + hi) / 2
        if model(Overlap(0.0, mid)) > target:
            lo = mid
        else:
            hi = mid
    return Overlap(0.0, (lo + hi) / 2)


def _measured(what, p):
    return next(r[4] for r in MEASURED if r[0] == what and r[2] == p)


def _one_fraction(model, target, higher):
    """The overlap fraction in [0, 1] whose prediction is closest to target (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        v = model(Overlap(mid, 0.0))
        if (v < target) == higher:
            lo = mid
        else:
            hi = mid
    return Overlap((lo + hi) / 2, 0.0)


def validation(m, fits):
    out = []
    for what, n, p, c, measured, unit in MEASURED:
        model = predict(m, fits, what, n, p, c)
        role = "fitted" if p == CALIBRATION_P else "predicted"
        out.append((what, n, p, measured, model, unit, role, (model - measured) / measured))
    return out


def projections(m, fits, sizes=(1024, 2048, 4096), gpus=(8, 64, 1024)):
    rows = []
    for n in sizes:
        for p in gpus:
            slab = fft_time(m, fits["fft"], n, p, "slab") * 1e3
            pencil = fft_time(m, fits["fft"], n, p, "pencil") * 1e3
            rows.append((n, p, slab, pencil))
    return rows


def markdown(m, fits):
    lines = ["Fitted on the 2-GPU figures: FFT overlap %.2f and %.0f us per chunk; SUMMA %.0f us per "
             "panel step (no overlap); halo overlap %.2f." % (
                 fits["fft"].fraction, fits["fft"].chunk_latency * 1e6, fits["summa"].chunk_latency * 1e6,
                 fits["halo"].fraction), "",
             "| Operation | Size | GPUs | Measured | Model | Unit | Role | Error |", "|---|---|---|---|---|---|---|---|"]
    for what, n, p, meas, model, unit, role, err in validation(m, fits):
        lines.append(f"| {what} | {n} | {p} | {meas:g} | {model:.3g} | {unit} | {role} | {100 * err:+.1f}% |")
    lines += ["", "| N^3 (c64) | GPUs | slab ms | pencil ms | faster |", "|---|---|---|---|---|"]
    for n, p, slab, pencil in projections(m, fits):
        best = "pencil" if pencil < slab else "slab"
        s = "-" if math.isinf(slab) else f"{slab:.3g}"
        lines.append(f"| {n} | {p} | {s} | {pencil:.3g} | {best} |")
    return "\n".join(lines)


def chart(m, fits, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    gpus = [8, 16, 32, 64, 128, 256, 512, 1024, 2048]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n, style in ((1024, ":"), (2048, "-"), (4096, "--")):
        for dec, color in (("slab", "tab:blue"), ("pencil", "tab:orange")):
            ys = [fft_time(m, fits["fft"], n, p, dec) * 1e3 for p in gpus]
            ax.plot(gpus, ys, style, color=color, label=f"{n}^3 {dec} (model, H200, 400 Gb/s per GPU)")
    # cuFFTMp's published strong scaling, 2048^3 single precision on A100s: 8 GPUs of one node
    # 78 ms down to about 4 ms on 2048 GPUs (NVIDIA's cuFFTMp blog, Selene).
    ax.plot([8, 2048], [78, 4], "k^", label="cuFFTMp 2048^3 (published, A100)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("ms per forward c2c transform")
    ax.set_title("3-D FFT strong scaling: Tessera's model")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = f"{outdir}/model.png"
    fig.savefig(path, dpi=110)
    print(f"{path} written")


def self_test(m, fits):
    """Properties the model must have; returns the failures."""
    bad = []
    for what, n, p, meas, model, unit, role, err in validation(m, fits):
        if role == "fitted" and what == "fft" and abs(err) > 1e-6:
            bad.append(f"the fit does not reproduce {what} {n} at {p} GPUs ({100 * err:+.2f}%)")
    if not 0 <= fits["fft"].fraction <= 1:
        bad.append(f"FFT overlap {fits['fft'].fraction} outside [0, 1]")
    for n in (1024, 2048):
        t = [fft_time(m, fits["fft"], n, p, "pencil") for p in (8, 64, 1024)]
        if not t[0] > t[1]:
            bad.append(f"{n}^3: 64 GPUs not faster than 8 ({t})")
    if not math.isinf(fft_time(m, fits["fft"], 1024, 2048, "slab")):
        bad.append("a slab of 1024 planes over 2048 GPUs is not refused")
    faster_nic = replace(m, nic=m.nic * 4)
    if not fft_time(faster_nic, fits["fft"], 2048, 64, "pencil") < fft_time(m, fits["fft"], 2048, 64, "pencil"):
        bad.append("a faster NIC does not make the 64-GPU transform faster")
    if not fft_time(m, fits["fft"], 4096, 1024, "pencil") < fft_time(m, fits["fft"], 4096, 1024, "slab"):
        bad.append("at 1024 GPUs the slab's 1023 messages per rank should lose to pencils")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chart", metavar="DIR")
    ap.add_argument("--nic-gbps", type=float, default=400, help="per-GPU NIC rate in Gb/s")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--check-page", metavar="MD", help="fail unless MD holds this output between its model markers")
    o = ap.parse_args()
    m = Machine(nic=o.nic_gbps / 8 * GB, gpus_per_node=o.gpus_per_node)
    fits = fit(m)
    if o.check_page:
        text = open(o.check_page, encoding="utf-8").read()
        begin, end = "<!-- model-table:begin -->\n", "<!-- model-table:end -->"
        if begin not in text or end not in text:
            print(f"model.py: {o.check_page} has no {begin.strip()} ... {end} markers")
            return 1
        shown = text.split(begin, 1)[1].split(end, 1)[0].strip()
        if shown != markdown(m, fits).strip():
            print(f"model.py: the tables in {o.check_page} are not this model's output; paste:\n{markdown(m, fits)}")
            return 1
        print(f"model.py: {o.check_page} shows the model's tables")
        return 0
    if o.self_test:
        bad = self_test(m, fits)
        for b in bad:
            print("model.py self-test:", b)
        print("model.py self-test:", "FAILED" if bad else "passed")
        return 1 if bad else 0
    print(markdown(m, fits))
    if o.chart:
        chart(m, fits, o.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
