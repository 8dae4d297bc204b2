// The SDK analyses: purity, call graph, free variables, def-use.
#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/analysis/call_graph.h"
#include "ir/analysis/def_use.h"
#include "ir/analysis/free_vars.h"
#include "ir/analysis/purity.h"
#include "ir/visitor.h"

namespace plir {
namespace {

// Pushes the expression children of `n` that a use/definition walk visits
// (types, op nodes and literals have none that matter), in reverse order so
// that popping visits them in evaluation order. Calls `def` for each
// variable `n` defines (binding targets, function parameters).
template <typename Push, typename Def>
void Children(const Node* n, Push&& push, Def&& def) {
  switch (n->kind()) {
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      ExprSpan args = c->args();
      for (size_t i = args.size(); i-- > 0;) push(args[i].get());
      push(c->callee().get());
      break;
    }
    case NodeKind::kTuple: {
      ExprSpan f = static_cast<const TupleNode*>(n)->fields();
      for (size_t i = f.size(); i-- > 0;) push(f[i].get());
      break;
    }
    case NodeKind::kTupleGetItem:
      push(static_cast<const TupleGetItemNode*>(n)->tuple().get());
      break;
    case NodeKind::kIf: {
      auto* f = static_cast<const IfNode*>(n);
      push(f->else_body().get());
      push(f->then_body().get());
      push(f->cond().get());
      break;
    }
    case NodeKind::kSeqExpr: {
      auto* s = static_cast<const SeqExprNode*>(n);
      push(s->result().get());
      for (size_t i = s->blocks().size(); i-- > 0;) push(s->blocks()[i].get());
      break;
    }
    case NodeKind::kBindingBlock: {
      auto bs = static_cast<const BindingBlockNode*>(n)->bindings();
      for (size_t i = bs.size(); i-- > 0;) push(bs[i].get());
      break;
    }
    case NodeKind::kVarBinding: {
      auto* b = static_cast<const VarBindingNode*>(n);
      def(b->var().get());
      push(b->value().get());
      break;
    }
    case NodeKind::kFunction: {
      auto* f = static_cast<const FunctionNode*>(n);
      for (const Var& p : f->params()) def(p.get());
      push(f->body().get());
      break;
    }
    case NodeKind::kLocalFn: {
      auto* f = static_cast<const LocalFnNode*>(n);
      for (const Var& p : f->params()) def(p.get());
      push(f->body().get());
      break;
    }
    default:
      break;
  }
}

// Children() for effect walks: a local function's body runs where the
// function is called, not where it is defined.
template <typename Push>
void EffectChildren(const Node* n, Push&& push) {
  if (n->kind() == NodeKind::kLocalFn) return;
  Children(n, push, [](const VarNode*) {});
}

}  // namespace

// ---------------------------------------------------------------------------
// Purity.

namespace {
bool IsLeaf(NodeKind k) {
  return k == NodeKind::kVar || k == NodeKind::kGlobalVar || k == NodeKind::kPrimValue ||
         k == NodeKind::kStringImm || k == NodeKind::kConstant || k == NodeKind::kOp ||
         k == NodeKind::kShapeExpr || k == NodeKind::kPrimExpr;
}
}  // namespace

bool HasSideEffects(const Node* root, const ImpureFunctions* functions) {
  if (!root || IsLeaf(root->kind())) return false;
  if (root->kind() == NodeKind::kCall) {  // the common shape: a call on leaves, no allocation
    auto* c = static_cast<const CallNode*>(root);
    bool leaves = true;
    for (const Expr& a : c->args()) leaves = leaves && IsLeaf(a->kind());
    if (leaves) return CalleeHasSideEffects(c->callee().get(), functions);
  }
  std::vector<const Node*> stack;
  if (root) stack.push_back(root);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->kind() == NodeKind::kCall &&
        CalleeHasSideEffects(static_cast<const CallNode*>(n)->callee().get(), functions))
      return true;
    EffectChildren(n, [&](const Node* c) { stack.push_back(c); });
  }
  return false;
}

bool ContainsControlFlow(const Node* root) {
  std::vector<const Node*> stack;
  if (root) stack.push_back(root);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->kind() == NodeKind::kIf) return true;
    Children(
        n, [&](const Node* c) { stack.push_back(c); }, [](const VarNode*) {});
  }
  return false;
}

ImpureFunctions ImpureFunctions::Compute(const Module& m) {
  // One walk per function: its own impure calls (ops) and the module
  // functions it calls; then the callers of impure functions, by work list.
  std::unordered_map<std::string_view, std::vector<size_t>> callers;  // callee -> caller items
  std::vector<size_t> work;
  std::vector<const Node*> stack;
  ImpureFunctions out;
  std::vector<const ItemNode*> items;
  for (const Item& item : m.items()) items.push_back(item.get());
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i]->kind() != NodeKind::kFunction) continue;
    bool impure = false;
    stack.assign(1, items[i]);
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (n->kind() == NodeKind::kCall) {
        const Node* callee = static_cast<const CallNode*>(n)->callee().get();
        if (callee->kind() == NodeKind::kGlobalVar) {
          std::vector<size_t>& c = callers[static_cast<const GlobalVarNode*>(callee)->name()];
          if (c.empty() || c.back() != i) c.push_back(i);
        } else if (CalleeHasSideEffects(callee, nullptr)) {
          impure = true;
        }
      }
      EffectChildren(n, [&](const Node* c) { stack.push_back(c); });
    }
    if (impure && out.names_.insert(items[i]->name()).second) work.push_back(i);
  }
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    auto it = callers.find(items[i]->name());
    if (it == callers.end()) continue;
    for (size_t c : it->second)
      if (out.names_.insert(items[c]->name()).second) work.push_back(c);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Call graph.

CallGraph CallGraph::Build(const Module& m) {
  CallGraph g;
  size_t n = m.size();
  g.names_.reserve(n);
  for (const Item& item : m.items()) g.names_.push_back(item->name());
  for (size_t i = 0; i < n; ++i) g.index_.emplace(g.names_[i], static_cast<uint32_t>(i));
  g.callees_.resize(n);
  g.refs_.resize(n);
  g.callers_.resize(n);
  std::vector<const Node*> stack;
  std::vector<uint32_t> seen_call(n, UINT32_MAX), seen_ref(n, UINT32_MAX);
  size_t i = 0;
  for (const Item& item : m.items()) {
    if (item->kind() == NodeKind::kFunction) stack.push_back(item.get());
    while (!stack.empty()) {
      const Node* node = stack.back();
      stack.pop_back();
      if (node->kind() == NodeKind::kGlobalVar) {
        auto it = g.index_.find(static_cast<const GlobalVarNode*>(node)->name());
        if (it != g.index_.end() && seen_ref[it->second] != i) {
          seen_ref[it->second] = static_cast<uint32_t>(i);
          g.refs_[i].push_back(it->second);
        }
      } else if (node->kind() == NodeKind::kCall) {
        const Node* callee = static_cast<const CallNode*>(node)->callee().get();
        if (callee->kind() == NodeKind::kGlobalVar) {
          auto it = g.index_.find(static_cast<const GlobalVarNode*>(callee)->name());
          if (it != g.index_.end() && seen_call[it->second] != i) {
            seen_call[it->second] = static_cast<uint32_t>(i);
            g.callees_[i].push_back(it->second);
            g.callers_[it->second].push_back(static_cast<uint32_t>(i));
          }
        }
      }
      Children(
          node, [&](const Node* c) { stack.push_back(c); }, [](const VarNode*) {});
    }
    ++i;
  }
  return g;
}

std::optional<size_t> CallGraph::IndexOf(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<bool> CallGraph::Reachable(std::span<const size_t> roots) const {
  std::vector<bool> seen(size(), false);
  std::vector<size_t> work;
  for (size_t r : roots)
    if (r < size() && !seen[r]) seen[r] = true, work.push_back(r);
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    for (uint32_t j : refs_[i])
      if (!seen[j]) seen[j] = true, work.push_back(j);
  }
  return seen;
}

std::vector<bool> CallGraph::TransitiveCallers(std::span<const size_t> seeds) const {
  std::vector<bool> seen(size(), false);
  std::vector<size_t> work;
  for (size_t r : seeds)
    if (r < size() && !seen[r]) seen[r] = true, work.push_back(r);
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    for (uint32_t j : callers_[i])
      if (!seen[j]) seen[j] = true, work.push_back(j);
  }
  return seen;
}

// ---------------------------------------------------------------------------
// Free variables.

namespace {

class FreeVarCollector {
 public:
  void Walk(const Node* root) {
    std::vector<const Node*> stack;
    if (root) stack.push_back(root);
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (n->kind() == NodeKind::kVar) {
        Use(static_cast<const VarNode*>(n));
        continue;
      }
      // A binding's target is defined before later bindings use it; its own
      // value cannot use it (the verifier rejects that), so defining it on
      // the way in is safe.
      Children(
          n, [&](const Node* c) { stack.push_back(c); },
          [&](const VarNode* v) { defined_.insert(v); });
    }
  }
  void Use(const VarNode* v) {
    if (defined_.count(v) || !reported_.insert(v).second) return;
    out_.push_back(Var(v));
  }
  std::vector<Var> Take() { return std::move(out_); }

 private:
  std::unordered_set<const VarNode*> defined_, reported_;
  std::vector<Var> out_;
};

}  // namespace

namespace {

class DimNameCollector : public IRVisitor {
 public:
  std::vector<Symbol> out;

 protected:
  bool Enter(const Node* n, bool) override {
    if (auto* c = As<CallNode>(n)) {
      for (const Type& t : c->sinfo_args()) Add(t);
    } else if (n->kind() == NodeKind::kShapeExpr || n->kind() == NodeKind::kPrimExpr) {
      Add(static_cast<const ExprNode*>(n)->type());
    }
    return !IsTypeKind(n->kind());
  }

 private:
  void Add(const Type& t) {
    for (Symbol s : TypeDimNames(t))
      if (seen_.insert(s).second) out.push_back(s);
  }
  std::unordered_set<Symbol> seen_;
};

}  // namespace

std::vector<Symbol> DimNamesUsed(const Node* root) {
  DimNameCollector c;
  c.Walk(root);
  return std::move(c.out);
}

std::vector<Var> FreeVars(const Node* root) {
  FreeVarCollector c;
  c.Walk(root);
  return c.Take();
}

std::vector<Var> FreeVars(std::span<const Binding> bindings) {
  FreeVarCollector c;
  for (const Binding& b : bindings) c.Walk(b.get());
  return c.Take();
}

std::vector<Var> FreeVars(std::span<const VarBindingNode* const> bindings) {
  FreeVarCollector c;
  for (const VarBindingNode* b : bindings) c.Walk(b);
  return c.Take();
}

// ---------------------------------------------------------------------------
// Def-use.

DefUse DefUse::Compute(const FunctionNode& f) {
  DefUse du;
  struct Frame {
    const Node* n;
    const VarBindingNode* binding;  // innermost binding whose value holds n
    const SeqExprNode* body;        // set for a body's result expression
  };
  std::vector<Frame> stack{{&f, nullptr, nullptr}};
  auto define = [&](const VarNode* v, const VarBindingNode* def) {
    auto [info, inserted] = du.infos_.Insert(v, Info{});
    if (!inserted) return;  // a variable bound twice is the verifier's business
    info->def = def;
    info->is_param = def == nullptr;
    du.order_.push_back(v);
  };
  while (!stack.empty()) {
    Frame fr = stack.back();
    stack.pop_back();
    const Node* n = fr.n;
    switch (n->kind()) {
      case NodeKind::kVar: {
        if (Info* info = du.infos_.Find(static_cast<const VarNode*>(n)))
          info->uses.push_back(Use{fr.binding, fr.binding ? nullptr : fr.body});
        break;
      }
      case NodeKind::kFunction:
        for (const Var& p : static_cast<const FunctionNode*>(n)->params()) define(p.get(), nullptr);
        stack.push_back({static_cast<const FunctionNode*>(n)->body().get(), nullptr, nullptr});
        break;
      case NodeKind::kLocalFn:
        // A local function's parameters count as parameters; uses in its
        // body belong to the bindings (or body result) inside it.
        for (const Var& p : static_cast<const LocalFnNode*>(n)->params()) define(p.get(), nullptr);
        stack.push_back({static_cast<const LocalFnNode*>(n)->body().get(), nullptr, nullptr});
        break;
      case NodeKind::kSeqExpr: {
        auto* s = static_cast<const SeqExprNode*>(n);
        stack.push_back({s->result().get(), nullptr, s});
        for (size_t i = s->blocks().size(); i-- > 0;)
          stack.push_back({s->blocks()[i].get(), nullptr, nullptr});
        break;
      }
      case NodeKind::kVarBinding: {
        auto* b = static_cast<const VarBindingNode*>(n);
        define(b->var().get(), b);
        stack.push_back({b->value().get(), b, nullptr});
        break;
      }
      default:
        Children(
            n,
            [&](const Node* c) {
              stack.push_back({c, fr.binding, fr.body});
            },
            [](const VarNode*) {});
    }
  }
  return du;
}

size_t DefUse::NumUses(const VarNode* v) const {
  const Info* i = Find(v);
  return i ? i->uses.size() : 0;
}

const VarBindingNode* DefUse::Definition(const VarNode* v) const {
  const Info* i = Find(v);
  return i ? i->def : nullptr;
}

std::vector<const VarBindingNode*> DefUse::Users(const VarNode* v) const {
  std::vector<const VarBindingNode*> out;
  const Info* i = Find(v);
  if (!i) return out;
  for (const Use& u : i->uses)
    if (u.binding && (out.empty() || out.back() != u.binding) &&
        std::find(out.begin(), out.end(), u.binding) == out.end())
      out.push_back(u.binding);
  return out;
}

bool DefUse::UsedInResult(const VarNode* v, const SeqExprNode* body) const {
  const Info* i = Find(v);
  if (!i) return false;
  for (const Use& u : i->uses)
    if (!u.binding && (!body || u.body == body)) return true;
  return false;
}

}  // namespace plir
