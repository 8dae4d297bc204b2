// FoldConstant: evaluates calls of pure core ops whose arguments are all
// constants (or variables bound to constants) and replaces them by the
// resulting constant.
//
// Folded ops: every pure op that carries an evaluation kernel (`OpDef::eval`;
// among the core ops add, subtract, multiply, divide, nn.relu, nn.softmax,
// matmul, reshape, permute_dims and nn.conv2d; a plugin's op with a kernel is
// folded too). The option `max_elements` caps the size of a folded result,
// and `max_work` the multiply-adds spent on one call (the op's `OpDef::work`:
// conv2d and matmul "when small"). The kernels are the SDK's (ir/tensor.h),
// the same the interpreter runs, so folding never changes a result.
#include <unordered_map>

#include "ir/op.h"
#include "ir/tensor.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

class Folder : public ExprMutator {
 public:
  Folder(int64_t max_elements, int64_t max_work) : max_elements_(max_elements), max_work_(max_work) {}

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    if (auto* b = As<VarBindingNode>(n)) {
      if (auto* c = As<ConstantNode>(b->value())) constants_[b->var().get()] = Ref<ConstantNode>(c);
      return n;
    }
    auto* call = As<CallNode>(n);
    if (!call) return n;
    auto* op = As<OpNode>(call->callee());
    if (!op || !op->pure() || !op->def().eval) return n;
    std::vector<Tensor> args;
    for (const Expr& a : call->args()) {
      const ConstantNode* c = As<ConstantNode>(a);
      if (!c) {
        auto* v = As<VarNode>(a);
        auto it = v ? constants_.find(v) : constants_.end();
        if (it == constants_.end()) return n;
        c = it->second.get();
      }
      args.push_back(Tensor::FromConstant(*c));
    }
    auto* tt = As<TensorTypeNode>(call->type());
    if (!tt || !tt->IsStatic()) return n;
    int64_t out_elements = tt->NumElements();
    if (out_elements > max_elements_) return n;
    const OpDef& def = op->def();
    if ((def.work ? def.work(args, out_elements) : out_elements) > max_work_) return n;
    StatusOr<Tensor> r = def.eval(args, call->attrs());
    if (!r.ok()) return n;  // e.g. integer division by zero or overflow: leave it to run time
    auto c = r->ToConstant();
    if (!c.ok()) return n;
    return *c;
  }

 private:
  int64_t max_elements_, max_work_;
  std::unordered_map<const VarNode*, Ref<ConstantNode>> constants_;
};

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "FoldConstant";
  def.info.description = "evaluates pure core-op calls whose arguments are all constants";
  def.info.kind = PassKind::kFunction;
  def.info.options = {
      {"max_elements", OptionType::kInt, AttrValue::Int(1 << 16), "largest folded result, in elements"},
      {"max_work", OptionType::kInt, AttrValue::Int(1 << 22), "largest multiply-add count of one folded call"},
  };
  def.function_fn = [](const Function& f, const PassCallContext& ctx) -> StatusOr<Function> {
    return Folder(ctx.options.GetInt("max_elements"), ctx.options.GetInt("max_work")).MutateFunction(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("fold_constant", "1.0", Register)
