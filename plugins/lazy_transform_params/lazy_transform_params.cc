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
// left alone with a warning.
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

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
        ctx.Warn(pass, "@" + f->name() + " uses %" + params->name_hint() +
                           " other than through %" + params->name_hint() + ".i bindings; left unchanged");
        return f;
      }
  }
  // Output positions of each value.
  std::unordered_map<const VarNode*, std::vector<int64_t>> positions;
  for (size_t j = 0; j < out_tuple->fields().size(); ++j) {
    auto* v = As<VarNode>(out_tuple->fields()[j]);
    if (!v) {
      ctx.Warn(pass, "@" + f->name() + ": output field " + std::to_string(j) +
                         " is not a variable (run ToBasicBlockNormalForm first); left unchanged");
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
    if (load_index.count(b->var().get())) kills_after[last_use[b->var().get()]].push_back(b->var().get());

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
        Expr get = *MakeOpCall(get_set, {StringImmNode::Make(names.get), PrimValueNode::Int(it->second)},
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
        Expr set = *MakeOpCall(get_set, {StringImmNode::Make(names.set), PrimValueNode::Int(j), bound},
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
  return FunctionNode::Make(f->name(), {}, result->type(), SeqExprNode::Make(std::move(blocks), result),
                            f->attrs());
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "LazyTransformParams";
  def.info.description =
      "loads each parameter of *transform_params functions on demand and frees it after its last use";
  def.info.kind = PassKind::kFunction;
  def.info.options = {
      {"get_item", OptionType::kString, AttrValue::String("get_item"), "packed function that loads parameter i"},
      {"set_item", OptionType::kString, AttrValue::String("set_item"), "packed function that receives output j"},
      {"kill_object", OptionType::kString, AttrValue::String("vm.kill_object"), "op that frees a value"},
  };
  def.function_fn = [](const Function& f, const PassCallContext& ctx) -> StatusOr<Function> {
    if (!EndsWith(f->name(), "transform_params")) return f;
    const std::string pass = "LazyTransformParams";
    if (f->params().size() != 1 || f->params()[0]->type()->kind() != NodeKind::kTupleType) {
      ctx.context.Warn(pass, "@" + f->name() +
                                 " does not take exactly one tuple parameter; left unchanged");
      return f;
    }
    Names names{ctx.options.GetString("get_item"), ctx.options.GetString("set_item"),
                ctx.options.GetString("kill_object")};
    return Transform(f, names, ctx.context, pass);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("lazy_transform_params", "1.0", Register)
