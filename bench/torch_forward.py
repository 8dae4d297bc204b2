#!/usr/bin/python3
"""PyTorch's forward time of a torchvision model (random weights, input
1x3x224x224, eval, no_grad, torch.set_num_threads(2)): prints the median of
N runs after 2 warm-ups, then each run's seconds.

  /usr/bin/python3 bench/torch_forward.py MODEL N
"""
import statistics
import sys
import time

import torch
import torchvision

torch.set_num_threads(2)
name, runs = sys.argv[1], int(sys.argv[2])
m = getattr(torchvision.models, name)(weights=None).eval()
x = torch.randn(1, 3, 224, 224)
with torch.no_grad():
    for _ in range(2):
        m(x)
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        m(x)
        ts.append(time.perf_counter() - t)
print(f"{statistics.median(ts):.4f}", " ".join(f"{t:.3f}" for t in ts))
