// CanonicalizeBindings: removes bindings of a variable to another variable
// (`%y = %x;`, later uses of %y read %x) and folds element access of literal
// tuples (`(%a, %b).1` and `%t.1` where `%t = (%a, %b)` become `%b`).
//
// Algorithm: one post-order ExprMutator pass; a binding whose value is (or
// folds to) a variable is dropped and its variable remapped, so chains
// collapse in a single run. Two cases keep the binding: an output of a
// dataflow block bound to a dataflow variable (the dataflow variable must
// not escape its block), and an annotation that differs from the bound
// variable's type (removing it would change types).
#include <unordered_map>

#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

class Canonicalizer : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    if (auto* t = As<TupleGetItemNode>(n)) return FoldGetItem(t, n);
    if (auto* b = As<VarBindingNode>(n)) {
      const Var& var = b->var();
      if (auto* tuple = As<TupleNode>(b->value())) tuples_[var.get()] = Ref<TupleNode>(tuple);
      auto* src = As<VarNode>(b->value());
      if (!src) return n;
      if (!var->is_dataflow() && src->is_dataflow()) return n;  // would escape
      if (!TypeEqual(var->type(), src->type())) return n;
      RemapVar(var.get(), b->value());
      if (auto it = tuples_.find(src); it != tuples_.end()) tuples_[var.get()] = it->second;
      return nullptr;  // drop the binding
    }
    return n;
  }

 private:
  Ref<Node> FoldGetItem(const TupleGetItemNode* t, const Ref<Node>& n) {
    const TupleNode* tuple = As<TupleNode>(t->tuple());
    bool through_var = false;
    if (!tuple) {
      auto* v = As<VarNode>(t->tuple());
      if (!v) return n;
      auto it = tuples_.find(v);
      if (it == tuples_.end()) return n;
      tuple = it->second.get();
      through_var = true;
      // Fields of a tuple bound in a dataflow block are visible wherever a
      // dataflow tuple variable is; an output tuple may be used later.
      if (!v->is_dataflow()) {
        for (const Expr& f : tuple->fields())
          if (auto* fv = As<VarNode>(f); fv && fv->is_dataflow()) return n;
      }
    }
    if (t->index() < 0 || t->index() >= static_cast<int64_t>(tuple->fields().size())) return n;
    const Expr& field = tuple->fields()[t->index()];
    // Substituting a non-atomic field through a variable would duplicate work.
    if (through_var && !IsAtomic(field)) return n;
    return field;
  }

  std::unordered_map<const VarNode*, Ref<TupleNode>> tuples_;
};

// Drops blocks left empty.
SeqExpr DropEmptyBlocks(const SeqExpr& s) {
  std::vector<Block> blocks;
  for (const Block& b : s->blocks())
    if (!b->bindings().empty()) blocks.push_back(b);
  if (blocks.size() == s->blocks().size()) return s;
  return SeqExprNode::Make(std::move(blocks), s->result());
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "CanonicalizeBindings";
  def.info.description =
      "removes variable-to-variable bindings and folds element access of literal tuples";
  def.info.kind = PassKind::kFunction;
  def.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    Function out = Canonicalizer().MutateFunction(f);
    SeqExpr body = DropEmptyBlocks(out->body());
    if (body.get() == out->body().get()) return out;
    return FunctionNode::Make(out->name(), out->params(), out->ret_type(), body, out->attrs());
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("canonicalize_bindings", "1.0", Register)
