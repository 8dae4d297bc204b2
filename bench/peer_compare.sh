#!/usr/bin/env bash
# plir-opt against mlir-opt, side by side, each run a whole process, on the
# same generated programs in both languages (bench/peer_compare.py: a chain of
# scalar-tensor add/multiply/subtract ops, with every 7th op dead and every
# 5th a duplicate of the previous op), in two shapes: spread over 1,000
# functions ("many") and all in one function ("one").
#
# Cases, per size and shape:
#   text     plir-opt in.plir -o out.plir
#            mlir-opt in.mlir -o out.mlir
#   binary   plir-opt in.plirb -o out.plirb        (in.plirb from plir-opt in.plir -o in.plirb)
#            mlir-opt in.mlirbc --emit-bytecode -o out.mlirbc
#                                                  (in.mlirbc from mlir-opt in.mlir --emit-bytecode)
#   cleanup  plir-opt in.plir --passes CanonicalizeBindings,CommonSubexpressionElimination,DeadCodeElimination -o clean.plir
#            mlir-opt in.mlir --pass-pipeline='builtin.module(func.func(canonicalize,cse),symbol-dce)' -o clean.mlir
#            (mlir-opt's canonicalize also erases dead ops, so it stands for
#            canonicalize + DCE; no function is named main and none has
#            global_symbol, so PLIR's DCE keeps every function, as symbol-dce
#            keeps every public func.func: see bench/peer_compare.py)
#   limit    the physical limit, per case, on the same files: cat of the
#            input to /dev/null, then a write of plir-opt's output size
#            (dd from /dev/zero, fsynced: plir-opt fsyncs its output)
# Every case runs in every place of PLACES: the inputs and outputs on disk
# (DISK_DIR) and on tmpfs (/dev/shm).
# Each run goes through /usr/bin/time (peak RSS); the markdown table (stdout)
# gives medians. The tools are interleaved (plir, mlir, limit, plir, ...);
# ORDER=blocked runs each tool once as a warm-up (not counted), then its RUNS
# runs back to back, as hyperfine does, which on this VM measures plir-opt's
# memory warm (bench/peer_compare.py).
# The tables give the ratios, and issue 25's goals at the largest size.
# Raw runs go to a CSV, and bench/peer_chart.py draws bench/peers.png.
#
# Environment:
#   PLIR_OPT=path     plir-opt to use (default: bazel build -c opt //cli:plir-opt)
#   PLIR_OPT_BEFORE=path  another plir-opt build (e.g. an earlier commit's, its plugins
#                     next to it in ../plugins), run in the same order on the same inputs:
#                     adds a before/after table
#   PLIR_PLUGIN_PATH  where that plir-opt finds its pass plugins, when they are
#                     not next to it (../plugins) -- needed by the cleanup case
#   MLIR_OPT=path     default /usr/lib/llvm-22/bin/mlir-opt (Debian mlir-22-tools)
#   SIZES="10000 100000 1000000"  SHAPES="many one"  CASES="text binary cleanup"
#   RUNS=3            runs per tool and case (median reported)
#   ORDER=interleaved or blocked (see above)
#   FUNCS=1000        functions of the "many" shape
#   CSV=path          raw measurements (default: a new directory under /tmp, kept)
#   CHART=path        default bench/peers.png; CHART=none draws nothing
#   PLACES="disk tmpfs"  where the programs and outputs go (up to ~0.4 GB a place
#                     at 1M ops): disk is a new directory under DISK_DIR
#                     (default /var/tmp, which must not be a tmpfs), tmpfs one
#                     under /dev/shm. plir-opt fsyncs its output file and
#                     mlir-opt does not: tmpfs takes the disk out.
# Quick run: SIZES="10000 100000" PLACES=tmpfs bench/peer_compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES="${SIZES:-10000 100000 1000000}"
SHAPES="${SHAPES:-many one}"
CASES="${CASES:-text binary cleanup}"
RUNS="${RUNS:-3}"
ORDER="${ORDER:-interleaved}"
FUNCS="${FUNCS:-1000}"
MLIR_OPT="${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}"
CHART="${CHART:-bench/peers.png}"

die() { echo "peer_compare: $*" >&2; exit 1; }

# Debian packages: mlir-opt, matplotlib, GNU time.
need=()
if ! [ -x "$MLIR_OPT" ]; then
  [ "$MLIR_OPT" = /usr/lib/llvm-22/bin/mlir-opt ] || die "MLIR_OPT=$MLIR_OPT is not an executable"
  need+=(mlir-22-tools)
fi
if [ "$CHART" != none ] && ! /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then need+=(python3-matplotlib); fi
[ -x /usr/bin/time ] || need+=(time)
if [ "${#need[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "peer_compare: installing ${need[*]}" >&2
  $SUDO apt-get install -y -q "${need[@]}" >&2 || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q "${need[@]}" >&2; }
fi

if [ -n "${PLIR_OPT:-}" ]; then
  [ -x "$PLIR_OPT" ] || die "PLIR_OPT=$PLIR_OPT is not an executable"
  PLIR_OPT="$(readlink -f "$PLIR_OPT")"
else
  bazel build -c opt //cli:plir-opt >&2
  PLIR_OPT="$(readlink -f bazel-bin)/cli/plir-opt"
fi

case " $CASES " in
  *" cleanup "*)
    passes="$("$PLIR_OPT" --list-passes 2>&1)" || die "$PLIR_OPT --list-passes failed:
$passes"
    for p in CanonicalizeBindings CommonSubexpressionElimination DeadCodeElimination; do
      grep -q "^$p " <<< "$passes" || die "$PLIR_OPT does not find the pass $p (plugins are looked for next to
the executable in ../plugins, and in \$PLIR_PLUGIN_PATH; set PLIR_PLUGIN_PATH to the directory of
the libplir_*.so built with this plir-opt, or leave cleanup out of CASES). --list-passes said:
$passes"
    done ;;
esac

PLACES="${PLACES:-disk tmpfs}"
DISK_DIR="${DISK_DIR:-/var/tmp}"
place_args=()
works=()
trap 'rm -rf "${works[@]}"' EXIT
for place in $PLACES; do
  case "$place" in
    disk) root="$DISK_DIR"
      fs="$(stat -f -c %T "$root" 2> /dev/null)" || die "DISK_DIR=$root is not a directory"
      [ "$fs" != tmpfs ] || die "DISK_DIR=$root is a tmpfs; set DISK_DIR to a directory on a disk" ;;
    tmpfs) root=/dev/shm
      [ "$(stat -f -c %T "$root" 2> /dev/null)" = tmpfs ] || die "/dev/shm is not a tmpfs here; leave tmpfs out of PLACES" ;;
    *) die "unknown place '$place' in PLACES (disk, tmpfs)" ;;
  esac
  w="$(mktemp -d "$root/peer_compare.XXXXXX")"
  works+=("$w")
  place_args+=(--place "$place=$w")
done
if [ -z "${CSV:-}" ]; then
  CSV="$(mktemp -d /tmp/peer_compare_results.XXXXXX)/peers.csv"
else
  rm -f "$CSV"
fi

{
  echo "plir-opt: $PLIR_OPT"
  echo "mlir-opt: $MLIR_OPT ($("$MLIR_OPT" --version | grep -m1 -i version | sed 's/^ *//'))"
  echo "sizes: $SIZES; shapes: $SHAPES (many = $FUNCS functions); cases: $CASES; runs: $RUNS ($ORDER); places: $PLACES"
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >&2

start=$SECONDS
rc=0
# shellcheck disable=SC2086  # the lists are meant to be split
/usr/bin/python3 bench/peer_compare.py run --plir-opt "$PLIR_OPT" --mlir-opt "$MLIR_OPT" \
  "${place_args[@]}" --csv "$CSV" --sizes $SIZES --shapes $SHAPES --cases $CASES \
  --runs "$RUNS" --order "$ORDER" --funcs "$FUNCS" ${PLIR_OPT_BEFORE:+--plir-opt-before "$(readlink -f "$PLIR_OPT_BEFORE")"} || rc=$?
echo "peer_compare: raw measurements in $CSV; $((SECONDS - start)) s in all; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

if [ "$CHART" != none ] && [ -s "$CSV" ]; then
  /usr/bin/python3 bench/peer_chart.py "$CSV" "$CHART" || rc=1
  echo "peer_compare: chart written to $CHART" >&2
fi
exit "$rc"
