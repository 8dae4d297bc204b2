"""plir.Module.copy() of a 1M-binding module, from Python (issue 23).

    bazel build -c opt //python:plir
    PYTHONPATH=$(bazel info -c opt bazel-bin)/python /usr/bin/python3 bench/python_copy.py [BINDINGS]

Builds one function of BINDINGS (default 1,000,000) add/multiply bindings
by parsing generated text, then times mod.copy() (median of 10,000 calls),
a structural hash (to show the copy is of the whole module), and, for
scale, the text round trip str(mod) + plir.parse that TVM's
astext/fromtext route costs ("2 s for big models" in the seed).
"""

import statistics
import sys
import time

import plir

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
lines = ["def @main(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {", "  %v0 = add(%x, %x);"]
for i in range(1, n):
    op = "add" if i % 2 else "multiply"
    lines.append("  %%v%d = %s(%%v%d, %%x);" % (i, op, i - 1))
lines.append("  %%v%d\n}\n" % (n - 1))
text = "\n".join(lines)

t = time.perf_counter()
mod = plir.parse(text)
parse_s = time.perf_counter() - t
bindings = sum(len(b.bindings) for b in mod["main"].body.blocks)
assert bindings == n, bindings

times = []
for _ in range(10_000):
    t0 = time.perf_counter_ns()
    c = mod.copy()
    times.append(time.perf_counter_ns() - t0)
assert c.same_as(mod)
copy_us = statistics.median(times) / 1000

t = time.perf_counter()
h1 = plir.structural_hash(mod)
hash_s = time.perf_counter() - t
assert plir.structural_hash(c) == h1

t = time.perf_counter()
again = plir.parse(str(mod))
text_s = time.perf_counter() - t
assert plir.structural_equal(again, mod)

print("bindings: %d" % bindings)
print("parse (generated text): %.2f s" % parse_s)
print("mod.copy(): median %.3f us, max %.3f us (10,000 calls)" % (copy_us, max(times) / 1000))
print("structural_hash: %.3f s" % hash_s)
print("text round trip str(mod) + plir.parse: %.2f s" % text_s)
