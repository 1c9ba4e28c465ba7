#!/usr/bin/env bash
# Tessera's bench_local beside CuPy (apps/bench/peers/cupy_local.py) on the same GPU, in one run:
# triad, sum and copy at 2^28 elements (f32, f64, c64, c128), then axis sums, strided and
# transposing copies and a cast (bench_local's "figure" lines), GB/s and the ratio Tessera / CuPy;
# then heat3d at HEAT_N^3 (512) as a share of the copy bandwidth of the same run, for each of
# HEAT_VARIANTS (default: heat3d's default interior kernel).
# The two sides run alternately ROUNDS times (default 3) and each figure is the median of its
# rounds: both see the same spread of clocks and temperature (single runs moved 1-3%).
#   apps/bench/compare_local.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../../build}
log2=${LOG2:-28}
rounds=${ROUNDS:-3}
# "op type value" lines: bench_local's table row (triad, sum, copy GB/s) and its figure lines;
# CuPy's "op type GB/s value" lines.
ours_lines() {
  awk '$1 == "figure" && $5 != "" {print $2, $3, $5; next}
       NF >= 10 && $2 ~ /^(f32|f64|c64|c128)$/ {print "triad", $2, $5; print "sum", $2, $7; print "copy", $2, $9}
       /WRONG/ {print "WRONG", $0}'
}
peer_lines() { awk 'NF == 4 && $3 == "GB/s" {print $1, $2, $4}'; }
ours="" peer="" header=""
for ((r = 1; r <= rounds; ++r)); do
  out=$("$build/apps/bench_local" --min-log2 "$log2" --max-log2 "$log2" --reps 20)
  theirs=$(python3 "$here/peers/cupy_local.py" --log2 "$log2")
  (( r == 1 )) && header=$( (echo "$out"; echo "$theirs") | grep '^#' || true)
  ours+=$(echo "$out" | ours_lines)$'\n'
  peer+=$(echo "$theirs" | peer_lines)$'\n'
done
echo "$ours" | grep '^WRONG' && exit 1
# The median over the rounds of each "op type".
median() {
  python3 -c '
import statistics, sys
v = {}
for line in sys.stdin:
    f = line.split()
    if len(f) == 3:
        v.setdefault((f[0], f[1]), []).append(float(f[2]))
for (op, t), x in v.items():
    print(op, t, statistics.median(x))'
}
ours=$(echo "$ours" | median) peer=$(echo "$peer" | median)
value() { echo "$1" | awk -v op="$2" -v t="$3" '$1 == op && $2 == t {print $3}'; }
echo "$header"
echo "# medians of $rounds alternating rounds"
printf '%-24s %12s %12s %8s\n' figure tessera cupy ratio
for op in triad sum copy axis0-sum axis1-sum strided-copy transpose-copy cast-to-f64; do
  for t in f32 f64 c64 c128; do
    mine=$(value "$ours" "$op" "$t") theirs=$(value "$peer" "$op" "$t")
    [[ -n $mine && -n $theirs ]] || continue
    awk -v f="$op $t GB/s" -v a="$mine" -v b="$theirs" 'BEGIN { printf "%-24s %12.1f %12.1f %8.3f\n", f, a, b, a / b }'
  done
done
# heat3d's stencil against the device-to-device copy of the same run (HEAT_N, default 512).
heat=$build/apps/heat3d/heat3d
if [[ -x $heat ]]; then
  for v in ${HEAT_VARIANTS:-default}; do
    for dt in double float; do
      t=f32; [[ $dt == double ]] && t=f64
      copy=$(value "$ours" copy "$t")
      args=(--dtype "$dt" --n "${HEAT_N:-512}" --steps "${HEAT_STEPS:-200}" --progress-every "${HEAT_STEPS:-200}")
      [[ $v == default ]] || args+=(--variant "$v")
      gbs=$("$heat" "${args[@]}" | sed -n 's/^heat3d: [0-9]* steps.*cells\/s, \([0-9.e+-]*\) GB\/s.*/\1/p')
      name="heat3d ${HEAT_N:-512}^3 $dt"; [[ $v == default ]] || name+=" $v"
      awk -v f="$name GB/s" -v a="$gbs" -v c="$copy" -v t="$t" \
        'BEGIN { printf "%-24s %12.1f %12s %8s  (%.1f%% of the %s copy, %.1f GB/s)\n", f, a, "-", "-", 100 * a / c, t, c }'
    done
  done
fi
