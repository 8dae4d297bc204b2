// Normalize: binds every nested non-atomic sub-expression to a variable,
// in evaluation order, so that every call, tuple access and `if`
// operand is a leaf (a variable, literal, constant, global, or a tuple of
// leaves, as call_tir takes its arguments). The result of every body becomes
// a leaf too. `if` branches stay bodies of their own: what is nested inside a
// branch is bound inside that branch.
//
// Algorithm: a post-order ExprMutator. Branch bodies are rewritten before the
// binding that holds the `if`. Each block is rebuilt by flattening each
// binding's value with an explicit stack (no recursion on nesting depth);
// new variables are dataflow variables inside dataflow blocks.
#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

bool IsLeaf(const Expr& e) {
  if (IsAtomic(e)) return true;
  if (auto* t = As<TupleNode>(e)) {
    for (const Expr& f : t->fields())
      if (!IsAtomic(f)) return false;
    return true;
  }
  return false;
}

// Rebuilds `e` with new operands (same kind).
Expr WithOperands(const Expr& e, std::vector<Expr> ops) {
  switch (e->kind()) {
    case NodeKind::kCall: {
      auto* c = As<CallNode>(e);
      return RebuildCall(*c, c->callee(), std::move(ops));
    }
    case NodeKind::kTuple:
      return TupleNode::Make(std::move(ops));
    case NodeKind::kTupleGetItem: {
      auto* t = As<TupleGetItemNode>(e);
      auto r = TupleGetItemNode::Make(ops[0], t->index());
      return r.ok() ? *r : TupleGetItemNode::MakeUnchecked(ops[0], t->index(), t->type());
    }
    case NodeKind::kIf: {
      auto* f = As<IfNode>(e);
      return IfNode::MakeUnchecked(ops[0], f->then_body(), f->else_body(), f->type());
    }
    default:
      return e;
  }
}

std::vector<Expr> Operands(const Expr& e) {
  switch (e->kind()) {
    case NodeKind::kCall:
      return ToVector(As<CallNode>(e)->args());
    case NodeKind::kTuple:
      return ToVector(As<TupleNode>(e)->fields());
    case NodeKind::kTupleGetItem:
      return {As<TupleGetItemNode>(e)->tuple()};
    case NodeKind::kIf:
      return {As<IfNode>(e)->cond()};
    default:
      return {};
  }
}

// Flattens `value` so that its operands are leaves, appending the bindings
// it needs to `out`. Returns the rewritten value (non-leaf at the top is
// fine: it is the bound value itself). Iterative post-order.
Expr Flatten(const Expr& value, bool dataflow, std::vector<Binding>* out) {
  struct Frame {
    Expr e;
    std::vector<Expr> ops;
    size_t next = 0;
    std::vector<Expr> done;
    bool changed = false;
  };
  std::vector<Frame> stack;
  stack.push_back({value, Operands(value), 0, {}, false});
  Expr result;
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.ops.size()) {
      const Expr& op = f.ops[f.next];
      // A tuple of leaves under a call may stay (call_tir's argument tuple).
      bool keep = IsAtomic(op) || (f.e->kind() == NodeKind::kCall && IsLeaf(op));
      if (keep) {
        f.done.push_back(op);
        ++f.next;
      } else {
        stack.push_back({op, Operands(op), 0, {}, false});
      }
      continue;
    }
    Expr rebuilt = f.changed ? WithOperands(f.e, std::move(f.done)) : f.e;
    stack.pop_back();
    if (stack.empty()) {
      result = rebuilt;
      break;
    }
    // A nested non-leaf operand: bind it.
    Var v = VarNode::Make("lv", rebuilt->type(), dataflow);
    out->push_back(VarBindingNode::Make(v, rebuilt));
    Frame& parent = stack.back();
    parent.done.push_back(v);
    parent.changed = true;
    ++parent.next;
  }
  return result;
}

class Normalizer : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    if (auto* block = As<BindingBlockNode>(n)) {
      std::vector<Binding> out;
      bool changed = false;
      for (const Binding& b : block->bindings()) {
        size_t before = out.size();
        Expr v = Flatten(b->value(), block->is_dataflow(), &out);
        if (out.size() == before && v.get() == b->value().get()) {
          out.push_back(b);
        } else {
          changed = true;
          out.push_back(VarBindingNode::Make(b->var(), v));
        }
      }
      if (!changed) return n;
      return BindingBlockNode::Make(std::move(out), block->is_dataflow());
    }
    if (auto* seq = As<SeqExprNode>(n)) {
      if (IsLeaf(seq->result()) && seq->result()->kind() != NodeKind::kTuple) return n;
      if (IsAtomic(seq->result())) return n;
      std::vector<Binding> out;
      Expr v = Flatten(seq->result(), false, &out);
      Var r = VarNode::Make("lv", v->type(), false);
      out.push_back(VarBindingNode::Make(r, v));
      std::vector<Block> blocks = seq->blocks();
      blocks.push_back(BindingBlockNode::Make(std::move(out), false));
      return SeqExprNode::Make(std::move(blocks), r);
    }
    return n;
  }
};

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "Normalize";
  def.info.description =
      "binds every nested non-atomic sub-expression to a variable, in evaluation order";
  def.info.kind = PassKind::kFunction;
  def.info.provides_properties = {"normalized"};
  def.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    return Normalizer().MutateFunction(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("normalize", "1.0", Register)
