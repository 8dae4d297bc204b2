// A third-party plugin, written as a new user would: an op of its own,
// `example.matmul_tn` (matmul(permute_dims(a), b) for a matrix a, in one
// call), and a pass, FuseMatmulTranspose, that rewrites
// `%t = permute_dims(%a); %m = matmul(%t, %b)` into
// `%m = example.matmul_tn(%a, %b)`.
//
// The pass is one RewritePattern; the SDK's greedy driver does the rest:
// MatchOperand looks through %t to its permute_dims, the driver refuses a
// replacement that would name a dataflow variable outside its block, and it
// erases the permute_dims once no use is left. The op's type is inferred
// from the core ops' own inference (InferOpType), not re-derived, and its
// kernel (what plir-run and `--check-execution` compute) from the core ops'
// kernels (EvalOp), so that the pass can be checked by execution
// (plir_execution_test in BUILD).
#include <vector>

#include "ir/op.h"
#include "ir/rewrite.h"
#include "kernels/op_kernels.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// True iff `t` is permute_dims of a matrix that swaps its two axes.
bool IsMatrixTranspose(const CallNode& t) {
  auto* type = As<TensorTypeNode>(t.args()[0]->type());
  if (!type || !type->has_shape() || type->shape().size() != 2) return false;
  const AttrValue* axes = t.attrs().Get("axes");
  std::vector<int64_t> a;
  return !axes || (axes->GetIntList(&a) && a == std::vector<int64_t>{1, 0});
}

class MatmulOfTranspose : public RewritePattern {
 public:
  std::string name() const override { return "MatmulOfTranspose"; }
  std::optional<Expr> MatchAndRewrite(const Expr& value, const RewriteContext& ctx) const override {
    const CallNode* matmul = MatchOpCall(value, "matmul", 2);
    if (!matmul) return std::nullopt;
    const CallNode* transpose = ctx.MatchOperand(*matmul, 0, "permute_dims");
    if (!transpose || !IsMatrixTranspose(*transpose)) return std::nullopt;
    StatusOr<Expr> fused =
        MakeOpCall("example.matmul_tn", {transpose->args()[0], matmul->args()[1]});
    if (!fused.ok()) return std::nullopt;
    return *fused;
  }
};

// matmul_tn(a, b) has the type of matmul(permute_dims(a), b).
StatusOr<Type> InferMatmulTn(ExprSpan args, const Attrs&, TypeSpan) {
  Type a[] = {args[0]->type()};
  PLIR_ASSIGN_OR_RETURN(Type at, InferOpType("permute_dims", a));
  Type operands[] = {at, args[1]->type()};
  return InferOpType("matmul", operands);
}

// matmul_tn(a, b) computes matmul(permute_dims(a), b).
StatusOr<Tensor> EvalMatmulTn(const std::vector<Tensor>& args, const Attrs&) {
  if (args.size() != 2) return InvalidArgument("example.matmul_tn takes 2 arguments");
  PLIR_ASSIGN_OR_RETURN(Tensor at, EvalOp("permute_dims", {args[0]}, Attrs()));
  return EvalOp("matmul", {at, args[1]}, Attrs());
}

Status Register(PluginHost& host) {
  OpDef op;
  op.name = "example.matmul_tn";
  op.description = "matmul(permute_dims(a), b) for a matrix a";
  op.min_args = op.max_args = 2;
  op.pattern = OpPattern::kOutEWiseFusable;  // as matmul
  op.infer = InferMatmulTn;
  op.eval = EvalMatmulTn;
  PLIR_RETURN_IF_ERROR(host.RegisterOp(std::move(op)));

  PassDef pass;
  pass.info.name = "FuseMatmulTranspose";
  pass.info.description = "rewrites matmul(permute_dims(a), b) into example.matmul_tn(a, b)";
  pass.info.kind = PassKind::kFunction;
  pass.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    MatmulOfTranspose pattern;
    const RewritePattern* patterns[] = {&pattern};
    return ApplyPatternsGreedily(f, patterns).function;
  };
  return host.RegisterPass(std::move(pass));
}

}  // namespace

PLIR_PLUGIN("matmul_transpose", "0.1.0", Register)
