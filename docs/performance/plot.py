#!/usr/bin/env python3
"""The performance pages' charts and tables, drawn from docs/performance/results/*.csv.

  plot.py OUTDIR [CSV...]       one bar chart per CSV (Tessera beside the peer, the ratio written
                                at each pair) as OUTDIR/<name>.png; default: every results/*.csv
  plot.py --check OUTDIR        the same, then checks that every PNG is there and not trivial
  plot.py --markdown CSV        the page's current table, in Markdown
  plot.py --check-pages         every page's table is the one --markdown gives for its CSV

A CSV has the columns figure,type,tessera,peer,ratio,unit,better,peer_name,machine,commit and
any extra ones (shown in the table after the ratio). `better` is higher or lower; the ratio is
Tessera's figure over the peer's where higher is better, the peer's over Tessera's where lower
is better (above 1: Tessera ahead), computed from both figures, or taken from `ratio` where the
run recorded only the ratio. Exit code 77 (a skipped CTest test) when matplotlib is missing for
the charts. Run with /usr/bin/python3 (Debian: python3-matplotlib).
"""
import csv
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
RESULTS = HERE / "results"
BASE = ["figure", "type", "tessera", "peer", "ratio", "unit", "better", "peer_name", "machine", "commit"]
BEGIN, END = "<!-- results-table:begin -->", "<!-- results-table:end -->"


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
        extra = [c for c in (f and rows and rows[0].keys() or []) if c not in BASE]
    if not rows:
        raise SystemExit(f"{path}: no rows")
    missing = [c for c in BASE if c not in rows[0]]
    if missing:
        raise SystemExit(f"{path}: missing columns {missing}")
    for i, r in enumerate(rows, 2):
        if r["better"] not in ("higher", "lower"):
            raise SystemExit(f"{path}:{i}: better must be higher or lower, not {r['better']!r}")
        if not r["tessera"] and not r["ratio"]:
            raise SystemExit(f"{path}:{i}: neither a figure nor a ratio")
        if r["tessera"] and r["peer"] and r["ratio"]:
            raise SystemExit(f"{path}:{i}: a ratio beside both figures (it is computed from them)")
    return rows, extra


def ratio(r):
    if r["tessera"] and r["peer"]:
        t, p = float(r["tessera"]), float(r["peer"])
        return t / p if r["better"] == "higher" else p / t
    return float(r["ratio"]) if r["ratio"] else None


def ratio_text(r):
    if r["ratio"]:
        return r["ratio"]
    x = ratio(r)
    return "" if x is None else f"{x:.3f}"


def markdown(path):
    rows, extra = read(path)
    head = ["Figure", "Type", "Unit", "Tessera", "Peer", "Ratio"] + extra + ["Peer is", "Machine", "Commit"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["figure"], r["type"], r["unit"], r["tessera"], r["peer"], ratio_text(r)]
        cells += [r[c] for c in extra] + [r["peer_name"], r["machine"], r["commit"]]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)


def check_pages():
    bad = 0
    for path in sorted(RESULTS.glob("*.csv")):
        page = HERE / (path.stem + ".md")
        if not page.exists():
            print(f"{path.name}: no page {page.name}")
            bad += 1
            continue
        text = page.read_text(encoding="utf-8")
        if BEGIN not in text or END not in text:
            print(f"{page.name}: no {BEGIN} ... {END} markers")
            bad += 1
            continue
        table = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
        if table != markdown(path):
            print(f"{page.name}: the table differs from {path.name}; put there:\n{markdown(path)}")
            bad += 1
        else:
            print(f"{page.name}: the table is {path.name}'s")
    return 1 if bad else 0


def draw(path, outdir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, _ = read(path)
    # One panel per unit; rows with only a ratio go to a panel relative to the peer (= 1).
    # Where a unit has such rows, its other rows with a peer join them, drawn by their ratio.
    relative = {r["unit"] for r in rows if not r["tessera"]}
    panels = {}
    for r in rows:
        rel = r["unit"] in relative and ratio(r) is not None
        unit = f"relative to the peer ({r['unit']}; peer = 1)" if rel else r["unit"]
        panels.setdefault(unit, []).append((r, rel))
    heights = [len(v) + 1.5 for v in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 0.42 * sum(heights) + 1.0),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    peers = sorted({r["peer_name"] for r in rows if r["peer_name"]})
    for n, (ax, (unit, rs)) in enumerate(zip(axes[:, 0], panels.items())):
        labels, tess, peer = [], [], []
        for r, rel in rs:
            labels.append(f"{r['figure']} [{r['type']}]" if r["type"] not in ("", "-") else r["figure"])
            if rel:
                tess.append(ratio(r))
                peer.append(1.0)
            else:
                tess.append(float(r["tessera"]))
                peer.append(float(r["peer"]) if r["peer"] else None)
        rs = [r for r, _ in rs]
        y = range(len(rs))
        h = 0.38
        ax.barh([i - h / 2 for i in y], tess, height=h, color="#1f77b4", label="Tessera")
        ax.barh([i + h / 2 for i in y], [p or 0 for p in peer], height=h, color="#ff7f0e", label="peer")
        top = max(max(tess), max((p or 0) for p in peer))
        for i, r in enumerate(rs):
            x = ratio(r)
            text = f"×{ratio_text(r)}" if x is not None else "no peer"
            ax.text(max(tess[i], peer[i] or 0) + 0.01 * top, i, text, va="center", fontsize=8)
        ax.set_yticks(list(y))
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, top * 1.22)
        better = {r["better"] for r in rs}
        note = "" if len(better) != 1 else (" (higher is better)" if better == {"higher"} else " (lower is better)")
        ax.set_xlabel(unit + note, fontsize=9)
        if n == 0:  # one legend, above the bars, where it covers no label
            ax.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False)
        ax.grid(axis="x", alpha=0.3)
    machines = sorted({r["machine"] for r in rows})
    commits = sorted({r["commit"] for r in rows})
    fig.suptitle(f"{path.stem}: Tessera beside {', '.join(peers) or 'no peer'}\n"
                 f"{'; '.join(machines)}; commit {', '.join(commits)}; ratio above 1: Tessera ahead",
                 fontsize=9)
    fig.tight_layout()
    out = outdir / (path.stem + ".png")
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return out


def main(argv):
    if len(argv) == 2 and argv[0] == "--markdown":
        print(markdown(pathlib.Path(argv[1])))
        return 0
    if argv == ["--check-pages"]:
        return check_pages()
    check = bool(argv) and argv[0] == "--check"
    if check:
        argv = argv[1:]
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is missing (Debian: apt-get install python3-matplotlib): no charts")
        return 77
    outdir = pathlib.Path(argv[0])
    outdir.mkdir(parents=True, exist_ok=True)
    csvs = [pathlib.Path(a) for a in argv[1:]] or sorted(RESULTS.glob("*.csv"))
    bad = 0
    for path in csvs:
        out = draw(path, outdir)
        size = out.stat().st_size
        print(f"{out}: {size} bytes")
        if check:
            with open(out, "rb") as f:
                head = f.read(24)
            width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
            if head[:8] != b"\x89PNG\r\n\x1a\n" or size < 8000 or width < 400 or height < 150:
                print(f"{out}: not a chart ({size} bytes, {width}x{height})")
                bad += 1
    if check and not csvs:
        print("no CSV files")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
