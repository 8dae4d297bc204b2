#!/usr/bin/env bash
# LazyTransformParams on the upstream input gives the upstream expected module.
set -uo pipefail
opt="$1"; diff_tool="$2"; plugin="$3"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
"$opt" examples/spec/lazy_transform_params.input.plir --plugin "$plugin" \
  --passes LazyTransformParams --verify-each --check-input-unchanged -o "$tmp/out.plir" || exit 1
"$diff_tool" examples/spec/lazy_transform_params.expected.plir "$tmp/out.plir"
