// DeadCodeElimination: removes bindings whose variable is never used and
// whose value has no side effect, and module items that no entry function
// reaches.
//
// Side effects: calls of impure ops (call_packed, vm.*), calls of module
// functions that (transitively) contain one, and calls of function values
// whose Callable type is impure. A local function's body is cleaned like
// any other body; the variables it captures stay live while it does. Bindings are scanned backwards
// through each body with the set of live variables (uses of the result and
// of every kept binding); nested if branches are bodies of their own and are
// cleaned first (post-order). Entry functions: those named by option
// `entry_functions` plus every item with a `global_symbol` attribute (TVM's
// externally visible functions); if there are none, `main`; if there is no
// `main` either, no item is removed.
//
// Cost: one walk of every value per body during the backward scan, which
// also collects the global references that reachability follows. The first
// call of a module function found there computes the SDK's ImpureFunctions
// (one walk of every function, closed over the call graph). The
// live set is a flat array indexed by VarNode::index() (checked, with an
// open-addressing fallback). A function whose values hold no nested body is
// cleaned directly; one with `if`s is cleaned bottom-up by a recursive walk
// that rebuilds what holds a changed body as ExprMutator does (an
// ExprMutator does it past 64 levels of nesting).
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/rewrite.h"
#include "ir/var_map.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// The impure functions of a module, found on the first question: a module
// whose bodies call no module function never needs them.
class LazyImpureFunctions {
 public:
  explicit LazyImpureFunctions(const Module& m) : module_(m) {}
  bool Contains(const std::string& name) {
    if (!done_) {
      set_ = ImpureFunctions::Compute(module_);
      done_ = true;
    }
    return set_.Contains(name);
  }

 private:
  const Module& module_;
  bool done_ = false;
  ImpureFunctions set_;
};

// Walks what UseCollector (an IRVisitor without types) visited, without
// virtual calls or allocation per walk: variable uses (not definitions),
// global references, calls of impure ops or impure functions, and whether a
// nested body (SeqExpr) is under the root.
class Scanner {
 public:
  // `impure_functions`: null when calls of module functions do not count.
  explicit Scanner(LazyImpureFunctions* impure_functions) : impure_functions_(impure_functions) {}

  struct Result {
    bool impure = false;
    bool nested = false;  // a SeqExpr was walked (an if branch, a function body)
  };

  // use(const VarNode*) for each variable use; global(const GlobalVarNode*)
  // for each global reference; call(const GlobalVarNode*) for each callee
  // that is a global.
  template <typename Use, typename Global, typename GlobalCallee>
  Result Scan(const Node* root, Use&& use, Global&& global, GlobalCallee&& callee) {
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
        case NodeKind::kGlobalVar:
          global(static_cast<const GlobalVarNode*>(n));
          break;
        case NodeKind::kCall: {
          auto* c = static_cast<const CallNode*>(n);
          const Node* fn = c->callee().get();
          if (fn->kind() == NodeKind::kOp) {
            if (CalleeHasSideEffects(fn, nullptr)) r.impure = true;
          } else if (fn->kind() == NodeKind::kGlobalVar) {
            auto* g = static_cast<const GlobalVarNode*>(fn);
            callee(g);
            if (impure_functions_ && impure_functions_->Contains(g->name())) r.impure = true;
          } else if (CalleeHasSideEffects(fn, nullptr)) {
            r.impure = true;  // a call of a function value whose Callable type is impure
          }
          stack_.push_back(fn);
          for (const Expr& a : c->args()) stack_.push_back(a.get());
          break;
        }
        case NodeKind::kTuple:
          for (const Expr& f : static_cast<const TupleNode*>(n)->fields()) stack_.push_back(f.get());
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
          Scanner inner(nullptr);
          inner.Scan(static_cast<const LocalFnNode*>(n)->body().get(), use, global, callee);
          break;
        }
        default:  // types, ops, literals, constants (whose child is a type), externs
          break;
      }
    }
    return r;
  }

  template <typename Use>
  Result ScanUses(const Node* root, Use&& use) {
    return Scan(root, use, [](const GlobalVarNode*) {}, [](const GlobalVarNode*) {});
  }

 private:
  LazyImpureFunctions* impure_functions_;
  std::vector<const Node*> stack_;
};

// Removes the dead bindings of one body whose nested bodies are already
// clean (the Rewrite of the old DeadBindingRemover, in one walk per value),
// or of a body and all bodies nested in it, bottom-up.
class BodyCleaner {
 public:
  BodyCleaner(LazyImpureFunctions* impure, size_t index_bound)
      : scanner_(impure), live_(index_bound) {}

  // The global references left in the body cleaned last (see Clean).
  const std::vector<const GlobalVarNode*>& globals() const { return globals_; }

  // Cleans the bodies nested in `seq` (in if branches), rebuilding what
  // holds them as ExprMutator's Rebuild does, then `seq` itself: what the
  // ExprMutator-driven DeadBindingRemover returns. Null if nesting is deeper
  // than kMaxDepth.
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

  // Returns `seq` itself if nothing is dead. With `allow_nested` false,
  // returns null as soon as a value holds a nested body (the caller then
  // takes the bottom-up path). Afterwards globals() lists the global
  // references of the result (with repeats): those of its kept bindings and
  // of its result expression, nested bodies included.
  SeqExpr Clean(const SeqExpr& seq, bool allow_nested) {
    live_.Clear();
    globals_.clear();
    auto mark = [this](const VarNode* v) { live_.Insert(v, 1); };
    auto keep_global = [this](const GlobalVarNode* g) { globals_.push_back(g); };
    auto no_callee = [](const GlobalVarNode*) {};
    if (scanner_.Scan(seq->result().get(), mark, keep_global, no_callee).nested && !allow_nested)
      return SeqExpr();
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
        size_t globals_before = globals_.size();
        Scanner::Result r = scanner_.Scan(
            b->value().get(), [this](const VarNode* v) { uses_.push_back(v); }, keep_global,
            no_callee);
        if (r.nested && !allow_nested) return SeqExpr();
        if (!r.impure && !live_.Contains(b->var().get())) {
          keep_[pos] = 0;
          ++removed[bi];
          changed = true;
          globals_.resize(globals_before);  // a dead binding references nothing
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
      if (!kept.empty()) out.push_back(BindingBlockNode::Make(std::move(kept), blocks[bi]->is_dataflow()));
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
    switch (e->kind()) {
      case NodeKind::kTuple: {
        if (depth >= kMaxDepth) return kUnsupported;
        const auto& fields = static_cast<const TupleNode*>(e.get())->fields();
        std::vector<Expr> nf;
        Result r = CleanList(fields, &nf, depth);
        if (r != kChanged) return r;
        *out = TupleNode::Make(std::move(nf));
        return kChanged;
      }
      case NodeKind::kTupleGetItem: {
        if (depth >= kMaxDepth) return kUnsupported;
        auto* t = static_cast<const TupleGetItemNode*>(e.get());
        Expr x;
        Result r = CleanValue(t->tuple(), &x, depth + 1);
        if (r != kChanged) return r;
        auto made = TupleGetItemNode::Make(x, t->index());
        *out = made.ok() ? *made : TupleGetItemNode::MakeUnchecked(x, t->index(), t->type());
        return kChanged;
      }
      case NodeKind::kCall: {
        if (depth >= kMaxDepth) return kUnsupported;
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
        if (depth >= kMaxDepth) return kUnsupported;
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
        if (depth >= kMaxDepth) return kUnsupported;
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
    return RewriteEach(xs, out, [&](const Expr& e, Expr* x) { return CleanValue(e, x, depth + 1); });
  }

  Scanner scanner_;
  VarMap<char> live_;  // the live variables of one body at a time (Clear() is O(1))
  std::vector<const VarNode*> uses_;
  std::vector<char> keep_;
  std::vector<const GlobalVarNode*> globals_;
};

// The bottom-up path for functions with nested bodies: every body is
// cleaned after the bodies inside it.
class DeadBindingRemover : public ExprMutator {
 public:
  explicit DeadBindingRemover(BodyCleaner* cleaner) : cleaner_(cleaner) {}

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    if (n->kind() != NodeKind::kSeqExpr) return n;
    return cleaner_->Clean(Downcast<SeqExprNode>(n), /*allow_nested=*/true);
  }

 private:
  BodyCleaner* cleaner_;
};

// A bound for the variable indices of `f` (parsed functions number their
// variables in text order, nested ones included): past the last top-level
// binding's index, within reason. Variables beyond it go to the live set's
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

// Returns `item` without its dead bindings; sets *globals to the global
// references of the result (the body is cleaned last, in every path).
Item RemoveDeadBindings(const Item& item, LazyImpureFunctions* impure,
                        std::vector<const GlobalVarNode*>* globals) {
  globals->clear();
  if (item->kind() != NodeKind::kFunction) return item;  // an extern references nothing
  const Function f = Downcast<FunctionNode>(item);
  BodyCleaner cleaner(impure, IndexBound(f));
  SeqExpr body = cleaner.Clean(f->body(), /*allow_nested=*/false);
  if (!body) body = cleaner.CleanNested(f->body(), 0);
  Item out;
  if (!body) out = Downcast<ItemNode>(DeadBindingRemover(&cleaner).Mutate(item));
  else if (body.get() == f->body().get()) out = item;
  else out = FunctionNode::Make(f->name(), f->params(), f->ret_type(), std::move(body), f->attrs());
  *globals = cleaner.globals();
  return out;
}

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  // As TVM: the entry functions are those named by `entry_functions` plus
  // every externally visible item (one with a `global_symbol`, function or
  // extern kernel). A module with none of these keeps `main` and what it
  // reaches, or, without `main`, every item.
  std::vector<std::string> entries = ctx.options.GetStringList("entry_functions");
  for (const std::string& e : entries)
    if (!m.Contains(e)) return InvalidArgument("entry function @" + e + " is not in the module");
  {
    std::unordered_set<std::string> named(entries.begin(), entries.end());
    for (const Item& it : m.items())
      if (it->attrs().Get("global_symbol") && named.insert(it->name()).second)
        entries.push_back(it->name());
  }
  if (entries.empty() && m.LookupFunction("main")) entries.push_back("main");

  // Dead bindings first, so that calls they held no longer keep items alive.
  LazyImpureFunctions impure(m);
  std::vector<Item> cleaned;
  bool changed = false;
  // The global references of each cleaned item, for the reachability below
  // (instead of walking the reached items again).
  std::vector<std::vector<const GlobalVarNode*>> item_globals(entries.empty() ? 0 : m.size());
  std::vector<const GlobalVarNode*> scratch;
  for (size_t i = 0; i < m.items().size(); ++i) {
    Item r = RemoveDeadBindings(m.items()[i], &impure,
                                entries.empty() ? &scratch : &item_globals[i]);
    if (r.get() != m.items()[i].get() && !changed) {
      changed = true;
      cleaned.reserve(m.items().size());
      for (size_t k = 0; k < i; ++k) cleaned.push_back(m.items()[k]);
    }
    if (changed) cleaned.push_back(std::move(r));
  }
  Module out = m;
  if (changed) {
    // Names are those of `m`: Make cannot fail.
    PLIR_ASSIGN_OR_RETURN(out, Module::Make(std::move(cleaned)));
  }
  if (entries.empty()) return out;

  std::unordered_map<std::string_view, size_t> index;  // item name -> position
  index.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) index.emplace(out.items()[i]->name(), i);
  std::unordered_set<std::string> reached(entries.begin(), entries.end());
  std::vector<std::string> work(entries.begin(), entries.end());
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    for (const GlobalVarNode* g : item_globals[index.at(name)])
      if (index.count(g->name()) && reached.insert(g->name()).second) work.push_back(g->name());
  }
  std::vector<Item> items;
  for (const Item& it : out.items())
    if (reached.count(it->name())) items.push_back(it);
  if (items.size() == out.size()) return out;
  return Module::Make(std::move(items));
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "DeadCodeElimination";
  def.info.description =
      "removes unused side-effect-free bindings and functions no entry function reaches";
  def.info.options = {{"entry_functions", OptionType::kStringList, AttrValue::List({}),
                       "entry functions, in addition to those with global_symbol (or main when none has one)"}};
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("dead_code_elimination", "1.0", Register)
