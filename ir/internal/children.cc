#include "ir/internal/children.h"

#include <cstring>
#include <functional>

#include "ir/op.h"

namespace plir::internal {

size_t NumChildren(const Node* n, bool is_def) {
  switch (n->kind()) {
    case NodeKind::kTupleType:
      return static_cast<const TupleTypeNode*>(n)->fields().size();
    case NodeKind::kFuncType:
      return static_cast<const FuncTypeNode*>(n)->fields().size();
    case NodeKind::kLocalFn:
      return static_cast<const LocalFnNode*>(n)->params().size() + 2;
    case NodeKind::kVar:
      return is_def ? 1 : 0;
    case NodeKind::kConstant:
      return 1;
    case NodeKind::kTuple:
      return static_cast<const TupleNode*>(n)->fields().size();
    case NodeKind::kTupleGetItem:
      return 1;
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      return 1 + c->args().size() + c->sinfo_args().size();
    }
    case NodeKind::kIf:
      return 3;
    case NodeKind::kSeqExpr:
      return static_cast<const SeqExprNode*>(n)->blocks().size() + 1;
    case NodeKind::kBindingBlock:
      return static_cast<const BindingBlockNode*>(n)->bindings().size();
    case NodeKind::kVarBinding:
      return 2;
    case NodeKind::kFunction:
      return static_cast<const FunctionNode*>(n)->params().size() + 2;
    case NodeKind::kExternFunc:
      return static_cast<const ExternFuncNode*>(n)->params().size() + 1;
    default:
      return 0;
  }
}

Child ChildAt(const Node* n, bool /*is_def*/, size_t i) {
  switch (n->kind()) {
    case NodeKind::kTupleType:
      return {static_cast<const TupleTypeNode*>(n)->fields()[i].get(), false};
    case NodeKind::kFuncType:
      return {static_cast<const FuncTypeNode*>(n)->fields()[i].get(), false};
    case NodeKind::kLocalFn: {
      auto* f = static_cast<const LocalFnNode*>(n);
      if (i < f->params().size()) return {f->params()[i].get(), true};
      if (i == f->params().size()) return {f->ret_type().get(), false};
      return {f->body().get(), false};
    }
    case NodeKind::kVar:
      return {static_cast<const VarNode*>(n)->type().get(), false};
    case NodeKind::kConstant:
      return {static_cast<const ConstantNode*>(n)->type().get(), false};
    case NodeKind::kTuple:
      return {static_cast<const TupleNode*>(n)->fields()[i].get(), false};
    case NodeKind::kTupleGetItem:
      return {static_cast<const TupleGetItemNode*>(n)->tuple().get(), false};
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      if (i == 0) return {c->callee().get(), false};
      if (i <= c->args().size()) return {c->args()[i - 1].get(), false};
      return {c->sinfo_args()[i - 1 - c->args().size()].get(), false};
    }
    case NodeKind::kIf: {
      auto* f = static_cast<const IfNode*>(n);
      if (i == 0) return {f->cond().get(), false};
      return {i == 1 ? f->then_body().get() : f->else_body().get(), false};
    }
    case NodeKind::kSeqExpr: {
      auto* s = static_cast<const SeqExprNode*>(n);
      if (i < s->blocks().size()) return {s->blocks()[i].get(), false};
      return {s->result().get(), false};
    }
    case NodeKind::kBindingBlock:
      return {static_cast<const BindingBlockNode*>(n)->bindings()[i].get(), false};
    case NodeKind::kVarBinding: {
      auto* b = static_cast<const VarBindingNode*>(n);
      return i == 0 ? Child{b->value().get(), false} : Child{b->var().get(), true};
    }
    case NodeKind::kFunction: {
      auto* f = static_cast<const FunctionNode*>(n);
      if (i < f->params().size()) return {f->params()[i].get(), true};
      if (i == f->params().size()) return {f->ret_type().get(), false};
      return {f->body().get(), false};
    }
    case NodeKind::kExternFunc: {
      auto* f = static_cast<const ExternFuncNode*>(n);
      if (i < f->params().size()) return {f->params()[i].get(), true};
      return {f->ret_type().get(), false};
    }
    default:
      return {nullptr, false};
  }
}

std::string ChildLabel(const Node* n, size_t i) {
  auto idx = [&](const char* what, size_t k) {
    return std::string(what) + " " + std::to_string(k);
  };
  switch (n->kind()) {
    case NodeKind::kTupleType:
    case NodeKind::kTuple:
      return idx("field", i);
    case NodeKind::kFuncType: {
      auto* f = static_cast<const FuncTypeNode*>(n);
      return i < f->params().size() ? idx("parameter type", i) : "return type";
    }
    case NodeKind::kLocalFn: {
      auto* f = static_cast<const LocalFnNode*>(n);
      if (i < f->params().size())
        return idx("parameter", i) + " (%" + f->params()[i]->name_hint() + ")";
      return i == f->params().size() ? "return type" : "body";
    }
    case NodeKind::kVar:
    case NodeKind::kConstant:
      return "type";
    case NodeKind::kTupleGetItem:
      return "tuple";
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      if (i == 0) return "callee";
      if (i <= c->args().size()) return idx("argument", i - 1);
      return idx("sinfo_arg", i - 1 - c->args().size());
    }
    case NodeKind::kIf:
      return i == 0 ? "condition" : i == 1 ? "then branch" : "else branch";
    case NodeKind::kSeqExpr: {
      auto* s = static_cast<const SeqExprNode*>(n);
      return i < s->blocks().size() ? idx("block", i) : "result";
    }
    case NodeKind::kBindingBlock: {
      auto* b = static_cast<const BindingBlockNode*>(n);
      return idx("binding", i) + " (%" + b->bindings()[i]->var()->name_hint() + ")";
    }
    case NodeKind::kVarBinding:
      return i == 0 ? "value" : "bound variable";
    case NodeKind::kFunction:
    case NodeKind::kExternFunc: {
      auto* f = static_cast<const ItemNode*>(n);
      if (i < f->params().size())
        return idx("parameter", i) + " (%" + f->params()[i]->name_hint() + ")";
      return i == f->params().size() ? "return type" : "body";
    }
    default:
      return idx("child", i);
  }
}

bool ShallowEqual(const Node* a, const Node* b) {
  if (a->kind() != b->kind()) return false;
  switch (a->kind()) {
    case NodeKind::kTensorType: {
      auto* x = static_cast<const TensorTypeNode*>(a);
      auto* y = static_cast<const TensorTypeNode*>(b);
      return x->dtype() == y->dtype() && x->ndim() == y->ndim() &&
             x->has_shape() == y->has_shape() && x->shape() == y->shape();
    }
    case NodeKind::kPrimType: {
      auto* x = static_cast<const PrimTypeNode*>(a);
      auto* y = static_cast<const PrimTypeNode*>(b);
      return x->dtype() == y->dtype() && x->has_value() == y->has_value() &&
             x->value() == y->value();
    }
    case NodeKind::kFuncType:
      return static_cast<const FuncTypeNode*>(a)->pure() ==
             static_cast<const FuncTypeNode*>(b)->pure();
    case NodeKind::kShapeType: {
      auto* x = static_cast<const ShapeTypeNode*>(a);
      auto* y = static_cast<const ShapeTypeNode*>(b);
      return x->ndim() == y->ndim() && x->has_values() == y->has_values() &&
             x->values() == y->values();
    }
    case NodeKind::kVar:
      return static_cast<const VarNode*>(a)->is_dataflow() ==
             static_cast<const VarNode*>(b)->is_dataflow();
    case NodeKind::kGlobalVar:
      return static_cast<const GlobalVarNode*>(a)->name() ==
             static_cast<const GlobalVarNode*>(b)->name();
    case NodeKind::kOp:
      return a == b;
    case NodeKind::kTupleGetItem:
      return static_cast<const TupleGetItemNode*>(a)->index() ==
             static_cast<const TupleGetItemNode*>(b)->index();
    case NodeKind::kPrimValue: {
      auto* x = static_cast<const PrimValueNode*>(a);
      auto* y = static_cast<const PrimValueNode*>(b);
      double fx = x->float_value(), fy = y->float_value();
      return x->dtype() == y->dtype() && x->int_value() == y->int_value() &&
             std::memcmp(&fx, &fy, sizeof fx) == 0;
    }
    case NodeKind::kStringImm:
      return static_cast<const StringImmNode*>(a)->value() ==
             static_cast<const StringImmNode*>(b)->value();
    case NodeKind::kShapeExpr:
      return static_cast<const ShapeExprNode*>(a)->values() ==
             static_cast<const ShapeExprNode*>(b)->values();
    case NodeKind::kPrimExpr:
      return static_cast<const PrimExprNode*>(a)->value() ==
             static_cast<const PrimExprNode*>(b)->value();
    case NodeKind::kConstant: {
      auto* x = static_cast<const ConstantNode*>(a);
      auto* y = static_cast<const ConstantNode*>(b);
      if (x->data_ptr() == y->data_ptr()) return true;  // shared bytes
      return x->data() == y->data();
    }
    case NodeKind::kCall:
      return static_cast<const CallNode*>(a)->attrs().Equals(
          static_cast<const CallNode*>(b)->attrs());
    case NodeKind::kBindingBlock:
      return static_cast<const BindingBlockNode*>(a)->is_dataflow() ==
             static_cast<const BindingBlockNode*>(b)->is_dataflow();
    case NodeKind::kFunction:
    case NodeKind::kExternFunc: {
      auto* x = static_cast<const ItemNode*>(a);
      auto* y = static_cast<const ItemNode*>(b);
      return x->name() == y->name() && x->attrs().Equals(y->attrs());
    }
    default:
      return true;  // no scalar fields, or only children
  }
}

namespace {
uint64_t HashStr(std::string_view s) { return std::hash<std::string_view>()(s); }
uint64_t HashDims(uint64_t h, const std::vector<Dim>& dims) {
  h = HashMix(h, dims.size());
  for (const Dim& d : dims)
    h = HashMix(h, d.is_const() ? static_cast<uint64_t>(d.value) : HashStr(d.sym.str()));
  return h;
}
uint64_t HashType(const Type& t);
uint64_t HashAttrValue(uint64_t h, const AttrValue& v) {
  h = HashMix(h, static_cast<uint64_t>(v.kind()));
  switch (v.kind()) {
    case AttrValue::Kind::kInt:
    case AttrValue::Kind::kBool:
      return HashMix(h, static_cast<uint64_t>(v.as_int()));
    case AttrValue::Kind::kFloat: {
      uint64_t bits;
      double f = v.as_float();
      std::memcpy(&bits, &f, 8);
      return HashMix(h, bits);
    }
    case AttrValue::Kind::kString:
      return HashMix(h, HashStr(v.as_string()));
    case AttrValue::Kind::kType:
      return HashMix(h, HashType(v.as_type()));
    case AttrValue::Kind::kList:
      for (const AttrValue& e : v.as_list()) h = HashAttrValue(h, e);  // depth is bounded
      return HashMix(h, v.as_list().size());
    case AttrValue::Kind::kMap:
      for (const auto& [k, e] : v.as_map()) h = HashAttrValue(HashMix(h, HashStr(k)), e);
      return HashMix(h, v.as_map().size());
  }
  return h;
}
uint64_t HashAttrs(uint64_t h, const Attrs& attrs) {
  for (const auto& [k, v] : attrs.entries()) h = HashAttrValue(HashMix(h, HashStr(k.str())), v);
  return HashMix(h, attrs.size());
}
// Iterative hash of a type tree.
uint64_t HashType(const Type& t) {
  uint64_t h = 0;
  std::vector<const Node*> stack{t.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    h = HashMix(h, ShallowHash(n));
    size_t k = NumChildren(n, false);
    for (size_t i = k; i-- > 0;) stack.push_back(ChildAt(n, false, i).node);
  }
  return h;
}
}  // namespace

uint64_t ShallowHash(const Node* n) {
  uint64_t h = HashMix(0x51ed27, static_cast<uint64_t>(n->kind()));
  switch (n->kind()) {
    case NodeKind::kTensorType: {
      auto* x = static_cast<const TensorTypeNode*>(n);
      h = HashMix(h, static_cast<uint64_t>(x->dtype()));
      h = HashMix(h, static_cast<uint64_t>(x->ndim() + 1) * 2 + x->has_shape());
      return HashDims(h, x->shape());
    }
    case NodeKind::kPrimType: {
      auto* x = static_cast<const PrimTypeNode*>(n);
      h = HashMix(h, static_cast<uint64_t>(x->dtype()));
      return x->has_value() ? HashDims(h, {x->value()}) : h;
    }
    case NodeKind::kFuncType:
      return HashMix(h, static_cast<const FuncTypeNode*>(n)->pure());
    case NodeKind::kShapeType: {
      auto* x = static_cast<const ShapeTypeNode*>(n);
      h = HashMix(h, static_cast<uint64_t>(x->ndim() + 1) * 2 + x->has_values());
      return HashDims(h, x->values());
    }
    case NodeKind::kVar:
      return HashMix(h, static_cast<const VarNode*>(n)->is_dataflow());
    case NodeKind::kGlobalVar:
      return HashMix(h, HashStr(static_cast<const GlobalVarNode*>(n)->name()));
    case NodeKind::kOp:
      return HashMix(h, HashStr(static_cast<const OpNode*>(n)->name()));
    case NodeKind::kTupleGetItem:
      return HashMix(h, static_cast<uint64_t>(static_cast<const TupleGetItemNode*>(n)->index()));
    case NodeKind::kPrimValue: {
      auto* x = static_cast<const PrimValueNode*>(n);
      double f = x->float_value();
      uint64_t bits;
      std::memcpy(&bits, &f, 8);
      h = HashMix(h, static_cast<uint64_t>(x->dtype()));
      return HashMix(HashMix(h, static_cast<uint64_t>(x->int_value())), bits);
    }
    case NodeKind::kStringImm:
      return HashMix(h, HashStr(static_cast<const StringImmNode*>(n)->value()));
    case NodeKind::kShapeExpr:
      return HashDims(h, static_cast<const ShapeExprNode*>(n)->values());
    case NodeKind::kPrimExpr:
      return HashDims(h, {static_cast<const PrimExprNode*>(n)->value()});
    case NodeKind::kConstant:
      return HashMix(h, static_cast<const ConstantNode*>(n)->DataHash());  // cached per node
    case NodeKind::kCall:
      return HashAttrs(h, static_cast<const CallNode*>(n)->attrs());
    case NodeKind::kBindingBlock:
      return HashMix(h, static_cast<const BindingBlockNode*>(n)->is_dataflow());
    case NodeKind::kFunction:
    case NodeKind::kExternFunc: {
      auto* x = static_cast<const ItemNode*>(n);
      return HashAttrs(HashMix(h, HashStr(x->name())), x->attrs());
    }
    default:
      return h;
  }
}

std::string ShortDescription(const Node* n) {
  if (n == nullptr) return "nothing";
  if (IsTypeKind(n->kind())) return "type " + TypeToString(Type(static_cast<const TypeNode*>(n)));
  switch (n->kind()) {
    case NodeKind::kVar: {
      auto* v = static_cast<const VarNode*>(n);
      return std::string(v->is_dataflow() ? "dataflow variable %" : "variable %") + v->name_hint();
    }
    case NodeKind::kGlobalVar:
      return "@" + static_cast<const GlobalVarNode*>(n)->name();
    case NodeKind::kOp:
      return "op " + static_cast<const OpNode*>(n)->name();
    case NodeKind::kPrimValue: {
      auto* p = static_cast<const PrimValueNode*>(n);
      std::string s;
      if (p->dtype() == DataType::kFloat64)
        AppendFloat(p->float_value(), &s);
      else if (p->dtype() == DataType::kBool)
        s = p->int_value() ? "true" : "false";
      else
        s = std::to_string(p->int_value());
      return "value " + s;
    }
    case NodeKind::kShapeExpr: {
      std::string t = TypeToString(static_cast<const ShapeExprNode*>(n)->type());
      return "shape value " + t.substr(std::string_view("Shape").size());
    }
    case NodeKind::kPrimExpr:
      return "value prim[" + DimToString(static_cast<const PrimExprNode*>(n)->value()) + "]";
    case NodeKind::kStringImm: {
      std::string s = "string ";
      AppendQuoted(static_cast<const StringImmNode*>(n)->value(), &s);
      return s;
    }
    case NodeKind::kConstant: {
      auto* c = static_cast<const ConstantNode*>(n);
      std::string s = "constant of type " + TypeToString(c->type()) + " with bytes ";
      static const char* kHex = "0123456789abcdef";
      for (size_t i = 0; i < c->data().size() && i < 16; ++i) {
        unsigned char b = static_cast<unsigned char>(c->data().data()[i]);
        s.push_back(kHex[b >> 4]);
        s.push_back(kHex[b & 15]);
      }
      if (c->data().size() > 16) s += "... (" + std::to_string(c->data().size()) + " bytes)";
      return s;
    }
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      std::string s = "call of ";
      if (auto* op = As<OpNode>(c->callee()))
        s += op->name();
      else if (auto* g = As<GlobalVarNode>(c->callee()))
        s += "@" + g->name();
      else if (auto* v = As<VarNode>(c->callee()))
        s += "%" + v->name_hint();
      else
        s += "an expression";
      s += " with " + std::to_string(c->args().size()) + " argument(s)";
      if (!c->attrs().empty()) {
        s += " and attributes {";
        bool first = true;
        for (const auto& [k, v] : c->attrs().entries()) {
          if (!first) s += ", ";
          first = false;
          s += k.str() + "=";
          v.AppendTo(&s);
        }
        s += "}";
      }
      return s;
    }
    case NodeKind::kTuple:
      return "tuple of " + std::to_string(static_cast<const TupleNode*>(n)->fields().size()) +
             " field(s)";
    case NodeKind::kTupleGetItem:
      return "element " + std::to_string(static_cast<const TupleGetItemNode*>(n)->index()) +
             " of a tuple";
    case NodeKind::kIf:
      return "if expression";
    case NodeKind::kLocalFn:
      return "local function with " +
             std::to_string(static_cast<const LocalFnNode*>(n)->params().size()) + " parameter(s)";
    case NodeKind::kSeqExpr:
      return "body with " + std::to_string(static_cast<const SeqExprNode*>(n)->blocks().size()) +
             " block(s)";
    case NodeKind::kBindingBlock: {
      auto* b = static_cast<const BindingBlockNode*>(n);
      return std::string(b->is_dataflow() ? "dataflow block" : "block") + " of " +
             std::to_string(b->bindings().size()) + " binding(s)";
    }
    case NodeKind::kVarBinding:
      return "binding of %" + static_cast<const VarBindingNode*>(n)->var()->name_hint();
    case NodeKind::kFunction:
    case NodeKind::kExternFunc: {
      auto* f = static_cast<const ItemNode*>(n);
      std::string s = (n->kind() == NodeKind::kFunction ? "function @" : "extern @") + f->name() +
                      " with " + std::to_string(f->params().size()) + " parameter(s)";
      if (!f->attrs().empty()) {
        s += " and attributes {";
        bool first = true;
        for (const auto& [k, v] : f->attrs().entries()) {
          if (!first) s += ", ";
          first = false;
          s += k.str() + " = ";
          v.AppendTo(&s);
        }
        s += "}";
      }
      return s;
    }
    default:
      return NodeKindName(n->kind());
  }
}

}  // namespace plir::internal
