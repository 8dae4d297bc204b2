// Linear algebra: NumPy matmul, einsum.
#include "ir/ops/einsum_subscripts.h"
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

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

// einsum((a, b, ...), subscripts="..."): the operands as a tuple.
StatusOr<Type> InferEinsum(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "einsum";
  const Type& t = args[0]->type();
  if (t->kind() == NodeKind::kObjectType) return UnknownTensor();
  auto* tup = As<TupleTypeNode>(t);
  if (!tup || tup->fields().empty())
    return InvalidArgument("einsum expects a non-empty tuple of tensors, got " + TypeToString(t));
  std::vector<const TensorTypeNode*> ops;
  DataType dt = DataType::kUnknown;
  bool shapes = true;
  std::vector<int> ranks;
  for (const Type& f : tup->fields()) {
    auto* ft = As<TensorTypeNode>(f);
    if (!ft) {
      if (f->kind() != NodeKind::kObjectType)
        return InvalidArgument("einsum expects a tuple of tensors, got " + TypeToString(t));
      return UnknownTensor(dt);
    }
    if (ft->dtype() != DataType::kUnknown) {
      if (dt != DataType::kUnknown && dt != ft->dtype())
        return InvalidArgument("einsum: the operands' dtypes differ");
      dt = ft->dtype();
    }
    if (ft->ndim() < 0) return UnknownTensor(dt);
    shapes = shapes && ft->has_shape();
    ranks.push_back(ft->ndim());
    ops.push_back(ft);
  }
  PLIR_ASSIGN_OR_RETURN(EinsumSpec spec, ParseEinsum(StringAttr(attrs, "subscripts", ""), ranks));
  if (!shapes) return TensorTypeNode::MakeRank(static_cast<int>(spec.output.size()), dt);
  std::vector<std::optional<Dim>> size(spec.num_labels);
  for (size_t k = 0; k < ops.size(); ++k)
    for (size_t i = 0; i < spec.inputs[k].size(); ++i) {
      const Dim& d = ops[k]->shape()[i];
      auto& s = size[spec.inputs[k][i]];
      if (!s || (s->is_const() && s->value == 1)) {
        s = d;
        continue;
      }
      if (d.is_const() && d.value == 1) continue;
      if (s->is_const() && d.is_const() && s->value != d.value)
        return InvalidArgument("einsum: a label has sizes " + std::to_string(s->value) + " and " +
                               std::to_string(d.value));
      if (*s != d) return TensorTypeNode::MakeRank(static_cast<int>(spec.output.size()), dt);
    }
  std::vector<Dim> out;
  for (int l : spec.output) out.push_back(*size[l]);
  return TensorTypeNode::Make(std::move(out), dt);
}

}  // namespace

void RegisterLinalgOps(OpRegistry& r) {
  Add(r, Def("matmul", Onnx("NumPy matmul", "MatMul, Gemm (with permute_dims, multiply and add)"),
             2, 2, InferMatmul, {}, true, OpPattern::kOutEWiseFusable));
  Add(r, Def("einsum",
             Onnx("Einstein summation: einsum((a, b, ...), subscripts=\"ij,jk->ik\"); ellipsis "
                  "broadcast, implicit "
                  "output (the labels used once, sorted), repeated labels take diagonals",
                  "Einsum"),
             1, 1, InferEinsum, {{"subscripts", AttrKind::kString, true, std::nullopt}}, true,
             OpPattern::kOpaque));
}

}  // namespace plir::internal
