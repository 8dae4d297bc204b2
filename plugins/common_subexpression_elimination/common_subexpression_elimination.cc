// CommonSubexpressionElimination: TVM Relax's EliminateCommonSubexpr.
//
// A binding whose (already rewritten) value is structurally equal to the
// value of an earlier binding still in scope becomes a copy of that earlier
// variable (`%lv1 = %lv0;`, as TVM keeps it; CanonicalizeBindings and
// DeadCodeElimination remove such copies), and later uses of its variable
// read the earlier one. Only values bound to variables are compared, not
// sub-expressions. Impure values (calls of impure ops, calls of module
// functions) are never reused. Option `call_only`: only calls are reused.
//
// Scopes: bindings of ordinary blocks stay visible for the rest of the body,
// including inside later dataflow blocks and `if` branches. Bindings of a
// dataflow block are visible in that block only, except its outputs, which
// stay visible afterwards; uses replaced inside a dataflow block are
// replaced there only (an output copy `%out = %dataflow_var` keeps its name
// outside). An `if` branch sees what is visible before the `if`, and what it
// binds is visible only in that branch. A local function (`fn`) is rewritten
// with a clean scope, as TVM does; calls of a variable whose Callable type is
// pure (a pure local function, a pure callback) are values like any other.
//
// Cost: one walk (the SDK's BindingMutator) and one ScopedValueTable (the
// SDK's: values keyed by structure, variables by identity); an `if` branch
// is a scope of the table, which undoes what the branch changed when it
// ends. Nested expressions recurse; nesting deeper than kMaxDepth
// is reported as an error.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/rewrite.h"
#include "ir/value_table.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

constexpr int kMaxDepth = 2000;

// The walk is the SDK's BindingMutator: this class says what a dataflow
// block, a binding, a local function and an `if` branch do to the scopes.
class Eliminator : public BindingMutator {
 public:
  explicit Eliminator(bool call_only)
      : BindingMutator("CommonSubexpressionElimination", kMaxDepth), call_only_(call_only) {}

  StatusOr<Function> Run(const Function& f) {
    // Sized once for the body's bindings: growing a table of a million
    // entries rehashes it again and again.
    size_t n = 0;
    for (const Block& b : f->body()->blocks()) n += b->bindings().size();
    table_.Reserve(n);
    ReserveRemaps(n + f->params().size());
    return MutateFunction(f);
  }

 protected:
  // What a dataflow block adds is undone at its end: only that is recorded
  // (copying the tables per block was quadratic in one large function of
  // many blocks).
  StatusOr<Block> VisitBindingBlock(const Block& b) override {
    if (!b->is_dataflow()) return BindingMutator::VisitBindingBlock(b);
    std::vector<uint32_t> saved_touched;
    std::vector<const VarNode*> saved_remapped;
    saved_touched.swap(touched_);
    saved_remapped.swap(remapped_);
    StatusOr<Block> out = BindingMutator::VisitBindingBlock(b);
    // Dataflow variables are not visible past their block; neither are the
    // replacements made inside it.
    for (uint32_t i : touched_) table_.Update(i).EraseDataflow();
    for (const VarNode* v : remapped_) UnmapVar(v);
    touched_.swap(saved_touched);
    remapped_.swap(saved_remapped);
    return out;
  }

  StatusOr<Binding> VisitBinding(const Binding& b) override {
    Expr value;
    if (const CallNode* c = OpCallOnVars(b->value()); c && depth() + 2 <= kMaxDepth) {
      value = RemapArguments(b->value(), *c);
    } else {
      PLIR_ASSIGN_OR_RETURN(value, Mutate(b->value()));
    }
    const Var& var = b->var();
    if ((!call_only_ || value->kind() == NodeKind::kCall) && IsPure(value)) {
      uint32_t index = table_.FindOrInsert(value).first;
      if (var->is_dataflow()) touched_.push_back(index);
      BoundVars& vars = table_.Update(index);
      if (!vars.empty()) {
        Var first = vars.front();
        RemapVar(var.get(), first);
        remapped_.push_back(var.get());
        if (in_branch_ != 0) branch_remapped_.push_back(var.get());
        vars.push_back(var);
        return VarBindingNode::Make(var, first);
      }
      vars.push_back(var);
    }
    return Rebind(b, var, std::move(value));
  }

  StatusOr<Expr> VisitExpr(const Expr& e) override {
    if (e->kind() != NodeKind::kLocalFn) return BindingMutator::VisitExpr(e);
    // As TVM: a local function is rewritten on its own, with a clean scope
    // (no value or replacement crosses its boundary either way).
    auto* f = static_cast<const LocalFnNode*>(e.get());
    Eliminator inner(call_only_);
    inner.ContinueDepthOf(*this);
    PLIR_ASSIGN_OR_RETURN(SeqExpr body, inner.MutateBody(f->body()));
    if (body.get() == f->body().get()) return e;
    return Expr(LocalFnNode::Make(f->params(), f->ret_type(), body));
  }

  // A nested body: sees the enclosing scope; what it binds stays inside.
  // What it changes is undone when it ends: the table's scope removes the
  // entries it added and restores the variable lists it changed; the
  // replacements it made are erased here.
  StatusOr<SeqExpr> VisitNestedBody(const SeqExpr& s) override {
    const size_t entries = table_.size();
    const size_t remapped = branch_remapped_.size();
    const size_t touched = touched_.size();
    table_.PushScope();
    ++in_branch_;
    StatusOr<SeqExpr> out = MutateBody(s);
    --in_branch_;
    table_.PopScope();
    // (An `if` in a dataflow block: the entries the branch added are gone.)
    touched_.erase(std::remove_if(touched_.begin() + std::min(touched, touched_.size()),
                                  touched_.end(), [&](uint32_t i) { return i >= entries; }),
                   touched_.end());
    for (size_t i = remapped; i < branch_remapped_.size(); ++i) UnmapVar(branch_remapped_[i]);
    branch_remapped_.resize(remapped);
    return out;
  }

 private:
  // What Mutate(call) gives an OpCallOnVars (this pass's VisitExpr and
  // VisitVarUse are the SDK's for its arguments): each argument read
  // through its replacement, the call rebuilt only if one was replaced.
  // Without the generic walk's calls and status values per argument, as
  // most values are such calls.
  Expr RemapArguments(const Expr& value, const CallNode& c) {
    ExprSpan old = c.args();
    std::vector<Expr> args;  // empty while every argument is unchanged
    for (size_t i = 0; i < old.size(); ++i) {
      const Expr* to = Remapped(static_cast<const VarNode*>(old[i].get()));
      if (!to || to->get() == old[i].get()) {
        if (!args.empty()) args.push_back(old[i]);
        continue;
      }
      if (args.empty()) {
        args.reserve(old.size());
        args.assign(old.begin(), old.begin() + static_cast<std::ptrdiff_t>(i));
      }
      args.push_back(*to);
    }
    if (args.empty()) return value;
    return RebuildCall(c, c.callee(), std::move(args));
  }

  bool call_only_;
  ScopedValueTable<BoundVars> table_;
  std::vector<uint32_t> touched_;         // entries given a dataflow variable in the current block
  std::vector<const VarNode*> remapped_;  // replacements made in the current block
  int in_branch_ = 0;                     // how many `if` branches the walk is in
  std::vector<const VarNode*> branch_remapped_;  // replacements made in the branches
};

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "CommonSubexpressionElimination";
  def.info.description =
      "binds a repeated pure value to a copy of its first variable (TVM's "
      "EliminateCommonSubexpr)";
  def.info.kind = PassKind::kFunction;
  def.info.options = {{"call_only", OptionType::kBool, AttrValue::Bool(false),
                       "only reuse calls (TVM's call_only)"}};
  def.function_fn = [](const Function& f, const PassCallContext& ctx) -> StatusOr<Function> {
    return Eliminator(ctx.options.GetBool("call_only")).Run(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("common_subexpression_elimination", "1.0", Register)
