#!/usr/bin/env bash
# docs/onnx.md is exactly what the status file renders to.
set -uo pipefail
exec "$1" --doc-check "$2" "$3"
