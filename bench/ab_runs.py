#!/usr/bin/python3
"""Builds against each other: whole processes, interleaved, medians.

  bench/ab_runs.py N A_DIR B_DIR
  bench/ab_runs.py --plir-opt CASES [--inputs DIR] [--idle S] N DIR...

plir-run (the first form): each DIR holds plir-run, model.plir,
weights.safetensors and input.safetensors (a build's binary with the model
its importer made). The two run alternately (A B, then B A, ...) N times
each with --threads 2.

plir-opt (--plir-opt): each DIR holds cli/plir-opt and, for the cleanup
case, the three pass plugins as a build lays them out
(plugins/<name>/libplir_<name>.so: bazel-bin, or a copy of it). CASES is a
comma-separated list of KIND-SHAPE, KIND one of bin, text, clean and SHAPE
one of many, one; the inputs are DIR/SHAPE/in.plir and in.plirb of
--inputs (default /dev/shm/b), made by

  bench/peer_compare.py gen 1000000 many 1000 /dev/shm/b/many   (and: one 1 .../one)
  plir-opt /dev/shm/b/many/in.plir -o /dev/shm/b/many/in.plirb  (and one)

and the outputs go beside them. Each round runs every case with every
build in turn, N rounds, the builds' order reversed every other round;
--idle S sleeps S seconds before each run (on the project's VM, memory
freed seconds before is slow to fault in again: bench/RESULTS.md).

Prints, per build (and case), the median wall ms, the fastest, CPU ms
(user + system, from wait4), minor page faults and peak RSS; fails if a run
fails.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

CLEANUP = "CanonicalizeBindings,CommonSubexpressionElimination,DeadCodeElimination"


def measure(args):
    start = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{' '.join(args)} failed (status {status})")
    return wall * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_minflt, ru.ru_maxrss / 1024


def plir_run_args(d):
    return [os.path.join(d, "plir-run"), os.path.join(d, "model.plir"), "--threads", "2",
            "--inputs-file", os.path.join(d, "input.safetensors"),
            "--params", os.path.join(d, "weights.safetensors"),
            "--save-outputs", os.path.join(d, "got.safetensors")]


def plir_opt_args(d, case, inputs):
    kind, _, shape = case.partition("-")
    if kind not in ("bin", "text", "clean") or shape not in ("many", "one"):
        sys.exit(f"ab_runs: unknown case {case} (KIND-SHAPE: bin, text or clean; many or one)")
    at = os.path.join(inputs, shape)
    opt = os.path.join(d, "cli", "plir-opt")
    if kind == "bin":
        return [opt, os.path.join(at, "in.plirb"), "-o", os.path.join(at, "out.plirb")]
    if kind == "text":
        return [opt, os.path.join(at, "in.plir"), "-o", os.path.join(at, "out.plir")]
    return [opt, os.path.join(at, "in.plir"), "--passes", CLEANUP, "-o",
            os.path.join(at, "clean.plir")]


def main():
    if len(sys.argv) > 1 and sys.argv[1] != "--plir-opt":
        if len(sys.argv) != 4:
            sys.exit(__doc__)
        n, dirs = int(sys.argv[1]), sys.argv[2:]
        res = {d: [] for d in dirs}
        for i in range(n):
            for d in (dirs if i % 2 == 0 else dirs[::-1]):
                res[d].append(measure(plir_run_args(d)))
        for d in dirs:
            med = [statistics.median(r[k] for r in res[d]) for k in range(3)]
            print("%s: wall %.1f ms, CPU %.1f ms, faults %d (medians of %d)" % (d, *med, n))
        return
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--plir-opt", dest="cases", required=True)
    ap.add_argument("--inputs", default="/dev/shm/b")
    ap.add_argument("--idle", type=float, default=0)
    ap.add_argument("n", type=int)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    cases = a.cases.split(",")
    for d in a.dirs:
        if not os.access(os.path.join(d, "cli", "plir-opt"), os.X_OK):
            sys.exit(f"ab_runs: {d}/cli/plir-opt is not an executable")
    res = {}
    for i in range(a.n):
        for case in cases:
            for d in (a.dirs if i % 2 == 0 else a.dirs[::-1]):
                if a.idle:
                    time.sleep(a.idle)
                res.setdefault((case, d), []).append(measure(plir_opt_args(d, case, a.inputs)))
    for case in cases:
        for d in a.dirs:
            r = res[(case, d)]
            med = [statistics.median(x[k] for x in r) for k in range(4)]
            print("%-10s %s: wall %.0f ms (fastest %.0f), CPU %.0f ms, faults %d, peak RSS %.0f MB "
                  "(medians of %d)" % (case, d, med[0], min(x[0] for x in r), med[1], med[2],
                                       med[3], a.n))


if __name__ == "__main__":
    main()
