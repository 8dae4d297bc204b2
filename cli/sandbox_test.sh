#!/usr/bin/env bash
# plir-opt against a plugin that means harm (testing/plugins/test_hostile.cc,
# one attack per PLIR_HOSTILE_MODE), inside the sandbox (driver/sandbox.h)
# and the supervisor's checks. Every attack is blocked or the run fails
# cleanly: the output is the right module or the old file, the input
# and the user's other files are intact, standard output holds nothing the
# plugin wrote, no process is left, and $TMPDIR is empty afterwards.
# Also: every tool fails when its standard output cannot be written.
set -uo pipefail
opt="$1"; run="$2"; diff_tool="$3"; reduce="$4"
hostile="$PWD/testing/plugins/libplir_test_hostile.so"
noop="$PWD/testing/plugins/libplir_test_noop.so"
tool=plir-opt
. "$PWD/cli/hostile_test_lib.sh"

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

hostile_cmd=("$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile --no-reproducer)
no_temporary_left() {
  [ -z "$(ls -A "$scratch")" ] && [ -z "$(ls "$work" | grep ".plir.tmp")" ]
}
good_run() { "$opt" "$work/in.plir" -o "$work/good.out" "$@" 2> "$work/err"; }
good_result() { cmp -s "$work/good.out" "$work/ref.plir"; }
# attack MODE EXPECTED-RC [plir-opt flags]: runs the pass Hostile in MODE
# with -o out.plir (attack_run), and checks the output, the input and
# standard output. Leaves rc, $work/err, $work/stdout for more checks.
attack() {
  local mode="$1" want="$2"; shift 2
  attack_run "$mode" "$want" "$work/out.plir" \
    "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile -o "$work/out.plir" --no-reproducer "$@"
  [ "$want" -ne 0 ] || check "$mode: the output is the right module" 'cmp -s "$work/out.plir" "$work/ref.plir"'
  check "$mode: the input is intact" 'cmp -s "$work/in.plir" "$work/in.copy"'
  check "$mode: nothing on standard output" '[ ! -s "$work/stdout" ]'
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

exit_hang_case "in pass Hostile of plugin"

# A thread that overwrites the child's result file once the child is writing
# it (hostile round S11): the supervisor kills the tree and seals the file
# before it reads it, then loads and verifies it. Whether or not the junk
# landed in time, the output is the right module or the old file, never a
# corrupted one.
for i in 1 2 3; do
  attack_run corrupt-result "" "$work/out.plir" \
    "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile -o "$work/out.plir" --no-reproducer
  check "corrupt-result #$i: the attack ran" 'grep -q "^hostile corrupt-result: succeeded" "$work/err"'
  check "corrupt-result #$i: the right module (rc 0) or the old output (rc 1), never junk (rc=$rc)" \
    '{ [ $rc -eq 0 ] && cmp -s "$work/out.plir" "$work/ref.plir"; } || { [ $rc -eq 1 ] && [ "$(cat "$work/out.plir")" = OLD ]; }'
  check "corrupt-result #$i: the input is intact, standard output empty" \
    'cmp -s "$work/in.plir" "$work/in.copy" && [ ! -s "$work/stdout" ]'
done

# --- The process tree.

daemon_case "^def @main"

# A daemon started by the plugin's static constructor, during --list-passes.
start=$(date +%s%N)
PLIR_HOSTILE_RUN=$(run_tag ctor) PLIR_HOSTILE_MODE=daemon-at-load "$opt" --list-passes --plugin "$hostile" 2> /dev/null | wc -l > /dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "daemon-at-load: --list-passes | wc returns at once (${ms} ms)" '[ $ms -lt 4000 ]'
check "daemon-at-load: no process left" '[ -z "$(left_behind ctor)" ]'

attack stop-self 1 --pass-timeout 30
check "stop-self: a stopped child is noticed and ended" \
  'grep -q "stopped by SIGSTOP (Stopped (signal)) (and then killed) in pass Hostile" "$work/err"'

# SIGTERM while a detached spinner runs: the spinner dies with the run.
spinner_case -o "$work/sig.plir"

# --- The sandbox: the file system, the network, the supervisor, privileges.

file_attacks "$work/in.plir" "$work/out.plir"

# The network: a listener on 127.0.0.1 must receive nothing.
if command -v python3 > /dev/null; then
  sockdir=$(mktemp -d /tmp/plir-sock.XXXXXX)  # a Unix socket's path has at most 107 bytes
  python3 - "$tmp/port" "$tmp/received" "$sockdir/unix.sock" <<'PY' &
import socket, sys, os, select
tcp = socket.socket(); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0)); tcp.listen(8)
unix = socket.socket(socket.AF_UNIX); unix.bind(sys.argv[3]); unix.listen(8)
open(sys.argv[1], "w").write(str(tcp.getsockname()[1]))
got = b""
while True:
    r, _, _ = select.select([tcp, unix], [], [], 60)
    if not r: break
    c, _ = r[0].accept(); c.settimeout(2)
    try: got += b"<connection>" + c.recv(100)
    except OSError: pass
    open(sys.argv[2], "wb").write(got)
PY
  listener=$!
  for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  PLIR_HOSTILE_PORT=$(cat "$tmp/port") blocked tcp-connect
  blocked udp-send
  PLIR_HOSTILE_TARGET="$sockdir/unix.sock" blocked unix-connect
  sleep 0.3
  check "the listeners received nothing" '[ ! -s "$tmp/received" ]'
  # The same attack without the sandbox gets through (the test can see it).
  PLIR_HOSTILE_PORT=$(cat "$tmp/port") attack tcp-connect 0 --sandbox=off
  sleep 0.3
  check "tcp-connect with --sandbox=off reaches the listener (the check is real)" \
    'grep -q "exfiltrated" "$tmp/received"'
  kill $listener 2> /dev/null; wait $listener 2> /dev/null
  rm -rf "$sockdir"
else
  echo "SKIP: network attacks need python3 for the listener"
fi

# The supervisor: its memory, its process, its limits.
blocked read-parent-mem
blocked write-parent-mem
blocked ptrace-parent
blocked vm-read-parent
blocked kill-parent
blocked stop-parent
blocked tkill-parent
blocked kill-parent-group
blocked lower-parent-rlimit
# Privileges, other programs, the terminal.
blocked exec
blocked tiocsti
blocked setsid
if [ $asan -eq 0 ]; then
  blocked raise-rlimit --memory-limit 400
fi

# --sandbox=require, --sandbox=auto where the kernel lacks Landlock.
sandbox_mode_cases
"$opt" "$work/in.plir" --passes DeadCodeElimination -o "$work/req.plir" 2> "$work/err"; rc=$?
check "--sandbox=auto with Landlock: no warning" '[ $rc -eq 0 ] && [ ! -s "$work/err" ]'

# --- The supervisor's own limits.
attack evade-timeout 1 --pass-timeout 1 --timeout 3
check "evade-timeout: --pass-timeout evaded, --timeout (the supervisor's) ends it" \
  'grep -q "time limit exceeded (--timeout 3 s) in pass Hostile" "$work/err"'
start=$(date +%s%N)
PLIR_HOSTILE_MODE=hang-at-load PLIR_HOSTILE_RUN=$(run_tag hang) "$opt" "$work/in.plir" --plugin "$hostile" --passes Hostile \
  --load-timeout 1 -o "$work/out.plir" > /dev/null 2> "$work/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "hang-at-load: a constructor that never returns is ended by --load-timeout (rc=$rc, ${ms} ms)" \
  '[ $rc -eq 1 ] && [ $ms -lt 5000 ] && grep -q "time limit exceeded (--load-timeout 1 s) while loading plugin .*libplir_test_hostile.so" "$work/err"'
check "hang-at-load: no process left" '[ -z "$(left_behind hang)" ]'
for bad in nan inf -1 1e400 abc; do
  "$opt" "$work/in.plir" --pass-timeout "$bad" > /dev/null 2> "$work/err"; rc=$?
  check "--pass-timeout $bad is a usage error (rc=$rc)" '[ $rc -eq 2 ]'
  "$opt" "$work/in.plir" --timeout "$bad" > /dev/null 2> "$work/err"; rc=$?
  check "--timeout $bad is a usage error (rc=$rc)" '[ $rc -eq 2 ]'
done

# --- The shared page: the supervisor reads every field bounded, and never
# opens a path it read there. A reproducer is attempted (into its own
# directory) so that the page's plugin list and prefixes are read.
forge() {  # forge MODE: the plugin forges the page, then crashes
  local mode="$1"
  n=$((n + 1))
  rm -rf "$work/bundles"; mkdir -p "$work/bundles"
  echo OLD > "$work/out.plir"
  local start; start=$(date +%s%N)
  PLIR_HOSTILE_RUN=$(run_tag "run$n") PLIR_HOSTILE_MODE="$mode" timeout 60 \
    "$opt" "$work/in.plir" --plugin "$hostile" --passes DeadCodeElimination,Hostile \
    --reproducer-dir "$work/bundles" -o "$work/out.plir" > "$work/stdout" 2> "$work/err"
  rc=$?
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  check "$mode: exit 1 within seconds, the supervisor intact (rc=$rc, ${ms} ms)" '[ $rc -eq 1 ] && [ $ms -lt 10000 ]'
  check "$mode: the old output is intact" '[ "$(cat "$work/out.plir")" = OLD ]'
  check "$mode: no raw control byte reaches standard error" '! LC_ALL=C grep -q "[[:cntrl:]]" <(tr -d "\n\t" < "$work/err")'
  check "$mode: no process left" '[ -z "$(left_behind "run$n")" ]'
  check "$mode: nothing left in TMPDIR" '[ -z "$(ls -A "$scratch")" ]'
}
forge forge-plugins
check "forge-plugins: /dev/zero was not hashed; the bundle lists it unhashed" \
  'grep -q "path: /dev/zero" "$work"/bundles/*/reproducer.yaml && grep -A3 "path: /dev/zero" "$work"/bundles/*/reproducer.yaml | grep -q "sha256: \"\""'
forge forge-prefixes
check "forge-prefixes: no bundle from prefixes that do not fit the page" '[ -z "$(ls -A "$work/bundles")" ]'
forge forge-unterminated
check "forge-unterminated: the message is bounded" '[ "$(wc -c < "$work/err")" -lt 20000 ]'
forge forge-blame
check "forge-blame: the child's claim is reported as the child's (it may lie)" \
  'grep -q "killed by SIGSEGV" "$work/err"'

# --- Trust: names, ownership, ancestors, reproducers.

# A plugin that registers a bundled plugin's pass name is refused, naming both files.
PLIR_HOSTILE_MODE=impostor "$opt" "$work/in.plir" --plugin "$hostile" --passes FoldConstant \
  -o "$work/o.plir" 2> "$work/err"; rc=$?
check "impostor via --plugin: exit 1, both files named (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "libplir_test_hostile.so: duplicate pass name FoldConstant: already registered by plugin fold_constant .*libplir_fold_constant.so" "$work/err"'
# The same file found on the search path, sorted before the bundled plugins.
mkdir -p "$work/aaa" && chmod 755 "$work/aaa" && cp "$hostile" "$work/aaa/libplir_my_tools.so"
PLIR_HOSTILE_MODE=impostor PLIR_PLUGIN_PATH="$work/aaa" "$opt" "$work/in.plir" --passes FoldConstant \
  -o "$work/o.plir" 2> "$work/err"; rc=$?
"$opt" "$work/in.plir" --passes FoldConstant > "$work/fc.plir" 2> /dev/null
check "impostor on the search path: the bundled FoldConstant runs (rc=$rc)" '[ $rc -eq 0 ] && cmp -s "$work/o.plir" "$work/fc.plir"'
PLIR_HOSTILE_MODE=impostor PLIR_PLUGIN_PATH="$work/aaa" "$opt" "$work/in.plir" --passes Hostile,FoldConstant \
  -o "$work/o.plir" 2> "$work/err"; rc=$?
check "impostor on the search path, found by a scan: refused and said so (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "libplir_my_tools.so: duplicate pass name FoldConstant: already registered by plugin fold_constant" "$work/err"'
PLIR_HOSTILE_MODE=impostor PLIR_PLUGIN_PATH="$work/aaa" "$opt" --list-passes > "$work/list" 2> "$work/err"
check "impostor: --list-passes shows the real FoldConstant and names the refused file" \
  '! grep -q "not the real one" "$work/list" && grep -q "^FoldConstant  \[plugin fold_constant\]" "$work/list" && grep -q "duplicate pass name FoldConstant" "$work/err"'

# Ownership and every ancestor directory (OpenSSH's StrictModes).
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
  mkdir -p "$work/sticky" && chmod 1777 "$work/sticky"
  cp "$hostile" "$work/sticky/libplir_other.so" && chown nobody "$work/sticky/libplir_other.so" && chmod 755 "$work/sticky/libplir_other.so"
  "$opt" "$work/in.plir" --plugin "$work/sticky/libplir_other.so" --passes Hostile > /dev/null 2> "$work/err"; rc=$?
  check "a plugin owned by another user (in a sticky directory) is refused (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "refusing plugin .*libplir_other.so: the file is owned by uid $(id -u nobody), neither root nor you" "$work/err"'
  cp "$hostile" "$work/sticky/libplir_mine.so" && chmod 755 "$work/sticky/libplir_mine.so"
  "$opt" "$work/in.plir" --plugin "$work/sticky/libplir_mine.so" --passes Hostile > /dev/null 2> "$work/err"; rc=$?
  check "a plugin of one's own in a sticky world-writable directory loads (rc=$rc)" '[ $rc -eq 0 ]'
  mkdir -p "$work/owned/sub" && chmod 755 "$work/owned" "$work/owned/sub" && chown nobody "$work/owned"
  cp "$hostile" "$work/owned/sub/libplir_x.so" && chmod 755 "$work/owned/sub/libplir_x.so"
  "$opt" "$work/in.plir" --plugin "$work/owned/sub/libplir_x.so" --passes Hostile > /dev/null 2> "$work/err"; rc=$?
  check "a plugin below a directory owned by another user is refused (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "its directory .*/owned is owned by uid" "$work/err"'
else
  echo "SKIP: the ownership checks need root (to chown to nobody)"
fi
mkdir -p "$work/ww/sub" && chmod 777 "$work/ww" && chmod 755 "$work/ww/sub"
cp "$hostile" "$work/ww/sub/libplir_x.so" && chmod 755 "$work/ww/sub/libplir_x.so"
"$opt" "$work/in.plir" --plugin "$work/ww/sub/libplir_x.so" --passes Hostile > /dev/null 2> "$work/err"; rc=$?
check "a plugin below a world-writable (not sticky) ancestor is refused (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "its directory .*/ww is writable by group or others" "$work/err"'
"$opt" "$work/in.plir" --plugin "$work/ww/sub/libplir_x.so" --passes Hostile --allow-insecure-plugins > /dev/null 2> "$work/err"; rc=$?
check "--allow-insecure-plugins loads it (rc=$rc)" '[ $rc -eq 0 ]'
chmod 755 "$work/ww"

# Reproducers: plugin paths resolve against the bundle; a changed plugin is refused.
mkdir -p "$work/rep" && chmod 755 "$work/rep"
cp "$hostile" "$work/rep/libplir_test_hostile.so"
PLIR_HOSTILE_MODE=segfault "$opt" "$work/in.plir" --plugin "$work/rep/libplir_test_hostile.so" --passes Hostile \
  --reproducer-dir "$work/rep" > /dev/null 2> "$work/err"
bundle=$(sed -n 's/^plir-opt: reproducer written to //p' "$work/err")
check "a crash leaves a bundle" '[ -n "$bundle" ] && [ -f "$bundle/reproducer.yaml" ]'
if [ -n "$bundle" ]; then
  cp "$hostile" "$bundle/libplir_test_hostile.so"
  sed -i "s|path: .*libplir_test_hostile.so|path: libplir_test_hostile.so|" "$bundle/reproducer.yaml"
  mkdir -p "$work/elsewhere" && cp "$work/in.plir" "$work/elsewhere/libplir_test_hostile.so"
  opt_abs=$(cd "$(dirname "$opt")" && pwd)/$(basename "$opt")
  (cd "$work/elsewhere" && PLIR_HOSTILE_MODE=segfault "$opt_abs" --reproduce "$bundle" > /dev/null 2> "$work/err"); rc=$?
  check "--reproduce resolves a relative plugin path against the bundle, not the directory (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "killed by SIGSEGV.*in pass Hostile" "$work/err"'
  cp "$noop" "$bundle/libplir_test_hostile.so"
  PLIR_HOSTILE_MODE=segfault "$opt" --reproduce "$bundle" > /dev/null 2> "$work/err"; rc=$?
  check "--reproduce refuses a plugin whose sha256 changed (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "changed since the reproducer was written" "$work/err"'
  PLIR_HOSTILE_MODE=segfault "$opt" --reproduce "$bundle" --allow-changed-plugins > /dev/null 2> "$work/err"; rc=$?
  check "--allow-changed-plugins replays it anyway, with a warning (rc=$rc)" \
    'grep -q "warning: plugin .* changed since the reproducer was written" "$work/err"'
fi

# --- The same attacks on the supervisor as an unprivileged user, where a
# same-uid child was once able to read and write the supervisor's memory.
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the unprivileged-user attacks need root to switch to nobody (running as $(id -un))"
elif ! command -v setpriv > /dev/null || ! id nobody > /dev/null 2>&1; then
  echo "SKIP: the unprivileged-user attacks need setpriv (util-linux) and a user nobody"
else
  # The test's own tree is root's (0700 above it): copies in a fresh
  # world-readable directory, removed at the end.
  pub=$(mktemp -d /tmp/plir-sandbox-test.XXXXXX)
  trap 'rm -rf "$pub"' EXIT
  chmod 755 "$pub"
  mkdir -p "$pub/bin" "$pub/tmp"
  cp "$opt" "$pub/bin/plir-opt"
  cp "$hostile" "$pub/libplir_test_hostile.so"
  cp "$work/in.plir" "$pub/in.plir"
  chmod -R a+rX "$pub"
  chown nobody "$pub/tmp"
  as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env TMPDIR="$pub/tmp" "$@"; }
  for mode in read-parent-mem write-parent-mem ptrace-parent vm-read-parent kill-parent stop-parent; do
    PLIR_HOSTILE_MODE=$mode as_nobody "$pub/bin/plir-opt" "$pub/in.plir" --plugin "$pub/libplir_test_hostile.so" \
      --passes Hostile --no-reproducer > "$work/nb.plir" 2> "$work/err"; rc=$?
    check "as nobody, $mode: blocked, and the run is fine (rc=$rc)" \
      '[ $rc -eq 0 ] && grep -q "^hostile $mode: blocked" "$work/err" && cmp -s "$work/nb.plir" "$work/ref.plir"'
  done
  check "as nobody: nothing left in TMPDIR" '[ -z "$(ls -A "$pub/tmp")" ]'
  rm -rf "$pub"
  trap - EXIT
fi

# --- The output file: SIGKILL leaves no temporary file (O_TMPFILE), and
# root keeps another user's ownership.
{
  echo '#[version = "1"]'
  echo 'def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {'
  echo '  %a0 = add(%x, %x);'
  for i in $(seq 1 60000); do echo "  %a$i = add(%a$((i - 1)), %x);"; done
  echo '  %a60000'
  echo '}'
} > "$work/big.plir"
"$opt" "$work/big.plir" -o "$work/big.ref" 2> /dev/null
# The output has no name until Commit() links it in and renames it at once;
# a kill between those two calls (a window of two system calls) leaves
# killed.plir.tmp.PID.X, which the next write of killed.plir removes.
left_tmp=0
torn=0
for delay in 0.05 0.1 0.15 0.2 0.25 0.3 0.35 0.4 0.5 0.6; do
  echo OLD > "$work/killed.plir"
  "$opt" "$work/big.plir" -o "$work/killed.plir" 2> /dev/null &
  pid=$!
  sleep $delay
  kill -KILL $pid 2> /dev/null; wait $pid 2> /dev/null
  ls "$work" | grep -q "killed.plir.tmp" && left_tmp=$((left_tmp + 1))
  [ "$(cat "$work/killed.plir")" = OLD ] || cmp -s "$work/killed.plir" "$work/big.ref" || torn=$((torn + 1))
done
check "SIGKILL at 10 moments: the output old or whole, never torn ($torn torn)" '[ $torn -eq 0 ]'
# A temporary file left by a dead process is what a kill in the window
# leaves; plant one as well, so that the sweep is tested on every run.
( exit 0 ) &
dead=$!
wait $dead
echo partial > "$work/killed.plir.tmp.$dead.aB3xYz"
"$opt" "$work/big.plir" -o "$work/killed.plir" 2> /dev/null
check "the next write removes what the kills left ($left_tmp of 10 runs left one) and a dead process's temporary file" \
  '! ls "$work" | grep -q "killed.plir.tmp" && cmp -s "$work/killed.plir" "$work/big.ref"'
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
  echo OLD > "$work/owned.plir" && chown nobody:nogroup "$work/owned.plir" && chmod 640 "$work/owned.plir"
  "$opt" "$work/in.plir" -o "$work/owned.plir" 2> /dev/null
  check "root replacing nobody's output keeps its owner, group and mode" \
    '[ "$(stat -c "%U:%G %a" "$work/owned.plir")" = "nobody:nogroup 640" ] && cmp -s "$work/owned.plir" "$work/ref.plir"'
fi

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
# --- --max-input-bytes on every tool.
"$diff_tool" "$work/in.plir" "$work/in.plir" --max-input-bytes 10 2> "$work/err"; rc=$?
check "plir-diff --max-input-bytes (rc=$rc)" '[ $rc -eq 2 ] && grep -q "larger than the limit of 10 bytes" "$work/err"'
"$run" "$work/in.plir" --inputs ones --max-input-bytes 10 > /dev/null 2> "$work/err"; rc=$?
check "plir-run --max-input-bytes (rc=$rc)" '[ $rc -eq 1 ] && grep -q "larger than the limit of 10 bytes" "$work/err"'
"$reduce" "$work/in.plir" --test true --max-input-bytes 10 > /dev/null 2> "$work/err"; rc=$?
check "plir-reduce --max-input-bytes (rc=$rc)" '[ $rc -eq 1 ] && grep -q "larger than the limit of 10 bytes" "$work/err"'

check "TMPDIR is empty at the end" '[ -z "$(ls -A "$scratch")" ]'

exit $fail
