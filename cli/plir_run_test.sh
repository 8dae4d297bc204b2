#!/usr/bin/env bash
# End-to-end checks of plir-run: weights from safetensors (eager and lazy,
# by name and by index), outputs to safetensors byte-identical between the
# two forms, clear errors for bad weights, and kernels from a plugin.
#   plir_run_test.sh PLIR_RUN PLIR_OPT MAKE_WEIGHTS KERNELS_PLUGIN
set -uo pipefail
run="$1"; opt="$2"; mk="$3"; plugin="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

"$mk" --count 5 --dim 16 --weights "$tmp/w.safetensors" --model "$tmp/m.plir"
"$opt" "$tmp/m.plir" --passes ToBasicBlockNormalForm,LiftTransformParams -o "$tmp/eager.plir"
"$opt" "$tmp/m.plir" --pipeline configs/lazy-params.yaml -o "$tmp/lazy.plir" 2> /dev/null
check "lazy form made" 'grep -q get_item "$tmp/lazy.plir"'

"$run" "$tmp/eager.plir" --entry main_transform_params --params "$tmp/w.safetensors" \
  --save-outputs "$tmp/eager.out" > "$tmp/eager.log" 2>&1; rc=$?
check "eager run (rc=$rc)" '[ $rc -eq 0 ] && grep -q "5 tensors written" "$tmp/eager.log"'
check "eager binds by name" 'grep -q "read 5 parameters from .* by name" "$tmp/eager.log"'
"$run" "$tmp/lazy.plir" --entry main_transform_params --params "$tmp/w.safetensors" \
  --save-outputs "$tmp/lazy.out" > "$tmp/lazy.log" 2>&1; rc=$?
check "lazy run (rc=$rc)" '[ $rc -eq 0 ] && grep -q "5 tensors written" "$tmp/lazy.log"'
check "lazy get_item reads on demand by name" 'grep -q "get_item reads .* on demand, by name" "$tmp/lazy.log"'
check "eager and lazy outputs byte-identical" 'cmp "$tmp/eager.out" "$tmp/lazy.out"'
check "both report peak RSS and the counter" 'grep -q "peak RSS (getrusage)" "$tmp/lazy.log" && grep -q "peak live bytes" "$tmp/eager.log"'
# The lazy counter holds about one weight pair (2 x 1 KiB), the eager one all.
lazy_peak=$(sed -n 's/peak live bytes (interpreter counter): //p' "$tmp/lazy.log")
eager_peak=$(sed -n 's/peak live bytes (interpreter counter): //p' "$tmp/eager.log")
check "lazy counter $lazy_peak <= 2 weights, eager $eager_peak >= 5" '[ "$lazy_peak" -le 2048 ] && [ "$eager_peak" -ge 5120 ]'

# The outputs are the transposed weights: output j's first row is weight j's first column.
"$run" "$tmp/eager.plir" --entry main_transform_params --params "$tmp/w.safetensors" > "$tmp/print.log" 2>&1
"$run" "$tmp/lazy.plir" --entry main_transform_params --params "$tmp/w.safetensors" > "$tmp/lprint.log" 2>&1
check "printed checksums agree" 'diff <(grep -o "checksum [0-9a-f]*" "$tmp/print.log") <(grep -o "checksum [0-9a-f]*" "$tmp/lprint.log")'

# By index when the names do not match.
"$mk" --count 5 --dim 16 --prefix q --weights "$tmp/q.safetensors"
"$run" "$tmp/lazy.plir" --entry main_transform_params --params "$tmp/q.safetensors" \
  --save-outputs "$tmp/q.out" > "$tmp/q.log" 2>&1; rc=$?
check "lazy binds by index when names differ" '[ $rc -eq 0 ] && grep -q "by index in file order" "$tmp/q.log"'
check "same data, same outputs" 'cmp "$tmp/q.out" "$tmp/lazy.out"'

# Errors: too few weights, wrong dtype, truncated file, missing name; no output written.
"$mk" --count 3 --dim 16 --prefix q --weights "$tmp/few.safetensors"
"$run" "$tmp/eager.plir" --entry main_transform_params --params "$tmp/few.safetensors" \
  --save-outputs "$tmp/never.out" 2> "$tmp/err"; rc=$?
check "eager: too few weights exits 1" '[ $rc -eq 1 ] && grep -q "takes 5 tensors but the file has 3, and no tensor is named .w0." "$tmp/err"'
check "nothing written on error" '[ ! -e "$tmp/never.out" ]'
"$run" "$tmp/lazy.plir" --entry main_transform_params --params "$tmp/few.safetensors" \
  --save-outputs "$tmp/never.out" 2> "$tmp/err"; rc=$?
check "lazy: get_item past the file exits 1" '[ $rc -eq 1 ] && grep -q "get_item(3): .*few.safetensors has only 3 tensors" "$tmp/err"'
check "nothing written on a failed lazy run" '[ ! -e "$tmp/never.out" ] && [ -z "$(ls -A "$tmp" | grep -e spool -e never)" ]'
"$mk" --count 5 --dim 16 --dtype int32 --weights "$tmp/int.safetensors"
"$run" "$tmp/eager.plir" --entry main_transform_params --params "$tmp/int.safetensors" 2> "$tmp/err"; rc=$?
check "wrong dtype names tensor and parameter" '[ $rc -eq 1 ] && grep -q "int.safetensors: tensor .w0. is int32\[16, 16\], but parameter w0 is Tensor\[(16, 16), float32\]" "$tmp/err"'
"$run" "$tmp/lazy.plir" --entry main_transform_params --params "$tmp/w.safetensors" \
  --lazy-param-types "Tensor[(16, 8), float32]" 2> "$tmp/err"; rc=$?
check "lazy: declared type checked" '[ $rc -eq 1 ] && grep -q "tensor .w0. is float32\[16, 16\], but get_item(0)" "$tmp/err"'
head -c 1000 "$tmp/w.safetensors" > "$tmp/trunc.safetensors"
"$run" "$tmp/lazy.plir" --entry main_transform_params --params "$tmp/trunc.safetensors" 2> "$tmp/err"; rc=$?
check "truncated file is refused up front" '[ $rc -eq 1 ] && grep -q "trunc.safetensors: tensor .w[0-9]*.: data_offsets .* run past the end of the data" "$tmp/err"'
"$run" "$tmp/m.plir" --params "$tmp/w.safetensors" 2> "$tmp/err"; rc=$?
check "main: %x is not in the file" '[ $rc -eq 1 ] && grep -q "no tensor is named .x." "$tmp/err"'

# Kernels from a plugin: an op with a kernel and an extern kernel.
cat > "$tmp/k.plir" <<'PLIR'
extern @test_negate(%a: Tensor[(3,), float32]) -> Tensor[(3,), float32]
def @main(%x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
  %a = test.square(%x);
  %b = call_tir(@test_negate, (%a,), sinfo_args=[Tensor[(3,), float32]]);
  %c = add(%b, const<Tensor[(3,), float32]>[0.5, 0.5, 0.5]);
  %c
}
PLIR
"$run" "$tmp/k.plir" --inputs ones --plugin "$plugin" > "$tmp/k.log" 2>&1; rc=$?
check "plugin op and extern run (rc=$rc)" '[ $rc -eq 0 ] && grep -q "first: -0.5 -0.5 -0.5" "$tmp/k.log"'
"$run" "$tmp/k.plir" --inputs ones > /dev/null 2> "$tmp/err"; rc=$?
check "without the plugin: unknown op" '[ $rc -eq 1 ] && grep -q "unknown op .test.square." "$tmp/err"'
printf 'extern @test_negate(%%a: Tensor[(3,), float32]) -> Tensor[(3,), float32]\ndef @main(%%x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {\n  call_tir(@test_negate, (%%x,), sinfo_args=[Tensor[(3,), float32]])\n}\n' > "$tmp/e.plir"
"$run" "$tmp/e.plir" --inputs ones > /dev/null 2> "$tmp/err"; rc=$?
check "without the plugin: no kernel for the extern" '[ $rc -eq 1 ] && grep -q "no kernel registered for extern @test_negate" "$tmp/err"'
# FoldConstant asks the op for its kernel: the plugin's op folds.
printf 'def @main() -> Tensor[(2,), int64] {\n  dataflow {\n    %%s = test.square(const<Tensor[(2,), int64]>[3, 3037000499]);\n    output %%s;\n  }\n  %%s\n}\n' > "$tmp/f.plir"
"$opt" "$tmp/f.plir" --plugin "$plugin" --passes FoldConstant > "$tmp/f.out" 2>&1; rc=$?
check "FoldConstant folds a plugin op exactly (rc=$rc)" '[ $rc -eq 0 ] && grep -q "\[9, 9223372030926249001\]" "$tmp/f.out"'
printf 'def @main() -> Tensor[(1,), int64] {\n  dataflow {\n    %%s = test.square(const<Tensor[(1,), int64]>[3037000500]);\n    output %%s;\n  }\n  %%s\n}\n' > "$tmp/o.plir"
"$opt" "$tmp/o.plir" --plugin "$plugin" --passes FoldConstant > "$tmp/o.out" 2>&1; rc=$?
check "an overflowing fold is left alone" '[ $rc -eq 0 ] && grep -q "test.square" "$tmp/o.out"'
"$run" "$tmp/o.plir" --plugin "$plugin" > /dev/null 2> "$tmp/err"; rc=$?
check "and fails cleanly at run time" '[ $rc -eq 1 ] && grep -q "test.square: overflow" "$tmp/err"'

# --save-outputs replaces a file as plir-opt's -o does (hostile round R5, R6,
# R7): the mode is kept, a symlink is followed (the link stays, its target
# gets the outputs), and no temporary file is left beside it.
printf '#[version = "1"]\ndef @main(%%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n  add(%%x, %%x)\n}\n' > "$tmp/twice.plir"
mkdir -p "$tmp/so" && echo OLD > "$tmp/so/mode.st" && chmod 600 "$tmp/so/mode.st"
"$run" "$tmp/twice.plir" --inputs ones --save-outputs "$tmp/so/mode.st" > /dev/null 2>&1; rc=$?
check "--save-outputs keeps a 0600 file's mode (rc=$rc)" \
  '[ $rc -eq 0 ] && [ "$(stat -c %a "$tmp/so/mode.st")" = 600 ] && [ "$(head -c 3 "$tmp/so/mode.st")" != OLD ]'
echo OLD > "$tmp/so/target.st" && ln -sf target.st "$tmp/so/link.st"
"$run" "$tmp/twice.plir" --inputs ones --save-outputs "$tmp/so/link.st" > /dev/null 2>&1; rc=$?
check "--save-outputs follows a symlink (rc=$rc)" \
  '[ $rc -eq 0 ] && [ -L "$tmp/so/link.st" ] && cmp -s "$tmp/so/target.st" "$tmp/so/mode.st"'
check "--save-outputs leaves no temporary file" '[ "$(ls -A "$tmp/so" | sort | tr "\n" " ")" = "link.st mode.st target.st " ]'

exit $fail
