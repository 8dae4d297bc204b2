#!/usr/bin/env bash
# plir-import-onnx end to end on ONNX's own test models (libonnx-testdata):
# outputs in the three formats, the weights file, --constant-input,
# --weights-as-constants, and errors (malformed, unsupported, non-static,
# a model that crashes onnx's version converter) that exit 1 and write
# nothing.
set -uo pipefail
tool="$1"
segv_model="$2"  # an opset-6 model (found by the fuzzer) on which onnx's version converter segfaults
data=/usr/lib/python3/dist-packages/onnx/backend/test/data
out="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
[ -d "$data/node" ] || { echo "FAIL: no test data in $data (install libonnx-testdata)"; exit 1; }

"$tool" "$data/node/test_add/model.onnx" -o "$out/add.plir"
check "text output" '[ -s "$out/add.plir" ] && grep -q "num_input = 2" "$out/add.plir"'
"$tool" "$data/node/test_add/model.onnx" -o "$out/add.json"
check "json output" 'head -c 1 "$out/add.json" | grep -q "{"'
"$tool" "$data/node/test_add/model.onnx" -o "$out/add.plirb"
check "binary output" '[ -s "$out/add.plirb" ] && ! cmp -s "$out/add.plirb" "$out/add.plir"'
check "no weights file without weights" '[ ! -e "$out/add.safetensors" ]'
"$tool" "$data/node/test_add/model.onnx" -o - > "$out/stdout.plir"
check "-o - writes the text to standard output" 'cmp -s "$out/stdout.plir" "$out/add.plir"'

"$tool" "$data/pytorch-converted/test_Conv2d/model.onnx" -o "$out/conv.plir"
check "weights beside the output by default" '[ -s "$out/conv.safetensors" ] && grep -q "num_input = 1" "$out/conv.plir"'
"$tool" "$data/pytorch-converted/test_Conv2d/model.onnx" -o "$out/conv2.plir" --weights "$out/w.safetensors"
check "--weights" '[ -s "$out/w.safetensors" ] && [ ! -e "$out/conv2.safetensors" ]'
"$tool" "$data/pytorch-converted/test_Conv2d/model.onnx" -o "$out/conv3.plir" --weights-as-constants
check "--weights-as-constants" '[ ! -e "$out/conv3.safetensors" ] && grep -q "num_input = 1" "$out/conv3.plir" && grep -q "const<" "$out/conv3.plir"'

r="$data/node/test_reshape_reduced_dims"
"$tool" "$r/model.onnx" -o "$out/reshape.plir" 2> "$out/err.txt"; rc=$?
check "non-static shape: exit 1" '[ $rc -eq 1 ]'
check "non-static shape: names node, input, suggests --constant-input" 'grep -q "Reshape" "$out/err.txt" && grep -q "'"'"'shape'"'"'" "$out/err.txt" && grep -q -- "--constant-input shape=" "$out/err.txt"'
check "non-static shape: nothing written" '[ ! -e "$out/reshape.plir" ]'
"$tool" "$r/model.onnx" -o "$out/reshape.plir" --constant-input "shape=$r/test_data_set_0/input_1.pb"
check "--constant-input" 'grep -q "reshape(%data, shape=\[2, 12\])" "$out/reshape.plir"'

printf 'not a model' > "$out/bad.onnx"
echo keep > "$out/keep.plir"
"$tool" "$out/bad.onnx" -o "$out/keep.plir" 2> "$out/err.txt"; rc=$?
check "malformed: exit 1" '[ $rc -eq 1 ]'
check "malformed: names the file" 'grep -q "bad.onnx" "$out/err.txt"'
check "malformed: output untouched" '[ "$(cat "$out/keep.plir")" = keep ]'

u="$data/node/test_tfidfvectorizer_tf_batch_onlybigrams_skip0/model.onnx"
"$tool" "$u" -o "$out/u.plir" 2> "$out/err.txt"; rc=$?
check "unsupported: exit 1, nothing written" '[ $rc -eq 1 ] && [ ! -e "$out/u.plir" ]'
check "unsupported: lists the op with count and first node" 'grep -q "TfIdfVectorizer: 1 node, first" "$out/err.txt"'

"$tool" "$segv_model" -o "$out/segv.plir" 2> "$out/err.txt"; rc=$?
check "version converter crash: exit 1, nothing written" '[ $rc -eq 1 ] && [ ! -e "$out/segv.plir" ] && [ ! -e "$out/segv.safetensors" ]'
# How the child ends depends on the build: SIGSEGV (signal 11) normally;
# under AddressSanitizer its handler reports and aborts (signal 6) or exits.
check "version converter crash: names the file and the converter" 'grep -qE "version_converter_segv_opset6.onnx: onnx.s version converter \(opset 6 to 7\) failed on this model \((signal [0-9]+|exit [0-9]+)\)" "$out/err.txt"'

exit $fail
