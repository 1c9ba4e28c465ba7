#!/usr/bin/env bash
# Tessera's bench_local beside CuPy (apps/bench/peers/cupy_local.py) on the same GPU, in one run:
# triad, sum and copy at 2^28 elements (f32, f64, c64, c128), then axis sums, strided and
# transposing copies and a cast (bench_local's "figure" lines), GB/s and the ratio Tessera / CuPy;
# then heat3d at HEAT_N^3 (512) as a share of the copy bandwidth of the same run, for each of
# HEAT_VARIANTS (default: heat3d's default interior kernel).
#   apps/bench/compare_local.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../../build}
log2=${LOG2:-28}
ours=$("$build/apps/bench_local" --min-log2 "$log2" --max-log2 "$log2" --reps 20)
peer=$(python3 "$here/peers/cupy_local.py" --log2 "$log2")
echo "$ours" | grep '^#' || true
echo "$peer" | grep '^#' || true
printf '%-16s %12s %12s %8s\n' figure tessera cupy ratio
for t in f32 f64 c64 c128; do
  line=$(echo "$ours" | awk -v t="$t" '$2 == t')
  read -r triad sum copy <<< "$(echo "$line" | awk '{print $5, $7, $9}')"
  for op in triad sum copy; do
    mine=${!op}
    theirs=$(echo "$peer" | awk -v op="$op" -v t="$t" '$1 == op && $2 == t {print $4}')
    awk -v f="$op $t GB/s" -v a="$mine" -v b="$theirs" 'BEGIN { printf "%-16s %12.1f %12.1f %8.3f\n", f, a, b, a / b }' 
  done
done
echo "$ours" | awk '$1 == "figure" && $5 != "" {print $2, $3, $5}' | while read -r op t mine; do
  theirs=$(echo "$peer" | awk -v op="$op" -v t="$t" '$1 == op && $2 == t {print $4}')
  [[ -n $theirs ]] || continue
  awk -v f="$op $t GB/s" -v a="$mine" -v b="$theirs" 'BEGIN { printf "%-24s %12.1f %12.1f %8.3f\n", f, a, b, a / b }'
done
echo "$ours" | grep WRONG && exit 1 || true
# heat3d's stencil against the device-to-device copy of the same run (HEAT_N, default 512).
heat=$build/apps/heat3d/heat3d
if [[ -x $heat ]]; then
  for v in ${HEAT_VARIANTS:-default}; do
    for dt in double float; do
      t=f32; [[ $dt == double ]] && t=f64
      copy=$(echo "$ours" | awk -v t="$t" '$2 == t {print $9}')
      args=(--dtype "$dt" --n "${HEAT_N:-512}" --steps "${HEAT_STEPS:-200}" --progress-every "${HEAT_STEPS:-200}")
      [[ $v == default ]] || args+=(--variant "$v")
      gbs=$("$heat" "${args[@]}" | sed -n 's/^heat3d: [0-9]* steps.*cells\/s, \([0-9.e+-]*\) GB\/s.*/\1/p')
      name="heat3d ${HEAT_N:-512}^3 $dt"; [[ $v == default ]] || name+=" $v"
      awk -v f="$name GB/s" -v a="$gbs" -v c="$copy" -v t="$t" \
        'BEGIN { printf "%-24s %12.1f %12s %8s  (%.1f%% of the %s copy, %.1f GB/s)\n", f, a, "-", "-", 100 * a / c, t, c }'
    done
  done
fi
