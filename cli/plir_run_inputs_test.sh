#!/usr/bin/env bash
# plir-run on imported models: --inputs-file binds the first num_input
# parameters (by PLIR name, by the ONNX name in onnx_names, else by position
# in the order of the tensors' data), --params the rest; --save-outputs
# names the result tensors by onnx_outputs (a tuple flattened); a file that
# does not match is an error naming the tensor, and nothing is written.
#   plir_run_inputs_test.sh PLIR_RUN
set -uo pipefail
run="$1"
source testing/fifo.sh
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
# header FILE: the JSON header of a safetensors file.
header() { head -c $((8 + $(od -An -t u8 -N 8 "$1"))) "$1" | tail -c +9; }

# mk FILE 'NAME=TYPE=VALUES' ...: a safetensors file, written by plir-run
# itself from a module whose outputs are named by onnx_outputs.
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

# A model as plir-import-onnx writes it: one real input, then two weights.
cat > "$tmp/m.plir" <<'PLIR'
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3,), float32], %b: Tensor[(2, 3), float32]) -> (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) attrs {num_input = 1, onnx_names = {b = "b.bias", w = "w.weight", x = "x:0"}, onnx_outputs = ["y:0", "z"]} {
  %y = add(%x, %w);
  %z = multiply(%x, %b);
  (%y, %z)
}
PLIR
T23='Tensor[(2, 3), float32]' T3='Tensor[(3,), float32]'
mk "$tmp/w.st" "w=$T3=10, 20, 30" "b=$T23=2, 2, 2, 2, 2, 2"
check "mk writes names from onnx_outputs" 'header "$tmp/w.st" | grep -q "\"w\"" && header "$tmp/w.st" | grep -q "\"b\""'
mk "$tmp/x_plir.st" "x=$T23=1, 2, 3, 4, 5, 6"
mk "$tmp/x_onnx.st" "x:0=$T23=1, 2, 3, 4, 5, 6"
mk "$tmp/x_other.st" "image=$T23=1, 2, 3, 4, 5, 6"

for f in x_plir x_onnx x_other; do
  "$run" "$tmp/m.plir" --inputs-file "$tmp/$f.st" --params "$tmp/w.st" --save-outputs "$tmp/$f.out" > "$tmp/$f.log" 2>&1; rc=$?
  check "$f: runs (rc=$rc)" '[ $rc -eq 0 ] && grep -q "2 tensors written" "$tmp/$f.log"'
  check "$f: weights by name" 'grep -q "read 2 parameters from .*w.st by name" "$tmp/$f.log"'
done
check "input by its PLIR name" 'grep -q "read 1 inputs from .*x_plir.st by name" "$tmp/x_plir.log"'
check "input by its ONNX name" 'grep -q "read 1 inputs from .*x_onnx.st by name" "$tmp/x_onnx.log"'
check "input by position when the name differs" 'grep -q "read 1 inputs from .*x_other.st by index in file order" "$tmp/x_other.log"'
check "same data, same outputs" 'cmp "$tmp/x_plir.out" "$tmp/x_onnx.out" && cmp "$tmp/x_plir.out" "$tmp/x_other.out"'
check "outputs named by onnx_outputs, in order" 'header "$tmp/x_plir.out" | grep -q "^{\"y:0\":.*\"z\":"'
# The values: y = x + w, z = x * b.
"$run" "$tmp/m.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w.st" > "$tmp/print.log" 2>&1
check "results computed from the bound tensors" 'grep -q "first: 11 22 33 14" "$tmp/print.log" && grep -q "first: 2 4 6 8" "$tmp/print.log"'
# Without onnx_outputs the outputs are "0", "1".
sed 's/, onnx_outputs = \["y:0", "z"\]//' "$tmp/m.plir" > "$tmp/m2.plir"
"$run" "$tmp/m2.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w.st" --save-outputs "$tmp/m2.out" > /dev/null 2>&1
check "without onnx_outputs: named 0, 1" 'header "$tmp/m2.out" | grep -q "^{\"0\":.*\"1\":"'
# One value listed twice as an output: numbered, not refused.
sed 's/onnx_outputs = \["y:0", "z"\]/onnx_outputs = ["y:0", "y:0"]/; s/(%y, %z)/(%y, %y)/' "$tmp/m.plir" > "$tmp/dup.plir"
"$run" "$tmp/dup.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w.st" --save-outputs "$tmp/dup.out" > /dev/null 2>&1; rc=$?
check "a repeated output name: named 0, 1 (rc=$rc)" '[ $rc -eq 0 ] && header "$tmp/dup.out" | grep -q "^{\"0\":.*\"1\":"'

# By position means in the order of the data, not of the header: "b" is
# listed first but its data comes second.
cat > "$tmp/two.plir" <<'PLIR'
def @main(%p: Tensor[(1,), float32], %q: Tensor[(1,), float32]) -> Tensor[(1,), float32] attrs {num_input = 2} {
  subtract(%p, %q)
}
PLIR
hdr='{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
{ printf "\\$(printf %03o ${#hdr})\\000\\000\\000\\000\\000\\000\\000"; printf '%s' "$hdr"; printf '\000\000\200\077\000\000\000\100'; } > "$tmp/ab.st"
"$run" "$tmp/two.plir" --inputs-file "$tmp/ab.st" > "$tmp/ab.log" 2>&1; rc=$?
check "by position in data order: p = a = 1, q = b = 2 (rc=$rc)" '[ $rc -eq 0 ] && grep -q "first: -1$" "$tmp/ab.log"'
# Without num_input and without --params, the inputs file binds every parameter.
sed 's/ attrs {num_input = 2}//' "$tmp/two.plir" > "$tmp/two_noattr.plir"
"$run" "$tmp/two_noattr.plir" --inputs-file "$tmp/ab.st" > "$tmp/ab2.log" 2>&1; rc=$?
check "no num_input: all parameters are inputs (rc=$rc)" '[ $rc -eq 0 ] && grep -q "first: -1$" "$tmp/ab2.log"'

# Errors: exit 1, the tensor named, nothing written.
err() {  # err WHAT PATTERN ARGS...: plir-run ARGS fails with PATTERN on stderr
  local what="$1" pat="$2"
  shift 2
  rm -f "$tmp/never.out"
  "$run" "$@" --save-outputs "$tmp/never.out" > /dev/null 2> "$tmp/err"; local rc=$?
  check "$what (rc=$rc)" '[ $rc -eq 1 ] && grep -q -- "$pat" "$tmp/err" && [ ! -e "$tmp/never.out" ]'
}
mk "$tmp/w_missing.st" "w=$T3=1, 2, 3"
err "weights: a missing tensor is named" "w_missing.st: @main's parameters takes 2 tensors but the file has 1, and no tensor is named 'b' or 'b.bias'" \
  "$tmp/m.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w_missing.st"
mk "$tmp/w_dtype.st" "w=Tensor[(3,), int32]=1, 2, 3" "b=$T23=2, 2, 2, 2, 2, 2"
err "weights: a wrong dtype names the tensor" "w_dtype.st: tensor 'w' is int32\[3\], but parameter w is Tensor\[(3,), float32\]" \
  "$tmp/m.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w_dtype.st"
mk "$tmp/w_shape.st" "w=Tensor[(4,), float32]=1, 2, 3, 4" "b=$T23=2, 2, 2, 2, 2, 2"
err "weights: a wrong shape names the tensor" "w_shape.st: tensor 'w' is float32\[4\], but parameter w is Tensor\[(3,), float32\]" \
  "$tmp/m.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w_shape.st"
mk "$tmp/x_dtype.st" "x=Tensor[(2, 3), int64]=1, 2, 3, 4, 5, 6"
err "inputs: a wrong dtype names the tensor" "x_dtype.st: tensor 'x' is int64\[2, 3\], but parameter x is Tensor\[(2, 3), float32\]" \
  "$tmp/m.plir" --inputs-file "$tmp/x_dtype.st" --params "$tmp/w.st"
mk "$tmp/x_shape.st" "x:0=Tensor[(3, 2), float32]=1, 2, 3, 4, 5, 6"
err "inputs: a wrong shape names the tensor" "x_shape.st: tensor 'x:0' is float32\[3, 2\], but parameter x is Tensor\[(2, 3), float32\]" \
  "$tmp/m.plir" --inputs-file "$tmp/x_shape.st" --params "$tmp/w.st"
mk "$tmp/x_two.st" "image=$T23=1, 2, 3, 4, 5, 6" "mask=$T23=1, 2, 3, 4, 5, 6"
err "inputs: by position the file must hold exactly num_input tensors" "x_two.st: @main's inputs takes 1 tensors but the file has 2, and no tensor is named 'x' or 'x:0'" \
  "$tmp/m.plir" --inputs-file "$tmp/x_two.st" --params "$tmp/w.st"
printf '\002\000\000\000\000\000\000\000{}' > "$tmp/empty.st"
err "inputs: an empty inputs file for one input" "@main's inputs takes 1 tensors but the file has 0" \
  "$tmp/m.plir" --inputs-file "$tmp/empty.st" --params "$tmp/w.st"
err "weights left unbound without --params" "@main takes 2 parameter tensor(s) after its 1 input(s) (num_input): give them with --params" \
  "$tmp/m.plir" --inputs-file "$tmp/x_plir.st"
err "--inputs and --inputs-file together" "give either --inputs or --params/--inputs-file" \
  "$tmp/m.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w.st" --inputs zeros
printf 'not safetensors' > "$tmp/junk.st"
err "a malformed inputs file is named" "junk.st" "$tmp/m.plir" --inputs-file "$tmp/junk.st" --params "$tmp/w.st"
err "a missing inputs file is named" "nosuch.st" "$tmp/m.plir" --inputs-file "$tmp/nosuch.st" --params "$tmp/w.st"
sed 's/num_input = 1, //' "$tmp/m.plir" > "$tmp/m3.plir"
err "--params with --inputs-file needs num_input" "no num_input attribute" \
  "$tmp/m3.plir" --inputs-file "$tmp/x_plir.st" --params "$tmp/w.st"

# --- Sizes are checked before anything is allocated (hostile round R8, R9).
# A tensor in a weights file larger than --max-tensor-bytes: refused naming
# the file and the tensor, before the buffer exists (a sparse 5 GiB file
# under an address-space cap of 1 GB once ended in std::bad_alloc).
sparse_st() {  # sparse_st FILE ELEMENTS: one F32 tensor "w" of ELEMENTS, all holes
  local json="{\"w\":{\"dtype\":\"F32\",\"shape\":[$2],\"data_offsets\":[0,$(($2 * 4))]}}"
  python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<Q", int(sys.argv[1])))' \
    "${#json}" > "$1"
  printf '%s' "$json" >> "$1"
  truncate -s $((8 + ${#json} + $2 * 4)) "$1"
}
printf 'def @main(%%w: Tensor[(n,), float32]) -> Tensor[(n,), float32] {\n  %%w\n}\n' > "$tmp/sym.plir"
# The 5 GiB cases run under a 3 GB address space, so that reading before the
# size check would fail; AddressSanitizer's shadow memory needs more than
# that to start, so under ASan they run without the cap (the size checks
# and messages are the same).
cap=(prlimit --as=3000000000)
[ -n "${ASAN_OPTIONS:-}" ] && cap=()
if command -v python3 > /dev/null; then
  sparse_st "$tmp/big.st" 1000000
  err "--params: a tensor over --max-tensor-bytes is named, not read" \
    "big.st: tensor .w. has 4000000 bytes, more than the limit of 1000000 bytes (--max-tensor-bytes)" \
    "$tmp/sym.plir" --params "$tmp/big.st" --max-tensor-bytes 1000000
  "$run" "$tmp/sym.plir" --params "$tmp/big.st" > /dev/null 2> "$tmp/err"; rc=$?
  check "--params: under the default limit the same file reads (rc=$rc)" '[ $rc -eq 0 ]'
  sparse_st "$tmp/huge.st" $((5 << 28))  # 5 GiB of F32
  "${cap[@]}" "$run" "$tmp/sym.plir" --params "$tmp/huge.st" --max-tensor-bytes 1000000 \
    > /dev/null 2> "$tmp/err"; rc=$?
  check "--params: a 5 GiB tensor under a 3 GB address space is refused by size (rc=$rc)" \
    '[ $rc -eq 1 ] && grep -q "huge.st: tensor .w. has 5368709120 bytes, more than the limit" "$tmp/err" && ! grep -q bad_alloc "$tmp/err"'
  err "--inputs-file: the same limit" "big.st: tensor .w. has 4000000 bytes, more than the limit" \
    "$tmp/sym.plir" --inputs-file "$tmp/big.st" --max-tensor-bytes 1000000
else
  echo "SKIP: the weights-file size checks need python3 to write the header length"
fi
# --inputs file: of the wrong size is refused by its size, before it is read.
printf 'def @main(%%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  %%x\n}\n' > "$tmp/two.plir"
truncate -s $((5 << 30)) "$tmp/huge.bin"
start=$(date +%s%N)
"${cap[@]}" "$run" "$tmp/two.plir" --inputs "file:$tmp/huge.bin" > /dev/null 2> "$tmp/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--inputs file: a 5 GiB file for 8 bytes is refused by its size at once (rc=$rc, ${ms} ms)" \
  '[ $rc -eq 1 ] && grep -q "huge.bin has 5368709120 bytes; Tensor\[(2,), float32\] needs 8" "$tmp/err" && [ $ms -lt 5000 ]'
rm -f "$tmp/huge.bin" "$tmp/huge.st"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40' > "$tmp/two.bin"
"$run" "$tmp/two.plir" --inputs "file:$tmp/two.bin" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "--inputs file: of the right size reads (rc=$rc)" '[ $rc -eq 0 ] && grep -q "first: 1 2" "$tmp/out"'
rc=0; head -c 100000000 /dev/zero | "$run" "$tmp/two.plir" --inputs file:/dev/stdin > /dev/null 2> "$tmp/err" || rc=$?
check "--inputs file: a pipe with more bytes stops reading past the size (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "has more than 8 bytes; Tensor\[(2,), float32\] needs 8" "$tmp/err"'

# --- --save-outputs to a FIFO nobody reads is refused at once, before the
# run (hostile round R11; plir-opt's -o does the same, O10); one with a
# reader is written, like a device.
mkfifo "$tmp/fifo"
start=$(date +%s%N)
timeout -s KILL 20 "$run" "$tmp/two.plir" --inputs ones --save-outputs "$tmp/fifo" > /dev/null 2> "$tmp/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--save-outputs FIFO without a reader: exit 1 at once, said why (rc=$rc, ${ms} ms)" \
  '[ $rc -eq 1 ] && grep -q "fifo: is a FIFO that no process has open for reading" "$tmp/err" && [ $ms -lt 5000 ]'
timeout -s KILL 20 "$run" "$tmp/two.plir" --inputs ones --timeout 30 --save-outputs "$tmp/fifo" > /dev/null 2> "$tmp/err"; rc=$?
check "--save-outputs FIFO without a reader, supervised: the same (rc=$rc)" \
  '[ $rc -eq 1 ] && grep -q "is a FIFO that no process has open for reading" "$tmp/err"'
write_to_fifo "$tmp/fifo" "$tmp/from_fifo" "$tmp/err" \
  timeout 20 "$run" "$tmp/two.plir" --inputs ones --save-outputs "$tmp/fifo" > /dev/null
check "--save-outputs FIFO with a reader: written (rc=$rc)" \
  '[ $rc -eq 0 ] && [ "$(header "$tmp/from_fifo")" != "" ] && header "$tmp/from_fifo" | grep -q "\"0\""'

exit $fail
