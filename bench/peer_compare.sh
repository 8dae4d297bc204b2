#!/usr/bin/env bash
# Side-by-side text round trip (parse + verify + print) of PLIR and MLIR on
# the same 1M-operation chain: 100 functions of 10,000 scalar-tensor
# add/multiply/subtract ops each. Needs Debian's mlir-22-tools and hyperfine
# (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! [ -x /usr/lib/llvm-22/bin/mlir-opt ] || ! command -v hyperfine > /dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -q mlir-22-tools hyperfine
fi
bazel build -c opt //runtime:plir-opt
opt="$(readlink -f bazel-bin)/runtime/plir-opt"
dir=$(mktemp -d)
/usr/bin/python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
ops, mops = ["add", "multiply", "subtract"], ["arith.addf", "arith.mulf", "arith.subf"]
with open(f"{d}/chain.plir", "w") as p, open(f"{d}/chain.mlir", "w") as m:
    for f in range(100):
        name = "main" if f == 0 else f"f{f}"
        p.write(f"def @{name}(%x: Tensor[(), float32], %c: Tensor[(), float32]) -> Tensor[(), float32] {{\n  dataflow {{\n")
        m.write(f"func.func @{name}(%x: tensor<f32>, %c: tensor<f32>) -> tensor<f32> {{\n")
        prev = "%x"
        for i in range(10000):
            p.write(f"    %v{i}: Tensor[(), float32] = {ops[i % 3]}({prev}, %c);\n")
            m.write(f"  %v{i} = {mops[i % 3]} {prev}, %c : tensor<f32>\n")
            prev = f"%v{i}"
        p.write(f"    output {prev};\n  }}\n  {prev}\n}}\n\n")
        m.write(f"  return {prev} : tensor<f32>\n}}\n")
PY
ls -l "$dir"
hyperfine --runs 3 --warmup 1 \
  "/usr/lib/llvm-22/bin/mlir-opt $dir/chain.mlir -o $dir/out.mlir" \
  "/usr/lib/llvm-22/bin/mlir-opt $dir/chain.mlir --mlir-print-op-generic -o $dir/out2.mlir" \
  "$opt $dir/chain.plir -o $dir/out.plir"
for cmd in "/usr/lib/llvm-22/bin/mlir-opt $dir/chain.mlir -o $dir/out.mlir" "$opt $dir/chain.plir -o $dir/out.plir"; do
  /usr/bin/time -f "peak RSS %M KiB: $cmd" $cmd
done
rm -rf "$dir"
