#!/usr/bin/env bash
# Weak scaling of heat3d and poisson: a fixed block per GPU (rank), 1, 2 and 4 ranks, slabs along
# axis 0 (global size (m*p) x m x m on a p x 1 x 1 grid), every run verified with --check.
#   apps/bench/scaling.sh [BUILD_DIR]        (default: $TESSERA_BUILD_DIR or ./build)
# Environment: SCALING_RANKS ("1 2 4"), HEAT_N (per-rank edge m; 512 on GPUs, 64 on CPUs),
# HEAT_STEPS (100), POISSON_N (512 on GPUs, 64 on CPUs), POISSON_ITERS (10), DTYPE (double),
# HBM_GBS (the roofline for the %-of-HBM column; 4260 on H200, the measured device-to-device copy).
# Efficiency = per-rank throughput at p / per-rank throughput at 1 (heat3d cells/s; poisson 1/time
# per solve at a p-times larger problem, the usual weak-scaling figure; FFT work grows by log N).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-${TESSERA_BUILD_DIR:-$root/build}}
run=$root/launch/tessera-run
for exe in heat3d/heat3d poisson/poisson; do
  [[ -x $build/apps/$exe ]] || { echo "scaling.sh: $build/apps/$exe not built" >&2; exit 2; }
done

gpus=0
if grep -q "TESSERA_HAVE_CUDA 1" "$build/generated/include/tessera/config.hpp" 2>/dev/null &&
   command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if (( gpus > 0 )); then
  device=cuda m=${HEAT_N:-512} pm=${POISSON_N:-512}
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  [[ $name == *H200* ]] && hbm=${HBM_GBS:-4260} || hbm=${HBM_GBS:-0}
else
  device=host m=${HEAT_N:-64} pm=${POISSON_N:-64} hbm=${HBM_GBS:-0} name="host"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fi
steps=${HEAT_STEPS:-100} iters=${POISSON_ITERS:-10} dtype=${DTYPE:-double}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
echo "# weak scaling on $device ($name): heat3d ${m}^3 $dtype per rank, $steps steps; poisson ${pm}^3 per rank, $iters solves"
printf "%6s %16s %12s %8s %8s %14s %8s\n" ranks "heat3d cells/s" "GB/s/rank" "%HBM" eff "poisson ms" eff
h1="" p1="" fail=0
for p in ${SCALING_RANKS:-1 2 4}; do
  if (( gpus > 0 && p > gpus )); then echo "# $p ranks: only $gpus GPUs, skipped"; continue; fi
  if ! "$run" --np "$p" "$build/apps/heat3d/heat3d" --device "$device" --dtype "$dtype" --n $((m * p)),$m,$m \
       --grid "$p,1,1" --steps "$steps" --progress-every "$steps" --check > "$log/heat$p" 2>&1; then
    echo "# heat3d on $p ranks failed:"; tail -5 "$log/heat$p"; fail=1; continue
  fi
  if ! "$run" --np "$p" "$build/apps/poisson/poisson" --device "$device" --dtype "$dtype" --n $((pm * p)),$pm,$pm \
       --grid "$p" --iters "$iters" --check > "$log/pois$p" 2>&1; then
    echo "# poisson on $p ranks failed:"; tail -5 "$log/pois$p"; fail=1; continue
  fi
  read -r cells gbs < <(sed -n 's/^heat3d: .*): \([0-9.e+-]*\) cells\/s, \([0-9.e+-]*\) GB\/s.*/\1 \2/p' "$log/heat$p")
  ms=$(sed -n 's/^poisson: \([0-9.]*\) ms per solve.*/\1/p' "$log/pois$p")
  h1=${h1:-$(awk -v c="$cells" -v p="$p" 'BEGIN { print c / p }')}
  p1=${p1:-$ms}
  awk -v p="$p" -v c="$cells" -v g="$gbs" -v hbm="$hbm" -v h1="$h1" -v ms="$ms" -v p1="$p1" 'BEGIN {
    printf "%6d %16.4g %12.1f %8s %7.1f%% %14.3f %7.1f%%\n", p, c, g / p,
           (hbm > 0 ? sprintf("%.1f%%", 100 * g / p / hbm) : "-"), 100 * c / p / h1, ms, 100 * p1 / ms }'
done
# The verification behind the figures (every run used --check).
grep -H "L2 error vs the scheme\|max error" "$log"/* | sed "s|^$log/|# |" || true
exit $fail
