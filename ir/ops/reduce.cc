// Reductions (sum, mean, max, min, prod, variance, std), arg-reductions
// (argmax, argmin), scans (cumsum, cumprod) and argsort (an arg-op along
// one axis, as the scans are).
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

TypeInferFn InferReduce(std::string op, DTypeClass c) {
  return [op, c](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    PLIR_RETURN_IF_ERROR(CheckDType(op, a, c));
    return ReduceType(op, a, attrs, a ? a->dtype() : DataType::kUnknown);
  };
}

TypeInferFn InferArgReduce(std::string op) {
  return [op](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    PLIR_RETURN_IF_ERROR(CheckDType(op, a, DTypeClass::kAny));
    return ReduceType(op, a, attrs, DataType::kInt64);
  };
}

// cumsum(x, axis=a, dtype=d, exclusive=e, reverse=r): x's shape (without
// axis, x flattened to 1-D), dtype d or x's.
TypeInferFn InferScan(std::string op) {
  return [op](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    PLIR_RETURN_IF_ERROR(CheckDType(op, a, DTypeClass::kNumeric));
    DataType in = a ? a->dtype() : DataType::kUnknown;
    DataType dt = in;
    if (attrs.Get("dtype")) {
      PLIR_ASSIGN_OR_RETURN(dt, DTypeAttr(op, attrs, in));
    }
    if (!a || a->ndim() < 0) return UnknownTensor(dt);
    if (!attrs.Get("axis")) {
      if (a->IsStatic()) return TensorTypeNode::Make({Dim::Const(a->NumElements())}, dt);
      return TensorTypeNode::MakeRank(1, dt);
    }
    if (a->ndim() == 0) return InvalidArgument(op + ": axis given for a 0-d tensor");
    PLIR_RETURN_IF_ERROR(NormalizeAxis(op, attrs.Get("axis")->as_int(), a->ndim()).status());
    return WithDType(a, dt);
  };
}

// argsort(x, axis=a, descending=d): x's shape, int64.
StatusOr<Type> InferArgsort(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "argsort";
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
  PLIR_RETURN_IF_ERROR(CheckDType(op, a, DTypeClass::kNumeric));
  if (!a || a->ndim() < 0) return UnknownTensor(DataType::kInt64);
  if (a->ndim() == 0)
    return InvalidArgument(op + " expects a tensor of rank >= 1, got " + ShapeStr(a));
  PLIR_RETURN_IF_ERROR(NormalizeAxis(op, IntAttr(attrs, "axis", -1), a->ndim()).status());
  return WithDType(a, DataType::kInt64);
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  AttrSpec axes{"axis", AttrKind::kIntList, false, std::nullopt};
  AttrSpec keep{"keepdims", AttrKind::kBool, false, AttrValue::Bool(false)};
  struct R {
    const char* name;
    DTypeClass c;
    const char* desc;
    const char* onnx;
  };
  const R reductions[] = {
      {"sum", DTypeClass::kNumeric, "sum (integers: exact, overflow is an error)", "ReduceSum"},
      {"mean", DTypeClass::kNumeric, "mean (integers: truncated toward zero)", "ReduceMean"},
      {"max", DTypeClass::kAny, "maximum (an empty reduction: the dtype's lowest value, -inf)",
       "ReduceMax"},
      {"min", DTypeClass::kAny, "minimum (an empty reduction: the dtype's highest value, inf)",
       "ReduceMin"},
      {"prod", DTypeClass::kNumeric, "product (integers: exact, overflow is an error)",
       "ReduceProd"},
      {"variance", DTypeClass::kFloat, "population variance", "-"},
      {"std", DTypeClass::kFloat, "population standard deviation", "-"},
  };
  for (const R& x : reductions)
    Add(r, Def(x.name,
               Onnx(std::string(x.desc) +
                        " over `axis` (default: all axes); keepdims keeps them as size 1",
                    x.onnx),
               1, 1, InferReduce(x.name, x.c), {axes, keep}, true, OpPattern::kCommReduce));
  AttrSpec axis1{"axis", AttrKind::kInt, false, std::nullopt};
  AttrSpec last{"select_last_index", AttrKind::kBool, false, AttrValue::Bool(false)};
  Add(r, Def("argmax",
             Onnx("int64 index of the maximum along `axis` (default: of the flattened tensor); the "
                  "first one, or "
                  "the last with select_last_index (a PLIR extension); NaN counts as the maximum",
                  "ArgMax"),
             1, 1, InferArgReduce("argmax"), {axis1, keep, last}, true, OpPattern::kCommReduce));
  Add(r, Def("argmin",
             Onnx("int64 index of the minimum along `axis` (default: of the flattened tensor); the "
                  "first one, or "
                  "the last with select_last_index (a PLIR extension); NaN counts as the minimum",
                  "ArgMin"),
             1, 1, InferArgReduce("argmin"), {axis1, keep, last}, true, OpPattern::kCommReduce));
  std::vector<AttrSpec> scan = {axis1,
                                {"dtype", AttrKind::kString, false, std::nullopt},
                                {"exclusive", AttrKind::kBool, false, AttrValue::Bool(false)},
                                {"reverse", AttrKind::kBool, false, AttrValue::Bool(false)}};
  Add(r, Def("cumsum",
             Onnx("running sum along `axis` (default: of the flattened tensor); exclusive leaves "
                  "the element "
                  "out, reverse (a PLIR extension) runs from the end",
                  "CumSum"),
             1, 1, InferScan("cumsum"), scan, true, OpPattern::kOpaque));
  Add(r, Def("cumprod",
             Onnx("running product along `axis` (default: of the flattened tensor); exclusive and "
                  "reverse as "
                  "cumsum",
                  "-"),
             1, 1, InferScan("cumprod"), scan, true, OpPattern::kOpaque));
  Add(r, Def("argsort",
             Onnx("int64 indices that sort x along `axis` (default -1), ascending or descending; "
                  "stable (equal elements keep their order), NaN above every number",
                  "TopK (with gather_elements)"),
             1, 1, InferArgsort,
             {{"axis", AttrKind::kInt, false, AttrValue::Int(-1)},
              {"descending", AttrKind::kBool, false, AttrValue::Bool(false)}},
             true, OpPattern::kOpaque));
}

}  // namespace plir::internal
