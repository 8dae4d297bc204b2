#!/usr/bin/env bash
# Checks that every C++ file in git is formatted as .clang-format says
# (Google style, 100 columns), with Debian's clang-format. Prints the files
# that are not, and how to fix them; exits 1 if there is any.
#
#   tools/check_format.sh          check
#   tools/check_format.sh --fix    rewrite the files in place
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "format: clang-format is not installed (tools/setup.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'format: not formatted: %s\n' "${bad[@]}" >&2
  echo "format: ${#bad[@]} of ${#files[@]} files need tools/check_format.sh --fix" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted ($(clang-format --version | head -1))"
