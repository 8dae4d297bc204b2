#!/usr/bin/env bash
# Generates an out-of-tree plugin workspace with //tools:new_plugin in a
# temporary directory, writes its golden file and runs its tests with Bazel.
# Prints "N passed, N failed" for the generated workspace's tests.
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
ws="$tmp/generated_ws"
bazel run //tools:new_plugin -- gen_check --out "$ws" || exit 1
cd "$ws"
bazel run //plugins/gen_check:update_goldens || exit 1
log=$(mktemp)
bazel test //... --test_summary=short 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS)' "$log" || true)
bazel shutdown > /dev/null 2>&1
cd /; rm -rf "$tmp"
echo "generator: ${passed} passed, ${failed} failed"
exit "$rc"
