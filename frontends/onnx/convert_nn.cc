// Neural-network ONNX ops: convolution, softmax, pooling, normalization.
#include <cmath>
#include <optional>

#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

bool Has(const char* op) { return static_cast<bool>(OpRegistry::Global().Lookup(op)); }
Attrs Shape(const std::vector<int64_t>& s) { return MakeAttrs({{Symbol("shape"), IntList(s)}}); }

// Explicit begin/end pads per spatial axis from ONNX's pads or auto_pad.
StatusOr<std::vector<int64_t>> ConvPads(ConvertContext& c, const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& k,
                                        const std::vector<int64_t>& strides,
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
      int64_t total =
          std::max<int64_t>(0, (out - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - in[i]);
      int64_t small = total / 2, big = total - small;
      pads[i] = ap == "SAME_UPPER" ? small : big;
      pads[i + n] = ap == "SAME_UPPER" ? big : small;
    }
  } else if (ap != "VALID") {
    return c.Error("auto_pad '" + ap + "' is not supported");
  }
  return pads;
}

Attrs Conv2dAttrs(const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                  const std::vector<int64_t>& dil, int64_t groups) {
  return MakeAttrs({{Symbol("strides"), IntList(strides)},
                    {Symbol("padding"), IntList(pads)},
                    {Symbol("dilation"), IntList(dil)},
                    {Symbol("groups"), AttrValue::Int(groups)}});
}

StatusOr<std::vector<int64_t>> StaticShapeOf(ConvertContext& c, const Expr& e) {
  const auto* t = As<TensorTypeNode>(e->type());
  if (!t || !t->IsStatic()) return c.Error("an intermediate shape is not static");
  std::vector<int64_t> s;
  for (const Dim& d : t->shape()) s.push_back(d.value);
  return s;
}

// An N-D convolution (N = 1, 2, 3) on nn.conv2d: 1-D as height 1; 3-D as
// one 2-D convolution per kernel depth over the depth-flattened batch,
// shifted along depth by a take and summed. `pads` is begins then ends.
StatusOr<Expr> ConvNd(ConvertContext& c, Expr x, Expr w, std::vector<int64_t> strides,
                      std::vector<int64_t> pads, std::vector<int64_t> dil, int64_t groups) {
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, StaticShapeOf(c, x));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, StaticShapeOf(c, w));
  if (xs.size() < 3 || ws.size() != xs.size()) return c.Error("data and kernel ranks do not match");
  size_t n = xs.size() - 2;
  if (strides.size() != n || dil.size() != n || pads.size() != 2 * n)
    return c.Error("attribute lengths do not match the spatial rank");
  if (n == 2) return c.Call("nn.conv2d", {x, w}, Conv2dAttrs(strides, pads, dil, groups));
  if (n == 1) {
    PLIR_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, Shape({xs[0], xs[1], 1, xs[2]})));
    PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, Shape({ws[0], ws[1], 1, ws[2]})));
    PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("nn.conv2d", {x, w},
                                         Conv2dAttrs({1, strides[0]}, {0, pads[0], 0, pads[1]},
                                                     {1, dil[0]}, groups)));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ys, StaticShapeOf(c, y));
    return c.Call("reshape", {y}, Shape({ys[0], ys[1], ys[3]}));
  }
  if (n != 3) return Unimplemented("convolution over " + std::to_string(n) + " spatial axes");
  DataType dt = As<TensorTypeNode>(x->type())->dtype();
  int64_t N = xs[0], C = xs[1], D = xs[2], H = xs[3], W = xs[4], M = ws[0], kd = ws[2];
  // Depth padding as zeros.
  if (pads[0] > 0 || pads[3] > 0) {
    std::vector<Expr> parts;
    PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, dt));
    if (pads[0] > 0) {
      PLIR_ASSIGN_OR_RETURN(Expr z, c.Call("full", {zero}, Shape({N, C, pads[0], H, W})));
      parts.push_back(z);
    }
    parts.push_back(x);
    if (pads[3] > 0) {
      PLIR_ASSIGN_OR_RETURN(Expr z, c.Call("full", {zero}, Shape({N, C, pads[3], H, W})));
      parts.push_back(z);
    }
    PLIR_ASSIGN_OR_RETURN(x, c.Call("concat", {TupleNode::Make(parts)},
                                    MakeAttrs({{Symbol("axis"), AttrValue::Int(2)}})));
    D += pads[0] + pads[3];
  }
  int64_t Do = (D - dil[0] * (kd - 1) - 1) / strides[0] + 1;
  if (Do <= 0) return c.Error("the kernel is deeper than the padded input");
  PLIR_ASSIGN_OR_RETURN(Expr xr, c.Call("permute_dims", {x},
                                        MakeAttrs({{Symbol("axes"), IntList({0, 2, 1, 3, 4})}})));
  PLIR_ASSIGN_OR_RETURN(xr, c.Call("reshape", {xr}, Shape({N * D, C, H, W})));
  Expr sum;
  for (int64_t i = 0; i < kd; ++i) {
    PLIR_ASSIGN_OR_RETURN(
        Expr wi, c.Call("strided_slice",
                        {w, ConvertContext::IntTuple({2}), ConvertContext::IntTuple({i}),
                         ConvertContext::IntTuple({i + 1}), ConvertContext::IntTuple({1})}));
    PLIR_ASSIGN_OR_RETURN(wi, c.Call("reshape", {wi}, Shape({ws[0], ws[1], ws[3], ws[4]})));
    PLIR_ASSIGN_OR_RETURN(
        Expr yi, c.Call("nn.conv2d", {xr, wi},
                        Conv2dAttrs({strides[1], strides[2]}, {pads[1], pads[2], pads[4], pads[5]},
                                    {dil[1], dil[2]}, groups)));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ys, StaticShapeOf(c, yi));
    PLIR_ASSIGN_OR_RETURN(yi, c.Call("reshape", {yi}, Shape({N, D, M, ys[2], ys[3]})));
    std::vector<int64_t> idx;
    for (int64_t o = 0; o < Do; ++o) idx.push_back(o * strides[0] + i * dil[0]);
    PLIR_ASSIGN_OR_RETURN(Expr ie, c.Int64s(idx));
    PLIR_ASSIGN_OR_RETURN(
        yi, c.Call("take", {yi, ie}, MakeAttrs({{Symbol("axis"), AttrValue::Int(1)}})));
    if (!sum)
      sum = yi;
    else {
      PLIR_ASSIGN_OR_RETURN(sum, c.Call("add", {sum, yi}));
    }
  }
  return c.Call("permute_dims", {sum}, MakeAttrs({{Symbol("axes"), IntList({0, 2, 1, 3, 4})}}));
}

StatusOr<Expr> AddBias(ConvertContext& c, Expr y, int bias_input, int64_t channels, size_t n) {
  if (!c.HasInput(bias_input)) return y;
  PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(bias_input));
  std::vector<int64_t> bs = {1, channels};
  for (size_t i = 0; i < n; ++i) bs.push_back(1);
  PLIR_ASSIGN_OR_RETURN(b, c.Call("reshape", {b}, Shape(bs)));
  return c.Call("add", {y, b});
}

StatusOr<Outputs> Conv(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr w, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, c.InputShape(1));
  if (xs.size() < 3 || xs.size() > 5)
    return Unimplemented("Conv on " + std::to_string(xs.size() - 2) +
                         "-D data (PLIR has 1-D to 3-D)");
  if (ws.size() != xs.size()) return c.Error("data and kernel ranks do not match");
  size_t n = xs.size() - 2;
  std::vector<int64_t> in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end());
  std::vector<int64_t> strides = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
  if (strides.size() != n || dil.size() != n)
    return c.Error("strides and dilations need one entry per spatial axis");
  PLIR_RETURN_IF_ERROR(c.Positive(strides, "strides"));
  PLIR_RETURN_IF_ERROR(c.Positive(dil, "dilations"));
  PLIR_RETURN_IF_ERROR(c.Positive({c.AttrInt("group", 1)}, "group"));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvPads(c, in, k, strides, dil));
  PLIR_ASSIGN_OR_RETURN(Expr y, ConvNd(c, x, w, strides, pads, dil, c.AttrInt("group", 1)));
  PLIR_ASSIGN_OR_RETURN(y, AddBias(c, y, 2, ws[0], n));
  return Outputs{y};
}

// AveragePool (1-D to 3-D) as a depthwise convolution with ones, divided by
// the number of cells each window counts: a constant, the product of one
// count per axis (padding counts only with count_include_pad, the extra
// cells ceil_mode adds never).
StatusOr<Outputs> AveragePool(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  if (xs.size() < 3 || xs.size() > 5)
    return Unimplemented("AveragePool on " + std::to_string(xs.size() - 2) +
                         "-D data (PLIR has 1-D to 3-D)");
  size_t n = xs.size() - 2;
  std::vector<int64_t> k = c.AttrInts("kernel_shape");
  if (k.size() != n) return c.Error("kernel_shape needs one entry per spatial axis");
  std::vector<int64_t> strides = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
  if (strides.size() != n) return c.Error("strides needs one entry per spatial axis");
  PLIR_RETURN_IF_ERROR(c.Positive(strides, "strides"));
  PLIR_RETURN_IF_ERROR(c.Positive(k, "kernel_shape"));
  for (int64_t d : dil)
    if (d != 1) return Unimplemented("AveragePool with dilations");
  std::vector<int64_t> in(xs.begin() + 2, xs.end());
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvPads(c, in, k, strides, dil));
  bool ceil_mode = c.AttrInt("ceil_mode", 0) != 0;
  bool include_pad = c.AttrInt("count_include_pad", 0) != 0;
  for (int64_t p : pads)
    if (p < 0) return c.Error("pads must not be negative");
  {
    std::vector<int64_t> wdims = {xs[1]};
    wdims.insert(wdims.end(), k.begin(), k.end());
    PLIR_RETURN_IF_ERROR(c.Limit(wdims, "the pooling kernel"));
  }
  std::vector<int64_t> conv_pads = pads, outs(n);
  std::vector<std::vector<double>> counts(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t span = in[i] + pads[i] + pads[i + n] - k[i];
    int64_t out = (ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
    if (ceil_mode && (out - 1) * strides[i] >= in[i] + pads[i]) --out;
    int64_t extra =
        std::max<int64_t>(0, (out - 1) * strides[i] + k[i] - (in[i] + pads[i] + pads[i + n]));
    conv_pads[i + n] += extra;
    outs[i] = out;
    if (out <= 0) return c.Error("the pooling window is larger than the padded input");
    PLIR_RETURN_IF_ERROR(c.Limit({out, k[i]}, "the pooling counts"));
    for (int64_t o = 0; o < out; ++o) {
      int64_t cnt = 0;
      for (int64_t j = 0; j < k[i]; ++j) {
        int64_t p = o * strides[i] + j - pads[i];  // position in the unpadded input
        bool inside = p >= 0 && p < in[i];
        bool padded = p >= -pads[i] && p < in[i] + pads[i + n];
        cnt += inside || (include_pad && padded);
      }
      counts[i].push_back(static_cast<double>(cnt));
    }
  }
  DataType dt = c.InputDtype(0);
  int64_t ch = xs[1];
  std::vector<int64_t> wshape = {ch, 1};
  wshape.insert(wshape.end(), k.begin(), k.end());
  PLIR_ASSIGN_OR_RETURN(Expr w, c.Const(MakeTensor(dt, wshape, [](int64_t) { return 1.0; })));
  PLIR_ASSIGN_OR_RETURN(Expr y,
                        ConvNd(c, x, w, strides, conv_pads, std::vector<int64_t>(n, 1), ch));
  std::vector<int64_t> dshape = {1, 1};
  dshape.insert(dshape.end(), outs.begin(), outs.end());
  PLIR_ASSIGN_OR_RETURN(Expr div, c.Const(MakeTensor(dt, dshape, [&](int64_t e) {
    double v = 1;
    for (size_t i = n; i-- > 0;) {
      v *= counts[i][e % outs[i]];
      e /= outs[i];
    }
    return v;
  })));
  PLIR_ASSIGN_OR_RETURN(y, c.Call("divide", {y, div}));
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
  PLIR_ASSIGN_OR_RETURN(
      y, c.Call("nn.softmax", {y}, MakeAttrs({{Symbol("axis"), AttrValue::Int(-1)}})));
  if (log) {
    PLIR_ASSIGN_OR_RETURN(y, c.Call("log", {y}));
  }
  PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape(s)));
  return Outputs{y};
}

StatusOr<Outputs> Softmax13(ConvertContext& c, bool log) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  if (log && Has("nn.log_softmax"))
    return c.One("nn.log_softmax", {x},
                 MakeAttrs({{Symbol("axis"), AttrValue::Int(c.AttrInt("axis", -1))}}));
  PLIR_ASSIGN_OR_RETURN(
      Expr y, c.Call("nn.softmax", {x},
                     MakeAttrs({{Symbol("axis"), AttrValue::Int(c.AttrInt("axis", -1))}})));
  if (log) {
    PLIR_ASSIGN_OR_RETURN(y, c.Call("log", {y}));
  }
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
  PLIR_RETURN_IF_ERROR(c.Limit({hw}, "the averaging column"));
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr flat, c.Call("reshape", {x}, Shape({s[0], s[1], hw})));
  PLIR_ASSIGN_OR_RETURN(
      Expr col,
      c.Const(MakeTensor(dt, {hw, 1}, [&](int64_t) { return 1.0 / static_cast<double>(hw); })));
  PLIR_ASSIGN_OR_RETURN(Expr m, c.Call("matmul", {flat, col}));
  std::vector<int64_t> out = {s[0], s[1]};
  for (size_t i = 2; i < s.size(); ++i) out.push_back(1);
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("reshape", {m}, Shape(out)));
  return Outputs{y};
}

// MaxPool (1-D to 3-D) on the PLIR pooling op (TVM's nn.max_pool2d:
// pool_size, strides, padding (begins then ends), dilation, ceil_mode); 1-D
// as height 1.
// MaxPool's Indices output (2-D): the flat index into x of each window's
// maximum, (n * C + c) * H * W plus h * W + w (storage_order 0) or
// w * H + h (storage_order 1). The windows are gathered with one take from
// x as (N * C, H * W) with a -inf column appended for padding, through a
// constant table of each window element's spatial index; argmax picks the
// first maximum of each window.
StatusOr<Expr> MaxPoolIndices(ConvertContext& c, Expr x, const std::vector<int64_t>& xs,
                              const std::vector<int64_t>& k, const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& dil, const std::vector<int64_t>& pads,
                              const std::vector<int64_t>& ys) {
  int64_t nc = xs[0] * xs[1], h = xs[2], w = xs[3], hw = h * w;
  int64_t oh = ys[2], ow = ys[3], win = k[0] * k[1];
  PLIR_RETURN_IF_ERROR(c.Limit({oh * ow, win}, "the pooling windows"));
  PLIR_RETURN_IF_ERROR(c.Limit({nc, oh * ow, win}, "the gathered windows"));
  bool column_major = c.AttrInt("storage_order", 0) != 0;
  std::vector<int64_t> table;  // [oh * ow * win]: input position (hw = padding)
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      for (int64_t a = 0; a < k[0]; ++a)
        for (int64_t b = 0; b < k[1]; ++b) {
          int64_t y = i * strides[0] - pads[0] + a * dil[0];
          int64_t z = j * strides[1] - pads[1] + b * dil[1];
          table.push_back(y >= 0 && y < h && z >= 0 && z < w ? y * w + z : hw);
        }
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr flat, c.Call("reshape", {x}, Shape({nc, hw})));
  PLIR_ASSIGN_OR_RETURN(Expr pad,
                        c.Const(MakeTensor(dt, {nc, 1}, [](int64_t) { return -INFINITY; })));
  PLIR_ASSIGN_OR_RETURN(flat, c.Call("concat", {TupleNode::Make({flat, pad})},
                                     MakeAttrs({{Symbol("axis"), AttrValue::Int(1)}})));
  PLIR_ASSIGN_OR_RETURN(Expr tab, c.Int64s(table));
  PLIR_ASSIGN_OR_RETURN(
      Expr windows, c.Call("take", {flat, tab}, MakeAttrs({{Symbol("axis"), AttrValue::Int(1)}})));
  PLIR_ASSIGN_OR_RETURN(windows, c.Call("reshape", {windows}, Shape({nc, oh * ow, win})));
  PLIR_ASSIGN_OR_RETURN(
      Expr arg, c.Call("argmax", {windows}, MakeAttrs({{Symbol("axis"), AttrValue::Int(2)}})));
  PLIR_ASSIGN_OR_RETURN(arg, c.Cast(arg, DataType::kInt64));
  // The window element's position in x, then the row offset (n * C + c) * H * W.
  PLIR_ASSIGN_OR_RETURN(Expr base, c.Const(MakeTensor(DataType::kInt64, {oh * ow}, [&](int64_t o) {
    return static_cast<double>(o * win);
  })));
  PLIR_ASSIGN_OR_RETURN(arg, c.Call("add", {arg, base}));
  std::vector<int64_t> spatial;
  for (int64_t t : table) spatial.push_back(column_major ? (t % w) * h + t / w : t);
  PLIR_ASSIGN_OR_RETURN(Expr sp, c.Int64s(spatial));
  PLIR_ASSIGN_OR_RETURN(
      Expr idx, c.Call("take", {sp, arg}, MakeAttrs({{Symbol("axis"), AttrValue::Int(0)}})));
  PLIR_ASSIGN_OR_RETURN(Expr rows, c.Const(MakeTensor(DataType::kInt64, {nc, 1}, [&](int64_t r) {
    return static_cast<double>(r * hw);
  })));
  PLIR_ASSIGN_OR_RETURN(idx, c.Call("add", {idx, rows}));
  return c.Call("reshape", {idx}, Shape(ys));
}

StatusOr<Outputs> MaxPool(ConvertContext& c) {
  bool want_indices = c.node().output_size() > 1 && !c.node().output(1).empty();
  if (!want_indices && c.AttrInt("storage_order", 0) != 0)
    return Unimplemented("MaxPool with storage_order = 1");
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  if (xs.size() < 3 || xs.size() > 5)
    return Unimplemented("MaxPool on " + std::to_string(xs.size() - 2) + "-D data");
  size_t n = xs.size() - 2;
  std::vector<int64_t> k = c.AttrInts("kernel_shape");
  if (k.size() != n) return c.Error("kernel_shape needs one entry per spatial axis");
  std::vector<int64_t> strides = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
  if (strides.size() != n || dil.size() != n)
    return c.Error("strides and dilations need one entry per spatial axis");
  PLIR_RETURN_IF_ERROR(c.Positive(k, "kernel_shape"));
  PLIR_RETURN_IF_ERROR(c.Positive(strides, "strides"));
  PLIR_RETURN_IF_ERROR(c.Positive(dil, "dilations"));
  std::vector<int64_t> in(xs.begin() + 2, xs.end());
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvPads(c, in, k, strides, dil));
  bool ceil_mode = c.AttrInt("ceil_mode", 0) != 0;
  std::string op = n == 3 ? "nn.max_pool3d" : "nn.max_pool2d";
  if (!Has(op.c_str())) return Unimplemented("PLIR has no op " + op);
  if (n == 1) {
    PLIR_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, Shape({xs[0], xs[1], 1, xs[2]})));
    k = {1, k[0]};
    strides = {1, strides[0]};
    dil = {1, dil[0]};
    pads = {0, pads[0], 0, pads[1]};
  }
  Attrs a = MakeAttrs({{Symbol(OpAttrName(op, {"pool_size", "kernel_size"})), IntList(k)},
                       {Symbol("strides"), IntList(strides)},
                       {Symbol(OpAttrName(op, {"padding", "pads"})), IntList(pads)},
                       {Symbol(OpAttrName(op, {"dilation", "dilations"})), IntList(dil)},
                       {Symbol("ceil_mode"), AttrValue::Bool(ceil_mode)}});
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call(op, {x}, a));
  if (want_indices) {
    if (n != 2)
      return Unimplemented("MaxPool's Indices output on " + std::to_string(n) + "-D data");
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ys, StaticShapeOf(c, y));
    PLIR_ASSIGN_OR_RETURN(Expr idx, MaxPoolIndices(c, x, xs, k, strides, dil, pads, ys));
    return Outputs{y, idx};
  }
  if (n == 1) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ys, StaticShapeOf(c, y));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape({ys[0], ys[1], ys[3]})));
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
StatusOr<Expr> Normalize(ConvertContext& c, Expr x, Expr mean, Expr var, Expr scale,
                         std::optional<Expr> bias, double eps, DataType dt) {
  PLIR_ASSIGN_OR_RETURN(Expr e, c.Scalar(eps, dt));
  PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {x, mean}));
  PLIR_ASSIGN_OR_RETURN(Expr v, c.Call("add", {var, e}));
  PLIR_ASSIGN_OR_RETURN(Expr sd, c.Call("sqrt", {v}));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("divide", {d, sd}));
  PLIR_ASSIGN_OR_RETURN(y, c.Call("multiply", {y, scale}));
  if (bias) {
    PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, *bias}));
  }
  return y;
}

// LRN: y = x / (bias + alpha / size * s)^beta, s the sum of x^2 over the
// channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2): a matmul
// of a constant C x C band of ones with x^2 as (N, C, rest).
StatusOr<Outputs> Lrn(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  if (s.size() < 3) return c.Error("input must be (N, C, D1, ...)");
  int64_t size = c.AttrInt("size", 0);
  if (size <= 0) return c.Error("size must be positive");
  DataType dt = c.InputDtype(0);
  if (!IsFloat(dt)) return c.Error("input must be floating point");
  int64_t ch = s[1], rest = 1;
  for (size_t i = 2; i < s.size(); ++i) rest *= s[i];
  PLIR_RETURN_IF_ERROR(c.Limit({ch, ch}, "the channel band"));
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  PLIR_ASSIGN_OR_RETURN(Expr band, c.Const(MakeTensor(dt, {ch, ch}, [&](int64_t e) {
    int64_t row = e / ch, col = e % ch;
    return col >= row - before && col <= row + after ? 1.0 : 0.0;
  })));
  PLIR_ASSIGN_OR_RETURN(Expr sq, c.Call("multiply", {x, x}));
  PLIR_ASSIGN_OR_RETURN(sq, c.Call("reshape", {sq}, Shape({s[0], ch, rest})));
  PLIR_ASSIGN_OR_RETURN(Expr sum, c.Call("matmul", {band, sq}));
  PLIR_ASSIGN_OR_RETURN(sum, c.Call("reshape", {sum}, Shape(s)));
  PLIR_ASSIGN_OR_RETURN(Expr scale,
                        c.Scalar(c.AttrFloat("alpha", 1e-4f) / static_cast<double>(size), dt));
  PLIR_ASSIGN_OR_RETURN(Expr bias, c.Scalar(c.AttrFloat("bias", 1.0f), dt));
  PLIR_ASSIGN_OR_RETURN(Expr beta, c.Scalar(c.AttrFloat("beta", 0.75f), dt));
  PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("multiply", {sum, scale}));
  PLIR_ASSIGN_OR_RETURN(d, c.Call("add", {d, bias}));
  PLIR_ASSIGN_OR_RETURN(d, c.Call("power", {d, beta}));
  return c.One("divide", {x, d});
}

// BatchNormalization with training_mode = 1: normalized with the batch's
// own mean and (population) variance over every axis but 1; the running
// statistics out are momentum * the given ones + (1 - momentum) * the
// batch's.
StatusOr<Outputs> BatchNormTraining(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  if (r < 2) return c.Error("input 0 needs a rank of at least 2");
  DataType dt = c.InputDtype(0);
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < r; ++i)
    if (i != 1) axes.push_back(i);
  Attrs red =
      MakeAttrs({{Symbol("axis"), IntList(axes)}, {Symbol("keepdims"), AttrValue::Bool(true)}});
  PLIR_ASSIGN_OR_RETURN(Expr bmean, c.Call("mean", {x}, red));
  PLIR_ASSIGN_OR_RETURN(Expr bvar, c.Call("variance", {x}, red));
  PLIR_ASSIGN_OR_RETURN(Expr scale, PerChannel(c, 1, r));
  PLIR_ASSIGN_OR_RETURN(Expr bias, PerChannel(c, 2, r));
  PLIR_ASSIGN_OR_RETURN(
      Expr y, Normalize(c, x, bmean, bvar, scale, bias, c.AttrFloat("epsilon", 1e-5f), dt));
  double momentum = c.AttrFloat("momentum", 0.9f);
  PLIR_ASSIGN_OR_RETURN(Expr m, c.Scalar(momentum, dt));
  PLIR_ASSIGN_OR_RETURN(Expr m1, c.Scalar(1 - momentum, dt));
  Outputs outs{y};
  for (int k = 0; k < 2; ++k) {
    PLIR_ASSIGN_OR_RETURN(Expr given, c.Input(3 + k));
    PLIR_ASSIGN_OR_RETURN(Expr batch, c.Call("reshape", {k == 0 ? bmean : bvar}, Shape({s[1]})));
    PLIR_ASSIGN_OR_RETURN(Expr a, c.Call("multiply", {given, m}));
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Call("multiply", {batch, m1}));
    PLIR_ASSIGN_OR_RETURN(Expr run, c.Call("add", {a, b}));
    outs.push_back(run);
  }
  return outs;
}

StatusOr<Outputs> BatchNorm(ConvertContext& c) {
  if (c.AttrInt("training_mode", 0) != 0) return BatchNormTraining(c);
  for (int k = 1; k < c.node().output_size(); ++k)
    if (!c.node().output(k).empty())
      return Unimplemented("BatchNormalization's running mean and variance outputs");
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  int64_t r = c.InputRank(0);
  if (r < 2) return c.Error("input 0 needs a known rank of at least 2");
  PLIR_ASSIGN_OR_RETURN(Expr scale, PerChannel(c, 1, r));
  PLIR_ASSIGN_OR_RETURN(Expr bias, PerChannel(c, 2, r));
  PLIR_ASSIGN_OR_RETURN(Expr mean, PerChannel(c, 3, r));
  PLIR_ASSIGN_OR_RETURN(Expr var, PerChannel(c, 4, r));
  PLIR_ASSIGN_OR_RETURN(Expr y, Normalize(c, x, mean, var, scale, bias,
                                          c.AttrFloat("epsilon", 1e-5f), c.InputDtype(0)));
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
  PLIR_ASSIGN_OR_RETURN(Expr y, Normalize(c, x, mean, var, scale, bias,
                                          c.AttrFloat("epsilon", 1e-5f), c.InputDtype(0)));
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

// ConvTranspose (1-D to 3-D): the input with stride - 1 zeros inserted,
// padded by dilation * (k - 1) - pad (negative amounts crop), convolved
// with the flipped kernel whose in/out channels are swapped per group.
StatusOr<Outputs> ConvTranspose(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr w, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, c.InputShape(1));
  if (xs.size() < 3 || xs.size() > 5)
    return Unimplemented("ConvTranspose on " + std::to_string(xs.size() - 2) +
                         "-D data (PLIR has 1-D to 3-D)");
  if (ws.size() != xs.size()) return c.Error("data and kernel ranks do not match");
  size_t n = xs.size() - 2;
  int64_t g = c.AttrInt("group", 1);
  std::vector<int64_t> in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end());
  std::vector<int64_t> s = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> d = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> op = c.AttrInts("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> pads = c.AttrInts("pads", std::vector<int64_t>(2 * n, 0));
  std::vector<int64_t> out_shape = c.AttrInts("output_shape");
  std::string ap = c.AttrString("auto_pad", "NOTSET");
  if (s.size() != n || d.size() != n || op.size() != n || pads.size() != 2 * n)
    return c.Error("attribute lengths do not match the spatial rank");
  PLIR_RETURN_IF_ERROR(c.Positive(s, "strides"));
  PLIR_RETURN_IF_ERROR(c.Positive(d, "dilations"));
  PLIR_RETURN_IF_ERROR(c.Positive({g}, "group"));
  PLIR_RETURN_IF_ERROR(c.Positive(k, "kernel dimensions"));
  if (ws[0] % g != 0) return c.Error("the kernel's input channels are not a multiple of group");
  if (out_shape.size() > n) out_shape.erase(out_shape.begin(), out_shape.end() - n);
  if (out_shape.empty() && (ap == "SAME_UPPER" || ap == "SAME_LOWER"))
    for (size_t i = 0; i < n; ++i) out_shape.push_back(in[i] * s[i]);
  if (!out_shape.empty()) {
    for (size_t i = 0; i < n; ++i) {
      int64_t total = s[i] * (in[i] - 1) + op[i] + ((k[i] - 1) * d[i] + 1) - out_shape[i];
      int64_t half =
          total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2), as the spec's formula
      if (ap == "SAME_UPPER") {
        pads[i] = half;
        pads[i + n] = total - half;
      } else {
        pads[i] = total - half;
        pads[i + n] = half;
      }
    }
  }
  DataType dt = c.InputDtype(0);
  std::vector<int64_t> cur = xs;
  for (size_t a = 0; a < n; ++a) {
    int64_t ax = static_cast<int64_t>(a) + 2, st = s[a];
    if (st == 1) continue;
    PLIR_ASSIGN_OR_RETURN(
        Expr e, c.Call("expand_dims", {x}, MakeAttrs({{Symbol("axis"), IntList({ax + 1})}})));
    std::vector<int64_t> zs = cur;
    zs.insert(zs.begin() + ax + 1, st - 1);
    PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, dt));
    PLIR_ASSIGN_OR_RETURN(Expr z, c.Call("full", {zero}, Shape(zs)));
    PLIR_ASSIGN_OR_RETURN(Expr j, c.Call("concat", {TupleNode::Make({e, z})},
                                         MakeAttrs({{Symbol("axis"), AttrValue::Int(ax + 1)}})));
    std::vector<int64_t> rs = cur;
    rs[ax] *= st;
    PLIR_ASSIGN_OR_RETURN(j, c.Call("reshape", {j}, Shape(rs)));
    int64_t len = (cur[ax] - 1) * st + 1;
    PLIR_ASSIGN_OR_RETURN(
        x,
        c.Call("strided_slice", {j, ConvertContext::IntTuple({ax}), ConvertContext::IntTuple({0}),
                                 ConvertContext::IntTuple({len}), ConvertContext::IntTuple({1})}));
    cur[ax] = len;
  }
  std::vector<int64_t> cpad(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t full = d[i] * (k[i] - 1);
    int64_t b = full - pads[i], e = full - pads[i + n] + op[i];
    if (b < 0 || e < 0) {
      int64_t ax = static_cast<int64_t>(i) + 2;
      int64_t lo = b < 0 ? -b : 0, hi = cur[ax] - (e < 0 ? -e : 0);
      PLIR_ASSIGN_OR_RETURN(
          x, c.Call("strided_slice",
                    {x, ConvertContext::IntTuple({ax}), ConvertContext::IntTuple({lo}),
                     ConvertContext::IntTuple({hi}), ConvertContext::IntTuple({1})}));
      cur[ax] = hi - lo;
      b = std::max<int64_t>(b, 0);
      e = std::max<int64_t>(e, 0);
    }
    cpad[i] = b;
    cpad[i + n] = e;
  }
  // The kernel: [Cin, Cout/g, k...] -> [Cout, Cin/g, k...], flipped.
  int64_t cin = ws[0], coutg = ws[1];
  std::vector<int64_t> s5 = {g, cin / g, coutg}, perm = {0, 2, 1}, s4 = {g * coutg, cin / g}, axes,
                       lo, hi, step;
  for (size_t i = 0; i < n; ++i) {
    s5.push_back(k[i]);
    perm.push_back(static_cast<int64_t>(i) + 3);
    s4.push_back(k[i]);
    axes.push_back(static_cast<int64_t>(i) + 2);
    lo.push_back(k[i] - 1);
    hi.push_back(-k[i] - 1);
    step.push_back(-1);
  }
  PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, Shape(s5)));
  PLIR_ASSIGN_OR_RETURN(w,
                        c.Call("permute_dims", {w}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
  PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, Shape(s4)));
  PLIR_ASSIGN_OR_RETURN(
      w, c.Call("strided_slice", {w, ConvertContext::IntTuple(axes), ConvertContext::IntTuple(lo),
                                  ConvertContext::IntTuple(hi), ConvertContext::IntTuple(step)}));
  PLIR_ASSIGN_OR_RETURN(Expr y, ConvNd(c, x, w, std::vector<int64_t>(n, 1), cpad, d, g));
  PLIR_ASSIGN_OR_RETURN(y, AddBias(c, y, 2, g * coutg, n));
  return Outputs{y};
}

}  // namespace

void RegisterNnConverters(ConverterTable& t) {
  t.Add("Conv", 1, {"nn.conv2d", "reshape", "add", "permute_dims", "take", "strided_slice"}, Conv);
  // ConvInteger: (x - x_zero_point) conv (w - w_zero_point) in int32.
  t.Add("ConvInteger", 10, {"nn.conv2d", "reshape", "astype", "subtract"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          PLIR_ASSIGN_OR_RETURN(Expr w, c.Input(1));
          PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
          PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, c.InputShape(1));
          if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size())
            return Unimplemented("ConvInteger on this rank");
          size_t n = xs.size() - 2;
          PLIR_ASSIGN_OR_RETURN(x, c.Cast(x, DataType::kInt32));
          PLIR_ASSIGN_OR_RETURN(w, c.Cast(w, DataType::kInt32));
          if (c.HasInput(2)) {
            PLIR_ASSIGN_OR_RETURN(Expr z, c.Input(2));
            PLIR_ASSIGN_OR_RETURN(z, c.Cast(z, DataType::kInt32));
            PLIR_ASSIGN_OR_RETURN(x, c.Call("subtract", {x, z}));
          }
          if (c.HasInput(3)) {
            PLIR_ASSIGN_OR_RETURN(Expr z, c.Input(3));
            PLIR_ASSIGN_OR_RETURN(z, c.Cast(z, DataType::kInt32));
            const TensorTypeNode* zt = c.InputType(3);
            if (zt && zt->ndim() == 1) {
              std::vector<int64_t> shape(ws.size(), 1);
              shape[0] = -1;
              PLIR_ASSIGN_OR_RETURN(z, c.Call("reshape", {z}, Shape(shape)));
            }
            PLIR_ASSIGN_OR_RETURN(w, c.Call("subtract", {w, z}));
          }
          std::vector<int64_t> in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end());
          std::vector<int64_t> strides = c.AttrInts("strides", std::vector<int64_t>(n, 1));
          std::vector<int64_t> dil = c.AttrInts("dilations", std::vector<int64_t>(n, 1));
          if (strides.size() != n || dil.size() != n)
            return c.Error("strides and dilations need one entry per spatial axis");
          PLIR_RETURN_IF_ERROR(c.Positive(strides, "strides"));
          PLIR_RETURN_IF_ERROR(c.Positive(dil, "dilations"));
          PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvPads(c, in, k, strides, dil));
          PLIR_ASSIGN_OR_RETURN(Expr y, ConvNd(c, x, w, strides, pads, dil, c.AttrInt("group", 1)));
          return Outputs{y};
        });
  t.Add("Softmax", 1, {"nn.softmax", "reshape"},
        [](ConvertContext& c) { return SoftmaxOld(c, false); });
  t.Add("Softmax", 13, {"nn.softmax"}, [](ConvertContext& c) { return Softmax13(c, false); });
  t.Add("LogSoftmax", 1, {"nn.softmax", "reshape", "log"},
        [](ConvertContext& c) { return SoftmaxOld(c, true); });
  t.Add("LogSoftmax", 13, {"nn.softmax", "log"},
        [](ConvertContext& c) { return Softmax13(c, true); });
  t.Add("GlobalAveragePool", 1, {"reshape", "matmul"}, GlobalAveragePool);
  t.Add("MaxPool", 1, {"nn.max_pool2d", "reshape", "concat", "take", "argmax", "add", "astype"},
        MaxPool);
  t.Add("GlobalMaxPool", 1, {"max"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    int64_t r = c.InputRank(0);
    if (r < 3) return c.Error("input must have spatial axes");
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < r; ++i) axes.push_back(i);
    return c.One(
        "max", {x},
        MakeAttrs({{Symbol(OpAttrName("max", {"axis", "axes"})), IntList(axes)},
                   {Symbol(OpAttrName("max", {"keepdims", "keep_dims"})), AttrValue::Bool(true)}}));
  });
  t.Add("AveragePool", 7, {"nn.conv2d", "divide", "reshape"}, AveragePool);
  t.Add("LRN", 1, {"multiply", "reshape", "matmul", "add", "power", "divide"}, Lrn);
  t.Add("BatchNormalization", 7,
        {"reshape", "subtract", "add", "sqrt", "divide", "multiply", "mean", "variance"},
        BatchNorm);
  t.Add("InstanceNormalization", 6,
        {"reshape", "subtract", "add", "sqrt", "divide", "multiply", "matmul"}, InstanceNorm);
  // MeanVarianceNormalization: (x - mean) / sqrt(mean((x - mean)^2)) over `axes`.
  t.Add("MeanVarianceNormalization", 9,
        {"subtract", "multiply", "sqrt", "divide", "matmul", "reshape"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          int64_t r = c.InputRank(0);
          if (r < 0) return c.Error("input 0 needs a known rank");
          std::vector<bool> red(static_cast<size_t>(r), false);
          for (int64_t a : c.AttrInts("axes", {0, 2, 3})) {
            PLIR_ASSIGN_OR_RETURN(int64_t k, NormAxis(c, a, r));
            red[k] = true;
          }
          PLIR_ASSIGN_OR_RETURN(Expr mean, ReduceSumOf(c, x, red, true, true));
          PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {x, mean}));
          PLIR_ASSIGN_OR_RETURN(Expr d2, c.Call("multiply", {d, d}));
          PLIR_ASSIGN_OR_RETURN(Expr var, ReduceSumOf(c, d2, red, true, true));
          PLIR_ASSIGN_OR_RETURN(Expr sd, c.Call("sqrt", {var}));
          return c.One("divide", {d, sd});
        });
  t.Add("LayerNormalization", 17,
        {"reshape", "subtract", "add", "sqrt", "divide", "multiply", "matmul"}, LayerNorm);
  t.Add("ConvTranspose", 1,
        {"nn.conv2d", "reshape", "permute_dims", "strided_slice", "concat", "full", "expand_dims"},
        ConvTranspose);
}

}  // namespace plir::onnx_import
