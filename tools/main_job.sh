#!/usr/bin/env bash
# The main job: a real model end to end, as a user would run it.
#
#   tools/main_job.sh [MODEL]     MODEL: mobilenet_v2 (default), resnet50, vit_b_16, bert
#   tools/main_job.sh --build     only build the tools it runs (tools/setup.sh
#                                 builds them while Debian's packages install)
#
# 1. export MODEL from PyTorch with seeded random weights, a seeded input
#    and PyTorch's output (tools/export_models.py, Debian's /usr/bin/python3);
# 2. import it (plir-import-onnx: @main(inputs..., weights...) + a
#    safetensors weights file);
# 3. optimize it with O2 + FuseOps (models/O2-fuse.yaml);
# 4. run the imported and the optimized @main with plir-run and compare both
#    with PyTorch (compare-outputs: |got-exp| <= 1e-3*|exp| + 1e-4*max|exp|);
# 5. lift the weight transform and store the weights in float16, eagerly
#    (LiftTransformParams + CastTransformedParams) and lazily
#    (configs/lazy-params-f16.yaml: each weight loaded on demand and freed
#    after its last use), run both main_transform_params on the weights file,
#    and check that their outputs are byte-identical, that the lazy run
#    peaks at most at plir-run's baseline (the same pipeline on a model of
#    one 1x1 weight) + the largest weight + the largest result + 16 MiB,
#    and the eager run at least at the weights file's size;
# 6. run @main on the float16 weights and compare with PyTorch within
#    float16 tolerance (rtol 1e-2, atol 1e-2*max|exp|);
# and prints a table: time per phase, peak RSS eager vs lazy (the OS's
# figure, /usr/bin/time), max error vs PyTorch, plir-run vs PyTorch time.
# Exits 1 if a check fails. THREADS (default 2) is given to plir-run and to
# PyTorch alike. Files go to a temporary folder, deleted at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(//cli:plir-opt //cli:plir-run //frontends/onnx:plir-import-onnx //models:compare-outputs)
if [ "${1:-}" = "--build" ]; then exec bazel build "${targets[@]}"; fi
model="${1:-mobilenet_v2}"
threads="${THREADS:-2}"
work=$(mktemp -d "${TMPDIR:-/tmp}/plir-main-job.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "main job: $model (threads $threads), files in $work"
bazel build "${targets[@]}" 2> "$work/build.log" || { cat "$work/build.log"; exit 1; }
bin="$(bazel info bazel-bin 2> /dev/null)"
opt="$bin/cli/plir-opt" run="$bin/cli/plir-run" imp="$bin/frontends/onnx/plir-import-onnx"
cmpo="$bin/models/compare-outputs"

rows=()
# phase NAME CMD...: runs CMD under /usr/bin/time; sets secs and rss (KiB).
phase() {
  local name="$1"
  shift
  if ! /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > "$work/phase.log" 2>&1; then
    cat "$work/phase.log"
    echo "main job: FAILED: $name"
    exit 1
  fi
  read -r secs rss < "$work/time.txt"
  rows+=("| $name | $secs s | $(awk "BEGIN { printf \"%.1f\", $rss / 1024 }") MiB |")
}
# maxerr LOG: the largest "max abs" figure compare-outputs printed.
maxerr() { grep -o 'max abs err[a-z]* [0-9.e+-]*' "$1" | awk '{ if ($NF + 0 > m) m = $NF + 0 } END { printf "%.3g", m }'; }
status=0
compare() {  # compare LABEL GOT [compare-outputs options]
  local label="$1" got="$2"
  shift 2
  if "$cmpo" "$got" "$work/expected.safetensors" --label "$label" "$@" > "$work/$label.cmp" 2>&1; then
    verdict=ok
  else
    verdict=FAILED
    status=1
  fi
  cat "$work/$label.cmp"
  errs+=("| $label | $(maxerr "$work/$label.cmp") | $verdict |")
}
errs=()

phase "export from PyTorch (tools/export_models.py)" \
  /usr/bin/python3 tools/export_models.py --model "$model" --out "$work" --time-runs 10
torch_s=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['forward_seconds_median'])" "$work/torch_time.json")
phase "import (plir-import-onnx)" "$imp" "$work/model.onnx" -o "$work/model.plir" --weights "$work/weights.safetensors"
phase "optimize: O2 + FuseOps (plir-opt)" "$opt" "$work/model.plir" --pipeline models/O2-fuse.yaml -o "$work/opt.plir"
phase "plir-run, imported" "$run" "$work/model.plir" --threads "$threads" --inputs-file "$work/input.safetensors" \
  --params "$work/weights.safetensors" --save-outputs "$work/got.safetensors"
phase "plir-run, optimized" "$run" "$work/opt.plir" --threads "$threads" --inputs-file "$work/input.safetensors" \
  --params "$work/weights.safetensors" --save-outputs "$work/got_opt.safetensors"
run_s=$secs
compare imported "$work/got.safetensors"
compare optimized "$work/got_opt.safetensors"

phase "lift + float16 weights, eager form (plir-opt)" "$opt" "$work/model.plir" \
  --passes Normalize,LiftTransformParams,CastTransformedParams -o "$work/eager.plir"
phase "lift + float16 weights, lazy form (plir-opt, configs/lazy-params-f16.yaml)" "$opt" "$work/model.plir" \
  --pipeline configs/lazy-params-f16.yaml -o "$work/lazy.plir"
phase "main_transform_params, eager (plir-run)" "$run" "$work/eager.plir" --entry main_transform_params \
  --params "$work/weights.safetensors" --save-outputs "$work/t_eager.safetensors"
eager_rss=$rss
phase "main_transform_params, lazy (plir-run)" "$run" "$work/lazy.plir" --entry main_transform_params \
  --params "$work/weights.safetensors" --save-outputs "$work/t_lazy.safetensors"
lazy_rss=$rss
if cmp -s "$work/t_eager.safetensors" "$work/t_lazy.safetensors"; then same=yes; else same=NO; status=1; fi
# The lazy run's bound: plir-run's baseline (the same lazy pipeline on a
# model of one 1x1 weight) + the largest weight + the largest result + 16
# MiB; the eager run holds every weight, so it peaks at least at the file.
printf '%s\n' 'def @main(%x: Tensor[(1, 1), float32], %w0: Tensor[(1, 1), float32]) -> Tensor[(1, 1), float32] attrs {num_input = 1} {' \
  '  %t0 = permute_dims(%w0);' '  %p0 = matmul(%x, %t0);' '  %p0' '}' > "$work/tiny.plir"
printf '\x40\0\0\0\0\0\0\0{"w0":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}}       \0\0\x80\x3f' > "$work/tiny.safetensors"
"$opt" "$work/tiny.plir" --pipeline configs/lazy-params-f16.yaml -o "$work/tiny_lazy.plir"
/usr/bin/time -f "%e %M" -o "$work/time.txt" "$run" "$work/tiny_lazy.plir" --entry main_transform_params \
  --params "$work/tiny.safetensors" --save-outputs "$work/tiny_out.safetensors" > "$work/phase.log" 2>&1 ||
  { cat "$work/phase.log"; echo "main job: FAILED: the baseline run"; exit 1; }
read -r _ base_rss < "$work/time.txt"
# largest FILE: the byte size of the largest tensor in a safetensors file.
largest() {
  /usr/bin/python3 -c 'import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]
print(max(e[1] - e[0] for k, v in json.loads(f.read(n)).items() if k != "__metadata__" for e in [v["data_offsets"]]))' "$1"
}
lazy_bound=$(( base_rss * 1024 + $(largest "$work/weights.safetensors") + $(largest "$work/t_lazy.safetensors") + (16 << 20) ))
weights_bytes=$(stat -c %s "$work/weights.safetensors")
if [ $((lazy_rss * 1024)) -le "$lazy_bound" ]; then lazy_ok=yes; else lazy_ok=NO; status=1; fi
if [ $((eager_rss * 1024)) -ge "$weights_bytes" ]; then eager_ok=yes; else eager_ok=NO; status=1; fi
phase "plir-run @main on the float16 weights" "$run" "$work/eager.plir" --threads "$threads" \
  --inputs-file "$work/input.safetensors" --params "$work/t_eager.safetensors" --save-outputs "$work/got16.safetensors"
compare float16-weights "$work/got16.safetensors" --rtol 1e-2 --atol-frac 1e-2

mib() { awk "BEGIN { printf \"%.1f\", $1 / 1048576 }"; }
echo
echo "| phase | time | peak RSS |"
echo "|---|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "| result vs PyTorch | max abs error | within tolerance |"
echo "|---|---:|---|"
printf '%s\n' "${errs[@]}"
echo
echo "weights file $(mib "$weights_bytes") MiB; float16 weights $(mib "$(stat -c %s "$work/t_eager.safetensors")") MiB;" \
  "peak RSS eager $(mib $((eager_rss * 1024))) MiB vs lazy $(mib $((lazy_rss * 1024))) MiB; eager and lazy outputs byte-identical: $same"
echo "lazy peak $(mib $((lazy_rss * 1024))) MiB <= baseline $(mib $((base_rss * 1024))) MiB + largest weight + largest result + 16 MiB" \
  "= $(mib "$lazy_bound") MiB: $lazy_ok; eager peak >= weights file: $eager_ok"
echo "plir-run (optimized, whole process) $run_s s vs PyTorch forward $(printf '%.4f' "$torch_s") s (median of 10, $threads threads):" \
  "ratio $(awk "BEGIN { printf \"%.1f\", $run_s / $torch_s }")"
[ $status -eq 0 ] && echo "main job: all checks passed" || echo "main job: FAILED (see above)"
exit $status
