// DeadCodeElimination: removes bindings whose variable is never used and
// whose value has no side effect, and module items that no entry function
// reaches.
//
// Side effects: calls of impure ops (call_packed, vm.*) and calls of module
// functions that (transitively) contain one. Bindings are scanned backwards
// through each body with the set of live variables (uses of the result and
// of every kept binding); nested if branches are bodies of their own and are
// cleaned first (post-order). Entry functions: option `entry_functions`, or
// by default the functions with a `global_symbol` attribute, or `main`. If
// none exists, no item is removed.
//
// Cost: one walk of every value per body during the backward scan; the
// first call of a module function found there also costs one walk of every
// function to find the impure ones (the call graph is then closed with a
// work list). The live set is a flat array indexed by
// VarNode::index() (checked, with an open-addressing fallback). A function
// whose values hold no nested body is cleaned directly; one with `if`s goes
// through an ExprMutator that cleans every body bottom-up with the same scan.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// The set of live variables of one body at a time: Clear() starts an empty
// set in O(1) (entries carry the generation they were inserted in). Dense
// by VarNode::index(), checked on every access (the slot must hold the very
// variable), with an open-addressing table for the variables whose index is
// missing, stale, out of range or taken.
class LiveSet {
 public:
  explicit LiveSet(size_t index_bound) : bound_(index_bound) {}

  void Clear() { ++gen_; }

  bool Contains(const VarNode* v) const {
    uint32_t i = v->index();
    if (i < dense_.size() && dense_[i].key == v) return dense_[i].gen == gen_;
    if (overflow_size_ == 0) return false;
    for (size_t s = Slot(v);; s = (s + 1) & mask_) {
      if (overflow_[s].key == v) return overflow_[s].gen == gen_;
      if (overflow_[s].key == nullptr) return false;
    }
  }

  void Insert(const VarNode* v) {
    uint32_t i = v->index();
    if (i < bound_) {
      if (dense_.empty()) dense_.resize(bound_);
      Entry& e = dense_[i];
      // A slot left from an earlier body may be taken over: a lookup of its
      // old variable then falls through to the table, where it is not live.
      if (e.key == v || e.key == nullptr || e.gen != gen_) {
        e = {v, gen_};
        return;
      }
    }
    if ((overflow_size_ + 1) * 4 > overflow_.size() * 3) Grow();
    for (size_t s = Slot(v);; s = (s + 1) & mask_) {
      Entry& e = overflow_[s];
      if (e.key == v) {
        e.gen = gen_;
        return;
      }
      if (e.key == nullptr) {
        e = {v, gen_};
        ++overflow_size_;
        return;
      }
    }
  }

 private:
  struct Entry {
    const VarNode* key = nullptr;
    uint32_t gen = 0;
  };
  size_t Slot(const void* key) const {
    uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }
  void Grow() {
    std::vector<Entry> old;
    old.swap(overflow_);
    overflow_.resize(old.empty() ? 64 : old.size() * 2);
    mask_ = overflow_.size() - 1;
    for (const Entry& e : old) {
      if (!e.key) continue;
      size_t s = Slot(e.key);
      while (overflow_[s].key) s = (s + 1) & mask_;
      overflow_[s] = e;
    }
  }

  size_t bound_;
  uint32_t gen_ = 1;
  std::vector<Entry> dense_;
  std::vector<Entry> overflow_;
  size_t overflow_size_ = 0;
  size_t mask_ = 0;
};

std::unordered_set<std::string> ImpureFunctions(const Module& m);

// The impure functions of a module, found on the first question: a module
// whose bodies call no module function never needs them.
class LazyImpureFunctions {
 public:
  explicit LazyImpureFunctions(const Module& m) : module_(m) {}
  bool Contains(const std::string& name) {
    if (!done_) {
      set_ = ImpureFunctions(module_);
      done_ = true;
    }
    return set_.count(name) > 0;
  }

 private:
  const Module& module_;
  bool done_ = false;
  std::unordered_set<std::string> set_;
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
            if (!static_cast<const OpNode*>(fn)->pure()) r.impure = true;
          } else if (fn->kind() == NodeKind::kGlobalVar) {
            auto* g = static_cast<const GlobalVarNode*>(fn);
            callee(g);
            if (impure_functions_ && impure_functions_->Contains(g->name())) r.impure = true;
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
// clean (the Rewrite of the old DeadBindingRemover, in one walk per value).
class BodyCleaner {
 public:
  BodyCleaner(LazyImpureFunctions* impure, size_t index_bound)
      : scanner_(impure), live_(index_bound) {}

  // Returns `seq` itself if nothing is dead. With `allow_nested` false,
  // returns null as soon as a value holds a nested body (the caller then
  // takes the bottom-up path).
  SeqExpr Clean(const SeqExpr& seq, bool allow_nested) {
    live_.Clear();
    auto mark = [this](const VarNode* v) { live_.Insert(v); };
    if (scanner_.ScanUses(seq->result().get(), mark).nested && !allow_nested) return SeqExpr();
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
        Scanner::Result r =
            scanner_.ScanUses(b->value().get(), [this](const VarNode* v) { uses_.push_back(v); });
        if (r.nested && !allow_nested) return SeqExpr();
        if (!r.impure && !live_.Contains(b->var().get())) {
          keep_[pos] = 0;
          ++removed[bi];
          changed = true;
          continue;
        }
        for (const VarNode* v : uses_) live_.Insert(v);
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
  Scanner scanner_;
  LiveSet live_;
  std::vector<const VarNode*> uses_;
  std::vector<char> keep_;
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

Item RemoveDeadBindings(const Item& item, LazyImpureFunctions* impure) {
  if (item->kind() != NodeKind::kFunction) return item;
  const Function f = Downcast<FunctionNode>(item);
  size_t defs = f->params().size();
  for (const Block& b : f->body()->blocks()) defs += b->bindings().size();
  // Room for the variables of nested bodies, numbered after the top level.
  BodyCleaner cleaner(impure, 2 * defs + 1024);
  if (SeqExpr body = cleaner.Clean(f->body(), /*allow_nested=*/false)) {
    if (body.get() == f->body().get()) return item;
    return FunctionNode::Make(f->name(), f->params(), f->ret_type(), std::move(body), f->attrs());
  }
  return Downcast<ItemNode>(DeadBindingRemover(&cleaner).Mutate(item));
}

// Functions whose bodies (transitively) have side effects: one walk per
// function for its own impure calls and its callees, then the callers of
// impure functions, by work list.
std::unordered_set<std::string> ImpureFunctions(const Module& m) {
  std::unordered_set<std::string> impure;
  std::unordered_map<std::string, std::vector<size_t>> callers;  // callee name -> caller items
  std::vector<size_t> work;
  Scanner scanner(nullptr);
  const auto& items = m.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i]->kind() != NodeKind::kFunction) continue;
    Scanner::Result r = scanner.Scan(
        items[i].get(), [](const VarNode*) {}, [](const GlobalVarNode*) {},
        [&](const GlobalVarNode* g) {
          std::vector<size_t>& c = callers[g->name()];
          if (c.empty() || c.back() != i) c.push_back(i);
        });
    if (r.impure && impure.insert(items[i]->name()).second) work.push_back(i);
  }
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    auto it = callers.find(items[i]->name());
    if (it == callers.end()) continue;
    for (size_t c : it->second)
      if (impure.insert(items[c]->name()).second) work.push_back(c);
  }
  return impure;
}

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  std::vector<std::string> entries = ctx.options.GetStringList("entry_functions");
  if (entries.empty()) {
    for (const Item& it : m.items())
      if (it->kind() == NodeKind::kFunction && it->attrs().Get("global_symbol"))
        entries.push_back(it->name());
    if (entries.empty() && m.LookupFunction("main")) entries.push_back("main");
  }
  for (const std::string& e : entries)
    if (!m.Contains(e)) return InvalidArgument("entry function @" + e + " is not in the module");

  // Dead bindings first, so that calls they held no longer keep items alive.
  LazyImpureFunctions impure(m);
  std::vector<Item> cleaned;
  bool changed = false;
  for (size_t i = 0; i < m.items().size(); ++i) {
    Item r = RemoveDeadBindings(m.items()[i], &impure);
    if (r.get() != m.items()[i].get() && !changed) {
      changed = true;
      cleaned.reserve(m.items().size());
      cleaned.assign(m.items().begin(), m.items().begin() + i);
    }
    if (changed) cleaned.push_back(std::move(r));
  }
  Module out = m;
  if (changed) {
    // Names are those of `m`: Make cannot fail.
    PLIR_ASSIGN_OR_RETURN(out, Module::Make(std::move(cleaned)));
  }
  if (entries.empty()) return out;

  std::unordered_set<std::string> reached(entries.begin(), entries.end());
  std::vector<std::string> work(entries.begin(), entries.end());
  Scanner scanner(nullptr);
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    scanner.Scan(
        out.Lookup(name).get(), [](const VarNode*) {},
        [&](const GlobalVarNode* g) {
          if (out.Contains(g->name()) && reached.insert(g->name()).second) work.push_back(g->name());
        },
        [](const GlobalVarNode*) {});
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
                       "entry functions (default: those with global_symbol, or main)"}};
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("dead_code_elimination", "1.0", Register)
