#include "ir/serialize/node_table.h"

#include <functional>
#include <unordered_map>

#include "ir/op.h"

namespace plir::internal {
namespace {

// The types inside an attribute value, in pre-order (lists and maps nest at
// most AttrValue::kMaxAttrDepth deep).
void AttrValueTypes(const AttrValue& v, std::vector<const Node*>* out) {
  switch (v.kind()) {
    case AttrValue::Kind::kType:
      out->push_back(v.as_type().get());
      break;
    case AttrValue::Kind::kList:
      for (const AttrValue& e : v.as_list()) AttrValueTypes(e, out);
      break;
    case AttrValue::Kind::kMap:
      for (const auto& [k, e] : v.as_map()) AttrValueTypes(e, out);
      break;
    default:
      break;
  }
}

// Children of a node in the serialized form (types of expressions that are
// not derivable are stored; attribute types come last).
void RecordChildren(const Node* n, std::vector<const Node*>* out) {
  auto attr_types = [&](const Attrs& attrs) {
    for (const auto& [k, v] : attrs.entries()) AttrValueTypes(v, out);
  };
  switch (n->kind()) {
    case NodeKind::kTupleType:
      for (const Type& t : static_cast<const TupleTypeNode*>(n)->fields()) out->push_back(t.get());
      break;
    case NodeKind::kFuncType:  // parameter types, then the return type
      for (const Type& t : static_cast<const FuncTypeNode*>(n)->fields()) out->push_back(t.get());
      break;
    case NodeKind::kLocalFn: {  // parameters, return type, body
      auto* f = static_cast<const LocalFnNode*>(n);
      for (const Var& p : f->params()) out->push_back(p.get());
      out->push_back(f->ret_type().get());
      out->push_back(f->body().get());
      break;
    }
    case NodeKind::kVar:
      out->push_back(static_cast<const VarNode*>(n)->type().get());
      break;
    case NodeKind::kConstant:
      out->push_back(static_cast<const ConstantNode*>(n)->type().get());
      break;
    case NodeKind::kTuple:
      for (const Expr& e : static_cast<const TupleNode*>(n)->fields()) out->push_back(e.get());
      break;
    case NodeKind::kTupleGetItem: {
      auto* t = static_cast<const TupleGetItemNode*>(n);
      out->push_back(t->tuple().get());
      out->push_back(t->type().get());
      break;
    }
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      out->push_back(c->callee().get());
      for (const Expr& e : c->args()) out->push_back(e.get());
      for (const Type& t : c->sinfo_args()) out->push_back(t.get());
      out->push_back(c->type().get());
      attr_types(c->attrs());
      break;
    }
    case NodeKind::kIf: {
      auto* f = static_cast<const IfNode*>(n);
      out->push_back(f->cond().get());
      out->push_back(f->then_body().get());
      out->push_back(f->else_body().get());
      out->push_back(f->type().get());
      break;
    }
    case NodeKind::kSeqExpr: {
      auto* s = static_cast<const SeqExprNode*>(n);
      for (const Block& b : s->blocks()) out->push_back(b.get());
      out->push_back(s->result().get());
      break;
    }
    case NodeKind::kBindingBlock:
      for (const Binding& b : static_cast<const BindingBlockNode*>(n)->bindings())
        out->push_back(b.get());
      break;
    case NodeKind::kVarBinding: {
      auto* b = static_cast<const VarBindingNode*>(n);
      out->push_back(b->var().get());
      out->push_back(b->value().get());
      break;
    }
    case NodeKind::kFunction:
    case NodeKind::kExternFunc: {
      auto* f = static_cast<const ItemNode*>(n);
      for (const Var& p : f->params()) out->push_back(p.get());
      out->push_back(f->ret_type().get());
      if (n->kind() == NodeKind::kFunction)
        out->push_back(static_cast<const FunctionNode*>(n)->body().get());
      attr_types(f->attrs());
      break;
    }
    default:
      break;
  }
}

void FillAttrs(const Attrs& attrs, const std::vector<uint32_t>& children, size_t first_type,
               std::vector<RecordAttr>* out) {
  size_t t = first_type;
  std::function<RecordAttr(const AttrValue&)> convert = [&](const AttrValue& v) {
    RecordAttr a;
    a.kind = v.kind();
    switch (v.kind()) {
      case AttrValue::Kind::kInt:
      case AttrValue::Kind::kBool:
        a.i = v.as_int();
        break;
      case AttrValue::Kind::kFloat:
        a.f = v.as_float();
        break;
      case AttrValue::Kind::kString:
        a.s = v.as_string();
        break;
      case AttrValue::Kind::kType:
        a.type_id = children[t++];
        break;
      case AttrValue::Kind::kList:
        for (const AttrValue& e : v.as_list()) a.list.push_back(convert(e));
        break;
      case AttrValue::Kind::kMap:
        for (const auto& [k, e] : v.as_map()) {
          a.list.push_back(convert(e));
          a.list.back().key = k;
        }
        break;
    }
    return a;
  };
  for (const auto& [k, v] : attrs.entries()) {
    RecordAttr a = convert(v);
    a.key = k.str();
    out->push_back(std::move(a));
  }
}

void FillDims(const std::vector<Dim>& dims, Record* r) {
  for (const Dim& d : dims)
    r->dims.push_back({d.value, d.is_const() ? std::string() : d.sym.str()});
}

}  // namespace

std::vector<uint32_t> FlattenModule(const Module& m, RecordSink& sink) {
  // Only nodes referenced more than once can be met twice; only those need
  // the id table.
  std::unordered_map<const Node*, uint32_t> shared;
  uint32_t next_id = 0;
  struct Frame {
    const Node* n;
    std::vector<const Node*> kids;
    size_t next = 0;
    std::vector<uint32_t> ids;
  };
  std::vector<Frame> stack;
  Record r;
  auto emit = [&](const Node* n, std::vector<uint32_t>& ids) {
    r = Record();
    r.kind = n->kind();
    r.children = std::move(ids);
    switch (n->kind()) {
      case NodeKind::kTensorType: {
        auto* t = static_cast<const TensorTypeNode*>(n);
        r.dtype = t->dtype();
        r.ndim = t->ndim();
        r.flag = t->has_shape();
        FillDims(t->shape(), &r);
        break;
      }
      case NodeKind::kPrimType: {
        auto* t = static_cast<const PrimTypeNode*>(n);
        r.dtype = t->dtype();
        r.flag = t->has_value();  // Prim[int64, value=n]: the value as a one-dim shape
        if (t->has_value()) FillDims({t->value()}, &r);
        break;
      }
      case NodeKind::kFuncType:
        r.flag = static_cast<const FuncTypeNode*>(n)->pure();
        break;
      case NodeKind::kShapeType: {
        auto* t = static_cast<const ShapeTypeNode*>(n);
        r.ndim = t->ndim();
        r.flag = t->has_values();
        FillDims(t->values(), &r);
        break;
      }
      case NodeKind::kVar: {
        auto* v = static_cast<const VarNode*>(n);
        r.name = v->name_hint();
        r.flag = v->is_dataflow();
        break;
      }
      case NodeKind::kGlobalVar:
        r.name = static_cast<const GlobalVarNode*>(n)->name();
        break;
      case NodeKind::kOp:
        r.name = static_cast<const OpNode*>(n)->name();
        break;
      case NodeKind::kTupleGetItem:
        r.i = static_cast<const TupleGetItemNode*>(n)->index();
        break;
      case NodeKind::kPrimValue: {
        auto* p = static_cast<const PrimValueNode*>(n);
        r.dtype = p->dtype();
        r.i = p->int_value();
        r.f = p->float_value();
        break;
      }
      case NodeKind::kStringImm:
        r.name = static_cast<const StringImmNode*>(n)->value();
        break;
      case NodeKind::kShapeExpr:
        r.flag = true;
        FillDims(static_cast<const ShapeExprNode*>(n)->values(), &r);
        break;
      case NodeKind::kPrimExpr:
        r.flag = true;
        FillDims({static_cast<const PrimExprNode*>(n)->value()}, &r);
        break;
      case NodeKind::kConstant:
        r.bytes = std::string(static_cast<const ConstantNode*>(n)->data().view());
        break;
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(n);
        r.n_args = static_cast<uint32_t>(c->args().size());
        r.n_sinfo = static_cast<uint32_t>(c->sinfo_args().size());
        FillAttrs(c->attrs(), r.children, 3 + c->args().size() + c->sinfo_args().size() - 1,
                  &r.attrs);
        break;
      }
      case NodeKind::kBindingBlock:
        r.flag = static_cast<const BindingBlockNode*>(n)->is_dataflow();
        break;
      case NodeKind::kFunction:
      case NodeKind::kExternFunc: {
        auto* f = static_cast<const ItemNode*>(n);
        r.name = f->name();
        size_t first = f->params().size() + (n->kind() == NodeKind::kFunction ? 2 : 1);
        FillAttrs(f->attrs(), r.children, first, &r.attrs);
        break;
      }
      default:
        break;
    }
    sink.Write(r);
    uint32_t id = next_id++;
    if (n->use_count() > 1) shared.emplace(n, id);
    return id;
  };
  auto lookup = [&](const Node* n, uint32_t* id) {
    if (n->use_count() <= 1) return false;
    auto it = shared.find(n);
    if (it == shared.end()) return false;
    *id = it->second;
    return true;
  };
  std::vector<uint32_t> items;
  for (const Item& item : m.items()) {
    uint32_t id;
    if (lookup(item.get(), &id)) {
      items.push_back(id);
      continue;
    }
    stack.push_back({item.get(), {}, 0, {}});
    RecordChildren(item.get(), &stack.back().kids);
    while (true) {
      Frame& f = stack.back();
      if (f.next == f.kids.size()) {
        uint32_t nid = emit(f.n, f.ids);
        stack.pop_back();
        if (stack.empty()) {
          items.push_back(nid);
          break;
        }
        stack.back().ids.push_back(nid);
        continue;
      }
      const Node* c = f.kids[f.next++];
      uint32_t cid;
      if (lookup(c, &cid)) {
        f.ids.push_back(cid);
        continue;
      }
      Frame child{c, {}, 0, {}};
      RecordChildren(c, &child.kids);
      stack.push_back(std::move(child));
    }
  }
  return items;
}

// ---------------------------------------------------------------------------

namespace {
std::string At(size_t i) { return "node " + std::to_string(i) + ": "; }
}  // namespace

template <typename T>
StatusOr<Ref<T>> NodeBuilder::Child(const Record& r, size_t i) {
  if (i >= r.children.size())
    return InvalidArgument(At(nodes_.size()) + "missing child " + std::to_string(i));
  uint32_t id = r.children[i];
  if (id >= nodes_.size())
    return InvalidArgument(At(nodes_.size()) + "child id " + std::to_string(id) +
                           " is not defined yet");
  const Ref<Node>& n = nodes_[id];
  bool ok;
  if constexpr (std::is_same_v<T, TypeNode>)
    ok = IsTypeKind(n->kind());
  else if constexpr (std::is_same_v<T, ExprNode>)
    ok = IsExprKind(n->kind());
  else
    ok = n->kind() == T::kKind;
  if (!ok)
    return InvalidArgument(At(nodes_.size()) + "child " + std::to_string(i) + " is a " +
                           NodeKindName(n->kind()) + ", which does not fit here");
  return Downcast<T>(n);
}

StatusOr<Attrs> NodeBuilder::BuildAttrs(const std::vector<RecordAttr>& attrs) {
  std::vector<Attrs::Entry> entries;
  std::function<StatusOr<AttrValue>(const RecordAttr&, int)> convert =
      [&](const RecordAttr& a, int depth) -> StatusOr<AttrValue> {
    switch (a.kind) {
      case AttrValue::Kind::kInt:
        return AttrValue::Int(a.i);
      case AttrValue::Kind::kBool:
        return AttrValue::Bool(a.i != 0);
      case AttrValue::Kind::kFloat:
        return AttrValue::Float(a.f);
      case AttrValue::Kind::kString:
        return AttrValue::String(a.s);
      case AttrValue::Kind::kType:
        if (a.type_id >= nodes_.size() || !IsTypeKind(nodes_[a.type_id]->kind()))
          return InvalidArgument(At(nodes_.size()) + "attribute type id " +
                                 std::to_string(a.type_id) + " is invalid");
        return AttrValue::OfType(Downcast<TypeNode>(nodes_[a.type_id]));
      case AttrValue::Kind::kList:
      case AttrValue::Kind::kMap: {
        if (depth >= AttrValue::kMaxAttrDepth)
          return InvalidArgument(At(nodes_.size()) + "attribute value nested too deep");
        std::vector<AttrValue> items;
        std::vector<AttrValue::MapEntry> map;
        for (const RecordAttr& e : a.list) {
          PLIR_ASSIGN_OR_RETURN(AttrValue v, convert(e, depth + 1));
          if (a.kind == AttrValue::Kind::kList)
            items.push_back(std::move(v));
          else
            map.emplace_back(e.key, std::move(v));
        }
        if (a.kind == AttrValue::Kind::kList) return AttrValue::List(std::move(items));
        auto m = AttrValue::Map(std::move(map));
        if (!m.ok()) return InvalidArgument(At(nodes_.size()) + m.status().message());
        return m;
      }
    }
    return InvalidArgument("bad attribute");
  };
  for (const RecordAttr& a : attrs) {
    PLIR_ASSIGN_OR_RETURN(AttrValue v, convert(a, 0));
    entries.emplace_back(Symbol(a.key), std::move(v));
  }
  return Attrs::Make(std::move(entries));
}

StatusOr<Ref<Node>> NodeBuilder::Build(const Record& r) {
  auto dims = [&](std::vector<Dim>* out) -> Status {
    for (const DimRecord& d : r.dims) {
      if (d.sym.empty() && d.value < 0)
        return InvalidArgument(At(nodes_.size()) + "negative dimension");
      if (d.sym.empty()) {
        out->push_back(Dim::Const(d.value));
        continue;
      }
      auto dim = LoadDimText(d.sym);  // a name, or an expression's text
      if (!dim.ok()) return InvalidArgument(At(nodes_.size()) + dim.status().message());
      out->push_back(*dim);
    }
    return Status::Ok();
  };
  auto expect_children = [&](size_t n) -> Status {
    if (r.children.size() != n)
      return InvalidArgument(At(nodes_.size()) + NodeKindName(r.kind) + " needs " +
                             std::to_string(n) + " children, has " +
                             std::to_string(r.children.size()));
    return Status::Ok();
  };
  // The children as types; the record's tree size is that of a tuple of them.
  auto child_types = [&](std::vector<Type>* f) -> Status {
    std::vector<uint32_t> sizes;
    for (size_t i = 0; i < r.children.size(); ++i) {
      PLIR_ASSIGN_OR_RETURN(Type t, Child<TypeNode>(r, i));
      f->push_back(std::move(t));
      sizes.push_back(type_sizes_[r.children[i]]);
    }
    uint32_t size;
    PLIR_RETURN_IF_ERROR(
        TupleTypeTreeSize(sizes, &size).WithPrefix("node " + std::to_string(nodes_.size())));
    type_sizes_.back() = size;
    return Status::Ok();
  };
  switch (r.kind) {
    case NodeKind::kTensorType: {
      std::vector<Dim> d;
      PLIR_RETURN_IF_ERROR(dims(&d));
      if (r.flag) return Ref<Node>(TensorTypeNode::Make(std::move(d), r.dtype));
      return Ref<Node>(TensorTypeNode::MakeRank(r.ndim, r.dtype));
    }
    case NodeKind::kTupleType: {
      std::vector<Type> f;
      PLIR_RETURN_IF_ERROR(child_types(&f));
      return Ref<Node>(TupleTypeNode::Make(std::move(f)));
    }
    case NodeKind::kFuncType: {  // parameter types, then the return type
      if (r.children.empty())
        return InvalidArgument(At(nodes_.size()) + "a Callable type needs a return type");
      std::vector<Type> f;
      PLIR_RETURN_IF_ERROR(child_types(&f));
      Type ret = f.back();
      f.pop_back();
      return Ref<Node>(FuncTypeNode::Make(std::move(f), std::move(ret), r.flag));
    }
    case NodeKind::kLocalFn: {
      if (r.children.size() < 2)
        return InvalidArgument(At(nodes_.size()) + "local function has too few children");
      size_t n_params = r.children.size() - 2;
      std::vector<Var> params;
      for (size_t i = 0; i < n_params; ++i) {
        PLIR_ASSIGN_OR_RETURN(Var v, Child<VarNode>(r, i));
        params.push_back(std::move(v));
      }
      PLIR_ASSIGN_OR_RETURN(Type ret, Child<TypeNode>(r, n_params));
      PLIR_ASSIGN_OR_RETURN(SeqExpr body, Child<SeqExprNode>(r, n_params + 1));
      return Ref<Node>(LocalFnNode::Make(std::move(params), std::move(ret), std::move(body)));
    }
    case NodeKind::kObjectType:
      return Ref<Node>(ObjectTypeNode::Get());
    case NodeKind::kPrimType:
      // The text format writes Prim[dtype] with a known dtype only.
      if (r.dtype == DataType::kUnknown) return InvalidArgument("a primitive type needs a dtype");
      if (r.flag) {
        std::vector<Dim> d;
        PLIR_RETURN_IF_ERROR(dims(&d));
        if (d.size() != 1)
          return InvalidArgument(At(nodes_.size()) +
                                 "a primitive type's value must be one dimension");
        return Ref<Node>(PrimTypeNode::MakeValue(r.dtype, d[0]));
      }
      return Ref<Node>(PrimTypeNode::Make(r.dtype));
    case NodeKind::kShapeType: {
      std::vector<Dim> d;
      PLIR_RETURN_IF_ERROR(dims(&d));
      if (r.flag) return Ref<Node>(ShapeTypeNode::Make(std::move(d)));
      return Ref<Node>(ShapeTypeNode::MakeRank(r.ndim));
    }
    case NodeKind::kVar: {
      PLIR_RETURN_IF_ERROR(expect_children(1));
      PLIR_ASSIGN_OR_RETURN(Type t, Child<TypeNode>(r, 0));
      return Ref<Node>(VarNode::Make(r.name, std::move(t), r.flag));
    }
    case NodeKind::kGlobalVar:
      return Ref<Node>(GlobalVarNode::Make(r.name));
    case NodeKind::kOp: {
      Op op = OpRegistry::Global().Lookup(r.name);
      if (!op) return NotFound(At(nodes_.size()) + "unknown op '" + r.name + "'");
      return Ref<Node>(op);
    }
    case NodeKind::kTuple: {
      std::vector<Expr> f;
      for (size_t i = 0; i < r.children.size(); ++i) {
        PLIR_ASSIGN_OR_RETURN(Expr e, Child<ExprNode>(r, i));
        f.push_back(std::move(e));
      }
      return Ref<Node>(TupleNode::Make(std::move(f)));
    }
    case NodeKind::kTupleGetItem: {
      PLIR_RETURN_IF_ERROR(expect_children(2));
      PLIR_ASSIGN_OR_RETURN(Expr t, Child<ExprNode>(r, 0));
      PLIR_ASSIGN_OR_RETURN(Type ty, Child<TypeNode>(r, 1));
      return Ref<Node>(TupleGetItemNode::MakeUnchecked(std::move(t), r.i, std::move(ty)));
    }
    case NodeKind::kPrimValue:
      if (r.dtype == DataType::kFloat64) return Ref<Node>(PrimValueNode::Float(r.f));
      if (r.dtype == DataType::kBool) return Ref<Node>(PrimValueNode::Bool(r.i != 0));
      if (r.dtype == DataType::kInt64) return Ref<Node>(PrimValueNode::Int(r.i));
      return InvalidArgument(At(nodes_.size()) + "bad primitive value dtype");
    case NodeKind::kStringImm:
      return Ref<Node>(StringImmNode::Make(r.name));
    case NodeKind::kShapeExpr: {
      std::vector<Dim> d;
      PLIR_RETURN_IF_ERROR(dims(&d));
      return Ref<Node>(ShapeExprNode::Make(std::move(d)));
    }
    case NodeKind::kPrimExpr: {
      std::vector<Dim> d;
      PLIR_RETURN_IF_ERROR(dims(&d));
      if (d.size() != 1)
        return InvalidArgument(At(nodes_.size()) + "a PrimExpr holds one dimension");
      return Ref<Node>(PrimExprNode::Make(d[0]));
    }
    case NodeKind::kConstant: {
      PLIR_RETURN_IF_ERROR(expect_children(1));
      PLIR_ASSIGN_OR_RETURN(Type t, Child<TypeNode>(r, 0));
      PLIR_RETURN_IF_ERROR(
          CheckConstantType(t).WithPrefix("node " + std::to_string(nodes_.size())));
      auto c = ConstantNode::Make(std::move(t), std::make_shared<const TensorBytes>(r.bytes));
      if (!c.ok())
        return c.status().WithPrefix(At(nodes_.size()).substr(0, At(nodes_.size()).size() - 2));
      return Ref<Node>(*c);
    }
    case NodeKind::kCall: {
      size_t fixed = 2 + static_cast<size_t>(r.n_args) + r.n_sinfo;
      if (r.children.size() < fixed)
        return InvalidArgument(At(nodes_.size()) + "call has too few children");
      PLIR_ASSIGN_OR_RETURN(Expr callee, Child<ExprNode>(r, 0));
      std::vector<Expr> args;
      for (size_t i = 0; i < r.n_args; ++i) {
        PLIR_ASSIGN_OR_RETURN(Expr e, Child<ExprNode>(r, 1 + i));
        args.push_back(std::move(e));
      }
      std::vector<Type> sinfo;
      for (size_t i = 0; i < r.n_sinfo; ++i) {
        PLIR_ASSIGN_OR_RETURN(Type t, Child<TypeNode>(r, 1 + r.n_args + i));
        sinfo.push_back(std::move(t));
      }
      PLIR_ASSIGN_OR_RETURN(Type type, Child<TypeNode>(r, fixed - 1));
      PLIR_ASSIGN_OR_RETURN(Attrs attrs, BuildAttrs(r.attrs));
      return Ref<Node>(CallNode::MakeUnchecked(std::move(callee), std::move(args), std::move(attrs),
                                               std::move(sinfo), std::move(type)));
    }
    case NodeKind::kIf: {
      PLIR_RETURN_IF_ERROR(expect_children(4));
      PLIR_ASSIGN_OR_RETURN(Expr c, Child<ExprNode>(r, 0));
      PLIR_ASSIGN_OR_RETURN(SeqExpr t, Child<SeqExprNode>(r, 1));
      PLIR_ASSIGN_OR_RETURN(SeqExpr e, Child<SeqExprNode>(r, 2));
      PLIR_ASSIGN_OR_RETURN(Type ty, Child<TypeNode>(r, 3));
      return Ref<Node>(
          IfNode::MakeUnchecked(std::move(c), std::move(t), std::move(e), std::move(ty)));
    }
    case NodeKind::kSeqExpr: {
      if (r.children.empty()) return InvalidArgument(At(nodes_.size()) + "body without a result");
      std::vector<Block> blocks;
      for (size_t i = 0; i + 1 < r.children.size(); ++i) {
        PLIR_ASSIGN_OR_RETURN(Block b, Child<BindingBlockNode>(r, i));
        blocks.push_back(std::move(b));
      }
      PLIR_ASSIGN_OR_RETURN(Expr res, Child<ExprNode>(r, r.children.size() - 1));
      return Ref<Node>(SeqExprNode::Make(std::move(blocks), std::move(res)));
    }
    case NodeKind::kBindingBlock: {
      std::vector<Binding> b;
      for (size_t i = 0; i < r.children.size(); ++i) {
        PLIR_ASSIGN_OR_RETURN(Binding x, Child<VarBindingNode>(r, i));
        b.push_back(std::move(x));
      }
      return Ref<Node>(BindingBlockNode::Make(std::move(b), r.flag));
    }
    case NodeKind::kVarBinding: {
      PLIR_RETURN_IF_ERROR(expect_children(2));
      PLIR_ASSIGN_OR_RETURN(Var v, Child<VarNode>(r, 0));
      PLIR_ASSIGN_OR_RETURN(Expr e, Child<ExprNode>(r, 1));
      return Ref<Node>(VarBindingNode::Make(std::move(v), std::move(e)));
    }
    case NodeKind::kFunction:
    case NodeKind::kExternFunc: {
      bool is_def = r.kind == NodeKind::kFunction;
      std::function<size_t(const RecordAttr&)> count = [&](const RecordAttr& a) {
        size_t n = a.kind == AttrValue::Kind::kType;
        for (const RecordAttr& e : a.list) n += count(e);
        return n;
      };
      size_t n_types = 0;
      for (const RecordAttr& a : r.attrs) n_types += count(a);
      size_t tail = (is_def ? 2 : 1) + n_types;
      if (r.children.size() < tail)
        return InvalidArgument(At(nodes_.size()) + "item has too few children");
      size_t n_params = r.children.size() - tail;
      std::vector<Var> params;
      for (size_t i = 0; i < n_params; ++i) {
        PLIR_ASSIGN_OR_RETURN(Var v, Child<VarNode>(r, i));
        params.push_back(std::move(v));
      }
      PLIR_ASSIGN_OR_RETURN(Type ret, Child<TypeNode>(r, n_params));
      PLIR_ASSIGN_OR_RETURN(Attrs attrs, BuildAttrs(r.attrs));
      if (!is_def)
        return Ref<Node>(
            ExternFuncNode::Make(r.name, std::move(params), std::move(ret), std::move(attrs)));
      PLIR_ASSIGN_OR_RETURN(SeqExpr body, Child<SeqExprNode>(r, n_params + 1));
      return Ref<Node>(FunctionNode::Make(r.name, std::move(params), std::move(ret),
                                          std::move(body), std::move(attrs)));
    }
  }
  return InvalidArgument(At(nodes_.size()) + "unknown node kind");
}

Status NodeBuilder::Add(const Record& r) {
  type_sizes_.push_back(1);  // the tree size of a type other than a tuple
  PLIR_ASSIGN_OR_RETURN(Ref<Node> n, Build(r));
  nodes_.push_back(std::move(n));
  return Status::Ok();
}

StatusOr<Module> NodeBuilder::Finish(const std::vector<uint32_t>& items) {
  std::vector<Item> out;
  for (uint32_t id : items) {
    if (id >= nodes_.size() ||
        (nodes_[id]->kind() != NodeKind::kFunction && nodes_[id]->kind() != NodeKind::kExternFunc))
      return InvalidArgument("item id " + std::to_string(id) + " is not a function or extern");
    out.push_back(Downcast<ItemNode>(nodes_[id]));
  }
  return Module::Make(std::move(out));
}

const char* RecordKindName(NodeKind k) { return NodeKindName(k); }

Status TupleTypeTreeSize(const std::vector<uint32_t>& fields, uint32_t* size) {
  uint64_t total = 1;
  for (uint32_t f : fields) {
    total += f;
    if (total > kMaxTypeTreeSize)
      return InvalidArgument("tuple type too large: its tree has more than " +
                             std::to_string(kMaxTypeTreeSize) + " nodes");
  }
  *size = static_cast<uint32_t>(total);
  return Status::Ok();
}

Status CheckConstantType(const Type& type) {
  if (type->kind() != NodeKind::kTensorType)
    return InvalidArgument(std::string("a constant's type must be a TensorType, not ") +
                           NodeKindName(type->kind()));
  return Status::Ok();
}

}  // namespace plir::internal
