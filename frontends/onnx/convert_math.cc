// Linear algebra and reductions: MatMul, Gemm, Reduce*.
#include <cmath>
#include <map>
#include <optional>

#include "frontends/onnx/converter.h"
#include "frontends/onnx/tensor_proto.h"

namespace plir::onnx_import {
namespace {

StatusOr<Outputs> Gemm(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr a, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(1));
  Attrs swap = MakeAttrs({{Symbol("axes"), IntList({1, 0})}});
  if (c.AttrInt("transA", 0)) {
    PLIR_ASSIGN_OR_RETURN(a, c.Call("permute_dims", {a}, swap));
  }
  if (c.AttrInt("transB", 0)) {
    PLIR_ASSIGN_OR_RETURN(b, c.Call("permute_dims", {b}, swap));
  }
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("matmul", {a, b}));
  DataType dt = c.InputDtype(0);
  double alpha = c.AttrFloat("alpha", 1.0f), beta = c.AttrFloat("beta", 1.0f);
  if (alpha != 1.0) {
    PLIR_ASSIGN_OR_RETURN(Expr s, c.Scalar(alpha, dt));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("multiply", {y, s}));
  }
  if (c.HasInput(2) && beta != 0.0) {
    PLIR_ASSIGN_OR_RETURN(Expr cc, c.Input(2));
    if (beta != 1.0) {
      PLIR_ASSIGN_OR_RETURN(Expr s, c.Scalar(beta, dt));
      PLIR_ASSIGN_OR_RETURN(cc, c.Call("multiply", {cc, s}));
    }
    PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, cc}));
  }
  return Outputs{y};
}

bool Has(const std::string& op) { return static_cast<bool>(OpRegistry::Global().Lookup(op)); }
Attrs ShapeAttr(const std::vector<int64_t>& s) {
  return MakeAttrs({{Symbol("shape"), IntList(s)}});
}

// sum over `axes` (sorted, distinct) of a statically shaped x as a matmul
// with a column of ones (the kernel accumulates in double, or exactly in
// integers): the reduced axes moved last, flattened, multiplied.
StatusOr<Expr> SumByMatmul(ConvertContext& c, Expr x, const std::vector<int64_t>& s,
                           const std::vector<bool>& red, bool keepdims) {
  std::vector<int64_t> perm, out_shape;
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < s.size(); ++i)
    if (!red[i]) {
      perm.push_back(static_cast<int64_t>(i));
      outer *= s[i];
    }
  for (size_t i = 0; i < s.size(); ++i)
    if (red[i]) {
      perm.push_back(static_cast<int64_t>(i));
      inner *= s[i];
    }
  for (size_t i = 0; i < s.size(); ++i) {
    if (!red[i])
      out_shape.push_back(s[i]);
    else if (keepdims)
      out_shape.push_back(1);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  DataType dt = As<TensorTypeNode>(x->type())->dtype();
  PLIR_RETURN_IF_ERROR(c.Limit({inner}, "the column of ones"));
  if (inner == 0) {
    PLIR_ASSIGN_OR_RETURN(Expr z, c.Scalar(0, dt));
    return c.Call("full", {z}, ShapeAttr(out_shape));
  }
  if (!identity) {
    PLIR_ASSIGN_OR_RETURN(
        x, c.Call("permute_dims", {x}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
  }
  PLIR_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, ShapeAttr({outer, inner})));
  PLIR_ASSIGN_OR_RETURN(Expr ones,
                        c.Const(MakeTensor(dt, {inner, 1}, [](int64_t) { return 1.0; })));
  PLIR_ASSIGN_OR_RETURN(x, c.Call("matmul", {x, ones}));
  return c.Call("reshape", {x}, ShapeAttr(out_shape));
}

}  // namespace

StatusOr<Expr> ReduceSumOf(ConvertContext& c, Expr x, const std::vector<bool>& red, bool keepdims,
                           bool mean) {
  const auto* t = As<TensorTypeNode>(x->type());
  if (!t || !t->IsStatic()) return c.Error("a reduction needs a static shape");
  std::vector<int64_t> s, axes;
  int64_t n = 1;
  for (size_t i = 0; i < t->shape().size(); ++i) {
    s.push_back(t->shape()[i].value);
    if (red[i]) {
      axes.push_back(static_cast<int64_t>(i));
      n *= s.back();
    }
  }
  const char* op = mean ? "mean" : "sum";
  if (Has(op))
    return c.Call(op, {x},
                  MakeAttrs({{Symbol(OpAttrName(op, {"axis", "axes"})), IntList(axes)},
                             {Symbol(OpAttrName(op, {"keepdims", "keep_dims"})),
                              AttrValue::Bool(keepdims)}}));
  PLIR_ASSIGN_OR_RETURN(Expr y, SumByMatmul(c, x, s, red, keepdims));
  if (!mean) return y;
  PLIR_ASSIGN_OR_RETURN(Expr d, c.Scalar(static_cast<double>(n), t->dtype()));
  return c.Call("divide", {y, d});
}

namespace {

// CumSum as a matmul with a 0/1 triangle (exact in integers, accumulated
// in double for floats), the axis moved last.
StatusOr<Outputs> CumSum(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> av, c.RequireInts(1, "the axis"));
  if (av.size() != 1) return c.Error("axis must hold one value");
  int64_t rank = static_cast<int64_t>(s.size());
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, av[0], rank));
  bool exclusive = c.AttrInt("exclusive", 0) != 0, reverse = c.AttrInt("reverse", 0) != 0;
  int64_t n = s[axis];
  PLIR_RETURN_IF_ERROR(c.Limit({n, n}, "the cumulative-sum triangle"));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  bool moved = axis != rank - 1;
  if (moved) {
    PLIR_ASSIGN_OR_RETURN(
        x, c.Call("permute_dims", {x}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
  }
  DataType dt = c.InputDtype(0);
  // out[j] = sum_i x[i] * T[i][j].
  PLIR_ASSIGN_OR_RETURN(Expr tri, c.Const(MakeTensor(dt, {n, n}, [&](int64_t k) {
    int64_t i = k / n, j = k % n;
    bool in = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
    return in ? 1.0 : 0.0;
  })));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("matmul", {x, tri}));
  if (moved) {
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
    PLIR_ASSIGN_OR_RETURN(y,
                          c.Call("permute_dims", {y}, MakeAttrs({{Symbol("axes"), IntList(inv)}})));
  }
  return Outputs{y};
}

// (x - zero_point) in int32, for the integer matmul and convolution.
StatusOr<Expr> MinusZeroPoint(ConvertContext& c, int i, int zp, int64_t axis_for_vector) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(i));
  PLIR_ASSIGN_OR_RETURN(x, c.Cast(x, DataType::kInt32));
  if (!c.HasInput(zp)) return x;
  PLIR_ASSIGN_OR_RETURN(Expr z, c.Input(zp));
  PLIR_ASSIGN_OR_RETURN(z, c.Cast(z, DataType::kInt32));
  const TensorTypeNode* zt = c.InputType(zp);
  int64_t r = c.InputRank(i);
  if (zt && zt->ndim() == 1 && zt->IsStatic() && zt->shape()[0].value > 1 && axis_for_vector >= 0 &&
      r > 0) {
    std::vector<int64_t> shape(static_cast<size_t>(r), 1);
    shape[axis_for_vector] = zt->shape()[0].value;
    PLIR_ASSIGN_OR_RETURN(z, c.Call("reshape", {z}, ShapeAttr(shape)));
  }
  return c.Call("subtract", {x, z});
}

// y = (x - zero_point) * scale, per tensor or per `axis`.
StatusOr<Outputs> Dequantize(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr scale, c.Input(1));
  DataType out = c.InputDtype(1);
  int64_t r = c.InputRank(0);
  int64_t axis = c.AttrInt("axis", 1);
  auto per_axis = [&](Expr v, int i) -> StatusOr<Expr> {
    const TensorTypeNode* t = c.InputType(i);
    if (t && t->ndim() == 1 && r > 0) {  // per-axis quantization
      PLIR_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, r));
      std::vector<int64_t> shape(static_cast<size_t>(r), 1);
      shape[axis] = t->IsStatic() ? t->shape()[0].value : -1;
      return c.Call("reshape", {v}, ShapeAttr(shape));
    }
    return v;
  };
  PLIR_ASSIGN_OR_RETURN(x, c.Cast(x, out));
  if (c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(Expr z, c.Input(2));
    PLIR_ASSIGN_OR_RETURN(z, c.Cast(z, out));
    PLIR_ASSIGN_OR_RETURN(z, per_axis(z, 2));
    PLIR_ASSIGN_OR_RETURN(x, c.Call("subtract", {x, z}));
  }
  PLIR_ASSIGN_OR_RETURN(scale, per_axis(scale, 1));
  return c.One("multiply", {x, scale});
}

// round(x / scale) + zero_point (halves to even), saturated to qdt's range
// and cast: the shared step of QuantizeLinear and DynamicQuantizeLinear.
// `scale` and `zp` (null: 0) are already shaped to broadcast against x.
StatusOr<Expr> QuantizeTo(ConvertContext& c, Expr x, Expr scale, Expr zp, DataType fdt,
                          DataType qdt) {
  double lo = qdt == DataType::kInt8 ? -128 : 0, hi = qdt == DataType::kInt8 ? 127 : 255;
  PLIR_ASSIGN_OR_RETURN(x, c.Cast(x, fdt));
  PLIR_ASSIGN_OR_RETURN(Expr q, c.Call("divide", {x, scale}));
  PLIR_ASSIGN_OR_RETURN(q, c.Call("round", {q}));
  if (zp) {
    PLIR_ASSIGN_OR_RETURN(zp, c.Cast(zp, fdt));
    PLIR_ASSIGN_OR_RETURN(q, c.Call("add", {q, zp}));
  }
  PLIR_ASSIGN_OR_RETURN(Expr l, c.Scalar(lo, fdt));
  PLIR_ASSIGN_OR_RETURN(Expr h, c.Scalar(hi, fdt));
  PLIR_ASSIGN_OR_RETURN(q, c.Call("maximum", {q, l}));
  PLIR_ASSIGN_OR_RETURN(q, c.Call("minimum", {q, h}));
  return c.Cast(q, qdt);
}

// QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point), per
// tensor or (opset 13) per `axis` with 1-D scale and zero point; the result
// has the zero point's dtype (uint8 without one).
StatusOr<Outputs> Quantize(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr scale, c.Input(1));
  DataType fdt = c.InputDtype(1);
  if (!IsFloat(fdt)) return c.Error("y_scale must be floating point");
  DataType qdt = c.HasInput(2) ? c.InputDtype(2) : DataType::kUInt8;
  if (qdt != DataType::kUInt8 && qdt != DataType::kInt8)
    return Unimplemented("QuantizeLinear to " + std::string(DataTypeName(qdt)) +
                         " (uint8 and int8 are supported)");
  int64_t r = c.InputRank(0);
  auto per_axis = [&](Expr v, int i) -> StatusOr<Expr> {
    const TensorTypeNode* t = c.InputType(i);
    if (!t || t->ndim() != 1 || r <= 0) return v;
    PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", 1), r));
    std::vector<int64_t> shape(static_cast<size_t>(r), 1);
    shape[axis] = t->IsStatic() ? t->shape()[0].value : -1;
    return c.Call("reshape", {v}, ShapeAttr(shape));
  };
  PLIR_ASSIGN_OR_RETURN(scale, per_axis(scale, 1));
  Expr zp;
  if (c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(zp, c.Input(2));
    PLIR_ASSIGN_OR_RETURN(zp, per_axis(zp, 2));
  }
  PLIR_ASSIGN_OR_RETURN(Expr y, QuantizeTo(c, x, scale, zp, fdt, qdt));
  return Outputs{y};
}

// DynamicQuantizeLinear (uint8): the range [min(0, min x), max(0, max x)]
// mapped to 0..255: y_scale = (max - min) / 255, y_zero_point =
// saturate(round(-min / y_scale)), y quantized with them.
StatusOr<Outputs> DynamicQuantize(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  DataType fdt = c.InputDtype(0);
  if (fdt != DataType::kFloat32) return c.Error("x must be float32");
  PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, fdt));
  PLIR_ASSIGN_OR_RETURN(Expr mn, c.Call("min", {x}));
  PLIR_ASSIGN_OR_RETURN(mn, c.Call("minimum", {mn, zero}));
  PLIR_ASSIGN_OR_RETURN(Expr mx, c.Call("max", {x}));
  PLIR_ASSIGN_OR_RETURN(mx, c.Call("maximum", {mx, zero}));
  PLIR_ASSIGN_OR_RETURN(Expr range, c.Call("subtract", {mx, mn}));
  PLIR_ASSIGN_OR_RETURN(Expr q, c.Scalar(255, fdt));
  PLIR_ASSIGN_OR_RETURN(Expr scale, c.Call("divide", {range, q}));
  PLIR_ASSIGN_OR_RETURN(Expr neg, c.Call("subtract", {zero, mn}));
  PLIR_ASSIGN_OR_RETURN(Expr zp, QuantizeTo(c, neg, scale, Expr(), fdt, DataType::kUInt8));
  PLIR_ASSIGN_OR_RETURN(Expr y, QuantizeTo(c, x, scale, zp, fdt, DataType::kUInt8));
  return Outputs{y, scale, zp};
}

// QLinearMatMul with per-tensor scales and zero points: the zero points
// subtracted (as float32, exact for 8-bit values), a float32 matmul (its
// sums of products of 8-bit integers are exact below 2^24), the result
// times a_scale * b_scale / y_scale, quantized with y's zero point.
StatusOr<Outputs> QLinearMatMul(ConvertContext& c) {
  for (int i = 0; i < 8; ++i)
    if (!c.HasInput(i)) return c.Error("input " + std::to_string(i) + " is missing");
  for (int i : {1, 2, 4, 5, 6, 7}) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(i));
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    if (n != 1) return Unimplemented("QLinearMatMul with per-row or per-column quantization");
  }
  DataType qdt = c.InputDtype(7);
  if (qdt != DataType::kUInt8 && qdt != DataType::kInt8)
    return c.Error("y_zero_point must be uint8 or int8");
  const DataType f = DataType::kFloat32;
  auto centered = [&](int v, int zp) -> StatusOr<Expr> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(v));
    PLIR_ASSIGN_OR_RETURN(Expr z, c.Input(zp));
    PLIR_ASSIGN_OR_RETURN(x, c.Cast(x, f));
    PLIR_ASSIGN_OR_RETURN(z, c.Cast(z, f));
    return c.Call("subtract", {x, z});
  };
  PLIR_ASSIGN_OR_RETURN(Expr a, centered(0, 2));
  PLIR_ASSIGN_OR_RETURN(Expr b, centered(3, 5));
  PLIR_ASSIGN_OR_RETURN(Expr acc, c.Call("matmul", {a, b}));
  PLIR_ASSIGN_OR_RETURN(Expr as, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(Expr bs, c.Input(4));
  PLIR_ASSIGN_OR_RETURN(Expr ys, c.Input(6));
  PLIR_ASSIGN_OR_RETURN(Expr mult, c.Call("multiply", {as, bs}));
  PLIR_ASSIGN_OR_RETURN(mult, c.Call("divide", {mult, ys}));
  PLIR_ASSIGN_OR_RETURN(acc, c.Call("multiply", {acc, mult}));
  PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, f));
  PLIR_ASSIGN_OR_RETURN(Expr yz, c.Input(7));
  PLIR_ASSIGN_OR_RETURN(Expr y, QuantizeTo(c, acc, one, yz, f, qdt));
  return Outputs{y};
}

// Hann, Hamming and Blackman windows of a size known at import.
ConverterFn Window(int kind) {
  return [kind](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> sz, c.RequireInts(0, "the size"));
    if (sz.size() != 1 || sz[0] < 0) return c.Error("size must be one non-negative integer");
    int64_t n = sz[0];
    PLIR_RETURN_IF_ERROR(c.Limit({n}, "the window"));
    double np = c.AttrInt("periodic", 1) != 0 ? static_cast<double>(n) : static_cast<double>(n - 1);
    DataType dt = DataTypeFromOnnx(static_cast<int32_t>(c.AttrInt("output_datatype", 1)));
    if (dt == DataType::kUnknown) return Unimplemented("this output_datatype");
    const double pi = 3.14159265358979323846;
    PLIR_ASSIGN_OR_RETURN(Expr w, c.Const(MakeTensor(dt, {n}, [&](int64_t i) {
      double a = 2 * pi * static_cast<double>(i) / np;
      if (kind == 0) return 0.5 - 0.5 * std::cos(a);
      if (kind == 1) return 25.0 / 46 - 21.0 / 46 * std::cos(a);
      return 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
    })));
    return Outputs{w};
  };
}

// Einsum of one or two operands without repeated labels in an operand:
// labels only one operand has are summed out, then a batched matmul over
// [batch, free, contracted] layouts, then the output's order.
StatusOr<Outputs> Einsum(ConvertContext& c) {
  std::string eq;
  for (char ch : c.AttrString("equation", ""))
    if (ch != ' ') eq.push_back(ch);
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t p = 0;;) {
    size_t q = lhs.find(',', p);
    terms.push_back(lhs.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  int n = static_cast<int>(terms.size());
  if (n != c.num_inputs() || n < 1 || n > 2)
    return Unimplemented("Einsum of " + std::to_string(n) + " operands");
  // Expand "..." to upper-case labels (ONNX labels are letters; ellipsis dims first).
  std::vector<Expr> xs;
  std::vector<std::vector<int64_t>> shapes;
  int ell = 0;
  for (int i = 0; i < n; ++i) {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(i));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(i));
    xs.push_back(x);
    shapes.push_back(s);
    size_t e = terms[i].find("...");
    if (e != std::string::npos) {
      int k = static_cast<int>(s.size()) - static_cast<int>(terms[i].size() - 3);
      ell = std::max(ell, k);
    }
  }
  std::string ell_labels;
  for (int k = 0; k < ell; ++k) ell_labels.push_back(static_cast<char>('0' + k));
  for (int i = 0; i < n; ++i) {
    size_t e = terms[i].find("...");
    if (e == std::string::npos) continue;
    int k = static_cast<int>(shapes[i].size()) - static_cast<int>(terms[i].size() - 3);
    terms[i] = terms[i].substr(0, e) + ell_labels.substr(ell - k) + terms[i].substr(e + 3);
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    size_t e = out.find("...");
    if (e != std::string::npos) out = out.substr(0, e) + ell_labels + out.substr(e + 3);
  } else {
    std::map<char, int> count;
    for (const auto& t : terms)
      for (char ch : t) count[ch]++;
    out = ell_labels;
    for (auto& [ch, k] : count)
      if (k == 1 && !(ch >= '0' && ch <= '9')) out.push_back(ch);
  }
  // A label repeated in one operand takes the diagonal: both axes moved
  // last, flattened, and a take of the indices j * (n + 1).
  for (int i = 0; i < n; ++i) {
    if (terms[i].size() != shapes[i].size())
      return c.Error("operand " + std::to_string(i) + "'s labels do not match its rank");
    for (size_t b = 0; b < terms[i].size(); ++b) {
      size_t a = terms[i].find(terms[i][b]);
      if (a == b) continue;
      int64_t d = shapes[i][a];
      if (shapes[i][b] != d) return c.Error("a repeated label's dimensions differ");
      std::vector<int64_t> perm, ns;
      std::string rest;
      for (size_t k = 0; k < terms[i].size(); ++k)
        if (k != a && k != b) {
          perm.push_back(static_cast<int64_t>(k));
          ns.push_back(shapes[i][k]);
          rest.push_back(terms[i][k]);
        }
      perm.push_back(static_cast<int64_t>(a));
      perm.push_back(static_cast<int64_t>(b));
      PLIR_ASSIGN_OR_RETURN(
          Expr x, c.Call("permute_dims", {xs[i]}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
      std::vector<int64_t> flat = ns;
      flat.push_back(d * d);
      PLIR_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, ShapeAttr(flat)));
      std::vector<int64_t> diag;
      for (int64_t j = 0; j < d; ++j) diag.push_back(j * (d + 1));
      PLIR_ASSIGN_OR_RETURN(Expr ie, c.Int64s(diag));
      PLIR_ASSIGN_OR_RETURN(
          xs[i],
          c.Call("take", {x, ie},
                 MakeAttrs({{Symbol("axis"), AttrValue::Int(static_cast<int64_t>(ns.size()))}})));
      ns.push_back(d);
      shapes[i] = ns;
      terms[i] = rest + terms[i][a];
      b = 0;  // look again from the start
    }
  }
  std::map<char, int64_t> size;
  for (int i = 0; i < n; ++i) {
    for (size_t a = 0; a < terms[i].size(); ++a) {
      char ch = terms[i][a];
      if (size.count(ch) && size[ch] != shapes[i][a])
        return Unimplemented("Einsum with broadcast dimensions");
      size[ch] = shapes[i][a];
    }
  }
  auto in_str = [](const std::string& s, char ch) { return s.find(ch) != std::string::npos; };
  // Sum out labels only one operand has that the output lacks.
  for (int i = 0; i < n; ++i) {
    std::vector<bool> red(terms[i].size(), false);
    std::string kept;
    bool any = false;
    for (size_t a = 0; a < terms[i].size(); ++a) {
      char ch = terms[i][a];
      bool other = n == 2 && in_str(terms[1 - i], ch);
      red[a] = !in_str(out, ch) && !other;
      any = any || red[a];
      if (!red[a]) kept.push_back(ch);
    }
    if (any) {
      PLIR_ASSIGN_OR_RETURN(xs[i], ReduceSumOf(c, xs[i], red, false, false));
      terms[i] = kept;
    }
  }
  auto permute_to = [&](Expr x, const std::string& from, const std::string& to) -> StatusOr<Expr> {
    std::vector<int64_t> perm;
    for (char ch : to) perm.push_back(static_cast<int64_t>(from.find(ch)));
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity = identity && perm[i] == static_cast<int64_t>(i);
    if (identity) return x;
    return c.Call("permute_dims", {x}, MakeAttrs({{Symbol("axes"), IntList(perm)}}));
  };
  if (n == 1) {
    PLIR_ASSIGN_OR_RETURN(Expr y, permute_to(xs[0], terms[0], out));
    return Outputs{y};
  }
  std::string batch, fa, fb, k;
  for (char ch : terms[0]) {
    if (in_str(terms[1], ch))
      (in_str(out, ch) ? batch : k).push_back(ch);
    else
      fa.push_back(ch);
  }
  for (char ch : terms[1])
    if (!in_str(terms[0], ch)) fb.push_back(ch);
  auto prod = [&](const std::string& ls) {
    int64_t p = 1;
    for (char ch : ls) p *= size[ch];
    return p;
  };
  PLIR_ASSIGN_OR_RETURN(Expr a, permute_to(xs[0], terms[0], batch + fa + k));
  PLIR_ASSIGN_OR_RETURN(a, c.Call("reshape", {a}, ShapeAttr({prod(batch), prod(fa), prod(k)})));
  PLIR_ASSIGN_OR_RETURN(Expr b, permute_to(xs[1], terms[1], batch + k + fb));
  PLIR_ASSIGN_OR_RETURN(b, c.Call("reshape", {b}, ShapeAttr({prod(batch), prod(k), prod(fb)})));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("matmul", {a, b}));
  std::string have = batch + fa + fb;
  std::vector<int64_t> ys;
  for (char ch : have) ys.push_back(size[ch]);
  PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, ShapeAttr(ys)));
  PLIR_ASSIGN_OR_RETURN(y, permute_to(y, have, out));
  return Outputs{y};
}

// DFT (opset 17) as matmuls with constant cosine and sine matrices over
// the signal axis (moved last); the last input axis holds [re] or [re, im].
StatusOr<Expr> DftOf(ConvertContext& c, Expr x, const std::vector<int64_t>& s, int64_t axis,
                     bool inverse, bool onesided, int64_t len) {
  int64_t r = static_cast<int64_t>(s.size());
  DataType dt = As<TensorTypeNode>(x->type())->dtype();
  int64_t n = s[axis];
  int64_t k = onesided ? len / 2 + 1 : len;
  PLIR_RETURN_IF_ERROR(c.Limit({len, k}, "the DFT matrix"));
  std::vector<int64_t> sig(s.begin(), s.end() - 1);
  auto part = [&](int64_t i) -> StatusOr<Expr> {
    PLIR_ASSIGN_OR_RETURN(
        Expr p, c.Call("strided_slice",
                       {x, ConvertContext::IntTuple({r - 1}), ConvertContext::IntTuple({i}),
                        ConvertContext::IntTuple({i + 1}), ConvertContext::IntTuple({1})}));
    return c.Call("reshape", {p}, ShapeAttr(sig));
  };
  PLIR_ASSIGN_OR_RETURN(Expr xr, part(0));
  std::optional<Expr> xi;
  if (s.back() == 2) {
    PLIR_ASSIGN_OR_RETURN(Expr e, part(1));
    xi = e;
  }
  int64_t rr = r - 1;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rr; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  bool moved = axis != rr - 1;
  Attrs pa = MakeAttrs({{Symbol("axes"), IntList(perm)}});
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  // The signal axis last, cut or zero-padded to len.
  auto prep = [&](Expr v) -> StatusOr<Expr> {
    if (moved) {
      PLIR_ASSIGN_OR_RETURN(v, c.Call("permute_dims", {v}, pa));
    }
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> vs, [&]() -> StatusOr<std::vector<int64_t>> {
      const auto* t = As<TensorTypeNode>(v->type());
      std::vector<int64_t> out;
      for (const Dim& d : t->shape()) out.push_back(d.value);
      return out;
    }());
    if (len < n) {
      PLIR_ASSIGN_OR_RETURN(
          v, c.Call("strided_slice",
                    {v, ConvertContext::IntTuple({rr - 1}), ConvertContext::IntTuple({0}),
                     ConvertContext::IntTuple({len}), ConvertContext::IntTuple({1})}));
    } else if (len > n) {
      vs.back() = len - n;
      PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, dt));
      PLIR_ASSIGN_OR_RETURN(Expr z, c.Call("full", {zero}, ShapeAttr(vs)));
      PLIR_ASSIGN_OR_RETURN(v, c.Call("concat", {TupleNode::Make({v, z})},
                                      MakeAttrs({{Symbol("axis"), AttrValue::Int(rr - 1)}})));
    }
    return v;
  };
  PLIR_ASSIGN_OR_RETURN(xr, prep(xr));
  if (xi) {
    PLIR_ASSIGN_OR_RETURN(Expr e, prep(*xi));
    xi = e;
  }
  const double pi = 3.14159265358979323846;
  double scale = inverse ? 1.0 / static_cast<double>(len) : 1.0;
  PLIR_ASSIGN_OR_RETURN(Expr cm, c.Const(MakeTensor(dt, {len, k}, [&](int64_t e) {
    return std::cos(2 * pi * static_cast<double>((e / k) * (e % k) % len) /
                    static_cast<double>(len)) *
           scale;
  })));
  // Forward: e^{-i theta}; inverse: e^{+i theta}. sm = -sin (forward) or +sin.
  PLIR_ASSIGN_OR_RETURN(Expr sm, c.Const(MakeTensor(dt, {len, k}, [&](int64_t e) {
    double v =
        std::sin(2 * pi * static_cast<double>((e / k) * (e % k) % len) / static_cast<double>(len)) *
        scale;
    return inverse ? v : -v;
  })));
  // re = xr.C - xi.S', im = xr.S' + xi.C (S' = sm).
  PLIR_ASSIGN_OR_RETURN(Expr re, c.Call("matmul", {xr, cm}));
  PLIR_ASSIGN_OR_RETURN(Expr im, c.Call("matmul", {xr, sm}));
  if (xi) {
    PLIR_ASSIGN_OR_RETURN(Expr a, c.Call("matmul", {*xi, sm}));
    PLIR_ASSIGN_OR_RETURN(re, c.Call("subtract", {re, a}));
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Call("matmul", {*xi, cm}));
    PLIR_ASSIGN_OR_RETURN(im, c.Call("add", {im, b}));
  }
  if (moved) {
    Attrs ia = MakeAttrs({{Symbol("axes"), IntList(inv)}});
    PLIR_ASSIGN_OR_RETURN(re, c.Call("permute_dims", {re}, ia));
    PLIR_ASSIGN_OR_RETURN(im, c.Call("permute_dims", {im}, ia));
  }
  Attrs last = MakeAttrs({{Symbol("axis"), IntList({rr})}});
  PLIR_ASSIGN_OR_RETURN(re, c.Call("expand_dims", {re}, last));
  PLIR_ASSIGN_OR_RETURN(im, c.Call("expand_dims", {im}, last));
  return c.Call("concat", {TupleNode::Make({re, im})},
                MakeAttrs({{Symbol("axis"), AttrValue::Int(rr)}}));
}

StatusOr<Outputs> Dft(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  if (r < 2 || (s.back() != 1 && s.back() != 2))
    return c.Error("the last axis must hold 1 (real) or 2 (complex) values");
  if (!IsFloat(c.InputDtype(0))) return c.Error("DFT needs floating-point data");
  int64_t axis = c.AttrInt("axis", 1);  // negative: from the back of all r axes ([-r, -2])
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2)
    return c.Error("axis " + std::to_string(c.AttrInt("axis", 1)) + " is out of range");
  int64_t len = s[axis];
  if (c.HasInput(1)) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> l, c.RequireInts(1, "dft_length"));
    if (l.size() != 1 || l[0] <= 0) return c.Error("dft_length must be one positive integer");
    len = l[0];
  }
  PLIR_ASSIGN_OR_RETURN(Expr y, DftOf(c, x, s, axis, c.AttrInt("inverse", 0) != 0,
                                      c.AttrInt("onesided", 0) != 0, len));
  return Outputs{y};
}

// STFT (opset 17): frames taken with constant indices, times the window,
// then the DFT of each frame.
StatusOr<Outputs> Stft(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  if (s.size() != 3 || (s[2] != 1 && s[2] != 2))
    return c.Error("the signal must be [batch, length, 1 or 2]");
  if (!IsFloat(c.InputDtype(0))) return c.Error("STFT needs floating-point data");
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> step, c.RequireInts(1, "frame_step"));
  if (step.size() != 1 || step[0] <= 0) return c.Error("frame_step must be one positive integer");
  int64_t fl = -1;
  if (c.HasInput(3)) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> f, c.RequireInts(3, "frame_length"));
    if (f.size() != 1) return c.Error("frame_length must be one integer");
    fl = f[0];
  }
  if (fl < 0 && c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, c.InputShape(2));
    if (ws.size() != 1) return c.Error("the window must be 1-D");
    fl = ws[0];
  }
  if (fl <= 0 || fl > s[1]) return c.Error("frame_length must be in 1..signal length");
  int64_t frames = (s[1] - fl) / step[0] + 1;
  PLIR_RETURN_IF_ERROR(c.Limit({frames, fl}, "the frame indices"));
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < fl; ++t) idx.push_back(f * step[0] + t);
  PLIR_ASSIGN_OR_RETURN(Expr ie, c.Int64s(idx));
  PLIR_ASSIGN_OR_RETURN(Expr y,
                        c.Call("take", {x, ie}, MakeAttrs({{Symbol("axis"), AttrValue::Int(1)}})));
  std::vector<int64_t> fs = {s[0], frames, fl, s[2]};
  PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, ShapeAttr(fs)));
  if (c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(Expr w, c.Input(2));
    PLIR_ASSIGN_OR_RETURN(w, c.Call("reshape", {w}, ShapeAttr({1, 1, fl, 1})));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("multiply", {y, w}));
  }
  PLIR_ASSIGN_OR_RETURN(y, DftOf(c, y, fs, 2, false, c.AttrInt("onesided", 1) != 0, fl));
  return Outputs{y};
}

// ArgMax, ArgMin: the PLIR op (TVM's argmax(x, axis, keepdims), with
// select_last_index), int64.
ConverterFn ArgConverter(std::string op) {
  return [op](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    int64_t r = c.InputRank(0);
    if (r < 0) return c.Error("input 0 needs a known rank");
    PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", 0), r));
    bool keepdims = c.AttrInt("keepdims", 1) != 0;
    PLIR_ASSIGN_OR_RETURN(
        Expr y, c.Call(op, {x},
                       MakeAttrs({{Symbol("axis"), AttrValue::Int(axis)},
                                  {Symbol(OpAttrName(op, {"keepdims", "keep_dims"})),
                                   AttrValue::Bool(keepdims)},
                                  {Symbol("select_last_index"),
                                   AttrValue::Bool(c.AttrInt("select_last_index", 0) != 0)}})));
    PLIR_ASSIGN_OR_RETURN(y, c.Cast(y, DataType::kInt64));
    return Outputs{y};
  };
}

// TopK: the first k of argsort along the axis (descending when largest;
// the sort is stable, so equal values keep the lower index first, as ONNX
// asks), the values gathered with gather_elements. k is an attribute before
// opset 10, the second input since. `sorted` = 0 allows any order: sorted is
// one of them.
StatusOr<Outputs> TopK(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  if (r == 0) return c.Error("input must not be 0-d");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", -1), r));
  int64_t k = c.AttrInt("k", -1);
  if (c.opset() >= 10) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> kv, c.RequireInts(1, "K"));
    if (kv.size() != 1) return c.Error("K must hold one value");
    k = kv[0];
  }
  if (k < 0 || k > s[axis])
    return c.Error("k = " + std::to_string(k) + " is not in 0.." + std::to_string(s[axis]));
  bool largest = c.AttrInt("largest", 1) != 0;
  PLIR_ASSIGN_OR_RETURN(Expr order,
                        c.Call("argsort", {x},
                               MakeAttrs({{Symbol("axis"), AttrValue::Int(axis)},
                                          {Symbol("descending"), AttrValue::Bool(largest)}})));
  PLIR_ASSIGN_OR_RETURN(
      Expr idx, c.Call("strided_slice",
                       {order, ConvertContext::IntTuple({axis}), ConvertContext::IntTuple({0}),
                        ConvertContext::IntTuple({k}), ConvertContext::IntTuple({1})}));
  PLIR_ASSIGN_OR_RETURN(Expr vals, c.Call("gather_elements", {x, idx},
                                          MakeAttrs({{Symbol("axis"), AttrValue::Int(axis)}})));
  return Outputs{vals, idx};
}

// Hardmax (opset 13): the rows of a constant identity taken at argmax over
// the axis (moved last).
StatusOr<Outputs> Hardmax(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  if (r == 0) return c.Error("input must not be 0-d");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", -1), r));
  int64_t n = s[axis];
  PLIR_RETURN_IF_ERROR(c.Limit({n, n}, "the identity"));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  bool moved = axis != r - 1;
  if (moved) {
    PLIR_ASSIGN_OR_RETURN(
        x, c.Call("permute_dims", {x}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
  }
  PLIR_ASSIGN_OR_RETURN(Expr i,
                        c.Call("argmax", {x},
                               MakeAttrs({{Symbol("axis"), AttrValue::Int(r - 1)},
                                          {Symbol(OpAttrName("argmax", {"keepdims", "keep_dims"})),
                                           AttrValue::Bool(false)}})));
  PLIR_ASSIGN_OR_RETURN(i, c.Cast(i, DataType::kInt64));
  PLIR_ASSIGN_OR_RETURN(Expr eye, c.Const(MakeTensor(c.InputDtype(0), {n, n}, [&](int64_t e) {
    return e / n == e % n ? 1.0 : 0.0;
  })));
  PLIR_ASSIGN_OR_RETURN(Expr y,
                        c.Call("take", {eye, i}, MakeAttrs({{Symbol("axis"), AttrValue::Int(0)}})));
  if (moved) {
    std::vector<int64_t> inv(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) inv[perm[k]] = static_cast<int64_t>(k);
    PLIR_ASSIGN_OR_RETURN(y,
                          c.Call("permute_dims", {y}, MakeAttrs({{Symbol("axes"), IntList(inv)}})));
  }
  return Outputs{y};
}

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

// The Reduce* family: axes from the attribute (or, for ReduceSum since
// opset 13, the second input), keepdims, noop_with_empty_axes.
ConverterFn ReduceConverter(Reduce kind, bool axes_input) {
  return [kind, axes_input](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    int64_t rank = c.InputRank(0);
    if (rank < 0) return c.Error("input 0 needs a known rank");
    std::vector<int64_t> axes = c.AttrInts("axes");
    if (axes_input && c.HasInput(1)) {
      PLIR_ASSIGN_OR_RETURN(axes, c.RequireInts(1, "the axes"));
    }
    bool keepdims = c.AttrInt("keepdims", 1) != 0;
    if (axes.empty() && c.AttrInt("noop_with_empty_axes", 0) != 0) return Outputs{x};
    std::vector<bool> red(static_cast<size_t>(rank), axes.empty());
    for (int64_t a : axes) {
      PLIR_ASSIGN_OR_RETURN(int64_t k, NormAxis(c, a, rank));
      red[k] = true;
    }
    std::vector<int64_t> sorted;
    for (int64_t i = 0; i < rank; ++i)
      if (red[i]) sorted.push_back(i);
    // Elementwise before.
    switch (kind) {
      case Reduce::kSumSquare:
      case Reduce::kL2: {
        PLIR_ASSIGN_OR_RETURN(x, c.Call("multiply", {x, x}));
        break;
      }
      case Reduce::kL1: {
        PLIR_ASSIGN_OR_RETURN(x, c.Call("abs", {x}));
        break;
      }
      case Reduce::kLogSumExp: {
        PLIR_ASSIGN_OR_RETURN(x, c.Call("exp", {x}));
        break;
      }
      default:
        break;
    }
    const char* op = "sum";
    switch (kind) {
      case Reduce::kMean:
        op = "mean";
        break;
      case Reduce::kMax:
        op = "max";
        break;
      case Reduce::kMin:
        op = "min";
        break;
      case Reduce::kProd:
        op = "prod";
        break;
      default:
        break;
    }
    Expr y;
    if (Has(op)) {
      PLIR_ASSIGN_OR_RETURN(
          y, c.Call(op, {x},
                    MakeAttrs({{Symbol(OpAttrName(op, {"axis", "axes"})), IntList(sorted)},
                               {Symbol(OpAttrName(op, {"keepdims", "keep_dims"})),
                                AttrValue::Bool(keepdims)}})));
    } else if (kind == Reduce::kMax || kind == Reduce::kMin || kind == Reduce::kProd) {
      return Unimplemented(std::string("PLIR has no op ") + op);
    } else {
      PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
      PLIR_ASSIGN_OR_RETURN(y, SumByMatmul(c, x, s, red, keepdims));
      if (kind == Reduce::kMean) {
        int64_t n = 1;
        for (int64_t i = 0; i < rank; ++i)
          if (red[i]) n *= s[i];
        PLIR_ASSIGN_OR_RETURN(Expr d, c.Scalar(static_cast<double>(n), c.InputDtype(0)));
        PLIR_ASSIGN_OR_RETURN(y, c.Call("divide", {y, d}));
      }
    }
    switch (kind) {
      case Reduce::kL2: {
        PLIR_ASSIGN_OR_RETURN(y, c.Call("sqrt", {y}));
        break;
      }
      case Reduce::kLogSum:
      case Reduce::kLogSumExp: {
        PLIR_ASSIGN_OR_RETURN(y, c.Call("log", {y}));
        break;
      }
      default:
        break;
    }
    return Outputs{y};
  };
}

}  // namespace

void RegisterMathConverters(ConverterTable& t) {
  t.Add("MatMul", 1, {"matmul"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr a, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(1));
    return c.One("matmul", {a, b});
  });
  t.Add("Gemm", 6, {"matmul", "permute_dims", "multiply", "add"}, Gemm);

  // Reductions: the PLIR reduction op when registered, else (sum, mean) a
  // matmul with ones.
  const std::vector<std::string> base = {"matmul", "reshape", "permute_dims", "full"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), base.begin(), base.end());
    return more;
  };
  t.Add("ReduceSum", 1, base, ReduceConverter(Reduce::kSum, false));
  t.Add("ReduceSum", 13, base, ReduceConverter(Reduce::kSum, true));
  t.Add("ReduceMean", 1, with({"divide"}), ReduceConverter(Reduce::kMean, false));
  t.Add("ReduceSumSquare", 1, with({"multiply"}), ReduceConverter(Reduce::kSumSquare, false));
  t.Add("ReduceL1", 1, with({"abs"}), ReduceConverter(Reduce::kL1, false));
  t.Add("ReduceL2", 1, with({"multiply", "sqrt"}), ReduceConverter(Reduce::kL2, false));
  t.Add("ReduceLogSum", 1, with({"log"}), ReduceConverter(Reduce::kLogSum, false));
  t.Add("ReduceLogSumExp", 1, with({"exp", "log"}), ReduceConverter(Reduce::kLogSumExp, false));
  t.Add("MatMulInteger", 10, {"matmul", "astype", "subtract", "reshape"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          int64_t ra = c.InputRank(0);
          PLIR_ASSIGN_OR_RETURN(
              Expr a, MinusZeroPoint(c, 0, 2, ra >= 2 ? ra - 2 : -1));  // a's zero point per row
          int64_t rb = c.InputRank(1);
          PLIR_ASSIGN_OR_RETURN(Expr b,
                                MinusZeroPoint(c, 1, 3, rb >= 1 ? rb - 1 : -1));  // b's per column
          return c.One("matmul", {a, b});
        });
  t.Add("QuantizeLinear", 10, {"astype", "divide", "round", "add", "maximum", "minimum", "reshape"},
        Quantize);
  t.Add("DynamicQuantizeLinear", 11,
        {"astype", "divide", "round", "add", "maximum", "minimum", "subtract", "min", "max"},
        DynamicQuantize);
  t.Add(
      "QLinearMatMul", 10,
      {"astype", "subtract", "matmul", "multiply", "divide", "round", "add", "maximum", "minimum"},
      QLinearMatMul);
  t.Add("DequantizeLinear", 10, {"astype", "subtract", "multiply", "reshape"}, Dequantize);
  t.Add("HannWindow", 17, {}, Window(0));
  t.Add("HammingWindow", 17, {}, Window(1));
  t.Add("BlackmanWindow", 17, {}, Window(2));
  t.Add("DFT", 17,
        {"matmul", "strided_slice", "reshape", "permute_dims", "concat", "expand_dims", "full",
         "add", "subtract"},
        Dft);
  t.Add("STFT", 17,
        {"take", "multiply", "matmul", "strided_slice", "reshape", "permute_dims", "concat",
         "expand_dims", "full", "add", "subtract"},
        Stft);
  t.Add("Einsum", 12, {"matmul", "reshape", "permute_dims", "take"}, Einsum);
  t.Add("CumSum", 11, {"matmul", "permute_dims"}, CumSum);
  t.Add("Hardmax", 13, {"argmax", "take", "permute_dims", "astype"}, Hardmax);
  t.Add("TopK", 1, {"argsort", "strided_slice", "gather_elements"}, TopK);
  t.Add("ArgMax", 1, {"argmax", "astype"}, ArgConverter("argmax"));
  t.Add("ArgMin", 1, {"argmin", "astype"}, ArgConverter("argmin"));
  t.Add("ReduceMax", 1, {"max"}, ReduceConverter(Reduce::kMax, false));
  t.Add("ReduceMin", 1, {"min"}, ReduceConverter(Reduce::kMin, false));
  t.Add("ReduceProd", 1, {"prod"}, ReduceConverter(Reduce::kProd, false));
}

}  // namespace plir::onnx_import
