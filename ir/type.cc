#include "ir/type.h"

#include <utility>

namespace plir {

std::string DimToString(const Dim& d) {
  return d.is_const() ? std::to_string(d.value) : d.sym.str();
}

Type TensorTypeNode::Make(std::vector<Dim> shape, DataType dtype) {
  int ndim = static_cast<int>(shape.size());
  return Type(new TensorTypeNode(dtype, ndim, true, std::move(shape)));
}

Type TensorTypeNode::MakeRank(int ndim, DataType dtype) {
  return Type(new TensorTypeNode(dtype, ndim < 0 ? -1 : ndim, false, {}));
}

bool TensorTypeNode::IsStatic() const {
  if (!has_shape_) return false;
  for (const Dim& d : shape_)
    if (!d.is_const()) return false;
  return true;
}

int64_t TensorTypeNode::NumElements() const {
  int64_t n = 1;
  for (const Dim& d : shape_) n *= d.value;
  return n;
}

Type TupleTypeNode::Make(std::vector<Type> fields) {
  return Type(new TupleTypeNode(std::move(fields)));
}

Type ObjectTypeNode::Get() {
  static const Type* instance = new Type(new ObjectTypeNode());
  return *instance;
}

Type PrimTypeNode::Make(DataType dtype) { return Type(new PrimTypeNode(dtype)); }

Type ShapeTypeNode::Make(std::vector<Dim> values) {
  int n = static_cast<int>(values.size());
  return Type(new ShapeTypeNode(n, true, std::move(values)));
}

Type ShapeTypeNode::MakeRank(int ndim) {
  return Type(new ShapeTypeNode(ndim < 0 ? -1 : ndim, false, {}));
}

namespace {
void AppendDims(const std::vector<Dim>& dims, std::string* out) {
  out->push_back('(');
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out->append(", ");
    out->append(DimToString(dims[i]));
  }
  if (dims.size() == 1) out->push_back(',');
  out->push_back(')');
}
}  // namespace

void AppendType(const Type& root, std::string* out) {
  // Work stack: either a type to print or a literal to append.
  struct Item {
    const TypeNode* type;
    const char* text;
  };
  std::vector<Item> stack{{root.get(), nullptr}};
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    if (item.text) {
      out->append(item.text);
      continue;
    }
    const TypeNode* t = item.type;
    if (t == nullptr) {
      out->append("<null>");
      continue;
    }
    switch (t->kind()) {
      case NodeKind::kTensorType: {
        auto* tt = static_cast<const TensorTypeNode*>(t);
        out->append("Tensor");
        bool has_dtype = tt->dtype() != DataType::kUnknown;
        if (!tt->has_shape() && tt->ndim() < 0 && !has_dtype) break;
        out->push_back('[');
        bool need_comma = false;
        if (tt->has_shape()) {
          AppendDims(tt->shape(), out);
          need_comma = true;
        } else if (tt->ndim() >= 0) {
          out->append("ndim=").append(std::to_string(tt->ndim()));
          need_comma = true;
        }
        if (has_dtype) {
          if (need_comma) out->append(", ");
          out->append(DataTypeName(tt->dtype()));
        }
        out->push_back(']');
        break;
      }
      case NodeKind::kTupleType: {
        auto* tt = static_cast<const TupleTypeNode*>(t);
        const auto& f = tt->fields();
        out->push_back('(');
        stack.push_back({nullptr, f.size() == 1 ? ",)" : ")"});
        for (size_t i = f.size(); i-- > 0;) {
          stack.push_back({f[i].get(), nullptr});
          if (i) stack.push_back({nullptr, ", "});
        }
        break;
      }
      case NodeKind::kObjectType:
        out->append("Object");
        break;
      case NodeKind::kPrimType:
        out->append("Prim[")
            .append(DataTypeName(static_cast<const PrimTypeNode*>(t)->dtype()))
            .append("]");
        break;
      case NodeKind::kShapeType: {
        auto* st = static_cast<const ShapeTypeNode*>(t);
        out->append("Shape");
        if (st->has_values()) {
          out->push_back('[');
          AppendDims(st->values(), out);
          out->push_back(']');
        } else if (st->ndim() >= 0) {
          out->append("[ndim=").append(std::to_string(st->ndim())).append("]");
        }
        break;
      }
      default:
        out->append("<not a type>");
    }
  }
}

std::string TypeToString(const Type& t) {
  std::string s;
  AppendType(t, &s);
  return s;
}

namespace {
bool DimsCompatible(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].is_const() && b[i].is_const() && a[i].value != b[i].value) return false;
  return true;
}
bool DTypeCompatible(DataType a, DataType b) {
  return a == DataType::kUnknown || b == DataType::kUnknown || a == b;
}
bool RankCompatible(int a, int b) { return a < 0 || b < 0 || a == b; }
}  // namespace

bool TypeCompatible(const Type& a0, const Type& b0) {
  std::vector<std::pair<const TypeNode*, const TypeNode*>> stack{{a0.get(), b0.get()}};
  while (!stack.empty()) {
    auto [a, b] = stack.back();
    stack.pop_back();
    if (a == b) continue;
    if (a->kind() == NodeKind::kObjectType || b->kind() == NodeKind::kObjectType)
      continue;
    if (a->kind() != b->kind()) return false;
    switch (a->kind()) {
      case NodeKind::kTensorType: {
        auto* x = static_cast<const TensorTypeNode*>(a);
        auto* y = static_cast<const TensorTypeNode*>(b);
        if (!DTypeCompatible(x->dtype(), y->dtype())) return false;
        if (!RankCompatible(x->ndim(), y->ndim())) return false;
        if (x->has_shape() && y->has_shape() && !DimsCompatible(x->shape(), y->shape()))
          return false;
        break;
      }
      case NodeKind::kTupleType: {
        auto& x = static_cast<const TupleTypeNode*>(a)->fields();
        auto& y = static_cast<const TupleTypeNode*>(b)->fields();
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i) stack.push_back({x[i].get(), y[i].get()});
        break;
      }
      case NodeKind::kPrimType:
        if (!DTypeCompatible(static_cast<const PrimTypeNode*>(a)->dtype(),
                             static_cast<const PrimTypeNode*>(b)->dtype()))
          return false;
        break;
      case NodeKind::kShapeType: {
        auto* x = static_cast<const ShapeTypeNode*>(a);
        auto* y = static_cast<const ShapeTypeNode*>(b);
        if (!RankCompatible(x->ndim(), y->ndim())) return false;
        if (x->has_values() && y->has_values() && !DimsCompatible(x->values(), y->values()))
          return false;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

bool TypeEqual(const Type& a0, const Type& b0) {
  std::vector<std::pair<const TypeNode*, const TypeNode*>> stack{{a0.get(), b0.get()}};
  while (!stack.empty()) {
    auto [a, b] = stack.back();
    stack.pop_back();
    if (a == b) continue;
    if (!a || !b || a->kind() != b->kind()) return false;
    switch (a->kind()) {
      case NodeKind::kTensorType: {
        auto* x = static_cast<const TensorTypeNode*>(a);
        auto* y = static_cast<const TensorTypeNode*>(b);
        if (x->dtype() != y->dtype() || x->ndim() != y->ndim() ||
            x->has_shape() != y->has_shape() || x->shape() != y->shape())
          return false;
        break;
      }
      case NodeKind::kTupleType: {
        auto& x = static_cast<const TupleTypeNode*>(a)->fields();
        auto& y = static_cast<const TupleTypeNode*>(b)->fields();
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i) stack.push_back({x[i].get(), y[i].get()});
        break;
      }
      case NodeKind::kObjectType:
        break;
      case NodeKind::kPrimType:
        if (static_cast<const PrimTypeNode*>(a)->dtype() !=
            static_cast<const PrimTypeNode*>(b)->dtype())
          return false;
        break;
      case NodeKind::kShapeType: {
        auto* x = static_cast<const ShapeTypeNode*>(a);
        auto* y = static_cast<const ShapeTypeNode*>(b);
        if (x->ndim() != y->ndim() || x->has_values() != y->has_values() ||
            x->values() != y->values())
          return false;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

namespace {
// Depth beyond which JoinTypes gives up on precision and answers Object
// (always a sound answer); keeps the recursion bounded.
constexpr int kMaxJoinDepth = 64;

Type JoinImpl(const Type& a, const Type& b, int depth) {
  if (a.get() == b.get()) return a;
  if (depth > kMaxJoinDepth) return ObjectTypeNode::Get();
  if (a->kind() != b->kind()) return ObjectTypeNode::Get();
  switch (a->kind()) {
    case NodeKind::kTensorType: {
      auto* x = As<TensorTypeNode>(a);
      auto* y = As<TensorTypeNode>(b);
      DataType dt = x->dtype() == y->dtype() ? x->dtype() : DataType::kUnknown;
      if (x->has_shape() && y->has_shape() && x->shape() == y->shape())
        return TensorTypeNode::Make(x->shape(), dt);
      int nd = x->ndim() == y->ndim() ? x->ndim() : -1;
      return TensorTypeNode::MakeRank(nd, dt);
    }
    case NodeKind::kTupleType: {
      auto& x = As<TupleTypeNode>(a)->fields();
      auto& y = As<TupleTypeNode>(b)->fields();
      if (x.size() != y.size()) return ObjectTypeNode::Get();
      std::vector<Type> f;
      f.reserve(x.size());
      for (size_t i = 0; i < x.size(); ++i) f.push_back(JoinImpl(x[i], y[i], depth + 1));
      return TupleTypeNode::Make(std::move(f));
    }
    case NodeKind::kPrimType: {
      auto dx = As<PrimTypeNode>(a)->dtype();
      auto dy = As<PrimTypeNode>(b)->dtype();
      return dx == dy ? a : ObjectTypeNode::Get();
    }
    case NodeKind::kShapeType: {
      auto* x = As<ShapeTypeNode>(a);
      auto* y = As<ShapeTypeNode>(b);
      if (x->has_values() && y->has_values() && x->values() == y->values()) return a;
      return ShapeTypeNode::MakeRank(x->ndim() == y->ndim() ? x->ndim() : -1);
    }
    default:
      return ObjectTypeNode::Get();
  }
}
}  // namespace

Type JoinTypes(const Type& a, const Type& b) {
  if (TypeEqual(a, b)) return a;
  return JoinImpl(a, b, 0);
}

}  // namespace plir
