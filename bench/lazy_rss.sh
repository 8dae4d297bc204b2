#!/usr/bin/env bash
# Lazy parameters on a real weights file, measured by the operating system.
#
#   bench/lazy_rss.sh [COUNT [DIM]]      default: 64 weights of 2048x2048 float32 (16 MiB each, 1 GiB)
#
# Generates a safetensors weights file and the model that transposes each
# weight (bench/make_weights), builds the eager form (LiftTransformParams)
# and the lazy form (configs/lazy-params.yaml) with plir-opt, runs both
# with `plir-run --params W --save-outputs OUT`, and reports for each the
# peak RSS of the process (getrusage ru_maxrss, as /usr/bin/time -v shows
# it) and the interpreter's peak-live-bytes counter, the baseline RSS of
# plir-run on a one-weight 1x1 model, and whether the two output files are
# byte-identical. Files go to $BENCH_DIR (default /dev/shm, else /tmp) and
# are deleted at the end. BENCH_MODE picks Bazel's compilation mode (default
# opt; tools/setup.sh uses fastbuild, which `bazel test` shares). Exit
# status 1 if a goal is missed:
#   lazy peak RSS <= baseline + one weight pair (weight + its transpose)
#     + 1 MiB (the bigger model's own bookkeeping; the figures are printed
#     exactly, the slack only keeps the verdict from flapping on noise),
#   eager peak RSS >= the weights file, outputs identical.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-64}"
dim="${2:-2048}"
dir="${BENCH_DIR:-$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo /tmp )}"
work=$(mktemp -d "$dir/plir-lazy-rss.XXXXXX")
trap 'rm -rf "$work"' EXIT

mode="${BENCH_MODE:-opt}"
bazel build -c "$mode" //cli:plir-opt //cli:plir-run //bench:make_weights 2> "$work/build.log" \
  || { cat "$work/build.log"; exit 1; }
bin="$(bazel info -c "$mode" bazel-bin 2> /dev/null)"
opt="$bin/cli/plir-opt"; run="$bin/cli/plir-run"; mk="$bin/bench/make_weights"

weight_bytes=$((dim * dim * 4))
echo "lazy_rss: $count weights of ${dim}x${dim} float32 ($((weight_bytes >> 20)) MiB each) in $work"
"$mk" --count "$count" --dim "$dim" --weights "$work/weights.safetensors" --model "$work/model.plir"
file_bytes=$(stat -c %s "$work/weights.safetensors")
"$opt" "$work/model.plir" --passes ToBasicBlockNormalForm,LiftTransformParams -o "$work/eager.plir"
"$opt" "$work/model.plir" --pipeline configs/lazy-params.yaml -o "$work/lazy.plir" 2> /dev/null
"$mk" --count 1 --dim 1 --weights "$work/tiny.safetensors" --model "$work/tiny.plir"
"$opt" "$work/tiny.plir" --pipeline configs/lazy-params.yaml -o "$work/tiny_lazy.plir" 2> /dev/null

# Runs plir-run; sets rss (KiB), live (bytes), secs.
measure() {
  local log="$work/$1.log"; shift
  local t0 t1
  t0=$(date +%s.%N)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "$run" "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  else
    "$run" "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }
    rss=$(sed -n 's/peak RSS (getrusage): \([0-9]*\) KiB/\1/p' "$log")
  fi
  t1=$(date +%s.%N)
  secs=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
  live=$(sed -n 's/peak live bytes (interpreter counter): //p' "$log")
}

measure baseline "$work/tiny_lazy.plir" --entry main_transform_params --params "$work/tiny.safetensors" \
  --save-outputs "$work/tiny.out"
base_rss=$rss
measure eager "$work/eager.plir" --entry main_transform_params --params "$work/weights.safetensors" \
  --save-outputs "$work/eager.out"
eager_rss=$rss; eager_live=$live; eager_secs=$secs
measure lazy "$work/lazy.plir" --entry main_transform_params --params "$work/weights.safetensors" \
  --save-outputs "$work/lazy.out"
lazy_rss=$rss; lazy_live=$live; lazy_secs=$secs
if cmp -s "$work/eager.out" "$work/lazy.out"; then same=yes; else same=NO; fi
out_bytes=$(stat -c %s "$work/lazy.out")

mib() { awk "BEGIN { printf \"%.1f\", $1 / 1048576 }"; }
echo
echo "| run | peak RSS (OS, getrusage) | interpreter counter (peak live bytes) | time |"
echo "|---|---|---|---|"
echo "| baseline: plir-run, lazy form of a 1x1 one-weight model | $(mib $((base_rss * 1024))) MiB | - | - |"
echo "| eager \`main_transform_params(%params)\` | $(mib $((eager_rss * 1024))) MiB | $(mib "$eager_live") MiB | ${eager_secs} s |"
echo "| lazy \`main_transform_params()\` | $(mib $((lazy_rss * 1024))) MiB | $(mib "$lazy_live") MiB | ${lazy_secs} s |"
echo
echo "weights file $(mib "$file_bytes") MiB; one weight pair $(mib $((2 * weight_bytes))) MiB;" \
  "outputs $(mib "$out_bytes") MiB each; eager and lazy outputs byte-identical: $same"
lazy_over=$(( lazy_rss * 1024 - base_rss * 1024 ))
echo "lazy peak - baseline = $(mib "$lazy_over") MiB ($((lazy_over >> 10)) KiB; goal: <= one weight pair, $(mib $((2 * weight_bytes))) MiB);" \
  "eager peak / file = $(awk "BEGIN { printf \"%.2f\", $eager_rss * 1024 / $file_bytes }") (goal: >= 1)"
status=0
[ "$same" = yes ] || { echo "MISSED: outputs differ"; status=1; }
[ "$lazy_over" -le $((2 * weight_bytes + (1 << 20))) ] || { echo "MISSED: lazy peak above baseline + one weight pair (+1 MiB)"; status=1; }
[ $((eager_rss * 1024)) -ge "$file_bytes" ] || { echo "MISSED: eager peak below the file size"; status=1; }
[ $status -eq 0 ] && echo "all goals met"
exit $status
