#!/usr/bin/env bash
# One fault test: launches fault_victim on NP ranks (the last one dies mid-collective) and checks
# that the job ends with a non-zero status within TESSERA_COMM_TIMEOUT + 10 s and that a
# surviving rank named the collective it waited in (the CommError, or the note it printed when
# the launcher ended it).
#   fault_test.sh MPIEXEC VICTIM NP TIMEOUT MODE OP DEVICE [mpiexec flags...]
# Exit: 0 pass, 1 fail, 77 skipped (--device cuda without a GPU or without the CUDA backend).
set -uo pipefail
mpiexec=$1 victim=$2 np=$3 timeout=$4 mode=$5 op=$6 device=$7
shift 7
export TESSERA_COMM_TIMEOUT=$timeout
log=$(mktemp)
trap 'rm -f "$log"' EXIT

start=$(date +%s.%N)
# The outer bound only keeps a broken build from hanging CI; the check below is the real one.
timeout -k 5 $((timeout + 60)) "$mpiexec" -np "$np" "$@" "$victim" --mode "$mode" --op "$op" --device "$device" \
  >"$log" 2>&1
rc=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
cat "$log"
echo "fault_test: $mode/$op/$device on $np ranks: exit status $rc after $elapsed s (TESSERA_COMM_TIMEOUT=$timeout)"

if grep -q "has no GPU" "$log"; then
  echo "fault_test: SKIP: no GPU for --device cuda"
  exit 77
fi
fail=0
if [ "$rc" -eq 0 ]; then
  echo "fault_test: FAIL: the job exited with status 0 although a rank died"; fail=1
fi
if awk -v e="$elapsed" -v t="$timeout" 'BEGIN { exit !(e > t + 10) }'; then
  echo "fault_test: FAIL: took $elapsed s, more than TESSERA_COMM_TIMEOUT + 10 = $((timeout + 10)) s"; fail=1
fi
# A survivor's words, not the victim's: "<op> (<count> x <dtype>) on a group of ..." comes from
# the CommError or the SIGTERM note of a rank that waited in the collective.
# exchange: the transport's own collective or point-to-point call (which one depends on it).
named=$op
[ "$op" = exchange ] && named='[a-z_]+'
if ! grep -Eq "(^|[^a-z_])$named \([0-9]+ x [a-z0-9]+\) on a group of" "$log"; then
  echo "fault_test: FAIL: no surviving rank named the collective '$op'"; fail=1
fi
if grep -q "returned although rank" "$log"; then
  echo "fault_test: FAIL: a collective returned although its peer died"; fail=1
fi
[ "$fail" -eq 0 ] && echo "fault_test: PASS"
exit $fail
