#!/usr/bin/env bash
# Large constants against mlir-opt (issue 25 §2): the module of
# bench/big_constants.sh (MB MiB of float32 weights bound as constants, 16
# MiB each) in both tools, text and binary, whole processes, the files in
# the page cache, interleaved, medians of RUNS:
#
#   text     plir-opt W.plir -o O.plir             (hex payloads)
#            mlir-opt W.mlir -o O.mlir             (dense_resource, hex in dialect_resources)
#   binary   plir-opt W.plirb -o O.plirb           (version 3: constants viewed in the mapping)
#            mlir-opt W.mlirbc --emit-bytecode -o O.mlirbc
#   limit    cat W > /dev/null, and cp W O         (the same files)
#
# plir-opt runs as a user runs it (supervised, sandboxed child: the parent
# loads and checks the child's result before it writes). The PLIR round trips
# are checked to be byte-identical to their input.
#
#   RUNS=5 MB=100 bench/big_constants_peer.sh
#   PLIR_OPT=... BIG_CONSTANTS=... MLIR_OPT=... to use other builds.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-5}"
MB="${MB:-100}"
MLIR_OPT="${MLIR_OPT:-$(command -v mlir-opt-22 || command -v mlir-opt)}"
work=$(mktemp -d "${TMPDIR:-/tmp}/plir-bigc-peer.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "${PLIR_OPT:-}" ] || [ -z "${BIG_CONSTANTS:-}" ]; then
  nice -n 19 bazel build //cli:plir-opt //bench:big_constants > /dev/null 2>&1
  bin=$(bazel info bazel-bin 2> /dev/null)
  PLIR_OPT="${PLIR_OPT:-$bin/cli/plir-opt}"
  BIG_CONSTANTS="${BIG_CONSTANTS:-$bin/bench/big_constants}"
fi
"$BIG_CONSTANTS" gen "$work/w.plirb" --mb "$MB" --version 3 > /dev/null
"$PLIR_OPT" "$work/w.plirb" -o "$work/w.plir"
/usr/bin/python3 bench/big_constants_peer.py "$work/w.plir" "$work/w.mlir" > /dev/null
"$MLIR_OPT" "$work/w.mlir" --emit-bytecode -o "$work/w.mlirbc"

# shellcheck source=bench/timing.sh
. bench/timing.sh
declare -A t
cases="plir_text mlir_text plir_bin mlir_bin cat_plir_text cat_mlir_text cat_plirb cat_mlirbc cp_plirb"
for c in $cases; do t[$c]=""; done
cat "$work"/w.* > /dev/null  # warm the page cache
for _ in $(seq "$RUNS"); do
  t[plir_text]+=" $(ms "$PLIR_OPT" "$work/w.plir" -o "$work/o.plir")"
  t[mlir_text]+=" $(ms "$MLIR_OPT" "$work/w.mlir" -o "$work/o.mlir")"
  t[plir_bin]+=" $(ms "$PLIR_OPT" "$work/w.plirb" -o "$work/o.plirb")"
  t[mlir_bin]+=" $(ms "$MLIR_OPT" "$work/w.mlirbc" --emit-bytecode -o "$work/o.mlirbc")"
  t[cat_plir_text]+=" $(ms cat "$work/w.plir")"
  t[cat_mlir_text]+=" $(ms cat "$work/w.mlir")"
  t[cat_plirb]+=" $(ms cat "$work/w.plirb")"
  t[cat_mlirbc]+=" $(ms cat "$work/w.mlirbc")"
  t[cp_plirb]+=" $(ms cp "$work/w.plirb" "$work/copy.plirb")"
  rm -f "$work"/o.* "$work/copy.plirb"
done
"$PLIR_OPT" "$work/w.plir" -o "$work/o.plir" && cmp -s "$work/w.plir" "$work/o.plir" ||
  { echo "plir text round trip is not byte-identical"; exit 1; }
"$PLIR_OPT" "$work/w.plirb" -o "$work/o.plirb" && cmp -s "$work/w.plirb" "$work/o.plirb" ||
  { echo "plir binary round trip is not byte-identical"; exit 1; }
size() { stat -c %s "$1"; }
echo "$MB MiB of float32 constants; $(nproc) CPUs; medians of $RUNS, ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "files: w.plir $(size "$work/w.plir") B, w.mlir $(size "$work/w.mlir") B, w.plirb $(size "$work/w.plirb") B, w.mlirbc $(size "$work/w.mlirbc") B"
echo
echo "| case | plir-opt ms | mlir-opt ms | mlir/plir | limit: cat of the PLIR input ms |"
echo "|---|---:|---:|---:|---:|"
row() {
  local p m c
  p=$(echo "${t[$1]}" | median)
  m=$(echo "${t[$2]}" | median)
  c=$(echo "${t[$3]}" | median)
  printf "| %s | %s | %s | %.2f | %s |\n" "$4" "$p" "$m" "$(echo "$m / $p" | bc -l)" "$c"
}
row plir_text mlir_text cat_plir_text "text round trip (hex / dense_resource)"
row plir_bin mlir_bin cat_plirb "binary round trip (v3 / bytecode)"
echo
echo "cat of w.mlir: $(echo "${t[cat_mlir_text]}" | median) ms; cat of w.mlirbc: $(echo "${t[cat_mlirbc]}" | median) ms;" \
  "cp of w.plirb: $(echo "${t[cp_plirb]}" | median) ms"
