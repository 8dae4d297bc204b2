// Creation ops: zeros, ones, full, arange.
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

// zeros / ones (shape=[...], dtype=...): a tensor of that shape; full(v, ...)
// the same filled with the scalar v (dtype default: v's).
TypeInferFn InferCreation(std::string op, bool /*has_fill*/) {
  return [op](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    std::vector<int64_t> shape;
    attrs.Get("shape")->GetIntList(&shape);
    std::vector<Dim> dims;
    for (int64_t v : shape) {
      if (v < 0) return InvalidArgument(op + ": negative dimension " + std::to_string(v));
      dims.push_back(Dim::Const(v));
    }
    DataType def = DataType::kUnknown;
    if (!args.empty()) {
      PLIR_ASSIGN_OR_RETURN(auto fill, TensorArg(op, args, 0));
      if (fill && fill->ndim() > 0)
        return InvalidArgument(op + ": the fill value must be a scalar (0-d) tensor, got " +
                               ShapeStr(fill));
      if (fill) def = fill->dtype();
    }
    PLIR_ASSIGN_OR_RETURN(DataType dt, DTypeAttr(op, attrs, def));
    return TensorTypeNode::Make(std::move(dims), dt);
  };
}

// arange(start=, end=, step=, dtype=): [start, end) by step, as NumPy.
StatusOr<Type> InferArange(const Args&, const Attrs& attrs, TypeSpan) {
  auto num = [&](const char* k, double def) {
    const AttrValue* v = attrs.Get(k);
    if (!v) return def;
    return v->kind() == AttrValue::Kind::kInt ? static_cast<double>(v->as_int()) : v->as_float();
  };
  double start = num("start", 0), end = num("end", 0), step = num("step", 1);
  if (step == 0) return InvalidArgument("arange: step must not be 0");
  double n = std::ceil((end - start) / step);
  if (n < 0) n = 0;
  PLIR_ASSIGN_OR_RETURN(DataType dt, DTypeAttr("arange", attrs, DataType::kInt64));
  return TensorTypeNode::Make({Dim::Const(static_cast<int64_t>(n))}, dt);
}

}  // namespace

void RegisterCreationOps(OpRegistry& r) {
  // Creation ops are elementwise, arange injective (Relay's TOpPattern for them).
  AttrSpec shape{"shape", AttrKind::kIntList, true, std::nullopt};
  AttrSpec dtype_req{"dtype", AttrKind::kString, true, std::nullopt};
  AttrSpec dtype_opt{"dtype", AttrKind::kString, false, std::nullopt};
  Add(r, Def("zeros", "a tensor of zeros: zeros(shape=[...], dtype=...)", 0, 0,
             InferCreation("zeros", false), {shape, dtype_req}, true, OpPattern::kElemWise));
  Add(r, Def("ones", "a tensor of ones: ones(shape=[...], dtype=...)", 0, 0,
             InferCreation("ones", false), {shape, dtype_req}, true, OpPattern::kElemWise));
  Add(r, Def("full", "a tensor filled with a scalar: full(v, shape=[...], dtype=...)", 1, 1,
             InferCreation("full", true), {shape, dtype_opt}, true, OpPattern::kElemWise));
  Add(r, Def("arange", "[start, end) by step (NumPy arange)", 0, 0, InferArange,
             {{"start", AttrKind::kFloat, false, AttrValue::Float(0)},
              {"end", AttrKind::kFloat, true, std::nullopt},
              {"step", AttrKind::kFloat, false, AttrValue::Float(1)},
              {"dtype", AttrKind::kString, false, std::nullopt}},
             true, OpPattern::kInjective));
}

}  // namespace plir::internal
