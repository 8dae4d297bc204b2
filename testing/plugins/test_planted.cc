// Planted bugs for plir-opt's pipeline debugging tools (--check-execution,
// --bisect-limit, plir-reduce's pipeline reduction):
//
//   TestAddBecomesSubtract  rewrites the first add(a, b) into subtract(a, b)
//                           (wrong: changes what the module computes)
//   TestSubtractViaAdd      rewrites every subtract(a, b) into
//                           add(a, negative(b)) (right: same values), which
//                           creates the pattern the wrong pass needs
#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

const OpNode* CalledOp(const Ref<Node>& n) {
  auto* c = As<CallNode>(n);
  return c ? As<OpNode>(c->callee()) : nullptr;
}

class FirstAddToSubtract : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    const OpNode* op = CalledOp(n);
    if (done_ || !op || op->name() != "add") return n;
    auto made = MakeOpCall("subtract", As<CallNode>(n)->args());
    if (!made.ok()) return n;
    done_ = true;
    return *made;
  }

 private:
  bool done_ = false;
};

class SubtractToAddNegative : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    const OpNode* op = CalledOp(n);
    if (!op || op->name() != "subtract") return n;
    auto* c = As<CallNode>(n);
    auto neg = MakeOpCall("negative", std::vector<Expr>{c->args()[1]});
    if (!neg.ok()) return n;
    auto add = MakeOpCall("add", std::vector<Expr>{c->args()[0], *neg});
    return add.ok() ? Ref<Node>(*add) : n;
  }
};

Status Register(PluginHost& host) {
  PassDef wrong;
  wrong.info.name = "TestAddBecomesSubtract";
  wrong.info.description = "rewrites the first add(a, b) into subtract(a, b) (a planted bug)";
  wrong.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    return FirstAddToSubtract().MutateModule(m);
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(wrong)));

  PassDef expand;
  expand.info.name = "TestSubtractViaAdd";
  expand.info.description = "rewrites subtract(a, b) into add(a, negative(b)) (correct)";
  expand.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    return SubtractToAddNegative().MutateModule(m);
  };
  return host.RegisterPass(std::move(expand));
}

}  // namespace

PLIR_PLUGIN("test_planted", "1", Register)
