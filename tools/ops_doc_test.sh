#!/usr/bin/env bash
# docs/ops.md is exactly what `bazel run //tools:gen_ops_doc` writes.
set -uo pipefail
"$1" --check docs/ops.md
