#!/usr/bin/python3
"""Writes a safetensors file holding a seeded random float32 input tensor
first, then every tensor of a weights file, for plir-run --params (which
binds @main's parameters by name: the input, then the initializers).

  /usr/bin/python3 bench/add_input.py WEIGHTS.safetensors NAME D0,D1,... OUT
"""

import json
import random
import struct
import sys


def main():
    weights, name, dims, out = sys.argv[1:5]
    shape = [int(d) for d in dims.split(",")]
    with open(weights, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    count = 1
    for d in shape:
        count *= d
    rng = random.Random(20261201)
    x = struct.pack("<%df" % count, *(rng.uniform(-1, 1) for _ in range(count)))
    meta = header.pop("__metadata__", None)
    new = {name: {"dtype": "F32", "shape": shape, "data_offsets": [0, len(x)]}}
    for k, v in header.items():
        b, e = v["data_offsets"]
        new[k] = dict(v, data_offsets=[b + len(x), e + len(x)])
    if meta is not None:
        new["__metadata__"] = meta
    h = json.dumps(new).encode()
    h += b" " * (-len(h) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + x + data)


if __name__ == "__main__":
    main()
