#!/usr/bin/env bash
# zoo_test PLIR_OPT [SRC OUT PIPELINE EMIT]...: each zoo output (built by a
# plir_pipeline action, plugins given by path, in the sandbox) is
# byte-identical to plir-opt run here directly on its source (finding its
# bundled plugins itself), and parses and verifies.
set -uo pipefail
opt=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
while [ $# -ge 4 ]; do
  src=$1 out=$2 pipeline=$3 emit=$4
  shift 4
  n=$((n + 1))
  if ! "$opt" "$src" --pipeline "$pipeline" --emit "$emit" -o "$tmp/direct" 2> "$tmp/err"; then
    echo "FAIL: $src: direct plir-opt run failed:"; cat "$tmp/err"; fail=1; continue
  fi
  if ! cmp -s "$tmp/direct" "$out"; then
    echo "FAIL: $out differs from the direct run of $pipeline on $src"; fail=1; continue
  fi
  if ! "$opt" "$out" -o /dev/null 2> "$tmp/err"; then
    echo "FAIL: $out does not parse or verify:"; cat "$tmp/err"; fail=1; continue
  fi
done
[ $# -eq 0 ] || { echo "FAIL: $# arguments left over"; fail=1; }
[ "$n" -ge 50 ] || { echo "FAIL: only $n models (the zoo has at least 50)"; fail=1; }
[ "$fail" -eq 0 ] && echo "PASS: $n zoo models match direct plir-opt runs"
exit "$fail"
