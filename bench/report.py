#!/usr/bin/env python3
"""Turns Google Benchmark JSON into the tables of bench/RESULTS.md and a
log-log chart of time against size per operation.

usage: report.py results.json RESULTS.md chart.png
The RESULTS.md sections outside the markers are kept as they are."""
import json
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

BEGIN = "<!-- BEGIN GENERATED TABLES (bench/report.py) -->"
END = "<!-- END GENERATED TABLES -->"


def human(x, unit=""):
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.3g}{suffix}{unit}"
    return f"{x:.3g}{unit}"


def main(src, md, png):
    data = json.load(open(src))
    rows = defaultdict(dict)  # (op, model) -> size -> benchmark
    other = []
    for b in data["benchmarks"]:
        b["name"] = b["name"].removesuffix("/real_time")  # UseRealTime() suffix
    for b in data["benchmarks"]:
        parts = b["name"].split("/")
        if len(parts) == 3:
            op, model, size = parts
            rows[(op, model)][int(size)] = b
        elif len(parts) == 2 and parts[0] == "Pass":
            rows[(parts[0] + " " + parts[1].split("/")[0], "chain")] = rows.get((parts[0], "x"), {})
        else:
            other.append(b)
    # Pass benchmarks are named Pass/<Name>/<size>
    for b in data["benchmarks"]:
        parts = b["name"].split("/")
        if len(parts) == 3 and parts[0] == "Pass":
            rows.pop((parts[0], parts[1]), None)
            rows[("Pass " + parts[1], "chain")][int(parts[2])] = b
    rows = {k: v for k, v in rows.items() if v}
    sizes = sorted({s for v in rows.values() for s in v})
    lines = [BEGIN, "", f"Machine: {data['context'].get('num_cpus')} CPUs at "
             f"{data['context'].get('mhz_per_cpu')} MHz; build: `-c opt`; "
             f"date: {data['context'].get('date')}.", "",
             "Time per operation (wall), and throughput at the largest size:", "",
             "| operation | model | " + " | ".join(human(s) for s in sizes) +
             " | bindings/s | MB/s | RSS bytes/binding | node bytes/binding | ns/binding |",
             "|---|---|" + "---|" * len(sizes) + "---|---|---|---|---|"]
    for (op, model), by_size in sorted(rows.items()):
        cells = []
        for s in sizes:
            b = by_size.get(s)
            cells.append(f"{b['real_time']:.3g} {b['time_unit']}" if b else "")
        big = by_size[max(by_size)]
        ips = human(big.get("items_per_second", 0))
        mbs = f"{big['bytes_per_second'] / 1e6:.0f}" if "bytes_per_second" in big else ""
        rss = f"{big['rss_per_binding']:.0f}" if "rss_per_binding" in big else ""
        nodes = f"{big['node_bytes_per_binding']:.0f}" if "node_bytes_per_binding" in big else ""
        # Cost per binding at each size (flat = linear scaling), where the
        # benchmark counts bindings.
        per = []
        for s in sizes:
            b = by_size.get(s)
            if b and b.get("items_per_second"):
                per.append(f"{1e9 / b['items_per_second']:.3g}")
        flat = " / ".join(per) if op not in ("Copy", "UpdateOneFunction") else ""
        lines.append(f"| {op} | {model} | " + " | ".join(cells) +
                     f" | {ips} | {mbs} | {rss} | {nodes} | {flat} |")
    for b in other:
        lines.append("")
        lines.append(f"`{b['name']}`: {b['real_time']:.3g} {b['time_unit']} per run "
                     f"({int(b.get('plugins', 0))} plugins).")
    lines += ["", "![time against size](results.png)", "", END]

    text = open(md).read() if __import__("os").path.exists(md) else ""
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + "\n".join(lines) + text[text.index(END) + len(END):]
    else:
        text += "\n" + "\n".join(lines) + "\n"
    open(md, "w").write(text)

    ops = sorted(rows)
    cols = 4
    fig, axes = plt.subplots((len(ops) + cols - 1) // cols, cols, figsize=(16, 3.2 * ((len(ops) + cols - 1) // cols)))
    for ax, key in zip(axes.flat, ops):
        by_size = rows[key]
        xs = sorted(by_size)
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}
        ys = [by_size[x]["real_time"] * unit[by_size[x]["time_unit"]] for x in xs]
        ax.loglog(xs, ys, "o-")
        ax.set_title(f"{key[0]} ({key[1]})", fontsize=9)
        ax.set_xlabel("bindings")
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(ops):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(png, dpi=80)


if __name__ == "__main__":
    main(*sys.argv[1:4])
