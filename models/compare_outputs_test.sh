#!/usr/bin/env bash
# compare-outputs: the tolerance |got-exp| <= rtol*|exp| + atol_frac*max|exp|
# at and past its edge, the printed errors, and mismatched files.
#   compare_outputs_test.sh COMPARE PLIR_RUN
set -uo pipefail
cmpo="$1" run="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
# mk FILE 'NAME=TYPE=VALUES' ...: a safetensors file, written by plir-run
# from a module whose outputs onnx_outputs names.
mk() {
  local file="$1" names="" types="" values=""
  shift
  for spec in "$@"; do
    IFS='=' read -r n t v <<< "$spec"
    names+="${names:+, }\"$n\""; types+="${types:+, }$t"; values+="${values:+, }const<$t>[$v]"
  done
  printf 'def @main() -> (%s,) attrs {onnx_outputs = [%s]} {\n  (%s,)\n}\n' \
    "$types" "$names" "$values" > "$tmp/mk.plir"
  "$run" "$tmp/mk.plir" --save-outputs "$file" > /dev/null
}
T='Tensor[(3,), float32]'
# max|exp| = 1000: the bound is 1e-3*|exp| + 0.1.
mk "$tmp/exp.st" "out=$T=1000, 1, 0"
mk "$tmp/same.st" "out=$T=1000, 1, 0"
mk "$tmp/near.st" "out=$T=1001, 1.09, 0.09"
mk "$tmp/far.st" "out=$T=1000, 1, 0.125"
mk "$tmp/renamed.st" "y=$T=1000, 1, 0"
mk "$tmp/two.st" "y=$T=1000, 1, 0" "z=$T=1, 2, 3"
mk "$tmp/shape.st" "out=Tensor[(1, 3), float32]=1000, 1, 0"
mk "$tmp/dtype.st" "out=Tensor[(3,), float64]=1000, 1, 0"

"$cmpo" "$tmp/same.st" "$tmp/exp.st" --label m > "$tmp/log"; rc=$?
check "equal: exit 0, zero error" '[ $rc -eq 0 ] && grep -q "^m: out: 3 elements, max|exp| 1000, max abs err 0, max rel err 0," "$tmp/log" && grep -q "^PASS" "$tmp/log"'
"$cmpo" "$tmp/near.st" "$tmp/exp.st" > "$tmp/log"; rc=$?
check "inside the tolerance: exit 0" '[ $rc -eq 0 ] && grep -q "max abs err 1, max rel err 0.09," "$tmp/log" && grep -q "0 outside" "$tmp/log"'
"$cmpo" "$tmp/far.st" "$tmp/exp.st" > "$tmp/log"; rc=$?
check "outside: exit 1, the element shown" '[ $rc -eq 1 ] && grep -q "1 outside the tolerance" "$tmp/log" && grep -q "at 2: got 0.125, expected 0" "$tmp/log" && grep -q "^FAIL" "$tmp/log"'
"$cmpo" "$tmp/far.st" "$tmp/exp.st" --atol-frac 2e-4 > "$tmp/log"; rc=$?
check "--atol-frac widens the bound" '[ $rc -eq 0 ]'
"$cmpo" "$tmp/near.st" "$tmp/exp.st" --rtol 0 > "$tmp/log"; rc=$?
check "--rtol 0: 1001 vs 1000 fails" '[ $rc -eq 1 ] && grep -q "at 0: got 1001, expected 1000" "$tmp/log"'
"$cmpo" "$tmp/renamed.st" "$tmp/exp.st" > "$tmp/log"; rc=$?
check "another name, same count: by position" '[ $rc -eq 0 ]'
"$cmpo" "$tmp/two.st" "$tmp/exp.st" > /dev/null 2> "$tmp/err"; rc=$?
check "no such name, other count: exit 1" '[ $rc -eq 1 ] && grep -q "two.st has no tensor .out." "$tmp/err"'
"$cmpo" "$tmp/shape.st" "$tmp/exp.st" > /dev/null 2> "$tmp/err"; rc=$?
check "shape differs: exit 1, named" '[ $rc -eq 1 ] && grep -q "tensor .out. is float32\[1, 3\], but expected .out. is float32\[3\]" "$tmp/err"'
"$cmpo" "$tmp/dtype.st" "$tmp/exp.st" > /dev/null 2> "$tmp/err"; rc=$?
check "dtype differs: exit 1" '[ $rc -eq 1 ] && grep -q "is float64\[3\], but expected" "$tmp/err"'
printf 'junk' > "$tmp/junk.st"
"$cmpo" "$tmp/junk.st" "$tmp/exp.st" > /dev/null 2> "$tmp/err"; rc=$?
check "malformed file: exit 1, named" '[ $rc -eq 1 ] && grep -q "junk.st" "$tmp/err"'
"$cmpo" "$tmp/exp.st" > /dev/null 2>&1; rc=$?
check "usage error: exit 2" '[ $rc -eq 2 ]'
exit $fail
