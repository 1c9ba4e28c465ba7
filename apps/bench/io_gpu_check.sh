#!/usr/bin/env bash
# The I/O checks of the GPU machine (run from the repository root; tensorstore is there, not in CI):
#   1. the I/O tests (distributed suite with its cuda instances, interop, heat3d formats);
#   2. tensorstore round trips: tensorstore writes Zarr v3 stores that Tessera loads, and reads the
#      v3 stores Tessera writes and the committed fixtures (tests/io/fixtures/zarr3);
#   3. bench_io beside tensorstore (apps/bench/peers/tensorstore_io.py) on the same array and chunks
#      (2 GiB float32, chunks 64x1024x1024, raw and Blosc-LZ4, Zarr v2 and v3), at 1 and 4 ranks,
#      printing Tessera / tensorstore for every figure (the target is >= 1.0).
#   apps/bench/io_gpu_check.sh BUILD_DIR [GIB] [WORK_DIR]      (IO_CHECK_SKIP_TESTS=1: skip step 1;
#   IO_REPS: runs per figure, median printed, default 3)
set -euo pipefail
build=$(cd "${1:?usage: io_gpu_check.sh BUILD_DIR [GIB] [WORK_DIR]}" && pwd)
gib=${2:-2}
work=${3:-${TMPDIR:-/tmp}/tessera_io_check}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
run=("$root/launch/tessera-run")
py=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work"
status=0

if [[ -z ${IO_CHECK_SKIP_TESTS:-} ]]; then  # set: steps 2 and 3 only
  echo "== 1. I/O tests"
  ctest --test-dir "$build" -R '^distributed_np|interop|heat3d_(zarr3|hdf5|restart)' --output-on-failure || status=1
fi

echo "== 2. tensorstore interop (zarr3 driver)"
if $py -c 'import tensorstore' 2>/dev/null; then
  $py "$root/tests/io/tensorstore_interop.py" write "$work/from_ts" &&
    "${run[@]}" --np 2 "$build/tests/zarr_interop" read3 "$work/from_ts" || status=1
  "${run[@]}" --np 3 "$build/tests/zarr_interop" write3 "$work/from_tessera" &&
    $py "$root/tests/io/tensorstore_interop.py" check "$work/from_tessera" "$root/tests/io/fixtures/zarr3" || status=1
else
  echo "tensorstore not importable by $py: interop and the peer benchmark skipped"; exit 1
fi

echo "== 3. bench_io beside tensorstore ($gib GiB float32, chunks 64x1024x1024)"
reps=${IO_REPS:-3}  # every figure the median of this many runs, on both sides (disk figures vary 20%)
peer=$($py "$root/apps/bench/peers/tensorstore_io.py" --gib "$gib" --chunk 64 --dir "$work/bench_ts" --reps "$reps")
echo "$peer" | grep -v '^RESULT'
for np in 1 4; do
  ours=$("${run[@]}" --np "$np" "$build/apps/bench_io" --gib "$gib" --zarr-chunk 64 --dir "$work/bench" \
           --formats npy,zarr,zarr3,zarr3-shard${IO_CHECK_HDF5:+,hdf5} --codecs raw,blosc-lz4 --reps "$reps") || status=1
  echo "$ours" | grep -v '^RESULT'
  echo "-- $np rank(s): Tessera / tensorstore (tensorstore: one process, all cores)"
  printf '%-8s %-10s %-12s %10s %12s %8s\n' format codec op tessera tensorstore ratio
  { echo "$peer"; echo "$ours"; } | awk '$1 == "RESULT" {
      key = $3 " " $4 " " $5
      if ($2 == "tensorstore") peer[key] = $6; else { mine[key] = $6; order[++n] = key }
    }
    END { for (i = 1; i <= n; ++i) { k = order[i]; split(k, f, " ")
            if (k in peer) printf "%-8s %-10s %-12s %10.2f %12.2f %8.2f\n", f[1], f[2], f[3], mine[k], peer[k], mine[k] / peer[k]
            else printf "%-8s %-10s %-12s %10.2f %12s %8s\n", f[1], f[2], f[3], mine[k], "-", "-" } }'
done
exit $status
