#!/usr/bin/env bash
# Tests of the golden machinery itself:
#  - a deliberately wrong expected file fails with the first mismatch path
#    and a readable unified diff;
#  - update_goldens regenerates an expected file, and the runner then passes;
#  - update_goldens refuses to overwrite a file without the banner;
#  - plir-diff exits 0 on equal modules and 1 with a diff otherwise.
set -uo pipefail
runner="$1"; update="$2"; plugin="$3"; diff_tool="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

"$runner" --plugin "$plugin" --case testing/testdata/wrong.plir \
  --expected testing/testdata/wrong.expected.plir > "$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
check "wrong expected file fails" '[ $rc -eq 1 ]'
check "failure names the case" 'grep -q "FAIL \] testing/testdata/wrong.plir:1 (case 1 of 1)" "$tmp/out"'
check "failure gives the first mismatch path" 'grep -q "first mismatch: @main, body, block 0, binding 0 (%out), value, argument 0: expected constant" "$tmp/out"'
check "failure shows a unified diff" 'grep -q "^-    %out: Tensor\[(2, 2), float32\] = add(const<Tensor\[(2, 2), float32\]>\[4.5, 4.5, 1.375, 2.75\], %x);" "$tmp/out" && grep -q "^+    %out: .*2.5\], %x);" "$tmp/out"'

# A scratch workspace for update_goldens.
ws="$tmp/ws"
mkdir -p "$ws/plugins/fold_constant/tests"
touch "$ws/WORKSPACE"
cp testing/testdata/wrong.plir "$ws/plugins/fold_constant/tests/case.plir"
BUILD_WORKSPACE_DIRECTORY="$ws" "$update" //plugins/fold_constant > "$tmp/upd" 2>&1; rc=$?
cat "$tmp/upd"
check "update_goldens writes a new expected file" '[ $rc -eq 0 ] && head -1 "$ws/plugins/fold_constant/tests/case.expected.plir" | grep -q "DO NOT EDIT"'
cp "$ws/plugins/fold_constant/tests/case.expected.plir" "$tmp/first"
BUILD_WORKSPACE_DIRECTORY="$ws" "$update" //plugins/fold_constant > /dev/null 2>&1
check "regeneration is byte for byte identical" 'cmp -s "$tmp/first" "$ws/plugins/fold_constant/tests/case.expected.plir"'
"$runner" --plugin "$plugin" --case "$ws/plugins/fold_constant/tests/case.plir" \
  --expected "$ws/plugins/fold_constant/tests/case.expected.plir" > "$tmp/out2" 2>&1
check "the regenerated file passes" '[ $? -eq 0 ]'
sed -i 's/4.5, 4.5, 1.375, 2.5/4.5, 4.5, 1.375, 2.50/' "$ws/plugins/fold_constant/tests/case.expected.plir"
"$runner" --plugin "$plugin" --case "$ws/plugins/fold_constant/tests/case.plir" \
  --expected "$ws/plugins/fold_constant/tests/case.expected.plir" > "$tmp/out3" 2>&1; rc=$?
check "a hand edit that keeps the meaning is still caught" '[ $rc -eq 1 ] && grep -q "hand-edited or stale" "$tmp/out3"'
tail -n +2 "$tmp/first" > "$ws/plugins/fold_constant/tests/case.expected.plir"  # drop the banner
BUILD_WORKSPACE_DIRECTORY="$ws" "$update" //plugins/fold_constant > "$tmp/upd2" 2>&1; rc=$?
check "update_goldens refuses a file without the banner" '[ $rc -eq 1 ] && grep -q "refusing to overwrite" "$tmp/upd2"'

"$diff_tool" examples/spec/conv2d.plir examples/spec/conv2d.plir; rc=$?
check "plir-diff: equal modules exit 0" '[ $rc -eq 0 ]'
"$diff_tool" examples/spec/lazy_transform_params.input.plir examples/spec/lazy_transform_params.expected.plir > "$tmp/d" 2>&1; rc=$?
check "plir-diff: different modules exit 1 with a diff" '[ $rc -eq 1 ] && grep -q "^first mismatch: @main_transform_params" "$tmp/d" && grep -q "^@@" "$tmp/d"'
"$diff_tool" examples/spec/conv2d.plir /nonexistent.plir > /dev/null 2>&1; rc=$?
check "plir-diff: unreadable input exits 2" '[ $rc -eq 2 ]'
exit $fail
