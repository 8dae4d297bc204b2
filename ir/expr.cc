#include "ir/expr.h"

#include <utility>

#include "ir/analysis/purity.h"

namespace plir {

NameHint::NameHint(std::string_view s) {
  // The longest trailing run of at most 9 digits that has no leading zero
  // (or is "0") becomes the number; everything before it the prefix.
  size_t end = s.size(), j = end;
  while (j > 0 && end - j < 9 && s[j - 1] >= '0' && s[j - 1] <= '9') --j;
  while (end - j > 1 && s[j] == '0') ++j;
  if (j < end) {
    uint32_t n = 0;
    for (size_t i = j; i < end; ++i) n = n * 10 + static_cast<uint32_t>(s[i] - '0');
    number_ = n;
  }
  prefix_ = Symbol(s.substr(0, j));
}

NameHint NameHint::FromParts(Symbol prefix, uint32_t number) {
  const std::string& p = prefix.str();
  bool ends_in_digit = !p.empty() && p.back() >= '0' && p.back() <= '9';
  if (number == kNoNumber) {
    if (!ends_in_digit) return NameHint(prefix, number);
  } else if (!ends_in_digit && number < 1000000000u) {
    return NameHint(prefix, number);  // what the string constructor gives
  }
  NameHint h(prefix, number);
  return NameHint(h.str());  // re-split: the parts were not the canonical ones
}

void NameHint::AppendTo(std::string* out) const {
  out->append(prefix_.str());
  if (number_ == kNoNumber) return;
  // The digits from the right, then one append (the printer writes a name
  // for every definition and use: one push_back per digit was 4% of the
  // text round trip of a 1M-binding function).
  char buf[10];
  char* p = buf + sizeof buf;
  uint32_t v = number_;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  out->append(p, static_cast<size_t>(buf + sizeof buf - p));
}

std::string NameHint::str() const {
  std::string s;
  AppendTo(&s);
  return s;
}

Var VarNode::Make(std::string_view name_hint, Type type, bool is_dataflow) {
  return Make(NameHint(name_hint), std::move(type), is_dataflow, kNoIndex);
}

Var VarNode::Make(NameHint name, Type type, bool is_dataflow, uint32_t index) {
  if (!type) type = ObjectTypeNode::Get();
  return Var(new (internal::NodeMemory<VarNode>())
                 VarNode(name, std::move(type), is_dataflow, index));
}

GlobalVarNode::GlobalVarNode(std::string name)
    : ExprNode(kKind, ObjectTypeNode::Get()), name_(std::move(name)) {}

GlobalVar GlobalVarNode::Make(std::string name) {
  return GlobalVar(new (internal::NodeMemory<GlobalVarNode>()) GlobalVarNode(std::move(name)));
}

Ref<TupleNode> TupleNode::Make(std::vector<Expr> fields) {
  std::vector<Type> types;
  types.reserve(fields.size());
  for (const Expr& f : fields) types.push_back(f->type());
  Type type = TupleTypeNode::Make(std::move(types));
  return Ref<TupleNode>(new (internal::NodeMemory<TupleNode>(fields.size() * sizeof(Expr)))
                            TupleNode(fields, std::move(type)));
}

StatusOr<Expr> TupleGetItemNode::Make(Expr tuple, int64_t index) {
  const Type& t = tuple->type();
  Type result;
  if (auto* tt = As<TupleTypeNode>(t)) {
    if (index < 0 || index >= static_cast<int64_t>(tt->fields().size()))
      return InvalidArgument("tuple index " + std::to_string(index) + " out of range for " +
                             TypeToString(t));
    result = tt->fields()[index];
  } else if (t->kind() == NodeKind::kObjectType) {
    if (index < 0) return InvalidArgument("negative tuple index " + std::to_string(index));
    result = ObjectTypeNode::Get();
  } else {
    return InvalidArgument("element access on a value of type " + TypeToString(t) +
                           ", which is not a tuple");
  }
  return Expr(new (internal::NodeMemory<TupleGetItemNode>())
                  TupleGetItemNode(std::move(tuple), index, std::move(result)));
}

Expr TupleGetItemNode::MakeUnchecked(Expr tuple, int64_t index, Type type) {
  if (!type) type = ObjectTypeNode::Get();
  return Expr(new (internal::NodeMemory<TupleGetItemNode>())
                  TupleGetItemNode(std::move(tuple), index, std::move(type)));
}

namespace {
Type PrimTypeOf(DataType dt) {
  static const Type* i64 = new Type(PrimTypeNode::Make(DataType::kInt64));
  static const Type* f64 = new Type(PrimTypeNode::Make(DataType::kFloat64));
  static const Type* b = new Type(PrimTypeNode::Make(DataType::kBool));
  switch (dt) {
    case DataType::kInt64:
      return *i64;
    case DataType::kFloat64:
      return *f64;
    default:
      return *b;
  }
}
}  // namespace

PrimValueNode::PrimValueNode(DataType dt, int64_t i, double f)
    : ExprNode(kKind, PrimTypeOf(dt)), dtype_(dt), i_(i), f_(f) {}

Ref<PrimValueNode> PrimValueNode::Int(int64_t v) {
  return Ref<PrimValueNode>(new (internal::NodeMemory<PrimValueNode>())
                                PrimValueNode(DataType::kInt64, v, 0));
}
Ref<PrimValueNode> PrimValueNode::Float(double v) {
  return Ref<PrimValueNode>(new (internal::NodeMemory<PrimValueNode>())
                                PrimValueNode(DataType::kFloat64, 0, v));
}
Ref<PrimValueNode> PrimValueNode::Bool(bool v) {
  return Ref<PrimValueNode>(new (internal::NodeMemory<PrimValueNode>())
                                PrimValueNode(DataType::kBool, v ? 1 : 0, 0));
}

Ref<ShapeExprNode> ShapeExprNode::Make(std::vector<Dim> values) {
  Type t = ShapeTypeNode::Make(values);
  return Ref<ShapeExprNode>(new (internal::NodeMemory<ShapeExprNode>())
                                ShapeExprNode(std::move(values), std::move(t)));
}

Expr PrimExprNode::Make(Dim value) {
  if (value.is_const()) return PrimValueNode::Int(value.value);
  Type t = PrimTypeNode::MakeValue(DataType::kInt64, value);
  return Expr(new (internal::NodeMemory<PrimExprNode>()) PrimExprNode(value, std::move(t)));
}

bool ShapeExprNode::IsStatic() const {
  for (const Dim& d : values_)
    if (!d.is_const()) return false;
  return true;
}

StringImmNode::StringImmNode(std::string v)
    : ExprNode(kKind, ObjectTypeNode::Get()), value_(std::move(v)) {}

Ref<StringImmNode> StringImmNode::Make(std::string value) {
  return Ref<StringImmNode>(new (internal::NodeMemory<StringImmNode>())
                                StringImmNode(std::move(value)));
}

uint64_t ConstantNode::ComputeDataHash() const {
  uint64_t h = std::hash<std::string_view>()(data_->view());
  data_hash_.store(h, std::memory_order_relaxed);
  return h;
}

StatusOr<Ref<ConstantNode>> ConstantNode::Make(Type type, std::shared_ptr<const TensorBytes> data) {
  auto* tt = As<TensorTypeNode>(type);
  if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown)
    return InvalidArgument("a constant needs a tensor type with a static shape and a dtype, not " +
                           TypeToString(type));
  for (const Dim& d : tt->shape())
    if (d.value < 0) return InvalidArgument("negative dimension in constant type");
  // Guard the multiplication against overflow.
  uint64_t n = static_cast<uint64_t>(DataTypeSize(tt->dtype()));
  for (const Dim& d : tt->shape()) {
    if (d.value != 0 && n > (uint64_t{1} << 62) / static_cast<uint64_t>(d.value))
      return InvalidArgument("constant of type " + TypeToString(type) + " is too large");
    n *= static_cast<uint64_t>(d.value);
  }
  if (!data) data = std::make_shared<const TensorBytes>();
  if (data->size() != n)
    return InvalidArgument("constant of type " + TypeToString(type) + " needs " +
                           std::to_string(n) + " bytes of data, got " +
                           std::to_string(data->size()));
  return Ref<ConstantNode>(new (internal::NodeMemory<ConstantNode>())
                               ConstantNode(std::move(type), std::move(data)));
}

Ref<CallNode> CallNode::MakeUnchecked(Expr callee, std::vector<Expr> args, Attrs attrs,
                                      std::vector<Type> sinfo_args, Type type) {
  return MakeUncheckedFrom(std::move(callee), args, std::move(attrs), sinfo_args, std::move(type));
}

Ref<CallNode> CallNode::MakeUncheckedFrom(Expr callee, std::vector<Expr>& args, Attrs attrs,
                                          std::vector<Type>& sinfo_args, Type type) {
  if (!type) type = ObjectTypeNode::Get();
  size_t extra = args.size() * sizeof(Expr) + sinfo_args.size() * sizeof(Type);
  Ref<CallNode> call(new (internal::NodeMemory<CallNode>(extra)) CallNode(
      std::move(callee), args, std::move(attrs), sinfo_args, std::move(type)));
  args.clear();
  sinfo_args.clear();
  return call;
}

IfNode::IfNode(Expr c, SeqExpr t, SeqExpr e, Type ty)
    : ExprNode(kKind, std::move(ty)),
      cond_(std::move(c)),
      then_(std::move(t)),
      else_(std::move(e)) {}

StatusOr<Expr> IfNode::Make(Expr cond, SeqExpr then_body, SeqExpr else_body) {
  const Type& ct = cond->type();
  bool ok = ct->kind() == NodeKind::kObjectType;
  if (auto* p = As<PrimTypeNode>(ct))
    ok = p->dtype() == DataType::kBool || p->dtype() == DataType::kUnknown;
  if (auto* t = As<TensorTypeNode>(ct))
    ok = (t->dtype() == DataType::kBool || t->dtype() == DataType::kUnknown) &&
         (t->ndim() == 0 || t->ndim() < 0);
  if (!ok)
    return InvalidArgument("the condition of an if must be a boolean scalar, not " +
                           TypeToString(ct));
  Type ty = JoinTypes(then_body->type(), else_body->type());
  return Expr(new (internal::NodeMemory<IfNode>()) IfNode(std::move(cond), std::move(then_body),
                                                          std::move(else_body), std::move(ty)));
}

Expr IfNode::MakeUnchecked(Expr cond, SeqExpr then_body, SeqExpr else_body, Type type) {
  if (!type) type = ObjectTypeNode::Get();
  return Expr(new (internal::NodeMemory<IfNode>()) IfNode(std::move(cond), std::move(then_body),
                                                          std::move(else_body), std::move(type)));
}

Binding VarBindingNode::Make(Var var, Expr value) {
  return Binding(new (internal::NodeMemory<VarBindingNode>())
                     VarBindingNode(std::move(var), std::move(value)));
}

Block BindingBlockNode::Make(std::vector<Binding> bindings, bool is_dataflow) {
  return Block(new (internal::NodeMemory<BindingBlockNode>(bindings.size() * sizeof(Binding)))
                   BindingBlockNode(bindings, is_dataflow));
}

SeqExpr SeqExprNode::Make(std::vector<Block> blocks, Expr result) {
  std::vector<Block> out;
  out.reserve(blocks.size());
  for (Block& b : blocks) {
    if (!b->is_dataflow()) {
      if (b->bindings().empty()) continue;
      if (!out.empty() && !out.back()->is_dataflow()) {
        std::vector<Binding> merged = ToVector(out.back()->bindings());
        merged.insert(merged.end(), b->bindings().begin(), b->bindings().end());
        out.back() = BindingBlockNode::Make(std::move(merged), false);
        continue;
      }
    }
    out.push_back(std::move(b));
  }
  return SeqExpr(new (internal::NodeMemory<SeqExprNode>())
                     SeqExprNode(std::move(out), std::move(result)));
}

LocalFn LocalFnNode::Make(std::vector<Var> params, Type ret_type, SeqExpr body) {
  if (!ret_type) ret_type = body->type();
  std::vector<Type> pts;
  pts.reserve(params.size());
  for (const Var& p : params) pts.push_back(p->type());
  Type t = FuncTypeNode::Make(std::move(pts), ret_type, !HasSideEffects(body.get(), nullptr));
  return LocalFn(new (internal::NodeMemory<LocalFnNode>()) LocalFnNode(
      std::move(params), std::move(ret_type), std::move(body), std::move(t)));
}

// Gives the variables of `f` that have no dense index yet (made by a pass or
// a builder) the next free numbers after those its other variables carry:
// parameters and top-level bindings, in definition order. Analyses of the
// function then index arrays for them too.
void FunctionNode::NumberNewVariables(const FunctionNode& f) {
  uint32_t next = 0;
  bool any_new = false;
  auto scan = [&](const VarNode* v) {
    uint32_t i = v->index();
    if (i == VarNode::kNoIndex)
      any_new = true;
    else if (i >= next)
      next = i + 1;
  };
  for (const Var& p : f.params()) scan(p.get());
  for (const Block& b : f.body()->blocks())
    for (const Binding& x : b->bindings()) scan(x->var().get());
  if (!any_new) return;
  for (const Var& p : f.params())
    if (p->index() == VarNode::kNoIndex) p->AssignIndexIfNone(next++);
  for (const Block& b : f.body()->blocks())
    for (const Binding& x : b->bindings()) {
      if (x->var()->index() == VarNode::kNoIndex) x->var()->AssignIndexIfNone(next++);
    }
}

Function FunctionNode::Make(std::string name, std::vector<Var> params, Type ret_type, SeqExpr body,
                            Attrs attrs) {
  if (!ret_type) ret_type = body->type();
  Function f(new (internal::NodeMemory<FunctionNode>()) FunctionNode(
      std::move(name), std::move(params), std::move(ret_type), std::move(body), std::move(attrs)));
  NumberNewVariables(*f);
  return f;
}

ExternFunc ExternFuncNode::Make(std::string name, std::vector<Var> params, Type ret_type,
                                Attrs attrs) {
  if (!ret_type) ret_type = ObjectTypeNode::Get();
  return ExternFunc(new (internal::NodeMemory<ExternFuncNode>()) ExternFuncNode(
      kKind, std::move(name), std::move(params), std::move(ret_type), std::move(attrs)));
}

bool IsAtomic(const Expr& e) {
  switch (e->kind()) {
    case NodeKind::kVar:
    case NodeKind::kGlobalVar:
    case NodeKind::kOp:
    case NodeKind::kPrimValue:
    case NodeKind::kStringImm:
    case NodeKind::kConstant:
    case NodeKind::kShapeExpr:
    case NodeKind::kPrimExpr:
      return true;
    default:
      return false;
  }
}

}  // namespace plir
