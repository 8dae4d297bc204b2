#!/usr/bin/env bash
# End-to-end checks of plir-opt: round trips, stdin, -o, exit codes, and
# that errors write nothing.
set -uo pipefail
opt="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

for f in examples/spec/*.plir; do
  "$opt" "$f" > "$tmp/a.plir" 2> "$tmp/err"; rc=$?
  check "$f prints (rc=$rc)" '[ $rc -eq 0 ]'
  "$opt" "$tmp/a.plir" > "$tmp/b.plir"; rc=$?
  check "$f re-parses" '[ $rc -eq 0 ]'
  check "$f printing is a fixed point" 'cmp -s "$tmp/a.plir" "$tmp/b.plir"'
done

"$opt" - < examples/spec/conv2d.plir > "$tmp/stdin.plir"
check "reads stdin" '[ $? -eq 0 ] && grep -q "nn.conv2d" "$tmp/stdin.plir"'

"$opt" examples/spec/conv2d.plir -o "$tmp/out.plir"; rc=$?
check "-o writes the file" '[ $rc -eq 0 ] && cmp -s "$tmp/out.plir" <("$opt" examples/spec/conv2d.plir)'

printf 'def @f() {\n  %%a = bogus(1);\n  %%a\n}\n' > "$tmp/bad.plir"
cp "$tmp/bad.plir" "$tmp/bad.copy"
"$opt" "$tmp/bad.plir" -o "$tmp/never.plir" 2> "$tmp/err"; rc=$?
check "bad input exits 1" '[ $rc -eq 1 ]'
check "error names file:line:col" 'grep -q "bad.plir:2:8: unknown op .bogus." "$tmp/err"'
check "nothing written on error" '[ ! -e "$tmp/never.plir" ] && [ -z "$(ls "$tmp" | grep never)" ]'
check "input not modified" 'cmp -s "$tmp/bad.plir" "$tmp/bad.copy"'

echo "keep" > "$tmp/existing.plir"
"$opt" "$tmp/bad.plir" -o "$tmp/existing.plir" 2>/dev/null
check "existing output kept on error" '[ "$(cat "$tmp/existing.plir")" = keep ]'

"$opt" "$tmp/missing.plir" 2> "$tmp/err"; rc=$?
check "missing input exits 1" '[ $rc -eq 1 ] && grep -q "cannot open" "$tmp/err"'

"$opt" 2> /dev/null; rc=$?
check "usage error exits 2" '[ $rc -eq 2 ]'

head -c 3000 /dev/urandom > "$tmp/random.bin" 2>/dev/null || true
"$opt" "$tmp/random.bin" > /dev/null 2>&1; rc=$?
check "random bytes are a clean error" '[ $rc -eq 1 ]'

exit $fail
