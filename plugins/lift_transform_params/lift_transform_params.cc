// LiftTransformParams (after TVM Relax's pass of the same name): moves the
// computation that depends only on weights out of a function into a new
// function `<name>_transform_params`, to run once ahead of time.
//
// `builtin.stop_lift_params(v)` is a barrier: it is not lifted (so neither
// is what uses it), and the rewritten function reads v in its place.
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

// The variables a value uses, and whether it may be lifted: pure by the
// SDK's rule (ir/analysis/purity.h; a call of a module function counts as
// impure), free of control flow, and not a function value (a local
// function stays with its callers; so do calls of it, since the function
// value is no weight).
struct Uses {
  std::vector<const VarNode*> vars;
  bool pure = true;
  void Walk(const Expr& e) {
    vars = CollectVarUses(e.get());
    pure = IsPure(e) && !ContainsControlFlow(e.get()) && e->kind() != NodeKind::kLocalFn;
  }
};

// `builtin.stop_lift_params(v)`: v, past which nothing is lifted.
bool IsStopLift(const Expr& e) {
  auto* c = As<CallNode>(e);
  auto* op = c ? As<OpNode>(c->callee()) : nullptr;
  return op && op->name() == "builtin.stop_lift_params" && c->args().size() == 1;
}

// Adds the symbolic dimension names of `t` to *out.
void CollectSyms(const Type& t, std::unordered_set<Symbol>* out) {
  if (!t) return;
  if (auto* tt = As<TensorTypeNode>(t)) {
    for (const Dim& d : tt->shape())
      if (!d.is_const()) out->insert(d.sym);
  } else if (auto* st = As<ShapeTypeNode>(t)) {
    for (const Dim& d : st->values())
      if (!d.is_const()) out->insert(d.sym);
  } else if (auto* tu = As<TupleTypeNode>(t)) {
    for (const Type& f : tu->fields()) CollectSyms(f, out);
  }
}

// The symbolic dimensions a binding's types mention: its variable's type and
// the sinfo_args of the calls in its value.
class SymUses : public IRVisitor {
 public:
  std::unordered_set<Symbol> syms;

 protected:
  bool Enter(const Node* n, bool) override {
    if (auto* c = As<CallNode>(n))
      for (const Type& t : c->sinfo_args()) CollectSyms(t, &syms);
    return true;
  }
};

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  const bool consume_params = ctx.options.GetBool("consume_params");
  Module out = m;
  for (const Item& item : m.items()) {
    auto* f = As<FunctionNode>(item);
    if (!f) continue;
    const AttrValue* num_input = f->attrs().Get("num_input");
    if (!num_input || num_input->kind() != AttrValue::Kind::kInt) continue;
    // A lifted transform itself (it carries num_input = 0) is not lifted.
    static constexpr std::string_view kSuffix = "_transform_params";
    if (f->name().size() > kSuffix.size() && f->name().ends_with(kSuffix) &&
        m.LookupFunction(f->name().substr(0, f->name().size() - kSuffix.size())))
      continue;
    int64_t k = num_input->as_int();
    if (k < 0 || k > static_cast<int64_t>(f->params().size()))
      return InvalidArgument("@" + f->name() + ": num_input = " + std::to_string(k) + " but it has " +
                             std::to_string(f->params().size()) + " parameters");
    std::string lifted_name = f->name() + "_transform_params";
    Function existing;
    if (m.Contains(lifted_name)) {
      existing = m.LookupFunction(lifted_name);
      if (!existing)
        return AlreadyExists("@" + lifted_name + " exists and is not a function; cannot lift @" +
                             f->name());
    }
    std::vector<Var> inputs(f->params().begin(), f->params().begin() + k);
    std::vector<Var> weights(f->params().begin() + k, f->params().end());
    std::unordered_set<const VarNode*> weight_only(weights.size());
    for (const Var& w : weights) weight_only.insert(w.get());
    // Symbolic dimensions the weights bind: the only ones the lifted
    // function can use (any other is bound by a runtime input).
    std::unordered_set<Symbol> weight_syms;
    for (const Var& w : weights) CollectSyms(w->type(), &weight_syms);

    // Which bindings of dataflow blocks to lift. A pure binding that reads
    // no variable (a constant, `ones`) is not lifted but copied into the
    // lifted function where a lifted binding needs it, as TVM does.
    std::vector<const VarBindingNode*> order;  // lifted and copyable, in order
    std::unordered_set<const VarBindingNode*> lifted_set, copyable_set;
    std::unordered_set<const VarNode*> copyable_vars;
    for (const Block& b : f->body()->blocks()) {
      if (!b->is_dataflow()) continue;
      for (const Binding& x : b->bindings()) {
        if (IsStopLift(x->value())) continue;  // a barrier: never lifted
        Uses u;
        u.Walk(x->value());
        if (!u.pure) continue;
        SymUses su;
        su.Walk(x->value());
        CollectSyms(x->var()->type(), &su.syms);
        bool syms_ok = true;
        for (Symbol s : su.syms) syms_ok = syms_ok && weight_syms.count(s);
        if (!syms_ok) continue;
        bool reads_weight = false, ok = true;
        for (const VarNode* v : u.vars) {
          if (weight_only.count(v)) reads_weight = true;
          else if (!copyable_vars.count(v)) ok = false;
        }
        if (!ok) continue;
        order.push_back(x.get());
        if (reads_weight) {
          lifted_set.insert(x.get());
          weight_only.insert(x->var().get());
        } else {
          copyable_set.insert(x.get());
          copyable_vars.insert(x->var().get());
        }
      }
    }
    // Idempotent: a function already lifted (its transform exists) with
    // nothing more to lift is left as it is.
    if (existing && lifted_set.empty()) continue;

    // What the remaining code uses of the weight-only values.
    std::unordered_set<const VarNode*> needed;
    for (const Block& b : f->body()->blocks())
      for (const Binding& x : b->bindings())
        if (!lifted_set.count(x.get())) {
          Uses u;
          u.Walk(x->value());
          for (const VarNode* v : u.vars)
            if (weight_only.count(v)) needed.insert(v);
        }
    {
      Uses u;
      u.Walk(f->body()->result());
      for (const VarNode* v : u.vars)
        if (weight_only.count(v)) needed.insert(v);
    }
    std::vector<const VarNode*> outputs;  // weights, then lifted values
    for (const Var& w : weights)
      if (needed.count(w.get())) outputs.push_back(w.get());
    for (const VarBindingNode* b : order)
      if (lifted_set.count(b) && needed.count(b->var().get())) outputs.push_back(b->var().get());
    // The copyable bindings the lifted ones read (copyables read no variable).
    std::unordered_set<const VarNode*> copies_needed;
    for (const VarBindingNode* b : order) {
      if (!lifted_set.count(b)) continue;
      Uses u;
      u.Walk(b->value());
      for (const VarNode* v : u.vars)
        if (copyable_vars.count(v)) copies_needed.insert(v);
    }

    // The new function, with fresh variables. Its parameter is the tuple of
    // weights, or, composing with an existing transform, that transform's
    // parameter, whose body then runs first and yields the weights.
    std::vector<Type> weight_types;
    for (const Var& w : weights) weight_types.push_back(w->type());
    std::vector<Block> lifted_blocks;
    Var params;
    Expr weight_source;  // the tuple the weights are taken from
    if (existing) {
      if (existing->params().size() != 1)
        return FailedPrecondition("@" + lifted_name + " must take one parameter (the tuple of weights)");
      params = existing->params()[0];
      lifted_blocks = existing->body()->blocks();
      weight_source = existing->body()->result();
    } else {
      params = VarNode::Make("params", TupleTypeNode::Make(weight_types));
      weight_source = params;
    }
    VarSubstituter fresh;
    std::unordered_map<const VarNode*, Var> fresh_of;
    std::vector<Binding> body;
    // Each weight is unpacked right before its first use, so that the lazy
    // form (LazyTransformParams) loads it only when it is needed; with
    // consume_params, the tuple's slot is released right after.
    std::unordered_map<const VarNode*, size_t> weight_index;
    for (size_t i = 0; i < weights.size(); ++i) weight_index[weights[i].get()] = i;
    auto unpack = [&](const VarNode* w) -> Status {
      if (fresh_of.count(w)) return Status::Ok();
      size_t i = weight_index.at(w);
      Var v = VarNode::Make(w->name_hint(), w->type(), true);
      PLIR_ASSIGN_OR_RETURN(Expr get, TupleGetItemNode::Make(weight_source, static_cast<int64_t>(i)));
      body.push_back(VarBindingNode::Make(v, get));
      if (consume_params && !existing) {
        PLIR_ASSIGN_OR_RETURN(
            Expr reset, MakeOpCall("call_packed",
                                   {StringImmNode::Make("vm.builtin.tuple_reset_item"), params,
                                    PrimValueNode::Int(static_cast<int64_t>(i))},
                                   Attrs(), {TupleTypeNode::Make({})}));
        body.push_back(VarBindingNode::Make(
            VarNode::Make("_" + std::to_string(i + 1), reset->type(), true), reset));
      }
      fresh.Map(w, v);
      fresh_of[w] = v;
      return Status::Ok();
    };
    for (const VarBindingNode* b : order) {
      if (copyable_set.count(b) && !copies_needed.count(b->var().get())) continue;
      Uses u;
      u.Walk(b->value());
      for (const VarNode* v : u.vars)
        if (weight_index.count(v)) PLIR_RETURN_IF_ERROR(unpack(v));
      Expr value = fresh.MutateExpr(b->value());
      Var v = VarNode::Make(b->var()->name_hint(), b->var()->type(), true);
      body.push_back(VarBindingNode::Make(v, value));
      fresh.Map(b->var().get(), v);
      fresh_of[b->var().get()] = v;
    }
    for (const VarNode* v : outputs)  // weights passed through unchanged
      if (weight_index.count(v)) PLIR_RETURN_IF_ERROR(unpack(v));
    std::vector<Expr> out_fields;
    for (const VarNode* v : outputs) out_fields.push_back(fresh_of.at(v));
    Expr out_tuple = TupleNode::Make(out_fields);
    Var out_var = VarNode::Make("gv", out_tuple->type(), false);
    body.push_back(VarBindingNode::Make(out_var, out_tuple));
    lifted_blocks.push_back(BindingBlockNode::Make(std::move(body), true));
    // As TVM marks it: an entry point (global_symbol) taking no inputs
    // besides the weights (num_input = 0).
    Attrs lifted_attrs = existing ? existing->attrs() : Attrs();
    lifted_attrs = lifted_attrs.With(Symbol("global_symbol"), AttrValue::String(lifted_name))
                       .With(Symbol("num_input"), AttrValue::Int(0));
    Function lifted_fn = FunctionNode::Make(lifted_name, {params}, out_tuple->type(),
                                            SeqExprNode::Make(std::move(lifted_blocks), out_var),
                                            lifted_attrs);

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
        if (IsStopLift(x->value())) {
          // The barrier has done its work: later uses read its operand, as
          // in TVM's output.
          to_params.Map(x->var().get(), to_params.MutateExpr(static_cast<const CallNode*>(x->value().get())->args()[0]));
          continue;
        }
        Expr value = to_params.MutateExpr(x->value());
        kept.push_back(value.get() == x->value().get() ? x : VarBindingNode::Make(x->var(), value));
      }
      if (!kept.empty() || b->is_dataflow()) blocks.push_back(BindingBlockNode::Make(std::move(kept), b->is_dataflow()));
    }
    Expr result = to_params.MutateExpr(f->body()->result());
    Function rewritten = FunctionNode::Make(f->name(), new_params, f->ret_type(),
                                            SeqExprNode::Make(std::move(blocks), result), f->attrs());
    out = out.WithItem(rewritten).WithItem(lifted_fn);
  }
  return out;
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "LiftTransformParams";
  def.info.description =
      "moves weight-only computation (params after num_input) into <name>_transform_params";
  def.info.options = {{"consume_params", OptionType::kBool, AttrValue::Bool(false),
                       "release each weight's slot of the parameter tuple right after it is "
                       "read (TVM's relax.lift_transform_params.consume_params)"}};
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("lift_transform_params", "1.0", Register)
