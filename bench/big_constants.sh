#!/usr/bin/env bash
# Large constants: a module with MB MiB of weights bound as constants
# (bench/big_constants.cc), loaded from binary version 3 (mapped, the
# constants view the mapping) against `cat FILE > /dev/null` on the same
# file, in the same run, interleaved, medians of RUNS, whole processes, the
# file in the page cache (hot). Also: version 3 with every weight byte then
# read (--touch), with the tensor-data checksum checked first (--verify),
# and the same module as version 2 (whose loader copies the bytes and
# checks an FNV-1a checksum over them).
#
#   RUNS=5 MB=300 bench/big_constants.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-5}"
MB="${MB:-300}"
work=$(mktemp -d "${TMPDIR:-/tmp}/plir-bigc.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "${BIG_CONSTANTS:-}" ]; then
  nice -n 19 bazel build -c opt //bench:big_constants > /dev/null 2>&1
  BIG_CONSTANTS=$(bazel info -c opt bazel-bin 2>/dev/null)/bench/big_constants
fi
"$BIG_CONSTANTS" gen "$work/w3.plirb" --mb "$MB" --version 3
"$BIG_CONSTANTS" gen "$work/w2.plirb" --mb "$MB" --version 2
# shellcheck source=bench/timing.sh
. bench/timing.sh
declare -A t
cases="cat v3 v3_touch v3_verify v2"
for c in $cases; do t[$c]=""; done
cat "$work/w3.plirb" "$work/w2.plirb" > /dev/null  # warm the page cache
for _ in $(seq "$RUNS"); do
  t[cat]+=" $(ms cat "$work/w3.plirb")"
  t[v3]+=" $(ms "$BIG_CONSTANTS" load "$work/w3.plirb")"
  t[v3_touch]+=" $(ms "$BIG_CONSTANTS" load "$work/w3.plirb" --touch)"
  t[v3_verify]+=" $(ms "$BIG_CONSTANTS" load "$work/w3.plirb" --verify --touch)"
  t[v2]+=" $(ms "$BIG_CONSTANTS" load "$work/w2.plirb")"
done
echo "$(ls -l "$work/w3.plirb" | awk '{print $5}') bytes (v3), $(ls -l "$work/w2.plirb" | awk '{print $5}') bytes (v2); medians of $RUNS, ms, load average $(cut -d' ' -f1-3 /proc/loadavg)"
cat_ms=$(echo "${t[cat]}" | median)
for c in $cases; do
  m=$(echo "${t[$c]}" | median)
  printf "%-10s %8s ms  %5.2fx cat\n" "$c" "$m" "$(echo "$m / $cat_ms" | bc -l)"
done
"$BIG_CONSTANTS" load "$work/w3.plirb"
