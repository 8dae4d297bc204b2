#!/usr/bin/env bash
# RNN, GRU and LSTM beyond ONNX's node tests (which are forward only):
# reverse, bidirectional, layout 1, clip, linear_before_reset, checked
# against rnn_cases.py's NumPy reference through the node-test runner.
set -uo pipefail
runner="$1"
cases="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
/usr/bin/python3 "$cases" "$tmp" > "$tmp/names.txt" || { echo "FAIL: rnn_cases.py"; exit 1; }
fail=0
n=0
while read -r name; do
  n=$((n + 1))
  line=$("$runner" --data "$tmp" --only "node/$name" 2>&1 | tail -1)
  case "$line" in
    "node/$name"$'\t'pass*) echo "ok: $name" ;;
    *) echo "FAIL: $line"; fail=1 ;;
  esac
done < "$tmp/names.txt"
[ "$n" -ge 12 ] || { echo "FAIL: only $n cases generated"; fail=1; }
exit $fail
