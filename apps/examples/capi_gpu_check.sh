#!/usr/bin/env bash
# On the GPU node, from the repository root: the C API's tests with device buffers (adopted
# memory on cuda:N, work on the caller's stream) at 1-4 ranks on the GPUs there are (ranks share
# a GPU when there are fewer), the Fortran module's test likewise, the examples, and the CuPy
# DLPack zero-copy check.
#   apps/examples/capi_gpu_check.sh BUILD_DIR      (a CUDA build with the C API's tests)
# Build one with, e.g.:
#   eval "$(bash /path/to/gpu-node/use-deps.sh)"
#   cmake -S . -B /tmp/b -G Ninja $DEPS_CMAKE_FLAGS -DCMAKE_CUDA_ARCHITECTURES=90
#   ninja -C /tmp/b test_capi test_capi_bad test_capi_fortran capi_example heat_fortran tessera_c
# ($DEPS_CMAKE_FLAGS's prefix holds dlpack/dlpack.h; else pass -DTESSERA_DLPACK_INCLUDE_DIR=DIR.)
# Exit code: 0 when every step passed; each step prints PASS/FAIL/SKIP.
set -uo pipefail
build=${1:?usage: apps/examples/capi_gpu_check.sh BUILD_DIR}
build=$(cd "$build" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
mpirun=(mpirun --oversubscribe -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

step() {  # step NAME COMMAND...: runs in $work, prints PASS/FAIL/SKIP (77) with the output on failure
  local name=$1 rc
  shift
  (cd "$work" && "$@") >"$work/log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "PASS $name: $(tail -n 1 "$work/log")"
  elif [ $rc -eq 77 ]; then
    echo "SKIP $name: $(tail -n 1 "$work/log")"
  else
    echo "FAIL $name (exit $rc):"
    tail -n 40 "$work/log"
    failed=1
  fi
}

nvidia-smi -L 2>/dev/null || echo "capi_gpu_check: nvidia-smi found no GPU" >&2
for n in 1 2 3 4; do
  step "C API functional, device buffers, np$n" "${mpirun[@]}" -np $n "$build/tests/capi/test_capi" --device
  step "C API bad input, np$n" "${mpirun[@]}" -np $n "$build/tests/capi/test_capi_bad"
  if [ -x "$build/tests/capi/test_capi_fortran" ]; then
    step "Fortran module, device buffers, np$n" "${mpirun[@]}" -np $n "$build/tests/capi/test_capi_fortran" --device
    step "heat_fortran --check, np$n" "${mpirun[@]}" -np $n "$build/apps/examples/heat_fortran" --n 64 --steps 200 --check
  else
    echo "SKIP Fortran, np$n: not built (no Fortran compiler at configure time)"
  fi
  step "capi_example, np$n" "${mpirun[@]}" -np $n "$build/apps/examples/capi_example"
done
lib=$(ls "$build"/capi/libtessera_c.so 2>/dev/null | head -n 1)
if [ -n "$lib" ]; then
  for n in 1 2; do
    step "CuPy DLPack zero copy, np$n" "${mpirun[@]}" -np $n python3 "$(pwd)/tests/capi/dlpack_check.py" "$lib" --cupy
  done
else
  echo "SKIP CuPy DLPack: no shared libtessera_c.so in $build"
fi
[ $failed -eq 0 ] && echo "capi_gpu_check: all passed" || echo "capi_gpu_check: FAILURES"
exit $failed
