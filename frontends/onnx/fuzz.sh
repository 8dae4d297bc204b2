#!/usr/bin/env bash
# Builds the ONNX importer's fuzz target with clang's libFuzzer,
# AddressSanitizer and UBSan, and runs it for a number of seconds on
# frontends/onnx/fuzz_corpus (tools/fuzz.sh does the same for the other
# loaders; `bazel test //frontends/onnx:importer_fuzz_test` replays it).
#   frontends/onnx/fuzz.sh 60
# Needs: apt-get install clang-14 libclang-rt-14-dev (and tools/setup.sh's packages)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
out=$(mktemp -d)
srcs=$(ls ir/*.cc ir/internal/*.cc ir/analysis/*.cc ir/ops/*.cc ir/support/*.cc kernels/*.cc 2>/dev/null | grep -v _test.cc)
srcs="$srcs interpreter/safetensors.cc"
srcs="$srcs $(ls frontends/onnx/*.cc | grep -v -e _test.cc -e _main.cc -e plir_import_onnx.cc -e node_tests.cc -e importer_fuzzer.cc)"
clang++-14 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I. \
  frontends/onnx/importer_fuzzer.cc $srcs -lsimdjson -lonnx -lonnx_proto -lprotobuf -lpthread -o "$out/fuzzer"
corpus="$out/corpus"
mkdir -p "$corpus"
cp frontends/onnx/fuzz_corpus/* "$corpus/"
"$out/fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=65536 "$corpus"
