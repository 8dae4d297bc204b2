#!/usr/bin/env bash
# shard_test [SHARDED UNSHARDED SOURCE]...: the merged result of each
# sharded build (split, one pipeline action per shard, merge) is
# byte-identical to the same pipeline run on the whole module, and differs
# from the source.
set -uo pipefail
fail=0
while [ $# -ge 3 ]; do
  if ! cmp "$1" "$2"; then
    echo "FAIL: $1 (merged shards) differs from $2 (unsharded)"; fail=1
  elif cmp -s "$1" "$3"; then
    echo "FAIL: $1: the pipeline changed nothing in $3"; fail=1
  else
    echo "PASS: $1 == $2 ($(wc -c < "$1") bytes)"
  fi
  shift 3
done
exit "$fail"
