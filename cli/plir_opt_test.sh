#!/usr/bin/env bash
# End-to-end checks of plir-opt: round trips, stdin, -o, exit codes, and
# that errors write nothing.
set -uo pipefail
opt="$1"
save_binary="$2"  # any module as binary, unverified (testing/save_binary.cc)
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

for f in examples/spec/*.plir; do
  "$opt" "$f" > "$tmp/a.plir" 2> "$tmp/err"; rc=$?
  check "$f prints (rc=$rc)" '[ $rc -eq 0 ]'
  "$opt" "$tmp/a.plir" > "$tmp/b.plir"; rc=$?
  check "$f re-parses" '[ $rc -eq 0 ]'
  check "$f printing is a fixed point" 'cmp -s "$tmp/a.plir" "$tmp/b.plir"'
done

"$opt" - < examples/spec/conv2d.plir > "$tmp/stdin.plir"
check "reads stdin" '[ $? -eq 0 ] && grep -q "nn.conv2d" "$tmp/stdin.plir"'

"$opt" examples/spec/conv2d.plir -o "$tmp/out.plir"; rc=$?
check "-o writes the file" '[ $rc -eq 0 ] && cmp -s "$tmp/out.plir" <("$opt" examples/spec/conv2d.plir)'

printf 'def @f() {\n  %%a = bogus(1);\n  %%a\n}\n' > "$tmp/bad.plir"
cp "$tmp/bad.plir" "$tmp/bad.copy"
"$opt" "$tmp/bad.plir" -o "$tmp/never.plir" 2> "$tmp/err"; rc=$?
check "bad input exits 1" '[ $rc -eq 1 ]'
check "error names file:line:col" 'grep -q "bad.plir:2:8: unknown op .bogus." "$tmp/err"'
check "nothing written on error" '[ ! -e "$tmp/never.plir" ] && [ -z "$(ls "$tmp" | grep never)" ]'
check "input not modified" 'cmp -s "$tmp/bad.plir" "$tmp/bad.copy"'
# A text input that parses but does not verify: without passes its check
# runs beside the printing of the output (the child writes it); the error is
# the loader's, and no output is written, nor an existing one replaced.
printf 'def @f(%%x: Tensor[(2,), float32]) {\n  %%a = call_packed("g", %%x, sinfo_args=[Tensor[(n,), float32]]);\n  %%a\n}\n' > "$tmp/unbound.plir"
"$opt" "$tmp/unbound.plir" -o "$tmp/unbound.out.plir" --verbose 2> "$tmp/err"; rc=$?
check "an ill-formed text input, no passes: exits 1 naming the input (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "the child writes the output" "$tmp/err" && grep -q "unbound.plir: the module is not well-formed" "$tmp/err" && grep -q "symbolic dimension n is not bound" "$tmp/err"'
check "... and writes nothing" '[ ! -e "$tmp/unbound.out.plir" ] && [ -z "$(ls "$tmp" | grep unbound.out)" ]'
echo keep > "$tmp/unbound.out.plir"
"$opt" "$tmp/unbound.plir" -o "$tmp/unbound.out.plir" 2> /dev/null
check "... and keeps an existing output" '[ "$(cat "$tmp/unbound.out.plir")" = keep ]'
"$opt" "$tmp/unbound.plir" > "$tmp/unbound.stdout" 2> /dev/null; rc=$?
check "... and to standard output, verified first: prints nothing (rc=$rc)" '[ $rc -eq 1 ] && [ ! -s "$tmp/unbound.stdout" ]'

# The same for a JSON or binary input written as binary: its check runs
# beside the binary writer. The JSON of a well-formed module, edited so that
# the call's result type names a dimension nothing binds.
printf 'def @f(%%x: Tensor[(n,), float32]) {\n  %%a = call_packed("g", %%x, sinfo_args=[Tensor[(n, 2), float32]]);\n  %%a\n}\n' > "$tmp/bound.plir"
"$opt" "$tmp/bound.plir" -o "$tmp/bound.json"; rc=$?
sed 's/\["n",2\]/["m",2]/' "$tmp/bound.json" > "$tmp/unbound.json"
"$opt" "$tmp/unbound.json" -o "$tmp/unbound.out.plirb" --verbose 2> "$tmp/err"; rc2=$?
check "an ill-formed JSON input written as binary, no passes: exits 1 naming the input (rc=$rc/$rc2)" \
  '[ $rc -eq 0 ] && [ $rc2 -eq 1 ] && grep -q "the child writes the output" "$tmp/err" && grep -q "unbound.json: the module is not well-formed" "$tmp/err" && grep -q "symbolic dimension m is not bound" "$tmp/err"'
check "... and writes nothing" '[ ! -e "$tmp/unbound.out.plirb" ] && [ -z "$(ls "$tmp" | grep unbound.out.plirb)" ]'
"$opt" "$tmp/bound.json" -o "$tmp/bound.plirb"; rc=$?
check "... while the well-formed one is written (rc=$rc)" '[ $rc -eq 0 ] && cmp -s <("$opt" "$tmp/bound.plirb") <("$opt" "$tmp/bound.plir")'
# A JSON input whose two functions bind one variable: written as binary
# without the writer's own check for that (SaveVerifiedBinaryParts), since
# the verifier beside it rejects the module and the file is not kept.
printf 'def @f(%%x: Tensor[(2,), float32]) {\n  %%a = add(%%x, %%x);\n  %%a\n}\ndef @g(%%y: Tensor[(2,), float32]) {\n  %%b = add(%%y, %%y);\n  %%b\n}\n' > "$tmp/two.plir"
"$opt" "$tmp/two.plir" -o "$tmp/two.json"; rc=$?
sed 's/"VarBinding","c":\[10,11\]/"VarBinding","c":[2,11]/; s/"SeqExpr","c":\[13,10\]/"SeqExpr","c":[13,2]/' "$tmp/two.json" > "$tmp/shared.json"
"$opt" "$tmp/shared.json" -o "$tmp/shared.out.plirb" 2> "$tmp/err"; rc2=$?
check "a JSON input binding one variable in two functions, written as binary: exits 1 naming the input, writes nothing (rc=$rc/$rc2)" \
  '[ $rc -eq 0 ] && ! cmp -s "$tmp/two.json" "$tmp/shared.json" && [ $rc2 -eq 1 ] && grep -q "shared.json: " "$tmp/err" && [ ! -e "$tmp/shared.out.plirb" ] && [ -z "$(ls "$tmp" | grep shared.out)" ]'
for mode in --no-isolate --check-result; do
  "$opt" $mode "$tmp/shared.json" -o "$tmp/shared.out.plirb" 2> "$tmp/err"; rc=$?
  check "... the same with $mode (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "shared.json: " "$tmp/err" && [ ! -e "$tmp/shared.out.plirb" ] && [ -z "$(ls "$tmp" | grep shared.out)" ]'
done
# The same module as a binary input (written unverified), in versions 2 to
# 4: its loader cannot prove that no variable is bound in two items, so the
# check across items runs, as text, as binary and to standard output, with
# the verifier's own message.
for v in 2 3 4; do
  "$save_binary" "$tmp/shared.json" "$tmp/shared.v$v.plirb" $v; rc=$?
  for out in shared.out.plir shared.out.plirb; do
    "$opt" "$tmp/shared.v$v.plirb" -o "$tmp/$out" 2> "$tmp/err"; rc2=$?
    check "a binary (version $v) input binding one variable in two functions, to $out: exits 1 with the verifier's message, writes nothing (rc=$rc/$rc2)" \
      '[ $rc -eq 0 ] && [ $rc2 -eq 1 ] && grep -q "shared.v$v.plirb: the module is not well-formed" "$tmp/err" && grep -q "binding 0 (%a), bound variable: variable %a is bound more than once (also in @f)" "$tmp/err" && [ ! -e "$tmp/$out" ] && [ -z "$(ls "$tmp" | grep shared.out)" ]'
  done
  "$opt" "$tmp/shared.v$v.plirb" > "$tmp/shared.stdout" 2> "$tmp/err"; rc2=$?
  check "... to standard output: the same, prints nothing (rc=$rc2)" \
    '[ $rc2 -eq 1 ] && grep -q "also in @f" "$tmp/err" && [ ! -s "$tmp/shared.stdout" ]'
done
# An ill-formed binary input that the loader proves free of shared
# bindings: the error of a single function, worded as Verify words it.
"$save_binary" "$tmp/unbound.json" "$tmp/unbound.plirb" 3; rc=$?
"$opt" "$tmp/unbound.plirb" -o "$tmp/unbound.out.plirb" 2> "$tmp/err"; rc2=$?
check "an ill-formed binary input, no variable shared: exits 1 naming the input (rc=$rc/$rc2)" \
  '[ $rc -eq 0 ] && [ $rc2 -eq 1 ] && grep -q "unbound.plirb: the module is not well-formed" "$tmp/err" && grep -q "symbolic dimension m is not bound" "$tmp/err" && [ ! -e "$tmp/unbound.out.plirb" ]'
# And a well-formed binary input whose loader proves it (the check across
# items is left out): written as text and as binary, the module it is.
"$save_binary" "$tmp/two.plir" "$tmp/two.plirb" 3; rc=$?
"$opt" "$tmp/two.plirb" -o "$tmp/two.out.plirb"; rc2=$?
check "a well-formed binary input is written back (rc=$rc/$rc2)" \
  '[ $rc$rc2 = 00 ] && cmp -s <("$opt" "$tmp/two.out.plirb") <("$opt" "$tmp/two.plir")'

# A module large enough for version 4's shards (40 functions of 300
# bindings: 2 shards): into a file, its shards go out as they are done and
# the shard table last (pwrite), in each place that writes -o: the child,
# --no-isolate, and the parent after --check-result. Standard output gets
# the file whole. The same bytes every way, and they load back.
awk 'BEGIN { for (f = 0; f < 40; f++) {
  printf "def @f%d(%%x: Tensor[(), float32], %%c: Tensor[(), float32]) -> Tensor[(), float32] {\n", f
  print "  dataflow {"; p = "%x"
  for (i = 0; i < 300; i++) { printf "    %%v%d: Tensor[(), float32] = %s(%s, %%c);\n", i, (i % 2 ? "add" : "multiply"), p; p = "%v" i }
  printf "    output %s;\n  }\n  %s\n}\n", p, p } }' > "$tmp/sharded.plir"
"$opt" "$tmp/sharded.plir" -o "$tmp/sharded.child.plirb"; rc1=$?
"$opt" --no-isolate "$tmp/sharded.plir" -o "$tmp/sharded.noiso.plirb"; rc2=$?
"$opt" --check-result "$tmp/sharded.plir" -o "$tmp/sharded.parent.plirb"; rc3=$?
"$opt" "$tmp/sharded.plir" --emit binary > "$tmp/sharded.stdout.plirb"; rc4=$?
check "a sharded binary written to -o by the child, --no-isolate, the parent, and to stdout: the same bytes (rc=$rc1/$rc2/$rc3/$rc4)" \
  '[ $rc1$rc2$rc3$rc4 = 0000 ] && cmp -s "$tmp/sharded.child.plirb" "$tmp/sharded.stdout.plirb" && cmp -s "$tmp/sharded.noiso.plirb" "$tmp/sharded.stdout.plirb" && cmp -s "$tmp/sharded.parent.plirb" "$tmp/sharded.stdout.plirb"'
check "... version 4 with 2 shards" \
  '[ "$(od -An -tu4 -j8 -N4 "$tmp/sharded.child.plirb" | tr -d " ")" = 4 ] && [ "$(od -An -tu8 -j32 -N8 "$tmp/sharded.child.plirb" | tr -d " ")" = 2 ]'
check "... which loads back to the module" 'cmp -s <("$opt" "$tmp/sharded.child.plirb") <("$opt" "$tmp/sharded.plir")'

echo "keep" > "$tmp/existing.plir"
"$opt" "$tmp/bad.plir" -o "$tmp/existing.plir" 2>/dev/null
check "existing output kept on error" '[ "$(cat "$tmp/existing.plir")" = keep ]'

"$opt" "$tmp/missing.plir" 2> "$tmp/err"; rc=$?
check "missing input exits 1" '[ $rc -eq 1 ] && grep -q "cannot open" "$tmp/err"'

"$opt" 2> /dev/null; rc=$?
check "usage error exits 2" '[ $rc -eq 2 ]'

head -c 3000 /dev/urandom > "$tmp/random.bin" 2>/dev/null || true
"$opt" "$tmp/random.bin" > /dev/null 2>&1; rc=$?
check "random bytes are a clean error" '[ $rc -eq 1 ]'

"$opt" --list-passes > "$tmp/list" 2>&1; rc=$?
check "--list-passes lists in-tree plugin passes, short" '[ $rc -eq 0 ] && grep -q "^DeadCodeElimination  \[plugin dead_code_elimination\]" "$tmp/list" && ! grep -q -- "--entry_functions" "$tmp/list" && ! grep -q "/" "$tmp/list"'
"$opt" --list-passes --verbose > "$tmp/list" 2>&1; rc=$?
check "--list-passes --verbose adds options and paths" '[ $rc -eq 0 ] && grep -q -- "--entry_functions (list of strings" "$tmp/list" && grep -q "libplir_dead_code_elimination.so" "$tmp/list"'
"$opt" --list-ops > "$tmp/ops" 2>&1; rc=$?
check "--list-ops lists core ops with attributes" '[ $rc -eq 0 ] && grep -q "^nn.conv2d(x0, x1)  pattern=out_elemwise_fusable" "$tmp/ops" && grep -q "^    strides: " "$tmp/ops"'

"$opt" examples/spec/conv2d.plir --passes Normalize,DeadCodeElimination --print-changed > "$tmp/p.plir" 2> "$tmp/changed"; rc=$?
check "--passes runs plugin passes" '[ $rc -eq 0 ] && grep -q "%lv: Tensor\[(1, 32, 222, 222), float32\] = nn.conv2d" "$tmp/p.plir"'
check "--print-changed prints a diff" 'grep -q "^+++ after Normalize" "$tmp/changed"'

"$opt" examples/spec/conv2d.plir --passes DeadCodeElimnation -o "$tmp/never2.plir" 2> "$tmp/err"; rc=$?
check "unknown pass suggests the closest" '[ $rc -eq 1 ] && grep -q "did you mean .DeadCodeElimination." "$tmp/err" && [ ! -e "$tmp/never2.plir" ]'

# A copy installed elsewhere finds its plugins next to itself.
mkdir -p "$tmp/inst/bin" "$tmp/inst/lib/plir/plugins"
cp "$opt" "$tmp/inst/bin/plir-opt"
cp "$(dirname "$opt")"/../plugins/*/libplir_*.so "$tmp/inst/lib/plir/plugins/"
"$tmp/inst/bin/plir-opt" examples/spec/conv2d.plir --passes Normalize > /dev/null; rc=$?
check "an installed copy finds its plugins without flags" '[ $rc -eq 0 ]'

for f in examples/spec/*.plir; do
  "$opt" "$f" --emit binary -o "$tmp/m.plirb" && "$opt" "$tmp/m.plirb" -o "$tmp/back.plir"; rc=$?
  check "$f: text -> binary -> text is lossless" '[ $rc -eq 0 ] && cmp -s "$tmp/back.plir" <("$opt" "$f")'
  "$opt" "$f" -o "$tmp/m.json" && "$opt" "$tmp/m.json" --emit text > "$tmp/back2.plir"; rc=$?
  check "$f: text -> json -> text is lossless" '[ $rc -eq 0 ] && cmp -s "$tmp/back2.plir" <("$opt" "$f")'
done
check "-o x.plirb writes binary by extension" 'head -c 8 "$tmp/m.plirb" | od -c | grep -q "P   L   I   R"'
head -c 40 "$tmp/m.plirb" > "$tmp/trunc.plirb"
"$opt" "$tmp/trunc.plirb" 2> "$tmp/err"; rc=$?
check "truncated binary is a clean error" '[ $rc -eq 1 ] && grep -q "corrupt binary module" "$tmp/err"'
cp examples/spec/conv2d.plir "$tmp/lies.plirb"
"$opt" "$tmp/lies.plirb" 2> "$tmp/err"; rc=$?
check "extension that lies is an error" '[ $rc -eq 1 ] && grep -q "do not match its extension" "$tmp/err"'

"$opt" --plugin "$(dirname "$opt")/../plugins/fold_constant/libplir_fold_constant.so" examples/spec/conv2d.plir > /dev/null; rc=$?
check "--plugin PATH before the input file" '[ $rc -eq 0 ]'

PLIR_PLUGIN_PATH="/nonexistent:testing/plugins" "$opt" examples/spec/conv2d.plir --passes TestBindResult > "$tmp/env.plir" 2> "$tmp/err"; rc=$?
check "PLIR_PLUGIN_PATH finds plugins by name" '[ $rc -eq 0 ] && grep -q "%result" "$tmp/env.plir"'
"$opt" examples/spec/conv2d.plir --plugin-path testing/plugins --passes TestBindResult > /dev/null; rc=$?
check "--plugin-path finds plugins by name" '[ $rc -eq 0 ]'
# A plugin directory that cannot be read (here a symlink loop: root reads
# through permissions) is said, not taken for an empty one.
ln -s loop "$tmp/loop"
"$opt" --list-passes --plugin-path "$tmp/loop" > /dev/null 2> "$tmp/err"; rc=$?
check "an unreadable plugin directory is named (rc=$rc)" '[ $rc -eq 0 ] && grep -q "cannot read the plugin directory .*loop" "$tmp/err"'

# verify: none means no verifier in the pipeline (with --no-isolate, none at
# all); the supervisor still verifies the result it takes from the child.
# The default (end) checks the result in the pipeline.
misbehaving="$PWD/testing/plugins/libplir_test_misbehaving.so"
printf 'version: 1\nplugins: [%s]\npasses: [TestBreaksModule]\ninstruments: {verify: none}\n' "$misbehaving" > "$tmp/none.yaml"
printf 'version: 1\nplugins: [%s]\npasses: [TestBreaksModule]\n' "$misbehaving" > "$tmp/end.yaml"
"$opt" examples/spec/conv2d.plir --pipeline "$tmp/none.yaml" --no-reproducer --no-isolate > "$tmp/none.plir" 2> "$tmp/err"; rc=$?
check "verify: none with --no-isolate runs no verifier at all" '[ $rc -eq 0 ] && grep -q "ghost" "$tmp/none.plir"'
"$opt" examples/spec/conv2d.plir --pipeline "$tmp/none.yaml" --no-reproducer > "$tmp/none.plir" 2> "$tmp/err"; rc=$?
check "verify: none: the supervisor still refuses the ill-formed result" \
  '[ $rc -eq 1 ] && grep -q "the child.s result does not verify" "$tmp/err" && [ ! -s "$tmp/none.plir" ]'
"$opt" examples/spec/conv2d.plir --pipeline "$tmp/end.yaml" --no-reproducer > /dev/null 2> "$tmp/err"; rc=$?
check "by default the result is verified" '[ $rc -eq 1 ] && grep -q "ill-formed" "$tmp/err"'
# A bundled plugin (beside the executable) that breaks the module: the child
# writes the output itself and checks the result beside the printing; the
# check fails, and no output file is left, nor an old one replaced.
mkdir -p "$tmp/inst2/bin" "$tmp/inst2/lib/plir/plugins"
cp "$opt" "$tmp/inst2/bin/plir-opt"
cp "$misbehaving" "$tmp/inst2/lib/plir/plugins/"
"$tmp/inst2/bin/plir-opt" examples/spec/conv2d.plir --passes TestBreaksModule --no-reproducer --verbose \
  -o "$tmp/broken.plir" 2> "$tmp/err"; rc=$?
check "a bundled pass's ill-formed result: the child's check fails, nothing written (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "the child writes the output" "$tmp/err" && grep -q "the pipeline produced an ill-formed module" "$tmp/err" && [ ! -e "$tmp/broken.plir" ] && [ -z "$(ls "$tmp" | grep broken)" ]'
echo keep > "$tmp/broken.plir"
"$tmp/inst2/bin/plir-opt" examples/spec/conv2d.plir --passes TestBreaksModule --no-reproducer \
  -o "$tmp/broken.plir" 2> /dev/null
check "... and an existing output is kept" '[ "$(cat "$tmp/broken.plir")" = keep ]'

# A whole-run budget of pass runs: nested repeats multiply (1000^3 runs
# asked for here), and the run past --max-pass-runs fails naming the pass,
# writing nothing. The default is 10^6.
printf 'version: 1\npasses:\n  - repeat: {max_iterations: 1000}\n    passes:\n      - repeat: {max_iterations: 1000}\n        passes:\n          - repeat: {max_iterations: 1000}\n            passes: [DeadCodeElimination]\n' > "$tmp/nested.yaml"
"$opt" examples/spec/conv2d.plir --pipeline "$tmp/nested.yaml" --max-pass-runs 2000 --no-reproducer -o "$tmp/nested.plir" 2> "$tmp/err"; rc=$?
check "--max-pass-runs ends nested repeats, naming the pass (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "pass-run budget spent: DeadCodeElimination was pass run 2001, past the limit of 2000" "$tmp/err" && [ ! -e "$tmp/nested.plir" ]'
"$opt" --help > "$tmp/help"
check "--max-pass-runs defaults to 10^6" 'grep -A1 -- "--max-pass-runs" "$tmp/help" | grep -q "(default 1000000)"'
"$opt" examples/spec/conv2d.plir --max-pass-runs 0 > /dev/null 2>&1; rc=$?
check "--max-pass-runs 0 is a usage error" '[ $rc -eq 2 ]'

exit $fail
