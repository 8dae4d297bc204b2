#!/usr/bin/python3
"""plir-run A against B: whole processes, interleaved, medians.

  bench/ab_runs.py N A_DIR B_DIR

Each DIR holds plir-run, model.plir, weights.safetensors and
input.safetensors (a build's binary with the model its importer made). The
two run alternately (A B, then B A, ...) N times each with --threads 2;
prints the median wall ms, CPU ms (user + system, from wait4) and minor page
faults of each, and fails if a run fails.
"""
import os
import statistics
import subprocess
import sys
import time


def run(d):
    args = [os.path.join(d, "plir-run"), os.path.join(d, "model.plir"), "--threads", "2",
            "--inputs-file", os.path.join(d, "input.safetensors"),
            "--params", os.path.join(d, "weights.safetensors"),
            "--save-outputs", os.path.join(d, "got.safetensors")]
    start = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{' '.join(args)} failed (status {status})")
    return wall * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_minflt


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    n, dirs = int(sys.argv[1]), sys.argv[2:]
    res = {d: [] for d in dirs}
    for i in range(n):
        for d in (dirs if i % 2 == 0 else dirs[::-1]):
            res[d].append(run(d))
    for d in dirs:
        med = [statistics.median(r[k] for r in res[d]) for k in range(3)]
        print("%s: wall %.1f ms, CPU %.1f ms, faults %d (medians of %d)" % (d, *med, n))


if __name__ == "__main__":
    main()
