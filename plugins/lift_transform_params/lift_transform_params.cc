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
// with `global_symbol`. As TVM's normalizer, an access of a tuple it has
// just built reads the field (the access is not copied), and an output
// that is a weight already read reads it from the tuple again. The
// original function then takes its inputs plus those values, in that order, and keeps num_input.
// Symbolic dimensions the remaining code needs that only weights bound are
// returned too, first, as one shape value (`shape[(n,)]`), and taken by the
// rewritten function right after its inputs.
// Functions with nothing to lift are untouched.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/analysis/free_vars.h"
#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/structural.h"
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

// Adds the symbolic dimension names of `t` to *out (`defs_only`: only the
// dimensions that are a bare name, those a parameter's type binds; in
// `m * n` the names are uses).
void CollectSyms(const Type& t, std::unordered_set<Symbol>* out, bool defs_only = false) {
  for (Symbol s : TypeDimNames(t, defs_only ? DimNameKind::kBindable : DimNameKind::kAll))
    out->insert(s);
}

// Appends the bare-name dimensions of `t` to *out, in the order `t` names
// them.
void CollectSymsInOrder(const Type& t, std::vector<Symbol>* out) {
  for (Symbol s : TypeDimNames(t, DimNameKind::kBindable)) out->push_back(s);
}

// The symbolic dimensions a binding's types mention: its variable's type and
// the types written in its value (ir/analysis/free_vars.h).
std::unordered_set<Symbol> BindingSyms(const VarBindingNode& x) {
  std::vector<Symbol> used = DimNamesUsed(x.value());
  std::unordered_set<Symbol> out(used.begin(), used.end());
  CollectSyms(x.var()->type(), &out);
  return out;
}

// Which bindings of one function's dataflow blocks may go to its transform:
// pure, no barrier, every variable read a weight or an earlier lifted one,
// and no symbolic dimension the weights do not bind. A pure binding that
// reads no variable (a constant, `ones`) is not lifted but copied into the
// transform where a lifted binding needs it, as TVM does.
struct LiftPlan {
  std::vector<Var> inputs, weights;
  std::vector<const VarBindingNode*> order;  // lifted and copyable, in order
  std::unordered_set<const VarBindingNode*> lifted, copyable;
  std::unordered_set<const VarNode*> copyable_vars;
  std::unordered_set<const VarNode*> weight_only;  // weights and lifted variables
};

LiftPlan PlanLift(const FunctionNode* f, int64_t k) {
  LiftPlan p;
  p.inputs.assign(f->params().begin(), f->params().begin() + k);
  p.weights.assign(f->params().begin() + k, f->params().end());
  for (const Var& w : p.weights) p.weight_only.insert(w.get());
  // Symbolic dimensions the weights bind: the only ones the lifted
  // function can use (any other is bound by a runtime input).
  std::unordered_set<Symbol> weight_syms;
  for (const Var& w : p.weights) CollectSyms(w->type(), &weight_syms, /*defs_only=*/true);
  for (const Block& b : f->body()->blocks()) {
    if (!b->is_dataflow()) continue;
    for (const Binding& x : b->bindings()) {
      if (IsStopLift(x->value())) continue;  // a barrier: never lifted
      Uses u;
      u.Walk(x->value());
      if (!u.pure) continue;
      bool syms_ok = true;
      for (Symbol s : BindingSyms(*x)) syms_ok = syms_ok && weight_syms.count(s);
      if (!syms_ok) continue;
      bool reads_weight = false, ok = true;
      for (const VarNode* v : u.vars) {
        if (p.weight_only.count(v))
          reads_weight = true;
        else if (!p.copyable_vars.count(v))
          ok = false;
      }
      if (!ok) continue;
      p.order.push_back(x.get());
      if (reads_weight) {
        p.lifted.insert(x.get());
        p.weight_only.insert(x->var().get());
      } else {
        p.copyable.insert(x.get());
        p.copyable_vars.insert(x->var().get());
      }
    }
  }
  return p;
}

// The weight-only values (weights, lifted variables) that what stays in `f`
// reads.
std::unordered_set<const VarNode*> NeededAtRuntime(const FunctionNode* f, const LiftPlan& p) {
  std::unordered_set<const VarNode*> needed;
  for (const Block& b : f->body()->blocks())
    for (const Binding& x : b->bindings())
      if (!p.lifted.count(x.get())) {
        Uses u;
        u.Walk(x->value());
        for (const VarNode* v : u.vars)
          if (p.weight_only.count(v)) needed.insert(v);
      }
  Uses u;
  u.Walk(f->body()->result());
  for (const VarNode* v : u.vars)
    if (p.weight_only.count(v)) needed.insert(v);
  return needed;
}

// Builds the transform `name` from plan `p` (of a function whose weights it
// takes as one tuple): its lifted bindings with fresh variables, each
// weight unpacked right before its first use (so that the lazy form,
// LazyTransformParams, loads it only when it is needed; with
// consume_params the tuple's slot is released right after), returning
// `outputs` (weights and lifted variables of the plan). Composing with an
// `existing` transform, that transform's parameter is taken and its body
// runs first, yielding the weights.
StatusOr<Function> BuildTransform(const std::string& name, const Function& existing,
                                  const LiftPlan& p, const std::vector<const VarNode*>& outputs,
                                  bool consume_params, const std::vector<Dim>& extra_syms = {}) {
  // The copyable bindings the lifted ones read (copyables read no variable).
  std::unordered_set<const VarNode*> copies_needed;
  for (const VarBindingNode* b : p.order) {
    if (!p.lifted.count(b)) continue;
    Uses u;
    u.Walk(b->value());
    for (const VarNode* v : u.vars)
      if (p.copyable_vars.count(v)) copies_needed.insert(v);
  }
  std::vector<Type> weight_types;
  for (const Var& w : p.weights) weight_types.push_back(w->type());
  std::vector<Block> lifted_blocks;
  Var params;
  Expr weight_source;  // the tuple the weights are taken from
  if (existing) {
    if (existing->params().size() != 1)
      return FailedPrecondition("@" + name + " must take one parameter (the tuple of weights)");
    params = existing->params()[0];
    lifted_blocks = existing->body()->blocks();
    weight_source = existing->body()->result();
  } else {
    params = VarNode::Make("params", TupleTypeNode::Make(weight_types));
    weight_source = params;
  }
  VarSubstituter fresh;
  std::unordered_map<const VarNode*, Var> fresh_of;
  // The transform's variables bound to tuples it builds, and those holding
  // a weight read from the parameter tuple (its index).
  std::unordered_map<const VarNode*, const TupleNode*> built_tuple;
  std::unordered_map<const VarNode*, size_t> read_of;
  std::vector<Binding> body;
  std::unordered_map<const VarNode*, size_t> weight_index;
  for (size_t i = 0; i < p.weights.size(); ++i) weight_index[p.weights[i].get()] = i;
  auto unpack = [&](const VarNode* w) -> Status {
    if (fresh_of.count(w)) return Status::Ok();
    size_t i = weight_index.at(w);
    Var v = VarNode::Make(w->name_hint(), w->type(), true);
    PLIR_ASSIGN_OR_RETURN(Expr get, TupleGetItemNode::Make(weight_source, static_cast<int64_t>(i)));
    body.push_back(VarBindingNode::Make(v, get));
    read_of[v.get()] = i;
    if (consume_params && !existing) {
      PLIR_ASSIGN_OR_RETURN(Expr reset,
                            MakeOpCall("call_packed",
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
  for (const VarBindingNode* b : p.order) {
    if (p.copyable.count(b) && !copies_needed.count(b->var().get())) continue;
    Uses u;
    u.Walk(b->value());
    for (const VarNode* v : u.vars)
      if (weight_index.count(v)) PLIR_RETURN_IF_ERROR(unpack(v));
    Expr value = fresh.MutateExpr(b->value());
    // As TVM's normalizer: an access of a tuple the transform has just
    // built reads the field itself (`%l2 = %l1.0` with `%l1 = (%l0,)` is
    // `%l0`); the binding goes.
    if (auto* get = As<TupleGetItemNode>(value)) {
      auto* t = As<VarNode>(get->tuple());
      auto it = t ? built_tuple.find(t) : built_tuple.end();
      if (it != built_tuple.end() && get->index() >= 0 &&
          get->index() < static_cast<int64_t>(it->second->fields().size())) {
        if (auto* field = As<VarNode>(it->second->fields()[get->index()])) {
          Var known(field);
          fresh.Map(b->var().get(), known);
          fresh_of[b->var().get()] = known;
          continue;
        }
      }
    }
    Var v = VarNode::Make(b->var()->name_hint(), b->var()->type(), true);
    if (auto* t = As<TupleNode>(value)) built_tuple[v.get()] = t;
    body.push_back(VarBindingNode::Make(v, value));
    fresh.Map(b->var().get(), v);
    fresh_of[b->var().get()] = v;
  }
  // Outputs, in order. A weight passed through is read from the parameter
  // tuple here if nothing read it before; as TVM, an output that is a
  // weight already read (passed through, or a lifted value that is one)
  // reads it again, right before the result (with consume_params, a slot
  // already released is not read again: the first read is used).
  std::vector<Expr> out_fields;
  if (!extra_syms.empty()) out_fields.push_back(ShapeExprNode::Make(extra_syms));  // see ExtraSyms
  for (const VarNode* v : outputs) {
    if (weight_index.count(v) && !fresh_of.count(v)) {
      PLIR_RETURN_IF_ERROR(unpack(v));
      out_fields.push_back(fresh_of.at(v));
      continue;
    }
    Var value = fresh_of.at(v);
    auto read = read_of.find(value.get());
    if (read != read_of.end() && !(consume_params && !existing)) {
      Var again = VarNode::Make(p.weights[read->second]->name_hint(), value->type(), true);
      PLIR_ASSIGN_OR_RETURN(
          Expr get, TupleGetItemNode::Make(weight_source, static_cast<int64_t>(read->second)));
      body.push_back(VarBindingNode::Make(again, get));
      value = again;
    }
    out_fields.push_back(value);
  }
  Expr out_tuple = TupleNode::Make(out_fields);
  Var out_var = VarNode::Make("gv", out_tuple->type(), false);
  body.push_back(VarBindingNode::Make(out_var, out_tuple));
  lifted_blocks.push_back(BindingBlockNode::Make(std::move(body), true));
  // As TVM marks it: an entry point (global_symbol) taking no inputs
  // besides the weights (num_input = 0).
  Attrs attrs = existing ? existing->attrs() : Attrs();
  attrs = attrs.With(Symbol("global_symbol"), AttrValue::String(name))
              .With(Symbol("num_input"), AttrValue::Int(0));
  return FunctionNode::Make(name, {params}, out_tuple->type(),
                            SeqExprNode::Make(std::move(lifted_blocks), out_var), attrs);
}

// One parameter of a rewritten function: the transform's output it takes,
// read where `f` read `var` (null: `f` does not use that output).
struct RuntimeParam {
  const VarNode* var;
  std::string name;
  Type type;
};

// `f` without its lifted bindings, taking its inputs and then `outputs`.
Function RewriteRuntime(const FunctionNode* f, const LiftPlan& p,
                        const std::vector<RuntimeParam>& outputs,
                        const std::unordered_map<const VarNode*, const VarNode*>& also_reads = {}) {
  VarSubstituter to_params;
  std::vector<Var> new_params = p.inputs;
  std::unordered_map<const VarNode*, Var> param_of;
  for (const RuntimeParam& o : outputs) {
    Var param = VarNode::Make(o.name, o.type, false);
    new_params.push_back(param);
    if (o.var) {
      to_params.Map(o.var, param);
      param_of[o.var] = param;
    }
  }
  for (const auto& [from, to] : also_reads)
    if (auto it = param_of.find(to); it != param_of.end()) to_params.Map(from, it->second);
  std::vector<Block> blocks;
  for (const Block& b : f->body()->blocks()) {
    std::vector<Binding> kept;
    for (const Binding& x : b->bindings()) {
      if (p.lifted.count(x.get())) continue;
      if (IsStopLift(x->value())) {
        // The barrier has done its work: later uses read its operand, as
        // in TVM's output.
        to_params.Map(
            x->var().get(),
            to_params.MutateExpr(static_cast<const CallNode*>(x->value().get())->args()[0]));
        continue;
      }
      Expr value = to_params.MutateExpr(x->value());
      kept.push_back(value.get() == x->value().get() ? x : VarBindingNode::Make(x->var(), value));
    }
    if (!kept.empty() || b->is_dataflow())
      blocks.push_back(BindingBlockNode::Make(std::move(kept), b->is_dataflow()));
  }
  Expr result = to_params.MutateExpr(f->body()->result());
  return FunctionNode::Make(f->name(), new_params, f->ret_type(),
                            SeqExprNode::Make(std::move(blocks), result), f->attrs());
}

constexpr std::string_view kSuffix = "transform_params";

// num_input of `f` if it is an int within its parameter count; 0 if absent
// (the caller skips the function); an error if out of range.
StatusOr<int64_t> NumInput(const FunctionNode* f, bool* has) {
  const AttrValue* num_input = f->attrs().Get("num_input");
  *has = num_input && num_input->kind() == AttrValue::Kind::kInt;
  if (!*has) return 0;
  int64_t k = num_input->as_int();
  if (k < 0 || k > static_cast<int64_t>(f->params().size()))
    return InvalidArgument("@" + f->name() + ": num_input = " + std::to_string(k) + " but it has " +
                           std::to_string(f->params().size()) + " parameters");
  return k;
}

StatusOr<Function> ExistingTransform(const Module& m, const std::string& name,
                                     const std::string& lifting) {
  if (!m.Contains(name)) return Function();
  Function existing = m.LookupFunction(name);
  if (!existing)
    return AlreadyExists("@" + name + " exists and is not a function; cannot lift " + lifting);
  return existing;
}

// TVM's shared_transform: one function `transform_params` for `targets`,
// which take the same weights (count and types, by position). A binding is
// lifted iff every target has one computing the same value from the same
// weights (compared after mapping each target's weights and lifted
// variables to the first target's); the transform returns the weights some
// target still reads, then the lifted values some target reads, and every
// target takes all of them after its inputs.
StatusOr<Module> RunShared(const Module& m, const std::vector<const FunctionNode*>& targets,
                           const std::vector<int64_t>& num_inputs, bool consume_params) {
  const std::string name(kSuffix);
  std::vector<LiftPlan> plans;
  for (size_t t = 0; t < targets.size(); ++t) plans.push_back(PlanLift(targets[t], num_inputs[t]));
  const LiftPlan& first = plans[0];
  for (size_t t = 1; t < targets.size(); ++t) {
    const LiftPlan& p = plans[t];
    if (p.weights.size() != first.weights.size())
      return FailedPrecondition("LiftTransformParams shared_transform: @" + targets[t]->name() +
                                " takes " + std::to_string(p.weights.size()) +
                                " weights (parameters after num_input) but @" + targets[0]->name() +
                                " takes " + std::to_string(first.weights.size()) +
                                "; functions sharing a transform must take the same weights");
    for (size_t i = 0; i < p.weights.size(); ++i)
      if (!TypeEqual(p.weights[i]->type(), first.weights[i]->type()))
        return FailedPrecondition("LiftTransformParams shared_transform: weight " +
                                  std::to_string(i) + " (%" + p.weights[i]->name_hint() + ") of @" +
                                  targets[t]->name() + " is " + TypeToString(p.weights[i]->type()) +
                                  " but weight " + std::to_string(i) + " (%" +
                                  first.weights[i]->name_hint() + ") of @" + targets[0]->name() +
                                  " is " + TypeToString(first.weights[i]->type()));
  }
  Function existing;
  PLIR_ASSIGN_OR_RETURN(existing, ExistingTransform(m, name, "shared_transform"));

  // Group the candidates by value, in the first target's terms. `unified`
  // maps a candidate's variable (any target) to its group's variable in
  // the first target; a group counts the targets that have it.
  struct Group {
    const VarBindingNode* binding;  // the first target's
    std::unordered_set<size_t> targets;
  };
  std::vector<Group> groups;
  std::unordered_map<const VarNode*, size_t> group_of;  // candidate variable -> group
  std::unordered_multimap<uint64_t, size_t> by_hash;
  for (size_t t = 0; t < targets.size(); ++t) {
    VarSubstituter to_first;
    for (size_t i = 0; i < plans[t].weights.size(); ++i)
      if (t != 0) to_first.Map(plans[t].weights[i].get(), first.weights[i]);
    for (const VarBindingNode* b : plans[t].order) {
      Expr value = t == 0 ? b->value() : to_first.MutateExpr(b->value());
      uint64_t h = StructuralHash(value);
      std::optional<size_t> found;
      auto range = by_hash.equal_range(h);
      for (auto it = range.first; it != range.second && !found; ++it)
        if (StructuralEqual(Expr(groups[it->second].binding->value()), value)) found = it->second;
      if (!found) {
        if (t != 0) continue;  // not in the first target: never shared
        groups.push_back(Group{b, {}});
        found = groups.size() - 1;
        by_hash.emplace(h, *found);
      }
      groups[*found].targets.insert(t);
      group_of[b->var().get()] = *found;
      if (t != 0) to_first.Map(b->var().get(), groups[*found].binding->var());
    }
  }
  // Each target lifts the candidates of the shared groups whose operands it
  // lifts too (in order); the others stay.
  std::vector<std::unordered_map<const VarNode*, const VarNode*>> to_group_var(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) {
    LiftPlan& p = plans[t];
    std::unordered_set<const VarBindingNode*> lifted, copyable;
    std::unordered_set<const VarNode*> weight_only(p.weights.size()), copyable_vars;
    for (const Var& w : p.weights) weight_only.insert(w.get());
    std::vector<const VarBindingNode*> order;
    for (const VarBindingNode* b : p.order) {
      auto g = group_of.find(b->var().get());
      if (g == group_of.end() || groups[g->second].targets.size() != targets.size()) continue;
      Uses u;
      u.Walk(b->value());
      bool ok = true;
      for (const VarNode* v : u.vars) ok = ok && (weight_only.count(v) || copyable_vars.count(v));
      if (!ok) continue;
      order.push_back(b);
      if (p.lifted.count(b)) {
        lifted.insert(b);
        weight_only.insert(b->var().get());
        to_group_var[t][b->var().get()] = groups[g->second].binding->var().get();
      } else {
        copyable.insert(b);
        copyable_vars.insert(b->var().get());
      }
    }
    p.order = std::move(order);
    p.lifted = std::move(lifted);
    p.copyable = std::move(copyable);
    p.copyable_vars = std::move(copyable_vars);
    p.weight_only = std::move(weight_only);
  }
  if (existing && plans[0].lifted.empty()) return m;  // lifted already: idempotent

  // The outputs, in the first target's terms: weights some target reads,
  // in order, then lifted values some target reads, in binding order.
  std::unordered_set<size_t> weights_needed;
  std::unordered_set<const VarNode*> lifted_needed;  // first target's variables
  for (size_t t = 0; t < targets.size(); ++t) {
    std::unordered_map<const VarNode*, size_t> weight_index;
    for (size_t i = 0; i < plans[t].weights.size(); ++i)
      weight_index[plans[t].weights[i].get()] = i;
    for (const VarNode* v : NeededAtRuntime(targets[t], plans[t])) {
      if (auto w = weight_index.find(v); w != weight_index.end())
        weights_needed.insert(w->second);
      else
        lifted_needed.insert(to_group_var[t].at(v));
    }
  }
  std::vector<const VarNode*> outputs;
  for (size_t i = 0; i < first.weights.size(); ++i)
    if (weights_needed.count(i)) outputs.push_back(first.weights[i].get());
  for (const VarBindingNode* b : first.order)
    if (first.lifted.count(b) && lifted_needed.count(b->var().get()))
      outputs.push_back(b->var().get());
  // The transform computes each shared value once (a target may compute
  // one twice: its later copies read the first).
  LiftPlan emit = first;
  emit.order.clear();
  for (const VarBindingNode* b : first.order)
    if (!first.lifted.count(b) || groups[group_of.at(b->var().get())].binding == b)
      emit.order.push_back(b);
  PLIR_ASSIGN_OR_RETURN(Function transform,
                        BuildTransform(name, existing, emit, outputs, consume_params));

  Module out = m;
  for (size_t t = 0; t < targets.size(); ++t) {
    // The target's own variable for each output, if it has one.
    std::unordered_map<const VarNode*, const VarNode*> own;  // first target's -> this one's
    for (size_t i = 0; i < first.weights.size(); ++i)
      own[first.weights[i].get()] = plans[t].weights[i].get();
    std::unordered_map<const VarNode*, const VarNode*>
        duplicates;  // a later lifted copy -> the earliest
    for (const VarBindingNode* b : plans[t].order) {
      if (!plans[t].lifted.count(b)) continue;
      const VarNode* v = b->var().get();
      auto [it, inserted] = own.emplace(to_group_var[t].at(v), v);
      if (!inserted) duplicates[v] = it->second;
    }
    std::vector<RuntimeParam> params;
    for (const VarNode* o : outputs) {
      auto it = own.find(o);
      const VarNode* mine = it == own.end() ? nullptr : it->second;
      params.push_back(RuntimeParam{mine, (mine ? mine : o)->name_hint(), o->type()});
    }
    out = out.WithItem(RewriteRuntime(targets[t], plans[t], params, duplicates));
  }
  return out.WithItem(transform);
}

// Symbolic dimensions what stays in `f` uses that only the weights bind
// (not the inputs, nor the types of the values passed back): the transform
// returns them too, first, as one shape value (`shape[(n,)]`), which the
// rewritten function takes right after its inputs, as TVM does.
std::vector<Dim> ExtraSyms(const FunctionNode* f, const LiftPlan& p,
                           const std::vector<const VarNode*>& outputs) {
  std::unordered_set<Symbol> bound;
  for (const Var& in : p.inputs) CollectSyms(in->type(), &bound, /*defs_only=*/true);
  for (const VarNode* v : outputs) CollectSyms(v->type(), &bound, /*defs_only=*/true);
  std::unordered_set<Symbol> used;
  for (const Block& b : f->body()->blocks())
    for (const Binding& x : b->bindings())
      if (!p.lifted.count(x.get())) used.merge(BindingSyms(*x));
  for (Symbol s : DimNamesUsed(f->body()->result())) used.insert(s);
  CollectSyms(f->ret_type(), &used);
  std::vector<Symbol> in_order;  // as the weights' types name them
  for (const Var& w : p.weights) CollectSymsInOrder(w->type(), &in_order);
  std::unordered_set<Symbol> seen;
  std::vector<Dim> extra;
  for (Symbol s : in_order)
    if (used.count(s) && !bound.count(s) && seen.insert(s).second) extra.push_back(Dim::Sym(s));
  return extra;
}

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  const bool consume_params = ctx.options.GetBool("consume_params");
  const std::vector<std::string> shared_names =
      ctx.options.GetStringList("shared_transform_functions");
  if (ctx.options.GetBool("shared_transform") || !shared_names.empty()) {
    // The functions sharing one transform: those named, in that order; else
    // every function with num_input but a transform, by name (as TVM).
    std::vector<const FunctionNode*> targets;
    std::vector<int64_t> num_inputs;
    auto add = [&](const FunctionNode* f) -> Status {
      bool has = false;
      PLIR_ASSIGN_OR_RETURN(int64_t k, NumInput(f, &has));
      if (!has)
        return InvalidArgument("LiftTransformParams shared_transform_functions: @" + f->name() +
                               " has no integer attribute num_input");
      targets.push_back(f);
      num_inputs.push_back(k);
      return Status::Ok();
    };
    if (!shared_names.empty()) {
      for (const std::string& n : shared_names) {
        Function f = m.LookupFunction(n);
        if (!f)
          return InvalidArgument("LiftTransformParams shared_transform_functions: " +
                                 std::string(m.Contains(n) ? "@" + n + " is not a function"
                                                           : "the module has no function @" + n));
        PLIR_RETURN_IF_ERROR(add(f.get()));
      }
    } else {
      std::vector<std::pair<const FunctionNode*, int64_t>> all;
      for (const Item& item : m.items()) {
        auto* f = As<FunctionNode>(item);
        bool has = false;
        if (!f || f->name().ends_with(kSuffix)) continue;
        PLIR_ASSIGN_OR_RETURN(int64_t k, NumInput(f, &has));
        if (has) all.emplace_back(f, k);
      }
      std::sort(all.begin(), all.end(),
                [](auto& a, auto& b) { return a.first->name() < b.first->name(); });
      for (const auto& [f, k] : all) {
        targets.push_back(f);
        num_inputs.push_back(k);
      }
    }
    if (targets.empty()) return m;
    return RunShared(m, targets, num_inputs, consume_params);
  }

  Module out = m;
  for (const Item& item : m.items()) {
    auto* f = As<FunctionNode>(item);
    if (!f) continue;
    bool has = false;
    PLIR_ASSIGN_OR_RETURN(int64_t k, NumInput(f, &has));
    if (!has) continue;
    // A lifted transform itself (it carries num_input = 0) is not lifted.
    if (f->name().size() > kSuffix.size() + 1 && f->name().ends_with("_" + std::string(kSuffix)) &&
        m.LookupFunction(f->name().substr(0, f->name().size() - kSuffix.size() - 1)))
      continue;
    std::string lifted_name = f->name() + "_" + std::string(kSuffix);
    PLIR_ASSIGN_OR_RETURN(Function existing, ExistingTransform(m, lifted_name, "@" + f->name()));
    LiftPlan p = PlanLift(f, k);
    // Idempotent: a function already lifted (its transform exists) with
    // nothing more to lift is left as it is.
    if (existing && p.lifted.empty()) continue;
    std::unordered_set<const VarNode*> needed = NeededAtRuntime(f, p);
    std::vector<const VarNode*> outputs;  // weights, then lifted values
    for (const Var& w : p.weights)
      if (needed.count(w.get())) outputs.push_back(w.get());
    for (const VarBindingNode* b : p.order)
      if (p.lifted.count(b) && needed.count(b->var().get())) outputs.push_back(b->var().get());
    std::vector<Dim> extra = ExtraSyms(f, p, outputs);
    PLIR_ASSIGN_OR_RETURN(Function lifted_fn,
                          BuildTransform(lifted_name, existing, p, outputs, consume_params, extra));
    std::vector<RuntimeParam> params;
    if (!extra.empty())
      params.push_back(RuntimeParam{nullptr, "shape", ShapeTypeNode::Make(extra)});
    for (const VarNode* v : outputs) params.push_back(RuntimeParam{v, v->name_hint(), v->type()});
    out = out.WithItem(RewriteRuntime(f, p, params)).WithItem(lifted_fn);
  }
  return out;
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "LiftTransformParams";
  def.info.description =
      "moves weight-only computation (params after num_input) into <name>_transform_params";
  def.info.options = {
      {"consume_params", OptionType::kBool, AttrValue::Bool(false),
       "release each weight's slot of the parameter tuple right after it is "
       "read (TVM's relax.lift_transform_params.consume_params)"},
      {"shared_transform", OptionType::kBool, AttrValue::Bool(false),
       "one function transform_params for every function with num_input, lifting what they all "
       "compute alike from the same weights (TVM's shared_transform=True)"},
      {"shared_transform_functions", OptionType::kStringList, AttrValue::List({}),
       "as shared_transform, for these functions only (TVM's shared_transform=[names])"}};
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("lift_transform_params", "1.0", Register)
