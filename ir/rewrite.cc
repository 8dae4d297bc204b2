// The SDK's rewriting helpers (see rewrite.h).
#include "ir/rewrite.h"

#include <algorithm>
#include <unordered_set>

#include "ir/analysis/def_use.h"
#include "ir/visitor.h"

namespace plir {

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

class PatternDriver : public ExprMutator {
 public:
  PatternDriver(std::vector<const RewritePattern*> patterns, const Module* module)
      : patterns_(std::move(patterns)) {
    ctx_.module_ = module;
  }
  int rewrites = 0;

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* b = As<VarBindingNode>(n);
    if (!b) return n;
    Expr value = b->value();
    int applied = 0;
    for (int round = 0; round < 64; ++round) {
      bool any = false;
      for (const RewritePattern* p : patterns_) {
        std::optional<Expr> r = p->MatchAndRewrite(value, ctx_);
        if (r && *r && r->get() != value.get()) {
          value = std::move(*r);
          any = true;
          ++applied;
          break;
        }
      }
      if (!any) break;
    }
    Var var = b->var();
    if (applied == 0) {
      ctx_.values_[var.get()] = value;
      return n;
    }
    rewrites += applied;
    if (!TypeEqual(var->type(), value->type())) {
      Var nv = VarNode::Make(var->hint(), value->type(), var->is_dataflow());
      RemapVar(var.get(), nv);
      var = nv;
    }
    ctx_.values_[var.get()] = value;
    return VarBindingNode::Make(var, value);
  }

 private:
  std::vector<const RewritePattern*> patterns_;
  RewriteContext ctx_;
};

GreedyRewriteResult ApplyPatternsGreedily(const Function& f,
                                          std::span<const RewritePattern* const> patterns,
                                          const GreedyRewriteOptions& options) {
  std::vector<const RewritePattern*> sorted(patterns.begin(), patterns.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const RewritePattern* a, const RewritePattern* b) {
    return a->benefit() > b->benefit();
  });
  GreedyRewriteResult r;
  r.function = f;
  while (r.iterations < options.max_iterations) {
    PatternDriver d(sorted, options.module);
    Function next = d.MutateFunction(r.function);
    ++r.iterations;
    r.rewrites += d.rewrites;
    if (d.rewrites == 0) {
      r.converged = true;
      break;
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
    if (k == bindings.size()) block_index = bi;
    else positions.clear();
  }
  if (block_index == blocks.size())
    return InvalidArgument("outline @" + options.name + ": the bindings are not all in one block of @" +
                           f->name() + ", in order");
  if (!blocks[block_index]->is_dataflow())
    return InvalidArgument("outline @" + options.name + ": only bindings of a dataflow block can be outlined");

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
      rw.InsertAfter(last, VarBindingNode::Make(
                               Var(o.outputs[i]),
                               TupleGetItemNode::MakeUnchecked(t, static_cast<int64_t>(i),
                                                               o.outputs[i]->type())));
  }
  std::vector<Block> new_blocks = blocks;
  new_blocks[block_index] = rw.Build();
  SeqExpr body = SeqExprNode::Make(std::move(new_blocks), f->body()->result());
  Function caller = FunctionNode::Make(f->name(), f->params(), f->ret_type(), body, f->attrs());
  return std::make_pair(caller, o.function);
}

}  // namespace plir
