// Neural-network ONNX ops: convolution, softmax, pooling, normalization.
#include <optional>

#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

bool Has(const char* op) { return static_cast<bool>(OpRegistry::Global().Lookup(op)); }
Attrs Shape(const std::vector<int64_t>& s) { return MakeAttrs({{Symbol("shape"), IntList(s)}}); }

// Explicit begin/end pads per spatial axis from ONNX's pads or auto_pad.
StatusOr<std::vector<int64_t>> ConvPads(ConvertContext& c, const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& k, const std::vector<int64_t>& strides,
                                        const std::vector<int64_t>& dil) {
  size_t n = in.size();
  std::string ap = c.AttrString("auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * n, 0);
  if (ap == "NOTSET") {
    std::vector<int64_t> p = c.AttrInts("pads");
    if (!p.empty()) {
      if (p.size() != 2 * n) return c.Error("pads must have " + std::to_string(2 * n) + " entries");
      pads = p;
    }
  } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      int64_t out = (in[i] + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - in[i]);
      int64_t small = total / 2, big = total - small;
      pads[i] = ap == "SAME_UPPER" ? small : big;
      pads[i + n] = ap == "SAME_UPPER" ? big : small;
    }
  } else if (ap != "VALID") {
    return c.Error("auto_pad '" + ap + "' is not supported");
  }
  return pads;
}

StatusOr<Outputs> Conv(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr w, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, c.InputShape(1));
  if (xs.size() != 3 && xs.size() != 4) return Unimplemented("Conv on " + std::to_string(xs.size() - 2) + "-D data (PLIR has 1-D and 2-D)");
  size_t n = xs.size() - 2;
  std::vector<int64_t> in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end());
  std::vector<int64_t> strides = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
  if (strides.size() != n || dil.size() != n) return c.Error("strides and dilations need one entry per spatial axis");
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvPads(c, in, k, strides, dil));
  int64_t groups = c.AttrInt("group", 1);
  if (n == 1) {  // as a 2-D convolution of height 1
    PLIR_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, Shape({xs[0], xs[1], 1, xs[2]})));
    PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, Shape({ws[0], ws[1], 1, ws[2]})));
    strides = {1, strides[0]};
    dil = {1, dil[0]};
    pads = {0, pads[0], 0, pads[1]};
  }
  Attrs a = MakeAttrs({{Symbol("strides"), IntList(strides)},
                       {Symbol("padding"), IntList(pads)},
                       {Symbol("dilation"), IntList(dil)},
                       {Symbol("groups"), AttrValue::Int(groups)}});
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("nn.conv2d", {x, w}, a));
  const TensorTypeNode* yt = As<TensorTypeNode>(y->type());
  if (n == 1) {
    if (!yt || !yt->IsStatic()) return c.Error("the convolution's output shape is not static");
    PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape({yt->shape()[0].value, yt->shape()[1].value, yt->shape()[3].value})));
  }
  if (c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(2));
    std::vector<int64_t> bs = {1, ws[0]};
    for (size_t i = 0; i < n; ++i) bs.push_back(1);
    PLIR_ASSIGN_OR_RETURN(b, c.Call("reshape", {b}, Shape(bs)));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, b}));
  }
  return Outputs{y};
}

// Softmax before opset 13: the input as 2-D [prod(:axis), prod(axis:)],
// softmax over the second axis, reshaped back.
StatusOr<Outputs> SoftmaxOld(ConvertContext& c, bool log) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", 1), std::max<int64_t>(r, 1)));
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= s[i];
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("reshape", {x}, Shape({a, b})));
  PLIR_ASSIGN_OR_RETURN(y, c.Call("nn.softmax", {y}, MakeAttrs({{Symbol("axis"), AttrValue::Int(-1)}})));
  if (log) { PLIR_ASSIGN_OR_RETURN(y, c.Call("log", {y})); }
  PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape(s)));
  return Outputs{y};
}

StatusOr<Outputs> Softmax13(ConvertContext& c, bool log) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  if (log && Has("nn.log_softmax")) return c.One("nn.log_softmax", {x}, MakeAttrs({{Symbol("axis"), AttrValue::Int(c.AttrInt("axis", -1))}}));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("nn.softmax", {x}, MakeAttrs({{Symbol("axis"), AttrValue::Int(c.AttrInt("axis", -1))}})));
  if (log) { PLIR_ASSIGN_OR_RETURN(y, c.Call("log", {y})); }
  return Outputs{y};
}

// Global average pooling as a matmul with a constant column of 1/(H*W)
// (the kernel accumulates in double).
StatusOr<Outputs> GlobalAveragePool(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  if (s.size() < 3) return c.Error("input must have spatial axes");
  int64_t hw = 1;
  for (size_t i = 2; i < s.size(); ++i) hw *= s[i];
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr flat, c.Call("reshape", {x}, Shape({s[0], s[1], hw})));
  PLIR_ASSIGN_OR_RETURN(Expr col, c.Const(MakeTensor(dt, {hw, 1}, [&](int64_t) { return 1.0 / static_cast<double>(hw); })));
  PLIR_ASSIGN_OR_RETURN(Expr m, c.Call("matmul", {flat, col}));
  std::vector<int64_t> out = {s[0], s[1]};
  for (size_t i = 2; i < s.size(); ++i) out.push_back(1);
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("reshape", {m}, Shape(out)));
  return Outputs{y};
}

Attrs Conv2dAttrs(const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                  const std::vector<int64_t>& dil, int64_t groups) {
  return MakeAttrs({{Symbol("strides"), IntList(strides)},
                    {Symbol("padding"), IntList(pads)},
                    {Symbol("dilation"), IntList(dil)},
                    {Symbol("groups"), AttrValue::Int(groups)}});
}

// AveragePool (1-D and 2-D) as a depthwise convolution with ones, divided
// by the number of cells each window counts (a constant computed at
// import: padding counts only with count_include_pad, and the extra cells
// ceil_mode adds never).
StatusOr<Outputs> AveragePool(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  if (xs.size() != 3 && xs.size() != 4) return Unimplemented("AveragePool on " + std::to_string(xs.size() - 2) + "-D data (PLIR has 1-D and 2-D)");
  size_t n = xs.size() - 2;
  std::vector<int64_t> k = c.AttrInts("kernel_shape");
  if (k.size() != n) return c.Error("kernel_shape needs one entry per spatial axis");
  std::vector<int64_t> strides = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
  for (int64_t d : dil)
    if (d != 1) return Unimplemented("AveragePool with dilations");
  std::vector<int64_t> in(xs.begin() + 2, xs.end());
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvPads(c, in, k, strides, dil));
  bool ceil_mode = c.AttrInt("ceil_mode", 0) != 0;
  bool include_pad = c.AttrInt("count_include_pad", 0) != 0;
  std::vector<int64_t> extra(n, 0), full(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t span = in[i] + pads[i] + pads[i + n] - k[i];
    int64_t out = (ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
    if (ceil_mode && (out - 1) * strides[i] >= in[i] + pads[i]) --out;
    extra[i] = std::max<int64_t>(0, (out - 1) * strides[i] + k[i] - (in[i] + pads[i] + pads[i + n]));
    full[i] = in[i] + pads[i] + pads[i + n] + extra[i];
  }
  // Work in 2-D.
  std::vector<int64_t> x4 = xs, k2 = k, s2 = strides, pb = {pads[0]}, pe = {pads[n] + extra[0]};
  std::vector<int64_t> in2 = in, full2 = full, lead = {pads[0]};
  if (n == 2) { pb = {pads[0], pads[1]}; pe = {pads[2] + extra[0], pads[3] + extra[1]}; lead = pb; }
  if (n == 1) {
    x4 = {xs[0], xs[1], 1, xs[2]};
    PLIR_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, Shape(x4)));
    k2 = {1, k[0]}; s2 = {1, strides[0]}; pb = {0, pb[0]}; pe = {0, pe[0]};
    in2 = {1, in[0]}; full2 = {1, full[0]}; lead = {0, pads[0]};
  }
  DataType dt = c.InputDtype(0);
  int64_t ch = x4[1];
  PLIR_ASSIGN_OR_RETURN(Expr w, c.Const(MakeTensor(dt, {ch, 1, k2[0], k2[1]}, [](int64_t) { return 1.0; })));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("nn.conv2d", {x, w}, Conv2dAttrs(s2, {pb[0], pb[1], pe[0], pe[1]}, {1, 1}, ch)));
  // The count of each window: a convolution of the mask of counted cells.
  Tensor mask = MakeTensor(dt, {1, 1, full2[0], full2[1]}, [&](int64_t e) {
    int64_t r = e / full2[1], col = e % full2[1];
    bool inside = r >= lead[0] && r < lead[0] + in2[0] && col >= lead[1] && col < lead[1] + in2[1];
    return inside ? 1.0 : 0.0;
  });
  if (include_pad) {
    // Explicit pads count, the cells ceil_mode adds do not.
    int64_t end0 = n == 2 ? pads[0] + in[0] + pads[2] : 1;
    int64_t end1 = n == 2 ? pads[1] + in[1] + pads[3] : pads[0] + in[0] + pads[1];
    mask = MakeTensor(dt, {1, 1, full2[0], full2[1]}, [&](int64_t e) {
      int64_t r = e / full2[1], col = e % full2[1];
      return r < end0 && col < end1 ? 1.0 : 0.0;
    });
  }
  PLIR_ASSIGN_OR_RETURN(Expr m, c.Const(mask));
  PLIR_ASSIGN_OR_RETURN(Expr ones, c.Const(MakeTensor(dt, {1, 1, k2[0], k2[1]}, [](int64_t) { return 1.0; })));
  PLIR_ASSIGN_OR_RETURN(Expr count, c.Call("nn.conv2d", {m, ones}, Conv2dAttrs(s2, {0, 0, 0, 0}, {1, 1}, 1)));
  PLIR_ASSIGN_OR_RETURN(y, c.Call("divide", {y, count}));
  if (n == 1) {
    const auto* yt = As<TensorTypeNode>(y->type());
    if (!yt || !yt->IsStatic()) return c.Error("the pooled shape is not static");
    PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape({xs[0], xs[1], yt->shape()[3].value})));
  }
  return Outputs{y};
}

// A per-channel parameter [C] as [1, C, 1, ...] for data of rank `rank`.
StatusOr<Expr> PerChannel(ConvertContext& c, int i, int64_t rank) {
  PLIR_ASSIGN_OR_RETURN(Expr p, c.Input(i));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(i));
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  if (rank >= 2) shape[1] = n;
  return c.Call("reshape", {p}, Shape(shape));
}

// (x - mean) / sqrt(var + eps) * scale + bias.
StatusOr<Expr> Normalize(ConvertContext& c, Expr x, Expr mean, Expr var, Expr scale, std::optional<Expr> bias,
                         double eps, DataType dt) {
  PLIR_ASSIGN_OR_RETURN(Expr e, c.Scalar(eps, dt));
  PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {x, mean}));
  PLIR_ASSIGN_OR_RETURN(Expr v, c.Call("add", {var, e}));
  PLIR_ASSIGN_OR_RETURN(Expr sd, c.Call("sqrt", {v}));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("divide", {d, sd}));
  PLIR_ASSIGN_OR_RETURN(y, c.Call("multiply", {y, scale}));
  if (bias) { PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, *bias})); }
  return y;
}

StatusOr<Outputs> BatchNorm(ConvertContext& c) {
  if (c.AttrInt("training_mode", 0) != 0) return Unimplemented("BatchNormalization in training mode");
  for (int k = 1; k < c.node().output_size(); ++k)
    if (!c.node().output(k).empty()) return Unimplemented("BatchNormalization's running mean and variance outputs");
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  int64_t r = c.InputRank(0);
  if (r < 2) return c.Error("input 0 needs a known rank of at least 2");
  PLIR_ASSIGN_OR_RETURN(Expr scale, PerChannel(c, 1, r));
  PLIR_ASSIGN_OR_RETURN(Expr bias, PerChannel(c, 2, r));
  PLIR_ASSIGN_OR_RETURN(Expr mean, PerChannel(c, 3, r));
  PLIR_ASSIGN_OR_RETURN(Expr var, PerChannel(c, 4, r));
  PLIR_ASSIGN_OR_RETURN(Expr y, Normalize(c, x, mean, var, scale, bias, c.AttrFloat("epsilon", 1e-5f), c.InputDtype(0)));
  return Outputs{y};
}

StatusOr<Outputs> InstanceNorm(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  if (r < 3) return c.Error("input 0 needs spatial axes");
  std::vector<bool> red(s.size(), true);
  red[0] = red[1] = false;
  PLIR_ASSIGN_OR_RETURN(Expr mean, ReduceSumOf(c, x, red, true, true));
  PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {x, mean}));
  PLIR_ASSIGN_OR_RETURN(Expr d2, c.Call("multiply", {d, d}));
  PLIR_ASSIGN_OR_RETURN(Expr var, ReduceSumOf(c, d2, red, true, true));
  PLIR_ASSIGN_OR_RETURN(Expr scale, PerChannel(c, 1, r));
  PLIR_ASSIGN_OR_RETURN(Expr bias, PerChannel(c, 2, r));
  PLIR_ASSIGN_OR_RETURN(Expr y, Normalize(c, x, mean, var, scale, bias, c.AttrFloat("epsilon", 1e-5f), c.InputDtype(0)));
  return Outputs{y};
}

// LayerNormalization (opset 17): over the axes from `axis` on; outputs Y,
// Mean and InvStdDev.
StatusOr<Outputs> LayerNorm(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", -1), r));
  std::vector<bool> red(s.size(), false);
  for (int64_t i = axis; i < r; ++i) red[i] = true;
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr mean, ReduceSumOf(c, x, red, true, true));
  PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {x, mean}));
  PLIR_ASSIGN_OR_RETURN(Expr d2, c.Call("multiply", {d, d}));
  PLIR_ASSIGN_OR_RETURN(Expr var, ReduceSumOf(c, d2, red, true, true));
  PLIR_ASSIGN_OR_RETURN(Expr e, c.Scalar(c.AttrFloat("epsilon", 1e-5f), dt));
  PLIR_ASSIGN_OR_RETURN(Expr v, c.Call("add", {var, e}));
  PLIR_ASSIGN_OR_RETURN(Expr sd, c.Call("sqrt", {v}));
  PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, dt));
  PLIR_ASSIGN_OR_RETURN(Expr inv, c.Call("divide", {one, sd}));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("multiply", {d, inv}));
  PLIR_ASSIGN_OR_RETURN(Expr scale, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(y, c.Call("multiply", {y, scale}));
  if (c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(2));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, b}));
  }
  return Outputs{y, mean, inv};
}

// ConvTranspose (1-D, 2-D): the input with stride-1 zeros inserted, padded
// by dilation * (k - 1) - pad, convolved with the flipped kernel whose
// in/out channels are swapped per group.
StatusOr<Outputs> ConvTranspose(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr w, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, c.InputShape(1));
  if (xs.size() != 3 && xs.size() != 4) return Unimplemented("ConvTranspose on " + std::to_string(xs.size() - 2) + "-D data (PLIR has 1-D and 2-D)");
  size_t n = xs.size() - 2;
  int64_t g = c.AttrInt("group", 1);
  std::vector<int64_t> in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end());
  std::vector<int64_t> s = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> d = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> op = c.AttrInts("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> pads = c.AttrInts("pads", std::vector<int64_t>(2 * n, 0));
  std::vector<int64_t> out_shape = c.AttrInts("output_shape");
  std::string ap = c.AttrString("auto_pad", "NOTSET");
  if (s.size() != n || d.size() != n || op.size() != n || pads.size() != 2 * n) return c.Error("attribute lengths do not match the spatial rank");
  if (out_shape.size() > n) out_shape.erase(out_shape.begin(), out_shape.end() - n);
  if (out_shape.empty() && (ap == "SAME_UPPER" || ap == "SAME_LOWER"))
    for (size_t i = 0; i < n; ++i) out_shape.push_back(in[i] * s[i]);
  if (!out_shape.empty()) {
    for (size_t i = 0; i < n; ++i) {
      int64_t total = s[i] * (in[i] - 1) + op[i] + ((k[i] - 1) * d[i] + 1) - out_shape[i];
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2), as the spec's formula
      if (ap == "SAME_UPPER") { pads[i] = half; pads[i + n] = total - half; }
      else { pads[i] = total - half; pads[i + n] = half; }
    }
  }
  if (n == 1) {
    PLIR_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, Shape({xs[0], xs[1], 1, xs[2]})));
    PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, Shape({ws[0], ws[1], 1, ws[2]})));
    xs = {xs[0], xs[1], 1, xs[2]};
    ws = {ws[0], ws[1], 1, ws[2]};
    in = {1, in[0]}; k = {1, k[0]}; s = {1, s[0]}; d = {1, d[0]}; op = {0, op[0]};
    pads = {0, pads[0], 0, pads[1]};
  }
  DataType dt = c.InputDtype(0);
  // Zeros between the input's elements.
  std::vector<int64_t> cur = xs;
  for (int ax = 2; ax < 4; ++ax) {
    int64_t st = s[ax - 2];
    if (st == 1) continue;
    PLIR_ASSIGN_OR_RETURN(Expr e, c.Call("expand_dims", {x}, MakeAttrs({{Symbol("axis"), IntList({ax + 1})}})));
    std::vector<int64_t> zs = cur;
    zs.insert(zs.begin() + ax + 1, st - 1);
    PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, dt));
    PLIR_ASSIGN_OR_RETURN(Expr z, c.Call("full", {zero}, Shape(zs)));
    PLIR_ASSIGN_OR_RETURN(Expr j, c.Call("concat", {TupleNode::Make({e, z})}, MakeAttrs({{Symbol("axis"), AttrValue::Int(ax + 1)}})));
    std::vector<int64_t> rs = cur;
    rs[ax] *= st;
    PLIR_ASSIGN_OR_RETURN(j, c.Call("reshape", {j}, Shape(rs)));
    int64_t len = (cur[ax] - 1) * st + 1;
    PLIR_ASSIGN_OR_RETURN(x, c.Call("strided_slice", {j, ConvertContext::IntTuple({ax}), ConvertContext::IntTuple({0}),
                                                       ConvertContext::IntTuple({len}), ConvertContext::IntTuple({1})}));
    cur[ax] = len;
  }
  // Padding; negative amounts crop.
  std::vector<int64_t> cpad(4, 0);
  for (int i = 0; i < 2; ++i) {
    int64_t full = d[i] * (k[i] - 1);
    int64_t b = full - pads[i], e = full - pads[i + 2] + op[i];
    if (b < 0 || e < 0) {
      int64_t lo = b < 0 ? -b : 0, hi = cur[i + 2] - (e < 0 ? -e : 0);
      PLIR_ASSIGN_OR_RETURN(x, c.Call("strided_slice", {x, ConvertContext::IntTuple({i + 2}), ConvertContext::IntTuple({lo}),
                                                         ConvertContext::IntTuple({hi}), ConvertContext::IntTuple({1})}));
      cur[i + 2] = hi - lo;
      b = std::max<int64_t>(b, 0);
      e = std::max<int64_t>(e, 0);
    }
    cpad[i] = b;
    cpad[i + 2] = e;
  }
  // The kernel: [Cin, Cout/g, kh, kw] -> [Cout, Cin/g, kh, kw], flipped.
  int64_t cin = ws[0], coutg = ws[1];
  PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, Shape({g, cin / g, coutg, k[0], k[1]})));
  PLIR_ASSIGN_OR_RETURN(w, c.Call("permute_dims", {w}, MakeAttrs({{Symbol("axes"), IntList({0, 2, 1, 3, 4})}})));
  PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, Shape({g * coutg, cin / g, k[0], k[1]})));
  PLIR_ASSIGN_OR_RETURN(w, c.Call("strided_slice", {w, ConvertContext::IntTuple({2, 3}), ConvertContext::IntTuple({k[0] - 1, k[1] - 1}),
                                                     ConvertContext::IntTuple({-k[0] - 1, -k[1] - 1}), ConvertContext::IntTuple({-1, -1})}));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("nn.conv2d", {x, w}, Conv2dAttrs({1, 1}, cpad, d, g)));
  const TensorTypeNode* yt = As<TensorTypeNode>(y->type());
  if (!yt || !yt->IsStatic()) return c.Error("the output shape is not static");
  if (n == 1) { PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape({yt->shape()[0].value, yt->shape()[1].value, yt->shape()[3].value}))); }
  if (c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(2));
    std::vector<int64_t> bs = {1, g * coutg};
    for (size_t i = 0; i < n; ++i) bs.push_back(1);
    PLIR_ASSIGN_OR_RETURN(b, c.Call("reshape", {b}, Shape(bs)));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, b}));
  }
  return Outputs{y};
}

}  // namespace

void RegisterNnConverters(ConverterTable& t) {
  t.Add("Conv", 1, {"nn.conv2d", "reshape", "add"}, Conv);
  t.Add("Softmax", 1, {"nn.softmax", "reshape"}, [](ConvertContext& c) { return SoftmaxOld(c, false); });
  t.Add("Softmax", 13, {"nn.softmax"}, [](ConvertContext& c) { return Softmax13(c, false); });
  t.Add("LogSoftmax", 1, {"nn.softmax", "reshape", "log"}, [](ConvertContext& c) { return SoftmaxOld(c, true); });
  t.Add("LogSoftmax", 13, {"nn.softmax", "log"}, [](ConvertContext& c) { return Softmax13(c, true); });
  t.Add("GlobalAveragePool", 1, {"reshape", "matmul"}, GlobalAveragePool);
  t.Add("AveragePool", 7, {"nn.conv2d", "divide", "reshape"}, AveragePool);
  t.Add("BatchNormalization", 7, {"reshape", "subtract", "add", "sqrt", "divide", "multiply"}, BatchNorm);
  t.Add("InstanceNormalization", 6, {"reshape", "subtract", "add", "sqrt", "divide", "multiply", "matmul"}, InstanceNorm);
  t.Add("LayerNormalization", 17, {"reshape", "subtract", "add", "sqrt", "divide", "multiply", "matmul"}, LayerNorm);
  t.Add("ConvTranspose", 1, {"nn.conv2d", "reshape", "permute_dims", "strided_slice", "concat", "full", "expand_dims"},
        ConvTranspose);
}

}  // namespace plir::onnx_import
