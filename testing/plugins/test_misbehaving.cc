// Passes that break the rules: one throws, two mutate their input through a
// const_cast (a call's arguments, a constant's bytes), one returns an
// ill-formed module.
#include <stdexcept>

#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// Finds the first call with two or more arguments.
class FirstCall : public IRVisitor {
 public:
  const CallNode* found = nullptr;

 protected:
  bool Enter(const Node* n, bool) override {
    if (found) return false;
    if (auto* c = As<CallNode>(n); c && c->args().size() >= 2) found = c;
    return !found;
  }
};

// Finds the first constant with at least one byte.
class FirstConstant : public IRVisitor {
 public:
  const ConstantNode* found = nullptr;

 protected:
  bool Enter(const Node* n, bool) override {
    if (found) return false;
    if (auto* c = As<ConstantNode>(n); c && !c->data().empty()) found = c;
    return !found;
  }
};

Status Register(PluginHost& host) {
  PassDef thrower;
  thrower.info.name = "TestThrows";
  thrower.info.description = "throws std::runtime_error";
  thrower.module_fn = [](const Module&, const PassCallContext&) -> StatusOr<Module> {
    throw std::runtime_error("something went wrong inside the plugin");
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(thrower)));

  PassDef mutator;
  mutator.info.name = "TestMutatesInput";
  mutator.info.description = "swaps the arguments of a call in its input, in place";
  mutator.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    FirstCall finder;
    finder.WalkModule(m);
    if (finder.found) {
      Expr* args = const_cast<Expr*>(finder.found->args().data());
      std::swap(args[0], args[1]);
    }
    return m;  // pretends nothing happened
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(mutator)));

  // The structural hash of a constant's bytes is computed once and kept in
  // the node, so hashing the module again would not see this write.
  PassDef byte_writer;
  byte_writer.info.name = "TestMutatesConstant";
  byte_writer.info.description = "flips a byte of the first constant of its input, in place";
  byte_writer.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    FirstConstant finder;
    finder.WalkModule(m);
    if (finder.found) const_cast<char*>(finder.found->data().data())[0] ^= 1;
    return m;
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(byte_writer)));

  PassDef breaker;
  breaker.info.name = "TestBreaksModule";
  breaker.info.description = "returns a module with an undefined variable";
  breaker.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    Var ghost = VarNode::Make("ghost", ObjectTypeNode::Get());
    return m.WithItem(FunctionNode::Make("broken", {}, nullptr, SeqExprNode::Make({}, ghost)));
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(breaker)));

  PassDef needs;
  needs.info.name = "TestNeedsResultBound";
  needs.info.description = "requires the result_bound property";
  needs.info.requires_properties = {"result_bound"};
  needs.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> { return m; };
  return host.RegisterPass(std::move(needs));
}

}  // namespace

PLIR_PLUGIN("test_misbehaving", "1", Register)
