#!/usr/bin/env bash
# Fails if examples/spec/ differs from the spec's examples in ../shared/spec.
# Usage: tools/check_spec_copy.sh [--update]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
spec="$root/../shared/spec/examples"
if [ ! -d "$spec" ]; then
  echo "check_spec_copy: $spec not found; nothing to compare" >&2
  exit 0
fi
if [ "${1:-}" = "--update" ]; then
  rm -f "$root"/examples/spec/*.plir
  cp "$spec"/*.plir "$root/examples/spec/"
fi
if ! diff -r -x BUILD "$spec" "$root/examples/spec" >&2; then
  echo "check_spec_copy: examples/spec differs from $spec; run tools/check_spec_copy.sh --update" >&2
  exit 1
fi
