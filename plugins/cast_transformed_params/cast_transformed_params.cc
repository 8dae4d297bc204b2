// CastTransformedParams: stores the weights that LiftTransformParams
// produced in a smaller dtype (float16 by default), as MLC-LLM converts a
// model's weights: each `F_transform_params` returns its float32 outputs
// cast to `dtype`, and `F` takes those parameters in `dtype` and casts each
// back to float32 once, at the top of its body. F's computation stays in
// float32; only the stored weights shrink (half the bytes for float16).
//
// Run it after LiftTransformParams and before LazyTransformParams: the
// casts are then part of the transform, so the lazy form loads a weight,
// transforms it, casts it and hands it to set_item before the next one.
//
// Pairs: a function T named `<F>_transform_params` whose result type is a
// tuple, and the function F whose parameters after `num_input` are T's
// outputs in order (LiftTransformParams' contract). A pair that breaks the
// contract (no F, or F's parameters do not match T's outputs) is left
// unchanged with a warning.
//
// In T, a result that is a variable bound in the last block to a literal
// tuple (LiftTransformParams' form) gets each cast in that block right
// after its value's binding (or before the tuple for a value bound elsewhere),
// so a lazy form frees each wide value before the next weight; any other
// result is taken apart with `.i` in a new block.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/op.h"
#include "ir/rewrite.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

constexpr std::string_view kSuffix = "_transform_params";

const TensorTypeNode* TensorOf(const Type& t) {
  return t && t->kind() == NodeKind::kTensorType ? static_cast<const TensorTypeNode*>(t.get())
                                                 : nullptr;
}

StatusOr<Expr> Cast(const Expr& e, DataType to) {
  PLIR_ASSIGN_OR_RETURN(
      Attrs attrs,
      Attrs::Make({{Symbol("dtype"), AttrValue::String(std::string(DataTypeName(to)))}}));
  return MakeOpCall("astype", std::vector<Expr>{e}, attrs);
}

// T with each output of dtype `from` cast to `to`; `cast[i]` says which.
StatusOr<Function> CastOutputs(const Function& t, const std::vector<bool>& cast, DataType to) {
  const SeqExpr& body = t->body();
  std::vector<Block> blocks = body->blocks();
  // LiftTransformParams' form: `%gv = (a, b, ...)` in the last block, %gv the result.
  if (!blocks.empty() && body->result()->kind() == NodeKind::kVar) {
    const Block& last = blocks.back();
    const auto& bs = last->bindings();
    if (!bs.empty() && bs.back()->var().get() == body->result().get() &&
        bs.back()->value()->kind() == NodeKind::kTuple) {
      auto* tuple = static_cast<const TupleNode*>(bs.back()->value().get());
      // Each cast right after the binding of its value (so a lazy form frees
      // the wide value at once), or before the tuple for a value bound
      // elsewhere (a parameter, an earlier block).
      std::unordered_map<const ExprNode*, Expr> casted;  // field -> its cast variable
      std::unordered_map<const ExprNode*, std::vector<size_t>> fields_of;
      for (size_t i = 0; i < tuple->fields().size(); ++i)
        if (cast[i]) fields_of[tuple->fields()[i].get()].push_back(i);
      std::vector<Binding> out;
      auto emit_cast = [&](const Expr& f, size_t i) -> Status {
        if (casted.count(f.get())) return Status::Ok();
        PLIR_ASSIGN_OR_RETURN(Expr c, Cast(f, to));
        std::string name = f->kind() == NodeKind::kVar
                               ? static_cast<const VarNode*>(f.get())->name_hint()
                               : "param" + std::to_string(i);
        Var v = VarNode::Make(name + "_" + std::string(DataTypeName(to)), c->type(),
                              last->is_dataflow());
        out.push_back(VarBindingNode::Make(v, c));
        casted[f.get()] = v;
        return Status::Ok();
      };
      for (size_t j = 0; j + 1 < bs.size(); ++j) {
        out.push_back(bs[j]);
        if (auto it = fields_of.find(bs[j]->var().get()); it != fields_of.end())
          PLIR_RETURN_IF_ERROR(emit_cast(bs[j]->var(), it->second[0]));
      }
      std::vector<Expr> fields;
      for (size_t i = 0; i < tuple->fields().size(); ++i) {
        const Expr& f = tuple->fields()[i];
        if (cast[i]) PLIR_RETURN_IF_ERROR(emit_cast(f, i));
        fields.push_back(cast[i] ? casted.at(f.get()) : f);
      }
      Expr tup = TupleNode::Make(std::move(fields));
      Var gv =
          VarNode::Make(bs.back()->var()->hint(), tup->type(), bs.back()->var()->is_dataflow());
      out.push_back(VarBindingNode::Make(gv, tup));
      blocks.back() = BindingBlockNode::Make(std::move(out), last->is_dataflow());
      return FunctionNode::Make(t->name(), t->params(), nullptr,
                                SeqExprNode::Make(std::move(blocks), gv), t->attrs());
    }
  }
  // Any other result: a new block that takes it apart.
  std::vector<Binding> out;
  Var r = VarNode::Make("result", body->result()->type());
  out.push_back(VarBindingNode::Make(r, body->result()));
  std::vector<Expr> fields;
  for (size_t i = 0; i < cast.size(); ++i) {
    PLIR_ASSIGN_OR_RETURN(Expr item, TupleGetItemNode::Make(r, static_cast<int64_t>(i)));
    if (!cast[i]) {
      fields.push_back(item);
      continue;
    }
    PLIR_ASSIGN_OR_RETURN(Expr c, Cast(item, to));
    Var v =
        VarNode::Make("param" + std::to_string(i) + "_" + std::string(DataTypeName(to)), c->type());
    out.push_back(VarBindingNode::Make(v, c));
    fields.push_back(v);
  }
  Expr tup = TupleNode::Make(std::move(fields));
  Var gv = VarNode::Make("gv", tup->type());
  out.push_back(VarBindingNode::Make(gv, tup));
  blocks.push_back(BindingBlockNode::Make(std::move(out), false));
  return FunctionNode::Make(t->name(), t->params(), nullptr,
                            SeqExprNode::Make(std::move(blocks), gv), t->attrs());
}

// F taking parameter num_input + i in `to` where cast[i], cast back to its
// old dtype in a first block.
StatusOr<Function> CastParams(const Function& f, size_t num_input, const std::vector<bool>& cast,
                              DataType to) {
  std::vector<Var> params = f->params();
  std::vector<Binding> casts;
  std::unordered_map<const VarNode*, Expr> uses;
  for (size_t i = 0; i < cast.size(); ++i) {
    if (!cast[i]) continue;
    const Var& p = params[num_input + i];
    const TensorTypeNode* tt = TensorOf(p->type());
    Type narrow = tt->has_shape() ? TensorTypeNode::Make(tt->shape(), to)
                                  : TensorTypeNode::MakeRank(tt->ndim(), to);
    Var np = VarNode::Make(p->hint(), narrow);
    PLIR_ASSIGN_OR_RETURN(Expr back, Cast(np, tt->dtype()));
    Var wide =
        VarNode::Make(p->name_hint() + "_" + std::string(DataTypeName(tt->dtype())), back->type());
    casts.push_back(VarBindingNode::Make(wide, back));
    uses[p.get()] = wide;
    params[num_input + i] = np;
  }
  Function g = ReplaceAllUses(f, uses);
  std::vector<Block> blocks;
  blocks.push_back(BindingBlockNode::Make(std::move(casts), false));
  for (const Block& b : g->body()->blocks()) blocks.push_back(b);
  return FunctionNode::Make(f->name(), std::move(params), f->ret_type(),
                            SeqExprNode::Make(std::move(blocks), g->body()->result()), f->attrs());
}

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  std::optional<DataType> to = ParseDataType(ctx.options.GetString("dtype"));
  std::optional<DataType> from = ParseDataType(ctx.options.GetString("from"));
  if (!to) return InvalidArgument("unknown dtype \"" + ctx.options.GetString("dtype") + "\"");
  if (!from) return InvalidArgument("unknown dtype \"" + ctx.options.GetString("from") + "\"");
  Module out = m;
  for (const Item& item : m.items()) {
    const std::string& name = item->name();
    if (name.size() <= kSuffix.size() ||
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
      continue;
    Function t = m.LookupFunction(name);
    if (!t) continue;
    std::string fname = name.substr(0, name.size() - kSuffix.size());
    Function f = m.LookupFunction(fname);
    auto skip = [&](const std::string& why) {
      ctx.context.Warn("CastTransformedParams", "@" + name + " left unchanged: " + why);
    };
    if (!f) {
      skip("there is no @" + fname);
      continue;
    }
    const Type& rt = t->body()->result()->type();
    if (rt->kind() != NodeKind::kTupleType) {
      skip("its result is not a tuple");
      continue;
    }
    const auto& outs = static_cast<const TupleTypeNode*>(rt.get())->fields();
    size_t k = 0;
    if (const AttrValue* n = f->attrs().Get("num_input"); n && n->kind() == AttrValue::Kind::kInt)
      k = static_cast<size_t>(std::max<int64_t>(0, n->as_int()));
    if (k + outs.size() != f->params().size()) {
      skip("@" + fname + " has " + std::to_string(f->params().size()) + " parameters, not " +
           "num_input + " + std::to_string(outs.size()) + " outputs");
      continue;
    }
    std::vector<bool> cast(outs.size(), false);
    bool any = false;
    for (size_t i = 0; i < outs.size(); ++i) {
      const TensorTypeNode* o = TensorOf(outs[i]);
      const TensorTypeNode* p = TensorOf(f->params()[k + i]->type());
      cast[i] = o && p && o->dtype() == *from && p->dtype() == *from;
      any |= cast[i];
    }
    if (!any) continue;
    PLIR_ASSIGN_OR_RETURN(Function nt, CastOutputs(t, cast, *to));
    PLIR_ASSIGN_OR_RETURN(Function nf, CastParams(f, k, cast, *to));
    out = out.WithItem(nt).WithItem(nf);
  }
  return out;
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "CastTransformedParams";
  def.info.description =
      "stores the outputs of each F_transform_params in a smaller dtype (float16) and has F cast "
      "them back once (MLC-LLM's weight conversion); run after LiftTransformParams";
  def.info.options = {
      {"dtype", OptionType::kString, AttrValue::String("float16"),
       "dtype the weights are stored in"},
      {"from", OptionType::kString, AttrValue::String("float32"),
       "dtype of the weights to convert"},
  };
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("cast_transformed_params", "1.0", Register)
