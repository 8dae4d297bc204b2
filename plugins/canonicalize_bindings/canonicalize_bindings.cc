// CanonicalizeBindings: what TVM Relax's CanonicalizeBindings does.
//
// First, symbolic dimensions a match_cast gives known values are replaced
// by those values (SymbolCanonicalizer; only when the planning walk below
// meets a match_cast, and then the result is planned again). Then a walk
// over the function plans, and a second applies the plan:
//
// - Trivial bindings `%y = %x` (also `%y = match_cast(%x, T)` where T is
//   already %x's type, `%y = %t.i` where %t is bound to a
//   literal tuple whose field i is a variable, and `%y = (%t.0, ..., %t.n)`
//   re-packing every field of %t in order) are removed and uses of %y read
//   %x. Chains collapse in one run. Exception: if %y is an ordinary
//   variable used outside its dataflow block and %x a dataflow variable, %x
//   would escape its block; then %x's definition is renamed to %y instead
//   (`%x = e; %y = %x` becomes `%y = e`).
// - A variable found through a tuple may be defined in another block than
//   the binding (`%t = (%x, %w)` output by one dataflow block, `%y = %t.0`
//   in a later one). Reading %x there is a new use of it, so an ordinary
//   %x stays ordinary. A dataflow %x is not visible there: the binding
//   stays, unless %y is an ordinary variable used outside its block (then
//   %x's definition is renamed to %y, as above).
// - An ordinary variable defined in a dataflow block and used nowhere
//   outside that block becomes a dataflow variable (it drops out of the
//   block's `output` line).
// - Uses of a variable bound to a constant read the constant (the binding
//   stays; DeadCodeElimination removes it once unused).
// - A binding whose value changed and now has a more specific type gets a
//   new variable of that type (as Relax's ExprMutator re-infers it).
// - Blocks left empty are dropped.
// - Local functions (`fn`) are canonicalized with the function, by the same
//   rules; a call of a variable is a use of it.
//
// Deliberate difference: a binding whose annotation differs from its
// source's type (`%a: Tensor = %x`) is not trivial here (TVM treats every
// VarBinding as trivial; its own test of that, test_casting, is xfail).
//
// Cost: two walks of the function (the rewrites are the SDK's
// BindingMutator), hash maps keyed by variable. Nested expressions recurse;
// nesting deeper than kMaxDepth is reported as an error.
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/op.h"
#include "ir/rewrite.h"
#include "ir/var_map.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

constexpr int kMaxDepth = 2000;

bool IsMatchCast(const Expr& e) {
  auto* c = As<CallNode>(e);
  if (!c || c->args().size() != 1) return false;
  auto* op = As<OpNode>(c->callee());
  return op && op->name() == "match_cast";
}

// The first half of TVM's CanonicalizeBindings (its SymbolicVarCanonicalizer):
// a match_cast whose value has known dimensions where its type has symbolic
// ones gives those names values (`match_cast(%x: (m, n), T[(o, p)])` makes
// o = m and p = n; a constant dimension gives a constant), which are then
// substituted in every type after it, in its scope (an if branch keeps its
// own). A cast whose type becomes the value's type is then trivial and the
// second half removes it. Two casts giving one name different values are an
// error, as in TVM.
class SymbolCanonicalizer : public BindingMutator {
 public:
  SymbolCanonicalizer() : BindingMutator("CanonicalizeBindings", kMaxDepth) {}

  StatusOr<Function> Run(const Function& f) {
    PLIR_ASSIGN_OR_RETURN(SeqExpr body, MutateBody(f->body()));
    Type ret = f->ret_type() ? Subst(f->ret_type()) : f->ret_type();
    if (ret && body.get() != f->body().get() && !TypeEqual(body->type(), ret) &&
        TypeEqual(JoinTypes(body->type(), ret), ret))
      ret = body->type();
    if (body.get() == f->body().get() && ret.get() == f->ret_type().get()) return f;
    return FunctionNode::Make(f->name(), f->params(), ret, body, f->attrs());
  }

 private:
  // A name with a value takes it; an expression (`N1 + N2`) is rebuilt from
  // its names' values and folds where they are constants.
  Dim SubstDim(const Dim& d) const {
    if (d.is_const()) return d;
    return SubstituteDim(d, [&](Symbol s) -> std::optional<Dim> {
      auto it = known_.find(s);
      return it == known_.end() ? std::nullopt : std::optional<Dim>(it->second);
    });
  }
  Type Subst(const Type& t) const {
    if (known_.empty() || !t) return t;
    switch (t->kind()) {
      case NodeKind::kTensorType: {
        auto* tt = static_cast<const TensorTypeNode*>(t.get());
        if (!tt->has_shape()) return t;
        std::vector<Dim> dims;
        bool changed = false;
        for (const Dim& d : tt->shape()) {
          dims.push_back(SubstDim(d));
          changed |= dims.back() != d;
        }
        return changed ? TensorTypeNode::Make(std::move(dims), tt->dtype()) : t;
      }
      case NodeKind::kShapeType: {
        auto* st = static_cast<const ShapeTypeNode*>(t.get());
        if (!st->has_values()) return t;
        std::vector<Dim> dims;
        bool changed = false;
        for (const Dim& d : st->values()) {
          dims.push_back(SubstDim(d));
          changed |= dims.back() != d;
        }
        return changed ? ShapeTypeNode::Make(std::move(dims)) : t;
      }
      case NodeKind::kPrimType: {
        auto* pt = static_cast<const PrimTypeNode*>(t.get());
        if (!pt->has_value()) return t;
        Dim d = SubstDim(pt->value());
        return d == pt->value() ? t : PrimTypeNode::MakeValue(pt->dtype(), d);
      }
      case NodeKind::kTupleType: {
        std::vector<Type> fields;
        bool changed = false;
        for (const Type& f : static_cast<const TupleTypeNode*>(t.get())->fields()) {
          fields.push_back(Subst(f));
          changed |= fields.back().get() != f.get();
        }
        return changed ? TupleTypeNode::Make(std::move(fields)) : t;
      }
      default:
        return t;
    }
  }
  // Gives the symbolic dimensions of `target` the values `value` has there.
  Status Infer(const Type& value, const Type& target, const std::string& where) {
    if (!value || !target) return Status::Ok();
    auto dims = [&](const std::vector<Dim>& v, const std::vector<Dim>& t) -> Status {
      if (v.size() != t.size()) return Status::Ok();
      for (size_t i = 0; i < v.size(); ++i) {
        // Only a bare name is given a value (in `m * n` the names are uses).
        if (t[i].is_const() || v[i] == t[i] || DimIsExpr(t[i])) continue;
        auto it = known_.find(t[i].sym);
        if (it != known_.end()) {
          if (it->second != v[i] && it->second.is_const() && v[i].is_const())
            return InvalidArgument(
                "CanonicalizeBindings: match_cast statements must be consistent, "
                "but " +
                where + " implies that " + t[i].sym.str() + " is " + DimToString(v[i]) +
                " where it is " + DimToString(it->second));
          continue;
        }
        known_[t[i].sym] = v[i];
      }
      return Status::Ok();
    };
    if (auto* vt = As<TensorTypeNode>(value)) {
      auto* tt = As<TensorTypeNode>(target);
      if (tt && vt->has_shape() && tt->has_shape()) return dims(vt->shape(), tt->shape());
    } else if (auto* vs = As<ShapeTypeNode>(value)) {
      auto* ts = As<ShapeTypeNode>(target);
      if (ts && vs->has_values() && ts->has_values()) return dims(vs->values(), ts->values());
    } else if (auto* vu = As<TupleTypeNode>(value)) {
      auto* tu = As<TupleTypeNode>(target);
      if (tu && tu->fields().size() == vu->fields().size())
        for (size_t i = 0; i < vu->fields().size(); ++i)
          PLIR_RETURN_IF_ERROR(Infer(vu->fields()[i], tu->fields()[i], where));
    }
    return Status::Ok();
  }

  // A branch's names stay in it.
  StatusOr<SeqExpr> VisitSeqExpr(const SeqExpr& seq) override {
    auto saved = known_;
    StatusOr<SeqExpr> out = BindingMutator::VisitSeqExpr(seq);
    if (out.ok() && depth() > 0) known_ = std::move(saved);
    return out;
  }

  StatusOr<Binding> VisitBinding(const Binding& binding) override {
    Expr value;
    if (IsMatchCast(binding->value())) {
      // The cast's own type gives names values before it is rewritten.
      auto* c = static_cast<const CallNode*>(binding->value().get());
      PLIR_ASSIGN_OR_RETURN(Expr arg, Mutate(c->args()[0]));
      PLIR_RETURN_IF_ERROR(Infer(arg->type(), c->sinfo_args()[0],
                                 "the match_cast bound to %" + binding->var()->name_hint()));
      Type target = Subst(c->sinfo_args()[0]);
      if (target.get() != c->sinfo_args()[0].get() || arg.get() != c->args()[0].get()) {
        PLIR_ASSIGN_OR_RETURN(value, MakeOpCall("match_cast", {arg}, c->attrs(), {target}));
      } else {
        value = binding->value();
      }
    } else {
      PLIR_ASSIGN_OR_RETURN(value, Mutate(binding->value()));
    }
    Var var = binding->var();
    Type vt = Subst(var->type());
    // A changed value whose type refines the variable's (not a copy kept
    // for its annotation) retypes it, as Relax's ExprMutator does.
    if (value.get() != binding->value().get() && value->kind() != NodeKind::kVar &&
        !TypeEqual(value->type(), vt) && TypeEqual(JoinTypes(value->type(), vt), vt))
      vt = value->type();
    if (vt.get() != var->type().get()) {
      Var nv = VarNode::Make(var->hint(), vt, var->is_dataflow());
      RemapVar(var.get(), nv);
      var = nv;
    }
    return Rebind(binding, std::move(var), std::move(value));
  }

  StatusOr<Expr> VisitExpr(const Expr& e) override {
    switch (e->kind()) {
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(e.get());
        std::vector<Expr> args;
        bool changed = false;
        for (const Expr& a : c->args()) {
          PLIR_ASSIGN_OR_RETURN(Expr na, Mutate(a));
          changed |= na.get() != a.get();
          args.push_back(std::move(na));
        }
        std::vector<Type> sinfo;
        bool sinfo_changed = false;
        for (const Type& t : c->sinfo_args()) {
          sinfo.push_back(Subst(t));
          sinfo_changed |= sinfo.back().get() != t.get();
        }
        Expr callee = c->callee();
        if (callee->kind() == NodeKind::kVar) {  // a call of a function value
          PLIR_ASSIGN_OR_RETURN(callee, Mutate(callee));
          changed |= callee.get() != c->callee().get();
        }
        if (!changed && !sinfo_changed) return e;
        if (!sinfo_changed) return RebuildCall(*c, callee, std::move(args));
        if (auto* op = As<OpNode>(c->callee())) {
          auto made = MakeOpCall(Ref<OpNode>(op), args, c->attrs(), sinfo);
          if (made.ok()) return *made;
        }
        return Expr(CallNode::MakeUnchecked(callee, std::move(args), c->attrs(), std::move(sinfo),
                                            Subst(c->type())));
      }
      case NodeKind::kShapeExpr: {  // shape[(N1, 4)]: its names too
        if (known_.empty()) return e;
        std::vector<Dim> dims;
        bool changed = false;
        for (const Dim& d : static_cast<const ShapeExprNode*>(e.get())->values()) {
          dims.push_back(SubstDim(d));
          changed |= dims.back() != d;
        }
        return changed ? Expr(ShapeExprNode::Make(std::move(dims))) : e;
      }
      case NodeKind::kPrimExpr: {  // prim[N1]: the literal once N1 is known
        const Dim& d = static_cast<const PrimExprNode*>(e.get())->value();
        Dim n = SubstDim(d);
        return n == d ? e : PrimExprNode::Make(n);
      }
      default:
        return BindingMutator::VisitExpr(e);
    }
  }

  std::unordered_map<Symbol, Dim> known_;
};

struct Plan {
  explicit Plan(size_t expected)
      : replace_usage(expected),
        replace_binding(expected),
        remove(expected),
        inline_constant(expected) {}
  VarMap<Var> replace_usage;
  VarMap<Var> replace_binding;
  VarMap<char> remove;
  VarMap<Expr> inline_constant;
};

template <typename V>
void Set(VarMap<V>& m, const VarNode* k, V v) {
  auto [p, inserted] = m.Insert(k, v);
  if (!inserted) *p = std::move(v);
}

// The first walk: which bindings are trivial, where each variable is
// defined and used.
//
// Only what the plan reads is recorded, so that a function with nothing to
// do (most bindings `%v = op(...)` of dataflow variables) costs one map
// entry a binding: known values only of the kinds the tuple lookups follow
// (a variable, a tuple, a tuple item: a call is never looked through), and
// uses and definitions in dataflow blocks only of ordinary variables (the
// plan asks whether a variable is used outside its block only of those).
// The other maps are small and start empty (their variables go to VarMap's
// table, not to an array the size of the function).
class Planner {
 public:
  // `match_cast`: the registered op (or null), whose calls the walk notes.
  Planner(size_t expected_vars, const OpNode* match_cast)
      : match_cast_(match_cast), def_block_(expected_vars) {}

  // Whether the walk met a call of match_cast (anywhere, nested too).
  bool saw_match_cast() const { return saw_match_cast_; }

  Status Walk(const Function& f) {
    PLIR_RETURN_IF_ERROR(WalkSeq(f->body(), 0));
    return Status::Ok();
  }

  Plan MakePlan(size_t expected) {
    Plan plan(expected);
    for (const Var& v : defined_in_dataflow_) {
      if (v->is_dataflow() || used_outside_.Contains(v.get())) continue;
      Var dv = VarNode::Make(v->hint(), v->type(), /*is_dataflow=*/true);
      Set(plan.replace_binding, v.get(), dv);
      Set(plan.replace_usage, v.get(), dv);
    }
    for (const auto& [v, c] : constants_) Set(plan.inline_constant, v, c);
    // `%y = %t.0` resolved to a dataflow variable of another block is
    // trivial only if %y's definition can take over that variable's.
    for (Trivial& t : trivial_)
      if (t.parent_elsewhere && (t.var->is_dataflow() || !used_outside_.Contains(t.var.get())))
        t.kept = true;
    for (const Trivial& t : trivial_) {
      if (t.kept) continue;
      const Var& var = t.var;
      Var to = t.parent;
      for (const size_t* it = trivial_index_.Find(to.get()); it && !trivial_[*it].kept;
           it = trivial_index_.Find(to.get()))
        to = trivial_[*it].parent;
      for (const Var* it = plan.replace_binding.Find(to.get()); it;
           it = plan.replace_binding.Find(to.get()))
        to = *it;
      if (var->is_dataflow() || !to->is_dataflow() || !used_outside_.Contains(var.get())) {
        Set(plan.replace_usage, var.get(), to);
      } else {
        // `%out = %dataflow_var` with %out used later: define %out where
        // the dataflow variable was defined.
        Set(plan.replace_binding, to.get(), var);
        Set(plan.replace_usage, to.get(), var);
      }
      Set<char>(plan.remove, var.get(), 1);
    }
    return plan;
  }

 private:
  Status WalkSeq(const SeqExpr& seq, int depth) {
    if (depth > kMaxDepth) return TooDeep();
    const BindingBlockNode* saved = block_;
    for (const Block& b : seq->blocks()) {
      block_ = b.get();
      for (const Binding& binding : b->bindings())
        PLIR_RETURN_IF_ERROR(WalkBinding(binding, depth));
    }
    block_ = nullptr;
    PLIR_RETURN_IF_ERROR(WalkUses(seq->result(), depth + 1));
    block_ = saved;
    return Status::Ok();
  }

  Status WalkBinding(const Binding& b, int depth) {
    const Var& var = b->var();
    Expr value = b->value();
    // `%y = match_cast(%x, T)`: as `%y = %x` when %y's type is %x's (the
    // cast checks nothing new); as TVM's planner, the cast's value is what
    // the binding is known to hold.
    if (IsMatchCast(value)) {
      value = static_cast<const CallNode*>(value.get())->args()[0];
      if (!TypeEqual(var->type(), value->type())) {
        known_.Insert(var.get(), value);
        def_block_.Insert(var.get(), block_);
        if (block_->is_dataflow() && !var->is_dataflow()) defined_in_dataflow_.push_back(var);
        return WalkUses(b->value(), depth + 1);
      }
    }
    const Expr operand = value;  // what the binding reads directly
    if (auto* get = As<TupleGetItemNode>(value)) {
      Expr tuple = get->tuple();
      while (auto* tv = As<VarNode>(tuple)) {
        const Expr* k = known_.Find(tv);
        if (!k) break;
        tuple = *k;
      }
      if (auto* t = As<TupleNode>(tuple);
          t && get->index() >= 0 && get->index() < static_cast<int64_t>(t->fields().size()))
        value = t->fields()[get->index()];
    } else if (auto* t = As<TupleNode>(value)) {
      if (Expr whole = RepackedTuple(*t)) value = whole;
    }
    if (auto* parent = As<VarNode>(value); parent && TypeEqual(var->type(), parent->type())) {
      // A variable found through a tuple is read here once %var's uses
      // read it: a use in this block, which a dataflow variable of another
      // block cannot have.
      bool elsewhere = false;
      if (value.get() != operand.get()) {
        const BindingBlockNode* const* def = def_block_.Find(parent);
        elsewhere = parent->is_dataflow() && (!def || *def != block_);
        if (!elsewhere) NoteUse(parent);
      }
      trivial_index_.Insert(var.get(), trivial_.size());
      trivial_.push_back({var, Downcast<VarNode>(value), elsewhere, false});
    }
    if (value->kind() == NodeKind::kConstant) constants_.emplace_back(var.get(), value);
    if (IsLookedThrough(value->kind())) known_.Insert(var.get(), value);
    def_block_.Insert(var.get(), block_);
    if (block_->is_dataflow() && !var->is_dataflow()) defined_in_dataflow_.push_back(var);
    return WalkUses(b->value(), depth + 1);
  }

  // `(%a, %b, %c)` where %a, %b, %c are bound to `%t.0`, `%t.1`, `%t.2` of
  // one 3-tuple %t: the value is %t itself.
  Expr RepackedTuple(const TupleNode& t) {
    const Expr* whole = nullptr;
    for (size_t i = 0; i < t.fields().size(); ++i) {
      auto* fv = As<VarNode>(t.fields()[i]);
      if (!fv) return Expr();
      const Expr* k = known_.Find(fv);
      if (!k) return Expr();
      auto* get = As<TupleGetItemNode>(*k);
      if (!get || get->index() != static_cast<int64_t>(i) || !As<VarNode>(get->tuple()))
        return Expr();
      if (whole && whole->get() != get->tuple().get()) return Expr();
      whole = &get->tuple();
    }
    if (!whole) return Expr();
    auto* tt = As<TupleTypeNode>((*whole)->type());
    if (!tt || tt->fields().size() != t.fields().size()) return Expr();
    return *whole;
  }

  Status WalkUses(const Expr& e, int depth) {
    if (depth > kMaxDepth) return TooDeep();
    switch (e->kind()) {
      case NodeKind::kVar:
        NoteUse(static_cast<const VarNode*>(e.get()));
        return Status::Ok();
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(e.get());
        if (c->callee().get() == match_cast_) saw_match_cast_ = true;
        if (c->callee()->kind() == NodeKind::kVar)
          PLIR_RETURN_IF_ERROR(WalkUses(c->callee(), depth + 1));
        for (const Expr& a : c->args()) PLIR_RETURN_IF_ERROR(WalkUses(a, depth + 1));
        return Status::Ok();
      }
      case NodeKind::kLocalFn:
        // Its body's blocks are planned like the function's; a use of an
        // enclosing variable inside it counts as a use outside that
        // variable's block.
        return WalkSeq(static_cast<const LocalFnNode*>(e.get())->body(), depth + 1);
      case NodeKind::kTuple:
        for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields())
          PLIR_RETURN_IF_ERROR(WalkUses(f, depth + 1));
        return Status::Ok();
      case NodeKind::kTupleGetItem:
        return WalkUses(static_cast<const TupleGetItemNode*>(e.get())->tuple(), depth + 1);
      case NodeKind::kIf: {
        auto* n = static_cast<const IfNode*>(e.get());
        PLIR_RETURN_IF_ERROR(WalkUses(n->cond(), depth + 1));
        PLIR_RETURN_IF_ERROR(WalkSeq(n->then_body(), depth + 1));
        return WalkSeq(n->else_body(), depth + 1);
      }
      case NodeKind::kSeqExpr:
        return WalkSeq(Downcast<SeqExprNode>(e), depth + 1);
      default:
        return Status::Ok();
    }
  }

  // The values the lookups of known_ act on: a variable (followed to its
  // value), a tuple (a field taken) or a tuple item (a field put back). For
  // any other value a lookup ends as if nothing were known.
  static bool IsLookedThrough(NodeKind k) {
    return k == NodeKind::kVar || k == NodeKind::kTuple || k == NodeKind::kTupleGetItem;
  }

  // A use of `v` in the current block. Only an ordinary variable's uses
  // outside its block are asked for (MakePlan).
  void NoteUse(const VarNode* v) {
    if (v->is_dataflow()) return;
    bool in_dataflow = block_ && block_->is_dataflow();
    const BindingBlockNode* const* def = def_block_.Find(v);
    if (!in_dataflow || (def && *def != block_)) used_outside_.Insert(v, 1);
  }

  static Status TooDeep() {
    return InvalidArgument("CanonicalizeBindings: expressions nest deeper than " +
                           std::to_string(kMaxDepth) + " levels");
  }

  const OpNode* match_cast_;
  bool saw_match_cast_ = false;
  const BindingBlockNode* block_ = nullptr;
  VarMap<const BindingBlockNode*> def_block_;
  VarMap<Expr> known_;
  struct Trivial {
    Var var, parent;
    bool parent_elsewhere;  // parent: a dataflow variable of another block
    bool kept;              // the binding stays (set by MakePlan)
  };
  std::vector<Trivial> trivial_;  // in binding order
  VarMap<size_t> trivial_index_;
  std::vector<std::pair<const VarNode*, Expr>> constants_;
  std::vector<Var> defined_in_dataflow_;  // ordinary variables only
  VarMap<char> used_outside_;             // ordinary variables only
};

// The second walk: applies a plan.
class Applier : public BindingMutator {
 public:
  explicit Applier(Plan plan)
      : BindingMutator("CanonicalizeBindings", kMaxDepth), plan_(std::move(plan)) {}

  StatusOr<Function> Run(const Function& f) {
    PLIR_ASSIGN_OR_RETURN(SeqExpr body, MutateBody(f->body()));
    if (body.get() == f->body().get()) return f;
    // A body whose type became more specific refines the return type too.
    Type ret = f->ret_type();
    if (ret && !TypeEqual(body->type(), ret) && TypeEqual(JoinTypes(body->type(), ret), ret))
      ret = body->type();
    return FunctionNode::Make(f->name(), f->params(), ret, body, f->attrs());
  }

 private:
  StatusOr<Block> VisitBindingBlock(const Block& b) override {
    if (b->bindings().empty()) return Block();  // empty blocks are dropped
    return BindingMutator::VisitBindingBlock(b);
  }

  StatusOr<Binding> VisitBinding(const Binding& binding) override {
    if (plan_.remove.Contains(binding->var().get())) return Binding();
    PLIR_ASSIGN_OR_RETURN(Expr value, Mutate(binding->value()));
    Var var = binding->var();
    for (const Var* it = plan_.replace_binding.Find(var.get()); it;
         it = plan_.replace_binding.Find(var.get()))
      var = *it;
    // (Not for a copy `%a: T = %x` kept for its annotation: that is a cast.)
    if (value.get() != binding->value().get() && value->kind() != NodeKind::kVar &&
        !TypeEqual(value->type(), var->type()) &&
        TypeEqual(JoinTypes(value->type(), var->type()), var->type())) {
      // The new value's type refines the variable's.
      Var refined = VarNode::Make(var->hint(), value->type(), var->is_dataflow());
      retyped_[var.get()] = refined;
      var = refined;
    }
    return Rebind(binding, std::move(var), std::move(value));
  }

  Expr VisitVarUse(const Expr& e) override {
    const VarNode* v = static_cast<const VarNode*>(e.get());
    Expr cur = e;
    for (const Var* it = plan_.replace_usage.Find(v); it; it = plan_.replace_usage.Find(v)) {
      cur = *it;
      v = it->get();
    }
    if (const Expr* c = plan_.inline_constant.Find(v)) return *c;
    if (auto it = retyped_.find(v); it != retyped_.end()) return it->second;
    return cur;
  }

  Plan plan_;
  std::unordered_map<const VarNode*, Var> retyped_;
};

StatusOr<Function> Canonicalize(const Function& input) {
  const Op match_cast = OpRegistry::Global().Lookup("match_cast");
  size_t expected = input->params().size() + 64;
  for (const Block& b : input->body()->blocks()) expected += b->bindings().size();
  Function f = input;
  std::optional<Planner> planner(std::in_place, expected, match_cast.get());
  Status walked = planner->Walk(f);
  // A match_cast anywhere (the planner's walk notes one; a rare shape), or
  // an error: the symbols are canonicalized first, as TVM does, and the
  // result is planned afresh (an error is then the first of the two walks').
  if (!walked.ok() || planner->saw_match_cast()) {
    PLIR_ASSIGN_OR_RETURN(f, SymbolCanonicalizer().Run(input));
    planner.emplace(expected, match_cast.get());
    PLIR_RETURN_IF_ERROR(planner->Walk(f));
  }
  Plan plan = planner->MakePlan(expected);
  if (plan.replace_usage.empty() && plan.replace_binding.empty() && plan.remove.empty() &&
      plan.inline_constant.empty())
    return f;  // nothing to do
  return Applier(std::move(plan)).Run(f);
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "CanonicalizeBindings";
  def.info.description =
      "removes trivial variable bindings (renaming definitions so that dataflow variables do "
      "not escape), turns outputs used only in their block into dataflow variables and "
      "propagates constants, as TVM's CanonicalizeBindings";
  def.info.kind = PassKind::kFunction;
  def.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
    return Canonicalize(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("canonicalize_bindings", "1.0", Register)
