#!/usr/bin/env bash
# bazel run //frontends/onnx:update_node_test_status: runs every node test
# and rewrites frontends/onnx/node_test_status.txt and docs/onnx.md.
set -euo pipefail
runner="$(pwd)/$1"
shift
exec "$runner" --update "${BUILD_WORKSPACE_DIRECTORY:?run me with bazel run}" --jobs 2 --timeout 120 "$@"
