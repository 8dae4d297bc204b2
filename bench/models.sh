#!/usr/bin/env bash
# Real models: plir-run against PyTorch, same machine, same run.
#
#   bench/models.sh [MODEL...]     default: bert mobilenet_v2 resnet50 vit_b_16
#
# For each model: tools/export_models.py exports it (seeded random weights);
# plir-import-onnx imports it; plir-run runs @main on the same input once
# under `/usr/bin/time` (peak RSS) and its outputs are checked against
# PyTorch's (compare-outputs). Then bench/torch_interleaved.py builds the
# same model in PyTorch (torch.set_num_threads(2), eval mode, no_grad) and
# alternates, RUNS rounds (default 9): PyTorch's forward (median of 3), then
# plir-run as a whole process (parse, weights read, run, outputs written),
# with `--threads 2` when plir-run has that option (OPENBLAS_NUM_THREADS=2
# either way). Both sides are measured round by round, because on a shared
# VM the machine's speed drifts between a minute and the next. Prints a
# Markdown table: the medians of plir-run's and PyTorch's seconds, the
# median of the per-round ratios, plir-run's peak RSS, the max abs error.
# Files go to $BENCH_DIR (default /dev/shm, else /tmp) and are deleted at
# the end.
# PLIR_BIN=DIR takes the tools from another build's bazel-bin instead of
# building this worktree's.
set -euo pipefail
cd "$(dirname "$0")/.."
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(bert mobilenet_v2 resnet50 vit_b_16)
runs="${RUNS:-9}"
dir="${BENCH_DIR:-$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo /tmp )}"
work=$(mktemp -d "$dir/plir-models.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -n "${PLIR_BIN:-}" ]; then
  bin="$PLIR_BIN"  # another build's bazel-bin (cli/, frontends/onnx/, models/)
else
  bazel build //cli:plir-run //frontends/onnx:plir-import-onnx //models:compare-outputs \
    2> "$work/build.log" || { cat "$work/build.log"; exit 1; }
  bin="$(bazel info bazel-bin 2> /dev/null)"
fi
run="$bin/cli/plir-run" import="$bin/frontends/onnx/plir-import-onnx"
cmpo="$bin/models/compare-outputs"
threads=()
if "$run" --help | grep -q -- "--threads"; then threads=(--threads 2); fi
export OPENBLAS_NUM_THREADS=2

echo "models: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "plir-run ${threads[*]:-(single-threaded interpreter: no --threads option)}; RUNS=$runs rounds, interleaved with PyTorch"
echo
echo "| model | plir-run s (whole process) | PyTorch forward s (2 threads) | ratio plir/torch (median of rounds) | plir-run peak RSS MiB | max abs err vs PyTorch |"
echo "|---|---:|---:|---:|---:|---:|"
for m in "${models[@]}"; do
  d="$work/$m"
  /usr/bin/python3 tools/export_models.py --model "$m" --out "$d" \
    > "$d.export.log" 2>&1 || { cat "$d.export.log"; exit 1; }
  "$import" "$d/model.onnx" -o "$d/model.plir" --weights "$d/weights.safetensors"
  cmd=("$run" "$d/model.plir" "${threads[@]}" --inputs-file "$d/input.safetensors"
    --params "$d/weights.safetensors" --save-outputs "$d/got.safetensors")
  # One run for the peak RSS (/usr/bin/time) and the outputs, checked
  # against PyTorch's below; then the times, PyTorch's forward and the
  # whole plir-run process alternating round by round.
  /usr/bin/time -f "%M" -o "$d.time" "${cmd[@]}" > "$d.run.log" 2>&1 || { cat "$d.run.log"; exit 1; }
  read -r rss < "$d.time"
  /usr/bin/python3 bench/torch_interleaved.py --model "$m" --rounds "$runs" --json "$d/times.json" \
    -- "${cmd[@]}" > "$d.times.log" 2>&1 || { cat "$d.times.log"; exit 1; }
  read -r plir torch ratio < <(/usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1])); \
print(t['plir_seconds_median'], t['torch_seconds_median'], t['ratio_median'])" "$d/times.json")
  err=$( ("$cmpo" "$d/got.safetensors" "$d/expected.safetensors" || true) | sed -n 's/.*max abs err \([^,]*\),.*/\1/p' | head -1)
  awk -v m="$m" -v p="$plir" -v t="$torch" -v q="$ratio" -v r="$rss" -v e="$err" \
    'BEGIN { printf "| %s | %.4f | %.4f | %.2f | %.1f | %s |\n", m, p, t, q, r / 1024, e }'
  rm -rf "$d"
done
