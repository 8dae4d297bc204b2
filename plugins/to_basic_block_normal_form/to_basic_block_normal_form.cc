// ToBasicBlockNormalForm: Relay's definition. An expression node shared by
// several scopes (the function body and each `if` branch are scopes) is
// bound once, to a new variable, in the innermost scope that encloses all
// its uses (their least common ancestor), right before the first binding
// (or the result) of that scope that uses it; every use then reads the
// variable. A local function's body is a scope inside the scope of the
// function expression (a value it shares with another scope is bound
// outside it and captured). Everything else stays as it is: a node used several times in
// one scope stays nested (no full A-normalization: that is the pass
// Normalize).
//
// Sharing is identity of nodes (one node reached along several paths), as
// in Relay's dependency graph; IR read from text never shares a nested
// expression, so on parsed IR the pass changes nothing. IR built by the
// builder, or loaded from JSON or binary, can share.
//
// Algorithm: one walk collects every non-leaf node reachable from the body
// with its uses (edges) in reverse post-order (users first); the scope of
// each node is the least common ancestor of the scopes of its uses, where a
// use inside a nested expression is in that expression's scope and an `if`
// branch (a local function's body) is a scope whose parent is the `if`'s
// (the function's) scope. A node is bound iff a
// use lies in a scope other than its own. A bound value nested in a bound
// value is bound first. A binding's value itself (the root) stays where it
// is. Recursion is bounded by kMaxDepth (an error past it).
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/op.h"
#include "ir/rewrite.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

constexpr int kMaxDepth = 2000;

Status TooDeep() {
  return InvalidArgument("ToBasicBlockNormalForm: expressions nest deeper than " +
                         std::to_string(kMaxDepth) + " levels");
}

bool IsLeaf(const ExprNode* e) {
  switch (e->kind()) {
    case NodeKind::kCall:
    case NodeKind::kTuple:
    case NodeKind::kTupleGetItem:
    case NodeKind::kIf:
    case NodeKind::kLocalFn:
      return false;
    default:
      return true;  // variables, globals, literals, constants, ops
  }
}

// A scope: a body (SeqExpr). parent: the scope of the `if` holding it.
struct Scope {
  const SeqExprNode* seq;
  int parent;
  int depth;
};

class Planner {
 public:
  Status Run(const Function& f) {
    scopes_.push_back({f->body().get(), -1, 0});
    scope_of_seq_[f->body().get()] = 0;
    PLIR_RETURN_IF_ERROR(CollectSeq(f->body().get(), 0));
    // Users come before what they use in reverse post-order.
    for (auto it = post_.rbegin(); it != post_.rend(); ++it) {
      const ExprNode* n = *it;
      int s = -1;
      for (const Use& u : uses_[n]) {
        int us = u.scope >= 0 ? u.scope : node_scope_.at(u.user);
        s = s < 0 ? us : Lca(s, us);
      }
      node_scope_[n] = s;
      // The branches of an `if`, and a local function's body, are scopes
      // inside the scope of the `if` (the function).
      if (n->kind() == NodeKind::kIf) {
        auto* i = static_cast<const IfNode*>(n);
        for (const SeqExprNode* b : {i->then_body().get(), i->else_body().get()}) {
          Scope& sc = scopes_[scope_of_seq_.at(b)];
          sc.parent = s;
          sc.depth = scopes_[s].depth + 1;
        }
      } else if (n->kind() == NodeKind::kLocalFn) {
        Scope& sc = scopes_[scope_of_seq_.at(static_cast<const LocalFnNode*>(n)->body().get())];
        sc.parent = s;
        sc.depth = scopes_[s].depth + 1;
      }
    }
    for (const ExprNode* n : post_) {
      if (roots_.count(n)) continue;
      int s = node_scope_.at(n);
      for (const Use& u : uses_[n]) {
        int us = u.scope >= 0 ? u.scope : node_scope_.at(u.user);
        if (us != s) {
          bind_.insert(n);
          break;
        }
      }
    }
    return Status::Ok();
  }

  bool NeedsBinding(const ExprNode* n) const { return bind_.count(n) > 0; }
  int ScopeOf(const ExprNode* n) const { return node_scope_.at(n); }
  int ScopeOfSeq(const SeqExprNode* s) const { return scope_of_seq_.at(s); }
  bool Any() const { return !bind_.empty(); }

 private:
  // A use of a node: by another node (scope = the user's, known later) or
  // directly by a body (a binding's value or the result; scope given).
  struct Use {
    const ExprNode* user;
    int scope;
  };

  int Lca(int a, int b) const {
    while (a != b) {
      if (scopes_[a].depth >= scopes_[b].depth)
        a = scopes_[a].parent;
      else
        b = scopes_[b].parent;
      if (a < 0 || b < 0) return 0;
    }
    return a;
  }

  Status CollectSeq(const SeqExprNode* seq, int depth) {
    if (depth > kMaxDepth) return TooDeep();
    int s = scope_of_seq_.at(seq);
    for (const Block& b : seq->blocks())
      for (const Binding& x : b->bindings()) {
        const ExprNode* v = x->value().get();
        if (IsLeaf(v)) continue;
        roots_.insert(v);
        uses_[v].push_back({nullptr, s});
        PLIR_RETURN_IF_ERROR(Collect(v, depth + 1));
      }
    const ExprNode* r = seq->result().get();
    if (!IsLeaf(r)) {
      uses_[r].push_back({nullptr, s});
      PLIR_RETURN_IF_ERROR(Collect(r, depth + 1));
    }
    return Status::Ok();
  }

  // Visits `n`'s operands once (post-order), recording their uses by `n`.
  Status Collect(const ExprNode* n, int depth) {
    if (depth > kMaxDepth) return TooDeep();
    if (!visited_.insert(n).second) return Status::Ok();
    auto use = [&](const Expr& op) -> Status {
      if (IsLeaf(op.get())) return Status::Ok();
      uses_[op.get()].push_back({n, -1});
      return Collect(op.get(), depth + 1);
    };
    switch (n->kind()) {
      case NodeKind::kCall:
        for (const Expr& a : static_cast<const CallNode*>(n)->args()) PLIR_RETURN_IF_ERROR(use(a));
        break;
      case NodeKind::kTuple:
        for (const Expr& f : static_cast<const TupleNode*>(n)->fields())
          PLIR_RETURN_IF_ERROR(use(f));
        break;
      case NodeKind::kTupleGetItem:
        PLIR_RETURN_IF_ERROR(use(static_cast<const TupleGetItemNode*>(n)->tuple()));
        break;
      case NodeKind::kIf: {
        auto* i = static_cast<const IfNode*>(n);
        PLIR_RETURN_IF_ERROR(use(i->cond()));
        for (const SeqExprNode* b : {i->then_body().get(), i->else_body().get()}) {
          scope_of_seq_[b] = static_cast<int>(scopes_.size());
          scopes_.push_back({b, -1, 0});  // parent and depth: once the if's scope is known
          PLIR_RETURN_IF_ERROR(CollectSeq(b, depth + 1));
        }
        break;
      }
      case NodeKind::kLocalFn: {
        const SeqExprNode* b = static_cast<const LocalFnNode*>(n)->body().get();
        scope_of_seq_[b] = static_cast<int>(scopes_.size());
        scopes_.push_back({b, -1, 0});  // parent and depth: once the function's scope is known
        PLIR_RETURN_IF_ERROR(CollectSeq(b, depth + 1));
        break;
      }
      default:
        break;
    }
    post_.push_back(n);
    return Status::Ok();
  }

  std::vector<Scope> scopes_;
  std::unordered_map<const SeqExprNode*, int> scope_of_seq_;
  std::unordered_map<const ExprNode*, std::vector<Use>> uses_;
  std::unordered_set<const ExprNode*> visited_, roots_, bind_;
  std::vector<const ExprNode*> post_;
  std::unordered_map<const ExprNode*, int> node_scope_;
};

// Rewrites the bodies on the SDK's BindingMutator (which counts the depth
// and gives the too-deep error): a node the plan binds becomes its variable,
// bound on its first occurrence in the plan's scope for it, right before the
// binding (or the result) being rewritten there.
class Binder : public BindingMutator {
 public:
  explicit Binder(const Planner& p)
      : BindingMutator("ToBasicBlockNormalForm", kMaxDepth), plan_(p) {}

 protected:
  StatusOr<SeqExpr> VisitSeqExpr(const SeqExpr& seq) override {
    int s = plan_.ScopeOfSeq(seq.get());
    bool changed = false;
    std::vector<Block> blocks;
    for (const Block& b : seq->blocks()) {
      std::vector<Binding> out;
      bool block_changed = false;
      for (const Binding& x : b->bindings()) {
        PLIR_ASSIGN_OR_RETURN(Binding nb, VisitBinding(x));
        block_changed |= Flush(s, &out) || nb.get() != x.get();  // what nb needs comes first
        out.push_back(std::move(nb));
      }
      changed |= block_changed;
      blocks.push_back(block_changed ? BindingBlockNode::Make(std::move(out), b->is_dataflow())
                                     : b);
    }
    PLIR_ASSIGN_OR_RETURN(Expr result, Mutate(seq->result()));
    if (std::vector<Binding> last; Flush(s, &last)) {
      changed = true;
      blocks.push_back(BindingBlockNode::Make(std::move(last), false));
    }
    if (!changed && result.get() == seq->result().get()) return seq;
    return SeqExprNode::Make(std::move(blocks), result);
  }

  // An occurrence of `e`: its variable if it is bound, else `e` with
  // rewritten operands (once per node: sharing is kept).
  StatusOr<Expr> VisitExpr(const Expr& e) override {
    if (IsLeaf(e.get())) return e;
    bool bind = plan_.NeedsBinding(e.get());
    if (auto it = done_.find(e.get()); it != done_.end()) return it->second;
    PLIR_ASSIGN_OR_RETURN(Expr out, VisitChildren(e));
    if (bind) {
      Var v = VarNode::Make("x", out->type());
      pending_[plan_.ScopeOf(e.get())].push_back(VarBindingNode::Make(v, out));
      out = v;
    }
    done_[e.get()] = out;
    return out;
  }

 private:
  // Moves what is pending in scope `s` to the end of `out`; true if any.
  bool Flush(int s, std::vector<Binding>* out) {
    auto it = pending_.find(s);
    if (it == pending_.end() || it->second.empty()) return false;
    for (Binding& p : it->second) out->push_back(std::move(p));
    it->second.clear();
    return true;
  }

  const Planner& plan_;
  std::unordered_map<int, std::vector<Binding>> pending_;
  std::unordered_map<const ExprNode*, Expr> done_;
};

StatusOr<Function> Run(const Function& f) {
  Planner plan;
  PLIR_RETURN_IF_ERROR(plan.Run(f));
  if (!plan.Any()) return f;
  return Binder(plan).MutateFunction(f);
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "ToBasicBlockNormalForm";
  def.info.description =
      "binds an expression shared by several scopes once, at their least common ancestor "
      "scope (Relay's basic block normal form); see Normalize for full normalization";
  def.info.kind = PassKind::kFunction;
  def.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    return Run(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("to_basic_block_normal_form", "1.0", Register)
