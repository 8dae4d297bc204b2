#!/usr/bin/env bash
# Every tool reads every format: plir-opt, plir-run, plir-diff and plir-reduce
# take the same module as text, JSON and binary (told apart by contents, not
# by the file name) through the one loader (ir/serialize/module_file.h), and
# give the same answer for each.
set -uo pipefail
opt="$1" run="$2" diff="$3" reduce="$4"
model=examples/models/small_cnn.plir
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

"$opt" "$model" -o "$tmp/m.plir"; check "text written" '[ $? -eq 0 ]'
"$opt" "$model" -o "$tmp/m.json"; check "JSON written" '[ $? -eq 0 ] && head -c1 "$tmp/m.json" | grep -q "{"'
"$opt" "$model" -o "$tmp/m.plirb"; check "binary written" '[ $? -eq 0 ] && ! grep -q "def @main" "$tmp/m.plirb"'
# The format comes from the contents: a binary file named .plir loads too.
cp "$tmp/m.plirb" "$tmp/binary_named.plir"

for f in m.plir m.json m.plirb binary_named.plir; do
  "$opt" "$tmp/$f" > "$tmp/$f.txt"; rc=$?
  check "plir-opt reads $f" '[ $rc -eq 0 ] && cmp -s "$tmp/$f.txt" "$tmp/m.plir"'
  "$run" "$tmp/$f" --inputs random:1 random:2 random:3 random:4 > "$tmp/$f.out" 2>&1; rc=$?
  check "plir-run reads $f" '[ $rc -eq 0 ] && grep -q checksum "$tmp/$f.out"'
  check "plir-run gives the same result for $f" 'cmp -s <(grep checksum "$tmp/$f.out") <(grep checksum "$tmp/m.plir.out")'
  "$diff" "$tmp/m.plir" "$tmp/$f" > "$tmp/$f.diff" 2>&1; rc=$?
  check "plir-diff reads $f (equal to the text)" '[ $rc -eq 0 ]'
  "$reduce" "$tmp/$f" -o "$tmp/$f.small" --test "grep -q nn.conv2d" > /dev/null 2>&1; rc=$?
  check "plir-reduce reads $f" '[ $rc -eq 0 ] && grep -q nn.conv2d "$tmp/$f.small" && [ "$(grep -c " = " "$tmp/$f.small")" -lt 6 ]'
done

# Both spellings of several inputs: one --inputs with four values, or four.
"$run" "$tmp/m.plir" --inputs random:1 --inputs random:2 --inputs random:3 --inputs random:4 > "$tmp/rep.out" 2>&1
check "repeated --inputs equal one --inputs with four values" 'cmp -s <(grep checksum "$tmp/rep.out") <(grep checksum "$tmp/m.plir.out")'
# An op only a plugin registers: plir-run suggests --plugin.
printf 'def @main(%%x: Tensor[(2), float32]) -> Tensor[(2), float32] {\n  %%y = example.cube(%%x);\n  %%y\n}\n' > "$tmp/plugin_op.plir"
"$run" "$tmp/plugin_op.plir" --inputs ones > /dev/null 2> "$tmp/err"; rc=$?
check "an unknown op suggests --plugin" '[ $rc -eq 1 ] && grep -q "unknown op" "$tmp/err" && grep -q -- "--plugin" "$tmp/err"'
"$opt" examples/models/mlp_with_constants.plir -o "$tmp/other.plirb"
"$diff" "$tmp/m.json" "$tmp/other.plirb" > /dev/null 2>&1; rc=$?
check "plir-diff tells JSON and binary modules apart" '[ $rc -eq 1 ]'

# Binary version 3 by default, version 2 on request; both read back the same.
# A flipped weight byte loads (the data is checked only on request) and is
# caught by --verify-tensor-data, with the byte range in the message.
"$opt" examples/models/mlp_with_constants.plir -o "$tmp/c3.plirb"; rc3=$?
"$opt" examples/models/mlp_with_constants.plir -o "$tmp/c2.plirb" --binary-version 2; rc2=$?
check "binary version 3 for a small module by default, 2 on request" '[ $rc3 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(od -An -tu1 -j8 -N1 "$tmp/c3.plirb" | tr -d " ")" = 3 ] && [ "$(od -An -tu1 -j8 -N1 "$tmp/c2.plirb" | tr -d " ")" = 2 ]'
check "versions 2 and 3 read back the same" '"$diff" "$tmp/c3.plirb" "$tmp/c2.plirb" > /dev/null 2>&1'
# A large module (40 functions of 250 bindings) is written as version 4:
# version 3 shards, saved and loaded in parallel; it reads back the same as
# version 3, on one thread or two, and the output is the same on both.
awk 'BEGIN { for (f = 0; f < 40; ++f) {
  printf "def @f%d(%%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  %%a0 = add(%%x, %%x);\n", f
  for (i = 1; i < 250; ++i) printf "  %%a%d = multiply(%%a%d, %%x);\n", i, i - 1
  printf "  %%a249\n}\n" } }' > "$tmp/big.plir"
"$opt" "$tmp/big.plir" -o "$tmp/big4.plirb" --threads 2; rc4=$?
"$opt" "$tmp/big.plir" -o "$tmp/big4t1.plirb" --threads 1; rc41=$?
"$opt" "$tmp/big.plir" -o "$tmp/big3.plirb" --binary-version 3; rc3=$?
check "a large module is version 4 by default, the same on 1 and 2 threads" '[ $rc4 -eq 0 ] && [ $rc41 -eq 0 ] && [ $rc3 -eq 0 ] && [ "$(od -An -tu1 -j8 -N1 "$tmp/big4.plirb" | tr -d " ")" = 4 ] && [ "$(od -An -tu1 -j8 -N1 "$tmp/big3.plirb" | tr -d " ")" = 3 ] && cmp -s "$tmp/big4.plirb" "$tmp/big4t1.plirb"'
"$opt" "$tmp/big4.plirb" -o "$tmp/big4.plir" --threads 2; rc=$?
check "version 4 reads back as the text it was written from" '[ $rc -eq 0 ] && cmp -s "$tmp/big4.plir" <("$opt" "$tmp/big.plir")'
check "versions 4 and 3 read back the same" '"$diff" "$tmp/big4.plirb" "$tmp/big3.plirb" > /dev/null 2>&1'
"$opt" "$tmp/big.plir" -o "$tmp/big5.plirb" --binary-version 5 > /dev/null 2> "$tmp/err"; rc=$?
check "--binary-version 5 is refused" '[ $rc -ne 0 ] && [ ! -e "$tmp/big5.plirb" ]'
cp "$tmp/c3.plirb" "$tmp/flip.plirb"
size=$(stat -c %s "$tmp/flip.plirb")
printf '\x55' | dd of="$tmp/flip.plirb" bs=1 seek=$((size - 2)) conv=notrunc 2> /dev/null
"$opt" "$tmp/flip.plirb" > /dev/null 2>&1; rc=$?
"$opt" "$tmp/flip.plirb" --verify-tensor-data > /dev/null 2> "$tmp/err"; rcv=$?
check "a flipped weight loads lazily and fails --verify-tensor-data" '[ $rc -eq 0 ] && [ $rcv -ne 0 ] && grep -q "tensor data checksum mismatch (bytes " "$tmp/err"'

# The loader refuses what is not a regular module file, in every tool.
for t in opt run diff reduce; do
  case $t in
    opt) "$opt" "$tmp" > /dev/null 2> "$tmp/err" ;;
    run) "$run" "$tmp" > /dev/null 2> "$tmp/err" ;;
    diff) "$diff" "$tmp" "$tmp/m.plir" > /dev/null 2> "$tmp/err" ;;
    reduce) "$reduce" "$tmp" -o "$tmp/never.plir" --test true > /dev/null 2> "$tmp/err" ;;
  esac
  rc=$?
  check "plir-$t refuses a directory with a message" '[ $rc -ne 0 ] && [ -s "$tmp/err" ] && [ ! -e "$tmp/never.plir" ]'
done
exit "$fail"
