// Elementwise ONNX ops: arithmetic, comparisons and logic, unary math,
// activations.
#include <algorithm>
#include <functional>
#include <optional>

#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

bool Has(const char* op) { return static_cast<bool>(OpRegistry::Global().Lookup(op)); }

ConverterFn Unary(std::string op) {
  return [op](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    return c.One(op, {x});
  };
}

ConverterFn Binary(std::string op) {
  return [op](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr a, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(1));
    return c.One(op, {a, b});
  };
}

// Before opset 7: `broadcast = 1` with `axis` aligns B's axes with A's
// from `axis` on (B reshaped with trailing 1s); without `axis` the
// alignment is NumPy's.
ConverterFn LegacyBinary(std::string op) {
  return [op](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr a, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(1));
    if (c.AttrInt("broadcast", 0) != 0 && c.HasAttr("axis")) {
      int64_t ra = c.InputRank(0);
      PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> bs, c.InputShape(1));
      PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", 0), ra));
      int64_t trailing = ra - axis - static_cast<int64_t>(bs.size());
      if (trailing < 0) return c.Error("B does not fit A from axis " + std::to_string(axis));
      for (int64_t i = 0; i < trailing; ++i) bs.push_back(1);
      PLIR_ASSIGN_OR_RETURN(b, c.Call("reshape", {b}, MakeAttrs({{Symbol("shape"), IntList(bs)}})));
    }
    return c.One(op, {a, b});
  };
}

// Sum, Max, Min: the binary op folded over every input.
ConverterFn Variadic(std::string op) {
  return [op](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr acc, c.Input(0));
    for (int i = 1; i < c.num_inputs(); ++i) {
      PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(i));
      PLIR_ASSIGN_OR_RETURN(acc, c.Call(op, {acc, x}));
    }
    return Outputs{acc};
  };
}

// Shape chains without the PLIR op: when every input is a small integer or
// bool tensor known at import (shape values: torch's exports compare and
// select them with Equal and Where before Expand or Reshape), the node is
// evaluated here with NumPy broadcasting. With the op registered, Call
// folds through its kernel instead.
constexpr int64_t kShapeFoldElements = 4096;

std::optional<std::vector<Tensor>> SmallIntInputs(ConvertContext& c) {
  std::vector<Tensor> in;
  for (int i = 0; i < c.num_inputs(); ++i) {
    std::optional<Tensor> t = c.StaticInput(i);
    if (!t || !(IsInt(t->dtype) || t->dtype == DataType::kBool) ||
        t->NumElements() > kShapeFoldElements)
      return std::nullopt;
    in.push_back(*t);
  }
  return in;
}

StatusOr<Expr> FoldBroadcast(ConvertContext& c, const std::vector<Tensor>& in, DataType out_dt,
                             const std::function<int64_t(const std::vector<int64_t>&)>& f) {
  size_t rank = 0;
  for (const Tensor& t : in) rank = std::max(rank, t.shape.size());
  std::vector<int64_t> shape(rank, 1);
  for (const Tensor& t : in)
    for (size_t i = 0; i < t.shape.size(); ++i) {
      int64_t& d = shape[rank - t.shape.size() + i];
      if (t.shape[i] == d || t.shape[i] == 1) continue;
      if (d != 1) return c.Error("shapes do not broadcast");
      d = t.shape[i];
    }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n > kShapeFoldElements) return c.Error("too large to evaluate at import");
  PLIR_ASSIGN_OR_RETURN(Tensor out, MakeIntTensor(out_dt, shape, [&](int64_t e) {
                          std::vector<int64_t> args;
                          for (const Tensor& t : in) {
                            int64_t off = 0, rem = e, stride = 1;
                            std::vector<int64_t> coord(rank);
                            for (size_t i = rank; i-- > 0;) {
                              coord[i] = rem % shape[i];
                              rem /= shape[i];
                            }
                            size_t lead = rank - t.shape.size();
                            for (size_t i = t.shape.size(); i-- > 0;) {
                              off += (t.shape[i] == 1 ? 0 : coord[lead + i]) * stride;
                              stride *= t.shape[i];
                            }
                            args.push_back(t.GetInt(off));
                          }
                          return f(args);
                        }));
  return c.Const(out);
}

// A converter that uses PLIR op `op` when registered, else evaluates shape
// values known at import with `f` (result dtype `out_dt`, or the first
// input's when kUnknown).
ConverterFn WithShapeFold(std::string op, DataType out_dt,
                          std::function<int64_t(const std::vector<int64_t>&)> f) {
  return [op, out_dt, f](ConvertContext& c) -> StatusOr<Outputs> {
    if (!Has(op.c_str())) {
      std::optional<std::vector<Tensor>> in = SmallIntInputs(c);
      if (!in)
        return Unimplemented("PLIR has no op " + op +
                             " (only shape values known at import are evaluated without it)");
      DataType dt =
          out_dt == DataType::kUnknown ? (*in)[c.num_inputs() == 3 ? 1 : 0].dtype : out_dt;
      PLIR_ASSIGN_OR_RETURN(Expr e, FoldBroadcast(c, *in, dt, f));
      return Outputs{e};
    }
    std::vector<Expr> args;
    for (int i = 0; i < c.num_inputs(); ++i) {
      PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(i));
      args.push_back(x);
    }
    return c.One(op, args);
  };
}

// Pow (opset 12 allows mixed types): the result has the base's dtype. A
// float base takes the exponent cast to it; an integer base with a float
// exponent computes in float64 and truncates back (the reference's
// np.power(x, y).astype(x.dtype)); integers of two widths compute in the
// base's.
StatusOr<Outputs> Pow(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr a, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(1));
  DataType da = c.InputDtype(0), db = c.InputDtype(1);
  if (da == db || da == DataType::kUnknown || db == DataType::kUnknown)
    return c.One("power", {a, b});
  if (IsFloat(da) || (IsInt(da) && IsInt(db))) {
    PLIR_ASSIGN_OR_RETURN(b, c.Cast(b, da));
    return c.One("power", {a, b});
  }
  if (!IsInt(da) || !IsFloat(db))
    return c.Error("Pow of " + std::string(DataTypeName(da)) + " by " +
                   std::string(DataTypeName(db)));
  PLIR_ASSIGN_OR_RETURN(a, c.Cast(a, DataType::kFloat64));
  PLIR_ASSIGN_OR_RETURN(b, c.Cast(b, DataType::kFloat64));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("power", {a, b}));
  PLIR_ASSIGN_OR_RETURN(y, c.Cast(y, da));
  return Outputs{y};
}

// Mod: fmod = 0 is Python's % (the sign of the divisor, PLIR's floor_mod;
// ONNX allows it for integers only), fmod = 1 is C's fmod (PLIR's mod).
StatusOr<Outputs> Mod(ConvertContext& c) {
  return Binary(c.AttrInt("fmod", 0) != 0 ? "mod" : "floor_mod")(c);
}

// IsInf: detect_negative / detect_positive map to the PLIR op's attributes
// of the same names.
StatusOr<Outputs> IsInf(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  return c.One(
      "isinf", {x},
      MakeAttrs(
          {{Symbol("detect_negative"), AttrValue::Bool(c.AttrInt("detect_negative", 1) != 0)},
           {Symbol("detect_positive"), AttrValue::Bool(c.AttrInt("detect_positive", 1) != 0)}}));
}

// Shrink in general: x + bias where x < -lambd, x - bias where x > lambd,
// 0 elsewhere (two selects on the comparisons).
StatusOr<Outputs> ShrinkSelect(ConvertContext& c, double lambd, double bias) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr l, c.Scalar(lambd, dt));
  PLIR_ASSIGN_OR_RETURN(Expr nl, c.Scalar(-lambd, dt));
  PLIR_ASSIGN_OR_RETURN(Expr b, c.Scalar(bias, dt));
  PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, dt));
  PLIR_ASSIGN_OR_RETURN(Expr below, c.Call("less", {x, nl}));
  PLIR_ASSIGN_OR_RETURN(Expr above, c.Call("greater", {x, l}));
  PLIR_ASSIGN_OR_RETURN(Expr up, c.Call("add", {x, b}));
  PLIR_ASSIGN_OR_RETURN(Expr down, c.Call("subtract", {x, b}));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("where", {above, down, zero}));
  return c.One("where", {below, up, y});
}

// alpha * x, with alpha in x's dtype.
StatusOr<Expr> Scale(ConvertContext& c, Expr x, double alpha) {
  PLIR_ASSIGN_OR_RETURN(Expr a, c.Scalar(alpha, c.InputDtype(0)));
  return c.Call("multiply", {x, a});
}

}  // namespace

void RegisterElementwiseConverters(ConverterTable& t) {
  // Binary arithmetic (NumPy broadcasting since opset 7).
  t.Add("Add", 1, {"add", "reshape"}, LegacyBinary("add"));
  t.Add("Sub", 1, {"subtract", "reshape"}, LegacyBinary("subtract"));
  t.Add("Mul", 1, {"multiply", "reshape"}, LegacyBinary("multiply"));
  t.Add("Div", 1, {"divide", "reshape"}, LegacyBinary("divide"));
  t.Add("Add", 7, {"add"}, Binary("add"));
  t.Add("Sub", 7, {"subtract"}, Binary("subtract"));
  t.Add("Mul", 7, {"multiply"}, Binary("multiply"));
  t.Add("Div", 7, {"divide"}, Binary("divide"));
  t.Add("Pow", 7, {"power"}, Binary("power"));
  t.Add("Pow", 12, {"power", "astype"}, Pow);
  t.Add("Sum", 6, {"add"}, Variadic("add"));
  t.Add("Max", 6, {"maximum"}, Variadic("maximum"));
  t.Add("Min", 6, {"minimum"}, Variadic("minimum"));
  t.Add("Mean", 6, {"add", "divide"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Outputs s, Variadic("add")(c));
    PLIR_ASSIGN_OR_RETURN(Expr n, c.Scalar(c.num_inputs(), c.InputDtype(0)));
    return c.One("divide", {s[0], n});
  });
  t.Add("Mod", 10, {"floor_mod", "mod"}, Mod);
  t.Add("BitShift", 11, {"left_shift", "right_shift"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    return Binary(c.AttrString("direction", "") == "LEFT" ? "left_shift" : "right_shift")(c);
  });

  // Comparisons and logic.
  using V = const std::vector<int64_t>&;
  t.Add("Equal", 7, {},
        WithShapeFold("equal", DataType::kBool, [](V a) -> int64_t { return a[0] == a[1]; }));
  t.Add("Less", 7, {},
        WithShapeFold("less", DataType::kBool, [](V a) -> int64_t { return a[0] < a[1]; }));
  t.Add("Greater", 7, {},
        WithShapeFold("greater", DataType::kBool, [](V a) -> int64_t { return a[0] > a[1]; }));
  t.Add("LessOrEqual", 12, {"less_equal"}, Binary("less_equal"));
  t.Add("GreaterOrEqual", 12, {"greater_equal"}, Binary("greater_equal"));
  t.Add("And", 7, {"logical_and"}, Binary("logical_and"));
  t.Add("Or", 7, {"logical_or"}, Binary("logical_or"));
  t.Add("Xor", 7, {"logical_xor"}, Binary("logical_xor"));
  t.Add("Not", 1, {},
        WithShapeFold("logical_not", DataType::kBool, [](V a) -> int64_t { return !a[0]; }));
  t.Add("Where", 9, {},
        WithShapeFold("where", DataType::kUnknown, [](V a) { return a[0] ? a[1] : a[2]; }));

  // Unary math: ONNX op -> PLIR (TVM Relax) op of the same meaning.
  const std::pair<const char*, const char*> unary[] = {
      {"Abs", "abs"},     {"Exp", "exp"},     {"Log", "log"},         {"Sqrt", "sqrt"},
      {"Erf", "erf"},     {"Tanh", "tanh"},   {"Sigmoid", "sigmoid"}, {"Floor", "floor"},
      {"Ceil", "ceil"},   {"Round", "round"}, {"Sin", "sin"},         {"Cos", "cos"},
      {"Tan", "tan"},     {"Asin", "asin"},   {"Acos", "acos"},       {"Atan", "atan"},
      {"Sinh", "sinh"},   {"Cosh", "cosh"},   {"Asinh", "asinh"},     {"Acosh", "acosh"},
      {"Atanh", "atanh"}, {"Sign", "sign"},   {"IsNaN", "isnan"},     {"BitwiseNot", "bitwise_not"},
  };
  for (const auto& [onnx_op, op] : unary) t.Add(onnx_op, 1, {op}, Unary(op));
  t.Add("Neg", 6, {"subtract"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    if (Has("negative")) return c.One("negative", {x});
    PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, c.InputDtype(0)));
    return c.One("subtract", {zero, x});
  });
  t.Add("Reciprocal", 6, {"divide"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, c.InputDtype(0)));
    return c.One("divide", {one, x});
  });
  t.Add("IsInf", 10, {"isinf"}, IsInf);

  // Clip: one clip op when both bounds are 0-d (the op's form: one pass
  // over the data), else maximum and/or minimum; the same values either way
  // (min(max(x, lo), hi): hi wins when lo > hi, NaN stays). Bounds from
  // attributes before opset 11, optional inputs since.
  auto clip = [](ConvertContext& c, std::optional<Expr> lo,
                 std::optional<Expr> hi) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr y, c.Input(0));
    auto scalar = [](const std::optional<Expr>& e) {
      auto* t = *e ? As<TensorTypeNode>((*e)->type()) : nullptr;
      return t && t->ndim() == 0;
    };
    if (lo && hi && scalar(lo) && scalar(hi)) return c.One("clip", {y, *lo, *hi});
    if (lo) {
      PLIR_ASSIGN_OR_RETURN(y, c.Call("maximum", {y, *lo}));
    }
    if (hi) {
      PLIR_ASSIGN_OR_RETURN(y, c.Call("minimum", {y, *hi}));
    }
    return Outputs{y};
  };
  t.Add("Clip", 6, {"clip", "maximum", "minimum"}, [clip](ConvertContext& c) -> StatusOr<Outputs> {
    DataType dt = c.InputDtype(0);
    PLIR_ASSIGN_OR_RETURN(Expr lo, c.Scalar(c.AttrFloat("min", -3.402823466e+38f), dt));
    PLIR_ASSIGN_OR_RETURN(Expr hi, c.Scalar(c.AttrFloat("max", 3.402823466e+38f), dt));
    return clip(c, lo, hi);
  });
  t.Add("Clip", 11, {"clip", "maximum", "minimum"}, [clip](ConvertContext& c) -> StatusOr<Outputs> {
    std::optional<Expr> lo, hi;
    if (c.HasInput(1)) {
      PLIR_ASSIGN_OR_RETURN(Expr e, c.Input(1));
      lo = e;
    }
    if (c.HasInput(2)) {
      PLIR_ASSIGN_OR_RETURN(Expr e, c.Input(2));
      hi = e;
    }
    return clip(c, lo, hi);
  });

  // Shrink with bias = lambd (soft shrinkage): relu(x - l) - relu(-x - l).
  t.Add("Shrink", 9, {"nn.relu", "subtract", "add", "less", "greater", "where"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          double lambd = c.AttrFloat("lambd", 0.5f), bias = c.AttrFloat("bias", 0.0f);
          if (lambd != bias) return ShrinkSelect(c, lambd, bias);
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          DataType dt = c.InputDtype(0);
          PLIR_ASSIGN_OR_RETURN(Expr l, c.Scalar(lambd, dt));
          PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, dt));
          PLIR_ASSIGN_OR_RETURN(Expr a, c.Call("subtract", {x, l}));
          PLIR_ASSIGN_OR_RETURN(Expr pos, c.Call("nn.relu", {a}));
          PLIR_ASSIGN_OR_RETURN(Expr nx, c.Call("subtract", {zero, x}));
          PLIR_ASSIGN_OR_RETURN(Expr b, c.Call("subtract", {nx, l}));
          PLIR_ASSIGN_OR_RETURN(Expr neg, c.Call("nn.relu", {b}));
          return c.One("subtract", {pos, neg});
        });

  // Activations.
  t.Add("Relu", 6, {"nn.relu"}, Unary("nn.relu"));
  // relu(x) - alpha * relu(-x): exact for both signs.
  t.Add("LeakyRelu", 6, {"nn.relu", "subtract", "multiply"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, c.InputDtype(0)));
          PLIR_ASSIGN_OR_RETURN(Expr pos, c.Call("nn.relu", {x}));
          PLIR_ASSIGN_OR_RETURN(Expr negx, c.Call("subtract", {zero, x}));
          PLIR_ASSIGN_OR_RETURN(Expr neg, c.Call("nn.relu", {negx}));
          PLIR_ASSIGN_OR_RETURN(Expr sn, Scale(c, neg, c.AttrFloat("alpha", 0.01f)));
          return c.One("subtract", {pos, sn});
        });
  t.Add("PRelu", 7, {"nn.relu", "subtract", "multiply", "reshape"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          PLIR_ASSIGN_OR_RETURN(Expr slope, c.Input(1));
          // Models converted from opset 6 give a per-channel slope [C]: as [C, 1, ...].
          const TensorTypeNode* xt = c.InputType(0);
          const TensorTypeNode* st = c.InputType(1);
          if (xt && st && xt->IsStatic() && st->IsStatic() && st->ndim() == 1 && xt->ndim() > 2 &&
              st->shape()[0].value == xt->shape()[1].value &&
              st->shape()[0].value != xt->shape().back().value) {
            std::vector<int64_t> shape(static_cast<size_t>(xt->ndim() - 1), 1);
            shape[0] = st->shape()[0].value;
            PLIR_ASSIGN_OR_RETURN(
                slope, c.Call("reshape", {slope}, MakeAttrs({{Symbol("shape"), IntList(shape)}})));
          }
          PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, c.InputDtype(0)));
          PLIR_ASSIGN_OR_RETURN(Expr pos, c.Call("nn.relu", {x}));
          PLIR_ASSIGN_OR_RETURN(Expr negx, c.Call("subtract", {zero, x}));
          PLIR_ASSIGN_OR_RETURN(Expr neg, c.Call("nn.relu", {negx}));
          PLIR_ASSIGN_OR_RETURN(Expr sn, c.Call("multiply", {neg, slope}));
          return c.One("subtract", {pos, sn});
        });
  // max(0, min(1, alpha * x + beta)) as clip's replacement: relu twice.
  t.Add("HardSigmoid", 6, {"nn.relu", "subtract", "multiply", "add"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          DataType dt = c.InputDtype(0);
          PLIR_ASSIGN_OR_RETURN(Expr ax, Scale(c, x, c.AttrFloat("alpha", 0.2f)));
          PLIR_ASSIGN_OR_RETURN(Expr beta, c.Scalar(c.AttrFloat("beta", 0.5f), dt));
          PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, dt));
          PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("add", {ax, beta}));
          PLIR_ASSIGN_OR_RETURN(Expr r, c.Call("nn.relu", {y}));        // max(0, y)
          PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {one, r}));  // 1 - max(0, y)
          PLIR_ASSIGN_OR_RETURN(Expr rd, c.Call("nn.relu", {d}));       // max(0, 1 - max(0, y))
          return c.One("subtract", {one, rd});                          // min(1, max(0, y))
        });
  t.Add("Softsign", 1, {"abs", "add", "divide"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, c.InputDtype(0)));
    PLIR_ASSIGN_OR_RETURN(Expr a, c.Call("abs", {x}));
    PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("add", {a, one}));
    return c.One("divide", {x, d});
  });
  t.Add("Softplus", 1, {"exp", "log", "add"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, c.InputDtype(0)));
    PLIR_ASSIGN_OR_RETURN(Expr e, c.Call("exp", {x}));
    PLIR_ASSIGN_OR_RETURN(Expr s, c.Call("add", {e, one}));
    return c.One("log", {s});
  });
  // Elu: relu(x) - alpha * relu(1 - exp(x))  (x < 0: alpha * (exp(x) - 1)).
  t.Add("Celu", 12, {"nn.celu"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    return c.One("nn.celu", {x},
                 MakeAttrs({{Symbol("alpha"), AttrValue::Float(c.AttrFloat("alpha", 1.0f))}}));
  });
  t.Add("Elu", 6, {"nn.relu", "exp", "subtract", "multiply"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, c.InputDtype(0)));
          PLIR_ASSIGN_OR_RETURN(Expr pos, c.Call("nn.relu", {x}));
          PLIR_ASSIGN_OR_RETURN(Expr e, c.Call("exp", {x}));
          PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {one, e}));
          PLIR_ASSIGN_OR_RETURN(Expr r, c.Call("nn.relu", {d}));
          PLIR_ASSIGN_OR_RETURN(Expr s, Scale(c, r, c.AttrFloat("alpha", 1.0f)));
          return c.One("subtract", {pos, s});
        });
  t.Add("Selu", 6, {"nn.relu", "exp", "subtract", "multiply"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, c.InputDtype(0)));
          double alpha = c.AttrFloat("alpha", 1.67326319217681884765625f);
          double gamma = c.AttrFloat("gamma", 1.05070102214813232421875f);
          PLIR_ASSIGN_OR_RETURN(Expr pos, c.Call("nn.relu", {x}));
          PLIR_ASSIGN_OR_RETURN(Expr e, c.Call("exp", {x}));
          PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {one, e}));
          PLIR_ASSIGN_OR_RETURN(Expr r, c.Call("nn.relu", {d}));
          PLIR_ASSIGN_OR_RETURN(Expr s, Scale(c, r, alpha));
          PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("subtract", {pos, s}));
          PLIR_ASSIGN_OR_RETURN(Expr out, Scale(c, y, gamma));
          return Outputs{out};
        });
  t.Add("ThresholdedRelu", 10, {"greater", "astype", "multiply"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          PLIR_ASSIGN_OR_RETURN(Expr a, c.Scalar(c.AttrFloat("alpha", 1.0f), c.InputDtype(0)));
          PLIR_ASSIGN_OR_RETURN(Expr m, c.Call("greater", {x, a}));
          PLIR_ASSIGN_OR_RETURN(Expr mf, c.Cast(m, c.InputDtype(0)));
          return c.One("multiply", {x, mf});
        });
  t.Add("HardSwish", 14, {"nn.relu", "subtract", "multiply", "add"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          DataType dt = c.InputDtype(0);
          PLIR_ASSIGN_OR_RETURN(Expr ax, Scale(c, x, 1.0 / 6));
          PLIR_ASSIGN_OR_RETURN(Expr beta, c.Scalar(0.5, dt));
          PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, dt));
          PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("add", {ax, beta}));
          PLIR_ASSIGN_OR_RETURN(Expr r, c.Call("nn.relu", {y}));
          PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("subtract", {one, r}));
          PLIR_ASSIGN_OR_RETURN(Expr rd, c.Call("nn.relu", {d}));
          PLIR_ASSIGN_OR_RETURN(Expr hs, c.Call("subtract", {one, rd}));
          return c.One("multiply", {x, hs});
        });
}

}  // namespace plir::onnx_import
