// A well-behaved test plugin: a module pass, a function pass, a pass with
// options, an op with type inference, and a hook that reports which
// PassRegistry it sees (to prove plugins share the host's).
#include "ir/builder.h"
#include "ir/visitor.h"
#include "passes/plugin.h"
#include "passes/registry.h"

namespace {

using namespace plir;

// Rewrites nn.relu(x) to nn.softmax(x).
class ReluToSoftmax : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* c = As<CallNode>(n);
    auto* op = c ? As<OpNode>(c->callee()) : nullptr;
    if (op && op->name() == "nn.relu") return *MakeOpCall("nn.softmax", c->args());
    return n;
  }
};

// Binds a function's non-atomic result to a variable (a tiny normalizer).
StatusOr<Function> BindResult(const Function& f, const PassCallContext&) {
  const SeqExpr& body = f->body();
  if (IsAtomic(body->result())) return f;
  std::vector<Block> blocks = body->blocks();
  Var v = VarNode::Make("result", body->result()->type());
  blocks.push_back(BindingBlockNode::Make({VarBindingNode::Make(v, body->result())}, false));
  return FunctionNode::Make(f->name(), f->params(), f->ret_type(), SeqExprNode::Make(blocks, v),
                            f->attrs());
}

Status Register(PluginHost& host) {
  PassDef relu;
  relu.info.name = "TestReluToSoftmax";
  relu.info.description = "rewrites nn.relu into nn.softmax (test plugin)";
  relu.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    return ReluToSoftmax().MutateModule(m);
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(relu)));

  PassDef bind;
  bind.info.name = "TestBindResult";
  bind.info.description = "binds each function's result to a variable (test plugin)";
  bind.info.kind = PassKind::kFunction;
  bind.info.provides_properties = {"result_bound"};
  bind.function_fn = BindResult;
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(bind)));

  PassDef opts;
  opts.info.name = "TestOptions";
  opts.info.description = "records its options as function attributes (test plugin)";
  opts.info.options = {
      {"count", OptionType::kInt, AttrValue::Int(3), "an int"},
      {"ratio", OptionType::kFloat, AttrValue::Float(0.5), "a float"},
      {"enabled", OptionType::kBool, AttrValue::Bool(true), "a bool"},
      {"label", OptionType::kString, AttrValue::String("x"), "a string"},
      {"entries", OptionType::kStringList, AttrValue::List({AttrValue::String("main")}), "names"},
  };
  opts.module_fn = [](const Module& m, const PassCallContext& c) -> StatusOr<Module> {
    Module out = m;
    for (const Item& it : m.items()) {
      auto* f = As<FunctionNode>(it);
      if (!f) continue;
      Attrs a = f->attrs()
                    .With(Symbol("count"), AttrValue::Int(c.options.GetInt("count")))
                    .With(Symbol("label"), AttrValue::String(c.options.GetString("label")));
      out = out.WithItem(FunctionNode::Make(f->name(), f->params(), f->ret_type(), f->body(), a));
    }
    return out;
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(opts)));

  OpDef square;
  square.name = "test.square";
  square.description = "x * x";
  square.min_args = square.max_args = 1;
  square.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    return args[0]->type();
  };
  return host.RegisterOp(std::move(square));
}

}  // namespace

// Returns the address of the registry this plugin's code sees.
extern "C" __attribute__((visibility("default"))) const void* test_good_registry_address() {
  return &plir::PassRegistry::Global();
}
extern "C" __attribute__((visibility("default"))) const void* test_good_op_registry_address() {
  return &plir::OpRegistry::Global();
}

PLIR_PLUGIN("test_good", "1.2.3", Register)
