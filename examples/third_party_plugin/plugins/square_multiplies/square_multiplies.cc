// A third-party plugin: registers a new op, `example.square` (x * x, with
// type inference), and a pass, SquareMultiplies, that rewrites
// `multiply(%x, %x)` into `example.square(%x)`. The op declares its pattern
// kind (elementwise), so PLIR's FuseOps fuses it like a core op.
#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

class Rewriter : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* call = As<CallNode>(n);
    auto* op = call ? As<OpNode>(call->callee()) : nullptr;
    if (!op || op->name() != "multiply") return n;
    if (call->args()[0].get() != call->args()[1].get()) return n;
    auto square = MakeOpCall("example.square", {call->args()[0]});
    return square.ok() ? Ref<Node>(*square) : n;
  }
};

Status Register(PluginHost& host) {
  OpDef square;
  square.name = "example.square";
  square.description = "x * x, elementwise";
  square.min_args = square.max_args = 1;
  square.pattern = OpPattern::kElemWise;  // FuseOps may fuse it with its neighbours
  square.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    const Type& t = args[0]->type();
    if (t->kind() != NodeKind::kTensorType && t->kind() != NodeKind::kObjectType)
      return InvalidArgument("example.square expects a tensor, got " + TypeToString(t));
    return t;
  };
  PLIR_RETURN_IF_ERROR(host.RegisterOp(std::move(square)));

  PassDef pass;
  pass.info.name = "SquareMultiplies";
  pass.info.description = "rewrites multiply(%x, %x) into example.square(%x)";
  pass.info.kind = PassKind::kFunction;
  pass.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    return Rewriter().MutateFunction(f);
  };
  return host.RegisterPass(std::move(pass));
}

}  // namespace

PLIR_PLUGIN("square_multiplies", "0.1.0", Register)
