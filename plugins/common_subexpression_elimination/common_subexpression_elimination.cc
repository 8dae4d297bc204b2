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
// Cost: one walk; a hash table keyed by the structural hash of each value
// (variables by identity), confirmed by structural equality; each `if`
// branch copies the table. Nested expressions recurse; nesting deeper than
// kMaxDepth is reported as an error.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/structural.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

constexpr int kMaxDepth = 2000;

// Purity is the SDK's (ir/analysis/purity.h): calls of impure ops and of
// module functions (whose purity the pass does not look up) are impure; an
// `if` is as pure as its parts.

uint64_t Mix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ull;
  v ^= v >> 32;
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

// A call of an op on variables only, without sinfo_args (most values):
// hashed and compared here without StructuralEqual's tables. (Its
// variables are free in the value, so structural equality compares them by
// identity.) Other values take StructuralHash / StructuralEqual.
const CallNode* SimpleCall(const Expr& v) {
  auto* c = As<CallNode>(v);
  if (!c || c->callee()->kind() != NodeKind::kOp || !c->sinfo_args().empty()) return nullptr;
  for (const Expr& a : c->args())
    if (a->kind() != NodeKind::kVar) return nullptr;
  return c;
}

uint64_t ValueKey(const Expr& v, const CallNode* simple) {
  if (!simple) return StructuralHash(v);
  uint64_t h = Mix(0x5eed5eed, reinterpret_cast<uintptr_t>(simple->callee().get()));
  for (const Expr& a : simple->args()) h = Mix(h, reinterpret_cast<uintptr_t>(a.get()));
  return Mix(h, simple->args().size());
}

bool ValueEqual(const Expr& a, const Expr& b) {
  const CallNode* sa = SimpleCall(a);
  const CallNode* sb = SimpleCall(b);
  if (!sa || !sb) return (sa == nullptr) == (sb == nullptr) && StructuralEqual(a, b);
  if (sa->callee().get() != sb->callee().get() || sa->args().size() != sb->args().size())
    return false;
  for (size_t i = 0; i < sa->args().size(); ++i)
    if (sa->args()[i].get() != sb->args()[i].get()) return false;
  return sa->attrs().Equals(sb->attrs());
}

class Eliminator {
 public:
  explicit Eliminator(bool call_only) : call_only_(call_only) {}

  StatusOr<Function> Run(const Function& f) {
    // Sized once for the body's bindings: growing a table of a million
    // entries rehashes it again and again.
    size_t n = 0;
    for (const Block& b : f->body()->blocks()) n += b->bindings().size();
    table_.reserve(n);
    PLIR_ASSIGN_OR_RETURN(SeqExpr body, RewriteSeq(f->body(), 0));
    if (body.get() == f->body().get()) return f;
    return FunctionNode::Make(f->name(), f->params(), f->ret_type(), body, f->attrs());
  }

 private:
  // The variables bound to one value, earliest first.
  struct Entry {
    Expr value;
    std::vector<Var> vars;
  };
  using Table = std::unordered_multimap<uint64_t, Entry>;
  using Remap = std::unordered_map<const VarNode*, Var>;

  Entry* Find(const Expr& value, uint64_t h) {
    auto range = table_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
      if (ValueEqual(it->second.value, value)) return &it->second;
    return nullptr;
  }

  StatusOr<SeqExpr> RewriteSeq(const SeqExpr& seq, int depth) {
    if (depth > kMaxDepth) return TooDeep();
    bool changed = false;
    std::vector<Block> blocks;
    blocks.reserve(seq->blocks().size());
    for (const Block& b : seq->blocks()) {
      // What a dataflow block adds is undone at its end: only that is
      // recorded (copying the tables per block was quadratic in one large
      // function of many blocks).
      std::vector<uint64_t> saved_touched;
      std::vector<const VarNode*> saved_remapped;
      if (b->is_dataflow()) {
        saved_touched.swap(touched_);
        saved_remapped.swap(remapped_);
      }
      std::vector<Binding> out;
      bool block_changed = false;
      for (const Binding& binding : b->bindings()) {
        PLIR_ASSIGN_OR_RETURN(Binding nb, RewriteBinding(binding, depth + 1));
        block_changed |= nb.get() != binding.get();
        out.push_back(std::move(nb));
      }
      if (b->is_dataflow()) {
        // Dataflow variables are not visible past their block; neither are
        // the replacements made inside it.
        for (uint64_t h : touched_) {
          auto range = table_.equal_range(h);
          for (auto it = range.first; it != range.second; ++it) {
            auto& vars = it->second.vars;
            vars.erase(std::remove_if(vars.begin(), vars.end(),
                                      [](const Var& v) { return v->is_dataflow(); }),
                       vars.end());
          }
        }
        for (const VarNode* v : remapped_) remap_.erase(v);
        touched_.swap(saved_touched);
        remapped_.swap(saved_remapped);
      }
      if (block_changed) {
        changed = true;
        blocks.push_back(BindingBlockNode::Make(std::move(out), b->is_dataflow()));
      } else {
        blocks.push_back(b);
      }
    }
    PLIR_ASSIGN_OR_RETURN(Expr result, Rewrite(seq->result(), depth + 1));
    if (!changed && result.get() == seq->result().get()) return seq;
    return SeqExprNode::Make(std::move(blocks), result);
  }

  StatusOr<Binding> RewriteBinding(const Binding& b, int depth) {
    PLIR_ASSIGN_OR_RETURN(Expr value, Rewrite(b->value(), depth));
    const Var& var = b->var();
    bool candidate = (!call_only_ || value->kind() == NodeKind::kCall) && IsPure(value);
    if (candidate) {
      uint64_t h = ValueKey(value, SimpleCall(value));
      Entry* e = Find(value, h);
      if (var->is_dataflow()) touched_.push_back(h);
      if (e && !e->vars.empty()) {
        Var first = e->vars.front();
        remap_[var.get()] = first;
        remapped_.push_back(var.get());
        e->vars.push_back(var);
        return VarBindingNode::Make(var, first);
      }
      if (e) e->vars.push_back(var);
      else table_.emplace(h, Entry{value, {var}});
    }
    if (value.get() == b->value().get()) return b;
    return VarBindingNode::Make(var, value);
  }

  StatusOr<Expr> Rewrite(const Expr& e, int depth) {
    if (depth > kMaxDepth) return TooDeep();
    switch (e->kind()) {
      case NodeKind::kVar: {
        auto it = remap_.find(static_cast<const VarNode*>(e.get()));
        return it == remap_.end() ? e : Expr(it->second);
      }
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(e.get());
        std::vector<Expr> args;
        for (size_t i = 0; i < c->args().size(); ++i) {
          const Expr& a = c->args()[i];
          PLIR_ASSIGN_OR_RETURN(Expr na, Rewrite(a, depth + 1));
          if (args.empty() && na.get() == a.get()) continue;  // unchanged so far
          if (args.empty()) args.assign(c->args().begin(), c->args().begin() + i);
          args.push_back(std::move(na));
        }
        if (args.empty()) return e;
        return RebuildCall(*c, c->callee(), std::move(args));
      }
      case NodeKind::kTuple: {
        std::vector<Expr> fields;
        bool changed = false;
        for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields()) {
          PLIR_ASSIGN_OR_RETURN(Expr nf, Rewrite(f, depth + 1));
          changed |= nf.get() != f.get();
          fields.push_back(std::move(nf));
        }
        if (!changed) return e;
        return Expr(TupleNode::Make(std::move(fields)));
      }
      case NodeKind::kTupleGetItem: {
        auto* t = static_cast<const TupleGetItemNode*>(e.get());
        PLIR_ASSIGN_OR_RETURN(Expr x, Rewrite(t->tuple(), depth + 1));
        if (x.get() == t->tuple().get()) return e;
        auto made = TupleGetItemNode::Make(x, t->index());
        return made.ok() ? *made : TupleGetItemNode::MakeUnchecked(x, t->index(), t->type());
      }
      case NodeKind::kIf: {
        auto* n = static_cast<const IfNode*>(e.get());
        PLIR_ASSIGN_OR_RETURN(Expr cond, Rewrite(n->cond(), depth + 1));
        PLIR_ASSIGN_OR_RETURN(SeqExpr t, RewriteBranch(n->then_body(), depth + 1));
        PLIR_ASSIGN_OR_RETURN(SeqExpr f, RewriteBranch(n->else_body(), depth + 1));
        if (cond.get() == n->cond().get() && t.get() == n->then_body().get() &&
            f.get() == n->else_body().get())
          return e;
        auto made = IfNode::Make(cond, t, f);
        return made.ok() ? *made : IfNode::MakeUnchecked(cond, t, f, n->type());
      }
      case NodeKind::kSeqExpr: {
        PLIR_ASSIGN_OR_RETURN(SeqExpr s, RewriteBranch(Downcast<SeqExprNode>(e), depth + 1));
        return Expr(s);
      }
      case NodeKind::kLocalFn: {
        // As TVM: a local function is rewritten on its own, with a clean
        // scope (no value or replacement crosses its boundary either way).
        auto* f = static_cast<const LocalFnNode*>(e.get());
        Eliminator inner(call_only_);
        PLIR_ASSIGN_OR_RETURN(SeqExpr body, inner.RewriteSeq(f->body(), depth + 1));
        if (body.get() == f->body().get()) return e;
        return Expr(LocalFnNode::Make(f->params(), f->ret_type(), body));
      }
      default:
        return e;
    }
  }

  // A nested body: sees the enclosing scope; what it binds stays inside.
  StatusOr<SeqExpr> RewriteBranch(const SeqExpr& s, int depth) {
    Table table = table_;
    Remap remap = remap_;
    StatusOr<SeqExpr> out = RewriteSeq(s, depth);
    table_ = std::move(table);
    remap_ = std::move(remap);
    return out;
  }

  static Status TooDeep() {
    return InvalidArgument("CommonSubexpressionElimination: expressions nest deeper than " +
                           std::to_string(kMaxDepth) + " levels");
  }

  bool call_only_;
  Table table_;
  Remap remap_;
  std::vector<uint64_t> touched_;            // hashes given a dataflow variable in the current block
  std::vector<const VarNode*> remapped_;     // replacements made in the current block
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
