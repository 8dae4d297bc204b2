#!/usr/bin/env bash
# Runs every ```sh block of docs/writing-a-plugin.md, in order, from the root
# of a scratch copy of this repository. Prints "guide: N passed, N failed"
# (one per block) and fails at the first failing block.
set -uo pipefail
cd "$(dirname "$0")/.."
guide=docs/writing-a-plugin.md
tmp=$(mktemp -d)
copy="$tmp/plir"
mkdir -p "$copy"
git ls-files -z | (cd "$(pwd)" && xargs -0 cp --parents -t "$copy")
# The spec copy check looks for ../shared; not needed here.
blocks="$tmp/blocks"
mkdir -p "$blocks"
awk -v dir="$blocks" '
  /^```sh$/ { n++; file = sprintf("%s/%03d.sh", dir, n); inblock = 1; next }
  /^```$/ && inblock { inblock = 0; close(file); next }
  inblock { print > file }
' "$guide"
passed=0; failed=0
cd "$copy"
for b in "$blocks"/*.sh; do
  echo "guide: running block $(basename "$b" .sh):"
  sed 's/^/  | /' "$b" | head -5
  if bash -euo pipefail "$b"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "guide: block $(basename "$b" .sh) failed"
    break
  fi
done
bazel shutdown > /dev/null 2>&1
for ws in "$tmp"/*/; do  # workspaces the guide created beside the copy
  [ -f "$ws/WORKSPACE" ] && (cd "$ws" && bazel shutdown > /dev/null 2>&1)
done
cd /; rm -rf "$tmp"
echo "guide: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
