#!/usr/bin/python3
"""Writes ONNX node tests (model.onnx + test_data_set_0) for RNN, GRU and LSTM
in the directions and options ONNX's own node tests do not cover: reverse and
bidirectional, layout 1, initial state, peepholes, clip, linear_before_reset.

The expected outputs come from a NumPy reference written from the operator
documentation, independent of the importer.

Usage: rnn_cases.py OUT_DIR   (tests go to OUT_DIR/node/<name>; their names
are printed, one a line)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reference(cell, x, w, r, b, h0, c0, p, direction, lbr, clip, layout):
    """Y, Y_h, Y_c of the ONNX op, by the documented equations."""
    if layout == 1:
        x, h0, c0 = x.transpose(1, 0, 2), h0.transpose(1, 0, 2), c0.transpose(1, 0, 2)
    seq, batch, _ = x.shape
    nd, g, hid = w.shape[0], GATES[cell], r.shape[-1]
    y = np.zeros((seq, nd, batch, hid))
    y_h = np.zeros((nd, batch, hid))
    y_c = np.zeros((nd, batch, hid))

    def clipped(v):
        return np.clip(v, -clip, clip) if clip else v

    for d in range(nd):
        wb, rb = b[d, : g * hid], b[d, g * hid :]
        h, c = h0[d], c0[d]

        def gate(k, xt, hv):  # x W_k^T + h R_k^T + Wb_k + Rb_k
            s = slice(k * hid, (k + 1) * hid)
            return xt @ w[d, s].T + wb[s] + hv @ r[d, s].T + rb[s]

        reverse = direction == "reverse" or d == 1
        for step in range(seq):
            t = seq - 1 - step if reverse else step
            xt = x[t]
            if cell == "RNN":
                h = np.tanh(clipped(gate(0, xt, h)))
            elif cell == "GRU":
                z = sigmoid(clipped(gate(0, xt, h)))
                rr = sigmoid(clipped(gate(1, xt, h)))
                s = slice(2 * hid, 3 * hid)
                if lbr:
                    n = xt @ w[d, s].T + wb[s] + rr * (h @ r[d, s].T + rb[s])
                else:
                    n = xt @ w[d, s].T + wb[s] + (rr * h) @ r[d, s].T + rb[s]
                h = (1 - z) * np.tanh(clipped(n)) + z * h
            else:
                pi, po, pf = p[d, :hid], p[d, hid : 2 * hid], p[d, 2 * hid :]
                i = sigmoid(clipped(gate(0, xt, h) + pi * c))
                f = sigmoid(clipped(gate(2, xt, h) + pf * c))
                cand = np.tanh(clipped(gate(3, xt, h)))
                c = f * c + i * cand
                o = sigmoid(clipped(gate(1, xt, h) + po * c))
                h = o * np.tanh(c)
            y[t, d] = h
        y_h[d], y_c[d] = h, c
    if layout == 1:
        y = y.transpose(2, 0, 1, 3)
        y_h, y_c = y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    return y, y_h, y_c


def write_case(out_dir, rng, cell, direction, layout, lbr, clip):
    nd = 2 if direction == "bidirectional" else 1
    g, hid, seq, batch, inp = GATES[cell], 3, 4, 2, 5
    f32 = np.float32
    x = rng.standard_normal((seq, batch, inp) if layout == 0 else (batch, seq, inp)).astype(f32)
    w = (0.5 * rng.standard_normal((nd, g * hid, inp))).astype(f32)
    r = (0.5 * rng.standard_normal((nd, g * hid, hid))).astype(f32)
    b = (0.5 * rng.standard_normal((nd, 2 * g * hid))).astype(f32)
    state = (nd, batch, hid) if layout == 0 else (batch, nd, hid)
    h0 = rng.standard_normal(state).astype(f32)
    c0 = rng.standard_normal(state).astype(f32)
    p = rng.standard_normal((nd, 3 * hid)).astype(f32)

    names, values = ["X", "W", "R", "B", "", "initial_h"], [x, w, r, b, None, h0]
    if cell == "LSTM":
        names += ["initial_c", "P"]
        values += [c0, p]
    outs = ["Y", "Y_h"] + (["Y_c"] if cell == "LSTM" else [])
    attrs = {"hidden_size": hid, "direction": direction, "layout": layout}
    if clip:
        attrs["clip"] = clip
    if cell == "GRU":
        attrs["linear_before_reset"] = lbr
    y, y_h, y_c = reference(cell, x, w, r, b, h0, c0, p, direction, lbr, clip, layout)
    expected = [y, y_h] + ([y_c] if cell == "LSTM" else [])

    inputs = [(n, v) for n, v in zip(names, values) if n]
    graph = helper.make_graph(
        [helper.make_node(cell, names, outs, **attrs)],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in zip(outs, expected)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    name = f"test_{cell.lower()}_{direction}_layout{layout}" + ("_lbr" if lbr else "") + (
        "_clip" if clip else "")
    case = os.path.join(out_dir, "node", name)
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(case, "model.onnx"))
    for k, (n, v) in enumerate(inputs):
        with open(os.path.join(case, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    for k, (n, v) in enumerate(zip(outs, expected)):
        with open(os.path.join(case, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v.astype(f32), n).SerializeToString())
    return name


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: rnn_cases.py OUT_DIR")
    rng = np.random.default_rng(0)
    for cell in ["RNN", "GRU", "LSTM"]:
        for direction in ["reverse", "bidirectional"]:
            for layout in [0, 1]:
                # layout 1 cases also clip (and GRU's apply linear_before_reset).
                lbr = 1 if cell == "GRU" and layout == 1 else 0
                clip = 0.7 if layout == 1 else None
                print(write_case(sys.argv[1], rng, cell, direction, layout, lbr, clip))


if __name__ == "__main__":
    main()
