#!/usr/bin/env bash
# Builds a fuzz target with clang's libFuzzer, AddressSanitizer and UBSan,
# and runs it for a number of seconds on its corpus.
#   tools/fuzz.sh parser 60
# Needs: apt-get install clang-14 libclang-rt-14-dev
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-parser}"
seconds="${2:-60}"
out=$(mktemp -d)
srcs=$(ls ir/*.cc ir/internal/*.cc | grep -v _test.cc)
clang++-14 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -I. \
  "testing/fuzz/${target}_fuzzer.cc" $srcs -o "$out/fuzzer"
corpus="testing/fuzz/corpus/${target}"
mkdir -p "$corpus"
cp -n examples/spec/*.plir "$corpus/" 2>/dev/null || true
"$out/fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 "$corpus" -artifact_prefix="$out/"
