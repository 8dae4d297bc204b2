#!/usr/bin/python3
"""The tables of bench/kernels.sh: kernels_bench's JSON results, PyTorch on
the same shapes (timed here, torch.set_num_threads(N)), and the peak of the
machine.

  /usr/bin/python3 bench/kernels_report.py KERNELS_BENCH.json

Peak GFLOP/s = cores x MHz x FLOP per cycle per core, FLOP per cycle from
/proc/cpuinfo's flags: 16 float32 lanes with avx512f (8 with avx2), 2 for
an FMA, times 2 FMA units per core (an assumption: Xeon Scalable parts
with AVX-512 have two; one-unit parts have half this peak).
"""

import json
import statistics
import sys
import time

import torch

# label -> (kind, shape): the shapes of bench/kernels_bench.cc.
SHAPES = {
    "stem_7x7s2_3x224_64": ("conv", (3, 224, 64, 7, 2, 3, 1)),
    "3x3_64x56_64": ("conv", (64, 56, 64, 3, 1, 1, 1)),
    "1x1_64x56_256": ("conv", (64, 56, 256, 1, 1, 0, 1)),
    "3x3s2_256x28_256": ("conv", (256, 28, 256, 3, 2, 1, 1)),
    "dw3x3_144x56": ("conv", (144, 56, 144, 3, 1, 1, 144)),
    "dw3x3s2_96x112": ("conv", (96, 112, 96, 3, 2, 1, 96)),
    "dw3x3_960x7": ("conv", (960, 7, 960, 3, 1, 1, 960)),
    "dw3x3m2_32x56": ("conv", (32, 56, 64, 3, 1, 1, 32)),
    "max_scalar_144x56": ("binary", ("maximum", 144, 56, True)),
    "min_scalar_144x56": ("binary", ("minimum", 144, 56, True)),
    "add_144x56": ("binary", ("add", 144, 56, False)),
    "256": ("gemm", (256, 256, 256)),
    "1024": ("gemm", (1024, 1024, 1024)),
    "fc_1x2048x1000": ("gemm", (1, 2048, 1000)),
}


def torch_seconds(kind, shape, threads, runs=20):
    torch.set_num_threads(threads)
    torch.manual_seed(7)
    if kind == "conv":
        c, h, o, k, s, p, g = shape
        x, w = torch.randn(1, c, h, h), torch.randn(o, c // g, k, k)
        fn = lambda: torch.nn.functional.conv2d(x, w, stride=s, padding=p, groups=g)
    elif kind == "binary":
        op, c, h, scalar = shape
        x = torch.randn(1, c, h, h)
        y = torch.zeros(()) if scalar else torch.randn(1, c, h, h)
        f = getattr(torch, op)
        fn = lambda: f(x, y)
    else:
        m, k, n = shape
        a, b = torch.randn(m, k), torch.randn(k, n)
        fn = lambda: torch.matmul(a, b)
    with torch.no_grad():
        for _ in range(3):
            fn()
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def flops(kind, shape):
    if kind == "conv":
        c, h, o, k, s, p, g = shape
        oh = (h + 2 * p - k) // s + 1
        return 2.0 * o * oh * oh * (c // g) * k * k
    if kind == "binary":  # one FLOP per element
        _, c, h, _ = shape
        return float(c * h * h)
    m, k, n = shape
    return 2.0 * m * n * k


def peak():
    info = open("/proc/cpuinfo").read()
    cores = info.count("processor\t:")
    mhz = float(info.split("cpu MHz")[1].split(":")[1].split()[0])
    flags = info.split("flags")[1].split("\n")[0].split()
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    fma = 2 if "fma" in flags else 1
    per_cycle = lanes * fma * 2  # two FMA units per core (see the docstring)
    return cores, mhz, per_cycle, cores * mhz * 1e-3 * per_cycle


def main():
    results = json.load(open(sys.argv[1]))["benchmarks"]
    cores, mhz, per_cycle, total = peak()
    print(f"Peak: {cores} cores x {mhz:.0f} MHz x {per_cycle} float32 FLOP/cycle = "
          f"{total:.0f} GFLOP/s ({total / cores:.0f} per core).")
    print()
    print("| kernel | shape | threads | PLIR reference GFLOP/s | PLIR fast GFLOP/s | "
          "PyTorch GFLOP/s | fast / PyTorch | fast / peak |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    by = {}
    for r in results:
        # "Conv/Fast / 3x3_64x56_64/2/real_time"
        parts = [p.strip() for p in r["name"].split("/")]
        op, path, label, threads = parts[0], parts[1], parts[2], int(parts[3])
        by[(label, path, threads)] = r["GFLOP/s"]
    for label, (kind, shape) in SHAPES.items():
        for threads in (1, 2):
            fast = by.get((label, "Fast", threads))
            if fast is None:
                continue
            ref = by.get((label, "Reference", threads))
            t = flops(kind, shape) / torch_seconds(kind, shape, threads) * 1e-9
            p = total * threads / cores
            ref_s = f"{ref:.3f}" if ref is not None else ""
            name = {"conv": "conv2d", "binary": shape[0] if kind == "binary" else ""}.get(kind, "sgemm")
            print(f"| {name} | {label} | {threads} | {ref_s} "
                  f"| {fast:.2f} | {t:.2f} | {fast / t:.2f} | {fast / p:.1%} |")


if __name__ == "__main__":
    main()
