#!/usr/bin/env bash
# plir-run with plugins: they load, and their kernels run, only in the
# supervised, sandboxed child (driver/supervised_child.h), as in plir-opt.
# A good plugin gives byte for byte what the in-process run (--no-isolate)
# gives; a kernel that crashes, aborts, calls exit(), loops or hogs memory
# is named (op and plugin) with exit 1; a plugin that means harm
# (testing/plugins/test_hostile.cc, its op test.hostile) is refused or
# fails the run cleanly. Whatever happens: the --save-outputs file is the
# right one or the old one, the user's files are intact, standard output
# holds only the results, no temporary file and no process is left.
#   plir_run_sandbox_test.sh PLIR_RUN
set -uo pipefail
run="$1"
kernels="$PWD/testing/plugins/libplir_test_kernels.so"
crashers="$PWD/testing/plugins/libplir_test_crashers.so"
hostile="$PWD/testing/plugins/libplir_test_hostile.so"
tool=plir-run
. "$PWD/cli/hostile_test_lib.sh"
# The results without the process's peak RSS (which differs run to run)
# and the name of the outputs file.
results() { grep -v "^peak RSS (getrusage): " "$1" | sed "s/ written to .*/ written to FILE/"; }
# Nothing but the expected files beside the outputs, nothing in TMPDIR.
clean() {
  [ -z "$(ls -A "$scratch")" ] && [ -z "$(ls -A "$work" | grep -e "\.tmp" -e "plir-spool")" ]
}
no_temporary_left() { clean; }

# --- A good plugin: the same results, byte for byte, as in this process.
cat > "$work/k.plir" <<'PLIR'
extern @test_negate(%a: Tensor[(3,), float32]) -> Tensor[(3,), float32]
def @main(%x: Tensor[(3,), float32], %w: Tensor[(3,), float32]) -> (Tensor[(3,), float32], Tensor[(3,), float32]) {
  %a = test.square(%x);
  %b = call_tir(@test_negate, (%a,), sinfo_args=[Tensor[(3,), float32]]);
  %c = add(%b, %w);
  (%a, %c)
}
PLIR
printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40' > "$work/w.bin"  # 1, 2, 3 (float32)
good=(--inputs random:7 "file:$work/w.bin" --plugin "$kernels")
"$run" "$work/k.plir" "${good[@]}" --no-isolate > "$work/here.txt" 2> "$work/err"; rc=$?
check "in-process reference run (rc=$rc)" '[ $rc -eq 0 ] && grep -q "tuple of 2" "$work/here.txt"'
cp "$work/here.txt" "$work/printed.txt"
"$run" "$work/k.plir" "${good[@]}" > "$work/sup.txt" 2> "$work/err"; rc=$?
check "supervised: the same printed results (rc=$rc)" \
  '[ $rc -eq 0 ] && diff <(results "$work/here.txt") <(results "$work/sup.txt") && [ ! -s "$work/err" ]'
"$run" "$work/k.plir" "${good[@]}" --no-isolate --save-outputs "$work/here.st" > "$work/here.txt" 2> /dev/null
"$run" "$work/k.plir" "${good[@]}" --save-outputs "$work/sup.st" > "$work/sup.txt" 2> "$work/err"; rc=$?
check "supervised: --save-outputs byte-identical (rc=$rc)" \
  '[ $rc -eq 0 ] && [ -s "$work/sup.st" ] && cmp "$work/here.st" "$work/sup.st" && diff <(results "$work/here.txt") <(results "$work/sup.txt")'
check "supervised: the outputs file's mode is the in-process one" \
  '[ "$(stat -c %a "$work/sup.st")" = "$(stat -c %a "$work/here.st")" ]'
# The outputs as weights of the next run (--params, read in the sandbox).
cat > "$work/p.plir" <<'PLIR'
def @main(%p0: Tensor[(3,), float32], %p1: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
  %a = test.square(%p1);
  add(%a, %p0)
}
PLIR
"$run" "$work/p.plir" --params "$work/sup.st" --plugin "$kernels" --no-isolate > "$work/here.txt" 2> /dev/null
"$run" "$work/p.plir" --params "$work/sup.st" --plugin "$kernels" > "$work/sup.txt" 2> "$work/err"; rc=$?
check "supervised: --params read in the sandbox, the same results (rc=$rc)" \
  '[ $rc -eq 0 ] && grep -q "read 2 parameters from" "$work/err" && diff <(results "$work/here.txt") <(results "$work/sup.txt")'
# The module from standard input: the parent copies it for the child.
"$run" - "${good[@]}" < "$work/k.plir" > "$work/stdin.txt" 2> "$work/err"; rc=$?
check "supervised: the module from standard input (rc=$rc)" \
  '[ $rc -eq 0 ] && diff <(results "$work/printed.txt") <(results "$work/stdin.txt")'
# A limit without a plugin uses the supervisor too; the results are the same.
printf 'def @main(%%x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {\n  add(%%x, %%x)\n}\n' > "$work/core.plir"
"$run" "$work/core.plir" --inputs random:1 --save-outputs "$work/core1.st" > "$work/core1.txt" 2> /dev/null
"$run" "$work/core.plir" --inputs random:1 --save-outputs "$work/core2.st" --timeout 60 > "$work/core2.txt" 2> "$work/err"; rc=$?
check "no plugin, --timeout: the same results (rc=$rc)" \
  '[ $rc -eq 0 ] && cmp "$work/core1.st" "$work/core2.st" && diff <(results "$work/core1.txt") <(results "$work/core2.txt")'
check "the good runs left nothing behind" 'clean'

# --- Kernels that take the child down: named, exit 1, nothing written.
kernel_case() {  # kernel_case OP EXPECTED-REASON [flags]
  local op="$1" reason="$2"; shift 2
  printf 'def @main(%%x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {\n  %%a = add(%%x, %%x);\n  %%b = %s(%%a);\n  %%b\n}\n' "$op" > "$work/$op.plir"
  echo OLD > "$work/out.st"
  "$run" "$work/$op.plir" --inputs ones --plugin "$crashers" --save-outputs "$work/out.st" "$@" \
    > "$work/stdout" 2> "$work/err"; local rc=$?
  check "$op: exit 1 (rc=$rc)" '[ $rc -eq 1 ]'
  check "$op: says what ended it, and names the op and its plugin" \
    'grep -qE "^plir-run: $reason in the kernel of op $op of plugin test_crashers 1.2.3 \(.*libplir_test_crashers.so\)$" "$work/err"'
  check "$op: the old output is intact" '[ "$(cat "$work/out.st")" = OLD ]'
  check "$op: nothing on standard output" '[ ! -s "$work/stdout" ]'
  check "$op: no temporary file left" 'clean'
}
kernel_case test.crash_kernel "killed by SIGSEGV \(Segmentation fault\)"
kernel_case test.abort_kernel "killed by SIGABRT \(Aborted\)"
kernel_case test.exit_kernel "the process exited with status 0 \(exit\(\) called from plugin code\?\)"
kernel_case test.loop_kernel "time limit exceeded \(--timeout 1 s\)" --timeout 1
if [ $asan -eq 0 ]; then  # AddressSanitizer reserves terabytes of address space
  kernel_case test.hog_kernel "out of memory \(--memory-limit 256 MB\)" --memory-limit 256
fi

# --- A plugin that means harm, through its op's kernel.
printf 'def @main(%%x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {\n  %%a = add(%%x, %%x);\n  %%b = test.hostile(%%a);\n  %%b\n}\n' > "$work/h.plir"
cp "$work/h.plir" "$work/h.copy"
"$run" "$work/h.plir" --inputs ones --plugin "$hostile" --no-isolate --save-outputs "$work/ref.st" > "$work/ref.txt" 2> /dev/null
check "hostile plugin, no attack: the reference run" '[ -s "$work/ref.st" ]'
# attack MODE EXPECTED-RC [flags]: runs test.hostile's kernel in MODE with
# --save-outputs out.st (attack_run), and checks the outputs, standard
# output and the module. Leaves rc, $work/err, $work/stdout for more checks.
attack() {
  local mode="$1" want="$2"; shift 2
  attack_run "$mode" "$want" "$work/out.st" \
    "$run" "$work/h.plir" --inputs ones --plugin "$hostile" --save-outputs "$work/out.st" "$@"
  if [ "$want" -eq 0 ]; then
    check "$mode: the outputs are the right ones" 'cmp -s "$work/out.st" "$work/ref.st"'
    check "$mode: standard output holds the results only" \
      'diff <(results "$work/ref.txt") <(results "$work/stdout") > /dev/null'
  else
    check "$mode: nothing on standard output" '[ ! -s "$work/stdout" ]'
  fi
  check "$mode: the module is intact" 'cmp -s "$work/h.plir" "$work/h.copy"'
}
hostile_cmd=("$run" "$work/h.plir" --inputs ones --plugin "$hostile")
good_run() { "$run" "$work/k.plir" "${good[@]}" "$@" > "$work/good.out" 2> "$work/err"; }
good_result() { diff <(results "$work/printed.txt") <(results "$work/good.out") > /dev/null; }

attack segfault 1
check "segfault: named" \
  'grep -q "^plir-run: killed by SIGSEGV (Segmentation fault) in the kernel of op test.hostile of plugin test_hostile 6.6.6 (.*libplir_test_hostile.so)$" "$work/err"'
exit_hang_case "in the kernel of op test.hostile of plugin"

# The user's files: nothing written, created, removed, or read beyond the run's.
file_attacks "$work/h.plir" "$work/out.st"

# The output: the child never holds it; the parent checks what it hands over.
attack stdout 0
check "stdout: the plugin's printf goes to standard error" \
  'grep -q "GARBAGE FROM PLUGIN" "$work/err" && ! grep -q "GARBAGE" "$work/stdout"'
attack write-fds 0
check "write-fds: no descriptor of the user's reached the plugin" \
  '! grep -q "INJECTED" "$work/out.st" "$work/stdout"'
PLIR_HOSTILE_TARGET="$work/out.st" attack grandchild-write 0
sleep 2  # past the grandchild's wake-up, had it survived
check "grandchild-write: the outputs stay the right ones" 'cmp -s "$work/out.st" "$work/ref.st"'
attack fake-finish 1
check "fake-finish: named as a missing result" 'grep -q "^plir-run: the child.s result" "$work/err"'
attack bad-result 1
check "bad-result: a result of the wrong kind fails the run" 'grep -q "^plir-run: the child handed over a result of the wrong kind" "$work/err"'

# The network and the supervisor.
blocked tcp-connect
check "tcp-connect: refused by the sandbox, not by a closed port" \
  'grep -q "^hostile tcp-connect: blocked (\(Operation not permitted\|Permission denied\)" "$work/err"'
blocked udp-send
blocked read-parent-mem
blocked ptrace-parent
blocked kill-parent
blocked stop-parent
blocked kill-parent-group
blocked exec
blocked setsid
if [ $asan -eq 0 ]; then
  blocked raise-rlimit --memory-limit 400
fi

# The process tree.
daemon_case "^result:"
attack stop-self 1
check "stop-self: a stopped child is noticed, ended and named" \
  'grep -q "^plir-run: stopped by SIGSTOP (Stopped (signal)) (and then killed) in the kernel of op test.hostile of plugin test_hostile 6.6.6" "$work/err"'
attack evade-timeout 1 --timeout 3
check "evade-timeout: --timeout (the supervisor's own) ends it, named" \
  'grep -q "^plir-run: time limit exceeded (--timeout 3 s) in the kernel of op test.hostile of plugin test_hostile" "$work/err"'
attack forge-unterminated 1
check "forge-unterminated: the message is bounded, no raw control byte" \
  '[ "$(wc -c < "$work/err")" -lt 20000 ] && ! LC_ALL=C grep -q "[[:cntrl:]]" <(tr -d "\n\t" < "$work/err")'
start=$(date +%s%N)
attack hang-at-load 1 --load-timeout 1
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "hang-at-load: ended by --load-timeout (${ms} ms), the plugin named" \
  '[ $ms -lt 5000 ] && grep -q "^plir-run: time limit exceeded (--load-timeout 1 s) while loading plugin .*libplir_test_hostile.so" "$work/err"'
attack daemon-at-load 0

# SIGTERM while a detached spinner runs: the spinner dies with the run.
spinner_case --save-outputs "$work/sig.st"

# --- The sandbox's modes.
sandbox_mode_cases

# --- Numeric flags: ranges checked, NaN a usage error.
for flag in --timeout --load-timeout; do
  for bad in nan inf -1 1e400 abc; do
    "$run" "$work/k.plir" "${good[@]}" "$flag" "$bad" > /dev/null 2>&1; rc=$?
    check "$flag $bad is a usage error (rc=$rc)" '[ $rc -eq 2 ]'
  done
done
for bad in nan 1 abc; do
  "$run" "$work/k.plir" "${good[@]}" --memory-limit "$bad" > /dev/null 2>&1; rc=$?
  check "--memory-limit $bad is a usage error (rc=$rc)" '[ $rc -eq 2 ]'
done
"$run" "$work/k.plir" "${good[@]}" --max-output-bytes 0 > /dev/null 2>&1; rc=$?
check "--max-output-bytes 0 is a usage error (rc=$rc)" '[ $rc -eq 2 ]'
echo OLD > "$work/out.st"
"$run" "$work/k.plir" "${good[@]}" --max-output-bytes 10 --save-outputs "$work/out.st" > "$work/stdout" 2> "$work/err"; rc=$?
check "--max-output-bytes 10: exit 1, the old output intact (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "more than the limit of 10 (--max-output-bytes)" "$work/err" && [ "$(cat "$work/out.st")" = OLD ] && [ ! -s "$work/stdout" ]'

check "TMPDIR and the work directory hold nothing left over at the end" 'clean'
exit $fail
