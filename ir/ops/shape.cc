// Shape values at run time (and in kernels: a 1-D int64 tensor): shape_of, shape_to_tensor,
// tensor_to_shape.
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

// shape_to_tensor(s): the shape value s as a 1-D int64 tensor.
StatusOr<Type> InferShapeToTensor(const Args& args, const Attrs&, TypeSpan) {
  const Type& t = args[0]->type();
  if (t->kind() == NodeKind::kObjectType) return TensorTypeNode::MakeRank(1, DataType::kInt64);
  auto* st = As<ShapeTypeNode>(t);
  if (!st) return InvalidArgument("shape_to_tensor expects a shape value, got " + TypeToString(t));
  if (st->ndim() < 0) return TensorTypeNode::MakeRank(1, DataType::kInt64);
  return TensorTypeNode::Make({Dim::Const(st->ndim())}, DataType::kInt64);
}

// shape_of(x): the shape of tensor x as a shape value.
StatusOr<Type> InferShapeOf(const Args& args, const Attrs&, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("shape_of", args, 0));
  if (!a) return ShapeTypeNode::MakeRank(-1);
  if (a->has_shape()) return ShapeTypeNode::Make(a->shape());
  return ShapeTypeNode::MakeRank(a->ndim());
}

// tensor_to_shape(t): a 1-D integer tensor's values as a shape value (its
// rank is t's length when that is a constant).
StatusOr<Type> InferTensorToShape(const Args& args, const Attrs&, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("tensor_to_shape", args, 0));
  if (!a) return ShapeTypeNode::MakeRank(-1);
  if (a->ndim() >= 0 && a->ndim() != 1)
    return InvalidArgument("tensor_to_shape expects a 1-D tensor, got " + ShapeStr(a));
  if (a->dtype() != DataType::kUnknown && !IsIntDType(a->dtype()))
    return InvalidArgument("tensor_to_shape expects an integer tensor, got " + ShapeStr(a));
  if (a->has_shape() && a->shape()[0].is_const())
    return ShapeTypeNode::MakeRank(static_cast<int>(a->shape()[0].value));
  return ShapeTypeNode::MakeRank(-1);
}

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  Add(r, Def("shape_to_tensor", "a shape value as a 1-D int64 tensor", 1, 1, InferShapeToTensor));
  // Shape values at run time (and in kernels: a 1-D int64 tensor).
  Add(r, Def("shape_of", "the shape of a tensor as a shape value", 1, 1, InferShapeOf));
  Add(r, Def("tensor_to_shape", "a 1-D integer tensor's values as a shape value", 1, 1,
             InferTensorToShape));
}

}  // namespace plir::internal
