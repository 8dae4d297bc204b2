#!/usr/bin/env bash
# The conformance runner itself: it fails (not passes vacuously) without
# test data, fails on a regression against the status file, reports tests
# that pass newly, and checks the doc against the status file.
set -uo pipefail
runner="$1"
data=/usr/lib/python3/dist-packages/onnx/backend/test/data
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if [ "$2" = 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

mkdir -p "$tmp/empty"
printf '# status\n' > "$tmp/status.txt"
"$runner" --check "$tmp/status.txt" --data "$tmp/empty" > "$tmp/out.txt" 2>&1; rc=$?
check "empty test data fails" "$([ $rc -ne 0 ] && echo 0 || echo 1)"
"$runner" --check "$tmp/status.txt" --data "$tmp/missing" > "$tmp/out.txt" 2>&1; rc=$?
check "missing test data fails" "$([ $rc -ne 0 ] && echo 0 || echo 1)"

# test_tfidfvectorizer_tf_only_bigrams_skip0 does not pass: listed as passing, it is a regression.
t=node/test_tfidfvectorizer_tf_only_bigrams_skip0
printf '%s\tpass\tTfIdfVectorizer\t\n' "$t" > "$tmp/status.txt"
"$runner" --check "$tmp/status.txt" --data "$data" --filter tfidfvectorizer_tf_only_bigrams_skip0 > "$tmp/out.txt" 2>&1; rc=$?
check "a regression fails" "$([ $rc -ne 0 ] && grep -q "REGRESSION: $t" "$tmp/out.txt" && echo 0 || echo 1)"

# test_add passes: listed as failing, it is reported as newly passing (not a failure).
printf 'node/test_add\tfail\tAdd\tsome reason\n' > "$tmp/status.txt"
"$runner" --check "$tmp/status.txt" --data "$data" --filter node/test_add > "$tmp/out.txt" 2>&1; rc=$?
check "a newly passing test is reported" "$([ $rc -eq 0 ] && grep -q "NEWLY PASSING: node/test_add" "$tmp/out.txt" && echo 0 || echo 1)"

# A stale doc is caught.
printf 'stale\n' > "$tmp/doc.md"
"$runner" --doc-check "$2" "$tmp/doc.md" > "$tmp/out.txt" 2>&1; rc=$?
check "a stale doc fails" "$([ $rc -ne 0 ] && echo 0 || echo 1)"
exit $fail
