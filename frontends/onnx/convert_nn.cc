// Neural-network ONNX ops: convolution, softmax, pooling, normalization.
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

}  // namespace

void RegisterNnConverters(ConverterTable& t) {
  t.Add("Conv", 1, {"nn.conv2d", "reshape", "add"}, Conv);
  t.Add("Softmax", 1, {"nn.softmax", "reshape"}, [](ConvertContext& c) { return SoftmaxOld(c, false); });
  t.Add("Softmax", 13, {"nn.softmax"}, [](ConvertContext& c) { return Softmax13(c, false); });
  t.Add("LogSoftmax", 1, {"nn.softmax", "reshape", "log"}, [](ConvertContext& c) { return SoftmaxOld(c, true); });
  t.Add("LogSoftmax", 13, {"nn.softmax", "log"}, [](ConvertContext& c) { return Softmax13(c, true); });
  t.Add("GlobalAveragePool", 1, {"reshape", "matmul"}, GlobalAveragePool);
}

}  // namespace plir::onnx_import
