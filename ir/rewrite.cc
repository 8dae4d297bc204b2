// The SDK's rewriting helpers (see rewrite.h).
#include "ir/rewrite.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

#include "ir/analysis/def_use.h"
#include "ir/analysis/free_vars.h"
#include "ir/analysis/unused_bindings.h"
#include "ir/visitor.h"

namespace plir {

// ---------------------------------------------------------------------------
// BindingMutator.

Status BindingMutator::TooDeep() const {
  return InvalidArgument(pass_name_ + ": expressions nest deeper than " +
                         std::to_string(max_depth_) + " levels");
}

StatusOr<Function> BindingMutator::MutateFunction(const Function& f) {
  PLIR_ASSIGN_OR_RETURN(SeqExpr body, MutateBody(f->body()));
  if (body.get() == f->body().get()) return f;
  return FunctionNode::Make(f->name(), f->params(), f->ret_type(), body, f->attrs());
}

StatusOr<SeqExpr> BindingMutator::MutateBody(const SeqExpr& seq) {
  if (++depth_ > max_depth_) {
    --depth_;
    return TooDeep();
  }
  StatusOr<SeqExpr> r = VisitSeqExpr(seq);
  --depth_;
  return r;
}

StatusOr<Expr> BindingMutator::Mutate(const Expr& e) {
  if (++depth_ > max_depth_) {
    --depth_;
    return TooDeep();
  }
  StatusOr<Expr> r = VisitExpr(e);
  --depth_;
  return r;
}

StatusOr<SeqExpr> BindingMutator::VisitSeqExpr(const SeqExpr& seq) {
  const auto& blocks = seq->blocks();
  std::vector<Block> out;  // empty while every block is unchanged
  bool changed = false;
  for (size_t i = 0; i < blocks.size(); ++i) {
    PLIR_ASSIGN_OR_RETURN(Block b, VisitBindingBlock(blocks[i]));
    if (!changed && b.get() == blocks[i].get()) continue;
    if (!changed) {
      changed = true;
      out.reserve(blocks.size());
      out.assign(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (b) out.push_back(std::move(b));
  }
  PLIR_ASSIGN_OR_RETURN(Expr result, Mutate(seq->result()));
  if (!changed && result.get() == seq->result().get()) return seq;
  if (!changed) out = blocks;
  return SeqExprNode::Make(std::move(out), std::move(result));
}

StatusOr<Block> BindingMutator::VisitBindingBlock(const Block& block) {
  const auto& bindings = block->bindings();
  std::vector<Binding> out;
  bool changed = false;
  for (size_t i = 0; i < bindings.size(); ++i) {
    PLIR_ASSIGN_OR_RETURN(Binding b, VisitBinding(bindings[i]));
    if (!changed && b.get() == bindings[i].get()) continue;
    if (!changed) {
      changed = true;
      out.reserve(bindings.size());
      out.assign(bindings.begin(), bindings.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (b) out.push_back(std::move(b));
  }
  if (!changed) return block;
  if (out.empty()) return Block();
  return BindingBlockNode::Make(std::move(out), block->is_dataflow());
}

StatusOr<Binding> BindingMutator::VisitBinding(const Binding& binding) {
  PLIR_ASSIGN_OR_RETURN(Expr value, Mutate(binding->value()));
  return Rebind(binding, binding->var(), std::move(value));
}

StatusOr<Expr> BindingMutator::VisitExpr(const Expr& e) {
  if (e->kind() == NodeKind::kVar) return VisitVarUse(e);
  return VisitChildren(e);
}

Expr BindingMutator::VisitVarUse(const Expr& var) {
  if (remap_.empty()) return var;
  const Expr* to = remap_.Find(static_cast<const VarNode*>(var.get()));
  return to && *to ? *to : var;
}

StatusOr<Expr> BindingMutator::VisitChildren(const Expr& e) {
  return RewriteChildren(
      e, [&](const Expr& c) { return Mutate(c); },
      [&](const SeqExpr& s) { return VisitNestedBody(s); });
}

Binding BindingMutator::Rebind(const Binding& binding, Var var, Expr value) {
  if (var.get() == binding->var().get() && value.get() == binding->value().get()) return binding;
  return VarBindingNode::Make(std::move(var), std::move(value));
}

// ---------------------------------------------------------------------------
// Replacing uses.

Function ReplaceAllUses(const Function& f, const std::unordered_map<const VarNode*, Expr>& map) {
  if (map.empty()) return f;
  VarSubstituter s;
  for (const auto& [from, to] : map) s.Map(from, to);
  return s.MutateFunction(f);
}

Expr ReplaceAllUses(const Expr& e, const std::unordered_map<const VarNode*, Expr>& map) {
  if (map.empty()) return e;
  VarSubstituter s;
  for (const auto& [from, to] : map) s.Map(from, to);
  return s.MutateExpr(e);
}

// ---------------------------------------------------------------------------
// BlockRewriter.

void BlockRewriter::Replace(size_t i, Binding b) {
  if (b.get() == block_->bindings()[i].get() && !edits_[i].erased && !edits_[i].replacement) return;
  edits_[i].replacement = std::move(b);
  edits_[i].erased = false;
  changed_ = true;
}

void BlockRewriter::Erase(size_t i) {
  edits_[i].erased = true;
  edits_[i].replacement = Binding();
  changed_ = true;
}

void BlockRewriter::InsertBefore(size_t i, Binding b) {
  edits_[i].before.push_back(std::move(b));
  changed_ = true;
}

void BlockRewriter::InsertAfter(size_t i, Binding b) {
  edits_[i].after.push_back(std::move(b));
  changed_ = true;
}

Block BlockRewriter::Build() const {
  if (!changed_ && appended_.empty()) return block_;
  auto old = block_->bindings();
  std::vector<Binding> out;
  out.reserve(old.size() + appended_.size());
  for (size_t i = 0; i < old.size(); ++i) {
    const Edit& e = edits_[i];
    out.insert(out.end(), e.before.begin(), e.before.end());
    if (!e.erased) out.push_back(e.replacement ? e.replacement : old[i]);
    out.insert(out.end(), e.after.begin(), e.after.end());
  }
  out.insert(out.end(), appended_.begin(), appended_.end());
  return BindingBlockNode::Make(std::move(out), block_->is_dataflow());
}

// ---------------------------------------------------------------------------
// Matching.

const CallNode* MatchOpCall(const Expr& e, std::string_view op_name) {
  auto* c = As<CallNode>(e);
  if (!c) return nullptr;
  auto* op = As<OpNode>(c->callee());
  return op && op->name() == op_name ? c : nullptr;
}

const CallNode* MatchOpCall(const Expr& e, std::string_view op_name, size_t nargs) {
  const CallNode* c = MatchOpCall(e, op_name);
  return c && c->args().size() == nargs ? c : nullptr;
}

const CallNode* MatchOpCallWithPattern(const Expr& e, OpPattern max) {
  auto* c = As<CallNode>(e);
  if (!c) return nullptr;
  auto* op = As<OpNode>(c->callee());
  if (!op || !op->pure() || static_cast<int>(op->pattern()) > static_cast<int>(max)) return nullptr;
  return c;
}

bool MatchCallTir(const Expr& e, CallTirMatch* m) {
  const CallNode* c = MatchOpCall(e, "call_tir");
  if (!c || (c->args().size() != 2 && c->args().size() != 3)) return false;
  auto* kernel = As<GlobalVarNode>(c->args()[0]);
  auto* args = As<TupleNode>(c->args()[1]);
  if (!kernel || !args) return false;
  m->call = c;
  m->kernel = kernel;
  m->args = args->fields();
  m->tir_vars = c->args().size() == 3 ? c->args()[2].get() : nullptr;
  return true;
}

StatusOr<Type> InferOpType(const Op& op, std::span<const Type> types, const Attrs& attrs,
                           TypeSpan sinfo_args) {
  std::vector<Expr> args;  // placeholders of the given types: inference reads only types
  args.reserve(types.size());
  for (const Type& t : types) args.push_back(VarNode::Make("arg", t));
  return InferOpCallType(op, args, attrs, sinfo_args);
}

OpPattern KernelPattern(const ItemNode& kernel) {
  const AttrValue* v = kernel.attrs().Get("op_pattern");
  if (!v || v->kind() != AttrValue::Kind::kInt) return OpPattern::kOpaque;
  return OpPatternFromInt(v->as_int());
}

// ---------------------------------------------------------------------------
// Pattern driver.

const Expr* RewriteContext::Definition(const VarNode* v) const {
  auto it = values_.find(v);
  return it == values_.end() ? nullptr : &it->second;
}

size_t RewriteContext::NumUses(const VarNode* v) const {
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

bool RewriteContext::IsVisible(const Expr& e) const {
  for (const Var& v : FreeVars(e)) {
    if (!defined_.count(v.get())) return false;
    if (!v->is_dataflow()) continue;
    auto it = dataflow_block_.find(v.get());
    if (it == dataflow_block_.end() ||
        std::find(blocks_.begin(), blocks_.end(), it->second) == blocks_.end())
      return false;
  }
  return true;
}

const CallNode* RewriteContext::MatchOperand(const CallNode& call, size_t i,
                                             std::string_view op_name) const {
  if (i >= call.args().size()) return nullptr;
  const Expr* e = &call.args()[i];
  for (int hops = 0; hops < 64 && (*e)->kind() == NodeKind::kVar; ++hops) {
    e = Definition(static_cast<const VarNode*>(e->get()));
    if (!e) return nullptr;
  }
  return MatchOpCall(*e, op_name);
}

namespace {

// The patterns, highest benefit first, with what the sweeps share: the
// per-pattern counts, the diagnostics, the trace.
struct PatternSet {
  std::vector<const RewritePattern*> sorted;
  std::vector<size_t> stat_index;  // sorted[k]'s entry in result->stats
  std::vector<std::string> names;  // sorted[k]->name()
  GreedyRewriteResult* result = nullptr;
  std::function<void(const PatternEvent&)> trace;
  std::unordered_set<std::string> reported;  // diagnostics already given
};

}  // namespace

class PatternDriver : public ExprMutator {
 public:
  PatternDriver(PatternSet* set, const Module* module, const Function& f) : set_(set) {
    ctx_.module_ = module;
    for (const VarNode* v : CollectVarUses(f.get())) ++ctx_.uses_[v];
  }
  int rewrites = 0;
  // The variables whose uses the rewrites dropped (UnusedBindingRemover's
  // candidates).
  std::unordered_set<const VarNode*> dropped;

 protected:
  void EnterBlock(const BindingBlockNode& b) override { ctx_.blocks_.push_back(&b); }
  void LeaveBlock(const BindingBlockNode&) override { ctx_.blocks_.pop_back(); }
  Var RewriteVarDef(const Var& v) override {
    Define(v.get());
    return v;
  }

  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* b = As<VarBindingNode>(n);
    if (!b) return n;
    ctx_.binding_ = b;
    Expr value = b->value();
    int applied = 0;
    for (int round = 0; round < 64; ++round) {
      bool any = false;
      for (size_t k = 0; k < set_->sorted.size() && !any; ++k) {
        std::optional<Expr> r = set_->sorted[k]->MatchAndRewrite(value, ctx_);
        if (!r || !*r || r->get() == value.get()) continue;
        PatternStats& stats = set_->result->stats[set_->stat_index[k]];
        if (!ctx_.IsVisible(*r)) {
          ++stats.refused;
          Report(k, b->var().get(), false,
                 "its replacement names a variable not visible here "
                 "(a dataflow variable outside its block)");
          continue;
        }
        ++stats.applied;
        Report(k, b->var().get(), true, "");
        for (const VarNode* v : CollectVarUses(value.get())) {
          --ctx_.uses_[v];
          dropped.insert(v);
        }
        for (const VarNode* v : CollectVarUses(r->get())) ++ctx_.uses_[v];
        value = std::move(*r);
        any = true;
        ++applied;
      }
      if (!any) break;
    }
    ctx_.binding_ = nullptr;
    Var var = b->var();
    if (applied == 0) {
      ctx_.values_[var.get()] = value;
      return n;
    }
    rewrites += applied;
    if (!TypeEqual(var->type(), value->type())) {
      Var nv = VarNode::Make(var->hint(), value->type(), var->is_dataflow());
      RemapVar(var.get(), nv);
      Define(nv.get());
      ctx_.uses_[nv.get()] = ctx_.NumUses(var.get());
      var = nv;
    }
    ctx_.values_[var.get()] = value;
    return VarBindingNode::Make(var, value);
  }

 private:
  void Define(const VarNode* v) {
    ctx_.defined_.insert(v);
    if (v->is_dataflow())
      ctx_.dataflow_block_[v] = ctx_.blocks_.empty() ? nullptr : ctx_.blocks_.back();
  }

  void Report(size_t k, const VarNode* var, bool applied, std::string_view reason) {
    const std::string& name = set_->names[k];
    if (!applied) {
      std::string d = "pattern " + name + " at %" + var->name_hint() + ": " + std::string(reason);
      if (set_->reported.insert(d).second) set_->result->diagnostics.push_back(std::move(d));
    }
    if (set_->trace) set_->trace(PatternEvent{name, var, applied, reason});
  }

  PatternSet* set_;
  RewriteContext ctx_;
};

GreedyRewriteResult ApplyPatternsGreedily(const Function& f,
                                          std::span<const RewritePattern* const> patterns,
                                          const GreedyRewriteOptions& options) {
  GreedyRewriteResult r;
  PatternSet set;
  set.result = &r;
  set.sorted.assign(patterns.begin(), patterns.end());
  std::stable_sort(
      set.sorted.begin(), set.sorted.end(),
      [](const RewritePattern* a, const RewritePattern* b) { return a->benefit() > b->benefit(); });
  for (const RewritePattern* p : patterns) r.stats.push_back(PatternStats{p->name()});
  for (const RewritePattern* p : set.sorted) {
    set.stat_index.push_back(
        static_cast<size_t>(std::find(patterns.begin(), patterns.end(), p) - patterns.begin()));
    set.names.push_back(p->name());
  }
  set.trace = options.trace;
  const char* env = std::getenv("PLIR_PATTERN_TRACE");
  if (!set.trace && env && *env && std::string_view(env) != "0") {
    set.trace = [](const PatternEvent& e) {
      std::fprintf(stderr, "plir: pattern %.*s %s at %%%s%s%.*s\n",
                   static_cast<int>(e.pattern.size()), e.pattern.data(),
                   e.applied ? "applied" : "refused", e.var->name_hint().c_str(),
                   e.applied ? "" : ": ", static_cast<int>(e.reason.size()), e.reason.data());
    };
  }
  r.function = f;
  while (r.iterations < options.max_iterations) {
    PatternDriver d(&set, options.module, r.function);
    Function next = d.MutateFunction(r.function);
    ++r.iterations;
    r.rewrites += d.rewrites;
    if (d.rewrites == 0) {
      r.converged = true;
      break;
    }
    if (options.erase_unused && !d.dropped.empty()) {
      UnusedBindingRemover remover(options.module);
      remover.RestrictTo(&d.dropped);
      next = remover.Remove(next);
      r.erased += static_cast<int>(remover.erased());
    }
    r.function = next;
  }
  return r;
}

// ---------------------------------------------------------------------------
// Outlining.

namespace {

// Maps variables and constants to the new function's parameters.
class ParamSubstituter : public ExprMutator {
 public:
  void MapVar(const VarNode* from, Expr to) { RemapVar(from, std::move(to)); }
  std::unordered_map<const Node*, Expr> constants;

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    if (n->kind() == NodeKind::kConstant) {
      auto it = constants.find(n.get());
      if (it != constants.end()) return it->second;
    }
    return n;
  }
};

// Calls `fn(const Node* leaf)` on the variables and constants under `root`
// in evaluation order (not into nested bodies' definitions: those are
// handled as uses too, which FreeVars would exclude; outlined bindings are
// dataflow bindings, which hold no nested bodies).
template <typename Fn>
void ForEachLeaf(const Node* root, Fn&& fn) {
  std::vector<const Node*> stack{root};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    switch (n->kind()) {
      case NodeKind::kVar:
      case NodeKind::kConstant:
        fn(n);
        break;
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(n);
        for (size_t i = c->args().size(); i-- > 0;) stack.push_back(c->args()[i].get());
        if (c->callee()->kind() == NodeKind::kVar) stack.push_back(c->callee().get());
        break;
      }
      case NodeKind::kTuple: {
        auto f = static_cast<const TupleNode*>(n)->fields();
        for (size_t i = f.size(); i-- > 0;) stack.push_back(f[i].get());
        break;
      }
      case NodeKind::kTupleGetItem:
        stack.push_back(static_cast<const TupleGetItemNode*>(n)->tuple().get());
        break;
      case NodeKind::kIf: {
        auto* f = static_cast<const IfNode*>(n);
        stack.push_back(f->cond().get());  // branches: not outlined from dataflow blocks
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace

StatusOr<Outlined> OutlineFunction(std::span<const VarBindingNode* const> bindings,
                                   const OutlineOptions& options,
                                   const std::unordered_map<const VarNode*, bool>* later_uses) {
  if (bindings.empty()) return InvalidArgument("outline @" + options.name + ": no bindings");
  std::unordered_set<const VarNode*> defined;
  for (const VarBindingNode* b : bindings) defined.insert(b->var().get());

  Outlined out;
  std::vector<Var> params;
  ParamSubstituter subst;
  std::unordered_set<const Node*> seen;
  int n_const = 0;
  std::unordered_set<const VarNode*> defined_so_far;
  for (const VarBindingNode* b : bindings) {
    ForEachLeaf(b->value().get(), [&](const Node* leaf) {
      if (!seen.insert(leaf).second) return;
      if (leaf->kind() == NodeKind::kVar) {
        auto* v = static_cast<const VarNode*>(leaf);
        if (defined.count(v)) return;
        Var p = VarNode::Make(v->hint(), v->type());
        params.push_back(p);
        out.args.push_back(Var(v));
        subst.MapVar(v, p);
      } else if (options.lift_constants) {
        auto* c = static_cast<const ConstantNode*>(leaf);
        Var p = VarNode::Make("param_" + std::to_string(n_const++), c->type());
        params.push_back(p);
        out.args.push_back(Expr(c));
        subst.constants[leaf] = p;
      }
    });
  }

  // Outputs.
  if (!options.outputs.empty()) {
    for (const VarNode* v : options.outputs) {
      if (!defined.count(v))
        return InvalidArgument("outline @" + options.name + ": output %" + v->name_hint() +
                               " is not defined by the outlined bindings");
      out.outputs.push_back(v);
    }
  } else {
    for (const VarBindingNode* b : bindings) {
      const VarNode* v = b->var().get();
      bool later = later_uses && later_uses->count(v) && later_uses->at(v);
      if (!v->is_dataflow() || later) out.outputs.push_back(v);
    }
  }
  if (out.outputs.empty())
    return InvalidArgument("outline @" + options.name + ": nothing the bindings compute is used");
  std::unordered_set<const VarNode*> is_output(out.outputs.begin(), out.outputs.end());

  std::vector<Binding> body;
  std::unordered_map<const VarNode*, Var> fresh;
  for (const VarBindingNode* b : bindings) {
    Expr value = subst.MutateExpr(b->value());
    const Var& old = b->var();
    Var v = VarNode::Make(old->hint(), old->type(), !is_output.count(old.get()));
    subst.MapVar(old.get(), v);
    fresh[old.get()] = v;
    body.push_back(VarBindingNode::Make(v, value));
  }
  Expr result;
  if (out.outputs.size() == 1) {
    result = fresh[out.outputs[0]];
  } else {
    std::vector<Expr> fields;
    for (const VarNode* v : out.outputs) fields.push_back(fresh[v]);
    result = TupleNode::Make(std::move(fields));
  }
  SeqExpr seq = SeqExprNode::Make({BindingBlockNode::Make(std::move(body), true)}, result);
  out.function = FunctionNode::Make(options.name, std::move(params), nullptr, seq, options.attrs);
  return out;
}

StatusOr<std::pair<Function, Function>> OutlineBindings(
    const Function& f, std::span<const VarBindingNode* const> bindings,
    const OutlineOptions& options) {
  if (bindings.empty()) return InvalidArgument("outline @" + options.name + ": no bindings");
  const auto& blocks = f->body()->blocks();
  size_t block_index = blocks.size();
  std::vector<size_t> positions;
  for (size_t bi = 0; bi < blocks.size() && block_index == blocks.size(); ++bi) {
    auto bs = blocks[bi]->bindings();
    size_t k = 0;
    for (size_t i = 0; i < bs.size() && k < bindings.size(); ++i)
      if (bs[i].get() == bindings[k]) positions.push_back(i), ++k;
    if (k == bindings.size())
      block_index = bi;
    else
      positions.clear();
  }
  if (block_index == blocks.size())
    return InvalidArgument("outline @" + options.name +
                           ": the bindings are not all in one block of @" + f->name() +
                           ", in order");
  if (!blocks[block_index]->is_dataflow())
    return InvalidArgument("outline @" + options.name +
                           ": only bindings of a dataflow block can be outlined");

  std::unordered_set<const VarNode*> members;
  std::unordered_set<const VarBindingNode*> member_bindings(bindings.begin(), bindings.end());
  for (const VarBindingNode* b : bindings) members.insert(b->var().get());
  DefUse du = DefUse::Compute(*f);
  std::unordered_map<const VarNode*, bool> later;
  for (const VarBindingNode* b : bindings)
    for (const DefUse::Use& u : du.Find(b->var().get())->uses)
      if (!u.binding || !member_bindings.count(u.binding)) later[b->var().get()] = true;

  auto bs = blocks[block_index]->bindings();
  for (size_t i = positions.front(); i < positions.back(); ++i) {
    if (member_bindings.count(bs[i].get())) continue;
    for (const VarNode* v : CollectVarUses(bs[i]->value().get()))
      if (members.count(v))
        return InvalidArgument("outline @" + options.name + ": %" + bs[i]->var()->name_hint() +
                               ", between the outlined bindings, uses %" + v->name_hint());
  }

  PLIR_ASSIGN_OR_RETURN(Outlined o, OutlineFunction(bindings, options, &later));
  Type ret = o.function->body()->type();
  Expr call = MakeGlobalCall(GlobalVarNode::Make(options.name), o.args, ret);
  BlockRewriter rw(blocks[block_index]);
  for (size_t p : positions) rw.Erase(p);
  size_t last = positions.back();
  if (o.outputs.size() == 1) {
    rw.InsertAfter(last, VarBindingNode::Make(Var(o.outputs[0]), call));
  } else {
    Var t = VarNode::Make(options.name + "_out", ret, true);
    rw.InsertAfter(last, VarBindingNode::Make(t, call));
    for (size_t i = 0; i < o.outputs.size(); ++i)
      rw.InsertAfter(last, VarBindingNode::Make(Var(o.outputs[i]), TupleGetItemNode::MakeUnchecked(
                                                                       t, static_cast<int64_t>(i),
                                                                       o.outputs[i]->type())));
  }
  std::vector<Block> new_blocks = blocks;
  new_blocks[block_index] = rw.Build();
  SeqExpr body = SeqExprNode::Make(std::move(new_blocks), f->body()->result());
  Function caller = FunctionNode::Make(f->name(), f->params(), f->ret_type(), body, f->attrs());
  return std::make_pair(caller, o.function);
}

}  // namespace plir
