#!/usr/bin/env python3
"""Draws the chart of bench/peer_compare.sh from its CSV of raw runs.

usage: peer_chart.py peers.csv peers.png

One panel per case (rows) and shape (columns): wall time of plir-opt and
mlir-opt side by side per size (bar = median, whisker = min..max of the
runs, black tick = median CPU time, log scale, mlir/plir ratio of wall
times above each pair); a last row of panels gives
the median peak RSS per case and size. Only the first place of the CSV
(its `place` column: disk or tmpfs) is drawn."""
import csv
import math
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

CASES = ["text", "binary", "cleanup"]
CASE_TITLE = {"text": "text round trip", "binary": "binary round trip",
              "cleanup": "cleanup pipeline (text in/out)"}
TOOLS = [("plir", "plir-opt", "#1f77b4"), ("mlir", "mlir-opt", "#ff7f0e")]


def human(n):
    return f"{n // 1000000}M" if n >= 1000000 and n % 1000000 == 0 else (
        f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n))


def main(src, png):
    runs = {}  # (case, shape, size, tool) -> [(wall, rss)]
    functions = {}
    place = None  # the chart shows the first place of the CSV (bench/peer_compare.sh: disk)
    for r in csv.DictReader(open(src)):
        place = place or r.get("place")
        if r["status"] != "ok" or r.get("place") != place:
            continue
        key = (r["case"], r["shape"], int(r["size"]), r["tool"])
        runs.setdefault(key, []).append((float(r["wall_s"]), int(r["peak_rss_kib"]) * 1024 / 1e6,
                                         float(r["cpu_s"])))
        functions[r["shape"]] = int(r["functions"]) if r["shape"] == "many" else 1
    if not runs:
        print("peer_chart: no successful runs in " + src, file=sys.stderr)
        return 1
    cases = [c for c in CASES if any(k[0] == c for k in runs)]
    shapes = [s for s in ("many", "one") if any(k[1] == s for k in runs)]
    sizes = sorted({k[2] for k in runs})
    # Log axes with one fixed floor, shared by all time panels, so that bar
    # lengths compare across panels (a log bar's length depends on the floor).
    walls = [max(x[0], x[2], 1e-3) for v in runs.values() for x in v]
    t_lo = 10 ** math.floor(math.log10(min(walls) / 1.5))
    t_hi = max(walls) * 8
    rss_hi = max(x[1] for v in runs.values() for x in v) * 3
    fmt = FuncFormatter(lambda y, _: f"{y:g}")
    fig, axes = plt.subplots(len(cases) + 1, len(shapes), figsize=(6.2 * len(shapes), 3.3 * (len(cases) + 1)),
                             squeeze=False)
    width = 0.38
    for col, shape in enumerate(shapes):
        shape_title = f"{functions[shape]:,} functions" if shape == "many" else "one function"
        for row, case in enumerate(cases):
            ax = axes[row][col]
            med = {}
            for t, (tool, label, color) in enumerate(TOOLS):
                xs, ys, lo, hi, cpu = [], [], [], [], []
                for i, size in enumerate(sizes):
                    v = [x[0] for x in runs.get((case, shape, size, tool), [])]
                    if not v:
                        continue
                    m = statistics.median(v)
                    cpu.append(statistics.median(x[2] for x in runs[(case, shape, size, tool)]))
                    med[(size, tool)] = m
                    xs.append(i + (t - 0.5) * width)
                    ys.append(m)
                    lo.append(m - min(v))
                    hi.append(max(v) - m)
                ax.bar(xs, ys, width, color=color, label=label, yerr=[lo, hi], capsize=2,
                       error_kw={"elinewidth": 0.8, "ecolor": "#444"})
                ax.scatter(xs, [max(c, t_lo) for c in cpu], marker="_", s=260, linewidths=2, color="black",
                           zorder=3, label="median CPU time (user+sys)" if t == 1 else None)
                for x, y in zip(xs, ys):
                    ax.annotate(f"{y:.3g}", (x, y), textcoords="offset points", xytext=(0, 2), ha="center",
                                va="bottom", fontsize=7)
            ax.set_yscale("log")
            ax.set_ylim(t_lo, t_hi)
            ax.yaxis.set_major_formatter(fmt)
            ax.set_xticks(range(len(sizes)))
            ax.set_xticklabels([f"{human(s)} ops" for s in sizes])
            ax.set_ylabel("wall time, s (log)")
            ax.set_title(f"{CASE_TITLE[case]}, {shape_title}", fontsize=10)
            for i, size in enumerate(sizes):
                if (size, "plir") in med and (size, "mlir") in med:
                    top = max(med[(size, "plir")], med[(size, "mlir")])
                    ax.text(i, top * 2.2, f"mlir/plir\n{med[(size, 'mlir')] / med[(size, 'plir')]:.2f}x",
                            ha="center", va="bottom", fontsize=7.5, color="#333")
            ax.grid(axis="y", which="major", alpha=0.3)
            if row == 0 and col == 0:
                ax.legend(loc="upper left", fontsize=8)
        # Peak RSS: groups of (case, size).
        ax = axes[len(cases)][col]
        groups = [(c, s) for c in cases for s in sizes]
        for t, (tool, label, color) in enumerate(TOOLS):
            xs, ys = [], []
            for i, (c, s) in enumerate(groups):
                v = [x[1] for x in runs.get((c, shape, s, tool), [])]
                if v:
                    xs.append(i + (t - 0.5) * width)
                    ys.append(statistics.median(v))
            ax.bar(xs, ys, width, color=color, label=label)
            for x, y in zip(xs, ys):
                ax.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 2), ha="center",
                            va="bottom", fontsize=6.5)
        ax.set_yscale("log")
        ax.set_ylim(1, rss_hi)
        ax.yaxis.set_major_formatter(fmt)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{c}\n{human(s)}" for c, s in groups], fontsize=7.5)
        ax.set_ylabel("peak RSS, MB (log)")
        ax.set_title(f"peak RSS, {shape_title}", fontsize=10)
        ax.grid(axis="y", which="major", alpha=0.3)
    fig.suptitle("plir-opt vs mlir-opt, whole processes: median wall time of the runs (whiskers: min..max); "
                 "mlir/plir > 1: plir-opt is faster" + (f"; files on {place}" if place else ""), fontsize=10.5)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
