#!/usr/bin/env bash
# Each upstream Expected module (upstream/CASE.plir, written by hand from
# apache/tvm tests/python/relax/test_transform_fuse_ops.py) is structurally
# equal to the golden FuseOps produced for the case (tests/CASE.expected.plir).
set -uo pipefail
diff_tool="$1"; shift
status=0
n=0
for upstream in "$@"; do
  case_name=$(basename "$upstream" .plir)
  golden="$(dirname "$upstream")/../tests/$case_name.expected.plir"
  if ! "$diff_tool" "$upstream" "$golden"; then
    echo "FAIL: $case_name differs from the upstream Expected"
    status=1
  fi
  n=$((n + 1))
done
echo "$n upstream cases compared"
[ "$n" -gt 0 ] || status=1
exit $status
