#!/usr/bin/python3
"""Before/after table of two kernels_bench runs, with PyTorch timed now on
the same shapes (kernels_report.torch_seconds: median of 20 calls).

  kernels_bench --benchmark_filter=Fast --benchmark_format=json > before.json  # old build
  kernels_bench --benchmark_filter=Fast --benchmark_format=json > after.json   # new build
  /usr/bin/python3 bench/kernels_before_after.py before.json after.json

Wall GFLOP/s (real time, as kernels_report), and for one thread the
after build's GFLOP/s over its CPU time, which a loaded machine moves less.
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_report as kr
base = json.load(open(sys.argv[1]))["benchmarks"]
new = json.load(open(sys.argv[2]))["benchmarks"]
def index(rs):
    by = {}
    for r in rs:
        parts = [p.strip() for p in r["name"].split("/")]
        by[(parts[2], int(parts[3]))] = (r["GFLOP/s"], r["cpu_time"], r["real_time"])
    return by
b, n = index(base), index(new)
print("| kernel | shape | threads | before GFLOP/s | after GFLOP/s | after/before | after CPU-time GFLOP/s | PyTorch GFLOP/s | after / PyTorch |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for label, (kind, shape) in kr.SHAPES.items():
    for t in (1, 2):
        if (label, t) not in n: continue
        f = kr.flops(kind, shape)
        tg = f / kr.torch_seconds(kind, shape, t) * 1e-9
        bg = b.get((label, t), (None,))[0]
        ng, cpu_ns, _ = n[(label, t)]
        cg = f / (cpu_ns * 1e-9) * 1e-9 if t == 1 else None
        name = {"conv": "conv2d", "binary": shape[0] if kind == "binary" else ""}.get(kind, "sgemm")
        print(f"| {name} | {label} | {t} | {bg:.2f} | {ng:.2f} | {ng/bg:.2f} | {'' if cg is None else f'{cg:.2f}'} | {tg:.2f} | {ng/tg:.2f} |")
