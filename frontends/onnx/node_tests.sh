#!/usr/bin/env bash
# bazel test //frontends/onnx:node_tests: every ONNX backend node test,
# checked against frontends/onnx/node_test_status.txt.
set -uo pipefail
exec "$1" --check "$2" --jobs 2 --timeout 120
