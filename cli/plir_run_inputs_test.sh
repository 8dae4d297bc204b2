#!/usr/bin/env bash
# plir-run on imported models: --inputs-file binds the first num_input
# parameters (by PLIR name, by the ONNX name in onnx_names, else by position
# in the order of the tensors' data), --params the rest; --save-outputs
# names the result tensors by onnx_outputs (a tuple flattened); a file that
# does not match is an error naming the tensor, and nothing is written.
#   plir_run_inputs_test.sh PLIR_RUN
set -uo pipefail
run="$1"
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

exit $fail
