#!/usr/bin/env bash
# Builds one libFuzzer target with only the sources it needs and runs it on a copy of its seed
# corpus for $TESSERA_FUZZ_SECONDS seconds (else SECONDS, else 60). Exits non-zero on a crash, a
# sanitizer report, an uncaught exception other than IoError, a timeout or a failed build; the
# input that failed is left in WORK_DIR as crash-*/timeout-*/oom-* (reproduce: run
# WORK_DIR/fuzz_TARGET on that file).
#   run_fuzz.sh TARGET SOURCE_DIR WORK_DIR [CXX [SECONDS]]     (TARGET: npy_header or zarray)
set -euo pipefail
target=$1 src=$2 work=$3 cxx=${4:-clang++}
seconds=${TESSERA_FUZZ_SECONDS:-${5:-60}}
case $target in
  npy_header) parser=distributed/src/host/npy_header.cpp corpus=npy ;;
  zarray) parser=distributed/src/host/zarray_meta.cpp corpus=zarray ;;
  *) echo "run_fuzz.sh: unknown target '$target'" >&2; exit 2 ;;
esac

mkdir -p "$work"
bin=$work/fuzz_$target
# The parser, the target and IoError's base (tessera::Error, which prints Device): no MPI, no CUDA.
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer -I"$src/local/include" -I"$src/distributed/include" \
  "$src/tests/fuzz/fuzz_$target.cpp" "$src/$parser" "$src/local/src/common/error.cpp" "$src/local/src/common/settings.cpp" \
  "$src/local/src/common/device.cpp" "$src/local/src/host/device_nocuda.cpp" \
  -o "$bin"

# libFuzzer adds what it finds to the corpus directory: work on a copy, keep the seeds clean.
rm -rf "$work/corpus_$target"
cp -r "$src/tests/fuzz/corpus/$corpus" "$work/corpus_$target"
echo "run_fuzz.sh: fuzzing $target for ${seconds}s"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
  -dict="$src/tests/fuzz/$corpus.dict" -artifact_prefix="$work/" "$work/corpus_$target"
