#!/usr/bin/env bash
# Runs each ready pipeline with plir-opt on the sample models and checks what
# each level must do. plir-opt finds the in-tree plugins next to itself.
set -uo pipefail
opt="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
model=examples/models/mlp_with_constants.plir

for level in O0 O1 O2; do
  "$opt" "$model" --pipeline configs/$level.yaml --check-input-unchanged -o "$tmp/$level.plir" 2> "$tmp/$level.err"; rc=$?
  cat "$tmp/$level.err"
  check "$level runs on $model" '[ $rc -eq 0 ]'
  "$opt" "$tmp/$level.plir" > /dev/null; rc=$?
  check "$level output parses and verifies" '[ $rc -eq 0 ]'
  "$opt" examples/models/small_cnn.plir --pipeline configs/$level.yaml > /dev/null; rc=$?
  check "$level runs on small_cnn.plir" '[ $rc -eq 0 ]'
done
# O0 only normalizes: no nested call remains, nothing is removed.
check "O0 normalizes" '! grep -q "multiply(subtract" "$tmp/O0.plir" && grep -q "%unused" "$tmp/O0.plir"'
# O1 also removes dead code and copies.
check "O1 removes dead code" '! grep -q "%unused" "$tmp/O1.plir" && ! grep -q "%copy" "$tmp/O1.plir"'
check "O1 does not fold" 'grep -q "divide(" "$tmp/O1.plir"'
# O2 folds constants and merges the duplicate.
check "O2 folds constants" '! grep -q "divide(" "$tmp/O2.plir" && grep -q "\[0.5, 0.5, 0.5, 0.5\]" "$tmp/O2.plir"'
check "O2 merges the duplicate matmul" '[ $(grep -c "matmul(" "$tmp/O2.plir") -eq 2 ]'
check "O2 removes dead code" '! grep -q "nn.softmax(%h" "$tmp/O2.plir"'
# The canonical YAML of O2 loads back to the same pipeline.
"$opt" --pipeline configs/O2.yaml --emit-pipeline > "$tmp/O2.canonical.yaml"
"$opt" --pipeline "$tmp/O2.canonical.yaml" --emit-pipeline > "$tmp/O2.again.yaml" 2> "$tmp/e"; rc=$?
cat "$tmp/e"
check "O2 canonical YAML is a fixed point" '[ $rc -eq 0 ] && diff <(grep -v plugin_path "$tmp/O2.canonical.yaml") <(grep -v plugin_path "$tmp/O2.again.yaml")'

# lazy-params: lift, then lazy, then cleanup; executing the eager (lifted)
# and the lazy transform_params gives the same tensors.
run="$2"
m=examples/models/conv_weights_layout.plir
"$opt" "$m" --pipeline configs/lazy-params.yaml -o "$tmp/lazy.plir"; rc=$?
check "lazy-params runs on $m" '[ $rc -eq 0 ] && grep -q "call_packed(\"get_item\", 0" "$tmp/lazy.plir" && grep -q "vm.kill_object" "$tmp/lazy.plir"'
"$opt" "$m" --passes Normalize,LiftTransformParams -o "$tmp/lifted.plir"; rc=$?
check "lift alone runs" '[ $rc -eq 0 ]'
"$run" "$tmp/lifted.plir" --entry main_transform_params --inputs random:3 > "$tmp/eager.out"; rc1=$?
T="Tensor[(8, 8, 3, 3), float32];Tensor[(8, 8, 3, 3), float32];Tensor[(8, 1, 1, 1), float32]"
"$run" "$tmp/lazy.plir" --entry main_transform_params --lazy-param-types "$T" --lazy-params random:3 > "$tmp/lazy.out"; rc2=$?
cat "$tmp/eager.out" "$tmp/lazy.out"
check "eager and lazy runs succeed" '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]'
check "eager and lazy outputs are equal" 'diff <(grep -o "checksum [0-9a-f]*" "$tmp/eager.out") <(grep -o "checksum [0-9a-f]*" "$tmp/lazy.out")'

# lazy-params-f16: the same with the lifted weights stored in float16; the
# eager form (lift, cast) and the lazy form give the same float16 tensors.
"$opt" "$m" --pipeline configs/lazy-params-f16.yaml -o "$tmp/lazy16.plir"; rc=$?
check "lazy-params-f16 runs on $m" '[ $rc -eq 0 ] && grep -q "astype(.*float16" "$tmp/lazy16.plir" && grep -q "vm.kill_object" "$tmp/lazy16.plir"'
"$opt" "$m" --passes Normalize,LiftTransformParams,CastTransformedParams -o "$tmp/lifted16.plir"; rc=$?
check "lift + cast runs" '[ $rc -eq 0 ]'
"$run" "$tmp/lifted16.plir" --entry main_transform_params --inputs random:3 > "$tmp/eager16.out"; rc1=$?
"$run" "$tmp/lazy16.plir" --entry main_transform_params --lazy-param-types "$T" --lazy-params random:3 > "$tmp/lazy16.out"; rc2=$?
cat "$tmp/eager16.out" "$tmp/lazy16.out"
check "eager and lazy float16 runs succeed" '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q float16 "$tmp/eager16.out"'
check "eager and lazy float16 outputs are equal" 'diff <(grep -o "checksum [0-9a-f]*" "$tmp/eager16.out") <(grep -o "checksum [0-9a-f]*" "$tmp/lazy16.out")'
check "float16 outputs differ from float32 ones" '! diff -q <(grep -o "checksum [0-9a-f]*" "$tmp/eager.out") <(grep -o "checksum [0-9a-f]*" "$tmp/eager16.out") > /dev/null'
exit $fail
