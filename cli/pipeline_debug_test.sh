#!/usr/bin/env bash
# plir-opt's pipeline debugging flags, on a planted bug (test plugin
# test_planted: TestAddBecomesSubtract turns the first add(a, b) into
# subtract(a, b)):
#   --check-execution  names the pass, its plugin, the first differing
#                      output and binding; writes a reproducer; keeps files
#   --dump-ir-dir      one numbered file per pass application
#   --bisect-limit     runs the first N applications; a bisection over N
#                      with --check-execution as the oracle finds the pass
set -uo pipefail
opt="$1"
planted="$PWD/testing/plugins/libplir_test_planted.so"
good="$PWD/testing/plugins/libplir_test_good.so"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export TMPDIR="$tmp"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
py=/usr/bin/python3

# x * y + y, times x: with x = 1..6 and y = 1, the planted bug gives
# (x - 1) * x instead of (x + 1) * x, off by 2x: 12 at index 5; %s is off by 2
# everywhere (first at index 0).
cat > "$tmp/m.plir" <<'PLIR'
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %m = multiply(%x, %y);
  %s = add(%m, %y);
  %t = multiply(%s, %x);
  %t
}
PLIR
cp "$tmp/m.plir" "$tmp/m.copy"
# A safetensors file: OUT NAME:SHAPE=v,v,...  (float32)
mkst() {
  "$py" - "$@" <<'PY'
import json, struct, sys
out, header, data = sys.argv[1], {}, b""
for spec in sys.argv[2:]:
    name, rest = spec.split("=")
    name, shape = name.split(":")
    vals = [float(v) for v in rest.split(",")]
    b = struct.pack("<%df" % len(vals), *vals)
    header[name] = {"dtype": "F32", "shape": [int(d) for d in shape.split("x")],
                    "data_offsets": [len(data), len(data) + len(b)]}
    data += b
h = json.dumps(header).encode()
open(out, "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
}
mkst "$tmp/in.safetensors" "x:2x3=1,2,3,4,5,6"
mkst "$tmp/w.safetensors" "y:2x3=1,1,1,1,1,1"
cp "$tmp/in.safetensors" "$tmp/in.copy"

# 1. --check-execution
echo keep > "$tmp/out.plir"
"$opt" "$tmp/m.plir" --plugin "$planted" --passes Normalize,TestAddBecomesSubtract,CanonicalizeBindings \
  --check-execution="$tmp/in.safetensors" --params "$tmp/w.safetensors" -o "$tmp/out.plir" 2> "$tmp/err"; rc=$?
cat "$tmp/err"
check "a pass that changes the outputs fails the run" '[ $rc -eq 1 ]'
check "the pass and its plugin are named" \
  'grep -q "^plir-opt: --check-execution: pass TestAddBecomesSubtract (plugin test_planted) changed what @main computes" "$tmp/err" && grep -q "^plir-opt: in pass TestAddBecomesSubtract of plugin test_planted 1" "$tmp/err"'
check "the first differing output, its max abs error and index" \
  'grep -q "first differing output: max abs error 12 at index 5 (\[1, 2\]): 42 before, 30 after" "$tmp/err"'
check "the first differing binding is %s" \
  'grep -q "first differing binding: %s in @main: max abs error 2 at index 0 (\[0, 0\]): 2 before, 0 after" "$tmp/err"'
check "the inputs came from the files, by name" 'grep -q "bound by name" "$tmp/err"'
check "the output file is left as it was" '[ "$(cat "$tmp/out.plir")" = keep ]'
check "the input files are unchanged" 'cmp -s "$tmp/m.plir" "$tmp/m.copy" && cmp -s "$tmp/in.safetensors" "$tmp/in.copy"'
dir=$(sed -n 's/^plir-opt: reproducer written to //p' "$tmp/err")
check "a reproducer is written" '[ -n "$dir" ] && [ -f "$dir/reproducer.yaml" ] && grep -q "check_execution:" "$dir/reproducer.yaml"'
"$opt" --reproduce "$dir" 2> "$tmp/replay"; rc=$?
check "the reproducer replays the execution check" \
  '[ $rc -eq 1 ] && grep -q "^plir-opt: --check-execution: pass TestAddBecomesSubtract" "$tmp/replay"'

"$opt" "$tmp/m.plir" --plugin "$planted" --passes Normalize,TestAddBecomesSubtract \
  --check-execution --no-reproducer -o /dev/null 2> "$tmp/err"; rc=$?
check "random inputs: seed shown, the binding named" \
  '[ $rc -eq 1 ] && grep -q "random inputs (seed 0)" "$tmp/err" && grep -q "first differing binding: %s in @main" "$tmp/err"'
"$opt" "$tmp/m.plir" --plugin "$planted" --passes Normalize,TestAddBecomesSubtract \
  --check-execution --check-seed 5 --no-reproducer -o /dev/null 2> "$tmp/err5"; rc=$?
check "--check-seed picks other inputs" '[ $rc -eq 1 ] && grep -q "seed 5" "$tmp/err5" && ! cmp -s "$tmp/err" "$tmp/err5"'

"$opt" "$tmp/m.plir" --plugin "$planted" --passes Normalize,TestAddBecomesSubtract \
  --check-execution="$tmp/in.safetensors" --params "$tmp/w.safetensors" --check-tolerance 3 \
  -o "$tmp/tol.plir" 2> "$tmp/err"; rc=$?
check "a tolerance that covers the error passes (|2x| <= 3|(x+1)x|)" '[ $rc -eq 0 ] && grep -q "subtract" "$tmp/tol.plir"'

sed 's/add(%m, %y)/subtract(%m, %y)/' "$tmp/m.plir" > "$tmp/sub.plir"
"$opt" "$tmp/sub.plir" --plugin "$planted" --passes Normalize,TestSubtractViaAdd,CommonSubexpressionElimination,DeadCodeElimination \
  --check-execution -o "$tmp/right.plir" 2> "$tmp/err"; rc=$?
check "a correct pipeline passes the check and writes its output" '[ $rc -eq 0 ] && grep -q "negative" "$tmp/right.plir"'

cat > "$tmp/nokernel.plir" <<'PLIR'
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %m = test.square(%x);
  %m
}
PLIR
"$opt" "$tmp/nokernel.plir" --plugin "$good" --passes Normalize --check-execution --bisect-limit 9 \
  -o "$tmp/never.plir" 2> "$tmp/err"; rc=$?
check "an op without a kernel is named before any pass runs" \
  '[ $rc -eq 1 ] && grep -q "op test.square has no evaluation kernel" "$tmp/err" && grep -q "no pass was run" "$tmp/err" && ! grep -q "BISECT" "$tmp/err" && [ ! -e "$tmp/never.plir" ]'
"$opt" "$tmp/m.plir" --passes Normalize --check-execution --entry nothere -o /dev/null 2> "$tmp/err"; rc=$?
check "a missing entry is an error" '[ $rc -eq 1 ] && grep -q "no function @nothere" "$tmp/err"'
mkst "$tmp/short.safetensors" "a:2x3=1,2,3,4,5,6"
"$opt" "$tmp/m.plir" --passes Normalize --check-execution="$tmp/short.safetensors" -o /dev/null 2> "$tmp/err"; rc=$?
check "too few input tensors is an error" '[ $rc -eq 1 ] && grep -q "takes 2 tensors" "$tmp/err"'
"$opt" "$tmp/m.plir" --params "$tmp/w.safetensors" 2> "$tmp/err"; rc=$?
check "--params without --check-execution is a usage error" '[ $rc -eq 2 ] && grep -q "needs --check-execution" "$tmp/err"'
"$opt" "$tmp/m.plir" --check-execution --check-tolerance 1,x 2> "$tmp/err"; rc=$?
check "a bad tolerance is a usage error" '[ $rc -eq 2 ] && grep -q "RTOL or RTOL,ATOL" "$tmp/err"'

# 2. --dump-ir-dir, with a repeat group (two iterations) and a function pass.
cat > "$tmp/p.yaml" <<YAML
version: 1
passes:
  - Normalize
  - repeat: {max_iterations: 2}
    passes: [TestSubtractViaAdd, CanonicalizeBindings]
  - DeadCodeElimination
YAML
"$opt" "$tmp/m.plir" --plugin "$planted" --pipeline "$tmp/p.yaml" --dump-ir-dir "$tmp/dump/a/b" -o "$tmp/d.plir"; rc=$?
ls "$tmp/dump/a/b" > "$tmp/list"
cat "$tmp/list"
printf '%s\n' 000_input.plir 001_Normalize.plir 002_TestSubtractViaAdd.plir 003_CanonicalizeBindings.plir \
  004_TestSubtractViaAdd.plir 005_CanonicalizeBindings.plir 006_DeadCodeElimination.plir > "$tmp/want"
check "--dump-ir-dir creates the directory and writes one file per application" '[ $rc -eq 0 ] && cmp -s "$tmp/list" "$tmp/want"'
check "000_input.plir is the input, the last file the output" \
  'cmp -s "$tmp/dump/a/b/000_input.plir" <("$opt" "$tmp/m.plir") && cmp -s "$tmp/dump/a/b/006_DeadCodeElimination.plir" "$tmp/d.plir"'
"$opt" "$tmp/m.plir" --passes Normalize --dump-ir-dir "$tmp/dump/a/b" -o /dev/null; rc=$?
check "a new dump replaces the old one's files" '[ $rc -eq 0 ] && [ "$(ls "$tmp/dump/a/b" | tr "\n" " ")" = "000_input.plir 001_Normalize.plir " ]'
touch "$tmp/afile"
"$opt" "$tmp/m.plir" --passes Normalize --dump-ir-dir "$tmp/afile" -o "$tmp/never.plir" 2> "$tmp/err"; rc=$?
check "a dump directory that cannot be made is an error" '[ $rc -eq 1 ] && grep -q "dump-ir-dir" "$tmp/err" && [ ! -e "$tmp/never.plir" ]'

# 3. --bisect-limit: 13 applications (the repeat group's 2 passes 3 times),
# the planted bug at the 10th.
cat > "$tmp/long.yaml" <<YAML
version: 1
passes:
  - Normalize
  - CanonicalizeBindings
  - repeat: {max_iterations: 3}
    passes: [DeadCodeElimination, CommonSubexpressionElimination]
  - FoldConstant
  - TestAddBecomesSubtract
  - CanonicalizeBindings
  - DeadCodeElimination
  - Normalize
YAML
"$opt" "$tmp/m.plir" --plugin "$planted" --pipeline "$tmp/long.yaml" --bisect-limit 0 -o "$tmp/none.plir" 2> "$tmp/err"; rc=$?
check "--bisect-limit 0 runs nothing and counts every application" \
  '[ $rc -eq 0 ] && [ "$(grep -c "^BISECT: NOT running pass" "$tmp/err")" = 13 ] && grep -q "^BISECT: 13 pass applications in total, 0 run" "$tmp/err" && cmp -s "$tmp/none.plir" <("$opt" "$tmp/m.plir")'
"$opt" "$tmp/m.plir" --plugin "$planted" --pipeline "$tmp/long.yaml" --bisect-limit 4 -o /dev/null 2> "$tmp/err"; rc=$?
check "--bisect-limit 4: applications 1-4 run (repeats counted), 5-13 do not" \
  '[ $rc -eq 0 ] && grep -q "^BISECT: running pass (4) CommonSubexpressionElimination" "$tmp/err" && grep -q "^BISECT: NOT running pass (5) DeadCodeElimination" "$tmp/err" && [ "$(grep -c "^BISECT: running" "$tmp/err")" = 4 ]'
# The bisection: the smallest N whose run fails the execution check.
fails() {
  ! "$opt" "$tmp/m.plir" --plugin "$planted" --pipeline "$tmp/long.yaml" --bisect-limit "$1" \
    --check-execution --no-reproducer -o /dev/null 2> /dev/null
}
total=$("$opt" "$tmp/m.plir" --plugin "$planted" --pipeline "$tmp/long.yaml" --bisect-limit 0 -o /dev/null 2>&1 |
  sed -n 's/^BISECT: \([0-9]*\) pass applications in total.*/\1/p')
lo=0 hi=$total steps=0
if fails "$hi" && ! fails "$lo"; then
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2)); steps=$((steps + 1))
    if fails "$mid"; then hi=$mid; else lo=$mid; fi
  done
fi
culprit=$("$opt" "$tmp/m.plir" --plugin "$planted" --pipeline "$tmp/long.yaml" --bisect-limit "$hi" -o /dev/null 2>&1 |
  sed -n "s/^BISECT: running pass ($hi) //p")
echo "bisection: $total applications, $steps steps, culprit ($hi) $culprit"
check "bisecting N with --check-execution finds the planted pass" '[ "$hi" = 10 ] && [ "$culprit" = TestAddBecomesSubtract ] && [ $steps -le 4 ]'
exit $fail
