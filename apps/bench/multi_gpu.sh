#!/usr/bin/env bash
# The multi-GPU figures and suite (one rank per GPU), from the repository root of a machine with
# 2 or more GPUs:
#   apps/bench/multi_gpu.sh BUILD_DIR bench [RANKS...]   (default ranks: 2 and 4, those that fit)
#     bench_collectives --both (all_reduce, all_to_all at 1 GiB), bench_fft beside bench_cufftxt
#     (c64 512^3 and 1024^3, forward and backward) for every transport and pipeline depth,
#     bench_distributed (triad, sum, halo; redistribute per transport), matmul (SUMMA) beside one
#     GPU's GEMM, and scaling.sh (heat3d and poisson weak scaling).
#   apps/bench/multi_gpu.sh BUILD_DIR suite [RANKS...]   (default ranks: 1 2 4)
#     the CTest suite at those rank counts (every transport's rerun included: the build must have
#     seen the GPUs at configure time; SUITE_LABELS=REGEX narrows it to labels, SUITE_JOBS sets
#     -j; SUITE_LOG=FILE keeps every line as it runs, for a run cut short; failed tests run again
#     one at a time with their output), then the tests without a rank count (the fault tests
#     among them). Exits 1 if any failed.
# NCCL_NVLS_ENABLE=0 is forced and forwarded (NVLink multicast must stay off on shared hosts).
set -uo pipefail
build=$(cd "${1:?usage: multi_gpu.sh BUILD_DIR bench|suite [RANKS...]}" && pwd)
mode=${2:-bench}
shift 2 || true
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
mpi() {
  local np=$1 fwd=(-x NCCL_NVLS_ENABLE); shift
  [[ -n ${TESSERA_TRANSPORT:-} ]] && fwd+=(-x TESSERA_TRANSPORT)
  timeout 180 mpirun --oversubscribe --bind-to none -np "$np" "${fwd[@]}" "$@"
}
b=$build/apps
status=0

case $mode in
  bench)
    ranks=("$@"); [[ ${#ranks[@]} -gt 0 ]] || ranks=(2 4)
    nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
    nvidia-smi topo -m 2>/dev/null | head -12
    for p in "${ranks[@]}"; do
      (( p <= gpus )) || { echo "# $p ranks: only $gpus GPUs, skipped"; continue; }
      echo "==== $p GPUs"
      for op in all_reduce all_to_all; do
        mpi "$p" "$b/bench_collectives" --op "$op" -b 1G -e 1G --iters 20 --warmup 5 --both --check 2>&1 |
          grep -v '^#\s*$' | tail -5
      done
      for n in 512 1024; do
        CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((p - 1))) timeout 120 "$b/bench_cufftxt" $n $n $n --type c2c --gpus "$p" \
          --iters 20 | grep -v '^#'
        # Pipeline depths swept where it matters most (1024^3 on every GPU); else the default.
        depths=(0); (( n == 1024 && p == gpus )) && depths=(1 2 4 8)
        for t in nccl nccl-window ipc; do
          for c in "${depths[@]}"; do
            mpi "$p" "$b/bench_fft" $n $n $n --type c2c --iters 20 --transport $t --chunks $c 2>&1 |
              grep -v '^#' | sed "s/^/[$t chunks $c] /"
          done
        done
      done
      mpi "$p" "$b/bench_distributed" --tests triad,sum,halo 2>&1 | grep -v '^# bench'
      for t in nccl nccl-window ipc; do
        mpi "$p" "$b/bench_distributed" --tests redist --transport $t 2>&1 | grep -v '^# bench' | sed "s/^/[$t] /"
      done
      mpi "$p" "$b/bench_algorithms" --what matmul --n 8192 --iters 5 2>&1 | grep -v '^#'
    done
    echo "==== one GPU: GEMM (the matmul baseline) and weak scaling"
    mpi 1 "$b/bench_algorithms" --what matmul --n 8192 --iters 5 2>&1 | grep -v '^#'
    SCALING_RANKS="1 2 $gpus" "$root/apps/bench/scaling.sh" "$build" || status=1
    ;;
  suite)
    ranks=("$@"); [[ ${#ranks[@]} -gt 0 ]] || ranks=(1 2 4)
    re=$(printf 'np%s$|' "${ranks[@]}")
    # SUITE_LABELS (a ctest -L regex) narrows it: the whole suite takes longer than one 10-minute call.
    if ! (cd "$build" && ctest -j "${SUITE_JOBS:-4}" --timeout 600 -R "${re%|}" ${SUITE_LABELS:+-L "$SUITE_LABELS"} \
       -LE 'package|fuzz' 2>&1 | tee -a "${SUITE_LOG:-/dev/null}" | tail -30; exit "${PIPESTATUS[0]}"); then
      status=1
      # Failures under load are rerun one at a time with their output: flaky or reproducible. The
      # first pass's full output (LastTest.log, which the rerun overwrites) is kept beside it.
      cp "$build/Testing/Temporary/LastTest.log" "$build/Testing/Temporary/LastTest.first.log" 2>/dev/null &&
        [[ -n ${SUITE_LOG:-} ]] && cp "$build/Testing/Temporary/LastTest.first.log" "${SUITE_LOG%.log}.first.log"
      echo "== the failed tests again, one at a time"
      (cd "$build" && ctest --rerun-failed --output-on-failure --timeout 300 2>&1 | tee -a "${SUITE_LOG:-/dev/null}" |
         grep -E 'Test +#|Failure|Expected|Which is|what\(\)|error|tests passed' | head -60)
    fi
    echo "== tests without a rank count (surface, readme, fault: the exchange's on every transport, ...)"
    (cd "$build" && ctest -j 8 --timeout 300 -E 'np[0-9]+$' -LE 'package|fuzz' 2>&1 | tee -a "${SUITE_LOG:-/dev/null}" | tail -12
     exit "${PIPESTATUS[0]}") || status=1
    ;;
  *) echo "multi_gpu.sh: mode must be bench or suite" >&2; exit 2 ;;
esac
exit $status
