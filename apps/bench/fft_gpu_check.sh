#!/usr/bin/env bash
# The exchange-engine checks on a GPU machine (one GPU is enough), from the repository root:
#   apps/bench/fft_gpu_check.sh BUILD_DIR suite   the whole suite (default transport, plus every
#                                                 transport's rerun of the GPU suites), then again
#                                                 with TESSERA_TRANSPORT=ipc; 1-4 ranks share the GPU
#   apps/bench/fft_gpu_check.sh BUILD_DIR memcheck compute-sanitizer memcheck of the exchange and
#                                                 FFT tests at 2 ranks with the ipc transport
#   apps/bench/fft_gpu_check.sh BUILD_DIR bench   bench_fft beside bench_cufftxt and CuPy, poisson
#                                                 beside CuPy (apps/bench/peers/cupy_fft.py)
set -uo pipefail
build=${1:?build dir}
mode=${2:-suite}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 TESSERA_TRANSPORT=${TESSERA_TRANSPORT:-auto}
mpi=(mpirun --oversubscribe -x NCCL_NVLS_ENABLE -x TESSERA_TRANSPORT)
case $mode in
  suite)
    (cd "$build" && ctest -j 8 --timeout 900 2>&1 | tail -25)
    echo "== the whole suite again with TESSERA_TRANSPORT=ipc"
    (cd "$build" && TESSERA_TRANSPORT=ipc ctest -j 8 --timeout 900 -LE transport 2>&1 | tail -8)
    ;;
  memcheck)
    export TESSERA_TRANSPORT=ipc
    for exe in test_distributed test_fft; do
      filter='Exchange/cuda.*:Redistribute/cuda.*:HaloExchangeTest/cuda.*'
      [[ $exe == test_fft ]] && filter='DistFft/cuda.*'
      "${mpi[@]}" -np 2 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 \
        "$build/tests/$exe" --gtest_filter="$filter" 2>&1 | grep -E 'ERROR SUMMARY|passed|failed|Invalid|=========' | sort | uniq -c | head -20
      echo "$exe memcheck exit ${PIPESTATUS[0]}"
    done
    ;;
  bench)
    b=$build/apps
    for n in 512 1024; do
      "${mpi[@]}" -np 1 "$b/bench_fft" $n $n $n --type c2c --iters 20 | grep -v '^#'
      "$b/bench_cufftxt" $n $n $n --type c2c --gpus 1 --iters 20 | grep -v '^#'
    done
    "${mpi[@]}" -np 1 "$b/bench_fft" 512 512 512 --type r2c --iters 20 | grep -v '^#'
    "$b/bench_cufftxt" 512 512 512 --type r2c --gpus 1 --iters 20 | grep -v '^#'
    python3 "$here/peers/cupy_fft.py" --n 512 --what c2c,r2c
    python3 "$here/peers/cupy_fft.py" --n 1024 --what c2c
    for v in spectral kernel; do
      "${mpi[@]}" -np 1 "$b/poisson/poisson" --n 512 --dtype double --iters 20 --variant $v | grep -E 'per solve|error'
    done
    python3 "$here/peers/cupy_fft.py" --n 512 --what poisson
    echo "== 2 ranks sharing the GPU, per transport (correctness, not speed)"
    for t in mpi ipc; do "${mpi[@]}" -np 2 "$b/bench_fft" 256 256 256 --transport $t --iters 5 | tail -2; done
    ;;
esac
