#!/usr/bin/env bash
# launch/gpu-check without a GPU (label launch): --help and a dry run of `all` name every area and
# exit 0 without running anything; a dry run shows the commands of a multi-GPU machine and of ranks
# sharing one GPU; bad areas, parts and options exit 2 with a message.
#   gpu_check_test.sh SOURCE_DIR SCRATCH_DIR
set -uo pipefail
src=${1:?usage: gpu_check_test.sh SOURCE_DIR SCRATCH_DIR}
scratch=${2:?usage: gpu_check_test.sh SOURCE_DIR SCRATCH_DIR}
check=$src/launch/gpu-check
areas=(suite local jit distributed fft algorithms io capi python multi-gpu memcheck bench all)
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$scratch" && mkdir -p "$scratch"
# No GPU in CI; the dry runs plan for the GPUs given here, never for the machine's.
export GPU_CHECK_GPUS=1 GPU_CHECK_WORK=$scratch/work
unset OUT

# run NAME EXPECTED_RC ARGS...: the driver's output in $out
run() {
  local name=$1 want=$2 rc
  shift 2
  out=$("$check" "$@" 2>&1)
  rc=$?
  [[ $rc == "$want" ]] || bad "$name: exit $rc, expected $want; output:"$'\n'"$out"
}

run "--help" 0 --help
for a in "${areas[@]}"; do
  grep -qE "^  $a +" <<< "$out" || bad "--help does not describe area '$a'"
done
grep -q -- "--dry-run" <<< "$out" || bad "--help does not name --dry-run"

run "--dry-run all" 0 --dry-run --build "$scratch/no-such-build" all
for a in "${areas[@]}"; do
  [[ $a == all ]] && continue
  grep -q "^# $a\$" <<< "$out" || bad "the dry run of all has no section for '$a'"
  grep -qE "^$a +(dry run|in suite|skipped) +[0-9]+\$" <<< "$out" || bad "the summary of the dry run has no row for '$a'"
done
for cmd in "ctest --test-dir $scratch/no-such-build" "tessera_gpu_build" "compute-sanitizer --tool memcheck" \
           "TESSERA_TRANSPORT=ipc" "TESSERA_JIT=on" "tests/test_algorithms --gtest_filter=\\*/cuda" \
           "tests/capi/test_capi --device" "zarr_interop write3" "compare_local.sh" "cupy_jit.py" \
           "bench_cufftxt" "tensorstore_io.py" "compare_python.py" "TESSERA_PYTHON_TEST_DEVICE=cuda" "compare_algorithms.sh" "bench_collectives" \
           "TESSERA_FFT_PLANE_KERNEL=off" "apps/bench/fft_passes.py" "TESSERA_FFT_HALVES=0"; do
  grep -qF -- "$cmd" <<< "$out" || bad "the dry run of all does not show '$cmd'"
done
# Ranks sharing the one GPU get their own NCCL host id; one rank does not.
grep -qE -- "-np 2 .*gpu-check --as-rank .*test_algorithms" <<< "$out" || bad "2 ranks on 1 GPU: no --as-rank"
grep -qE -- "-np 1 .*gpu-check --as-rank" <<< "$out" && bad "1 rank on 1 GPU: --as-rank"
[[ -e $scratch/no-such-build || -e $scratch/work ]] && bad "the dry run created files"

GPU_CHECK_GPUS=4 run "--dry-run multi-gpu on 4 GPUs" 0 --dry-run --no-build multi-gpu
grep -qE -- "-np 4 .*bench_fft 1024 1024 1024 --type c2c --iters 20 --transport nccl-window --chunks 8" <<< "$out" ||
  bad "multi-gpu on 4 GPUs: no 4-rank depth sweep"$'\n'"$out"
grep -qF -- "--as-rank" <<< "$out" && bad "multi-gpu: one rank per GPU needs no --as-rank"
grep -qF "tessera_gpu_build" <<< "$out" && bad "--no-build still builds"

run "--ranks 2 --dry-run suite" 0 --dry-run --ranks 2 suite
grep -qF 'np\(1\|3\|4\|5' <<< "$out" || bad "--ranks 2: suite does not leave out the other rank counts"$'\n'"$out"

run "unknown area" 2 nosuch
grep -q "unknown area 'nosuch'" <<< "$out" || bad "unknown area: message '$out'"
run "unknown bench part" 2 bench:nosuch
grep -q "unknown bench part 'nosuch'" <<< "$out" || bad "unknown bench part: message '$out'"
run "unknown option" 2 --nosuch suite
run "no area" 2
run "bad --ranks" 2 --ranks 0 suite
run "--no-build of a missing build" 2 --no-build --build "$scratch/no-such-build" suite
grep -q "not a configured build" <<< "$out" || bad "--no-build of a missing build: message '$out'"

rm -rf "$scratch"
(( fail == 0 )) && echo "gpu-check: help, dry runs and errors as expected"
exit $fail
