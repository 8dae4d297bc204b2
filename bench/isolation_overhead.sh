#!/usr/bin/env bash
# What process isolation and the plugin sandbox cost: plir-opt (a
# supervised, sandboxed child runs plugins and the pipeline and hands its
# result over; the parent loads, verifies, prints and writes it) against
# plir-opt --sandbox=off (the same without Landlock and seccomp) and
# plir-opt --no-isolate (one process), on the same inputs, interleaved,
# medians of RUNS runs. Each run goes through /usr/bin/time (wall time and
# peak RSS of the parent, which for the isolated run is the parent's own
# small footprint: the child's is reported by time as well since it is
# waited for -- /usr/bin/time reports the largest of the process tree's
# waited children).
#
# Cases: small (examples/spec/conv2d.plir, --passes CanonicalizeBindings),
# and the peer benchmark's 1M-op chain in one function and in 1,000
# functions (bench/peer_compare.py), text in, text out, with the cleanup
# passes.
#
#   RUNS=5 bench/isolation_overhead.sh            (TMPDIR=/dev/shm recommended)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-5}"
SIZE="${SIZE:-1000000}"
work=$(mktemp -d "${TMPDIR:-/tmp}/plir-iso.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "${PLIR_OPT:-}" ]; then
  bazel build -c opt //cli:plir-opt > /dev/null 2>&1
  PLIR_OPT=$(bazel info -c opt bazel-bin 2>/dev/null)/cli/plir-opt
fi
mkdir -p "$work/one" "$work/many"
python3 bench/peer_compare.py gen "$SIZE" one 1000 "$work/one" > /dev/null
python3 bench/peer_compare.py gen "$SIZE" many 1000 "$work/many" > /dev/null
passes=CanonicalizeBindings,CommonSubexpressionElimination,DeadCodeElimination
measure() {  # measure REPS INPUT PASSES FLAGS... -> "seconds-per-run kb cpu-seconds-per-run"
  local reps="$1" in="$2" p="$3"; shift 3
  /usr/bin/time -f "%e %M %U %S" -o "$work/t" bash -c 'for _ in $(seq '"$reps"'); do "$@" || exit 1; done' _ \
    "$PLIR_OPT" "$in" --passes "$p" -o "$work/out.plir" "$@" 2> /dev/null
  awk -v r="$reps" '{ printf "%.4f %d %.4f\n", $1 / r, $2, ($3 + $4) / r }' "$work/t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| input | sandboxed (s) | --sandbox=off (s) | --no-isolate (s) | sandbox cost | isolation cost | CPU s: sandboxed / off / --no-isolate | sandboxed peak RSS (KB) | --no-isolate peak RSS (KB) |"
echo "|---|---|---|---|---|---|---|---|---|"
# A small run takes milliseconds: each sample is 50 runs in a row.
for c in "small (conv2d.plir, 50 runs per sample):50:examples/spec/conv2d.plir:CanonicalizeBindings" \
         "${SIZE} ops, one function:1:$work/one/in.plir:$passes" \
         "${SIZE} ops, 1000 functions:1:$work/many/in.plir:$passes"; do
  IFS=: read -r name reps in p <<< "$c"
  : > "$work/iso"; : > "$work/off"; : > "$work/one_proc"
  for _ in $(seq "$RUNS"); do
    measure "$reps" "$in" "$p" >> "$work/iso"
    measure "$reps" "$in" "$p" --sandbox=off >> "$work/off"
    measure "$reps" "$in" "$p" --no-isolate >> "$work/one_proc"
  done
  ti=$(cut -d' ' -f1 "$work/iso" | median); to=$(cut -d' ' -f1 "$work/off" | median)
  tn=$(cut -d' ' -f1 "$work/one_proc" | median)
  ri=$(cut -d' ' -f2 "$work/iso" | median); rn=$(cut -d' ' -f2 "$work/one_proc" | median)
  ci=$(cut -d' ' -f3 "$work/iso" | median); co=$(cut -d' ' -f3 "$work/off" | median)
  cn=$(cut -d' ' -f3 "$work/one_proc" | median)
  pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%+.1f%% (%+.1f ms)", (a - b) / b * 100, (a - b) * 1000; else printf "n/a" }'; }
  echo "| $name | $ti | $to | $tn | $(pct "$ti" "$to") | $(pct "$to" "$tn") | $ci / $co / $cn | $ri | $rn |"
done
