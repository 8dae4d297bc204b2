#!/usr/bin/env bash
# Whole plir-run processes of several builds and PyTorch's forward, interleaved
# round by round on one model, for a loaded machine where separate runs are
# not comparable.
#
#   bench/models_interleaved.sh DIR ROUNDS BIN_DIR...
#
# DIR is tools/export_models.py's output directory for a torchvision model
# (mobilenet_v2 or resnet50) after `plir-import-onnx DIR/model.onnx -o
# DIR/model.plir --weights DIR/weights.safetensors`. Each BIN_DIR holds a
# plir-run. Per round: each plir-run once (--threads 2, OPENBLAS_NUM_THREADS=2;
# wall seconds, user+system CPU seconds and peak RSS from /usr/bin/time), then
# bench/torch_forward.py (a fresh process: the median of 5 forwards after 2
# warm-ups, torch.set_num_threads(2)). Prints one line per run.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
d=$1 rounds=$2
shift 2
model=$(basename "$d")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plir-interleaved.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < rounds; r++)); do
  echo "round $r load $(cut -d' ' -f1 /proc/loadavg)"
  for b in "$@"; do
    OPENBLAS_NUM_THREADS=2 /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$b/plir-run" \
      "$d/model.plir" --threads 2 --inputs-file "$d/input.safetensors" \
      --params "$d/weights.safetensors" --save-outputs "$tmp/got.safetensors" > /dev/null 2>&1 ||
      echo "  $b FAILED"
    read -r e u s rss < "$tmp/time"
    echo "  $b wall $e cpu $(echo "$u + $s" | bc) rss_kb $rss"
  done
  echo "  torch $(/usr/bin/python3 "$here/torch_forward.py" "$model" 5)"
done
