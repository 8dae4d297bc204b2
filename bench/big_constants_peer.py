#!/usr/bin/python3
"""The large-constant module of bench/big_constants.sh in MLIR, for mlir-opt.

Reads the PLIR text that `plir-opt W.plirb -o W.plir` prints for
bench/big_constants.cc's module (`def @main()` returning a tuple of float32
constants, each a hex payload) and writes the same tensors as MLIR: one
`arith.constant dense_resource<wI>` per constant, the bytes in the module's
`dialect_resources` section (MLIR's way of keeping large elements out of the
IR: a hex string whose first 4 bytes are the alignment, 4 for float32). Both
files then hold the same bytes in hex, so a text round trip of each reads
and writes the same amount of tensor data.

  big_constants_peer.py W.plir W.mlir
"""
import re
import sys

CONST = re.compile(r'const<Tensor\[\((\d+),\), float32\]>x"([0-9a-f]*)"')


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        text = f.read()
    found = CONST.findall(text)
    if not found:
        print(f"{argv[0]}: no float32 hex constants found", file=sys.stderr)
        return 1
    types = [f"tensor<{n}xf32>" for n, _ in found]
    with open(argv[1], "w") as out:
        out.write("module {\n")
        out.write(f"  func.func @main() -> ({', '.join(types)}) {{\n")
        for i, t in enumerate(types):
            out.write(f"    %c{i} = arith.constant dense_resource<w{i}> : {t}\n")
        out.write(f"    return {', '.join(f'%c{i}' for i in range(len(types)))} : {', '.join(types)}\n")
        out.write("  }\n}\n\n{-#\n  dialect_resources: {\n    builtin: {\n")
        for i, (_, hexdata) in enumerate(found):
            sep = "," if i + 1 < len(found) else ""
            out.write(f'      w{i}: "0x04000000{hexdata}"{sep}\n')
        out.write("    }\n  }\n#-}\n")
    print(f"{argv[1]}: {len(found)} constants, {sum(len(h) // 2 for _, h in found)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
