#!/usr/bin/env bash
# Runs the benchmark suite and regenerates bench/RESULTS.md and
# bench/results.png from its JSON output.
#   bench/run.sh                 # everything (about 10 minutes on 2 cores)
#   bench/run.sh 'Parse|Print'   # a --benchmark_filter regex
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-.}"
bazel build -c opt //bench:ir_bench
mkdir -p bench/out
./bazel-bin/bench/ir_bench --benchmark_filter="$filter" --benchmark_format=json \
  --benchmark_out=bench/out/results.json --benchmark_out_format=json
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -q python3-matplotlib
fi
/usr/bin/python3 bench/report.py bench/out/results.json bench/RESULTS.md bench/results.png
