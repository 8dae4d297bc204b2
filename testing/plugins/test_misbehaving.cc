// Passes that break the rules: one throws, two mutate their input through a
// const_cast (a call's arguments, a constant's bytes), one returns an
// ill-formed module.
#include <functional>
#include <stdexcept>
#include <utility>

#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// Finds the first node of type T that `want` accepts.
template <typename T>
class FindFirst : public IRVisitor {
 public:
  explicit FindFirst(std::function<bool(const T&)> want) : want_(std::move(want)) {}
  const T* found = nullptr;

 protected:
  bool Enter(const Node* n, bool) override {
    if (found) return false;
    if (auto* x = As<T>(n); x && want_(*x)) found = x;
    return !found;
  }

 private:
  std::function<bool(const T&)> want_;
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
    FindFirst<CallNode> finder([](const CallNode& c) { return c.args().size() >= 2; });
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
    FindFirst<ConstantNode> finder([](const ConstantNode& c) { return !c.data().empty(); });
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
