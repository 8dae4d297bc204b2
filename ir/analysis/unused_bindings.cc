// Removing unused bindings (see unused_bindings.h).
#include "ir/analysis/unused_bindings.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/parallel.h"
#include "ir/rewrite.h"
#include "ir/var_map.h"
#include "ir/visitor.h"

namespace plir {

namespace {

// The impure functions of a module, found on the first question: a module
// whose bodies call no module function never needs them. Shared by the
// removers of RemoveFromEach's threads: computed once, by the first asker.
class LazyImpureFunctions {
 public:
  explicit LazyImpureFunctions(const Module* m) : module_(m) {}
  bool Contains(const std::string& name) {
    if (!module_) return true;  // without the module: every call of a module function
    std::call_once(once_, [&] { set_ = ImpureFunctions::Compute(*module_); });
    return set_.Contains(name);
  }

 private:
  const Module* module_;
  std::once_flag once_;
  ImpureFunctions set_;
};

// Walks what an IRVisitor without types visits, without virtual calls or
// allocation per walk: variable uses (not definitions), calls of impure
// ops or impure functions, and whether a nested body (SeqExpr) is under
// the root.
class UseScanner {
 public:
  // `impure_functions`: null when calls of module functions do not count.
  explicit UseScanner(LazyImpureFunctions* impure_functions)
      : impure_functions_(impure_functions) {}

  struct Result {
    bool impure = false;
    bool nested = false;  // a SeqExpr was walked (an if branch, a function body)
  };

  // use(const VarNode*) for each variable use.
  template <typename Use>
  Result Scan(const Node* root, Use&& use) {
    Result r;
    stack_.clear();
    if (root) stack_.push_back(root);
    while (!stack_.empty()) {
      const Node* n = stack_.back();
      stack_.pop_back();
      switch (n->kind()) {
        case NodeKind::kVar:
          use(static_cast<const VarNode*>(n));
          break;
        case NodeKind::kCall: {
          auto* c = static_cast<const CallNode*>(n);
          const Node* fn = c->callee().get();
          if (fn->kind() == NodeKind::kGlobalVar) {
            auto* g = static_cast<const GlobalVarNode*>(fn);
            if (impure_functions_ && impure_functions_->Contains(g->name())) r.impure = true;
          } else if (CalleeHasSideEffects(fn, nullptr)) {
            r.impure = true;  // an impure op, or a function value whose Callable type is impure
          }
          stack_.push_back(fn);
          for (const Expr& a : c->args()) stack_.push_back(a.get());
          break;
        }
        case NodeKind::kTuple:
          for (const Expr& f : static_cast<const TupleNode*>(n)->fields())
            stack_.push_back(f.get());
          break;
        case NodeKind::kTupleGetItem:
          stack_.push_back(static_cast<const TupleGetItemNode*>(n)->tuple().get());
          break;
        case NodeKind::kIf: {
          auto* f = static_cast<const IfNode*>(n);
          stack_.push_back(f->cond().get());
          stack_.push_back(f->then_body().get());
          stack_.push_back(f->else_body().get());
          break;
        }
        case NodeKind::kSeqExpr: {
          r.nested = true;
          auto* s = static_cast<const SeqExprNode*>(n);
          for (const Block& b : s->blocks()) stack_.push_back(b.get());
          stack_.push_back(s->result().get());
          break;
        }
        case NodeKind::kBindingBlock:
          for (const Binding& b : static_cast<const BindingBlockNode*>(n)->bindings())
            stack_.push_back(b.get());
          break;
        case NodeKind::kVarBinding:  // the bound variable is a definition
          stack_.push_back(static_cast<const VarBindingNode*>(n)->value().get());
          break;
        case NodeKind::kFunction:  // parameters are definitions; types are skipped
          stack_.push_back(static_cast<const FunctionNode*>(n)->body().get());
          break;
        case NodeKind::kLocalFn: {
          // Its uses count (a closure keeps what it captures alive); its
          // calls' effects happen where it is called, not here.
          r.nested = true;
          UseScanner inner(nullptr);
          inner.Scan(static_cast<const LocalFnNode*>(n)->body().get(), use);
          break;
        }
        default:  // types, ops, globals, literals, constants (whose child is a type), externs
          break;
      }
    }
    return r;
  }

 private:
  LazyImpureFunctions* impure_functions_;
  std::vector<const Node*> stack_;
};

}  // namespace

// Removes the unused bindings of one body whose nested bodies are already
// clean, in one walk per value, or of a body and all bodies nested in it,
// bottom-up.
class UnusedBindingRemover::Impl {
 public:
  explicit Impl(std::shared_ptr<LazyImpureFunctions> impure)
      : impure_(std::move(impure)), scanner_(impure_.get()) {}

  void Reset(size_t index_bound, std::unordered_set<const VarNode*>* candidates) {
    live_ = VarMap<char>(index_bound);
    candidates_ = candidates;
  }

  // Cleans the bodies nested in `seq` (in if branches, local functions),
  // rebuilding what holds them as ExprMutator's Rebuild does, then `seq`
  // itself. Null if nesting is deeper than kMaxDepth.
  SeqExpr CleanNested(const SeqExpr& seq, int depth) {
    if (depth >= kMaxDepth) return SeqExpr();
    const auto& blocks = seq->blocks();
    std::vector<Block> new_blocks;
    bool changed = false;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const auto& bindings = blocks[i]->bindings();
      std::vector<Binding> nb;
      Result rb = RewriteEach(bindings, &nb, [&](const Binding& b, Binding* x) {
        Expr v;
        Result rv = CleanValue(b->value(), &v, depth + 1);
        if (rv == kChanged) *x = VarBindingNode::Make(b->var(), std::move(v));
        return rv;
      });
      if (rb == kUnsupported) return SeqExpr();
      bool block_changed = rb == kChanged;
      if (block_changed && !changed) {
        changed = true;
        new_blocks.reserve(blocks.size());
        new_blocks.assign(blocks.begin(), blocks.begin() + i);
      }
      if (changed)
        new_blocks.push_back(block_changed
                                 ? BindingBlockNode::Make(std::move(nb), blocks[i]->is_dataflow())
                                 : blocks[i]);
    }
    Expr result;
    Result rr = CleanValue(seq->result(), &result, depth + 1);
    if (rr == kUnsupported) return SeqExpr();
    if (rr == kChanged && !changed) {
      changed = true;
      new_blocks = blocks;
    }
    if (!changed) return Clean(seq, /*allow_nested=*/true);
    return Clean(SeqExprNode::Make(std::move(new_blocks), rr == kChanged ? result : seq->result()),
                 /*allow_nested=*/true);
  }

  // Returns `seq` itself if nothing is unused. With `allow_nested` false,
  // returns null as soon as a value holds a nested body (the caller then
  // takes the bottom-up path).
  SeqExpr Clean(const SeqExpr& seq, bool allow_nested) {
    live_.Clear();
    auto mark = [this](const VarNode* v) { live_.Insert(v, 1); };
    if (scanner_.Scan(seq->result().get(), mark).nested && !allow_nested) return SeqExpr();
    const auto& blocks = seq->blocks();
    size_t total = 0;
    for (const Block& b : blocks) total += b->bindings().size();
    keep_.assign(total, 1);
    std::vector<size_t> removed(blocks.size(), 0);
    bool changed = false;
    size_t pos = total;
    for (size_t bi = blocks.size(); bi-- > 0;) {
      const auto& bindings = blocks[bi]->bindings();
      for (size_t j = bindings.size(); j-- > 0;) {
        --pos;
        const VarBindingNode* b = bindings[j].get();
        uses_.clear();
        UseScanner::Result r =
            scanner_.Scan(b->value().get(), [this](const VarNode* v) { uses_.push_back(v); });
        if (r.nested && !allow_nested) return SeqExpr();
        if (!r.impure && !live_.Contains(b->var().get()) &&
            (!candidates_ || candidates_->count(b->var().get()))) {
          keep_[pos] = 0;
          ++removed[bi];
          ++erased_;
          changed = true;
          if (candidates_) candidates_->insert(uses_.begin(), uses_.end());
          continue;
        }
        for (const VarNode* v : uses_) live_.Insert(v, 1);
      }
    }
    if (!changed) return seq;
    std::vector<Block> out;
    out.reserve(blocks.size());
    pos = 0;
    for (size_t bi = 0; bi < blocks.size(); ++bi) {
      const auto& bindings = blocks[bi]->bindings();
      if (removed[bi] == 0) {
        if (!bindings.empty()) out.push_back(blocks[bi]);
        pos += bindings.size();
        continue;
      }
      std::vector<Binding> kept;
      kept.reserve(bindings.size() - removed[bi]);
      for (const Binding& b : bindings)
        if (keep_[pos++]) kept.push_back(b);
      if (!kept.empty())
        out.push_back(BindingBlockNode::Make(std::move(kept), blocks[bi]->is_dataflow()));
    }
    return SeqExprNode::Make(std::move(out), seq->result());
  }

 private:
  using Result = RewriteResult;
  static constexpr Result kSame = Result::kSame, kChanged = Result::kChanged,
                          kUnsupported = Result::kUnsupported;
  static constexpr int kMaxDepth = 64;

  // Rebuilds `e` around its cleaned nested bodies (kSame if none changed).
  Result CleanValue(const Expr& e, Expr* out, int depth) {
    NodeKind k = e->kind();
    bool holder = k == NodeKind::kTuple || k == NodeKind::kTupleGetItem || k == NodeKind::kCall ||
                  k == NodeKind::kIf || k == NodeKind::kLocalFn;
    if (holder && depth >= kMaxDepth) return kUnsupported;
    switch (e->kind()) {
      case NodeKind::kTuple: {
        const auto& fields = static_cast<const TupleNode*>(e.get())->fields();
        std::vector<Expr> nf;
        Result r = CleanList(fields, &nf, depth);
        if (r != kChanged) return r;
        *out = TupleNode::Make(std::move(nf));
        return kChanged;
      }
      case NodeKind::kTupleGetItem: {
        auto* t = static_cast<const TupleGetItemNode*>(e.get());
        Expr x;
        Result r = CleanValue(t->tuple(), &x, depth + 1);
        if (r != kChanged) return r;
        auto made = TupleGetItemNode::Make(x, t->index());
        *out = made.ok() ? *made : TupleGetItemNode::MakeUnchecked(x, t->index(), t->type());
        return kChanged;
      }
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(e.get());
        Expr callee;
        Result rc = CleanValue(c->callee(), &callee, depth + 1);
        if (rc == kUnsupported) return rc;
        std::vector<Expr> na;
        Result ra = CleanList(c->args(), &na, depth);
        if (ra == kUnsupported) return ra;
        if (rc == kSame && ra == kSame) return kSame;
        if (rc == kSame) callee = c->callee();
        if (ra == kSame) na.assign(c->args().begin(), c->args().end());
        *out = RebuildCall(*c, callee, std::move(na));
        return kChanged;
      }
      case NodeKind::kIf: {
        auto* n = static_cast<const IfNode*>(e.get());
        Expr cond;
        Result rc = CleanValue(n->cond(), &cond, depth + 1);
        if (rc == kUnsupported) return rc;
        SeqExpr t = CleanNested(n->then_body(), depth + 1);
        if (!t) return kUnsupported;
        SeqExpr f = CleanNested(n->else_body(), depth + 1);
        if (!f) return kUnsupported;
        if (rc == kSame && t.get() == n->then_body().get() && f.get() == n->else_body().get())
          return kSame;
        if (rc == kSame) cond = n->cond();
        auto made = IfNode::Make(cond, t, f);
        *out = made.ok() ? *made : IfNode::MakeUnchecked(cond, t, f, n->type());
        return kChanged;
      }
      case NodeKind::kLocalFn: {  // its body is cleaned too, as TVM's RemoveAllUnused does
        auto* f = static_cast<const LocalFnNode*>(e.get());
        SeqExpr body = CleanNested(f->body(), depth + 1);
        if (!body) return kUnsupported;
        if (body.get() == f->body().get()) return kSame;
        *out = LocalFnNode::Make(f->params(), f->ret_type(), body);
        return kChanged;
      }
      case NodeKind::kSeqExpr: {
        SeqExpr s = CleanNested(Downcast<SeqExprNode>(e), depth + 1);
        if (!s) return kUnsupported;
        if (s.get() == e.get()) return kSame;
        *out = std::move(s);
        return kChanged;
      }
      default:  // variables, globals, ops, literals, constants
        return kSame;
    }
  }

  Result CleanList(ExprSpan xs, std::vector<Expr>* out, int depth) {
    return RewriteEach(xs, out,
                       [&](const Expr& e, Expr* x) { return CleanValue(e, x, depth + 1); });
  }

  std::shared_ptr<LazyImpureFunctions> impure_;
  UseScanner scanner_;
  VarMap<char> live_;  // the live variables of one body at a time (Clear() is O(1))
  std::vector<const VarNode*> uses_;
  std::vector<char> keep_;
  std::unordered_set<const VarNode*>* candidates_ = nullptr;

 public:
  size_t erased_ = 0;
};

UnusedBindingRemover::UnusedBindingRemover(const Module* module)
    : impl_(std::make_unique<Impl>(std::make_shared<LazyImpureFunctions>(module))) {}
UnusedBindingRemover::UnusedBindingRemover(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
UnusedBindingRemover::~UnusedBindingRemover() = default;

Item UnusedBindingRemover::Remove(const Item& item) {
  if (item->kind() != NodeKind::kFunction) return item;  // an extern holds no binding
  const Function f = Downcast<FunctionNode>(item);
  impl_->Reset(VarIndexBound(*f), candidates_);
  // A function whose values hold no nested body is cleaned directly; one
  // with nested bodies bottom-up, by a walk that recurses up to 64 levels
  // and an ExprMutator past them.
  size_t erased = impl_->erased_;  // a path given up on erased nothing
  SeqExpr body = impl_->Clean(f->body(), /*allow_nested=*/false);
  if (!body) {
    impl_->erased_ = erased;
    body = impl_->CleanNested(f->body(), 0);
  }
  if (!body) {
    impl_->erased_ = erased;
    class BottomUp : public ExprMutator {
     public:
      explicit BottomUp(Impl* impl) : impl_(impl) {}

     protected:
      Ref<Node> Rewrite(const Ref<Node>& n) override {
        if (n->kind() != NodeKind::kSeqExpr) return n;
        return impl_->Clean(Downcast<SeqExprNode>(n), /*allow_nested=*/true);
      }

     private:
      Impl* impl_;
    };
    return Downcast<ItemNode>(BottomUp(impl_.get()).Mutate(item));
  }
  if (body.get() == f->body().get()) return item;
  return FunctionNode::Make(f->name(), f->params(), f->ret_type(), std::move(body), f->attrs());
}

size_t UnusedBindingRemover::erased() const { return impl_->erased_; }

std::vector<Item> UnusedBindingRemover::RemoveFromEach(const Module& module, int threads) {
  const ItemList& items = module.items();
  auto impure = std::make_shared<LazyImpureFunctions>(&module);
  std::vector<std::unique_ptr<UnusedBindingRemover>> removers(
      ParallelThreads(items.size(), threads));
  std::vector<Item> out(items.size());
  ParallelFor(items.size(), threads, [&](size_t i, size_t worker) {
    std::unique_ptr<UnusedBindingRemover>& remover = removers[worker];
    if (!remover) remover.reset(new UnusedBindingRemover(std::make_unique<Impl>(impure)));
    out[i] = remover->Remove(items[i]);
  });
  return out;
}

Function RemoveUnusedBindings(const Function& f, const Module* module) {
  return UnusedBindingRemover(module).Remove(f);
}

}  // namespace plir
