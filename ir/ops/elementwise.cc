// Elementwise unary ops: activations, math functions, rounding, predicates,
// clip, dtype conversion. (Binary arithmetic, comparisons and logic are in
// binary.cc.)
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

StatusOr<Type> InferAstype(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg("astype", args, 0));
  PLIR_ASSIGN_OR_RETURN(DataType dt, DTypeAttr("astype", attrs, DataType::kUnknown));
  if (!x) return UnknownTensor(dt);
  if (!x->has_shape()) return TensorTypeNode::MakeRank(x->ndim(), dt);
  return TensorTypeNode::Make(x->shape(), dt);
}

// clip(x, min, max): min and max are 0-d tensors of x's dtype (an absent
// bound of ONNX's Clip is the dtype's lowest or highest value).
StatusOr<Type> InferClip(const Args& args, const Attrs&, TypeSpan) {
  const std::string op = "clip";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  PLIR_RETURN_IF_ERROR(CheckDType(op, x, DTypeClass::kNumeric));
  for (size_t i = 1; i < args.size(); ++i) {
    PLIR_ASSIGN_OR_RETURN(auto b, TensorArg(op, args, i));
    if (!b) continue;
    if (b->ndim() > 0)
      return InvalidArgument("clip: bound " + std::to_string(i) + " must be a 0-d tensor, got " +
                             ShapeStr(b));
    if (x) PLIR_RETURN_IF_ERROR(SameDType(op, x, b).status());
  }
  if (!x) return UnknownTensor();
  return Type(x);
}

struct UnaryOp {
  const char* name;
  DTypeClass dtypes;
  const char* desc;
  const char* onnx;
};

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  Add(r, Def(
             "nn.relu", Onnx("max(x, 0) elementwise", "Relu"), 1, 1,
             [](const Args& a, const Attrs&, TypeSpan) { return InferUnarySame("nn.relu", a); }, {},
             true, OpPattern::kElemWise));
  AttrSpec dtype_req{"dtype", AttrKind::kString, true, std::nullopt};
  Add(r, Def("astype", Onnx("elementwise conversion to `dtype`", "Cast"), 1, 1, InferAstype,
             {dtype_req}, true, OpPattern::kElemWise));
  const UnaryOp unary[] = {
      {"abs", DTypeClass::kNumeric, "|x|", "Abs"},
      {"negative", DTypeClass::kNumeric, "-x", "Neg"},
      {"sign", DTypeClass::kNumeric, "-1, 0 or 1 by the sign of x (NaN stays NaN)", "Sign"},
      {"square", DTypeClass::kNumeric, "x * x", "-"},
      {"ceil", DTypeClass::kNumeric, "the smallest integer >= x (integers unchanged)", "Ceil"},
      {"floor", DTypeClass::kNumeric, "the largest integer <= x (integers unchanged)", "Floor"},
      {"round", DTypeClass::kNumeric, "x rounded to the nearest integer, halves to even", "Round"},
      {"trunc", DTypeClass::kNumeric, "x rounded toward zero", "-"},
      {"exp", DTypeClass::kFloat, "e^x", "Exp"},
      {"log", DTypeClass::kFloat, "natural logarithm", "Log"},
      {"sqrt", DTypeClass::kFloat, "square root", "Sqrt"},
      {"rsqrt", DTypeClass::kFloat, "1 / sqrt(x)", "-"},
      {"sin", DTypeClass::kFloat, "sine", "Sin"},
      {"cos", DTypeClass::kFloat, "cosine", "Cos"},
      {"tan", DTypeClass::kFloat, "tangent", "Tan"},
      {"asin", DTypeClass::kFloat, "arc sine", "Asin"},
      {"acos", DTypeClass::kFloat, "arc cosine", "Acos"},
      {"atan", DTypeClass::kFloat, "arc tangent", "Atan"},
      {"sinh", DTypeClass::kFloat, "hyperbolic sine", "Sinh"},
      {"cosh", DTypeClass::kFloat, "hyperbolic cosine", "Cosh"},
      {"tanh", DTypeClass::kFloat, "hyperbolic tangent", "Tanh"},
      {"asinh", DTypeClass::kFloat, "inverse hyperbolic sine", "Asinh"},
      {"acosh", DTypeClass::kFloat, "inverse hyperbolic cosine", "Acosh"},
      {"atanh", DTypeClass::kFloat, "inverse hyperbolic tangent", "Atanh"},
      {"erf", DTypeClass::kFloat, "the error function", "Erf"},
      {"sigmoid", DTypeClass::kFloat, "1 / (1 + e^-x)", "Sigmoid"},
      {"nn.gelu", DTypeClass::kFloat, "x * (1 + erf(x / sqrt(2))) / 2", "Gelu (approximate=none)"},
      {"nn.gelu_tanh", DTypeClass::kFloat, "the tanh approximation of gelu",
       "Gelu (approximate=tanh)"},
      {"nn.silu", DTypeClass::kFloat, "x * sigmoid(x)", "-"},
      {"bitwise_not", DTypeClass::kIntBool, "~x (bool: not x)", "BitwiseNot"},
  };
  for (const UnaryOp& u : unary)
    Add(r, Def(u.name, Onnx(std::string("elementwise ") + u.desc, u.onnx), 1, 1,
               UnaryInfer(u.name, u.dtypes), {}, true, OpPattern::kElemWise));
  Add(r, Def("logical_not", Onnx("elementwise not x (bool result; nonzero is true)", "Not"), 1, 1,
             UnaryInfer("logical_not", DTypeClass::kAny, DataType::kBool), {}, true,
             OpPattern::kElemWise));
  Add(r, Def("isnan", Onnx("elementwise: x is NaN (bool result)", "IsNaN"), 1, 1,
             UnaryInfer("isnan", DTypeClass::kNumeric, DataType::kBool), {}, true,
             OpPattern::kElemWise));
  Add(r, Def("isfinite", Onnx("elementwise: x is neither infinite nor NaN (bool result)", "-"), 1,
             1, UnaryInfer("isfinite", DTypeClass::kNumeric, DataType::kBool), {}, true,
             OpPattern::kElemWise));
  Add(r,
      Def("isinf",
          Onnx("elementwise: x is infinite (bool result); detect_negative / detect_positive (PLIR "
               "extensions, ONNX's attributes) select the signs",
               "IsInf"),
          1, 1, UnaryInfer("isinf", DTypeClass::kNumeric, DataType::kBool),
          {{"detect_negative", AttrKind::kBool, false, AttrValue::Bool(true)},
           {"detect_positive", AttrKind::kBool, false, AttrValue::Bool(true)}},
          true, OpPattern::kElemWise));
  Add(r, Def("nn.leakyrelu", Onnx("x if x >= 0 else alpha * x", "LeakyRelu"), 1, 1,
             UnaryInfer("nn.leakyrelu", DTypeClass::kFloat),
             {{"alpha", AttrKind::kFloat, false, AttrValue::Float(0.01)}}, true,
             OpPattern::kElemWise));
  Add(r,
      Def("nn.softplus", Onnx("log(1 + e^(beta x)) / beta; x where beta x > threshold", "Softplus"),
          1, 1, UnaryInfer("nn.softplus", DTypeClass::kFloat),
          {{"beta", AttrKind::kFloat, false, AttrValue::Float(1.0)},
           {"threshold", AttrKind::kFloat, false, AttrValue::Float(20.0)}},
          true, OpPattern::kElemWise));
  struct Act {
    const char* name;
    const char* desc;
    const char* onnx;
    std::vector<AttrSpec> attrs;
  };
  auto F = [](const char* k, double v) {
    return AttrSpec{k, AttrKind::kFloat, false, AttrValue::Float(v)};
  };
  const Act acts[] = {
      {"nn.elu", "x if x > 0 else alpha * (e^x - 1)", "Elu", {F("alpha", 1.0)}},
      {"nn.selu",
       "gamma * (x if x > 0 else alpha * (e^x - 1))",
       "Selu",
       {F("alpha", 1.6732632423543772), F("gamma", 1.0507009873554805)}},
      {"nn.celu", "max(0, x) + min(0, alpha * (e^(x / alpha) - 1))", "Celu", {F("alpha", 1.0)}},
      {"nn.hardsigmoid",
       "max(0, min(1, alpha * x + beta))",
       "HardSigmoid",
       {F("alpha", 0.2), F("beta", 0.5)}},
      {"nn.hardswish", "x * max(0, min(1, x / 6 + 1 / 2))", "HardSwish", {}},
      {"nn.softsign", "x / (1 + |x|)", "Softsign", {}},
      {"nn.mish", "x * tanh(softplus(x))", "Mish", {}},
      {"nn.thresholded_relu", "x if x > alpha else 0", "ThresholdedRelu", {F("alpha", 1.0)}},
      {"nn.relu6", "min(max(x, 0), 6)", "-", {}},
  };
  for (const Act& a : acts)
    Add(r, Def(a.name,
               Onnx(std::string("elementwise ") + a.desc + " (a PLIR extension: not a Relax op)",
                    a.onnx),
               1, 1, UnaryInfer(a.name, DTypeClass::kFloat), a.attrs, true, OpPattern::kElemWise));
  Add(r, Def("clip",
             Onnx("min(max(x, min), max) elementwise: clip(x, min, max), bounds 0-d tensors of x's "
                  "dtype",
                  "Clip"),
             3, 3, InferClip, {}, true, OpPattern::kElemWise));
}

}  // namespace plir::internal
