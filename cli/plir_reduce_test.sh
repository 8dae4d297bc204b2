#!/usr/bin/env bash
# plir-reduce on a planted bug: a test plugin crashes on subtract(%x, %x),
# buried in one binding of one function among 40 functions of 30 bindings
# (with an if in each). The reduced module must still crash plir-opt the
# same way, and be tiny.
set -uo pipefail
opt="$1"
reduce="$2"
crashers="$PWD/testing/plugins/libplir_test_crashers.so"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export TMPDIR="$tmp"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

gen() {  # a module of 40 functions; @f27 holds the planted pattern
  echo '#[version = "1"]'
  for f in $(seq 0 39); do
    echo "def @f$f(%x: Tensor[(8), float32], %c: Tensor[(), bool]) -> Tensor[(8), float32] {"
    echo "  %v0 = add(%x, %x);"
    for i in $(seq 1 29); do
      p=$((i - 1))
      if [ "$f" = 27 ] && [ "$i" = 17 ]; then
        echo "  %v$i = subtract(%v$p, %v$p);"
      elif [ "$i" = 10 ]; then
        echo "  %v$i = if (%c) { %t = multiply(%v$p, %x); %t } else { %e = add(%v$p, %x); %e };"
      else
        echo "  %v$i = multiply(%v$p, %x);"
      fi
    done
    echo "  %v29"
    echo "}"
  done
}
gen > "$tmp/big.plir"
"$opt" "$tmp/big.plir" > /dev/null; rc=$?
check "the generated module is well-formed" '[ $rc -eq 0 ]'
"$opt" "$tmp/big.plir" --plugin "$crashers" --passes TestCrashOnSelfSubtract --no-reproducer > /dev/null 2> "$tmp/err"; rc=$?
check "the planted bug crashes plir-opt" '[ $rc -eq 1 ] && grep -q "killed by SIGSEGV.*TestCrashOnSelfSubtract" "$tmp/err"'

cp "$tmp/big.plir" "$tmp/big.copy"
"$reduce" "$tmp/big.plir" -o "$tmp/small.plir" --plir-opt "$opt" --plugin "$crashers" \
  --passes TestCrashOnSelfSubtract 2> "$tmp/reduce.err"; rc=$?
cat "$tmp/reduce.err"
check "plir-reduce succeeds" '[ $rc -eq 0 ]'
check "the input is unchanged" 'cmp -s "$tmp/big.plir" "$tmp/big.copy"'
check "one function is left" '[ "$(grep -c "^def " "$tmp/small.plir")" = 1 ]'
check "at most two bindings are left" '[ "$(grep -c " = " "$tmp/small.plir")" -le 2 ]'
check "the planted pattern is kept" 'grep -qE "subtract\(%[a-z0-9_]+, %[a-z0-9_]+\)" "$tmp/small.plir"'
"$opt" "$tmp/small.plir" --plugin "$crashers" --passes TestCrashOnSelfSubtract --no-reproducer > /dev/null 2> "$tmp/err"; rc=$?
check "the reduced module still crashes the same pass" '[ $rc -eq 1 ] && grep -q "killed by SIGSEGV.*TestCrashOnSelfSubtract" "$tmp/err"'
cat "$tmp/small.plir"

# --test: any interestingness command (exit 0 = interesting).
"$reduce" "$tmp/big.plir" -o "$tmp/small2.plir" --test "grep -q 'if (%c)'" 2> /dev/null; rc=$?
check "--test reduces to what the command keeps" \
  '[ $rc -eq 0 ] && grep -q "if (%c)" "$tmp/small2.plir" && [ "$(grep -c "^def " "$tmp/small2.plir")" = 1 ]'

# The pipeline too: of 10 steps, the failure needs two, in order:
# TestSubtractViaAdd makes add(a, negative(b)) of subtract(a, b), and only
# then does the planted TestAddBecomesSubtract (test_planted) find an add to
# break; --check-execution is the oracle (the module has no add at first).
planted="$PWD/testing/plugins/libplir_test_planted.so"
cat > "$tmp/chain.plir" <<'PLIR'
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %m = multiply(%x, %y);
  %d = subtract(%m, %y);
  %u = multiply(%d, %x);
  %k = multiply(%x, %x);
  %t = multiply(%u, %x);
  %t
}
PLIR
mkdir -p "$tmp/p"
cat > "$tmp/p/common.yaml" <<'YAML'
version: 1
passes: [CanonicalizeBindings]
YAML
cat > "$tmp/p/ten.yaml" <<'YAML'
version: 1
passes:
  - Normalize
  - TestAddBecomesSubtract
  - CanonicalizeBindings
  - TestSubtractViaAdd
  - DeadCodeElimination
  - repeat: {max_iterations: 2}
    passes: [FoldConstant, CanonicalizeBindings]
  - CommonSubexpressionElimination
  - TestAddBecomesSubtract
  - include: common.yaml
  - Normalize
YAML
"$opt" "$tmp/chain.plir" --plugin "$planted" --pipeline "$tmp/p/ten.yaml" --emit-pipeline > "$tmp/ten.canon"
check "the pipeline has 10 top-level steps" '[ "$(grep -c "^  - " "$tmp/ten.canon")" = 10 ]'
"$opt" "$tmp/chain.plir" --plugin "$planted" --passes TestAddBecomesSubtract --check-execution \
  --no-reproducer -o /dev/null 2> /dev/null; rc=$?
check "the planted pass alone does not fail" '[ $rc -eq 0 ]'
cp "$tmp/p/ten.yaml" "$tmp/ten.copy"
"$reduce" "$tmp/chain.plir" -o "$tmp/chain.small.plir" --plir-opt "$opt" --plugin "$planted" \
  --pipeline "$tmp/p/ten.yaml" --opt-arg=--check-execution 2> "$tmp/reduce.err"; rc=$?
cat "$tmp/reduce.err"
check "plir-reduce reduces the pipeline" \
  '[ $rc -eq 0 ] && grep -q "^plir-reduce: pipeline: 10 -> 2 steps (TestSubtractViaAdd, TestAddBecomesSubtract); written to $tmp/chain.small.plir.pipeline.yaml" "$tmp/reduce.err"'
check "the reduced pipeline YAML is the chain" \
  '[ "$(sed -n "s/^  - //p" "$tmp/chain.small.plir.pipeline.yaml" | tr "\n" " ")" = "TestSubtractViaAdd TestAddBecomesSubtract " ]'
check "the user's pipeline is unchanged" 'cmp -s "$tmp/p/ten.yaml" "$tmp/ten.copy"'
"$opt" "$tmp/chain.small.plir" --plugin "$planted" --pipeline "$tmp/chain.small.plir.pipeline.yaml" \
  --check-execution --no-reproducer -o /dev/null 2> "$tmp/err"; rc=$?
check "the reduced module and pipeline still fail the same way" \
  '[ $rc -eq 1 ] && grep -q "^plir-opt: --check-execution: pass TestAddBecomesSubtract (plugin test_planted) changed what @main computes" "$tmp/err"'
check "the module is reduced too" '[ "$(grep -c " = " "$tmp/chain.small.plir")" -lt 5 ]'
"$reduce" "$tmp/chain.plir" -o "$tmp/chain2.plir" --plir-opt "$opt" --plugin "$planted" \
  --passes Normalize,TestAddBecomesSubtract,TestSubtractViaAdd,DeadCodeElimination,TestAddBecomesSubtract \
  --opt-arg=--check-execution 2> "$tmp/reduce.err"; rc=$?
check "a --passes list is reduced too" \
  '[ $rc -eq 0 ] && grep -q "^plir-reduce: pipeline: 5 -> 2 passes: --passes TestSubtractViaAdd,TestAddBecomesSubtract" "$tmp/reduce.err"'

# Nothing to reduce: a clear error, no output.
"$reduce" "$tmp/big.plir" -o "$tmp/none.plir" --passes DeadCodeElimination --plir-opt "$opt" 2> "$tmp/err"; rc=$?
check "a module that does not fail is an error" '[ $rc -eq 1 ] && grep -q "does not fail" "$tmp/err" && [ ! -e "$tmp/none.plir" ]'
# Tests that hang: a per-test timeout, --pass-timeout passed to plir-opt, and
# SIGTERM cleans up the work directory and the running test.
start=$(date +%s%N)
"$reduce" "$tmp/big.plir" -o "$tmp/hang.plir" --test 'sleep 1000; true' --test-timeout 1 2> "$tmp/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--test-timeout ends a test that hangs (rc=$rc, ${ms} ms)" \
  '[ $rc -eq 1 ] && [ $ms -lt 10000 ] && grep -q "exit 124" "$tmp/err"'
start=$(date +%s%N)
"$reduce" "$tmp/big.plir" -o "$tmp/loop.plir" --plir-opt "$opt" --plugin "$crashers" --passes TestLoop \
  --pass-timeout 0.5 --max-tests 4 2> "$tmp/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--pass-timeout reaches plir-opt: a looping pass is reduced, not waited for (rc=$rc, ${ms} ms)" \
  '[ $rc -eq 0 ] && [ $ms -lt 30000 ] && [ -s "$tmp/loop.plir" ]'
mkdir -p "$tmp/redtmp"
# A sleep of its own (pgrep sees the whole machine, where other tests may
# sleep too).
nap="sleep 1000$$"
TMPDIR="$tmp/redtmp" "$reduce" "$tmp/big.plir" -o "$tmp/term.plir" --test "$nap; true" 2> /dev/null &
pid=$!
for _ in $(seq 100); do pgrep -f "$nap" > /dev/null && break; sleep 0.1; done
kill -TERM $pid; wait $pid; rc=$?
sleep 0.2
check "SIGTERM: plir-reduce ends (rc=$rc), its work directory goes" '[ $rc -eq 143 ] && [ -z "$(ls -A "$tmp/redtmp")" ]'
check "SIGTERM: the running test is killed" '! pgrep -f "$nap" > /dev/null'

{ echo '#[version = "1"]'; echo 'def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {'; echo '  %a0 = add(%x, %x);'
  for i in $(seq 1 8000); do echo "  %a$i = add(%a$((i-1)), %x);"; done; echo '  %a8000'; echo '}'; } > "$tmp/c8k.plir"
start=$(date +%s%N)
"$reduce" "$tmp/c8k.plir" -o "$tmp/c8k.small.plir" --test 'grep -q add' --max-tests 3 2> /dev/null; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "no candidate is built once --max-tests is spent (rc=$rc, ${ms} ms on 8,000 bindings; 7.9 s before)" \
  '[ $rc -eq 0 ] && [ $ms -lt 3000 ]'

exit $fail
