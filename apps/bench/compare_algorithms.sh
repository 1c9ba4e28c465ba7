#!/usr/bin/env bash
# Tessera's bench_algorithms beside CuPy (apps/bench/peers/cupy_algorithms.py) on the same GPU, in
# one run, 1 rank: matmul 8192^3 f32/f64 (TFLOP/s; CuPy's @ is one cuBLAS GEMM), sort of 2^28 f32
# and int64 keys (Gkeys/s, cupy.sort; argsort too), cumsum of 2^28 f32 (GB/s, cupy.cumsum), and
# the ratio Tessera / CuPy. Targets: matmul >= 0.95, sort and cumsum >= 1.0.
#   apps/bench/compare_algorithms.sh [BUILD_DIR]     (default: build; N=8192 LOG2=28 to change)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../../build}
n=${N:-8192}
log2=${LOG2:-28}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ours=$(mpirun --oversubscribe -np 1 "$build/apps/bench_algorithms" --n "$n" --log2 "$log2" --argsort)
peer=$(python3 "$here/peers/cupy_algorithms.py" --n "$n" --log2 "$log2" --argsort) || {
  rc=$?
  echo "$ours"
  [[ $rc == 77 ]] && echo "compare_algorithms: CuPy is missing: Tessera's figures only" >&2
  exit $rc
}
echo "$ours" | grep '^#' || true
echo "$peer" | grep '^#' || true
printf '%-22s %12s %12s %8s %s\n' figure tessera cupy ratio check
echo "$ours" | awk '!/^#/ && $1 != "figure" {print $1, $2, $3, $6, $7, $8}' | while read -r fig type size rate unit check; do
  theirs=$(echo "$peer" | awk -v f="$fig" -v t="$type" '$1 == f && $2 == t {print $4}')
  [[ -z $theirs ]] && continue
  awk -v f="$fig $type $size $unit" -v a="$rate" -v b="$theirs" -v c="$check" \
    'BEGIN { printf "%-22s %12.3f %12.3f %8.3f %s\n", f, a, b, a / b, c }'
done
