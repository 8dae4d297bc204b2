// LazyTransformParams (after TVM Relax's pass of the same name): a
// transform_params function receives every parameter at once as one tuple,
// which can exceed memory. The lazy form loads each parameter on demand,
// hands each result on as soon as it is computed, and frees each loaded
// parameter right after its last use.
//
// For every function whose name ends in "transform_params" and whose only
// parameter is a tuple:
//   - `%v = %params.i` becomes `%v: Object = call_packed("get_item", i)`;
//   - a value at position j of the returned tuple is followed by
//     `call_packed("set_item", j, value)` right after its binding (a
//     parameter that goes straight to the output, right after its load);
//   - after the binding where a loaded parameter is used for the last time
//     (outside the return; its own binding when it is never used), and after
//     that binding's set_items, comes `vm.kill_object(%v)`;
//   - the function takes no parameters and returns the tuple of set_item
//     results, typed Object.
// Later uses of a value handed to set_item keep using the value itself.
// Other functions are untouched; a function with a non-tuple parameter is
// left alone with a warning. That is the form of TVM's first version of the
// pass (examples/spec/lazy_transform_params.expected.plir); TVM's current
// form is behind options (TransformCurrent below).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/analysis/free_vars.h"
#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace plir_lazy_io {
// LazyGetInput and LazySetOutput (lazy_io.cc).
plir::Status RegisterLazyIoPasses(plir::PluginHost& host);
}  // namespace plir_lazy_io

namespace {

using namespace plir;

struct Names {
  std::string get, set, kill;
};

StatusOr<Function> Transform(const Function& f, const Names& names, PassContext& ctx,
                             const std::string& pass) {
  const Var& params = f->params()[0];
  const SeqExpr& body = f->body();
  // The returned tuple: the result, or the tuple a result variable is bound to.
  const TupleNode* out_tuple = As<TupleNode>(body->result());
  const VarBindingNode* out_binding = nullptr;
  std::vector<const VarBindingNode*> all;
  for (const Block& b : body->blocks())
    for (const Binding& x : b->bindings()) all.push_back(x.get());
  if (!out_tuple) {
    if (auto* rv = As<VarNode>(body->result()))
      for (const VarBindingNode* b : all)
        if (b->var().get() == rv) {
          out_binding = b;
          out_tuple = As<TupleNode>(b->value());
        }
  }
  if (!out_tuple) {
    ctx.Warn(pass, "@" + f->name() + " does not return a tuple; left unchanged");
    return f;
  }
  // Loads: bindings `%v = %params.i`. Any other use of %params is unsupported.
  std::unordered_map<const VarNode*, int64_t> load_index;
  for (const VarBindingNode* b : all) {
    auto* t = As<TupleGetItemNode>(b->value());
    if (t && t->tuple().get() == params.get()) load_index[b->var().get()] = t->index();
  }
  {
    std::vector<const VarNode*> uses = CollectVarUses(body->result().get());
    for (const VarBindingNode* b : all)
      if (!(As<TupleGetItemNode>(b->value()) &&
            As<TupleGetItemNode>(b->value())->tuple().get() == params.get())) {
        std::vector<const VarNode*> u = CollectVarUses(b->value().get());
        uses.insert(uses.end(), u.begin(), u.end());
      }
    for (const VarNode* v : uses)
      if (v == params.get()) {
        ctx.Warn(pass, "@" + f->name() + " uses %" + params->name_hint() + " other than through %" +
                           params->name_hint() + ".i bindings; left unchanged");
        return f;
      }
  }
  // Output positions of each value.
  std::unordered_map<const VarNode*, std::vector<int64_t>> positions;
  for (size_t j = 0; j < out_tuple->fields().size(); ++j) {
    auto* v = As<VarNode>(out_tuple->fields()[j]);
    if (!v) {
      ctx.Warn(pass, "@" + f->name() + ": output field " + std::to_string(j) +
                         " is not a variable (run Normalize first); left unchanged");
      return f;
    }
    positions[v].push_back(static_cast<int64_t>(j));
  }
  // Last use of each loaded parameter, outside the return.
  std::unordered_map<const VarNode*, const VarBindingNode*> last_use;
  for (const VarBindingNode* b : all) {
    if (load_index.count(b->var().get())) last_use[b->var().get()] = b;
    if (b == out_binding) continue;
    for (const VarNode* v : CollectVarUses(b->value().get()))
      if (load_index.count(v)) last_use[v] = b;
  }
  std::unordered_map<const VarBindingNode*, std::vector<const VarNode*>> kills_after;
  for (const VarBindingNode* b : all)  // keep load order among kills of one binding
    if (load_index.count(b->var().get()))
      kills_after[last_use[b->var().get()]].push_back(b->var().get());

  Op get_set = OpRegistry::Global().Lookup("call_packed");
  Op kill = OpRegistry::Global().Lookup(names.kill);
  if (!kill) return InvalidArgument("no op named '" + names.kill + "' to free values with");
  Type object = ObjectTypeNode::Get();

  // Rebuild the blocks. Every field of the returned tuple is bound (and so
  // set) before the tuple's own binding, so the tuple of set_item results
  // can be built in its place.
  std::unordered_map<const VarNode*, Var> loaded;  // old load var -> new Object var
  std::map<int64_t, Var> set_results;
  VarSubstituter remap;
  auto result_tuple = [&]() -> StatusOr<Expr> {
    std::vector<Expr> fields;
    for (size_t j = 0; j < out_tuple->fields().size(); ++j) {
      auto it = set_results.find(static_cast<int64_t>(j));
      if (it == set_results.end())
        return Internal("output " + std::to_string(j) + " of @" + f->name() + " was never set");
      fields.push_back(it->second);
    }
    return Expr(TupleNode::Make(std::move(fields)));
  };
  std::vector<Block> blocks;
  Expr result;
  for (const Block& block : body->blocks()) {
    bool df = block->is_dataflow();
    // set_item results are read by the returned tuple: dataflow variables
    // only if that tuple is bound in this same dataflow block.
    bool tuple_here = false;
    for (const Binding& x : block->bindings()) tuple_here |= x.get() == out_binding;
    std::vector<Binding> out;
    for (const Binding& x : block->bindings()) {
      const VarBindingNode* b = x.get();
      if (b == out_binding) {
        PLIR_ASSIGN_OR_RETURN(Expr tuple, result_tuple());
        Var v = VarNode::Make(b->var()->name_hint(), tuple->type(), b->var()->is_dataflow());
        out.push_back(VarBindingNode::Make(v, tuple));
        result = v;
        continue;
      }
      Var bound;
      if (auto it = load_index.find(b->var().get()); it != load_index.end()) {
        Expr get =
            *MakeOpCall(get_set, {StringImmNode::Make(names.get), PrimValueNode::Int(it->second)},
                        Attrs(), {object});
        bound = VarNode::Make(b->var()->name_hint(), object, df);
        out.push_back(VarBindingNode::Make(bound, get));
        remap.Map(b->var().get(), bound);
        loaded[b->var().get()] = bound;
      } else {
        Expr value = remap.MutateExpr(b->value());
        if (value.get() == b->value().get()) {
          out.push_back(x);
          bound = b->var();
        } else {
          // Types may loosen (a loaded parameter is an Object).
          bound = VarNode::Make(b->var()->name_hint(), value->type(), b->var()->is_dataflow());
          if (TypeCompatible(b->var()->type(), value->type()) &&
              b->var()->type()->kind() != NodeKind::kObjectType)
            bound = VarNode::Make(b->var()->name_hint(), b->var()->type(), b->var()->is_dataflow());
          out.push_back(VarBindingNode::Make(bound, value));
          remap.Map(b->var().get(), bound);
        }
      }
      for (int64_t j : positions[b->var().get()]) {
        Expr set =
            *MakeOpCall(get_set, {StringImmNode::Make(names.set), PrimValueNode::Int(j), bound},
                        Attrs(), {object});
        Var s = VarNode::Make("lv", object, df && tuple_here);
        out.push_back(VarBindingNode::Make(s, set));
        set_results[j] = s;
      }
      for (const VarNode* p : kills_after[b]) {
        StatusOr<Expr> k = MakeOpCall(kill, {loaded.at(p)});
        if (!k.ok()) return k.status();
        out.push_back(VarBindingNode::Make(VarNode::Make("lv", (*k)->type(), df), *k));
      }
    }
    blocks.push_back(BindingBlockNode::Make(std::move(out), df));
  }
  if (!result) {
    // The body returned a literal tuple.
    PLIR_ASSIGN_OR_RETURN(result, result_tuple());
  }
  return FunctionNode::Make(f->name(), {}, result->type(),
                            SeqExprNode::Make(std::move(blocks), result), f->attrs());
}

// TVM's current form (options empty_tuple_result, extra_get_item_params,
// extra_set_item_params, or set_item = "" for loads only):
//   - each loaded parameter is `%v: Object = call_packed(get, extra_get...,
//     i)`, then `match_cast` to the parameter's type (which binds its
//     symbolic dimensions), then (tuple parameter) a copy `%v_m = ...` the
//     uses read; the parameters of a function without a tuple parameter are
//     loaded right before their first use (those before num_input stay);
//   - after each binding come: vm.kill_object of each loaded parameter used
//     there for the last time, then `call_packed(set, extra_set..., j, v)`
//     for each output j whose value is not used later, then the kills of
//     parameters whose last use was such a set_item;
//   - the returned tuple's binding becomes `()`, which is returned.
// With set_item = "", outputs are returned as they were and nothing is
// killed. The function's parameters are the extra_get, then the extra_set
// Object parameters; before them, a shape value parameter for the symbolic
// dimensions that only parameters never loaded bound (`Shape[(n,)]`).
// Appends the symbolic dimension names of `t` to *out, in the order `t`
// names them (every name it uses, or only those it can bind).
void CollectSyms(const Type& t, std::vector<Symbol>* out, DimNameKind kind = DimNameKind::kAll) {
  for (Symbol s : TypeDimNames(t, kind)) out->push_back(s);
}

struct CurrentOptions {
  std::vector<std::string> extra_get, extra_set;
};

StatusOr<Function> TransformCurrent(const Function& f, const Names& names, const CurrentOptions& o,
                                    PassContext& ctx, const std::string& pass) {
  const SeqExpr& body = f->body();
  const bool set_enabled = !names.set.empty();
  std::vector<const VarBindingNode*> all;
  for (const Block& b : body->blocks())
    for (const Binding& x : b->bindings()) all.push_back(x.get());
  Type object = ObjectTypeNode::Get();
  Op packed = OpRegistry::Global().Lookup("call_packed");
  Op kill = OpRegistry::Global().Lookup(names.kill);
  if (!kill) return InvalidArgument("no op named '" + names.kill + "' to free values with");

  // The loaded parameters: `%v = %params.i` bindings of a tuple parameter,
  // or the parameters after num_input.
  const bool tuple_param =
      f->params().size() == 1 && f->params()[0]->type()->kind() == NodeKind::kTupleType;
  std::vector<Var> kept_params;
  std::unordered_map<const VarNode*, int64_t> load_index;   // tuple mode: binding var -> i
  std::unordered_map<const VarNode*, int64_t> param_index;  // parameter mode: param -> i
  if (tuple_param) {
    const Var& params = f->params()[0];
    for (const VarBindingNode* b : all) {
      auto* t = As<TupleGetItemNode>(b->value());
      if (t && t->tuple().get() == params.get()) load_index[b->var().get()] = t->index();
    }
    std::vector<const VarNode*> uses = CollectVarUses(body->result().get());
    for (const VarBindingNode* b : all)
      if (!load_index.count(b->var().get())) {
        std::vector<const VarNode*> u = CollectVarUses(b->value().get());
        uses.insert(uses.end(), u.begin(), u.end());
      }
    for (const VarNode* v : uses)
      if (v == params.get()) {
        ctx.Warn(pass, "@" + f->name() + " uses %" + params->name_hint() + " other than through %" +
                           params->name_hint() + ".i bindings; left unchanged");
        return f;
      }
  } else {
    int64_t k = 0;
    if (const AttrValue* n = f->attrs().Get("num_input"); n && n->kind() == AttrValue::Kind::kInt)
      k = std::clamp<int64_t>(n->as_int(), 0, static_cast<int64_t>(f->params().size()));
    for (int64_t i = 0; i < static_cast<int64_t>(f->params().size()); ++i) {
      if (i < k)
        kept_params.push_back(f->params()[i]);
      else
        param_index[f->params()[i].get()] = i - k;
    }
  }
  auto is_loaded = [&](const VarNode* v) { return load_index.count(v) || param_index.count(v); };

  // Symbolic dimensions the tuple parameter's type bound that no load binds
  // (a parameter never loaded, such as a Shape) but the body uses: the lazy
  // function takes them as a shape value parameter, first (as TVM does).
  Var sym_param;
  if (tuple_param) {
    std::vector<Symbol> declared, bound;
    CollectSyms(f->params()[0]->type(), &declared, DimNameKind::kBindable);
    for (const auto& [v, i] : load_index) CollectSyms(v->type(), &bound, DimNameKind::kBindable);
    std::vector<Symbol> used;
    auto use = [&](const std::vector<Symbol>& names) {
      used.insert(used.end(), names.begin(), names.end());
    };
    for (const VarBindingNode* b : all)
      if (!load_index.count(b->var().get())) {
        CollectSyms(b->var()->type(), &used);
        use(DimNamesUsed(b->value()));
      }
    use(DimNamesUsed(body->result()));
    CollectSyms(f->ret_type(), &used);
    auto has = [](const std::vector<Symbol>& v, Symbol s) {
      return std::find(v.begin(), v.end(), s) != v.end();
    };
    std::vector<Dim> extra;
    for (Symbol s : declared)
      if (!has(bound, s) && has(used, s)) {
        bound.push_back(s);
        extra.push_back(Dim::Sym(s));
      }
    if (!extra.empty())
      sym_param = VarNode::Make("shape_expr", ShapeTypeNode::Make(std::move(extra)));
  }

  // The outputs: the returned tuple (bound or literal) or a single value.
  const TupleNode* out_tuple = As<TupleNode>(body->result());
  const VarBindingNode* out_binding = nullptr;
  if (!out_tuple) {
    if (auto* rv = As<VarNode>(body->result()))
      for (const VarBindingNode* b : all)
        if (b->var().get() == rv && As<TupleNode>(b->value())) {
          out_binding = b;
          out_tuple = As<TupleNode>(b->value());
        }
  }
  std::vector<Expr> out_fields;
  if (out_tuple)
    out_fields.assign(out_tuple->fields().begin(), out_tuple->fields().end());
  else
    out_fields.push_back(body->result());

  // Where each binding's variable is last used (outside the returned tuple).
  std::unordered_map<const VarNode*, size_t> last_use, def_at;
  for (size_t i = 0; i < all.size(); ++i) {
    const VarBindingNode* b = all[i];
    def_at[b->var().get()] = i;
    if (b == out_binding) continue;
    for (const VarNode* v : CollectVarUses(b->value().get())) last_use[v] = i;
  }
  // The set_items after each binding (by output position), and those for
  // values with no binding (literals, parameters used nowhere), emitted at
  // the returned tuple's binding or at the end.
  std::map<size_t, std::vector<int64_t>> sets_after;
  std::vector<int64_t> sets_at_end;
  if (set_enabled) {
    for (size_t j = 0; j < out_fields.size(); ++j) {
      auto* v = As<VarNode>(out_fields[j]);
      auto d = v ? def_at.find(v) : def_at.end();
      size_t at = SIZE_MAX;
      if (d != def_at.end()) at = d->second;
      if (v) {
        if (auto u = last_use.find(v); u != last_use.end())
          at = (at == SIZE_MAX) ? u->second : std::max(at, u->second);
      }
      if (at == SIZE_MAX)
        sets_at_end.push_back(static_cast<int64_t>(j));
      else
        sets_after[at].push_back(static_cast<int64_t>(j));
    }
  }

  std::vector<Var> new_params = kept_params;
  if (sym_param) new_params.push_back(sym_param);
  std::vector<Expr> get_extra, set_extra;
  for (const std::string& n : o.extra_get) {
    Var v = VarNode::Make(n, object);
    new_params.push_back(v);
    get_extra.push_back(v);
  }
  for (const std::string& n : o.extra_set) {
    Var v = VarNode::Make(n, object);
    new_params.push_back(v);
    set_extra.push_back(v);
  }

  VarSubstituter remap;
  std::unordered_map<const VarNode*, Var> loaded;  // old variable -> its typed load
  std::unordered_set<const VarNode*> killed;
  std::vector<const VarNode*> load_order;
  auto load = [&](const VarNode* old, int64_t i, const Type& type, bool df, bool copy,
                  std::vector<Binding>* out) -> Status {
    std::vector<Expr> args = {StringImmNode::Make(names.get)};
    args.insert(args.end(), get_extra.begin(), get_extra.end());
    args.push_back(PrimValueNode::Int(i));
    PLIR_ASSIGN_OR_RETURN(Expr get, MakeOpCall(packed, args, Attrs(), {object}));
    Var raw = VarNode::Make(old->name_hint(), object, df);
    out->push_back(VarBindingNode::Make(raw, get));
    PLIR_ASSIGN_OR_RETURN(Expr cast, MakeOpCall("match_cast", {raw}, Attrs(), {type}));
    Var typed = VarNode::Make(copy ? "gv" : old->name_hint(), type, df);
    out->push_back(VarBindingNode::Make(typed, cast));
    if (copy) {
      Var m = VarNode::Make(old->name_hint() + "_m", type, df);
      out->push_back(VarBindingNode::Make(m, typed));
      typed = m;
    }
    remap.Map(old, typed);
    loaded[old] = typed;
    load_order.push_back(old);
    return Status::Ok();
  };
  auto set_item = [&](int64_t j, bool df, std::vector<Binding>* out) -> Status {
    std::vector<Expr> args = {StringImmNode::Make(names.set)};
    args.insert(args.end(), set_extra.begin(), set_extra.end());
    args.push_back(PrimValueNode::Int(j));
    args.push_back(remap.MutateExpr(out_fields[j]));
    PLIR_ASSIGN_OR_RETURN(Expr set, MakeOpCall(packed, args, Attrs(), {object}));
    out->push_back(VarBindingNode::Make(VarNode::Make("_", object, df), set));
    return Status::Ok();
  };
  auto kill_if_done = [&](const VarNode* v, size_t /*i*/, bool df,
                          std::vector<Binding>* out) -> Status {
    if (!set_enabled || killed.count(v) || !loaded.count(v)) return Status::Ok();
    PLIR_ASSIGN_OR_RETURN(Expr k, MakeOpCall(kill, {loaded.at(v)}));
    out->push_back(VarBindingNode::Make(VarNode::Make("_", k->type(), df), k));
    killed.insert(v);
    return Status::Ok();
  };

  std::vector<Block> blocks;
  Expr result;
  size_t index = 0;
  for (const Block& block : body->blocks()) {
    bool df = block->is_dataflow();
    std::vector<Binding> out;
    for (const Binding& x : block->bindings()) {
      const VarBindingNode* b = x.get();
      size_t i = index++;
      if (auto it = load_index.find(b->var().get()); it != load_index.end()) {
        PLIR_RETURN_IF_ERROR(load(b->var().get(), it->second, b->var()->type(), df, true, &out));
      } else {
        // Parameters are loaded right before their first use.
        for (const VarNode* v : CollectVarUses(b->value().get()))
          if (auto p = param_index.find(v); p != param_index.end() && !loaded.count(v))
            PLIR_RETURN_IF_ERROR(load(v, p->second, v->type(), df, false, &out));
        if (b == out_binding && set_enabled) {
          Var v = VarNode::Make(b->var()->name_hint(), TupleTypeNode::Make({}),
                                b->var()->is_dataflow());
          out.push_back(VarBindingNode::Make(v, TupleNode::Make({})));
          result = v;
          for (int64_t j : sets_at_end) PLIR_RETURN_IF_ERROR(set_item(j, df, &out));
          sets_at_end.clear();
        } else {
          Expr value = remap.MutateExpr(b->value());
          if (value.get() == b->value().get()) {
            out.push_back(x);
          } else {
            Var nv = VarNode::Make(b->var()->name_hint(), value->type(), b->var()->is_dataflow());
            out.push_back(VarBindingNode::Make(nv, value));
            remap.Map(b->var().get(), nv);
          }
        }
      }
      // Kills of parameters last used here, set_items of outputs done here,
      // then kills of parameters whose last use was such a set_item.
      for (const VarNode* v : load_order) {
        if (killed.count(v)) continue;
        auto u = last_use.find(v);
        bool output = false;
        for (const auto& [at, js] : sets_after)
          for (int64_t j : js) output |= out_fields[j].get() == v;
        if (u != last_use.end() && u->second == i && !output)
          PLIR_RETURN_IF_ERROR(kill_if_done(v, i, df, &out));
      }
      if (auto s = sets_after.find(i); s != sets_after.end()) {
        for (int64_t j : s->second) PLIR_RETURN_IF_ERROR(set_item(j, df, &out));
        for (int64_t j : s->second)
          if (auto* v = As<VarNode>(out_fields[j]); v && is_loaded(v)) {
            auto u = last_use.find(v);
            if (u == last_use.end() || u->second <= i)
              PLIR_RETURN_IF_ERROR(kill_if_done(v, i, df, &out));
          }
      }
    }
    blocks.push_back(BindingBlockNode::Make(std::move(out), df));
  }
  // Parameters only the result reads are loaded at the end.
  {
    std::vector<Binding> tail;
    for (const VarNode* v : CollectVarUses(body->result().get()))
      if (auto p = param_index.find(v); p != param_index.end() && !loaded.count(v))
        PLIR_RETURN_IF_ERROR(load(v, p->second, v->type(), false, false, &tail));
    if (!tail.empty()) blocks.push_back(BindingBlockNode::Make(std::move(tail), false));
  }
  if (!set_enabled) {
    result = remap.MutateExpr(body->result());
  } else if (!result) {
    // The returned value had no tuple binding: set what is left, return ().
    std::vector<Binding> tail;
    for (int64_t j : sets_at_end) PLIR_RETURN_IF_ERROR(set_item(j, false, &tail));
    if (!tail.empty()) blocks.push_back(BindingBlockNode::Make(std::move(tail), false));
    result = TupleNode::Make({});
  }
  Type ret = set_enabled ? result->type() : f->ret_type();
  if (ret && !TypeCompatible(ret, result->type())) ret = result->type();
  return FunctionNode::Make(f->name(), std::move(new_params), set_enabled ? result->type() : ret,
                            SeqExprNode::Make(std::move(blocks), result), f->attrs());
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "LazyTransformParams";
  def.info.description =
      "loads each parameter of *transform_params functions on demand and frees it after its last "
      "use";
  def.info.kind = PassKind::kFunction;
  def.info.options = {
      {"get_item", OptionType::kString, AttrValue::String("get_item"),
       "packed function that loads parameter i"},
      {"set_item", OptionType::kString, AttrValue::String("set_item"),
       "packed function that receives output j (\"\": none, outputs are returned; TVM's "
       "fset_item=None)"},
      {"kill_object", OptionType::kString, AttrValue::String("vm.kill_object"),
       "op that frees a value"},
      {"empty_tuple_result", OptionType::kBool, AttrValue::Bool(false),
       "TVM's current form: loads match_cast to the parameter's type, set_item results are "
       "dropped and the function returns () (implied by the three options below)"},
      {"extra_get_item_params", OptionType::kStringList, AttrValue::List({}),
       "Object parameters the lazy function takes and passes first to get_item"},
      {"extra_set_item_params", OptionType::kStringList, AttrValue::List({}),
       "Object parameters the lazy function takes and passes first to set_item"},
  };
  def.function_fn = [](const Function& f, const PassCallContext& ctx) -> StatusOr<Function> {
    if (!EndsWith(f->name(), "transform_params")) return f;
    const std::string pass = "LazyTransformParams";
    CurrentOptions current{ctx.options.GetStringList("extra_get_item_params"),
                           ctx.options.GetStringList("extra_set_item_params")};
    if (ctx.options.GetBool("empty_tuple_result") || !current.extra_get.empty() ||
        !current.extra_set.empty() || ctx.options.GetString("set_item").empty()) {
      Names names{ctx.options.GetString("get_item"), ctx.options.GetString("set_item"),
                  ctx.options.GetString("kill_object")};
      return TransformCurrent(f, names, current, ctx.context, pass);
    }
    if (f->params().size() != 1 || f->params()[0]->type()->kind() != NodeKind::kTupleType) {
      ctx.context.Warn(
          pass, "@" + f->name() + " does not take exactly one tuple parameter; left unchanged");
      return f;
    }
    Names names{ctx.options.GetString("get_item"), ctx.options.GetString("set_item"),
                ctx.options.GetString("kill_object")};
    return Transform(f, names, ctx.context, pass);
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(def)));
  return plir_lazy_io::RegisterLazyIoPasses(host);
}

}  // namespace

PLIR_PLUGIN("lazy_transform_params", "1.0", Register)
