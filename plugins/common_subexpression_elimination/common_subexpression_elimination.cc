// CommonSubexpressionElimination: within a dataflow block, a binding whose
// value is structurally equal to the value of an earlier binding of the same
// block (and pure) reuses that earlier variable.
//
// Algorithm: one scan per dataflow block with a hash table keyed by the
// structural hash of each value (variables compared by identity), confirmed
// by structural equality. A reused dataflow variable replaces later uses; an
// output variable that would be replaced by a dataflow variable is kept and
// bound to it instead (`%out = %earlier;`) so nothing escapes its block.
//
// Two implementations with the same output. FastCse makes one forward walk
// over the function (recursive, into if branches too), with flat tables
// indexed by VarNode::index(), and a single substitution per value (the
// variables replaced by earlier blocks and by earlier bindings of the same
// block); it files the values seen under an operand variable rather than in
// a block-wide hash table (BlockValues). A function with an if inside a
// dataflow block, or nested deeper than 64 levels, goes through Cse, an
// ExprMutator, as before.
#include <algorithm>
#include <unordered_map>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/structural.h"
#include "ir/rewrite.h"
#include "ir/var_map.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// Values CSE may merge: pure (SDK rule, calls of module functions count as
// impure) and free of control flow.
bool Mergeable(const Expr& e) { return IsPure(e) && !ContainsControlFlow(e.get()); }

class Cse : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* block = As<BindingBlockNode>(n);
    if (!block || !block->is_dataflow()) return n;
    std::unordered_multimap<uint64_t, Binding> seen;
    std::vector<Binding> out;
    bool changed = false;
    // Substitutes inside this block: the outer mutator has already visited
    // the block's bindings when it decides what to reuse.
    VarSubstituter local;
    bool substituting = false;
    for (const Binding& original : block->bindings()) {
      Binding b = original;
      if (substituting) {
        Expr nv = local.MutateExpr(original->value());
        if (nv.get() != original->value().get()) {
          b = VarBindingNode::Make(original->var(), nv);
          changed = true;
        }
      }
      const Expr& v = b->value();
      if (IsAtomic(v) || !Mergeable(v)) {
        out.push_back(b);
        continue;
      }
      uint64_t h = StructuralHash(v);
      const VarNode* earlier = nullptr;
      auto range = seen.equal_range(h);
      for (auto it = range.first; it != range.second; ++it) {
        if (StructuralEqual(it->second->value(), v) &&
            TypeEqual(it->second->var()->type(), b->var()->type())) {
          earlier = it->second->var().get();
          break;
        }
      }
      if (!earlier) {
        seen.emplace(h, b);
        out.push_back(b);
        continue;
      }
      changed = true;
      if (!b->var()->is_dataflow() && earlier->is_dataflow()) {
        out.push_back(VarBindingNode::Make(b->var(), Var(earlier)));
      } else {
        local.Map(b->var().get(), Var(earlier));  // later bindings of this block
        RemapVar(b->var().get(), Var(earlier));   // later blocks and the result
        substituting = true;
      }
    }
    if (!changed) return n;
    return BindingBlockNode::Make(std::move(out), true);
  }
};

// ---------------------------------------------------------------------------
// The fast path.


uint64_t Mix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ull;
  v ^= v >> 32;
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

// A call of an op on variables only, without sinfo_args: compared and hashed
// here without building StructuralEqual's tables. (Its variables are free in
// the value, so structural equality compares them by identity.)
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

// Structural equality of two values (`sa`, `sb`: their SimpleCall views).
bool ValueEqual(const Expr& a, const CallNode* sa, const Expr& b, const CallNode* sb) {
  if (!sa || !sb) return StructuralEqual(a, b);
  if (sa->callee().get() != sb->callee().get() || sa->args().size() != sb->args().size())
    return false;
  for (size_t i = 0; i < sa->args().size(); ++i)
    if (sa->args()[i].get() != sb->args()[i].get()) return false;
  return sa->attrs().Equals(sb->attrs());
}

// Values of kept bindings whose root has no variable operand: open
// addressing on the value key, each slot naming a kept binding (several
// slots may share a key). Grows from empty, so clearing it per block costs
// what the block put in.
class KeyTable {
 public:
  void Clear() {
    slots_.clear();
    size_ = 0;
  }
  // Calls fn(kept index) for each entry with key `h` until fn returns true.
  template <typename F>
  bool FindIf(uint64_t h, F&& fn) const {
    if (slots_.empty()) return false;
    for (size_t s = Start(h);; s = (s + 1) & mask_) {
      const Slot& e = slots_[s];
      if (e.index == kEmpty) return false;
      if (e.key == h && fn(e.index)) return true;
    }
  }
  void Insert(uint64_t h, uint32_t index) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    Place(h, index);
    ++size_;
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t key = 0;
    uint32_t index = kEmpty;
  };
  size_t Start(uint64_t h) const { return static_cast<size_t>(Mix(h, 0x51) >> 20) & mask_; }
  void Place(uint64_t h, uint32_t index) {
    size_t s = Start(h);
    while (slots_[s].index != kEmpty) s = (s + 1) & mask_;
    slots_[s] = {h, index};
  }
  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& e : old)
      if (e.index != kEmpty) Place(e.key, e.index);
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// The pure values kept so far in one dataflow block, for lookup by value.
//
// A value whose root is a call or tuple with a variable among its operands
// is filed under its "anchor": the operand variable with the highest
// VarNode::index() (ties: the first), i.e. usually the newest. Equal values
// have the same operands, hence the same anchor. The anchors live in a
// VarMap indexed by variable, so lookups touch memory near the current
// binding instead of a random slot of a block-sized hash table (which at
// 1M bindings cost a cache and TLB miss per binding). An anchor chains at
// most kMaxChain values; later ones go to the key table, which a lookup
// also searches when the anchor's chain is full.
class BlockValues {
 public:
  explicit BlockValues(size_t index_bound) : anchors_(index_bound) {}

  void Begin(size_t num_bindings) {
    ++gen_;
    kept_.clear();
    kept_.reserve(num_bindings);
    table_.Clear();
  }

  // The operand variable a value is filed under, or null.
  static const VarNode* AnchorOf(const Expr& v) {
    if (auto* c = As<CallNode>(v)) return NewestVar(c->args());
    if (auto* t = As<TupleNode>(v)) return NewestVar(t->fields());
    return nullptr;
  }

  // The variable of a kept binding whose value equals `v` and whose variable
  // has a type equal to `type`, or null.
  const VarNode* Find(const Expr& v, const CallNode* simple, uint64_t key, const VarNode* anchor,
                      const Type& type) const {
    const VarNode* found = nullptr;
    auto match = [&](uint32_t k) {
      const Kept& e = kept_[k];
      if (e.key != static_cast<uint32_t>(key)) return false;
      const Expr& ev = e.binding->value();
      if (!ValueEqual(ev, SimpleCall(ev), v, simple) || !TypeEqual(e.binding->var()->type(), type))
        return false;
      found = e.binding->var().get();
      return true;
    };
    if (anchor) {
      uint32_t len = 0;
      for (uint32_t k = Head(anchor); k != kNone; k = kept_[k].next, ++len)
        if (match(k)) return found;
      if (len < kMaxChain) return nullptr;
    }
    table_.FindIf(key, match);
    return found;
  }

  // Files the binding `b` (kept alive by the caller) whose value has these
  // facts.
  void Add(const VarBindingNode* b, uint64_t key, const VarNode* anchor) {
    uint32_t k = static_cast<uint32_t>(kept_.size());
    kept_.push_back({b, static_cast<uint32_t>(key), kNone});
    if (anchor) {
      uint32_t head = Head(anchor);
      uint32_t len = 0;
      for (uint32_t j = head; j != kNone && len < kMaxChain; j = kept_[j].next) ++len;
      if (len < kMaxChain) {
        kept_[k].next = head;
        anchors_.Set(anchor, Anchor{gen_, k});
        return;
      }
    }
    table_.Insert(key, k);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kMaxChain = 8;
  struct Kept {
    const VarBindingNode* binding;
    uint32_t key;   // low bits of the value key
    uint32_t next;  // the previous value under the same anchor
  };
  struct Anchor {
    uint32_t gen = 0;  // the block it belongs to; older ones are empty
    uint32_t head = kNone;
  };
  template <typename List>  // of Expr: a vector or a span
  static const VarNode* NewestVar(const List& operands) {
    const VarNode* best = nullptr;
    for (const Expr& x : operands) {
      if (x->kind() != NodeKind::kVar) continue;
      auto* var = static_cast<const VarNode*>(x.get());
      if (!best || var->index() > best->index()) best = var;
    }
    return best;
  }
  uint32_t Head(const VarNode* anchor) const {
    const Anchor* a = anchors_.Find(anchor);
    return a && a->gen == gen_ ? a->head : kNone;
  }
  uint32_t gen_ = 0;
  std::vector<Kept> kept_;
  VarMap<Anchor> anchors_;
  KeyTable table_;
};

class FastCse {
 public:
  explicit FastCse(size_t num_defs) : remap_(num_defs), values_(num_defs) {}

  // Sets *out to the result; returns false (having changed nothing) if `f`
  // holds an expression this path does not handle.
  bool Run(const Function& f, Function* out) {
    Expr body;
    Result r = SubstSeq(f->body(), &body, 0);
    if (r == kUnsupported) return false;
    *out = r == kSame ? f
                      : FunctionNode::Make(f->name(), f->params(), f->ret_type(),
                                           Downcast<SeqExprNode>(body), f->attrs());
    return true;
  }

 private:
  using Result = RewriteResult;
  static constexpr Result kSame = Result::kSame, kChanged = Result::kChanged,
                          kUnsupported = Result::kUnsupported;
  // Expressions nest at most this deep here (recursion); deeper ones take
  // the ExprMutator, which has no limit.
  static constexpr int kMaxDepth = 64;

  // A body: its blocks in order, then its result; rebuilt if any changed.
  Result SubstSeq(const SeqExpr& seq, Expr* out, int depth) {
    if (depth >= kMaxDepth) return kUnsupported;
    const auto& blocks = seq->blocks();
    std::vector<Block> new_blocks;
    Result rl = RewriteEach(std::span<const Block>(blocks), &new_blocks, [&](const Block& b, Block* x) {
      return b->is_dataflow() ? CseBlock(b, x, depth + 1) : SubstBlock(b, x, depth + 1);
    });
    if (rl == kUnsupported) return rl;
    bool changed = rl == kChanged;
    Expr result;
    Result rr = Subst(seq->result(), &result, depth + 1);
    if (rr == kUnsupported) return rr;
    if (!changed && rr == kSame) return kSame;
    if (!changed) new_blocks = blocks;
    *out = SeqExprNode::Make(std::move(new_blocks), rr == kChanged ? std::move(result) : seq->result());
    return kChanged;
  }

  // Replaces the remapped variables under `e`, rebuilding what changed the
  // way ExprMutator does (op calls re-infer their type).
  Result Subst(const Expr& e, Expr* out, int depth) {
    switch (e->kind()) {
      case NodeKind::kVar: {
        const Var* to = remap_.Find(static_cast<const VarNode*>(e.get()));
        if (!to || to->get() == e.get()) return kSame;
        *out = *to;
        return kChanged;
      }
      case NodeKind::kGlobalVar:
      case NodeKind::kOp:
      case NodeKind::kPrimValue:
      case NodeKind::kStringImm:
      case NodeKind::kConstant:
        return kSame;
      case NodeKind::kTuple: {
        if (depth >= kMaxDepth) return kUnsupported;
        const auto& fields = static_cast<const TupleNode*>(e.get())->fields();
        std::vector<Expr> nf;
        Result rl = RewriteEach(std::span<const Expr>(fields), &nf,
                                [&](const Expr& item, Expr* x) { return Subst(item, x, depth + 1); });
        if (rl == kUnsupported) return rl;
        if (rl == kSame) return kSame;
        *out = TupleNode::Make(std::move(nf));
        return kChanged;
      }
      case NodeKind::kTupleGetItem: {
        if (depth >= kMaxDepth) return kUnsupported;
        auto* t = static_cast<const TupleGetItemNode*>(e.get());
        Expr x;
        Result r = Subst(t->tuple(), &x, depth + 1);
        if (r != kChanged) return r;
        auto made = TupleGetItemNode::Make(x, t->index());
        *out = made.ok() ? *made : TupleGetItemNode::MakeUnchecked(x, t->index(), t->type());
        return kChanged;
      }
      case NodeKind::kCall: {
        if (depth >= kMaxDepth) return kUnsupported;
        auto* c = static_cast<const CallNode*>(e.get());
        Expr callee;
        Result rc = Subst(c->callee(), &callee, depth + 1);
        if (rc == kUnsupported) return rc;
        const auto& args = c->args();
        std::vector<Expr> na;  // every argument once the callee changed
        Result ra = RewriteEach(
            args, &na, [&](const Expr& a, Expr* x) { return Subst(a, x, depth + 1); }, rc == kChanged);
        if (ra == kUnsupported) return ra;
        bool changed = rc == kChanged || ra == kChanged;
        if (!changed) return kSame;
        if (rc != kChanged) callee = c->callee();
        *out = RebuildCall(*c, callee, std::move(na));
        return kChanged;
      }
      case NodeKind::kIf: {
        // Inside a dataflow block, Cse cleans a nested body before it
        // substitutes the block's own replacements into it; the fused
        // substitution here would see them earlier. Leave that to Cse.
        if (depth >= kMaxDepth || in_dataflow_block_) return kUnsupported;
        auto* n = static_cast<const IfNode*>(e.get());
        Expr cond, then_body, else_body;
        Result rc = Subst(n->cond(), &cond, depth + 1);
        if (rc == kUnsupported) return rc;
        Result rt = SubstSeq(n->then_body(), &then_body, depth + 1);
        if (rt == kUnsupported) return rt;
        Result re = SubstSeq(n->else_body(), &else_body, depth + 1);
        if (re == kUnsupported) return re;
        if (rc == kSame && rt == kSame && re == kSame) return kSame;
        if (rc == kSame) cond = n->cond();
        SeqExpr t = rt == kSame ? n->then_body() : Downcast<SeqExprNode>(then_body);
        SeqExpr f = re == kSame ? n->else_body() : Downcast<SeqExprNode>(else_body);
        auto made = IfNode::Make(cond, t, f);
        *out = made.ok() ? *made : IfNode::MakeUnchecked(cond, t, f, n->type());
        return kChanged;
      }
      case NodeKind::kSeqExpr:
        if (in_dataflow_block_) return kUnsupported;
        return SubstSeq(Downcast<SeqExprNode>(e), out, depth + 1);
      default:
        return kUnsupported;
    }
  }

  // The SDK's rule without module knowledge (as Mergeable; values of
  // dataflow blocks hold no `if` here).
  static bool Pure(const Expr& e) { return IsPure(e); }

  // An ordinary block: substitution only.
  Result SubstBlock(const Block& block, Block* out, int depth) {
    const auto& bindings = block->bindings();
    std::vector<Binding> nb;
    Result r = RewriteEach(bindings, &nb, [&](const Binding& b, Binding* x) {
      Expr v;
      Result rv = Subst(b->value(), &v, depth);
      if (rv == kChanged) *x = VarBindingNode::Make(b->var(), std::move(v));
      return rv;
    });
    if (r != kChanged) return r;
    *out = BindingBlockNode::Make(std::move(nb), false);
    return kChanged;
  }

  // A dataflow block: substitution, then the scan of Cse::Rewrite.
  Result CseBlock(const Block& block, Block* out, int depth) {
    in_dataflow_block_ = true;
    Result r = CseBlockBindings(block, out, depth);
    in_dataflow_block_ = false;
    return r;
  }

  Result CseBlockBindings(const Block& block, Block* out, int depth) {
    const auto& bindings = block->bindings();
    values_.Begin(bindings.size());
    std::vector<Binding> nb;  // the new bindings, once something changed
    bool changed = false;
    auto start_changes = [&](size_t i) {
      if (changed) return;
      changed = true;
      nb.reserve(bindings.size());
      nb.assign(bindings.begin(), bindings.begin() + i);
    };
    for (size_t i = 0; i < bindings.size(); ++i) {
      const Binding& original = bindings[i];
      Expr nv;
      Result r = Subst(original->value(), &nv, depth);
      if (r == kUnsupported) return r;
      Binding rebuilt;
      if (r == kChanged) {
        rebuilt = VarBindingNode::Make(original->var(), std::move(nv));
        start_changes(i);
      }
      const Binding& b = r == kChanged ? rebuilt : original;
      const Expr& v = b->value();
      if (IsAtomic(v) || !Pure(v)) {
        if (changed) nb.push_back(b);
        continue;
      }
      const CallNode* simple = SimpleCall(v);
      uint64_t h = ValueKey(v, simple);
      const VarNode* anchor = BlockValues::AnchorOf(v);
      const VarNode* earlier = values_.Find(v, simple, h, anchor, b->var()->type());
      if (!earlier) {
        values_.Add(b.get(), h, anchor);  // `b` is held by the input or by `nb`
        if (changed) nb.push_back(b);
        continue;
      }
      start_changes(i);
      if (!b->var()->is_dataflow() && earlier->is_dataflow()) {
        nb.push_back(VarBindingNode::Make(b->var(), Var(earlier)));
      } else {
        remap_.Set(b->var().get(), Var(earlier));  // later bindings, blocks and the result
      }
    }
    if (!changed) return kSame;
    *out = BindingBlockNode::Make(std::move(nb), true);
    return kChanged;
  }

  VarMap<Var> remap_;
  BlockValues values_;  // of the dataflow block being scanned (they never nest here)
  bool in_dataflow_block_ = false;
};

// A bound for the variable indices of `f` (parsed functions number their
// variables in text order, nested ones included): past the last top-level
// binding's index, within reason. Variables beyond it go to the tables'
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

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "CommonSubexpressionElimination";
  def.info.description =
      "within a dataflow block, reuses an earlier binding of a structurally equal pure expression";
  def.info.kind = PassKind::kFunction;
  def.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    Function out;
    if (FastCse(IndexBound(f)).Run(f, &out)) return out;
    return Cse().MutateFunction(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("common_subexpression_elimination", "1.0", Register)
