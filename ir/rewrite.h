// Rewriting helpers of the SDK:
// - RewriteEach: copy-on-change list rewriting for hand-written walkers;
// - RewriteChildren: rebuild a Call, Tuple, TupleGetItem, If, local function
//   or nested body from its rewritten children, for walkers that keep their
//   own scopes;
// - ReplaceAllUses: substitute variables in a function or expression;
// - BlockRewriter: replace, erase and insert bindings of one block, sharing
//   what is unchanged;
// - op-call matching (MatchOpCall, MatchCallTir);
// - a pattern-rewrite driver (RewritePattern, ApplyPatternsGreedily):
//   patterns with a benefit, applied to a fixpoint;
// - outlining bindings into a new module function (OutlineFunction,
//   OutlineBindings).
// Every helper shares unchanged nodes: a rewrite that changes nothing
// returns its input pointer-equal.
#ifndef PLIR_IR_REWRITE_H_
#define PLIR_IR_REWRITE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"
#include "ir/op.h"
#include "ir/status.h"

namespace plir {

// The outcome of rewriting one node: unchanged (share the original),
// changed (the replacement was written out), or a shape the rewriter does
// not handle (the caller falls back to ExprMutator).
enum class RewriteResult : uint8_t { kSame, kChanged, kUnsupported };

// For a pass that walks expressions itself (because it keeps scopes: what
// is visible in an `if` branch, a dataflow block): rewrites the children of
// `e` and rebuilds it, sharing `e` when no child changed.
//   expr(const Expr& child) -> StatusOr<Expr>     a Call's arguments (and
//       its callee when that is a variable: a call of a function value), a
//       Tuple's fields, a TupleGetItem's tuple, an If's condition;
//   body(const SeqExpr& s) -> StatusOr<SeqExpr>   an If's branches, a local
//       function's body and a nested body (SeqExpr); the caller enters and
//       leaves its scope there (a pass that treats a local function's body
//       differently handles kLocalFn itself).
// A Call's callee (an op or global), attributes and sinfo_args are kept; its
// type is inferred again (RebuildCall). Variables and leaves come back as they are: the
// caller handles variables before calling this. Types that no longer derive
// (a branch whose type changed) are kept as recorded.
template <typename ExprFn, typename BodyFn>
StatusOr<Expr> RewriteChildren(const Expr& e, ExprFn&& expr, BodyFn&& body) {
  switch (e->kind()) {
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(e.get());
      Expr callee = c->callee();
      if (callee->kind() == NodeKind::kVar) {  // a call of a function value: a use
        StatusOr<Expr> nc = expr(callee);
        if (!nc.ok()) return nc.status();
        callee = std::move(*nc);
      }
      std::vector<Expr> args;  // empty while every argument is unchanged
      for (size_t i = 0; i < c->args().size(); ++i) {
        const Expr& a = c->args()[i];
        StatusOr<Expr> na = expr(a);
        if (!na.ok()) return na.status();
        if (args.empty() && na->get() == a.get()) continue;
        if (args.empty()) {
          args.reserve(c->args().size());
          args.assign(c->args().begin(), c->args().begin() + static_cast<std::ptrdiff_t>(i));
        }
        args.push_back(std::move(*na));
      }
      if (args.empty() && callee.get() == c->callee().get()) return e;
      if (args.empty()) args.assign(c->args().begin(), c->args().end());
      return RebuildCall(*c, callee, std::move(args));
    }
    case NodeKind::kTuple: {
      const auto& old = static_cast<const TupleNode*>(e.get())->fields();
      std::vector<Expr> fields;
      for (size_t i = 0; i < old.size(); ++i) {
        StatusOr<Expr> nf = expr(old[i]);
        if (!nf.ok()) return nf.status();
        if (fields.empty() && nf->get() == old[i].get()) continue;
        if (fields.empty()) {
          fields.reserve(old.size());
          fields.assign(old.begin(), old.begin() + static_cast<std::ptrdiff_t>(i));
        }
        fields.push_back(std::move(*nf));
      }
      if (fields.empty()) return e;
      return Expr(TupleNode::Make(std::move(fields)));
    }
    case NodeKind::kTupleGetItem: {
      auto* t = static_cast<const TupleGetItemNode*>(e.get());
      StatusOr<Expr> x = expr(t->tuple());
      if (!x.ok()) return x.status();
      if (x->get() == t->tuple().get()) return e;
      auto made = TupleGetItemNode::Make(*x, t->index());
      return made.ok() ? *made : TupleGetItemNode::MakeUnchecked(*x, t->index(), t->type());
    }
    case NodeKind::kIf: {
      auto* n = static_cast<const IfNode*>(e.get());
      StatusOr<Expr> cond = expr(n->cond());
      if (!cond.ok()) return cond.status();
      StatusOr<SeqExpr> then_body = body(n->then_body());
      if (!then_body.ok()) return then_body.status();
      StatusOr<SeqExpr> else_body = body(n->else_body());
      if (!else_body.ok()) return else_body.status();
      if (cond->get() == n->cond().get() && then_body->get() == n->then_body().get() &&
          else_body->get() == n->else_body().get())
        return e;
      auto made = IfNode::Make(*cond, *then_body, *else_body);
      return made.ok() ? *made : IfNode::MakeUnchecked(*cond, *then_body, *else_body, n->type());
    }
    case NodeKind::kSeqExpr: {
      StatusOr<SeqExpr> s = body(Downcast<SeqExprNode>(e));
      if (!s.ok()) return s.status();
      return Expr(*s);
    }
    case NodeKind::kLocalFn: {
      auto* f = static_cast<const LocalFnNode*>(e.get());
      StatusOr<SeqExpr> s = body(f->body());
      if (!s.ok()) return s.status();
      if (s->get() == f->body().get()) return e;
      return Expr(LocalFnNode::Make(f->params(), f->ret_type(), std::move(*s)));
    }
    default:
      return e;
  }
}

// Rewrites the elements of `list` in order with
// `fn(const T& element, T* replacement) -> RewriteResult`, stopping at the
// first kUnsupported. `*out` is filled copy-on-change: from the first
// changed element on it holds the elements before it, then each element or
// its replacement; with `copy_all` (the caller changed something else of
// the node already) it holds every element from the start. Returns kChanged
// iff some element changed.
template <typename T, typename Fn>
RewriteResult RewriteEach(std::span<const T> list, std::vector<T>* out, Fn&& fn,
                          bool copy_all = false) {
  bool changed = false;
  if (copy_all) out->reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    T x;
    RewriteResult r = fn(list[i], &x);
    if (r == RewriteResult::kUnsupported) return r;
    if (r == RewriteResult::kChanged && !changed && !copy_all) {
      out->reserve(list.size());
      out->assign(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (r == RewriteResult::kChanged) changed = true;
    if (changed || copy_all) out->push_back(r == RewriteResult::kChanged ? std::move(x) : list[i]);
  }
  return changed ? RewriteResult::kChanged : RewriteResult::kSame;
}

// ---------------------------------------------------------------------------
// Replacing uses.

// Returns `f` with every use of each key of `map` replaced by its value
// (definitions are untouched). `f` itself when nothing is used.
Function ReplaceAllUses(const Function& f,
                        const std::unordered_map<const VarNode*, Expr>& map);
inline Function ReplaceAllUses(const Function& f, const VarNode* from, Expr to) {
  return ReplaceAllUses(f, {{from, std::move(to)}});
}
Expr ReplaceAllUses(const Expr& e, const std::unordered_map<const VarNode*, Expr>& map);

// ---------------------------------------------------------------------------
// Editing one block.

// Records edits to the bindings of a block by their original position and
// applies them in one pass. Build() returns the original block when no edit
// was made, else a new block sharing every untouched binding. Positions
// always refer to the original block.
class BlockRewriter {
 public:
  explicit BlockRewriter(Block block) : block_(std::move(block)), edits_(block_->bindings().size()) {}

  const Block& original() const { return block_; }
  size_t size() const { return edits_.size(); }

  // Replaces binding `i` by `b` (the last call wins).
  void Replace(size_t i, Binding b);
  // Removes binding `i`.
  void Erase(size_t i);
  // Inserts `b` before / after binding `i` (in call order).
  void InsertBefore(size_t i, Binding b);
  void InsertAfter(size_t i, Binding b);
  // Appends at the end of the block.
  void Append(Binding b) { appended_.push_back(std::move(b)); }
  bool changed() const { return changed_; }

  Block Build() const;

 private:
  struct Edit {
    std::vector<Binding> before, after;
    Binding replacement;
    bool erased = false;
  };
  Block block_;
  std::vector<Edit> edits_;
  std::vector<Binding> appended_;
  bool changed_ = false;
};

// ---------------------------------------------------------------------------
// Matching op calls.

// The call if `e` is a call of the op named `op_name`, else null.
const CallNode* MatchOpCall(const Expr& e, std::string_view op_name);
// The same, also requiring `nargs` arguments.
const CallNode* MatchOpCall(const Expr& e, std::string_view op_name, size_t nargs);
// A call of a pure op whose pattern kind is at most `max` (e.g. kBroadcast:
// elementwise or broadcast ops).
const CallNode* MatchOpCallWithPattern(const Expr& e, OpPattern max);

// `call_tir(@kernel, (args...)[, tir_vars], sinfo_args=[...])`, taken apart.
struct CallTirMatch {
  const CallNode* call = nullptr;
  const GlobalVarNode* kernel = nullptr;
  ExprSpan args;  // the fields of the argument tuple
  const ExprNode* tir_vars = nullptr;  // the shape value of symbolic values, if given
};
// Fills `*m` and returns true iff `e` is a call_tir with a literal tuple of
// arguments.
bool MatchCallTir(const Expr& e, CallTirMatch* m);
// The pattern kind of an extern kernel: its `op_pattern` integer attribute
// (TVM numbering), opaque when absent.
OpPattern KernelPattern(const ItemNode& kernel);

// ---------------------------------------------------------------------------
// Pattern rewriting.

// What a pattern sees besides the value it matches: the values bound to
// variables of the function (so that it can look through operands).
class RewriteContext {
 public:
  // The value currently bound to `v` in the function being rewritten
  // (after earlier rewrites), or null for a parameter or unknown variable.
  const Expr* Definition(const VarNode* v) const;
  // The module the function belongs to, if the driver was given one.
  const Module* module() const { return module_; }

 private:
  friend class PatternDriver;
  std::unordered_map<const VarNode*, Expr> values_;
  const Module* module_ = nullptr;
};

// A local rewrite of the value of a binding. Patterns with a higher benefit
// are tried first (ties: in the order given).
class RewritePattern {
 public:
  explicit RewritePattern(int benefit = 1) : benefit_(benefit) {}
  virtual ~RewritePattern() = default;
  int benefit() const { return benefit_; }
  virtual std::string name() const { return "pattern"; }
  // Returns the replacement of `value`, or nullopt if the pattern does not
  // apply. The replacement must have a type compatible with the value's
  // (the bound variable keeps its type when equal, else is replaced by a
  // fresh one of the new type).
  virtual std::optional<Expr> MatchAndRewrite(const Expr& value, const RewriteContext& ctx) const = 0;

 private:
  int benefit_;
};

struct GreedyRewriteOptions {
  int max_iterations = 10;  // sweeps over the function
  const Module* module = nullptr;
};
struct GreedyRewriteResult {
  Function function;
  bool converged = false;  // a sweep applied no pattern
  int iterations = 0;      // sweeps made
  int rewrites = 0;        // patterns applied in all
};
// Applies `patterns` to every binding value of `f` (nested bodies too),
// sweep after sweep, until a sweep changes nothing (a fixpoint) or
// max_iterations sweeps were made. Each value is rewritten repeatedly
// within a sweep while some pattern applies (at most 64 times).
GreedyRewriteResult ApplyPatternsGreedily(
    const Function& f, std::span<const RewritePattern* const> patterns,
    const GreedyRewriteOptions& options = {});

// ---------------------------------------------------------------------------
// Outlining.

struct OutlineOptions {
  std::string name;           // the new function's name
  Attrs attrs;                // its attributes (e.g. Primitive = true)
  bool lift_constants = true;  // constant tensors used become parameters
  // The values the function returns, in order. Empty: computed as the
  // bindings' variables used after them (`later_uses`), or non-dataflow.
  std::vector<const VarNode*> outputs;
};
struct Outlined {
  Function function;        // the new function (not added to any module)
  std::vector<Expr> args;   // what a call passes, one per parameter
  std::vector<const VarNode*> outputs;  // original variables, in return order
};
// Builds a function computing `bindings` (in order; each may use earlier
// ones): parameters are the free variables in order of first use (and, with
// lift_constants, the constants), the body one dataflow block of fresh
// variables returning the outputs (one value, or a tuple of several).
// `later_uses`: variables used outside the bindings (for the default
// outputs); may be null. Fails if there is no output or an output is not
// defined by the bindings.
StatusOr<Outlined> OutlineFunction(std::span<const VarBindingNode* const> bindings,
                                   const OutlineOptions& options,
                                   const std::unordered_map<const VarNode*, bool>* later_uses = nullptr);

// Outlines `bindings` (all in one dataflow block of `f`, in order) into a new
// function and leaves a call in place of the last of them: with one output
// the call binds that output's variable; with several it binds a tuple and
// each output is rebound with `%v = %tuple.i`. Returns the new `f` and the
// new function. Fails if a binding between the first and the last uses one
// of the outlined variables (the call could not dominate it).
StatusOr<std::pair<Function, Function>> OutlineBindings(
    const Function& f, std::span<const VarBindingNode* const> bindings,
    const OutlineOptions& options);

}  // namespace plir

#endif  // PLIR_IR_REWRITE_H_
