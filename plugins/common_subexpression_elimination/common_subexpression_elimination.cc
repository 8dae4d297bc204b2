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
// Cost: one walk (the SDK's BindingMutator); a table of values keyed by
// the structural hash of each value (variables by identity), confirmed by
// structural equality, where a call of an op on variables is found under
// its first argument (ValueTable); an `if` branch undoes what it changed
// when it ends. Nested expressions recurse; nesting deeper than kMaxDepth
// is reported as an error.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/rewrite.h"
#include "ir/structural.h"
#include "ir/var_map.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

constexpr int kMaxDepth = 2000;

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

// The variables bound to one value, earliest first. Almost every value has
// one: the first is kept inline, so a table entry costs no allocation.
class VarList {
 public:
  bool empty() const { return first_.get() == nullptr; }
  const Var& front() const { return first_; }
  void push_back(Var v) {
    if (empty())
      first_ = std::move(v);
    else
      rest_.push_back(std::move(v));
  }
  // Drops the dataflow variables, keeping the order of the others.
  void EraseDataflow() {
    std::vector<Var> kept;
    if (!empty() && !first_->is_dataflow()) kept.push_back(first_);
    for (Var& v : rest_)
      if (!v->is_dataflow()) kept.push_back(std::move(v));
    rest_.clear();
    first_ = Var();
    for (Var& v : kept) push_back(std::move(v));
  }

 private:
  Var first_;
  std::vector<Var> rest_;
};

// The value table: entries in insertion order, found in one of two ways.
//
// A call of an op on variables (SimpleCall, most values) is chained under
// its first argument: a VarMap (indexed by the variable's number) holds the
// latest such entry, each entry the one before it. The argument was defined
// shortly before its uses, so the lookup reads memory the walk touched
// recently. A chain holds at most kMaxChain entries; the values of a
// variable used first by more calls than that go to the index below, so a
// lookup never walks more than kMaxChain entries.
//
// Every other value is found through an open-addressing index (linear
// probing) over the hashes. On one function of a million ops, that index
// missed the cache on nearly every lookup (most of the pass's own time,
// bench/RESULTS.md); std::unordered_multimap was slower still.
//
// Entries are never removed except by Truncate, which undoes the latest
// insertions in reverse order (what leaving an `if` branch needs): the
// latest entry heads its chain, and undoing the latest insertion of a
// linear-probing table restores it exactly. So an argument's values are in
// the index only while its chain is full.
class ValueTable {
 public:
  struct Entry {
    uint64_t hash;
    Expr value;
    VarList vars;
    uint32_t stamp = 0;              // the branch scope that last saved `vars` (see Eliminator)
    const VarNode* chain = nullptr;  // the first argument it is chained under, or null
    uint32_t previous = 0;           // the chain's entry before it: index + 1; 0 = none
  };

  void Reserve(size_t n) {
    entries_.reserve(n);
    chains_ = ChainMap(n);
  }
  size_t size() const { return entries_.size(); }
  Entry& at(uint32_t i) { return entries_[i]; }

  // The index of the entry with `hash` whose value `eq` accepts, or -1.
  // `first_arg`: the value's first argument if it is a SimpleCall with
  // arguments, else null.
  template <typename Eq>
  int64_t Find(uint64_t hash, const VarNode* first_arg, Eq eq) const {
    if (first_arg) {
      const Chain* c = chains_.Find(first_arg);
      if (!c) return -1;
      for (uint32_t i = c->latest; i != 0; i = entries_[i - 1].previous) {
        const Entry& e = entries_[i - 1];
        if (e.hash == hash && eq(e.value)) return i - 1;
      }
      if (c->length < kMaxChain) return -1;  // all of first_arg's values are chained
    }
    if (slots_.empty()) return -1;
    for (size_t i = Home(hash);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.index == 0) return -1;
      if (s.tag == static_cast<uint32_t>(hash) && eq(entries_[s.index - 1].value))
        return s.index - 1;
    }
  }

  uint32_t Insert(uint64_t hash, const VarNode* first_arg, Expr value) {
    const uint32_t index = static_cast<uint32_t>(entries_.size());
    if (first_arg) {
      Chain* c = chains_.Insert(first_arg, Chain{}).first;
      if (c->length < kMaxChain) {
        entries_.push_back(Entry{hash, std::move(value), {}, 0, first_arg, c->latest});
        c->latest = index + 1;
        ++c->length;
        return index;
      }
    }
    if (2 * (indexed_ + 1) > slots_.size()) Rehash(std::max<size_t>(16, 2 * slots_.size()));
    entries_.push_back(Entry{hash, std::move(value), {}, 0, nullptr, 0});
    Place(index + 1);
    ++indexed_;
    return index;
  }

  // Removes the entries from index `n` on, latest first.
  void Truncate(size_t n) {
    while (entries_.size() > n) {
      const Entry& e = entries_.back();
      if (e.chain) {
        Chain* c = chains_.Find(e.chain);
        c->latest = e.previous;
        --c->length;
      } else {
        uint32_t index = static_cast<uint32_t>(entries_.size());
        size_t i = Home(e.hash);
        while (slots_[i].index != index) i = (i + 1) & mask_;
        slots_[i] = Slot{};
        --indexed_;
      }
      entries_.pop_back();
    }
  }

 private:
  static constexpr uint32_t kMaxChain = 8;

  struct Chain {
    uint32_t latest = 0;  // entry index + 1; 0 = none
    uint32_t length = 0;
  };
  using ChainMap = VarMap<Chain>;

  struct Slot {
    uint32_t index = 0;  // entry index + 1; 0 = empty
    uint32_t tag = 0;    // low bits of the hash: most mismatches skip the entry
  };

  size_t Home(uint64_t hash) const { return (hash * 0x9e3779b97f4a7c15ull) >> shift_; }

  void Place(uint32_t index) {
    uint64_t hash = entries_[index - 1].hash;
    size_t i = Home(hash);
    while (slots_[i].index != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{index, static_cast<uint32_t>(hash)};
  }

  void Rehash(size_t cap) {  // cap: a power of two
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    shift_ = 64;
    for (size_t c = cap; c > 1; c >>= 1) --shift_;
    for (uint32_t i = 1; i <= entries_.size(); ++i)
      if (!entries_[i - 1].chain) Place(i);
  }

  std::vector<Entry> entries_;
  ChainMap chains_;
  std::vector<Slot> slots_;
  size_t indexed_ = 0;  // entries in slots_
  size_t mask_ = 0;
  int shift_ = 64;
};

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
    for (uint32_t i : touched_) VarsForUpdate(i).EraseDataflow();
    for (const VarNode* v : remapped_) UnmapVar(v);
    touched_.swap(saved_touched);
    remapped_.swap(saved_remapped);
    return out;
  }

  StatusOr<Binding> VisitBinding(const Binding& b) override {
    Expr value;
    if (const CallNode* c = SimpleCall(b->value()); c && depth() + 2 <= kMaxDepth) {
      value = RemapArguments(b->value(), *c);
    } else {
      PLIR_ASSIGN_OR_RETURN(value, Mutate(b->value()));
    }
    const Var& var = b->var();
    if ((!call_only_ || value->kind() == NodeKind::kCall) && IsPure(value)) {
      const CallNode* simple = SimpleCall(value);
      const VarNode* first_arg = simple && !simple->args().empty()
                                     ? static_cast<const VarNode*>(simple->args()[0].get())
                                     : nullptr;
      uint64_t h = ValueKey(value, simple);
      int64_t found =
          table_.Find(h, first_arg, [&](const Expr& v) { return ValueEqual(v, value); });
      uint32_t index =
          found >= 0 ? static_cast<uint32_t>(found) : table_.Insert(h, first_arg, value);
      if (var->is_dataflow()) touched_.push_back(index);
      VarList& vars = VarsForUpdate(index);
      if (!vars.empty()) {
        Var first = vars.front();
        RemapVar(var.get(), first);
        remapped_.push_back(var.get());
        if (scope_ != 0) branch_remapped_.push_back(var.get());
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
  // What it changes is undone when it ends: entries it added are
  // truncated, variable lists it changed are restored from the copy saved
  // at their first change in the branch, replacements it made are erased.
  StatusOr<SeqExpr> VisitNestedBody(const SeqExpr& s) override {
    uint32_t outer_scope = scope_;
    size_t outer_entries = scope_entries_;
    size_t saved = saved_vars_.size();
    size_t remapped = branch_remapped_.size();
    size_t touched = touched_.size();
    scope_ = ++scopes_;
    scope_entries_ = table_.size();
    StatusOr<SeqExpr> out = MutateBody(s);
    table_.Truncate(scope_entries_);
    // (An `if` in a dataflow block: the entries the branch added are gone.)
    touched_.erase(std::remove_if(touched_.begin() + std::min(touched, touched_.size()),
                                  touched_.end(), [&](uint32_t i) { return i >= scope_entries_; }),
                   touched_.end());
    while (saved_vars_.size() > saved) {  // latest first: the earliest copy wins
      table_.at(saved_vars_.back().entry).vars = std::move(saved_vars_.back().vars);
      saved_vars_.pop_back();
    }
    for (size_t i = remapped; i < branch_remapped_.size(); ++i) UnmapVar(branch_remapped_[i]);
    branch_remapped_.resize(remapped);
    scope_ = outer_scope;
    scope_entries_ = outer_entries;
    return out;
  }

 private:
  // What Mutate(call) gives a SimpleCall (this pass's VisitExpr and
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

  struct SavedVars {
    uint32_t entry;
    VarList vars;
  };

  VarList& VarsForUpdate(uint32_t index) {
    ValueTable::Entry& e = table_.at(index);
    if (scope_ != 0 && e.stamp != scope_ && index < scope_entries_) {
      saved_vars_.push_back(SavedVars{index, e.vars});
      e.stamp = scope_;
    }
    return e.vars;
  }

  bool call_only_;
  ValueTable table_;
  std::vector<uint32_t> touched_;         // entries given a dataflow variable in the current block
  std::vector<const VarNode*> remapped_;  // replacements made in the current block
  // Branch scopes (VisitNestedBody): 0 outside any `if` branch.
  uint32_t scope_ = 0;
  uint32_t scopes_ = 0;
  size_t scope_entries_ = 0;  // entries that existed when the current branch began
  std::vector<SavedVars> saved_vars_;
  std::vector<const VarNode*> branch_remapped_;
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
