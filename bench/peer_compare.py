#!/usr/bin/env python3
"""Helper of bench/peer_compare.sh: plir-opt against mlir-opt, whole processes.

  peer_compare.py gen SIZE SHAPE FUNCS OUT_DIR     # write OUT_DIR/in.plir, in.mlir
  peer_compare.py run --plir-opt P --mlir-opt M --place NAME=DIR [--place ...] --csv FILE
                      [--sizes ...] [--shapes ...] [--cases ...] [--runs N] [--funcs N]
  peer_compare.py table FILE.csv                   # the markdown tables again

The program (the same in both languages): a chain of scalar-tensor
add/multiply/subtract ops, `size` ops in all, either spread over FUNCS
functions ("many") or all in one function ("one"). In every function, op i
(counted from 0) is
  - dead when i % 7 == 6: `multiply(prev, %x)`, never used (its second operand
    is %x, not %c, so it never equals a live op);
  - else a duplicate when i % 5 == 4: the previous live op's exact expression
    (same op, same operands), whose result the chain then continues from;
  - else `add`/`multiply`/`subtract` (by i % 3) of the previous live value
    and %c.
Cleaning up leaves only the non-dead, non-duplicate ops; both outputs are
counted after the runs and compared with that number.

Functions are named f0, f1, ... (none is `main`) and carry no
`global_symbol`: DeadCodeElimination then has no entry function, and keeps
every function (plugins/dead_code_elimination: "If none exists, no item is
removed") while still removing dead bindings. That matches mlir-opt, whose
--canonicalize never removes a (public) func.func. Its `entry_functions`
option cannot be given through --passes, and listing 1,000 entries would add
a reachability walk that mlir-opt does not do.

The cleanup case runs mlir-opt as
`--pass-pipeline=builtin.module(func.func(canonicalize,cse),symbol-dce)`:
canonicalize (which also erases dead ops) and CSE on each function, on
mlir-opt's threads, then the removal of unused private symbols (there are
none: every func.func is public and kept, as PLIR's DCE keeps every function).

Each case also runs a third "tool", the physical limit on the same files:
`cat` of the case's input to /dev/null, then a write of as many bytes as
plir-opt's output (dd from /dev/zero, fsynced, as plir-opt fsyncs its output).

Places (--place NAME=DIR, repeatable): each place is a directory holding the
inputs and the outputs, e.g. disk=/var/tmp/x and tmpfs=/dev/shm/y. The inputs
are generated once and copied to every place; each case is measured in one
place, then in the next (interleaved: every run measures every place in
turn).

Each run is `/usr/bin/time -f "%M %U %S" -o FILE tool ...`; wall time is taken
around it with time.perf_counter (so it includes the fork/exec of
/usr/bin/time, the same for both tools); the table reports medians.

Order (--order). "interleaved", the default: plir, mlir, limit, plir, mlir,
... "blocked": in each place, each tool runs once as a warm-up (not
counted), then its runs back to back, as hyperfine runs a command. On the
2-CPU VM this project is measured on, the order moves plir-opt and not
mlir-opt: a process whose memory was freed by a run moments before gets it
back fast, and one that starts seconds after (or after mlir-opt's 6 s) gets
its fresh memory slowly. plir-opt's text round trip of one function (1M
ops, /usr/bin/time, 3 runs each): 0.58-0.67 s (system time 0.11-0.23 s)
right after a plir-opt run, 0.61-0.75 s (0.27-0.32 s) right after an
mlir-opt run, 0.74-0.83 s (0.32-0.35 s) 5 s after a plir-opt run; mlir-opt
took 6.79-6.89 s after plir-opt and 6.76-7.17 s after itself. "blocked"
thus measures plir-opt warm, which one invocation on a quiet machine is
not; the default keeps the colder, interleaved order (bench/RESULTS.md).
"""
import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import time

PLIR_T = "Tensor[(), float32]"
OPS = [("add", "arith.addf"), ("multiply", "arith.mulf"), ("subtract", "arith.subf")]
MLIR_OP = {p: m for p, m in OPS}
CASES = ("text", "binary", "cleanup")
CASE_TITLE = {"text": "text round trip", "binary": "binary round trip", "cleanup": "cleanup pipeline"}
TOOL_NAME = {"plir": "plir-opt", "mlir": "mlir-opt", "limit": "limit", "before": "plir-opt (before)"}
SHAPE_TITLE = {"many": "many functions", "one": "one function"}
PASSES = "CanonicalizeBindings,CommonSubexpressionElimination,DeadCodeElimination"
FIELDS = ["place", "case", "shape", "size", "functions", "tool", "run", "wall_s", "peak_rss_kib",
          "cpu_s", "input_bytes", "status", "order"]
ORDER_TEXT = {
    "blocked": "each tool's runs back to back, after one warm-up run of it that is not counted",
    "interleaved": "interleaved: plir, mlir, limit, plir, ...",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- generator

def function_sizes(size, shape, funcs):
    if shape == "one":
        return [size]
    if shape != "many":
        raise SystemExit(f"peer_compare: unknown shape '{shape}' (many or one)")
    base, extra = divmod(size, funcs)
    return [base + (1 if f < extra else 0) for f in range(funcs) if base or f < extra]


def generate(size, shape, funcs, out_dir):
    """Writes out_dir/in.plir and out_dir/in.mlir; returns (functions, ops kept by a cleanup)."""
    sizes = function_sizes(size, shape, funcs)
    kept = 0
    with open(os.path.join(out_dir, "in.plir"), "w") as p, open(os.path.join(out_dir, "in.mlir"), "w") as m:
        for f, n in enumerate(sizes):
            pl = [f"def @f{f}(%x: {PLIR_T}, %c: {PLIR_T}) -> {PLIR_T} {{\n  dataflow {{\n"]
            ml = [f"func.func @f{f}(%x: tensor<f32>, %c: tensor<f32>) -> tensor<f32> {{\n"]
            prev, last = "%x", None  # last: (op, operand) of the previous live, non-duplicate op
            for i in range(n):
                if i % 7 == 6:
                    pl.append(f"    %d{i}: {PLIR_T} = multiply({prev}, %x);\n")
                    ml.append(f"  %d{i} = arith.mulf {prev}, %x : tensor<f32>\n")
                    continue
                if i % 5 == 4 and last is not None:
                    op, arg = last
                else:
                    op, arg = OPS[i % 3][0], prev
                    last = (op, arg)
                    kept += 1
                pl.append(f"    %v{i}: {PLIR_T} = {op}({arg}, %c);\n")
                ml.append(f"  %v{i} = {MLIR_OP[op]} {arg}, %c : tensor<f32>\n")
                prev = f"%v{i}"
            pl.append(f"    output {prev};\n  }}\n  {prev}\n}}\n\n")
            ml.append(f"  return {prev} : tensor<f32>\n}}\n")
            p.write("".join(pl))
            m.write("".join(ml))
    return len(sizes), kept


def count_ops(path, tool):
    """Ops in a text module: PLIR bindings of a call (not `%a = %b` aliases), MLIR arith ops."""
    n = 0
    with open(path) as fh:
        if tool == "plir":
            for line in fh:
                s = line.lstrip()
                if s.startswith("%") and " = " in s and not s.split(" = ", 1)[1].startswith("%"):
                    n += 1
        else:
            for line in fh:
                if " = arith." in line:
                    n += 1
    return n


# ---------------------------------------------------------------- running

class ToolFailure(Exception):
    pass


def run_once(cmd, rss_file):
    """Runs cmd under /usr/bin/time; returns (wall s, peak RSS KiB, user+sys s)."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file] + cmd,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        err = p.stderr.decode(errors="replace")
        lines = err.splitlines()
        if len(lines) > 40:
            err = "\n".join(lines[:20] + [f"... ({len(lines) - 40} lines left out) ..."] + lines[-20:])
        raise ToolFailure(f"exit status {p.returncode}: {' '.join(cmd)}\n{err}")
    with open(rss_file) as fh:
        rss, user, sys_ = fh.read().split("\n")[-2].split()  # last line (after any status line)
    return wall, int(rss), float(user) + float(sys_)


def must(cmd, what):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise ToolFailure(f"{what} failed, exit status {p.returncode}: {' '.join(cmd)}\n"
                          + p.stderr.decode(errors="replace")[-6000:])


def commands(case, tool, plir, mlir, d, before=None):
    j = lambda name: os.path.join(d, name)  # noqa: E731
    if tool in ("plir", "before"):
        # "before": another plir-opt build (--plir-opt-before) on the same inputs;
        # its outputs go to files of their own.
        exe, o = (plir, "") if tool == "plir" else (before, "_before")
        return {
            "text": [exe, j("in.plir"), "-o", j(f"out{o}.plir")],
            # Each build round-trips a binary file it wrote itself: an
            # earlier build may not read the current format version.
            "binary": [exe, j(f"in{o}.plirb"), "-o", j(f"out{o}.plirb")],
            "cleanup": [exe, j("in.plir"), "--passes", PASSES, "-o", j(f"clean{o}.plir")],
        }[case]
    return {
        "text": [mlir, j("in.mlir"), "-o", j("out.mlir")],
        "binary": [mlir, j("in.mlirbc"), "--emit-bytecode", "-o", j("out.mlirbc")],
        "cleanup": [mlir, j("in.mlir"),
                    "--pass-pipeline=builtin.module(func.func(canonicalize,cse),symbol-dce)",
                    "-o", j("clean.mlir")],
    }[case]


def limit_command(case, d, plir_output):
    """The physical limit: read the input (to /dev/null), write plir-opt's output size, fsynced."""
    out_bytes = os.path.getsize(plir_output)
    return ["/bin/sh", "-c", 'cat "$1" > /dev/null && dd if=/dev/zero of="$2" bs=4M count="$3" '
            'iflag=count_bytes conv=fsync status=none', "limit",
            os.path.join(d, input_file(case, "plir")), os.path.join(d, "limit.out"), str(out_bytes)]


def input_file(case, tool):
    tool = "plir" if tool in ("before", "limit") else tool
    return {("binary", "plir"): "in.plirb", ("binary", "mlir"): "in.mlirbc"}.get(
        (case, tool), "in.plir" if tool == "plir" else "in.mlir")


def cmd_run(a):
    failures, warnings = [], []
    new_file = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
    out = open(a.csv, "a", newline="")
    w = csv.DictWriter(out, FIELDS)
    if new_file:
        w.writeheader()
    places = a.place
    for size in a.sizes:
        for shape in a.shapes:
            dirs = {name: os.path.join(root, f"{shape}{size}") for name, root in places}
            for d in dirs.values():
                os.makedirs(d, exist_ok=True)
            log(f"== {SHAPE_TITLE[shape]}, {size} ops: generating")
            first = dirs[places[0][0]]
            nfun, kept = generate(size, shape, a.funcs, first)
            # Both inputs must load before anything is timed; these runs also warm the caches.
            try:
                must([a.plir_opt, os.path.join(first, "in.plir"), "-o", "/dev/null"], "plir-opt parse check")
                must([a.mlir_opt, os.path.join(first, "in.mlir"), "-o", "/dev/null"], "mlir-opt parse check")
                if "binary" in a.cases:
                    must([a.plir_opt, os.path.join(first, "in.plir"), "-o", os.path.join(first, "in.plirb")],
                         "plir-opt text -> binary")
                    must([a.mlir_opt, os.path.join(first, "in.mlir"), "--emit-bytecode", "-o",
                          os.path.join(first, "in.mlirbc")], "mlir-opt text -> bytecode")
                    if a.plir_opt_before:
                        must([a.plir_opt_before, os.path.join(first, "in.plir"), "-o",
                              os.path.join(first, "in_before.plirb")], "plir-opt (before) text -> binary")
            except ToolFailure as e:
                log(f"error: {shape}/{size}: {e}")
                failures.append(f"{shape}/{size}: preparation: {str(e).splitlines()[0]}")
                continue
            for d in dirs.values():
                if d != first:
                    for name in os.listdir(first):
                        shutil.copyfile(os.path.join(first, name), os.path.join(d, name))
            for case in a.cases:
                dead = set()
                tools = ("plir", "mlir", "limit") + (("before",) if a.plir_opt_before else ())
                if a.order == "interleaved":
                    schedule = [(r, place, d, tool) for r in range(a.runs) for place, d in dirs.items()
                                for tool in tools]
                else:  # blocked: run -1 is the warm-up, not recorded
                    schedule = [(r, place, d, tool) for place, d in dirs.items() for tool in tools
                                for r in range(-1, a.runs)]
                for r, place, d, tool in schedule:
                    if tool in dead or (tool == "limit" and "plir" in dead):
                        continue
                    if tool == "limit":
                        plir_cmd = commands(case, "plir", a.plir_opt, a.mlir_opt, d)
                        cmd = limit_command(case, d, plir_cmd[-1])  # its -o file
                    else:
                        cmd = commands(case, tool, a.plir_opt, a.mlir_opt, d, a.plir_opt_before)
                    inp = os.path.getsize(os.path.join(d, input_file(case, tool)))
                    row = dict(place=place, case=case, shape=shape, size=size, functions=nfun,
                               tool=tool, run=r, input_bytes=inp, order=a.order)
                    which = "warm-up run" if r < 0 else f"run {r + 1}/{a.runs}"
                    try:
                        wall, rss, cpu = run_once(cmd, os.path.join(d, "time.txt"))
                        row.update(wall_s=f"{wall:.4f}", peak_rss_kib=rss, cpu_s=f"{cpu:.2f}",
                                   status="ok")
                        log(f"   {place:5} {case:7} {TOOL_NAME[tool]} {which}: "
                            f"{wall:.3f} s, {rss / 1024:.1f} MiB")
                    except ToolFailure as e:
                        log(f"error: {TOOL_NAME[tool]} failed on case {case}, {SHAPE_TITLE[shape]}, "
                            f"{size} ops, {place}: {e}")
                        failures.append(f"{TOOL_NAME[tool]} on {case}/{shape}/{size}/{place}: "
                                        f"{str(e).splitlines()[0]}")
                        row.update(status="failed")
                        dead.add(tool)
                    if r >= 0 or row["status"] == "failed":
                        w.writerow(row)
                        out.flush()
                # The outputs must hold the expected number of ops (same work on both sides);
                # binary outputs are turned back into text for that (not timed).
                want = kept if case == "cleanup" else size
                for tool in ("plir", "mlir"):
                    if tool in dead:
                        continue
                    for place, d in dirs.items():
                        f = os.path.join(d, f"{'clean' if case == 'cleanup' else 'out'}.{tool}")
                        try:
                            if case == "binary":
                                tool_path = a.plir_opt if tool == "plir" else a.mlir_opt
                                must([tool_path, f + ("b" if tool == "plir" else "bc"), "-o", f],
                                     f"{tool}-opt binary output -> text")
                            got = count_ops(f, tool)
                        except (ToolFailure, OSError) as e:
                            log(f"error: {case}/{shape}/{size}/{place}: cannot check {tool}-opt's output: {e}")
                            failures.append(f"{tool}-opt on {case}/{shape}/{size}/{place}: output check: "
                                            f"{str(e).splitlines()[0]}")
                            continue
                        if got != want:
                            msg = (f"{case}/{shape}/{size}/{place}: {tool}-opt's output has {got} ops, "
                                   f"expected {want}")
                            log("warning: " + msg)
                            warnings.append(msg)
                        else:
                            log(f"   {place:5} {case:7} {tool}-opt output: {got} ops, as expected")
            for d in dirs.values():
                for name in os.listdir(d):
                    os.remove(os.path.join(d, name))
                os.rmdir(d)
    out.close()
    print_tables(a.csv)
    if warnings:
        print("\nWarnings:\n" + "\n".join("- " + x for x in warnings))
    if failures:
        print("\nFailures (stderr above):\n" + "\n".join("- " + x for x in failures))
        return 1
    return 0


# ---------------------------------------------------------------- tables

def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.2f}")


GOALS = {"text": 10.0, "binary": 20.0, "cleanup": 8.0}  # issue 25: mlir-opt's time over plir-opt's
RSS_GOAL = 3.0  # issue 25: plir-opt's peak RSS at most a third of mlir-opt's on the text round trip


def print_tables(path):
    rows = list(csv.DictReader(open(path)))
    groups = {}
    places = []
    for r in rows:
        place = r.get("place") or "-"  # CSVs written before places existed have no column
        if place not in places:
            places.append(place)
        key = (place, r["case"], r["shape"], int(r["size"]))
        g = groups.setdefault(key, {"plir": [], "mlir": [], "before": [], "limit": [], "fail": set(),
                                    "bytes": {}, "functions": r["functions"]})
        if r["tool"] in ("plir", "mlir"):
            g["bytes"][r["tool"]] = int(r["input_bytes"])
        if r["status"] == "ok":
            g[r["tool"]].append((float(r["wall_s"]), int(r["peak_rss_kib"]), float(r["cpu_s"])))
        else:
            g["fail"].add(r["tool"])
    order = lambda k: (places.index(k[0]), CASES.index(k[1]) if k[1] in CASES else 9,  # noqa: E731
                       k[2] != "many", k[3])
    medians = {}
    for key, g in groups.items():
        medians[key] = {t: tuple(statistics.median(x[i] for x in g[t]) for i in range(3))
                        for t in ("plir", "mlir", "before", "limit") if g[t] and t not in g["fail"]}
    shape_name = lambda g, shape: (f"{int(g['functions']):,} functions"  # noqa: E731
                                   if shape == "many" else "1 function")
    print("| where | case | shape | size | plir-opt s | mlir-opt s | ratio mlir/plir | limit s | plir/limit"
          " | plir RSS MB | mlir RSS MB | RSS ratio mlir/plir | PLIR input B/op | PLIR peak RSS B/op"
          " | plir CPU s | mlir CPU s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(groups, key=order):
        place, case, shape, size = key
        g, med = groups[key], medians[key]
        p, m, lim = med.get("plir"), med.get("mlir"), med.get("limit")
        cell = lambda t, v: v if t in med else ("FAILED" if t in g["fail"] else "-")  # noqa: E731
        ratio = f"{m[0] / p[0]:.2f}" if p and m else "-"
        rss_ratio = f"{m[1] / p[1]:.2f}" if p and m else "-"
        print(f"| {place} | {CASE_TITLE.get(case, case)} | {shape_name(g, shape)} | {size:,} | "
              f"{cell('plir', fmt_s(p[0]) if p else '')} | {cell('mlir', fmt_s(m[0]) if m else '')} | {ratio} | "
              f"{cell('limit', fmt_s(lim[0]) if lim else '')} | "
              f"{f'{p[0] / lim[0]:.2f}' if p and lim else '-'} | "
              f"{cell('plir', f'{p[1] * 1024 / 1e6:.1f}' if p else '')} | "
              f"{cell('mlir', f'{m[1] * 1024 / 1e6:.1f}' if m else '')} | {rss_ratio} | "
              f"{g['bytes'].get('plir', 0) / size:.1f} | "
              f"{cell('plir', f'{p[1] * 1024 / size:.0f}' if p else '')} | "
              f"{cell('plir', fmt_s(p[2]) if p else '')} | {cell('mlir', fmt_s(m[2]) if m else '')} |")
    runs = max((len(g["plir"]) for g in groups.values()), default=0)
    # CSVs from before the order column were interleaved.
    orders = sorted({r.get("order") or "interleaved" for r in rows})
    print(f"\nMedians of {runs} runs per tool ({'; '.join(ORDER_TEXT.get(o, o) for o in orders)}), "
          "whole processes; MB = 10^6 bytes; "
          "peak RSS from /usr/bin/time (%M). limit: `cat` of the case's PLIR input to /dev/null, then a "
          "write of plir-opt's output size, fsynced (plir-opt fsyncs its output; mlir-opt does not). "
          "PLIR input B/op: bytes of the case's input file "
          "(text, or binary for the binary case) per op; PLIR peak RSS B/op includes the process's "
          "fixed start-up memory, so it is only meaningful at the larger sizes. CPU s: median user + "
          "system time (from /usr/bin/time), less sensitive than wall time to other load on the machine.")
    # Issue 25's goals, at the largest size measured.
    top = max((k[3] for k in groups), default=0)
    goal_rows = []
    for key in sorted(groups, key=order):
        place, case, shape, size = key
        p, m = medians[key].get("plir"), medians[key].get("mlir")
        if size != top or case not in GOALS or not (p and m):
            continue
        goal_rows.append(f"| {place} | {CASE_TITLE[case]} | {shape_name(groups[key], shape)} | "
                         f"{m[0] / p[0]:.2f}x | {GOALS[case]:g}x | {'met' if m[0] / p[0] >= GOALS[case] else 'missed'} |")
        if case == "text":
            goal_rows.append(f"| {place} | peak RSS, text round trip | {shape_name(groups[key], shape)} | "
                             f"{m[1] / p[1]:.2f}x less | {RSS_GOAL:g}x less | "
                             f"{'met' if m[1] / p[1] >= RSS_GOAL else 'missed'} |")
    if goal_rows:
        print(f"\nIssue 25's goals at {top:,} ops (mlir-opt over plir-opt, medians above):\n")
        print("| where | case | shape | lead | goal | |")
        print("|---|---|---|---:|---:|---|")
        print("\n".join(goal_rows))
    # Before and after: another plir-opt build on the same inputs, same run.
    if any(g["before"] for g in groups.values()):
        print("\n| where | case | shape | size | before s | after s | after/before wall | before CPU s | after CPU s"
              " | after/before CPU | before RSS MB | after RSS MB |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for key in sorted(groups, key=order):
            place, case, shape, size = key
            g, med = groups[key], medians[key]
            if "before" not in med or "plir" not in med:
                continue
            b, p = med["before"], med["plir"]
            print(f"| {place} | {CASE_TITLE.get(case, case)} | {shape_name(g, shape)} | {size:,} | {fmt_s(b[0])} | "
                  f"{fmt_s(p[0])} | {p[0] / b[0]:.2f} | {fmt_s(b[2])} | {fmt_s(p[2])} | "
                  f"{(p[2] / b[2]) if b[2] else float('nan'):.2f} | {b[1] * 1024 / 1e6:.1f} | "
                  f"{p[1] * 1024 / 1e6:.1f} |")
        print("\nbefore: --plir-opt-before (PLIR_OPT_BEFORE), after: --plir-opt; medians of the same "
              "run's runs; a ratio above 1 is slower after.")
    # Input sizes of both formats.
    sizes = {}
    for (_, case, shape, size), g in groups.items():
        e = sizes.setdefault((shape, size), {})
        for t, b in g["bytes"].items():
            e[(case == "binary", t)] = b
    print("\n| shape | size | PLIR text B/op | MLIR text B/op | PLIR binary B/op | MLIR bytecode B/op |")
    print("|---|---:|---:|---:|---:|---:|")
    for (shape, size) in sorted(sizes, key=lambda k: (k[0] != "many", k[1])):
        e = sizes[(shape, size)]
        c = lambda k: f"{e[k] / size:.1f}" if k in e else "-"  # noqa: E731
        print(f"| {SHAPE_TITLE.get(shape, shape)} | {size:,} | {c((False, 'plir'))} | {c((False, 'mlir'))} | "
              f"{c((True, 'plir'))} | {c((True, 'mlir'))} |")


def place_arg(v):
    name, sep, d = v.partition("=")
    if not sep or not name or not d:
        raise argparse.ArgumentTypeError(f"expected NAME=DIR, got '{v}'")
    return name, d


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("size", type=int)
    g.add_argument("shape", choices=["many", "one"])
    g.add_argument("funcs", type=int)
    g.add_argument("out_dir")
    r = sub.add_parser("run")
    r.add_argument("--plir-opt", required=True)
    r.add_argument("--mlir-opt", required=True)
    r.add_argument("--plir-opt-before", default=None,
                   help="another plir-opt build, run in the same order on the same inputs (before/after table)")
    r.add_argument("--place", required=True, action="append", type=place_arg,
                   help="NAME=DIR: where inputs and outputs go (repeatable: e.g. disk=/var/tmp/x tmpfs=/dev/shm/y)")
    r.add_argument("--csv", required=True)
    r.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000, 1000000])
    r.add_argument("--shapes", nargs="+", default=["many", "one"], choices=["many", "one"])
    r.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    r.add_argument("--runs", type=int, default=3)
    r.add_argument("--order", choices=["interleaved", "blocked"], default="interleaved",
                   help="interleaved (default): plir, mlir, limit, plir, ...; blocked: each tool's "
                        "runs back to back after a warm-up run (see the module's docstring)")
    r.add_argument("--funcs", type=int, default=1000)
    t = sub.add_parser("table")
    t.add_argument("csv")
    a = ap.parse_args(argv)
    if a.cmd == "gen":
        nfun, kept = generate(a.size, a.shape, a.funcs, a.out_dir)
        print(f"{nfun} functions, {a.size} ops, {kept} left after a cleanup")
        return 0
    if a.cmd == "table":
        print_tables(a.csv)
        return 0
    if a.runs < 1 or a.funcs < 1:
        raise SystemExit("peer_compare: --runs and --funcs must be at least 1")
    return cmd_run(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
