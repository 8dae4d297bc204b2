// Linear algebra: NumPy matmul.
#include "ir/ops/infer_util.h"
#include "ir/ops/families.h"

namespace plir::internal {
namespace {

StatusOr<Type> InferMatmul(const Args& args, const Attrs&, TypeSpan) {
  const std::string op = "matmul";
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
  PLIR_ASSIGN_OR_RETURN(auto b, TensorArg(op, args, 1));
  if (!a || !b) return UnknownTensor(a ? a->dtype() : b ? b->dtype() : DataType::kUnknown);
  PLIR_ASSIGN_OR_RETURN(DataType dt, SameDType(op, a, b));
  if (a->ndim() == 0 || b->ndim() == 0)
    return InvalidArgument("matmul: operands must have rank at least 1");
  if (!a->has_shape() || !b->has_shape()) {
    if (a->ndim() < 0 || b->ndim() < 0) return UnknownTensor(dt);
    int nd = std::max(a->ndim(), b->ndim());
    if (a->ndim() == 1) --nd;
    if (b->ndim() == 1) --nd;
    return TensorTypeNode::MakeRank(std::max(nd, 0), dt);
  }
  std::vector<Dim> x = a->shape(), y = b->shape();
  bool a_vec = x.size() == 1, b_vec = y.size() == 1;
  if (a_vec) x.insert(x.begin(), Dim::Const(1));
  if (b_vec) y.push_back(Dim::Const(1));
  const Dim& k1 = x.back();
  const Dim& k2 = y[y.size() - 2];
  if (k1.is_const() && k2.is_const() && k1.value != k2.value)
    return InvalidArgument("matmul: contraction dimensions differ: " + ShapeStr(a) + " @ " +
                           ShapeStr(b));
  // Broadcast the batch dimensions.
  std::vector<Dim> bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
  auto tx = TensorTypeNode::Make(bx, dt);
  auto ty = TensorTypeNode::Make(by, dt);
  PLIR_ASSIGN_OR_RETURN(auto batch, Broadcast(op, As<TensorTypeNode>(tx), As<TensorTypeNode>(ty)));
  int out_rank = static_cast<int>(std::max(bx.size(), by.size())) + 2 - a_vec - b_vec;
  if (!batch) return TensorTypeNode::MakeRank(out_rank, dt);
  std::vector<Dim> out = std::move(*batch);
  if (!a_vec) out.push_back(x[x.size() - 2]);
  if (!b_vec) out.push_back(y.back());
  return TensorTypeNode::Make(std::move(out), dt);
}

}  // namespace

void RegisterLinalgOps(OpRegistry& r) {
  Add(r, Def("matmul", "NumPy matmul", 2, 2, InferMatmul, {}, true, OpPattern::kOutEWiseFusable));
}

}  // namespace plir::internal
