// Elementwise ops: arithmetic with NumPy broadcasting, unary activations, dtype conversion.
#include "ir/ops/infer_util.h"
#include "ir/ops/families.h"

namespace plir::internal {
namespace {

StatusOr<Type> InferAstype(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg("astype", args, 0));
  PLIR_ASSIGN_OR_RETURN(DataType dt, DTypeAttr("astype", attrs, DataType::kUnknown));
  if (!x) return UnknownTensor(dt);
  if (!x->has_shape()) return TensorTypeNode::MakeRank(x->ndim(), dt);
  return TensorTypeNode::Make(x->shape(), dt);
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  for (const char* name : {"add", "subtract", "multiply", "divide"})
    Add(r, Def(name, std::string("elementwise ") + name + " with NumPy broadcasting", 2, 2,
               Elementwise(name), {}, true, OpPattern::kBroadcast));
  Add(r, Def("nn.relu", "max(x, 0) elementwise", 1, 1,
             [](const Args& a, const Attrs&, TypeSpan) {
               return InferUnarySame("nn.relu", a);
             },
             {}, true, OpPattern::kElemWise));
  AttrSpec dtype_req{"dtype", AttrKind::kString, true, std::nullopt};
  Add(r, Def("astype", "elementwise conversion to `dtype`", 1, 1, InferAstype, {dtype_req}, true,
               OpPattern::kElemWise));
}

}  // namespace plir::internal
