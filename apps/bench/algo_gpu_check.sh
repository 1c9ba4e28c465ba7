#!/usr/bin/env bash
# The distributed algorithms on a GPU machine (one GPU is enough), from the repository root:
#   apps/bench/algo_gpu_check.sh BUILD_DIR
# 1. test_algorithms' CUDA instances at 1-5 ranks sharing the GPU (then the host ones at 2 ranks),
# 2. bench_algorithms at 2 and 4 ranks sharing the GPU (the check column must say ok; speed there
#    is not meaningful),
# 3. compare_algorithms.sh: Tessera beside CuPy at 1 rank, with the ratios.
# Exit code: non-zero if a test run failed or a check said WRONG.
set -uo pipefail
build=${1:?usage: algo_gpu_check.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
mpi=(mpirun --oversubscribe -x NCCL_NVLS_ENABLE)
status=0
nvidia-smi -L || true
for n in 1 2 3 4 5; do
  echo "== test_algorithms, cuda instances, $n rank(s) on one GPU"
  "${mpi[@]}" -np "$n" "$build/tests/test_algorithms" --gtest_filter='*/cuda.*' 2>&1 | grep -E '^\[=|FAILED|Failure|SKIPPED' | head -30
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
done
echo "== test_algorithms, host instances, 2 ranks"
"${mpi[@]}" -np 2 "$build/tests/test_algorithms" --gtest_filter='*/host.*' 2>&1 | grep -E '^\[=|FAILED' | head
[[ ${PIPESTATUS[0]} == 0 ]] || status=1
for n in 2 4; do
  echo "== bench_algorithms, $n ranks sharing the GPU (correctness only)"
  out=$("${mpi[@]}" -np "$n" "$build/apps/bench_algorithms" --n 4096 --log2 24 --iters 3 --argsort 2>&1)
  echo "$out"
  grep -q WRONG <<< "$out" && status=1
done
echo "== compare_algorithms.sh (1 rank, Tessera beside CuPy)"
out=$("$here/compare_algorithms.sh" "$build" 2>&1)
echo "$out"
grep -q WRONG <<< "$out" && status=1
exit $status
