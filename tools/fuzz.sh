#!/usr/bin/env bash
# Builds a fuzz target with clang's libFuzzer, AddressSanitizer and UBSan,
# and runs it for a number of seconds on its corpus.
#   tools/fuzz.sh parser 60      (targets: parser, binary, json, safetensors)
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
srcs=$(ls ir/*.cc ir/internal/*.cc | grep -v _test.cc)
if [ "$target" = safetensors ]; then srcs="$srcs runtime/safetensors.cc"; fi
clang++-14 -std=c++20 -fsized-deallocation -O1 -g -fsanitize=fuzzer,address,undefined -I. \
  "testing/fuzz/${target}_fuzzer.cc" $srcs -lsimdjson -o "$out/fuzzer"
corpus="testing/fuzz/corpus/${target}"
mkdir -p "$corpus"
[ "$target" = safetensors ] || cp -n examples/spec/*.plir "$corpus/" 2>/dev/null || true
if [ "$target" != parser ] && [ "$target" != safetensors ]; then
  # Seed with the spec examples in the target's format.
  for f in examples/spec/*.plir; do
    bazel-bin/runtime/plir-opt "$f" --emit "$target" -o "$corpus/$(basename "$f").$target" 2>/dev/null || true
  done
fi
"$out/fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 "$corpus" -artifact_prefix="$out/"
