#!/usr/bin/env bash
# Real models: plir-run against PyTorch, same machine, same run.
#
#   bench/models.sh [MODEL...]     default: bert mobilenet_v2 resnet50 vit_b_16
#
# For each model: tools/export_models.py exports it (seeded random weights)
# and times PyTorch's forward pass in that process (torch.set_num_threads(2),
# eval mode, no_grad; median of TORCH_RUNS runs after 2 warm-ups, default 5);
# plir-import-onnx imports it; plir-run runs @main on the same input as a
# whole process (`/usr/bin/time`: parse, weights read, run, outputs written),
# RUNS times (default 1; the median is reported), with `--threads 2` when
# plir-run has that option (OPENBLAS_NUM_THREADS=2 either way); the outputs
# are checked against PyTorch's (compare-outputs). Prints a Markdown table:
# plir-run seconds, PyTorch seconds, the ratio, plir-run's peak RSS. Files go
# to $BENCH_DIR (default /dev/shm, else /tmp) and are deleted at the end.
# PLIR_BIN=DIR takes the tools from another build's bazel-bin instead of
# building this worktree's.
set -euo pipefail
cd "$(dirname "$0")/.."
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(bert mobilenet_v2 resnet50 vit_b_16)
runs="${RUNS:-1}" torch_runs="${TORCH_RUNS:-5}"
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
  "plir-run ${threads[*]:-(single-threaded interpreter: no --threads option)}; RUNS=$runs TORCH_RUNS=$torch_runs"
echo
echo "| model | plir-run s (whole process) | PyTorch forward s (2 threads) | ratio plir/torch | plir-run peak RSS MiB | max abs err vs PyTorch |"
echo "|---|---:|---:|---:|---:|---:|"
for m in "${models[@]}"; do
  d="$work/$m"
  /usr/bin/python3 tools/export_models.py --model "$m" --out "$d" --time-runs "$torch_runs" \
    > "$d.export.log" 2>&1 || { cat "$d.export.log"; exit 1; }
  "$import" "$d/model.onnx" -o "$d/model.plir" --weights "$d/weights.safetensors"
  times=()
  rss=0
  for ((i = 0; i < runs; i++)); do
    # Wall time from bash's microsecond clock around the process
    # (/usr/bin/time's %e has 10 ms steps, coarse against a 10 ms forward);
    # peak RSS from /usr/bin/time.
    start=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$d.time" "$run" "$d/model.plir" "${threads[@]}" \
      --inputs-file "$d/input.safetensors" --params "$d/weights.safetensors" \
      --save-outputs "$d/got.safetensors" > "$d.run.log" 2>&1 || { cat "$d.run.log"; exit 1; }
    end=$EPOCHREALTIME
    read -r r < "$d.time"
    times+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f", e - s }')")
    rss=$r
  done
  plir=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  torch=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['forward_seconds_median'])" "$d/torch_time.json")
  err=$( ("$cmpo" "$d/got.safetensors" "$d/expected.safetensors" || true) | sed -n 's/.*max abs err \([^,]*\),.*/\1/p' | head -1)
  awk -v m="$m" -v p="$plir" -v t="$torch" -v r="$rss" -v e="$err" \
    'BEGIN { printf "| %s | %.4f | %.4f | %.2f | %.1f | %s |\n", m, p, t, p / t, r / 1024, e }'
  rm -rf "$d"
done
