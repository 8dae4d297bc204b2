#!/usr/bin/python3
"""PyTorch's forward pass and a whole plir-run process, timed in alternation.

  /usr/bin/python3 bench/torch_interleaved.py --model NAME --rounds N --json OUT -- CMD...

Builds NAME as tools/export_models.py exports it (the same seeded weights
and input; tools/export_models.py's seeded_model), with 2 threads, in eval
mode and under no_grad. After 2 warm-up forwards, each of the N rounds
times PyTorch's forward (the median of 3), waits SETTLE_SECONDS for
PyTorch's threads to stop spinning, and then runs CMD once (the wall time
of the whole process, from fork to exit). So both sides see the same
state of the machine: on a shared 2-core VM a side measured a minute
apart from the other moved by up to 2x (bench/RESULTS.md).

OUT (JSON) gets each round's two times and their ratio, and the medians:
plir_seconds_median, torch_seconds_median, ratio_median (the median of the
per-round ratios). CMD must exit 0 every round; otherwise this exits 1 with
its output.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import export_models  # noqa: E402  (tools/ is not a package)

SETTLE_SECONDS = 0.1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=export_models.MODELS)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--json", required=True, help="where the times go")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the plir-run command")
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd or args.rounds < 1:
        ap.error("a command after -- and at least one round are needed")

    model, x = export_models.seeded_model(args.model)
    rounds = []
    with torch.no_grad():
        for _ in range(2):
            model(x)
        for _ in range(args.rounds):
            forwards = []
            for _ in range(3):
                t0 = time.perf_counter()
                model(x)
                forwards.append(time.perf_counter() - t0)
            t = statistics.median(forwards)
            # PyTorch's OpenMP workers spin for a while after a forward
            # (libgomp's GOMP_SPINCOUNT); on 2 cores a process started at
            # once would share a core with that spin.
            time.sleep(SETTLE_SECONDS)
            t0 = time.perf_counter()
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            p = time.perf_counter() - t0
            if r.returncode != 0:
                sys.stdout.write(r.stdout.decode(errors="replace"))
                print(f"torch_interleaved.py: {cmd[0]} exited {r.returncode}", file=sys.stderr)
                return 1
            rounds.append({"torch_seconds": t, "plir_seconds": p, "ratio": p / t})
    result = {
        "model": args.model, "threads": 2, "rounds": rounds, "torch": torch.__version__,
        "plir_seconds_median": statistics.median(r["plir_seconds"] for r in rounds),
        "torch_seconds_median": statistics.median(r["torch_seconds"] for r in rounds),
        "ratio_median": statistics.median(r["ratio"] for r in rounds),
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
