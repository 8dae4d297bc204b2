#!/usr/bin/env bash
# plir-opt against a plugin that means harm (testing/plugins/test_hostile.cc,
# one attack per PLIR_HOSTILE_MODE). Every attack is blocked or the run
# fails cleanly: the output is the right module or the old file, the input
# and the user's other files are intact, standard output holds nothing the
# plugin wrote, no process is left, and $TMPDIR is empty afterwards.
# Also: every tool fails when its standard output cannot be written.
set -uo pipefail
opt="$1"; run="$2"; diff_tool="$3"; reduce="$4"
hostile="$PWD/testing/plugins/libplir_test_hostile.so"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
work="$tmp/work"; mkdir -p "$work"
scratch="$tmp/scratch"  # TMPDIR of the runs: must stay empty
mkdir -p "$scratch"
export TMPDIR="$scratch"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

cat > "$work/in.plir" <<'PLIR'
#[version = "1"]
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %a = add(%x, %x);
  %b = subtract(%a, %a);
  %b
}
PLIR
cp "$work/in.plir" "$work/in.copy"
"$opt" "$work/in.plir" > "$work/ref.plir" || { echo "FAIL: reference run"; exit 1; }

# Processes of a run carry its tag in their environment.
left_behind() {  # left_behind TAG: pids of processes whose environment has it
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' '\n' < "$p/environ"; } 2> /dev/null | grep -qx "PLIR_HOSTILE_RUN=$1" && echo "${p#/proc/}"
  done
}
n=0
# attack MODE EXPECTED-RC [plir-opt flags]: runs the pass Hostile in MODE
# with -o out.plir (holding OLD beforehand) and checks what must hold
# whatever the mode. Leaves rc, $work/err, $work/stdout for more checks.
attack() {
  local mode="$1" want="$2"; shift 2
  n=$((n + 1))
  echo "OLD" > "$work/out.plir"
  PLIR_HOSTILE_RUN="run$n" PLIR_HOSTILE_MODE="$mode" \
    "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile -o "$work/out.plir" --no-reproducer "$@" \
    > "$work/stdout" 2> "$work/err"
  rc=$?
  sleep 0.1
  local left; left=$(left_behind "run$n")
  [ -n "$left" ] && kill -KILL $left 2> /dev/null
  check "$mode: exit $want (rc=$rc)" '[ $rc -eq $want ]'
  if [ "$want" -eq 0 ]; then
    check "$mode: the output is the right module" 'cmp -s "$work/out.plir" "$work/ref.plir"'
  else
    check "$mode: the old output is intact" '[ "$(cat "$work/out.plir")" = OLD ]'
  fi
  check "$mode: the input is intact" 'cmp -s "$work/in.plir" "$work/in.copy"'
  check "$mode: nothing on standard output" '[ ! -s "$work/stdout" ]'
  check "$mode: no process left" '[ -z "$left" ]'
  check "$mode: nothing left in TMPDIR or beside the output" \
    '[ -z "$(ls -A "$scratch")" ] && [ -z "$(ls "$work" | grep "out.plir.tmp")" ]'
}

# --- The output: the child never writes it; the parent checks what it hands over.

attack stdout 0
check "stdout: the plugin's printf goes to standard error" 'grep -q "GARBAGE FROM PLUGIN" "$work/err"'
# To standard output, too: only the module.
PLIR_HOSTILE_MODE=stdout "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile > "$work/so.plir" 2> /dev/null
check "stdout: plir-opt > file holds only the module" 'cmp -s "$work/so.plir" "$work/ref.plir"'
PLIR_HOSTILE_MODE=stdout "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile --emit binary > "$work/so.plirb" 2> /dev/null
"$opt" "$work/so.plirb" > "$work/back.plir" 2> "$work/err"
check "stdout: --emit binary to standard output reads back" 'cmp -s "$work/back.plir" "$work/ref.plir"'

attack write-fds 0
check "write-fds: no descriptor of the user's reached the plugin" \
  '! grep -q "INJECTED" "$work/out.plir" "$work/stdout"'

attack grandchild-write 0
sleep 2  # past the grandchild's wake-up, had it survived
check "grandchild-write: the output stays the right module" 'cmp -s "$work/out.plir" "$work/ref.plir"'

attack fake-finish 1
check "fake-finish: named as a missing result" 'grep -q "plir-opt: the child.s result" "$work/err"'

attack bad-result 1
check "bad-result: a result that does not load fails the run" \
  'grep -q "plir-opt: the child.s result does not load" "$work/err"'

attack segfault 1
check "segfault: named" 'grep -q "killed by SIGSEGV.*in pass Hostile of plugin test_hostile" "$work/err"'

# --- The process tree.

attack daemon 0
start=$(date +%s%N)
out=$(PLIR_HOSTILE_MODE=daemon "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile 2> /dev/null)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "daemon: \$(plir-opt ...) returns at once (${ms} ms), not after the daemon's 8 s" '[ $ms -lt 4000 ]'
check "daemon: and captures the module" '[ "$out" = "$(cat "$work/ref.plir")" ]'

# A daemon started by the plugin's static constructor, during --list-passes.
start=$(date +%s%N)
PLIR_HOSTILE_RUN=ctor PLIR_HOSTILE_MODE=daemon-at-load "$opt" --list-passes --plugin "$hostile" 2> /dev/null | wc -l > /dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "daemon-at-load: --list-passes | wc returns at once (${ms} ms)" '[ $ms -lt 4000 ]'
check "daemon-at-load: no process left" '[ -z "$(left_behind ctor)" ]'

attack stop-self 1 --pass-timeout 30
check "stop-self: a stopped child is noticed and ended" \
  'grep -q "stopped by SIGSTOP (Stopped (signal)) (and then killed) in pass Hostile" "$work/err"'

# SIGTERM while a detached spinner runs: the spinner dies with the run.
echo OLD > "$work/sig.plir"
PLIR_HOSTILE_RUN=spin PLIR_HOSTILE_MODE=spinner "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile \
  --no-reproducer -o "$work/sig.plir" 2> /dev/null &
pid=$!
for _ in $(seq 50); do [ -n "$(left_behind spin | grep -v "^$pid\$")" ] && break; sleep 0.1; done
sleep 0.3
kill -TERM $pid; wait $pid; rc=$?
sleep 0.3
left=$(left_behind spin)
check "spinner: SIGTERM ends the run (rc=$rc)" '[ $rc -eq 143 ]'
check "spinner: no process left (setsid, PR_SET_PDEATHSIG reset)" '[ -z "$left" ]'
[ -n "$left" ] && kill -KILL $left 2> /dev/null
check "spinner: the old output and no temporary file" \
  '[ "$(cat "$work/sig.plir")" = OLD ] && [ -z "$(ls "$work" | grep "sig.plir.tmp")" ]'

# --- Standard output that cannot be written is an error, in every tool.
"$opt" "$work/in.plir" >&- 2> "$work/err"; rc=$?
check "plir-opt >&-: exit 1 naming standard output (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "error writing standard output" "$work/err"'
"$opt" "$work/in.plir" -o "$work/o.plir" >&- 2> "$work/err"; rc=$?
check "plir-opt -o FILE >&-: fine, nothing goes to standard output" '[ $rc -eq 0 ] && cmp -s "$work/o.plir" "$work/ref.plir"'
if [ -w /dev/full ]; then
  for args in "$work/in.plir" "--list-passes" "--list-ops" "--emit-pipeline --passes DeadCodeElimination"; do
    # shellcheck disable=SC2086
    "$opt" $args > /dev/full 2> "$work/err"; rc=$?
    check "plir-opt $args > /dev/full: exit 1 (rc=$rc)" \
      '[ $rc -eq 1 ] && grep -q "error writing standard output: No space left on device" "$work/err"'
  done
  "$diff_tool" "$work/in.plir" "$work/ref.plir" > /dev/full 2> "$work/err"; rc=$?
  check "plir-diff (equal) > /dev/full: exit 0, nothing to write (rc=$rc)" '[ $rc -eq 0 ]'
  printf '#[version = "1"]\n' > "$work/empty.plir"
  "$diff_tool" "$work/in.plir" "$work/empty.plir" > /dev/full 2> "$work/err"; rc=$?
  check "plir-diff (different) > /dev/full: exit 2 (rc=$rc)" \
    '[ $rc -eq 2 ] && grep -q "error writing standard output" "$work/err"'
  "$reduce" "$work/in.plir" --test 'grep -q subtract "$1"' > /dev/full 2> "$work/err"; rc=$?
  check "plir-reduce > /dev/full: exit 1 (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "error writing standard output" "$work/err"'
  cat > "$work/run.plir" <<'PLIR'
#[version = "1"]
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %a = add(%x, %x);
  %a
}
PLIR
  "$run" "$work/run.plir" --inputs ones > /dev/full 2> "$work/err"; rc=$?
  check "plir-run > /dev/full: exit 1 (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "error writing standard output" "$work/err"'
  "$run" "$work/run.plir" --inputs ones >&- 2> "$work/err"; rc=$?
  check "plir-run >&-: exit 1 (rc=$rc)" '[ $rc -eq 1 ] && grep -q "error writing standard output" "$work/err"'
fi
check "TMPDIR is empty at the end" '[ -z "$(ls -A "$scratch")" ]'

exit $fail
