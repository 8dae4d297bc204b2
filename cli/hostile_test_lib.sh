# The checks that cli/sandbox_test.sh (plir-opt, through the pass Hostile)
# and cli/plir_run_sandbox_test.sh (plir-run, through the kernel of the op
# test.hostile) share: a plugin that means harm
# (testing/plugins/test_hostile.cc) is refused or fails the run cleanly in
# both tools the same way. Sourced, not run:
#
#   tool=plir-opt   # or plir-run: the prefix of the tool's messages
#   . "$PWD/cli/hostile_test_lib.sh"
#
# It sets up $tmp, $work, $scratch (the runs' TMPDIR, which must stay
# empty), $HOME, `check NAME CONDITION` (fail=1 on a failed check) and
# $asan. The sourcing test then defines, for its tool:
#
#   attack MODE EXPECTED-RC [FLAGS]  one run of the plugin in MODE
#                                    (attack_run) and the tool's own checks
#   hostile_cmd=(TOOL ...)           the command of such a run, without the
#                                    output file and the mode (an array: the
#                                    tool runs as the command, no subshell)
#   no_temporary_left                true iff no temporary or spool file is
#                                    left in $scratch or beside the output
#   good_run [FLAGS]                 a run without the hostile plugin, its
#                                    standard output to $work/good.out, its
#                                    standard error to $work/err
#   good_result                      true iff good_run's result is right
set -uo pipefail
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
work="$tmp/work"; mkdir -p "$work"
scratch="$tmp/scratch"  # TMPDIR of the runs: must stay empty
mkdir -p "$scratch"
export TMPDIR="$scratch"
[ -n "${HOME:-}" ] || { export HOME="$tmp/home"; mkdir -p "$HOME"; }
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
asan=0; [ -n "${ASAN_OPTIONS:-}" ] && asan=1

# Processes of a run carry its tag in their environment. The tag holds this
# test's process id: two tests running at once never see (or kill) each
# other's processes.
run_tag() { echo "$$.$1"; }
left_behind() {  # left_behind NAME: pids of processes tagged $(run_tag NAME)
  local p want="PLIR_HOSTILE_RUN=$(run_tag "$1")"
  for p in /proc/[0-9]*; do
    { tr '\0' '\n' < "$p/environ"; } 2> /dev/null | grep -qxF "$want" && echo "${p#/proc/}"
  done
}

# attack_run MODE EXPECTED-RC OUTPUT CMD...: runs CMD (the tool with the
# hostile plugin, writing OUTPUT, which holds OLD beforehand) with the
# plugin in MODE, tagged $(run_tag runN); standard output to $work/stdout,
# standard error to $work/err. Kills what the run left, then checks what
# holds whatever the mode: the exit status, the old output on a failure, no
# process and no temporary file left. Leaves rc for more checks. An empty
# EXPECTED-RC leaves the status and the output to the caller.
# ATTACK_TIMEOUT=S: a run that would hang is killed after S seconds.
n=0
attack_run() {
  local mode="$1" want="$2" out="$3"; shift 3
  n=$((n + 1))
  echo OLD > "$out"
  local wrap=() left
  [ -n "${ATTACK_TIMEOUT:-}" ] && wrap=(timeout -s KILL "$ATTACK_TIMEOUT")
  PLIR_HOSTILE_RUN=$(run_tag "run$n") PLIR_HOSTILE_MODE="$mode" "${wrap[@]}" "$@" \
    > "$work/stdout" 2> "$work/err"
  rc=$?
  sleep 0.1
  left=$(left_behind "run$n")
  [ -n "$left" ] && kill -KILL $left 2> /dev/null
  # An empty EXPECTED-RC: the caller checks the status and the output.
  if [ -n "$want" ]; then
    check "$mode: exit $want (rc=$rc)" '[ $rc -eq $want ]'
    [ "$want" -eq 0 ] || check "$mode: the old output is intact" '[ "$(cat "$out")" = OLD ]'
  fi
  check "$mode: no process left" '[ -z "$left" ]'
  check "$mode: nothing left in TMPDIR or beside the output" 'no_temporary_left'
}

# blocked MODE [FLAGS]: the attack is refused and the run is otherwise fine.
blocked() {
  local mode="$1"; shift
  attack "$mode" 0 "$@"
  check "$mode: the plugin was refused" 'grep -q "^hostile $mode: blocked" "$work/err"'
}

# file_attacks INPUT OUTPUT: nothing of the user's is written, created,
# removed, or read beyond what the run needs; --sandbox-read and
# --sandbox=off show that the checks are real.
file_attacks() {
  local input="$1" output="$2" victims="$tmp/victims"
  mkdir -p "$victims"
  echo "keep me" > "$victims/file.txt"
  cp "$victims/file.txt" "$victims/file.copy"
  PLIR_HOSTILE_TARGET="$input" blocked write-file
  PLIR_HOSTILE_TARGET="$input" blocked delete-file
  PLIR_HOSTILE_TARGET="$output" blocked write-file
  PLIR_HOSTILE_TARGET="$victims/file.txt" blocked write-file
  PLIR_HOSTILE_TARGET="$victims/file.txt" blocked delete-file
  check "the user's other file is intact" 'cmp -s "$victims/file.txt" "$victims/file.copy"'
  PLIR_HOSTILE_TARGET="$HOME/.plir_hostile_was_here" blocked write-file
  check "nothing written to \$HOME" '[ ! -e "$HOME/.plir_hostile_was_here" ]'
  PLIR_HOSTILE_TARGET="$scratch/planted" blocked write-file
  PLIR_HOSTILE_TARGET="$victims/newdir" blocked make-dir
  check "no directory made" '[ ! -e "$victims/newdir" ]'
  # Reading: only what the run needs (a secret beside the input is not).
  echo "secret" > "$work/secret.txt"
  PLIR_HOSTILE_TARGET="$work/secret.txt" blocked read-file
  PLIR_HOSTILE_TARGET="$victims/file.txt" attack read-file 0 --sandbox-read "$victims"
  check "read-file: --sandbox-read lets it read that directory" \
    'grep -q "^hostile read-file: succeeded" "$work/err"'
  # With --sandbox=off the same write gets through.
  PLIR_HOSTILE_TARGET="$victims/off.txt" attack write-file 0 --sandbox=off
  check "write-file with --sandbox=off writes (the check is real)" '[ "$(cat "$victims/off.txt")" = PWNED ]'
}

# daemon_case CAPTURED-PATTERN: $(TOOL ...) returns when the tool does, not
# when the daemon the plugin left would have ended (8 s).
daemon_case() {
  local pattern="$1" start ms out
  attack daemon 0
  start=$(date +%s%N)
  out=$(PLIR_HOSTILE_MODE=daemon "${hostile_cmd[@]}" 2> /dev/null)
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  check "daemon: \$($tool ...) returns at once (${ms} ms), not after the daemon's 8 s" '[ $ms -lt 4000 ]'
  check "daemon: and captures the result" 'echo "$out" | grep -q "$pattern"'
}

# spinner_case OUTPUT-FLAG OUTPUT: SIGTERM while a detached spinner runs;
# the spinner dies with the run, the old output stays.
spinner_case() {
  local flag="$1" out="$2" pid rc left
  echo OLD > "$out"
  PLIR_HOSTILE_RUN=$(run_tag spin) PLIR_HOSTILE_MODE=spinner "${hostile_cmd[@]}" "$flag" "$out" \
    > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do [ -n "$(left_behind spin | grep -v "^$pid\$")" ] && break; sleep 0.1; done
  sleep 0.3
  kill -TERM $pid; wait $pid; rc=$?
  sleep 0.3
  left=$(left_behind spin)
  check "spinner: SIGTERM ends the run (rc=$rc)" '[ $rc -eq 143 ]'
  check "spinner: no process left (setsid, PR_SET_PDEATHSIG reset)" '[ -z "$left" ]'
  [ -n "$left" ] && kill -KILL $left 2> /dev/null
  check "spinner: the old output and no temporary file" '[ "$(cat "$out")" = OLD ] && no_temporary_left'
}

# exit_hang_case WHERE: exit(3), then a static destructor that spins, with
# no --pass-timeout or --timeout: the supervisor bounds the exit phase
# (kExitGraceSeconds, 5 s) and names what ran (hostile round H3). WHERE is
# the end of the message ("in pass Hostile of plugin", "in the kernel of op
# test.hostile of plugin").
exit_hang_case() {
  local where="$1" start ms
  start=$(date +%s%N)
  ATTACK_TIMEOUT=60 attack exit-hang 1
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  check "exit-hang: the run ends after the exit grace (${ms} ms), not never" '[ $ms -lt 20000 ]'
  check "exit-hang: says exit(3) did not finish, names what ran and its plugin" \
    'grep -q "^$tool: the process called exit(3) and did not finish exiting within 5 s (.*) $where test_hostile 6.6.6 (.*libplir_test_hostile.so)$" "$work/err"'
}

# sandbox_mode_cases: --sandbox=require where the kernel has Landlock and
# seccomp; where it lacks Landlock, require fails and auto warns once;
# require with --no-isolate is refused.
sandbox_mode_cases() {
  local rc
  good_run --sandbox=require; rc=$?
  check "--sandbox=require on this kernel (rc=$rc)" '[ $rc -eq 0 ] && good_result'
  PLIR_SANDBOX_PROBE=no-landlock good_run --sandbox=require; rc=$?
  check "--sandbox=require without Landlock: exit 1, said why (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "^$tool: --sandbox=require: this kernel lacks Landlock" "$work/err"'
  PLIR_SANDBOX_PROBE=no-landlock good_run; rc=$?
  check "--sandbox=auto without Landlock: one warning, and the run (rc=$rc)" \
    '[ $rc -eq 0 ] && good_result && [ "$(grep -c "^warning: this kernel lacks Landlock" "$work/err")" = 1 ]'
  good_run --sandbox=require --no-isolate; rc=$?
  check "--sandbox=require --no-isolate is refused" '[ $rc -eq 1 ] && grep -q "needs the supervised child" "$work/err"'
}
