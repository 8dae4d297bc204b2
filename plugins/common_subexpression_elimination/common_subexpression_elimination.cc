// CommonSubexpressionElimination: within a dataflow block, a binding whose
// value is structurally equal to the value of an earlier binding of the same
// block (and pure) reuses that earlier variable.
//
// Algorithm: one scan per dataflow block with a hash table keyed by the
// structural hash of each value (variables compared by identity), confirmed
// by structural equality. A reused dataflow variable replaces later uses; an
// output variable that would be replaced by a dataflow variable is kept and
// bound to it instead (`%out = %earlier;`) so nothing escapes its block.
#include <unordered_map>

#include "ir/op.h"
#include "ir/structural.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

bool IsPure(const Expr& e) {
  class Check : public IRVisitor {
   public:
    bool pure = true;

   protected:
    bool Enter(const Node* n, bool) override {
      if (auto* c = As<CallNode>(n)) {
        auto* op = As<OpNode>(c->callee());
        if (!op || !op->pure()) pure = false;  // calls of functions: unknown
      }
      if (n->kind() == NodeKind::kIf) pure = false;  // keep control flow
      return pure;
    }
  } check;
  check.Walk(e);
  return check.pure;
}

class Cse : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* block = As<BindingBlockNode>(n);
    if (!block || !block->is_dataflow()) return n;
    std::unordered_multimap<uint64_t, Binding> seen;
    std::vector<Binding> out;
    bool changed = false;
    // Substitutes inside this block: the outer mutator has already visited
    // the block's bindings when it decides what to reuse.
    VarSubstituter local;
    bool substituting = false;
    for (const Binding& original : block->bindings()) {
      Binding b = original;
      if (substituting) {
        Expr nv = local.MutateExpr(original->value());
        if (nv.get() != original->value().get()) {
          b = VarBindingNode::Make(original->var(), nv);
          changed = true;
        }
      }
      const Expr& v = b->value();
      if (IsAtomic(v) || !IsPure(v)) {
        out.push_back(b);
        continue;
      }
      uint64_t h = StructuralHash(v);
      const VarNode* earlier = nullptr;
      auto range = seen.equal_range(h);
      for (auto it = range.first; it != range.second; ++it) {
        if (StructuralEqual(it->second->value(), v) &&
            TypeEqual(it->second->var()->type(), b->var()->type())) {
          earlier = it->second->var().get();
          break;
        }
      }
      if (!earlier) {
        seen.emplace(h, b);
        out.push_back(b);
        continue;
      }
      changed = true;
      if (!b->var()->is_dataflow() && earlier->is_dataflow()) {
        out.push_back(VarBindingNode::Make(b->var(), Var(earlier)));
      } else {
        local.Map(b->var().get(), Var(earlier));  // later bindings of this block
        RemapVar(b->var().get(), Var(earlier));   // later blocks and the result
        substituting = true;
      }
    }
    if (!changed) return n;
    return BindingBlockNode::Make(std::move(out), true);
  }
};

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "CommonSubexpressionElimination";
  def.info.description =
      "within a dataflow block, reuses an earlier binding of a structurally equal pure expression";
  def.info.kind = PassKind::kFunction;
  def.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    return Cse().MutateFunction(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("common_subexpression_elimination", "1.0", Register)
