#!/usr/bin/env bash
# One real model end to end against PyTorch:
#   model_test.sh NAME EXPORT_PY IMPORT RUN OPT COMPARE PIPELINE
# exports NAME with seeded random weights (tools/export_models.py on
# /usr/bin/python3), imports it (plir-import-onnx), runs @main with
# plir-run, optimizes with PIPELINE (O2 + FuseOps) and runs again, and
# compares both results with PyTorch's elementwise (compare-outputs:
# |got-exp| <= 1e-3*|exp| + 1e-4*max|exp|). Each step's time is printed.
set -uo pipefail
name="$1" export_py="$2" import="$3" run="$4" opt="$5" compare="$6" pipeline="$7"
tmp="${TEST_TMPDIR:-$(mktemp -d)}/$name"
mkdir -p "$tmp"
fail=0
step() {  # step WHAT CMD...: runs CMD, prints its time, stops the test on failure
  local what="$1" t0 rc
  shift
  t0=$(date +%s%N)
  "$@" > "$tmp/step.log" 2>&1; rc=$?
  grep -v -e "^peak" -e "Warning" -e "warnings.warn" -e "^ *assert condition" "$tmp/step.log" | tail -n 20
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf "time: %s: %d.%01d s\n" "$what" $((ms / 1000)) $((ms % 1000 / 100))
  if [ $rc -ne 0 ]; then echo "FAIL: $what (exit $rc)"; exit 1; fi
}

step "export $name from PyTorch" /usr/bin/python3 "$export_py" --model "$name" --out "$tmp"
step "import" "$import" "$tmp/model.onnx" -o "$tmp/model.plir" --weights "$tmp/weights.safetensors"
step "plir-run (imported)" "$run" "$tmp/model.plir" --inputs-file "$tmp/input.safetensors" \
  --params "$tmp/weights.safetensors" --save-outputs "$tmp/got.safetensors"
step "plir-opt (O2 + FuseOps)" "$opt" "$tmp/model.plir" --pipeline "$pipeline" -o "$tmp/opt.plir"
if ! grep -q "Primitive" "$tmp/opt.plir"; then echo "FAIL: FuseOps made no fused function"; fail=1; fi
step "plir-run (optimized)" "$run" "$tmp/opt.plir" --inputs-file "$tmp/input.safetensors" \
  --params "$tmp/weights.safetensors" --save-outputs "$tmp/got_opt.safetensors"

for which in got got_opt; do
  "$compare" "$tmp/$which.safetensors" "$tmp/expected.safetensors" --label "$name $which"; rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: $name $which differs from PyTorch"; fail=1; fi
done
exit $fail
