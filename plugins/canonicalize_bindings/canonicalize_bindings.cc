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
//
// Two implementations with the same output. FastCanonicalizer makes one
// forward walk over the function (recursive, up to 64 levels of nesting)
// with flat tables indexed by VarNode::index(), rebuilding only what
// changes. A function nested deeper goes through Canonicalizer, an
// ExprMutator, as before.
#include <algorithm>
#include <unordered_map>

#include "ir/op.h"
#include "ir/rewrite.h"
#include "ir/var_map.h"
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

// ---------------------------------------------------------------------------
// The fast path: Canonicalizer's rewrites in one forward walk, in the
// ExprMutator's order (a binding's value, then the binding; the blocks of a
// body, then its result), so the remap and the known tuples grow exactly as
// there.


class FastCanonicalizer {
 public:
  explicit FastCanonicalizer(size_t num_defs) : remap_(num_defs), tuples_(num_defs) {}

  // Sets *out to what Canonicalizer().MutateFunction(f) returns; returns
  // false (having changed nothing) if `f` holds an expression this path does
  // not handle.
  bool Run(const Function& f, Function* out) {
    Expr body;
    Result r = RewriteSeq(f->body(), &body, 0);
    if (r == kUnsupported) return false;
    *out = r == kSame ? f
                      : FunctionNode::Make(f->name(), f->params(), f->ret_type(),
                                           Downcast<SeqExprNode>(body), f->attrs());
    return true;
  }

 private:
  using Result = RewriteResult;
  static constexpr Result kSame = Result::kSame, kChanged = Result::kChanged,
                          kUnsupported = Result::kUnsupported;
  // Expressions nest at most this deep here (recursion); deeper ones take
  // the ExprMutator, which has no limit.
  static constexpr int kMaxDepth = 64;

  // A body: its blocks in order, then its result; rebuilt if any changed.
  Result RewriteSeq(const SeqExpr& seq, Expr* out, int depth) {
    if (depth >= kMaxDepth) return kUnsupported;
    const auto& blocks = seq->blocks();
    std::vector<Block> new_blocks;
    Result rl = RewriteEach(std::span<const Block>(blocks), &new_blocks,
                            [&](const Block& item, Block* x) { return RewriteBlock(item, x, depth + 1); });
    if (rl == kUnsupported) return rl;
    bool changed = rl == kChanged;
    Expr result;
    Result rr = Rewrite(seq->result(), &result, depth + 1);
    if (rr == kUnsupported) return rr;
    if (!changed && rr == kSame) return kSame;
    if (!changed) new_blocks = blocks;
    *out = SeqExprNode::Make(std::move(new_blocks), rr == kChanged ? std::move(result) : seq->result());
    return kChanged;
  }

  Result RewriteBlock(const Block& block, Block* out, int depth) {
    const auto& bindings = block->bindings();
    std::vector<Binding> nb;
    bool changed = false;
    auto start_changes = [&](size_t i) {
      if (changed) return;
      changed = true;
      nb.reserve(bindings.size());
      nb.assign(bindings.begin(), bindings.begin() + i);
    };
    for (size_t i = 0; i < bindings.size(); ++i) {
      const Binding& original = bindings[i];
      Expr nv;
      Result r = Rewrite(original->value(), &nv, depth);
      if (r == kUnsupported) return r;
      Binding rebuilt;
      if (r == kChanged) {
        rebuilt = VarBindingNode::Make(original->var(), std::move(nv));
        start_changes(i);
      }
      const Binding& b = r == kChanged ? rebuilt : original;
      // Canonicalizer::Rewrite of the binding.
      const VarNode* var = b->var().get();
      const Expr& value = b->value();
      if (value->kind() == NodeKind::kTuple) tuples_.Set(var, Downcast<TupleNode>(value));
      if (value->kind() == NodeKind::kVar) {
        auto* src = static_cast<const VarNode*>(value.get());
        if ((var->is_dataflow() || !src->is_dataflow()) && TypeEqual(var->type(), src->type())) {
          remap_.Set(var, value);
          if (const Ref<TupleNode>* t = tuples_.Find(src)) {
            Ref<TupleNode> tuple = *t;  // Set may move the entry
            tuples_.Set(var, std::move(tuple));
          }
          start_changes(i);
          continue;  // drop the binding
        }
      }
      if (changed) nb.push_back(b);
    }
    if (!changed) return kSame;
    *out = BindingBlockNode::Make(std::move(nb), block->is_dataflow());
    return kChanged;
  }

  // Rewrites `e` bottom-up as the ExprMutator does: remapped variables are
  // replaced, changed nodes rebuilt (op calls re-infer their type), and
  // element access folded (FoldGetItem).
  Result Rewrite(const Expr& e, Expr* out, int depth) {
    switch (e->kind()) {
      case NodeKind::kVar: {
        const Expr* to = remap_.Find(static_cast<const VarNode*>(e.get()));
        if (!to || to->get() == e.get()) return kSame;
        *out = *to;
        return kChanged;
      }
      case NodeKind::kGlobalVar:
      case NodeKind::kOp:
      case NodeKind::kPrimValue:
      case NodeKind::kStringImm:
      case NodeKind::kConstant:
        return kSame;
      case NodeKind::kTuple: {
        if (depth >= kMaxDepth) return kUnsupported;
        const auto& fields = static_cast<const TupleNode*>(e.get())->fields();
        std::vector<Expr> nf;
        Result rl = RewriteEach(std::span<const Expr>(fields), &nf,
                                [&](const Expr& item, Expr* x) { return Rewrite(item, x, depth + 1); });
        if (rl == kUnsupported) return rl;
        if (rl == kSame) return kSame;
        *out = TupleNode::Make(std::move(nf));
        return kChanged;
      }
      case NodeKind::kTupleGetItem: {
        if (depth >= kMaxDepth) return kUnsupported;
        auto* t = static_cast<const TupleGetItemNode*>(e.get());
        Expr x;
        Result r = Rewrite(t->tuple(), &x, depth + 1);
        if (r == kUnsupported) return r;
        const Expr& tuple = r == kChanged ? x : t->tuple();
        if (const Expr* field = Fold(tuple, t->index())) {
          *out = *field;
          return kChanged;
        }
        if (r == kSame) return kSame;
        auto made = TupleGetItemNode::Make(x, t->index());
        *out = made.ok() ? *made : TupleGetItemNode::MakeUnchecked(x, t->index(), t->type());
        return kChanged;
      }
      case NodeKind::kCall: {
        if (depth >= kMaxDepth) return kUnsupported;
        auto* c = static_cast<const CallNode*>(e.get());
        Expr callee;
        Result rc = Rewrite(c->callee(), &callee, depth + 1);
        if (rc == kUnsupported) return rc;
        const auto& args = c->args();
        std::vector<Expr> na;  // every argument once the callee changed
        Result ra = RewriteEach(
            args, &na, [&](const Expr& a, Expr* x) { return Rewrite(a, x, depth + 1); }, rc == kChanged);
        if (ra == kUnsupported) return ra;
        bool changed = rc == kChanged || ra == kChanged;
        if (!changed) return kSame;
        if (rc != kChanged) callee = c->callee();
        *out = RebuildCall(*c, callee, std::move(na));
        return kChanged;
      }
      case NodeKind::kIf: {
        if (depth >= kMaxDepth) return kUnsupported;
        auto* n = static_cast<const IfNode*>(e.get());
        Expr cond, then_body, else_body;
        Result rc = Rewrite(n->cond(), &cond, depth + 1);
        if (rc == kUnsupported) return rc;
        Result rt = RewriteSeq(n->then_body(), &then_body, depth + 1);
        if (rt == kUnsupported) return rt;
        Result re = RewriteSeq(n->else_body(), &else_body, depth + 1);
        if (re == kUnsupported) return re;
        if (rc == kSame && rt == kSame && re == kSame) return kSame;
        if (rc == kSame) cond = n->cond();
        SeqExpr t = rt == kSame ? n->then_body() : Downcast<SeqExprNode>(then_body);
        SeqExpr f = re == kSame ? n->else_body() : Downcast<SeqExprNode>(else_body);
        auto made = IfNode::Make(cond, t, f);
        *out = made.ok() ? *made : IfNode::MakeUnchecked(cond, t, f, n->type());
        return kChanged;
      }
      case NodeKind::kSeqExpr:
        return RewriteSeq(Downcast<SeqExprNode>(e), out, depth + 1);
      default:
        return kUnsupported;
    }
  }

  // Canonicalizer::FoldGetItem on `tuple.index`: the field it folds to, or null.
  const Expr* Fold(const Expr& tuple_expr, int64_t index) const {
    const TupleNode* tuple = As<TupleNode>(tuple_expr);
    bool through_var = false;
    if (!tuple) {
      auto* v = As<VarNode>(tuple_expr);
      if (!v) return nullptr;
      const Ref<TupleNode>* t = tuples_.Find(v);
      if (!t) return nullptr;
      tuple = t->get();
      through_var = true;
      if (!v->is_dataflow()) {
        for (const Expr& f : tuple->fields())
          if (auto* fv = As<VarNode>(f); fv && fv->is_dataflow()) return nullptr;
      }
    }
    if (index < 0 || index >= static_cast<int64_t>(tuple->fields().size())) return nullptr;
    const Expr& field = tuple->fields()[index];
    if (through_var && !IsAtomic(field)) return nullptr;
    return &field;
  }

  VarMap<Expr> remap_;
  VarMap<Ref<TupleNode>> tuples_;
};

// A bound for the variable indices of `f` (parsed functions number their
// variables in text order, nested ones included): past the last top-level
// binding's index, within reason. Variables beyond it go to the tables'
// hashed overflow.
size_t IndexBound(const Function& f) {
  size_t n = f->params().size();
  for (const Block& b : f->body()->blocks()) n += b->bindings().size();
  size_t bound = n;
  for (const Block& b : f->body()->blocks()) {
    if (b->bindings().empty()) continue;
    uint32_t i = b->bindings().back()->var()->index();
    if (i != VarNode::kNoIndex && i < 4 * n + 1024) bound = std::max<size_t>(bound, i + 1);
  }
  return bound + 64;
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "CanonicalizeBindings";
  def.info.description =
      "removes variable-to-variable bindings and folds element access of literal tuples";
  def.info.kind = PassKind::kFunction;
  def.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    Function out;
    if (!FastCanonicalizer(IndexBound(f)).Run(f, &out)) out = Canonicalizer().MutateFunction(f);
    SeqExpr body = DropEmptyBlocks(out->body());
    if (body.get() == out->body().get()) return out;
    return FunctionNode::Make(out->name(), out->params(), out->ret_type(), body, out->attrs());
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("canonicalize_bindings", "1.0", Register)
