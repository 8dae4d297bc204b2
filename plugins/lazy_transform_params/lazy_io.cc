// LazyGetInput and LazySetOutput (after TVM Relax's passes of those names):
// the callback forms of lazy parameter transformation. Both apply to every
// externally visible function (one with `global_symbol`).
//
// LazyGetInput: the weights (the parameters after the first `num_input`,
// all of them without that attribute) are no longer parameters. The function
// takes a callback
//   %fget_param: Callable[(Prim[int64], Object), Object]
// after its runtime inputs, and before a binding that uses weight i (named
// "A") for the first time in a scope, loads it:
//   %A_untyped: Object = %fget_param(i, "A");
//   %A: T = match_cast(%A_untyped, sinfo_args=[T]);
// A load is visible where TVM's would be after its common-subexpression
// pass: in the rest of its body (if branch, local function) and, made in a
// dataflow block, in that block only. A binding whose types name a
// symbolic dimension that only a weight's type defines, and that does not
// read that weight (a call of a local function that reads it), first loads
// the weight, so that the dimension is bound before it is used (TVM would leave
// it unbound). `num_input` becomes num_input + 1, and
// symbolic dimensions of the return type that the remaining parameters no
// longer define are erased (Tensor[(m, n)] becomes Tensor[ndim=2]), as TVM's
// EraseToWellDefined does. TVM also runs EliminateCommonSubexpr and
// RemoveAllUnused over the whole function afterwards; PLIR makes each load
// once per scope instead and leaves the rest of the function alone (run
// CSE and DCE for the rest).
//
// LazySetOutput: the function takes a callback
//   %fset_output: Callable[(Prim[int64], Object), (), pure=false]
// (at position num_input, which grows by one, or last) and returns (): output
// j (element j of a returned tuple, or the whole result as output 0) is
// handed to it right after the binding of its variable, at the start of the
// function for a parameter, and at the end for a value that is not a
// variable (a constant, a literal). One call per output position, in
// position order for a variable returned several times. An output bound in
// a dataflow block is handed over right after that block, keeping dataflow
// blocks free of side effects as Relax's well-formedness rules require (TVM
// emits it inside the block, which its own well-formedness check rejects).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace plir_lazy_io {

using namespace plir;

bool IsExternallyVisible(const FunctionNode& f) {
  return f.attrs().Get("global_symbol") != nullptr;
}

// The `num_input` attribute: nullopt without it; an error if out of range.
StatusOr<std::optional<int64_t>> NumInput(const FunctionNode& f, const std::string& pass) {
  const AttrValue* v = f.attrs().Get("num_input");
  if (!v) return std::optional<int64_t>();
  if (v->kind() != AttrValue::Kind::kInt)
    return InvalidArgument(pass + ": @" + f.name() + ": num_input must be an integer");
  int64_t n = v->as_int();
  if (n < 0 || n > static_cast<int64_t>(f.params().size()))
    return InvalidArgument(pass + ": @" + f.name() + ": num_input = " + std::to_string(n) +
                           " is outside [0, " + std::to_string(f.params().size()) + "]");
  return std::optional<int64_t>(n);
}

// ---------------------------------------------------------------------------
// LazyGetInput

// Adds the symbolic dimensions of `t` (every name it uses, or only those it
// can bind) to `out`.
void CollectSymbols(const Type& t, std::unordered_set<Symbol>* out, DimNameKind kind) {
  for (Symbol s : TypeDimNames(t, kind)) out->insert(s);
}

// `t` with every shape that names a symbol outside `defined` reduced to its
// rank (TVM's EraseToWellDefined for a function's return type).
Type EraseUndefined(const Type& t, const std::unordered_set<Symbol>& defined, int depth = 0) {
  auto all_defined = [&](const std::vector<Dim>& dims) {
    for (const Dim& d : dims)
      if (!d.is_const() && !defined.count(d.sym)) return false;
    return true;
  };
  if (auto* tt = As<TensorTypeNode>(t)) {
    if (!tt->has_shape() || all_defined(tt->shape())) return t;
    return TensorTypeNode::MakeRank(tt->ndim(), tt->dtype());
  }
  if (auto* st = As<ShapeTypeNode>(t)) {
    if (!st->has_values() || all_defined(st->values())) return t;
    return ShapeTypeNode::MakeRank(st->ndim());
  }
  if (auto* tu = As<TupleTypeNode>(t)) {
    if (depth > 64) return ObjectTypeNode::Get();
    std::vector<Type> fields;
    for (const Type& f : tu->fields()) fields.push_back(EraseUndefined(f, defined, depth + 1));
    return TupleTypeNode::Make(std::move(fields));
  }
  return t;
}

class InputLoader {
 public:
  // `weights`: parameter -> its index among the weights; `order`: the
  // weights in parameter order; `defined`: the symbolic dimensions the
  // remaining parameters define.
  InputLoader(std::unordered_map<const VarNode*, int64_t> weights,
              std::vector<const VarNode*> order, std::unordered_set<Symbol> defined, Var fget)
      : weights_(std::move(weights)),
        order_(std::move(order)),
        defined_(std::move(defined)),
        fget_(std::move(fget)) {}

  // One scope's loads: weight -> the variable holding it.
  using Scope = std::unordered_map<const VarNode*, Var>;

  SeqExpr Body(const SeqExpr& body, Scope scope, int depth) {
    std::vector<Block> blocks;
    for (const Block& b : body->blocks()) {
      bool df = b->is_dataflow();
      // Loads made in a dataflow block are not visible after it.
      Scope block_scope;
      Scope& s = df ? (block_scope = scope) : scope;
      std::vector<Binding> out;
      for (const Binding& x : b->bindings()) {
        Expr value = Value(x->value(), s, df, &out, depth + 1);
        // A binding whose types name a dimension that only a weight's type
        // defines, and whose value loaded no such weight (it calls a local
        // function that reads it), needs that weight loaded first, so that
        // the dimension is bound before its use.
        DefineSymbolsOf(x, s, df, &out);
        if (value.get() == x->value().get()) {
          out.push_back(x);
        } else {
          Var v = x->var();
          if (!TypeEqual(v->type(), value->type()) && !TypeCompatible(v->type(), value->type()))
            v = VarNode::Make(v->hint(), value->type(), v->is_dataflow());
          out.push_back(VarBindingNode::Make(v, value));
        }
      }
      blocks.push_back(BindingBlockNode::Make(std::move(out), df));
    }
    std::vector<Binding> tail;
    Expr result = Value(body->result(), scope, false, &tail, depth + 1);
    if (!tail.empty()) blocks.push_back(BindingBlockNode::Make(std::move(tail), false));
    return SeqExprNode::Make(std::move(blocks), result);
  }

 private:
  void DefineSymbolsOf(const Binding& x, Scope& scope, bool df, std::vector<Binding>* out) {
    // (A Callable type's dimensions are its own, as in Relax: not counted.)
    std::unordered_set<Symbol> used;
    CollectSymbols(x->var()->type(), &used, DimNameKind::kAll);
    if (auto* c = As<CallNode>(x->value()))
      for (const Type& t : c->sinfo_args()) CollectSymbols(t, &used, DimNameKind::kAll);
    for (Symbol sym : used) {
      if (defined_.count(sym)) continue;
      bool bound = false;
      for (const auto& [w, v] : scope) {
        std::unordered_set<Symbol> own;
        CollectSymbols(w->type(), &own, DimNameKind::kBindable);
        bound = bound || own.count(sym) > 0;
      }
      if (bound) continue;
      for (const VarNode* w : order_) {
        std::unordered_set<Symbol> own;
        CollectSymbols(w->type(), &own, DimNameKind::kBindable);
        if (own.count(sym)) {
          Value(Var(w), scope, df, out, 0);  // loads it into this scope
          break;
        }
      }
    }
  }

  // `e` with weights replaced by their loads; loads not yet visible in
  // `scope` are appended to `out` (dataflow variables in a dataflow block).
  Expr Value(const Expr& e, Scope& scope, bool df, std::vector<Binding>* out, int depth) {
    switch (e->kind()) {
      case NodeKind::kVar: {
        auto w = weights_.find(As<VarNode>(e));
        if (w == weights_.end()) return e;
        if (auto it = scope.find(w->first); it != scope.end()) return it->second;
        const VarNode* p = w->first;
        std::string name = p->name_hint();
        Expr call =
            *MakeValueCall(fget_, {PrimValueNode::Int(w->second), StringImmNode::Make(name)});
        Var untyped = VarNode::Make(name + "_untyped", call->type(), df);
        out->push_back(VarBindingNode::Make(untyped, call));
        auto cast = MakeOpCall("match_cast", std::vector<Expr>{untyped}, Attrs(),
                               std::vector<Type>{p->type()});
        Var typed = VarNode::Make(p->hint(), (*cast)->type(), df);
        out->push_back(VarBindingNode::Make(typed, *cast));
        scope[p] = typed;
        return typed;
      }
      case NodeKind::kCall: {
        auto* c = As<CallNode>(e);
        Expr callee = Value(c->callee(), scope, df, out, depth + 1);
        std::vector<Expr> args;
        bool changed = callee.get() != c->callee().get();
        for (const Expr& a : c->args()) {
          args.push_back(Value(a, scope, df, out, depth + 1));
          changed |= args.back().get() != a.get();
        }
        if (!changed) return e;
        return RebuildCall(*c, callee, std::move(args));
      }
      case NodeKind::kTuple: {
        std::vector<Expr> fields;
        bool changed = false;
        for (const Expr& f : As<TupleNode>(e)->fields()) {
          fields.push_back(Value(f, scope, df, out, depth + 1));
          changed |= fields.back().get() != f.get();
        }
        return changed ? Expr(TupleNode::Make(std::move(fields))) : e;
      }
      case NodeKind::kTupleGetItem: {
        auto* t = As<TupleGetItemNode>(e);
        Expr tuple = Value(t->tuple(), scope, df, out, depth + 1);
        if (tuple.get() == t->tuple().get()) return e;
        auto r = TupleGetItemNode::Make(tuple, t->index());
        return r.ok() ? *r : TupleGetItemNode::MakeUnchecked(tuple, t->index(), t->type());
      }
      case NodeKind::kIf: {
        auto* f = As<IfNode>(e);
        Expr cond = Value(f->cond(), scope, df, out, depth + 1);
        SeqExpr then_body = Body(f->then_body(), scope, depth + 1);
        SeqExpr else_body = Body(f->else_body(), scope, depth + 1);
        if (cond.get() == f->cond().get() && then_body.get() == f->then_body().get() &&
            else_body.get() == f->else_body().get())
          return e;
        auto r = IfNode::Make(cond, then_body, else_body);
        return r.ok() ? *r : IfNode::MakeUnchecked(cond, then_body, else_body, f->type());
      }
      case NodeKind::kLocalFn: {
        auto* f = As<LocalFnNode>(e);
        SeqExpr body = Body(f->body(), scope, depth + 1);
        if (body.get() == f->body().get()) return e;
        return LocalFnNode::Make(f->params(), f->ret_type(), body);
      }
      case NodeKind::kSeqExpr:
        return Body(Downcast<SeqExprNode>(e), scope, depth + 1);
      default:
        return e;
    }
  }

  std::unordered_map<const VarNode*, int64_t> weights_;
  std::vector<const VarNode*> order_;
  std::unordered_set<Symbol> defined_;
  Var fget_;
};

StatusOr<Function> WithLazyInputs(const Function& f) {
  if (!IsExternallyVisible(*f)) return f;
  PLIR_ASSIGN_OR_RETURN(std::optional<int64_t> num_input, NumInput(*f, "LazyGetInput"));
  size_t n = static_cast<size_t>(num_input.value_or(0));
  std::unordered_map<const VarNode*, int64_t> weights;
  for (size_t i = n; i < f->params().size(); ++i)
    weights.emplace(f->params()[i].get(), static_cast<int64_t>(i - n));
  Var fget = VarNode::Make("fget_param", FuncTypeNode::Make({PrimTypeNode::Make(DataType::kInt64),
                                                             ObjectTypeNode::Get()},
                                                            ObjectTypeNode::Get()));
  std::vector<Var> params(f->params().begin(),
                          f->params().begin() + static_cast<std::ptrdiff_t>(n));
  params.push_back(fget);
  std::unordered_set<Symbol> defined;
  for (const Var& p : params) CollectSymbols(p->type(), &defined, DimNameKind::kBindable);
  std::vector<const VarNode*> order;
  for (size_t i = n; i < f->params().size(); ++i) order.push_back(f->params()[i].get());
  InputLoader loader(std::move(weights), std::move(order), defined, fget);
  SeqExpr body = loader.Body(f->body(), {}, 0);
  Type ret = EraseUndefined(f->ret_type(), defined);
  Attrs attrs = f->attrs().With(Symbol("num_input"), AttrValue::Int(static_cast<int64_t>(n) + 1));
  return FunctionNode::Make(f->name(), std::move(params), ret, body, attrs);
}

// ---------------------------------------------------------------------------
// LazySetOutput

StatusOr<Function> WithLazyOutputs(const Function& f) {
  if (!IsExternallyVisible(*f)) return f;
  PLIR_ASSIGN_OR_RETURN(std::optional<int64_t> num_input, NumInput(*f, "LazySetOutput"));
  const SeqExpr& body = f->body();
  // Output positions per variable, and the outputs that are not variables.
  std::unordered_map<const VarNode*, std::vector<int64_t>> positions;
  std::vector<std::pair<int64_t, Expr>> inline_outputs;
  auto define = [&](int64_t j, const Expr& e) {
    if (auto* v = As<VarNode>(e))
      positions[v].push_back(j);
    else
      inline_outputs.emplace_back(j, e);
  };
  if (auto* t = As<TupleNode>(body->result())) {
    for (size_t j = 0; j < t->fields().size(); ++j) define(static_cast<int64_t>(j), t->fields()[j]);
  } else {
    define(0, body->result());
  }
  Var fset = VarNode::Make(
      "fset_output",
      FuncTypeNode::Make({PrimTypeNode::Make(DataType::kInt64), ObjectTypeNode::Get()},
                         TupleTypeNode::Make({}), /*pure=*/false));
  auto set_calls = [&](const Expr& value, int64_t j, std::vector<Binding>* out) {
    Expr call = *MakeValueCall(fset, {PrimValueNode::Int(j), value});
    out->push_back(VarBindingNode::Make(VarNode::Make("_void", call->type()), call));
  };
  auto sets_of = [&](const VarNode* v, std::vector<Binding>* out) {
    auto it = positions.find(v);
    if (it == positions.end()) return;
    for (int64_t j : it->second) set_calls(Var(v), j, out);
  };
  std::vector<Block> blocks;
  {
    std::vector<Binding> start;
    for (const Var& p : f->params()) sets_of(p.get(), &start);
    if (!start.empty()) blocks.push_back(BindingBlockNode::Make(std::move(start), false));
  }
  for (const Block& b : body->blocks()) {
    std::vector<Binding> out, after;
    for (const Binding& x : b->bindings()) {
      out.push_back(x);
      sets_of(x->var().get(), b->is_dataflow() ? &after : &out);
    }
    blocks.push_back(BindingBlockNode::Make(std::move(out), b->is_dataflow()));
    if (!after.empty()) blocks.push_back(BindingBlockNode::Make(std::move(after), false));
  }
  {
    std::vector<Binding> end;
    for (const auto& [j, e] : inline_outputs) set_calls(e, j, &end);
    if (!end.empty()) blocks.push_back(BindingBlockNode::Make(std::move(end), false));
  }
  std::vector<Var> params = f->params();
  size_t at = num_input ? static_cast<size_t>(*num_input) : params.size();
  params.insert(params.begin() + static_cast<std::ptrdiff_t>(at), fset);
  Attrs attrs = f->attrs();
  if (num_input) attrs = attrs.With(Symbol("num_input"), AttrValue::Int(*num_input + 1));
  Expr result = TupleNode::Make({});
  return FunctionNode::Make(f->name(), std::move(params), result->type(),
                            SeqExprNode::Make(std::move(blocks), result), attrs);
}

Status RegisterLazyIoPasses(PluginHost& host) {
  {
    PassDef def;
    def.info.name = "LazyGetInput";
    def.info.description =
        "externally visible functions load their weights (parameters after num_input) through a "
        "fget_param callback parameter, each before its first use";
    def.info.kind = PassKind::kFunction;
    def.function_fn = [](const Function& f, const PassCallContext&) { return WithLazyInputs(f); };
    PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(def)));
  }
  PassDef def;
  def.info.name = "LazySetOutput";
  def.info.description =
      "externally visible functions hand each output to a fset_output callback parameter as soon "
      "as it "
      "is computed, and return ()";
  def.info.kind = PassKind::kFunction;
  def.function_fn = [](const Function& f, const PassCallContext&) { return WithLazyOutputs(f); };
  return host.RegisterPass(std::move(def));
}

}  // namespace plir_lazy_io
