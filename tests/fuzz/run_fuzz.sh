#!/usr/bin/env bash
# Builds one libFuzzer target with only the sources it needs and runs it on a copy of its seed
# corpus for $TESSERA_FUZZ_SECONDS seconds (else SECONDS, else 60). Exits non-zero on a crash, a
# sanitizer report, an uncaught exception other than IoError, a timeout or a failed build; the
# input that failed is left in WORK_DIR as crash-*/timeout-*/oom-* (reproduce: run
# WORK_DIR/fuzz_TARGET on that file).
#   run_fuzz.sh TARGET SOURCE_DIR WORK_DIR CXX SECONDS -I... SOURCES...   (TARGET: npy_header, zarray, zarr_json,
#   shard_index or codec_frames)
# tests/fuzz/CMakeLists.txt passes the include directories and the sources besides the target's
# own tests/fuzz/fuzz_TARGET.cpp (the parser and what IoError needs); see the test's command line.
set -euo pipefail
target=$1 src=$2 work=$3 cxx=$4
seconds=${TESSERA_FUZZ_SECONDS:-${5:-60}}
shift 5
case $target in
  npy_header) corpus=npy ;;
  zarray) corpus=zarray ;;
  zarr_json) corpus=zarr_json ;;
  shard_index) corpus=shard ;;
  codec_frames) corpus=frames ;;
  *) echo "run_fuzz.sh: unknown target '$target'" >&2; exit 2 ;;
esac
if [ $# -eq 0 ]; then echo "run_fuzz.sh: no include directories or sources given" >&2; exit 2; fi

mkdir -p "$work"
bin=$work/fuzz_$target
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer "$src/tests/fuzz/fuzz_$target.cpp" "$@" -o "$bin"

# libFuzzer adds what it finds to the corpus directory: work on a copy, keep the seeds clean.
rm -rf "$work/corpus_$target"
cp -r "$src/tests/fuzz/corpus/$corpus" "$work/corpus_$target"
echo "run_fuzz.sh: fuzzing $target for ${seconds}s"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1
dict=()
[ -f "$src/tests/fuzz/$corpus.dict" ] && dict=(-dict="$src/tests/fuzz/$corpus.dict")
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
  "${dict[@]}" -artifact_prefix="$work/" "$work/corpus_$target"
