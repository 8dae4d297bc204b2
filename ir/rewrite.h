// Rewriting helpers of the SDK:
// - RewriteEach: copy-on-change list rewriting for hand-written walkers;
// - RewriteChildren: rebuild a Call, Tuple, TupleGetItem, If, local function
//   or nested body from its rewritten children, for walkers that keep their
//   own scopes;
// - ReplaceAllUses: substitute variables in a function or expression;
// - BindingMutator: a scoped mutator with body, block and binding hooks
//   (TVM's VisitBindingBlock_ / VisitBinding_), so that a pass overrides one
//   binding or one block and the SDK rebuilds what holds it;
// - BlockRewriter: replace, erase and insert bindings of one block, sharing
//   what is unchanged;
// - op-call matching (MatchOpCall, MatchCallTir) and type inference from
//   types (InferOpType);
// - a pattern-rewrite driver (RewritePattern, ApplyPatternsGreedily):
//   patterns with a benefit, applied to a fixpoint, with current use counts,
//   the dataflow-scope rule and operand matching through variables at the
//   binding being rewritten, unused producers erased, and a per-pattern
//   trace;
// - outlining bindings into a new module function (OutlineFunction,
//   OutlineBindings).
// Every helper shares unchanged nodes: a rewrite that changes nothing
// returns its input pointer-equal.
#ifndef PLIR_IR_REWRITE_H_
#define PLIR_IR_REWRITE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"
#include "ir/op.h"
#include "ir/status.h"
#include "ir/var_map.h"

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
// A mutator with binding and block hooks.

// Walks a function body in scope order: each body (SeqExpr) block by block,
// each block binding by binding, then the body's result; nested bodies (an
// `if`'s branches, a local function's body) are visited where they occur,
// inside the binding that holds them. Override the hook of the level a pass
// cares about; the defaults rebuild, copy-on-change, what holds a changed
// node, so a pass that changes nothing gets its input back pointer-equal.
//
//   VisitSeqExpr(seq)       every block (VisitBindingBlock), then the result
//                           (Mutate); a block returned null is dropped;
//   VisitBindingBlock(b)    every binding (VisitBinding); a binding returned
//                           null is erased; a block left empty is dropped;
//   VisitBinding(b)         the value (Mutate), rebound to b's variable;
//   VisitExpr(e)            a variable: VisitVarUse; anything else: its
//                           children (VisitChildren);
//   VisitVarUse(v)          the replacement RemapVar recorded, else v;
//   VisitNestedBody(seq)    an `if` branch, a local function's body or a
//                           nested body: MutateBody(seq).
//
// Recursion follows the nesting of the input, bounded by `max_depth`: past
// it, Mutate and MutateBody fail with "<pass>: expressions nest deeper than
// <max_depth> levels" (the parser and the verifier refuse half that
// already).
class BindingMutator {
 public:
  virtual ~BindingMutator() = default;

  // Rewrites f's body. Returns f itself iff the body is unchanged; otherwise
  // a function with the same name, parameters, return type and attributes.
  StatusOr<Function> MutateFunction(const Function& f);
  // The entries the hooks recurse through: they count the depth, then call
  // VisitSeqExpr / VisitExpr.
  StatusOr<SeqExpr> MutateBody(const SeqExpr& seq);
  StatusOr<Expr> Mutate(const Expr& e);

 protected:
  // `pass_name` prefixes the too-deep error.
  explicit BindingMutator(std::string pass_name, int max_depth = 2000)
      : pass_name_(std::move(pass_name)), max_depth_(max_depth) {}

  virtual StatusOr<SeqExpr> VisitSeqExpr(const SeqExpr& seq);
  virtual StatusOr<Block> VisitBindingBlock(const Block& block);
  virtual StatusOr<Binding> VisitBinding(const Binding& binding);
  virtual StatusOr<Expr> VisitExpr(const Expr& e);
  virtual Expr VisitVarUse(const Expr& var);
  virtual StatusOr<SeqExpr> VisitNestedBody(const SeqExpr& seq) { return MutateBody(seq); }

  // The default of VisitExpr for a non-variable: RewriteChildren with Mutate
  // and VisitNestedBody.
  StatusOr<Expr> VisitChildren(const Expr& e);
  // `binding` itself if `var` and `value` are its own, else a new binding.
  static Binding Rebind(const Binding& binding, Var var, Expr value);

  // Makes every later use of `from` (VisitVarUse) read `to`; UnmapVar undoes
  // it. Remapped(v): the replacement, or null. (The replacements are a
  // VarMap, indexed by the variables' numbers: a use reads a slot near the
  // ones the walk just wrote, where a hash table of pointers missed the
  // cache on every use of a large function.)
  void RemapVar(const VarNode* from, Expr to) { remap_.Set(from, std::move(to)); }
  void UnmapVar(const VarNode* from) {
    if (Expr* to = remap_.Find(from)) *to = Expr();
  }
  const Expr* Remapped(const VarNode* v) const {
    const Expr* to = remap_.Find(v);
    return to && *to ? to : nullptr;
  }
  // Sizes the replacements for a function of about `n` variables (before
  // the first RemapVar; without it, variables numbered past 65,536 go to
  // the map's slower table).
  void ReserveRemaps(size_t n) {
    if (remap_.empty()) remap_ = VarMap<Expr>(n);
  }

  // How deep the walk is: 0 in the function's body, one more per Mutate and
  // MutateBody. A helper mutator run on a nested body (a local function
  // with a scope of its own) continues from its caller's depth.
  int depth() const { return depth_; }
  void ContinueDepthOf(const BindingMutator& outer) { depth_ = outer.depth_; }
  // The error past max_depth.
  Status TooDeep() const;

 private:
  std::string pass_name_;
  int max_depth_;
  int depth_ = -1;
  VarMap<Expr> remap_;  // a null value: unmapped
};

// ---------------------------------------------------------------------------
// Replacing uses.

// Returns `f` with every use of each key of `map` replaced by its value
// (definitions are untouched). `f` itself when nothing is used.
Function ReplaceAllUses(const Function& f, const std::unordered_map<const VarNode*, Expr>& map);
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
  explicit BlockRewriter(Block block)
      : block_(std::move(block)), edits_(block_->bindings().size()) {}

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

// The type a call of `op` would have on arguments of types `types` with
// `attrs` and `sinfo_args`, checked as MakeOpCall checks a call (arity,
// attributes, the op's inference): for a pattern that must know whether
// its replacement types before building it. Fails as MakeOpCall would
// (an unknown op name: NotFound).
StatusOr<Type> InferOpType(const Op& op, std::span<const Type> types, const Attrs& attrs = Attrs(),
                           TypeSpan sinfo_args = {});
// (Inline: the global registry is the op families' (//ir/ops), which the IR
// core does not link.)
inline StatusOr<Type> InferOpType(std::string_view op_name, std::span<const Type> types,
                                  const Attrs& attrs = Attrs(), TypeSpan sinfo_args = {}) {
  Op op = OpRegistry::Global().Lookup(op_name);
  if (!op) return NotFound("unknown op '" + std::string(op_name) + "'");
  return InferOpType(op, types, attrs, sinfo_args);
}

// `call_tir(@kernel, (args...)[, tir_vars], sinfo_args=[...])`, taken apart.
struct CallTirMatch {
  const CallNode* call = nullptr;
  const GlobalVarNode* kernel = nullptr;
  ExprSpan args;                       // the fields of the argument tuple
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

// What a pattern sees at the binding being rewritten, besides its value:
// the values bound to earlier variables (to look through operands), how
// often each variable is used now, and which variables may be named here.
class RewriteContext {
 public:
  // The value currently bound to `v` in the function being rewritten
  // (after earlier rewrites), or null for a parameter or unknown variable.
  const Expr* Definition(const VarNode* v) const;
  // The module the function belongs to, if the driver was given one.
  const Module* module() const { return module_; }

  // The binding being rewritten (its value as the driver has it may differ:
  // patterns see the current value as MatchAndRewrite's argument).
  const VarBindingNode* binding() const { return binding_; }
  // How many times `v` is used in the function now: counted when the sweep
  // began and kept current as patterns replace values (a replaced value's
  // uses go, its replacement's come). 0 for an unknown variable.
  size_t NumUses(const VarNode* v) const;
  // True iff every variable `e` names may be named at the binding being
  // rewritten: defined before it, and, for a dataflow variable, defined in
  // the dataflow block being rewritten or one enclosing it (a dataflow
  // variable must not be named outside its block). The driver refuses a
  // replacement that is not visible (and says which pattern made it).
  bool IsVisible(const Expr& e) const;
  // Operand `i` of `call` if it is a call of `op_name` or a variable bound
  // (through copies `%b = %a`) to one, else null. The call returned may
  // name variables not visible here: check what the replacement takes from
  // it with IsVisible (the driver checks it too).
  const CallNode* MatchOperand(const CallNode& call, size_t i, std::string_view op_name) const;

 private:
  friend class PatternDriver;
  std::unordered_map<const VarNode*, Expr> values_;
  std::unordered_map<const VarNode*, size_t> uses_;
  std::unordered_map<const VarNode*, const BindingBlockNode*>
      dataflow_block_;  // a dataflow variable's block
  std::unordered_set<const VarNode*> defined_;
  std::vector<const BindingBlockNode*> blocks_;  // the blocks being rewritten, outermost first
  const VarBindingNode* binding_ = nullptr;
  const Module* module_ = nullptr;
};

// A local rewrite of the value of a binding. Patterns with a higher benefit
// are tried first (ties: in the order given).
class RewritePattern {
 public:
  explicit RewritePattern(int benefit = 1) : benefit_(benefit) {}
  virtual ~RewritePattern() = default;
  int benefit() const { return benefit_; }
  // Names the pattern in the driver's diagnostics and trace.
  virtual std::string name() const { return "pattern"; }
  // Returns the replacement of `value`, or nullopt if the pattern does not
  // apply. The replacement must have a type compatible with the value's
  // (the bound variable keeps its type when equal, else is replaced by a
  // fresh one of the new type).
  virtual std::optional<Expr> MatchAndRewrite(const Expr& value,
                                              const RewriteContext& ctx) const = 0;

 private:
  int benefit_;
};

// One application of a pattern (GreedyRewriteOptions::trace).
struct PatternEvent {
  std::string_view pattern;      // its name()
  const VarNode* var = nullptr;  // the variable of the binding rewritten
  bool applied = false;          // false: refused (see `reason`)
  std::string_view reason;       // why it was refused
};

struct GreedyRewriteOptions {
  int max_iterations = 10;  // sweeps over the function
  const Module* module = nullptr;
  // Erase the pure bindings the rewrites left unused (the producers a
  // pattern looked through), and those only them used, after each sweep
  // that applied a pattern. Bindings unused before are kept.
  bool erase_unused = true;
  // Called on every application and refusal, in order. Unset, and the
  // environment variable PLIR_PATTERN_TRACE is set (to anything but "0"):
  // one line per event on stderr, "plir: pattern <name> applied at %<var>".
  std::function<void(const PatternEvent&)> trace;
};
struct PatternStats {
  std::string name;
  int applied = 0;
  int refused = 0;  // replacements refused (a variable not visible there)
};
struct GreedyRewriteResult {
  Function function;
  bool converged = false;                // a sweep applied no pattern
  int iterations = 0;                    // sweeps made
  int rewrites = 0;                      // patterns applied in all
  int erased = 0;                        // bindings erased as left unused (erase_unused)
  std::vector<PatternStats> stats;       // per pattern, in the order given
  std::vector<std::string> diagnostics;  // "pattern <name> at %<var>: <why>", refusals first seen
};
// Applies `patterns` to every binding value of `f` (nested bodies too),
// sweep after sweep, until a sweep changes nothing (a fixpoint) or
// max_iterations sweeps were made. Each value is rewritten repeatedly
// within a sweep while some pattern applies (at most 64 times). A
// replacement naming a variable not visible at its binding is refused
// (the next pattern is tried) and reported in `diagnostics`.
GreedyRewriteResult ApplyPatternsGreedily(const Function& f,
                                          std::span<const RewritePattern* const> patterns,
                                          const GreedyRewriteOptions& options = {});

// ---------------------------------------------------------------------------
// Outlining.

struct OutlineOptions {
  std::string name;            // the new function's name
  Attrs attrs;                 // its attributes (e.g. Primitive = true)
  bool lift_constants = true;  // constant tensors used become parameters
  // The values the function returns, in order. Empty: computed as the
  // bindings' variables used after them (`later_uses`), or non-dataflow.
  std::vector<const VarNode*> outputs;
};
struct Outlined {
  Function function;                    // the new function (not added to any module)
  std::vector<Expr> args;               // what a call passes, one per parameter
  std::vector<const VarNode*> outputs;  // original variables, in return order
};
// Builds a function computing `bindings` (in order; each may use earlier
// ones): parameters are the free variables in order of first use (and, with
// lift_constants, the constants), the body one dataflow block of fresh
// variables returning the outputs (one value, or a tuple of several).
// `later_uses`: variables used outside the bindings (for the default
// outputs); may be null. Fails if there is no output or an output is not
// defined by the bindings.
StatusOr<Outlined> OutlineFunction(
    std::span<const VarBindingNode* const> bindings, const OutlineOptions& options,
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
