// LiftTransformParams (after TVM Relax's pass of the same name): moves the
// computation that depends only on weights out of a function into a new
// function `<name>_transform_params`, to run once ahead of time.
//
// For a function with attribute `num_input = k`, the parameters after the
// first k are weights. A binding is lifted iff its value is pure (no
// call_packed, no vm.*, no call of a module function, no if) and every
// variable it uses is a weight or a lifted variable. The new function takes
// the weights as one tuple (each unpacked with `%w = %params.i` right before
// its first use, so that its lazy form loads it on demand), computes the
// lifted bindings in a dataflow block, and returns, as a tuple, every value
// the remaining code needs: weights it still uses directly (in parameter
// order) and lifted values (in binding order); it is an entry point, marked
// with `global_symbol`. The original function then
// takes its inputs plus those values, in that order, and keeps num_input.
// Functions with nothing to lift are untouched.
#include <unordered_map>
#include <unordered_set>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  Module out = m;
  for (const Item& item : m.items()) {
    auto* f = As<FunctionNode>(item);
    if (!f) continue;
    const AttrValue* num_input = f->attrs().Get("num_input");
    if (!num_input || num_input->kind() != AttrValue::Kind::kInt) continue;
    int64_t k = num_input->as_int();
    if (k < 0 || k > static_cast<int64_t>(f->params().size()))
      return InvalidArgument("@" + f->name() + ": num_input = " + std::to_string(k) + " but it has " +
                             std::to_string(f->params().size()) + " parameters");
    std::string lifted_name = f->name() + "_transform_params";
    if (m.Contains(lifted_name))
      return AlreadyExists("@" + lifted_name + " already exists; cannot lift @" + f->name());
    std::vector<Var> inputs(f->params().begin(), f->params().begin() + k);
    std::vector<Var> weights(f->params().begin() + k, f->params().end());
    std::unordered_set<const VarNode*> weight_only(weights.size());
    for (const Var& w : weights) weight_only.insert(w.get());

    // Which top-level bindings to lift (if branches are never entered).
    std::vector<const VarBindingNode*> lifted;
    std::unordered_set<const VarBindingNode*> lifted_set;
    for (const Block& b : f->body()->blocks()) {
      for (const Binding& x : b->bindings()) {
        bool ok = IsPure(x->value()) && !ContainsControlFlow(x->value().get());
        for (const VarNode* v : CollectVarUses(x->value().get())) ok = ok && weight_only.count(v);
        if (!ok) continue;
        // Trivial values (a weight copied, a literal) are not worth lifting.
        if (IsAtomic(x->value()) && !As<VarNode>(x->value())) continue;
        lifted.push_back(x.get());
        lifted_set.insert(x.get());
        weight_only.insert(x->var().get());
      }
    }
    if (lifted.empty()) continue;

    // What the remaining code uses of the weight-only values.
    std::unordered_set<const VarNode*> needed;
    for (const Block& b : f->body()->blocks())
      for (const Binding& x : b->bindings())
        if (!lifted_set.count(x.get())) {
          for (const VarNode* v : CollectVarUses(x->value().get()))
            if (weight_only.count(v)) needed.insert(v);
        }
    {
      for (const VarNode* v : CollectVarUses(f->body()->result().get()))
        if (weight_only.count(v)) needed.insert(v);
    }
    std::vector<const VarNode*> outputs;  // weights, then lifted values
    for (const Var& w : weights)
      if (needed.count(w.get())) outputs.push_back(w.get());
    for (const VarBindingNode* b : lifted)
      if (needed.count(b->var().get())) outputs.push_back(b->var().get());

    // The new function, with fresh variables.
    std::vector<Type> weight_types;
    for (const Var& w : weights) weight_types.push_back(w->type());
    Var params = VarNode::Make("params", TupleTypeNode::Make(weight_types));
    VarSubstituter fresh;
    std::unordered_map<const VarNode*, Var> fresh_of;
    std::vector<Binding> body;
    // Each weight is unpacked right before its first use, so that the lazy
    // form (LazyTransformParams) loads it only when it is needed.
    std::unordered_map<const VarNode*, size_t> weight_index;
    for (size_t i = 0; i < weights.size(); ++i) weight_index[weights[i].get()] = i;
    auto unpack = [&](const VarNode* w) {
      if (fresh_of.count(w)) return;
      size_t i = weight_index.at(w);
      Var v = VarNode::Make(w->name_hint(), w->type(), true);
      body.push_back(VarBindingNode::Make(v, *TupleGetItemNode::Make(params, static_cast<int64_t>(i))));
      fresh.Map(w, v);
      fresh_of[w] = v;
    };
    for (const VarBindingNode* b : lifted) {
      for (const VarNode* v : CollectVarUses(b->value().get()))
        if (weight_index.count(v)) unpack(v);
      Expr value = fresh.MutateExpr(b->value());
      Var v = VarNode::Make(b->var()->name_hint(), b->var()->type(), true);
      body.push_back(VarBindingNode::Make(v, value));
      fresh.Map(b->var().get(), v);
      fresh_of[b->var().get()] = v;
    }
    for (const VarNode* v : outputs)  // weights passed through unchanged
      if (weight_index.count(v)) unpack(v);
    std::vector<Expr> out_fields;
    for (const VarNode* v : outputs) out_fields.push_back(fresh_of.at(v));
    Expr out_tuple = TupleNode::Make(out_fields);
    Var out_var = VarNode::Make("gv", out_tuple->type(), false);
    body.push_back(VarBindingNode::Make(out_var, out_tuple));
    Function lifted_fn = FunctionNode::Make(
        lifted_name, {params}, out_tuple->type(),
        SeqExprNode::Make({BindingBlockNode::Make(std::move(body), true)}, out_var),
        // An entry point the caller runs ahead of time (kept by DeadCodeElimination).
        Attrs().With(Symbol("global_symbol"), AttrValue::String(lifted_name)));

    // The rewritten original: inputs, then the lifted values as parameters.
    VarSubstituter to_params;
    std::vector<Var> new_params = inputs;
    for (const VarNode* v : outputs) {
      Var p = VarNode::Make(v->name_hint(), v->type(), false);
      new_params.push_back(p);
      to_params.Map(v, p);
    }
    std::vector<Block> blocks;
    for (const Block& b : f->body()->blocks()) {
      std::vector<Binding> kept;
      for (const Binding& x : b->bindings()) {
        if (lifted_set.count(x.get())) continue;
        Expr value = to_params.MutateExpr(x->value());
        kept.push_back(value.get() == x->value().get() ? x : VarBindingNode::Make(x->var(), value));
      }
      if (!kept.empty() || b->is_dataflow()) blocks.push_back(BindingBlockNode::Make(std::move(kept), b->is_dataflow()));
    }
    Expr result = to_params.MutateExpr(f->body()->result());
    Function rewritten = FunctionNode::Make(f->name(), new_params, f->ret_type(),
                                            SeqExprNode::Make(std::move(blocks), result), f->attrs());
    out = out.WithItem(rewritten).WithItem(lifted_fn);
    (void)ctx;
  }
  return out;
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "LiftTransformParams";
  def.info.description =
      "moves weight-only computation (params after num_input) into <name>_transform_params";
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("lift_transform_params", "1.0", Register)
