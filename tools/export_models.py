#!/usr/bin/python3
"""Exports a model from PyTorch to ONNX with seeded random weights, a seeded
input and PyTorch's output, for the end-to-end tests (models/) and the
benchmark (bench/models.sh).

  /usr/bin/python3 tools/export_models.py --model NAME --out DIR [--time-runs N]

NAME is resnet50, mobilenet_v2, vit_b_16 or bert (an nn.Embedding and 4
nn.TransformerEncoderLayer, d_model 256, 4 heads, GELU, batch first, 128
int64 token ids). DIR receives:

  model.onnx            opset 14, constant folding on
  input.safetensors     the seeded input, under the graph input's name
  expected.safetensors  PyTorch's output (eval mode, 2 threads), under the
                        graph output's name
  torch_time.json       PyTorch's forward time (median of --time-runs runs
                        after 2 warm-ups; only with --time-runs > 0)

Every parameter and buffer is randomized from a fixed seed before export
(default initialization makes degenerate outputs: BatchNorm's running
statistics are 0 and 1, ViT's heads are zero). Weights are normal with
std 1/sqrt(fan_in); BatchNorm's running statistics are then measured on
seeded data (a train-mode pass with cumulative averaging) and perturbed, so
that activations stay O(1) through residual stacks and running_var is
positive. No weights are downloaded (torchvision weights=None).

Runs on Debian's /usr/bin/python3 with python3-torch 1.13, python3-torchvision
0.14 and python3-onnx.
"""

import argparse
import json
import math
import os
import statistics
import struct
import sys
import time

import torch
import torch.nn as nn
import torchvision

SEED = 20261201
MODELS = ("resnet50", "mobilenet_v2", "vit_b_16", "bert")
OPSET = 14  # torch 1.13 exports all four cleanly at 14 (and at 13)


class BertLike(nn.Module):
    """Token and position embeddings, then 4 post-norm encoder layers."""

    def __init__(self, vocab=1000, seq=128, d_model=256, heads=4, layers=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=0.0,
                                       activation="gelu", batch_first=True)
            for _ in range(layers)
        ])
        self.register_buffer("positions", torch.arange(seq).unsqueeze(0), persistent=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(self.positions)
        for layer in self.layers:
            x = layer(x)
        return x


def build(name):
    if name == "resnet50":
        return torchvision.models.resnet50(weights=None), (1, 3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)
    if name == "vit_b_16":
        return torchvision.models.vit_b_16(weights=None), (1, 3, 224, 224)
    if name == "bert":
        return BertLike(), (1, 128)
    raise SystemExit(f"export_models.py: unknown model '{name}' (one of {', '.join(MODELS)})")


def make_input(name, shape, gen):
    if name == "bert":
        return torch.randint(0, 1000, shape, generator=gen, dtype=torch.int64)
    return torch.randn(shape, generator=gen)


def randomize(model, name, shape, gen):
    """Seeded values for every parameter and buffer, activations O(1)."""
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if p.dim() >= 2 and not isinstance(_owner(model, pname), nn.Embedding):
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(fan_in))
            elif p.dim() >= 2:  # embeddings, ViT's class token and position embedding
                p.copy_(torch.randn(p.shape, generator=gen))
            elif pname.endswith("weight"):  # norm scales
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
            else:  # biases, norm shifts
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
        if name in ("vit_b_16",):
            # Position embeddings of the size of the tokens' keep attention spread.
            model.encoder.pos_embedding.mul_(0.5)
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if bns:
        # Running statistics measured on seeded data, then perturbed: the
        # network's activations stay O(1) and every buffer is non-default.
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # cumulative average
        model.train()
        with torch.no_grad():
            for _ in range(2):
                model(make_input(name, (4,) + tuple(shape[1:]), gen))
        with torch.no_grad():
            for m in bns:
                m.running_mean.add_(0.05 * torch.randn(m.running_mean.shape, generator=gen) *
                                    m.running_var.sqrt())
                m.running_var.mul_(torch.empty(m.running_var.shape).uniform_(0.8, 1.25,
                                                                             generator=gen))
                m.running_var.clamp_(min=1e-3)
                m.momentum = 0.1
    model.eval()


def _owner(model, pname):
    mod = model
    for part in pname.split(".")[:-1]:
        mod = getattr(mod, part)
    return mod


# Debian has no python3-safetensors, and the format is three parts: an
# 8-byte little-endian header length, a JSON header, the raw data.
_DTYPES = {torch.float32: "F32", torch.int64: "I64", torch.int32: "I32", torch.float64: "F64"}


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        data = t.numpy().tobytes()
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # data 8-byte aligned, as the reference writer does
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def seeded_model(name):
    """The model NAME with its seeded random weights, in eval mode, and its
    seeded input: what main() exports (bench/torch_interleaved.py builds the
    same model to time it)."""
    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model, shape = build(name)
    randomize(model, name, shape, gen)
    x = make_input(name, shape, torch.Generator().manual_seed(SEED + 1))
    return model, x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=MODELS)
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--time-runs", type=int, default=0,
                    help="time this many forward passes after 2 warm-ups (torch_time.json)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    model, x = seeded_model(args.model)
    with torch.no_grad():
        y = model(x)
    if not torch.isfinite(y).all() or float(y.std()) < 1e-3:
        raise SystemExit(f"export_models.py: degenerate output for {args.model} "
                         f"(std {float(y.std())})")

    onnx_path = os.path.join(args.out, "model.onnx")
    torch.onnx.export(model, (x,), onnx_path + ".tmp", opset_version=OPSET,
                      do_constant_folding=True, input_names=["input"], output_names=["output"])
    os.replace(onnx_path + ".tmp", onnx_path)
    save_safetensors(os.path.join(args.out, "input.safetensors"), {"input": x})
    save_safetensors(os.path.join(args.out, "expected.safetensors"), {"output": y})
    print(f"{args.model}: output {list(y.shape)} mean {float(y.mean()):.4g} "
          f"std {float(y.std()):.4g} max|y| {float(y.abs().max()):.4g}")

    if args.time_runs > 0:
        times = []
        with torch.no_grad():
            for i in range(2 + args.time_runs):
                t0 = time.perf_counter()
                model(x)
                if i >= 2:
                    times.append(time.perf_counter() - t0)
        result = {"model": args.model, "threads": 2, "runs": len(times),
                  "forward_seconds_median": statistics.median(times),
                  "forward_seconds": times, "torch": torch.__version__}
        with open(os.path.join(args.out, "torch_time.json"), "w") as f:
            json.dump(result, f, indent=1)
        print(f"{args.model}: PyTorch forward median {result['forward_seconds_median']:.4f} s "
              f"over {len(times)} runs (2 threads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
