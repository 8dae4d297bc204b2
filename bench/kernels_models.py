#!/usr/bin/python3
"""Exports the models of bench/kernels.sh to ONNX and times PyTorch on them.

  /usr/bin/python3 bench/kernels_models.py --out DIR [--runs N]

Writes DIR/resnet50.onnx (torchvision's ResNet-50, weights=None: nothing is
downloaded) and DIR/block.onnx (one ResNet bottleneck at stage 3: 1x1, 3x3,
1x1 convolutions with batch norm, ReLU and the residual add, input
1x256x56x56), both opset 14 in eval mode, and prints one JSON line per
model with PyTorch's forward time: the median of N runs after 2 warm-ups,
torch.set_num_threads(2), no_grad.
"""

import argparse
import json
import os
import statistics
import time

import torch
import torchvision


def median_seconds(model, x, runs):
    with torch.no_grad():
        for _ in range(2):
            model(x)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    torch.manual_seed(20261201)
    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    models = {
        "resnet50": (torchvision.models.resnet50(weights=None), (1, 3, 224, 224)),
        "block": (torchvision.models.resnet.Bottleneck(256, 64), (1, 256, 56, 56)),
    }
    for name, (model, shape) in models.items():
        model.eval()
        x = torch.randn(*shape)
        path = os.path.join(args.out, name + ".onnx")
        torch.onnx.export(model, x, path, opset_version=14, input_names=["x"],
                          output_names=["y"], do_constant_folding=True)
        print(json.dumps({"model": name, "onnx": path,
                          "torch_seconds": median_seconds(model, x, args.runs)}))


if __name__ == "__main__":
    main()
