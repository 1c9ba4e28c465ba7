#!/usr/bin/env bash
# Runs one libFuzzer target (built with the project, see CMakeLists.txt) on a copy of its seed
# corpus for $TESSERA_FUZZ_SECONDS seconds (else SECONDS, else 60). Exits non-zero on a crash, a
# sanitizer report, an uncaught exception other than IoError or a timeout; the input that failed
# is left beside BINARY as crash-*/timeout-*/oom-* (reproduce: run BINARY on that file).
#   run_fuzz.sh TARGET SOURCE_DIR BINARY SECONDS   (TARGET: npy_header, zarray, zarr_json,
#   shard_index or codec_frames)
set -euo pipefail
target=$1 src=$2 bin=$3
seconds=${TESSERA_FUZZ_SECONDS:-${4:-60}}
case $target in
  npy_header) corpus=npy ;;
  zarray) corpus=zarray ;;
  zarr_json) corpus=zarr_json ;;
  shard_index) corpus=shard ;;
  codec_frames) corpus=frames ;;
  *) echo "run_fuzz.sh: unknown target '$target'" >&2; exit 2 ;;
esac
[ -x "$bin" ] || { echo "run_fuzz.sh: $bin is not built (target fuzz_targets)" >&2; exit 2; }
work=$(dirname "$bin")

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
