// FoldConstant: as TVM's. Every use of a variable bound to a constant reads
// the constant; inside dataflow blocks, calls of pure core ops whose
// arguments are all constants are evaluated and replaced by the resulting
// constant; then unused pure bindings and blocks left empty are removed.
//
// Folded ops: every pure op that carries an evaluation kernel (`OpDef::eval`;
// among the core ops add, subtract, multiply, divide (NumPy broadcasting),
// nn.relu, nn.softmax, matmul, reshape, permute_dims, nn.conv2d, astype, and
// the creation ops zeros, ones, full, arange (up to 1024 elements, as TVM),
// and the shape ops shape_to_tensor, tensor_to_shape, take, expand_dims,
// concat; a plugin's op with a kernel folds too). Static shape values
// (`shape[(16, 16)]`) count as constants: a call taking them folds, uses of
// a variable bound to one read it, and tensor_to_shape of a constant folds
// to one. A binding whose value changed takes the value's type (as TVM
// re-emits it), and a return type that was the body's follows it. The option `max_elements` caps
// the size of a folded result, and `max_work` the multiply-adds spent on one call (the op's
// `OpDef::work`: conv2d and matmul "when small"). The kernels are the SDK's (kernels/op_kernels.h),
// the same the interpreter runs, so folding never changes a result.
//
// `call_tir(@f, (constants...))` folds anywhere (as TVM's, which builds and
// runs the PrimFunc) when a kernel is registered for the extern `f`
// (kernels/extern_kernels.h: the SDK's or a plugin's, the kernel plir-run executes),
// every argument is a tensor constant and the result type is a tensor, or a
// tuple of tensors, of constant shape; the caps apply to the result, and a
// call with no argument folds only up to 1024 elements. An extern without a
// kernel is left as it is.
#include <algorithm>
#include <string>
#include <unordered_set>

#include "ir/analysis/purity.h"
#include "ir/op.h"
#include "ir/rewrite.h"
#include "kernels/extern_kernels.h"
#include "kernels/op_kernels.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// As TVM: an op that reads no tensor (a creation op) folds only up to this
// many elements; a large constant would only make the module bigger.
constexpr int64_t kCreationLimit = 1024;

// Evaluates `call` (a call of a foldable op whose arguments are constants
// after substitution) within the caps; null if it does not fold.
Expr TryFold(const CallNode* call, int64_t max_elements, int64_t max_work) {
  auto* op = As<OpNode>(call->callee());
  if (!op || !op->pure()) return Expr();
  OpEvalFn eval = FindOpKernel(*op);
  if (!eval) return Expr();
  // Kernels take tensors: a static shape value goes as a 1-D int64 tensor,
  // a tuple of constants (concat's operand) as its tensors in order.
  std::vector<Tensor> args;
  bool reads_tensor = false;
  for (const Expr& a : call->args()) {
    if (const ConstantNode* c = As<ConstantNode>(a)) {
      args.push_back(Tensor::FromConstant(*c));
      reads_tensor = true;
    } else if (const ShapeExprNode* s = As<ShapeExprNode>(a); s && s->IsStatic()) {
      std::vector<Dim> v = s->values();
      args.push_back(MakeTensor(DataType::kInt64, {static_cast<int64_t>(v.size())},
                                [&](int64_t i) { return static_cast<double>(v[i].value); }));
    } else if (const TupleNode* t = As<TupleNode>(a)) {
      for (const Expr& f : t->fields()) {
        const ConstantNode* c = As<ConstantNode>(f);
        if (!c) return Expr();
        args.push_back(Tensor::FromConstant(*c));
        reads_tensor = true;
      }
    } else {
      return Expr();
    }
  }
  if (auto* st = As<ShapeTypeNode>(call->type())) {
    // A shape result (tensor_to_shape of a constant) folds to a shape value.
    if (st->ndim() < 0 || st->ndim() > max_elements) return Expr();
    StatusOr<Tensor> r = eval(args, call->attrs());
    if (!r.ok() || r->shape.size() != 1 || r->shape[0] != st->ndim()) return Expr();
    std::vector<Dim> dims;
    for (int64_t i = 0; i < r->shape[0]; ++i) {
      if (r->GetInt(i) < 0) return Expr();  // not a shape: leave it to run time
      dims.push_back(Dim::Const(r->GetInt(i)));
    }
    return ShapeExprNode::Make(std::move(dims));
  }
  auto* tt = As<TensorTypeNode>(call->type());
  if (!tt || !tt->IsStatic()) return Expr();
  int64_t out_elements = tt->NumElements();
  if (out_elements > max_elements) return Expr();
  if (!reads_tensor && out_elements > kCreationLimit) return Expr();
  if (EstimateWork(*op, args, out_elements) > max_work) return Expr();
  StatusOr<Tensor> r = eval(args, call->attrs());
  if (!r.ok()) return Expr();  // e.g. integer division by zero: leave it to run time
  auto c = r->ToConstant();
  if (!c.ok()) return Expr();
  return *c;
}

// The kernel's result `t` as a constant of type `want` (the call's declared
// type); an error if the kernel gave another dtype or shape.
StatusOr<Expr> KernelResult(const std::string& name, const Tensor& t, const TensorTypeNode& want) {
  bool same = t.dtype == want.dtype() && t.shape.size() == want.shape().size();
  for (size_t i = 0; same && i < t.shape.size(); ++i) same = t.shape[i] == want.shape()[i].value;
  if (!same) {
    std::vector<Dim> dims;
    for (int64_t d : t.shape) dims.push_back(Dim::Const(d));
    return InvalidArgument("FoldConstant: the kernel for extern @" + name + " returned " +
                           TypeToString(TensorTypeNode::Make(std::move(dims), t.dtype)) +
                           " for a call of type " + TypeToString(Type(&want)));
  }
  PLIR_ASSIGN_OR_RETURN(auto c, t.ToConstant());
  return Expr(c);
}

// Evaluates `call_tir(@f, (args...))` with the kernel registered for `f`,
// as TVM's FoldConstant evaluates a call of a PrimFunc: every argument a
// tensor constant, a result of constant shape (a tensor or a tuple of
// tensors), within the caps. Null if it does not fold; an error only if the
// kernel's result contradicts the call's type.
StatusOr<Expr> TryFoldCallTir(const CallNode* call, int64_t max_elements, int64_t max_work) {
  if (call->args().size() != 2) return Expr();
  auto* callee = As<GlobalVarNode>(call->args()[0]);
  auto* tuple = As<TupleNode>(call->args()[1]);
  if (!callee || !tuple) return Expr();
  std::shared_ptr<const ExternKernelDef> kernel = KernelRegistry::Global().Lookup(callee->name());
  if (!kernel) return Expr();
  std::vector<Tensor> args;
  for (const Expr& a : tuple->fields()) {
    const ConstantNode* c = As<ConstantNode>(a);
    if (!c) return Expr();  // a variable, or a primitive value (TVM folds tensors only)
    args.push_back(Tensor::FromConstant(*c));
  }
  std::vector<const TensorTypeNode*> outs;
  auto* tuple_type = As<TupleTypeNode>(call->type());
  if (tuple_type) {
    if (!kernel->tuple_fn) return Expr();
    for (const Type& f : tuple_type->fields()) outs.push_back(As<TensorTypeNode>(f));
  } else {
    if (!kernel->fn) return Expr();
    outs.push_back(As<TensorTypeNode>(call->type()));
  }
  int64_t out_elements = 0;
  for (const TensorTypeNode* t : outs) {
    if (!t || !t->IsStatic()) return Expr();
    out_elements += t->NumElements();
  }
  if (out_elements > max_elements || out_elements > max_work) return Expr();
  if (args.empty() && out_elements > kCreationLimit) return Expr();
  if (!tuple_type) {
    StatusOr<Tensor> r = kernel->fn(args, call->type());
    if (!r.ok()) return Expr();  // e.g. overflow: left to run time, as for ops
    return KernelResult(callee->name(), *r, *outs[0]);
  }
  StatusOr<std::vector<Tensor>> r = kernel->tuple_fn(args, call->type());
  if (!r.ok()) return Expr();
  if (r->size() != outs.size())
    return InvalidArgument("FoldConstant: the kernel for extern @" + callee->name() + " returned " +
                           std::to_string(r->size()) + " tensors for a call of type " +
                           TypeToString(call->type()));
  std::vector<Expr> fields;
  for (size_t i = 0; i < outs.size(); ++i) {
    PLIR_ASSIGN_OR_RETURN(Expr c, KernelResult(callee->name(), (*r)[i], *outs[i]));
    fields.push_back(std::move(c));
  }
  return Expr(TupleNode::Make(std::move(fields)));
}

// Adds the symbolic dimensions `t` can bind (bare names) to `out`.
void CollectSymbols(const Type& t, std::unordered_set<Symbol>* out) {
  for (Symbol s : TypeDimNames(t, DimNameKind::kBindable)) out->insert(s);
}

bool IsCallTir(const CallNode* call) {
  auto* op = As<OpNode>(call->callee());
  return op && op->name() == "call_tir";
}

// As TVM's ConstantFolder: every use of a variable bound to a constant
// reads the constant; op calls fold inside dataflow blocks only (TVM folds
// ops by legalizing them, which it does in dataflow blocks); then unused
// pure bindings and blocks left empty are removed (TVM's RemoveAllUnused).
class Folder : public BindingMutator {
 public:
  Folder(int64_t max_elements, int64_t max_work)
      : BindingMutator("FoldConstant", kMaxDepth),
        max_elements_(max_elements),
        max_work_(max_work) {}

  StatusOr<Function> Run(const Function& f) {
    for (const Var& p : f->params()) CollectSymbols(p->type(), &param_symbols_);
    PLIR_ASSIGN_OR_RETURN(SeqExpr body, MutateBody(f->body()));
    PLIR_ASSIGN_OR_RETURN(body, RemoveUnused(body, 0));
    if (body.get() == f->body().get()) return f;
    // A return type that was the body's type follows it (a folded shape
    // makes the result's type more specific).
    Type ret = f->ret_type();
    if (TypeEqual(ret, f->body()->type()) && TypeCompatible(ret, body->type())) ret = body->type();
    return FunctionNode::Make(f->name(), f->params(), ret, body, f->attrs());
  }

 private:
  static constexpr int kMaxDepth = 2000;
  static Status TooDeep() {
    return InvalidArgument("FoldConstant: expressions nest deeper than " +
                           std::to_string(kMaxDepth) + " levels");
  }

  // Op calls fold in the bindings of dataflow blocks, not in a body's result.
  StatusOr<SeqExpr> VisitSeqExpr(const SeqExpr& seq) override {
    bool saved = in_dataflow_;
    in_dataflow_ = false;
    StatusOr<SeqExpr> out = BindingMutator::VisitSeqExpr(seq);
    in_dataflow_ = saved;
    return out;
  }
  StatusOr<Block> VisitBindingBlock(const Block& b) override {
    in_dataflow_ = b->is_dataflow();
    StatusOr<Block> out = BindingMutator::VisitBindingBlock(b);
    in_dataflow_ = false;
    return out;
  }

  StatusOr<Binding> VisitBinding(const Binding& binding) override {
    PLIR_ASSIGN_OR_RETURN(Expr value, Mutate(binding->value()));
    // Uses of a variable bound to a constant, or to a static shape value,
    // read it.
    bool substituted = value->kind() == NodeKind::kConstant ||
                       (value->kind() == NodeKind::kShapeExpr &&
                        static_cast<const ShapeExprNode*>(value.get())->IsStatic());
    if (substituted) RemapVar(binding->var().get(), value);
    if (value.get() == binding->value().get()) return binding;
    // As TVM's re-emitted bindings: a changed value gives the variable its
    // type (e.g. a reshape whose shape became known).
    Var var = binding->var();
    if (!TypeEqual(var->type(), value->type()) && TypeCompatible(var->type(), value->type())) {
      var = VarNode::Make(var->hint(), value->type(), var->is_dataflow());
      if (!substituted) RemapVar(binding->var().get(), var);
    }
    return VarBindingNode::Make(var, value);
  }

  StatusOr<Expr> VisitExpr(const Expr& e) override {
    if (e->kind() != NodeKind::kCall) return BindingMutator::VisitExpr(e);
    PLIR_ASSIGN_OR_RETURN(Expr call, VisitChildren(e));
    if (call->kind() == NodeKind::kCall && IsCallTir(static_cast<const CallNode*>(call.get()))) {
      // As TVM: a call of a kernel folds in any block.
      PLIR_ASSIGN_OR_RETURN(Expr folded, TryFoldCallTir(static_cast<const CallNode*>(call.get()),
                                                        max_elements_, max_work_));
      return folded ? folded : call;
    }
    if (in_dataflow_ && call->kind() == NodeKind::kCall) {
      if (Expr folded = TryFold(static_cast<const CallNode*>(call.get()), max_elements_, max_work_))
        return folded;
    }
    return call;
  }

  // Collects the variables `e` uses; *impure is set if it calls anything
  // but a pure op.
  static Status Uses(const Expr& e, std::unordered_set<const VarNode*>* live, bool* impure,
                     int depth) {
    if (depth > kMaxDepth) return TooDeep();
    switch (e->kind()) {
      case NodeKind::kVar:
        live->insert(static_cast<const VarNode*>(e.get()));
        return Status::Ok();
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(e.get());
        if (auto* v = As<VarNode>(c->callee())) {
          // A call of a function value: as impure as its Callable type says.
          live->insert(v);
          if (CalleeHasSideEffects(v, nullptr)) *impure = true;
        } else {
          auto* op = As<OpNode>(c->callee());
          if (!op || !op->pure()) *impure = true;
        }
        for (const Expr& a : c->args()) PLIR_RETURN_IF_ERROR(Uses(a, live, impure, depth + 1));
        return Status::Ok();
      }
      case NodeKind::kLocalFn: {
        // What it captures is used; its body's effects happen where it is called.
        bool ignored = false;
        return Uses(static_cast<const LocalFnNode*>(e.get())->body(), live, &ignored, depth + 1);
      }
      case NodeKind::kTuple:
        for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields())
          PLIR_RETURN_IF_ERROR(Uses(f, live, impure, depth + 1));
        return Status::Ok();
      case NodeKind::kTupleGetItem:
        return Uses(static_cast<const TupleGetItemNode*>(e.get())->tuple(), live, impure,
                    depth + 1);
      case NodeKind::kIf: {
        auto* n = static_cast<const IfNode*>(e.get());
        PLIR_RETURN_IF_ERROR(Uses(n->cond(), live, impure, depth + 1));
        PLIR_RETURN_IF_ERROR(Uses(n->then_body(), live, impure, depth + 1));
        return Uses(n->else_body(), live, impure, depth + 1);
      }
      case NodeKind::kSeqExpr: {
        auto* s = static_cast<const SeqExprNode*>(e.get());
        for (const Block& b : s->blocks())
          for (const Binding& x : b->bindings())
            PLIR_RETURN_IF_ERROR(Uses(x->value(), live, impure, depth + 1));
        return Uses(s->result(), live, impure, depth + 1);
      }
      default:
        return Status::Ok();
    }
  }

  // Removes unused pure bindings (backwards, so chains of dead bindings go)
  // and blocks left empty, in `seq` and in the bodies nested in it.
  StatusOr<SeqExpr> RemoveUnused(const SeqExpr& seq, int depth) {
    if (depth > kMaxDepth) return TooDeep();
    std::unordered_set<const VarNode*> live;
    bool ignored = false;
    Expr result = seq->result();
    if (result->kind() == NodeKind::kIf) {
      PLIR_ASSIGN_OR_RETURN(result, RemoveUnusedIn(result, depth + 1));
    }
    PLIR_RETURN_IF_ERROR(Uses(result, &live, &ignored, depth + 1));
    bool changed = result.get() != seq->result().get();
    std::vector<std::vector<Binding>> kept(seq->blocks().size());
    for (size_t bi = seq->blocks().size(); bi-- > 0;) {
      const auto& bindings = seq->blocks()[bi]->bindings();
      for (size_t j = bindings.size(); j-- > 0;) {
        Binding b = bindings[j];
        bool impure = false;
        std::unordered_set<const VarNode*> uses;
        PLIR_RETURN_IF_ERROR(Uses(b->value(), &uses, &impure, depth + 1));
        if (!impure && !live.count(b->var().get()) && !BindsSymbols(b->value())) {
          changed = true;
          continue;
        }
        if (b->value()->kind() == NodeKind::kIf || b->value()->kind() == NodeKind::kLocalFn) {
          PLIR_ASSIGN_OR_RETURN(Expr v, RemoveUnusedIn(b->value(), depth + 1));
          if (v.get() != b->value().get()) {
            changed = true;
            b = VarBindingNode::Make(b->var(), v);
          }
        }
        live.insert(uses.begin(), uses.end());
        kept[bi].push_back(b);
      }
    }
    std::vector<Block> blocks;
    for (size_t bi = 0; bi < seq->blocks().size(); ++bi) {
      if (kept[bi].empty()) {
        changed = true;
        continue;
      }
      std::reverse(kept[bi].begin(), kept[bi].end());
      if (kept[bi].size() == seq->blocks()[bi]->bindings().size() &&
          std::equal(kept[bi].begin(), kept[bi].end(), seq->blocks()[bi]->bindings().begin()))
        blocks.push_back(seq->blocks()[bi]);
      else
        blocks.push_back(
            BindingBlockNode::Make(std::move(kept[bi]), seq->blocks()[bi]->is_dataflow()));
    }
    if (!changed) return seq;
    return SeqExprNode::Make(std::move(blocks), result);
  }

  // True for a match_cast that may bind symbolic dimensions (names that no
  // parameter binds): such a binding stays even if its variable is unused,
  // since later types may use what it binds (TVM's test_fold_mixed_case
  // keeps it too).
  bool BindsSymbols(const Expr& value) const {
    auto* c = As<CallNode>(value);
    auto* op = c ? As<OpNode>(c->callee()) : nullptr;
    if (!op || op->name() != "match_cast") return false;
    std::unordered_set<Symbol> named;
    for (const Type& t : c->sinfo_args()) CollectSymbols(t, &named);
    for (const Symbol& s : named)
      if (!param_symbols_.count(s)) return true;
    return false;
  }

  // The if expression (or local function) `e` with unused bindings removed
  // from its branches (body).
  StatusOr<Expr> RemoveUnusedIn(const Expr& e, int depth) {
    if (auto* f = As<LocalFnNode>(e)) {
      PLIR_ASSIGN_OR_RETURN(SeqExpr body, RemoveUnused(f->body(), depth + 1));
      if (body.get() == f->body().get()) return e;
      return Expr(LocalFnNode::Make(f->params(), f->ret_type(), body));
    }
    auto* n = static_cast<const IfNode*>(e.get());
    PLIR_ASSIGN_OR_RETURN(SeqExpr t, RemoveUnused(n->then_body(), depth + 1));
    PLIR_ASSIGN_OR_RETURN(SeqExpr f, RemoveUnused(n->else_body(), depth + 1));
    if (t.get() == n->then_body().get() && f.get() == n->else_body().get()) return e;
    auto made = IfNode::Make(n->cond(), t, f);
    return made.ok() ? *made : IfNode::MakeUnchecked(n->cond(), t, f, n->type());
  }

  int64_t max_elements_, max_work_;
  bool in_dataflow_ = false;
  std::unordered_set<Symbol> param_symbols_;
};

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "FoldConstant";
  def.info.description =
      "substitutes variables bound to constants, evaluates pure op calls on constants in "
      "dataflow blocks and call_tir of externs with a registered kernel anywhere, and removes "
      "what became unused (TVM's FoldConstant)";
  def.info.kind = PassKind::kFunction;
  def.info.options = {
      {"max_elements", OptionType::kInt, AttrValue::Int(1 << 16),
       "largest folded result, in elements", /*min=*/0, /*max=*/int64_t{1} << 40},
      {"max_work", OptionType::kInt, AttrValue::Int(1 << 22),
       "largest multiply-add count of one folded call", /*min=*/0, /*max=*/int64_t{1} << 50},
  };
  def.function_fn = [](const Function& f, const PassCallContext& ctx) -> StatusOr<Function> {
    return Folder(ctx.options.GetInt("max_elements"), ctx.options.GetInt("max_work")).Run(f);
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("fold_constant", "1.0", Register)
