#!/usr/bin/env bash
# Builds a fuzz target with clang's libFuzzer, AddressSanitizer and UBSan,
# and runs it for a number of seconds on its corpus.
#   tools/fuzz.sh parser 60      (targets: parser, binary, json, reprint, yaml, safetensors)
# Needs: apt-get install clang-14 libclang-rt-14-dev
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++-14 > /dev/null || ! dpkg-query -W libclang-rt-14-dev > /dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -q clang-14 libclang-rt-14-dev
fi
target="${1:-parser}"
seconds="${2:-60}"
out=$(mktemp -d)
srcs=$(find ir -name '*.cc' ! -name '*_test.cc')  # every room of the IR (serialize, support, text, ops)
libs="-lsimdjson"
if [ "$target" = safetensors ]; then srcs="$srcs interpreter/safetensors.cc"; fi
if [ "$target" = interpreter ]; then
  srcs="$srcs interpreter/interpreter.cc"
fi
if [ "$target" = yaml ]; then
  srcs="$srcs $(ls passes/*.cc | grep -v _test.cc) driver/pipeline.cc driver/plugin_loader.cc driver/file_util.cc driver/supervisor.cc"
  libs="$libs -lyaml-cpp -ldl -lcrypto -lre2"
fi
# C++23: ir/support/uninitialized_string.cc needs it (its BUILD rule says so);
# the rest builds the same in either mode.
clang++-14 -std=c++2b -O1 -g -fsanitize=fuzzer,address,undefined -I. \
  "testing/fuzz/${target}_fuzzer.cc" $srcs $libs -o "$out/fuzzer"
corpus="testing/fuzz/corpus/${target}"
mkdir -p "$corpus"
if [ "$target" = parser ] || [ "$target" = interpreter ]; then
  cp -n examples/spec/*.plir "$corpus/" 2>/dev/null || true
  [ "$target" = interpreter ] && cp -n examples/models/*.plir plugins/*/tests/*.plir "$corpus/" 2>/dev/null || true
elif [ "$target" = reprint ]; then
  # The spec examples in both forms, after the byte that picks the loader.
  for f in examples/spec/*.plir; do
    b=$(basename "$f")
    bazel-bin/cli/plir-opt "$f" --emit binary -o "$out/$b.bin" 2>/dev/null && { printf '\0'; cat "$out/$b.bin"; } > "$corpus/$b.bin"
    bazel-bin/cli/plir-opt "$f" --emit json -o "$out/$b.json" 2>/dev/null && { printf '\1'; cat "$out/$b.json"; } > "$corpus/$b.json"
  done
elif [ "$target" != yaml ] && [ "$target" != safetensors ]; then
  # Seed with the spec examples in the target's format.
  for f in examples/spec/*.plir; do
    bazel-bin/cli/plir-opt "$f" --emit "$target" -o "$corpus/$(basename "$f").$target" 2>/dev/null || true
  done
fi
# -rss_limit_mb: a YAML alias bomb or a huge shape must fail fast, not grow.
"$out/fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 "$corpus" -artifact_prefix="$out/"
