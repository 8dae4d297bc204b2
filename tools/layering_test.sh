#!/usr/bin/env bash
# Checks the arrows of docs/architecture.md on the BUILD graph: each argument
# is the output of a genquery (tools/BUILD), the transitive dependencies of
# one room. A room may depend only on the rooms below it; a forbidden label
# in its closure fails the test and names the edge.
set -uo pipefail
core=$1 ops=$2 kernels=$3 sdk=$4 plugins=$5 interp=$6
fail=0
# forbid FILE WHAT REGEX...: fails if FILE lists a label matching a REGEX.
forbid() {
  local file=$1 what=$2
  shift 2
  local n
  n=$(wc -l < "$file")
  if [ "$n" -eq 0 ]; then echo "FAIL: $what: the query returned nothing"; fail=1; return; fi
  for re in "$@"; do
    if grep -E "$re" "$file" > /tmp/layering.$$; then
      echo "FAIL: $what depends on:"; sed 's/^/  /' /tmp/layering.$$; fail=1
    fi
  done
  rm -f /tmp/layering.$$
}
# expect FILE WHAT LABEL: the closure must contain LABEL (the query is real).
expect() {
  grep -qxF "$3" "$1" || { echo "FAIL: $2: expected $3 in its dependencies"; fail=1; }
}
PLIR_ROOMS='^//(ir/ops|ir/text|ir/serialize|kernels|passes|plugins|driver|interpreter|cli|frontends|python|testing|tools|bench)[:/]'
forbid "$core" "//ir:core" "$PLIR_ROOMS" '^@system//:(simdjson|yaml_cpp|re2|crypto|onnx|protobuf|blas|openblas)'
expect "$core" "//ir:core" "//ir/support:support"
forbid "$ops" "//ir/ops" '^//(ir/text|ir/serialize|kernels|passes|plugins|driver|interpreter|cli|frontends)[:/]'
expect "$ops" "//ir/ops" "//ir:core"
forbid "$kernels" "//kernels" '^//(ir/text|ir/serialize|passes|plugins|driver|interpreter|cli|frontends)[:/]'
expect "$kernels" "//kernels" "//ir/ops:ops"
forbid "$sdk" "the plugin SDK (//passes:sdk_headers)" '^//(driver|interpreter|cli|frontends)[:/]' '^//ir:core$' '^//kernels:kernels$' '^//ir/ops:ops$'
forbid "$plugins" "the in-tree plugins" '^//(driver|interpreter|cli|frontends)[:/]' '^//ir:core$' '^//kernels:kernels$'
expect "$plugins" "the in-tree plugins" "//passes:sdk_headers"
forbid "$interp" "//interpreter" '^//(driver|cli|frontends|passes|plugins|ir/text|ir/serialize)[:/]'
if [ "$fail" -eq 0 ]; then echo "layering: all arrows hold"; fi
exit "$fail"
