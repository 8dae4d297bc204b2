#!/usr/bin/env bash
# Hostile inputs against the command-line tools, by class: files that are
# not regular files, endless and oversized inputs, out-of-range numbers on
# the command line, YAML that attacks the loader (alias bombs, duplicate
# keys, tags, huge integers, empty files), and control bytes in messages.
# Every case: a clean message, a non-zero exit, no crash, no hang, no
# output file.
set -uo pipefail
opt="$1"; run="$2"; diff="$3"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
# (Failures are also recorded in a file: some checks run in pipelines' subshells.)
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; touch "$tmp/failed"; else echo "ok: $1"; fi; }
rm -f "$tmp/failed"
clean() {  # clean RC ERRFILE: exit 1 or 2, a message, no sanitizer report or signal
  [ "$1" -eq 1 -o "$1" -eq 2 ] && [ -s "$2" ] && ! grep -qE "AddressSanitizer|runtime error|Segmentation|core dumped" "$2"
}
model=examples/spec/conv2d.plir
source testing/fifo.sh
mkdir -p "$tmp/dir"

# Inputs that are not regular files, for every file option.
for bad in "$tmp/dir" /dev/zero /dev/urandom /dev/null; do
  timeout 20 "$opt" "$bad" -o "$tmp/out.plir" 2> "$tmp/err"; rc=$?
  [ "$bad" = /dev/null ] && want="not a well-formed\|empty\|expected\|device" || want="directory\|device"
  check "plir-opt input $bad (rc=$rc)" 'clean $rc "$tmp/err" && grep -q "$want" "$tmp/err" && [ ! -e "$tmp/out.plir" ]'
  timeout 20 "$opt" "$model" --pipeline "$bad" 2> "$tmp/err"; rc=$?
  check "plir-opt --pipeline $bad (rc=$rc)" 'clean $rc "$tmp/err"'
  printf 'version: 1\npasses: [DeadCodeElimination]\n' > "$tmp/p.yaml"
  timeout 20 "$opt" "$model" --pipeline "$tmp/p.yaml" --extend "$bad" 2> "$tmp/err"; rc=$?
  check "plir-opt --extend $bad (rc=$rc)" 'clean $rc "$tmp/err"'
  printf 'version: 1\npasses:\n  - include: %s\n' "$bad" > "$tmp/inc.yaml"
  timeout 20 "$opt" "$model" --pipeline "$tmp/inc.yaml" 2> "$tmp/err"; rc=$?
  check "YAML include of $bad (rc=$rc)" 'clean $rc "$tmp/err" && grep -q "inc.yaml:3:" "$tmp/err"'
  timeout 20 "$diff" "$model" "$bad" > /dev/null 2> "$tmp/err"; rc=$?
  check "plir-diff $bad (rc=$rc)" '[ $rc -ne 0 ] && ! grep -qE "AddressSanitizer|Segmentation" "$tmp/err"'
  timeout 20 "$run" examples/models/mlp_with_constants.plir --inputs "file:$bad" > /dev/null 2> "$tmp/err"; rc=$?
  check "plir-run --inputs file:$bad (rc=$rc)" 'clean $rc "$tmp/err"'
done

# Endless and oversized inputs: the cap stops them.
timeout 60 bash -c "yes 'def' | '$opt' - --max-input-bytes 1000000" > /dev/null 2> "$tmp/err"; rc=$?
check "an endless pipe stops at --max-input-bytes (rc=$rc)" 'clean $rc "$tmp/err" && grep -q "larger than the limit of 1000000 bytes" "$tmp/err"'
head -c 2000000 /dev/zero > "$tmp/big.plir"
"$opt" "$tmp/big.plir" --max-input-bytes 1000000 2> "$tmp/err"; rc=$?
check "an oversized file is refused before reading (rc=$rc)" 'clean $rc "$tmp/err" && grep -q "larger than the limit" "$tmp/err"'

# Numbers on the command line are range-checked.
for args in "--threads 0" "--threads 99999999999999999999" "--opt-level 9" "--pass-timeout -1" \
            "--memory-limit 1" "--max-input-bytes 0" "--threads abc"; do
  "$opt" "$model" $args > /dev/null 2> "$tmp/err"; rc=$?
  check "plir-opt $args is a usage error (rc=$rc)" '[ $rc -eq 2 ] && [ -s "$tmp/err" ]'
done
"$opt" "$model" --print-after NoSuchPass > /dev/null 2> "$tmp/err"; rc=$?
check "--print-after is validated like YAML" '[ $rc -eq 1 ] && grep -q "unknown pass .NoSuchPass." "$tmp/err"'

# YAML attacks.
yaml_case() {  # yaml_case NAME EXPECTED-MESSAGE (YAML on stdin)
  cat > "$tmp/y.yaml"
  want="$2"
  local start=$(date +%s)
  timeout 30 "$opt" "$model" --pipeline "$tmp/y.yaml" > /dev/null 2> "$tmp/err"; local rc=$?
  local secs=$(( $(date +%s) - start ))
  check "YAML $1 (rc=$rc, ${secs}s)" 'clean $rc "$tmp/err" && grep -q "$want" "$tmp/err" && [ $secs -lt 10 ]'
}
{
  echo "version: 1"
  echo "a0: &a0 [DeadCodeElimination, DeadCodeElimination, DeadCodeElimination, DeadCodeElimination]"
  for i in $(seq 1 12); do echo "a$i: &a$i [*a$((i-1)), *a$((i-1)), *a$((i-1)), *a$((i-1))]"; done
  echo "passes: *a12"
} | yaml_case "alias bomb fails fast, with a position" "y.yaml:[0-9]*:[0-9]*: the document has more than 100000 nodes"
printf 'version: 1\npasses: [DeadCodeElimination]\npasses: [FoldConstant]\n' | yaml_case "duplicate key" "y.yaml:3:1: duplicate key 'passes'"
printf 'version: 1\npasses: !!python/object:os.system [DeadCodeElimination]\n' | yaml_case "unknown tag" "unsupported YAML tag"
printf 'version: 1\nopt_level: 99999999999999999999999\npasses: []\n' | yaml_case "integer overflow" "y.yaml:2:12: integer out of range"
printf '' | yaml_case "empty file gets line 1" "y.yaml:1:1: "
{
  echo "version: 1"
  printf 'passes:\n'
  ind=""
  for i in $(seq 1 80); do printf '%s  - repeat: {max_iterations: 1}\n%s    passes:\n' "$ind" "$ind"; ind="$ind    "; done
  printf '%s  - DeadCodeElimination\n' "$ind"
} | yaml_case "deep nesting" "nested more than 64 levels deep"
{
  echo "version: 1"
  printf 'passes: ['
  for i in $(seq 1 12000); do printf 'DeadCodeElimination, '; done
  printf 'DeadCodeElimination]\n'
} | yaml_case "too many steps" "more than 10000 steps"

# plir-run: declared tensor sizes are checked before anything is allocated.
printf '#[version = "1"]\ndef @main(%%x: Tensor[(1000000, 1000000), float32]) -> Tensor[(1000000, 1000000), float32] {\n  %%y = add(%%x, %%x);\n  %%y\n}\n' > "$tmp/huge_in.plir"
timeout 20 "$run" "$tmp/huge_in.plir" --inputs zeros > /dev/null 2> "$tmp/err"; rc=$?
check "plir-run: a huge declared input is refused before allocation (rc=$rc)" 'clean $rc "$tmp/err" && grep -q "exceeds the limit" "$tmp/err"'
printf '#[version = "1"]\ndef @main(%%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {\n  %%y = zeros(shape=[1024, 1024], dtype="float32");\n  %%x\n}\n' > "$tmp/big_op.plir"
timeout 20 "$run" "$tmp/big_op.plir" --inputs zeros --max-tensor-bytes 1000000 > /dev/null 2> "$tmp/err"; rc=$?
check "plir-run: an op result over --max-tensor-bytes is refused, naming the binding (rc=$rc)" \
  'clean $rc "$tmp/err" && grep -q "binding %y: the result of zeros" "$tmp/err"'
timeout 20 "$run" "$tmp/big_op.plir" --inputs zeros > /dev/null 2> "$tmp/err"; rc=$?
check "plir-run: under the default cap it runs" '[ $rc -eq 0 ]'
for args in "--inputs random:abc" "--max-tensor-bytes 0" "--inputs random:99999999999999999999999"; do
  timeout 20 "$run" "$tmp/big_op.plir" $args > /dev/null 2> "$tmp/err"; rc=$?
  check "plir-run $args is a clean error (rc=$rc)" 'clean $rc "$tmp/err"'
done

# Control bytes never reach the terminal raw.
printf 'def @f() {\n  %%a\x1b[31m = 1;\n}\n' > "$tmp/ctl.plir"
"$opt" "$tmp/ctl.plir" 2> "$tmp/err"; rc=$?
check "control bytes in the input are escaped in errors" 'clean $rc "$tmp/err" && ! grep -q $'"'"'\x1b'"'"' "$tmp/err"'
"$opt" "$model" --passes $'Dead\x1b[2JCode' 2> "$tmp/err"; rc=$?
check "control bytes in a pass name are escaped" 'clean $rc "$tmp/err" && ! grep -q $'"'"'\x1b'"'"' "$tmp/err" && grep -q "x1b" "$tmp/err"'
printf 'version: 1\npasses: ["Dead\\e[2JCode"]\n' > "$tmp/ctl.yaml"
"$opt" "$model" --pipeline "$tmp/ctl.yaml" 2> "$tmp/err"; rc=$?
check "control bytes in YAML are escaped" 'clean $rc "$tmp/err" && ! grep -q $'"'"'\x1b'"'"' "$tmp/err"'
[ -e "$tmp/failed" ] && fail=1
# Threads that cannot be created (hostile round L3/L4: --threads 300 under a
# 300 MB address-space cap leaves no room for 300 stacks) mean fewer threads,
# not std::terminate (SIGABRT before): the run either gives the same output
# as one thread, or, when the stacks it did create leave too little room to
# parse, fails cleanly naming the limit. AddressSanitizer reserves terabytes
# of address space, so not under it.
if [ -z "${ASAN_OPTIONS:-}" ]; then
  awk 'BEGIN { print "#[version = \"1\"]";
    for (f = 0; f < 300; f++) {
      printf "def @f%d(%%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n", f;
      for (i = 0; i < 200; i++) printf "  %%a%d = add(%%x, %%x);\n", i;
      print "  %a199\n}\n" } }' > "$tmp/many.plir"
  "$opt" "$tmp/many.plir" --threads 1 -o "$tmp/many1.plir"
  for t in 64 300; do
    rm -f "$tmp/many_t.plir"
    "$opt" "$tmp/many.plir" --threads $t --memory-limit 300 -o "$tmp/many_t.plir" 2> "$tmp/err"; rc=$?
    check "--threads $t --memory-limit 300: no crash; the same output or a clean out-of-memory error (rc=$rc)" \
      '! grep -qE "terminate|SIGABRT|Aborted" "$tmp/err" &&
       { { [ $rc -eq 0 ] && cmp -s "$tmp/many1.plir" "$tmp/many_t.plir"; } ||
         { [ $rc -eq 1 ] && grep -q "out of memory (--memory-limit 300 MB)" "$tmp/err" && [ ! -e "$tmp/many_t.plir" ]; }; }'
  done
fi

# Pipeline limits and bundle values have the command line's ranges (hostile
# round Y4/Y5, T7-T11): a positioned error, exit 1, nothing written.
printf 'version: 1\npasses: [DeadCodeElimination]\nlimits: {pass_timeout: 1e-300}\n' > "$tmp/tiny.yaml"
rm -f "$tmp/out.plir"
"$opt" "$model" --pipeline "$tmp/tiny.yaml" -o "$tmp/out.plir" 2> "$tmp/err"; rc=$?
check "limits.pass_timeout 1e-300: positioned error (rc=$rc)" \
  'clean $rc "$tmp/err" && grep -q "tiny.yaml:3:24: pass_timeout must be a number of seconds from 0.001" "$tmp/err" && [ ! -e "$tmp/out.plir" ]'
"$opt" "$model" --pipeline "$tmp/tiny.yaml" --emit-pipeline > "$tmp/emitted" 2> "$tmp/err"; rc=$?
check "limits.pass_timeout 1e-300: not echoed by --emit-pipeline (rc=$rc)" '[ $rc -eq 1 ] && ! grep -q "1e-300" "$tmp/emitted"'
mkdir -p "$tmp/bundle"
cp "$model" "$tmp/bundle/input.plir"
printf 'version: 1\npasses: [DeadCodeElimination]\n' > "$tmp/bundle/pipeline.yaml"
for kv in "threads: 100000:4:10" "memory_limit: 9007199254740992:4:15" "memory_limit: -5:4:15" \
          "opt_level: 99:4:12" "pass_timeout: 1e300:4:15" "plugins: [{name: x}]:4:11" "plugins: 5:4:10"; do
  v="${kv%:*:*}"; pos="${kv#"$v"}"
  printf 'version: 1\ninput: input.plir\npipeline: pipeline.yaml\n%s\n' "$v" > "$tmp/bundle/reproducer.yaml"
  rm -f "$tmp/out.plir"
  "$opt" --reproduce "$tmp/bundle" -o "$tmp/out.plir" 2> "$tmp/err"; rc=$?
  check "reproducer.yaml '$v': positioned error (rc=$rc)" \
    'clean $rc "$tmp/err" && grep -q "bundle/reproducer.yaml$pos: " "$tmp/err" && [ ! -e "$tmp/out.plir" ]'
done

# Standard input larger than the memory plir-opt may have (hostile round
# L7): a message naming what was read, not std::bad_alloc. AddressSanitizer
# reserves terabytes of address space, so not under it.
if [ -z "${ASAN_OPTIONS:-}" ]; then
  yes def | prlimit --as=600000000 "$opt" - -o "$tmp/out.plir" 2> "$tmp/err"; rc=$?
  check "standard input past an address-space limit: a clean message (rc=$rc)" \
    'clean $rc "$tmp/err" && grep -qE "standard input: out of memory after [0-9]+ bytes; --max-input-bytes caps it" "$tmp/err" && ! grep -q "bad_alloc" "$tmp/err" && [ ! -e "$tmp/out.plir" ]'
fi

# Text the format does not have (F1, F2, F5, F6): exit 1 with file:line:col,
# nothing written, the input unchanged.
text_case() {  # text_case NAME FILE EXPECTED-MESSAGE
  tc_in="$2"; tc_want="$3"
  cp "$tc_in" "$tmp/before"
  rm -f "$tmp/tc_out.json"
  timeout 20 "$opt" "$tc_in" -o "$tmp/tc_out.json" 2> "$tmp/err"; rc=$?
  check "$1 (rc=$rc)" '[ $rc -eq 1 ] && clean $rc "$tmp/err" && grep -q "$tc_want" "$tmp/err" &&
    [ ! -e "$tmp/tc_out.json" ] && cmp -s "$tc_in" "$tmp/before"'
}
tr '\n' '\r' < "$model" > "$tmp/cr.plir"
text_case "CR-only line endings" "$tmp/cr.plir" "cr.plir:1:[0-9]*: carriage return without a line feed"
sed 's/$/\r/' "$model" > "$tmp/crlf.plir"
"$opt" "$tmp/crlf.plir" -o "$tmp/crlf_out.plir" 2> "$tmp/err"; rc=$?
"$opt" "$model" -o "$tmp/lf_out.plir" 2> /dev/null
check "CRLF line endings read as LF (rc=$rc)" '[ $rc -eq 0 ] && cmp -s "$tmp/crlf_out.plir" "$tmp/lf_out.plir"'
printf 'def @f(%%x: Object) {\n  call_packed("\\xed\\xa0\\x80\\xff", %%x, sinfo_args=[Object])\n}\n' > "$tmp/u8.plir"
text_case "string that is not UTF-8" "$tmp/u8.plir" "u8.plir:2:15: string is not valid UTF-8"
printf 'def @f\xff\xfe(%%x: Object) {\n  %%x\n}\n' > "$tmp/name.plir"
text_case "invalid UTF-8 in a name" "$tmp/name.plir" 'name.plir:1:7: unexpected byte 0xff'
check "  ... escaped in the excerpt" '! LC_ALL=C grep -q $'"'"'\xff'"'"' "$tmp/err" && grep -qF "@f\\xff\\xfe(" "$tmp/err"'
{ printf '\xef\xbb\xbf'; cat "$model"; } > "$tmp/bom.plir"
text_case "a UTF-8 byte order mark" "$tmp/bom.plir" "bom.plir:1:1: the file starts with a UTF-8 byte order mark"
truncate -s 300M "$tmp/nul.plir"
start=$(date +%s%N)
text_case "300 MB of NUL bytes" "$tmp/nul.plir" "nul.plir:1:1: unexpected byte 0x00"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "  ... the message has a short excerpt ($(wc -c < "$tmp/err") bytes, $ms ms)" '[ $(wc -c < "$tmp/err") -lt 1000 ]'
rm -f "$tmp/nul.plir" "$tmp/before"

# -o a FIFO that nobody reads: refused at once, not a hang after the run
# (hostile round O10); with a reader it is written, like a device.
mkfifo "$tmp/out.fifo"
start=$(date +%s%N)
timeout 20 "$opt" "$model" -o "$tmp/out.fifo" 2> "$tmp/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "plir-opt -o FIFO without a reader: exit 1 at once (rc=$rc, ${ms} ms)" \
  '[ $rc -eq 1 ] && grep -q "out.fifo: is a FIFO that no process has open for reading" "$tmp/err" && [ $ms -lt 5000 ]'
write_to_fifo "$tmp/out.fifo" "$tmp/from_fifo" "$tmp/err" timeout 20 "$opt" "$model" -o "$tmp/out.fifo"
check "plir-opt -o FIFO with a reader: written (rc=$rc)" '[ $rc -eq 0 ] && grep -q "^def @" "$tmp/from_fifo"'
rm -f "$tmp/out.fifo" "$tmp/from_fifo"


# -o with output that is not a module (hostile round O4): the pipeline or
# the pass list goes to the file, not silently nowhere.
rm -f "$tmp/o4.yaml" "$tmp/o4.txt"
"$opt" --emit-pipeline --passes DeadCodeElimination -o "$tmp/o4.yaml" > "$tmp/stdout" 2> "$tmp/err"; rc=$?
check "--emit-pipeline -o FILE writes the pipeline there (rc=$rc)" \
  '[ $rc -eq 0 ] && grep -q "^  - DeadCodeElimination" "$tmp/o4.yaml" && [ ! -s "$tmp/stdout" ]'
"$opt" --list-passes -o "$tmp/o4.txt" > "$tmp/stdout" 2> "$tmp/err"; rc=$?
check "--list-passes -o FILE writes the list there (rc=$rc)" \
  '[ $rc -eq 0 ] && grep -q "^DeadCodeElimination " "$tmp/o4.txt" && [ ! -s "$tmp/stdout" ]'

# max_iterations past int32 (hostile round Y3): refused with a position, not
# cut to 1 by a cast before the range check.
for v in 4294967297 -4294967295 2147483648; do
  printf 'version: 1\npasses:\n  - repeat: {max_iterations: %s}\n    passes: [DeadCodeElimination]\n' "$v" > "$tmp/y3.yaml"
  "$opt" "$model" --pipeline "$tmp/y3.yaml" -o "$tmp/y3.plir" 2> "$tmp/err"; rc=$?
  check "max_iterations: $v is refused with its position (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "y3.yaml:3:30: max_iterations must be between 1 and 1000" "$tmp/err" && [ ! -e "$tmp/y3.plir" ]'
done

# Memory limits too low to start (hostile rounds Y6, L2): "out of memory
# (--memory-limit N MB)", never "internal error: Resource temporarily
# unavailable". AddressSanitizer reserves terabytes: not under it.
if [ -z "${ASAN_OPTIONS:-}" ]; then
  printf 'version: 1\nlimits: {memory_limit: 16}\npasses: [DeadCodeElimination]\n' > "$tmp/y6.yaml"
  "$opt" "$model" --pipeline "$tmp/y6.yaml" -o "$tmp/y6.plir" 2> "$tmp/err"; rc=$?
  check "limits: {memory_limit: 16}: out of memory, named (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "^plir-opt: out of memory (--memory-limit 16 MB)" "$tmp/err" && ! grep -q "internal error" "$tmp/err"'
  for mb in 16 24; do
    "$opt" "$model" --memory-limit $mb -o "$tmp/l2.plir" 2> "$tmp/err"; rc=$?
    check "--memory-limit $mb: out of memory, named (rc=$rc)" \
      '[ $rc -eq 1 ] && grep -q "^plir-opt: out of memory (--memory-limit $mb MB)" "$tmp/err" && ! grep -q "internal error\|Resource temporarily" "$tmp/err"'
  done
fi

# Threads that cannot be created mean fewer threads, not an abort
# (hostile rounds L4-L6): an address-space cap with --threads 300, isolated
# and not; RLIMIT_NPROC as an unprivileged user.
{ echo '#[version = "1"]'
  for i in $(seq 2000); do
    printf 'def @f%d(%%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n  %%a = add(%%x, %%x);\n  %%a\n}\n' "$i"
  done; } > "$tmp/many.plir"
"$opt" "$tmp/many.plir" > "$tmp/many.ref" 2> /dev/null
if [ -z "${ASAN_OPTIONS:-}" ]; then
  for iso in "" --no-isolate; do
    prlimit --as=2000000000 "$opt" "$tmp/many.plir" --threads 300 $iso > "$tmp/many.out" 2> "$tmp/err"; rc=$?
    check "--threads 300 under a 2 GB address space ${iso:-isolated}: the same output (rc=$rc)" \
      '[ $rc -eq 0 ] && cmp -s "$tmp/many.out" "$tmp/many.ref" && ! grep -q "terminate\|SIGABRT" "$tmp/err"'
  done
fi
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null && id nobody > /dev/null 2>&1; then
  pub=$(mktemp -d /tmp/plir-threads-test.XXXXXX)
  chmod 755 "$pub" && cp "$opt" "$tmp/many.plir" "$pub/" && chmod -R a+rX "$pub"
  # (Under ASan, LeakSanitizer needs a process slot of its own at exit to
  # stop the world, and ParallelFor's kept helpers hold theirs until then:
  # leak checking is off for this one run.)
  setpriv --reuid=nobody --regid=nogroup --clear-groups env TMPDIR="$pub" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:detect_leaks=0}" \
    prlimit --nproc=40 "$pub/plir-opt" "$pub/many.plir" --threads 64 > "$tmp/many.out" 2> "$tmp/err"; rc=$?
  check "as nobody, RLIMIT_NPROC 40, --threads 64: the same output (rc=$rc)" \
    '[ $rc -eq 0 ] && cmp -s "$tmp/many.out" "$tmp/many.ref" && ! grep -q "terminate\|SIGABRT" "$tmp/err"'
  rm -rf "$pub"
else
  echo "SKIP: the RLIMIT_NPROC check needs root, setpriv and a user nobody"
fi

exit $fail
