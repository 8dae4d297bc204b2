#!/usr/bin/env bash
# Runs the generator into temporary directories (in-tree layout and
# out-of-tree workspace) and checks the files it writes. Building the result
# needs Bazel on a workspace of its own; tools/check_generator.sh (run by
# .ci/run) does that.
set -uo pipefail
gen="$PWD/tools/new_plugin.sh"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

# A fake checkout for the in-tree mode.
fake="$tmp/checkout"
mkdir -p "$fake/ir" "$fake/plugins"
touch "$fake/WORKSPACE"
printf 'IN_TREE_PLUGIN_NAMES = [\n    "fold_constant",\n]\n' > "$fake/plugins/plugins.bzl"
BUILD_WORKSPACE_DIRECTORY="$fake" bash "$gen" drop_twice > "$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
check "in-tree generation succeeds" '[ $rc -eq 0 ]'
check "BUILD uses the macro" 'grep -q "plir_pass_plugin(" "$fake/plugins/drop_twice/BUILD" && grep -q "//tools:plir.bzl" "$fake/plugins/drop_twice/BUILD"'
check "the pass is CamelCase" 'grep -q "def.info.name = \"DropTwice\"" "$fake/plugins/drop_twice/drop_twice.cc"'
check "one golden case" '[ -f "$fake/plugins/drop_twice/tests/basic.plir" ]'
check "the skeleton is a pattern run by the greedy driver" 'grep -q "class TodoPattern : public RewritePattern" "$fake/plugins/drop_twice/drop_twice.cc" && grep -q "ApplyPatternsGreedily(f, patterns)" "$fake/plugins/drop_twice/drop_twice.cc"'
check "registered as in-tree plugin" 'grep -q "\"drop_twice\"" "$fake/plugins/plugins.bzl"'
BUILD_WORKSPACE_DIRECTORY="$fake" bash "$gen" drop_twice > /dev/null 2>&1; rc=$?
check "refuses to overwrite" '[ $rc -ne 0 ]'
BUILD_WORKSPACE_DIRECTORY="$fake" bash "$gen" Bad-Name > /dev/null 2>&1; rc=$?
check "rejects a bad name" '[ $rc -eq 2 ]'

BUILD_WORKSPACE_DIRECTORY="$fake" bash "$gen" my_pass --out "$tmp/ws" > /dev/null 2>&1; rc=$?
check "out-of-tree generation succeeds" '[ $rc -eq 0 ]'
check "workspace refers to PLIR" 'grep -q "local_repository(name = \"plir\", path = \"$fake\")" "$tmp/ws/WORKSPACE"'
check "out-of-tree BUILD loads the macro from @plir" 'grep -q "@plir//tools:plir.bzl" "$tmp/ws/plugins/my_pass/BUILD"'
check "the workspace ignores Bazel's output links" 'grep -qx "/bazel-\*" "$tmp/ws/.gitignore"'
exit $fail
