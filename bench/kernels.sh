#!/usr/bin/env bash
# The fast kernels, measured: conv2d and sgemm GFLOP/s (PLIR reference,
# PLIR fast path, PyTorch on the same shapes, the machine's peak), then
# whole plir-run processes on a ResNet-50 bottleneck block and on ResNet-50
# against PyTorch's forward time, all in this one run.
#
#   bench/kernels.sh          RUNS=N (default 3) plir-run runs per model (median)
#
# The models come from bench/kernels_models.py (torchvision, weights=None,
# exported to ONNX; PyTorch timed there with torch.set_num_threads(2));
# plir-import-onnx imports them, bench/add_input.py puts a seeded input
# with the weights, and plir-run --threads 2 --params runs @main (the whole
# process: parse, weights read, run, result printed), with the fast paths
# and, for the block, with PLIR_REFERENCE_KERNELS=1 (the reference loops).
# Files go to a temporary directory, deleted at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-3}"
work=$(mktemp -d "${TMPDIR:-/tmp}/plir-kernels.XXXXXX")
trap 'rm -rf "$work"' EXIT

bazel build -c opt //bench:kernels_bench //cli:plir-run //frontends/onnx:plir-import-onnx \
  2> "$work/build.log" || { cat "$work/build.log"; exit 1; }
bin="$(bazel info -c opt bazel-bin 2> /dev/null)"

echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ);" \
  "build -c opt; OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2> /dev/null)."
echo
"$bin/bench/kernels_bench" --benchmark_format=json > "$work/kernels.json" 2> "$work/bench.log" ||
  { cat "$work/bench.log"; exit 1; }
/usr/bin/python3 bench/kernels_report.py "$work/kernels.json"
echo

/usr/bin/python3 bench/kernels_models.py --out "$work" > "$work/models.jsonl" 2> "$work/export.log" ||
  { cat "$work/export.log"; exit 1; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# run_plir MODEL [ENV...]: median wall seconds of $runs whole plir-run processes.
run_plir() {
  local m=$1 t
  shift
  for ((i = 0; i < runs; i++)); do
    env "$@" /usr/bin/time -f "%e" -o "$work/time" "$bin/cli/plir-run" "$work/$m.plir" \
      --threads 2 --params "$work/${m}_all.safetensors" > "$work/run.log" 2>&1 ||
      { cat "$work/run.log"; exit 1; }
    cat "$work/time"
  done | median
}
echo "| model | plir-run reference s | plir-run fast s | PyTorch forward s | fast / PyTorch |"
echo "|---|---:|---:|---:|---:|"
for m in block resnet50; do
  case $m in
    block) shape=1,256,56,56 ;;
    resnet50) shape=1,3,224,224 ;;
  esac
  "$bin/frontends/onnx/plir-import-onnx" "$work/$m.onnx" -o "$work/$m.plir" \
    --weights "$work/$m.safetensors" 2> "$work/import.log" || { cat "$work/import.log"; exit 1; }
  /usr/bin/python3 bench/add_input.py "$work/$m.safetensors" x "$shape" "$work/${m}_all.safetensors"
  fast=$(run_plir "$m")
  ref=""
  if [ "$m" = block ]; then ref=$(runs=1 run_plir "$m" PLIR_REFERENCE_KERNELS=1); fi
  torch=$(/usr/bin/python3 -c "import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['model'] == sys.argv[2]: print(r['torch_seconds'])" "$work/models.jsonl" "$m")
  awk -v m="$m" -v r="$ref" -v f="$fast" -v t="$torch" \
    'BEGIN { printf "| %s | %s | %.2f | %.3f | %.1f |\n", m, r, f, t, f / t }'
done
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
