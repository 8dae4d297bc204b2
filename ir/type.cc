#include "ir/type.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/checked_math.h"

namespace plir {

std::vector<Symbol> TypeDimNames(const Type& t, DimNameKind which) {
  std::vector<Symbol> out;
  std::unordered_set<Symbol> seen;
  std::vector<Symbol> names;
  auto dim = [&](const Dim& d) {
    if (d.is_const()) return;
    if (which == DimNameKind::kBindable && DimIsExpr(d)) return;
    names.clear();
    DimNames(d, &names);
    for (Symbol s : names)
      if (seen.insert(s).second) out.push_back(s);
  };
  std::vector<const TypeNode*> stack;
  if (t) stack.push_back(t.get());
  while (!stack.empty()) {
    const TypeNode* n = stack.back();
    stack.pop_back();
    if (auto* tt = As<TensorTypeNode>(n)) {
      for (const Dim& d : tt->shape()) dim(d);
    } else if (auto* st = As<ShapeTypeNode>(n)) {
      for (const Dim& d : st->values()) dim(d);
    } else if (auto* pt = As<PrimTypeNode>(n)) {
      if (pt->has_value()) dim(pt->value());
    } else if (auto* tu = As<TupleTypeNode>(n)) {
      for (size_t i = tu->fields().size(); i-- > 0;) stack.push_back(tu->fields()[i].get());
    }
  }
  return out;
}

namespace {

// Types are hash-consed: equal types are one node, built once per process
// and never freed (so a Ref to a type costs no atomic count and TypeEqual is
// a pointer compare). The table is sharded by hash with a lock per shard, and
// each thread keeps a small direct-mapped cache of recent hits in front of
// it. A type's fields are themselves interned, so matching a candidate is a
// shallow compare.
struct TypeKey {
  NodeKind kind;
  DataType dtype = DataType::kUnknown;
  int ndim = -1;
  bool has = false;                           // has_shape / has_values
  const std::vector<Dim>* dims = nullptr;     // tensor shape, shape values
  const std::vector<Type>* fields = nullptr;  // tuple fields
};

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t HashKey(const TypeKey& k) {
  uint64_t h = Mix(static_cast<uint64_t>(k.kind), static_cast<uint64_t>(k.dtype));
  h = Mix(h, static_cast<uint64_t>(k.ndim + 1) * 2 + k.has);
  if (k.dims)
    for (const Dim& d : *k.dims)
      h = Mix(h, static_cast<uint64_t>(d.value) ^ reinterpret_cast<uintptr_t>(d.sym.ptr()));
  if (k.fields)
    for (const Type& f : *k.fields) h = Mix(h, reinterpret_cast<uintptr_t>(f.get()));
  return h ^ (h >> 31);
}

bool Matches(const TypeNode* t, const TypeKey& k) {
  if (t->kind() != k.kind) return false;
  switch (k.kind) {
    case NodeKind::kTensorType: {
      auto* x = static_cast<const TensorTypeNode*>(t);
      return x->dtype() == k.dtype && x->ndim() == k.ndim && x->has_shape() == k.has &&
             x->shape() == *k.dims;
    }
    case NodeKind::kFuncType:
      if (static_cast<const FuncTypeNode*>(t)->pure() != k.has) return false;
      [[fallthrough]];
    case NodeKind::kTupleType: {
      const std::vector<Type>& f = t->kind() == NodeKind::kTupleType
                                       ? static_cast<const TupleTypeNode*>(t)->fields()
                                       : static_cast<const FuncTypeNode*>(t)->fields();
      if (f.size() != k.fields->size()) return false;
      for (size_t i = 0; i < f.size(); ++i)
        if (f[i].get() != (*k.fields)[i].get()) return false;
      return true;
    }
    case NodeKind::kPrimType: {
      auto* x = static_cast<const PrimTypeNode*>(t);
      return x->dtype() == k.dtype && x->has_value() == k.has &&
             (!k.has || x->value() == (*k.dims)[0]);
    }
    case NodeKind::kShapeType: {
      auto* x = static_cast<const ShapeTypeNode*>(t);
      return x->ndim() == k.ndim && x->has_values() == k.has && x->values() == *k.dims;
    }
    default:
      return true;  // ObjectType
  }
}

class TypeTable {
 public:
  // Returns the interned type matching `k`, building it with `build()` (a
  // new node) when there is none yet.
  template <typename Build>
  Type Intern(const TypeKey& k, Build&& build) {
    uint64_t h = HashKey(k);
    // Trivially destructible, so usable during static destruction.
    thread_local const TypeNode* cache[kCacheSize] = {};
    thread_local uint64_t cache_hash[kCacheSize] = {};
    size_t ci = h & (kCacheSize - 1);
    if (cache[ci] && cache_hash[ci] == h && Matches(cache[ci], k)) return Type(cache[ci]);
    Shard& shard = shards_[(h >> 48) % kShards];
    const TypeNode* found = nullptr;
    {
      std::lock_guard<std::mutex> lock(shard.mu);
      auto [lo, hi] = shard.map.equal_range(h);
      for (auto it = lo; it != hi && !found; ++it)
        if (Matches(it->second, k)) found = it->second;
      if (!found) {
        found = build();
        shard.map.emplace(h, found);
      }
    }
    cache[ci] = found;
    cache_hash[ci] = h;
    return Type(found);
  }

 private:
  static constexpr size_t kCacheSize = 256;
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    std::unordered_multimap<uint64_t, const TypeNode*> map;
  };
  Shard shards_[kShards];
};

TypeTable& Types() {
  static auto* table = new TypeTable();  // never destroyed: types outlive main
  return *table;
}

}  // namespace

Type TensorTypeNode::Make(std::vector<Dim> shape, DataType dtype) {
  int ndim = static_cast<int>(shape.size());
  TypeKey k{kKind, dtype, ndim, true, &shape, nullptr};
  return Types().Intern(k, [&] {
    return new (internal::NodeMemory<TensorTypeNode>())
        TensorTypeNode(dtype, ndim, true, std::move(shape));
  });
}

Type TensorTypeNode::MakeRank(int ndim, DataType dtype) {
  static const std::vector<Dim> kNoDims;
  ndim = ndim < 0 ? -1 : ndim;
  TypeKey k{kKind, dtype, ndim, false, &kNoDims, nullptr};
  return Types().Intern(k, [&] {
    return new (internal::NodeMemory<TensorTypeNode>()) TensorTypeNode(dtype, ndim, false, {});
  });
}

bool TensorTypeNode::IsStatic() const {
  if (!has_shape_) return false;
  for (const Dim& d : shape_)
    if (!d.is_const()) return false;
  return true;
}

int64_t TensorTypeNode::NumElements() const {
  // Saturates: no data can be that large, so a constant or a tensor of such
  // a type fails its size check; the verifier reports the type itself.
  int64_t n = 1;
  for (const Dim& d : shape_) {
    auto r = CheckedMul(n, d.value);
    if (!r || d.value < 0) return std::numeric_limits<int64_t>::max();
    n = *r;
  }
  return n;
}

Type TupleTypeNode::Make(std::vector<Type> fields) {
  TypeKey k{kKind, DataType::kUnknown, -1, false, nullptr, &fields};
  return Types().Intern(k, [&] {
    return new (internal::NodeMemory<TupleTypeNode>()) TupleTypeNode(std::move(fields));
  });
}

Type ObjectTypeNode::Get() {
  static const TypeNode* instance = new (internal::NodeMemory<ObjectTypeNode>()) ObjectTypeNode();
  return Type(instance);
}

Type PrimTypeNode::Make(DataType dtype) {
  TypeKey k{kKind, dtype, -1, false, nullptr, nullptr};
  return Types().Intern(
      k, [&] { return new (internal::NodeMemory<PrimTypeNode>()) PrimTypeNode(dtype); });
}

Type PrimTypeNode::MakeValue(DataType dtype, Dim value) {
  std::vector<Dim> v{value};
  TypeKey k{kKind, dtype, -1, true, &v, nullptr};
  return Types().Intern(
      k, [&] { return new (internal::NodeMemory<PrimTypeNode>()) PrimTypeNode(dtype, value); });
}

Type ShapeTypeNode::Make(std::vector<Dim> values) {
  int n = static_cast<int>(values.size());
  TypeKey k{kKind, DataType::kUnknown, n, true, &values, nullptr};
  return Types().Intern(k, [&] {
    return new (internal::NodeMemory<ShapeTypeNode>()) ShapeTypeNode(n, true, std::move(values));
  });
}

Type FuncTypeNode::Make(std::vector<Type> params, Type ret, bool pure) {
  if (!ret) ret = ObjectTypeNode::Get();
  params.push_back(std::move(ret));
  TypeKey k{kKind, DataType::kUnknown, -1, pure, nullptr, &params};
  return Types().Intern(k, [&] {
    return new (internal::NodeMemory<FuncTypeNode>()) FuncTypeNode(std::move(params), pure);
  });
}

Type ShapeTypeNode::MakeRank(int ndim) {
  static const std::vector<Dim> kNoDims;
  ndim = ndim < 0 ? -1 : ndim;
  TypeKey k{kKind, DataType::kUnknown, ndim, false, &kNoDims, nullptr};
  return Types().Intern(k, [&] {
    return new (internal::NodeMemory<ShapeTypeNode>()) ShapeTypeNode(ndim, false, {});
  });
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
      case NodeKind::kFuncType: {
        auto* ft = static_cast<const FuncTypeNode*>(t);
        auto ps = ft->params();
        out->append("Callable[(");
        stack.push_back({nullptr, ft->pure() ? "]" : ", pure=false]"});
        stack.push_back({ft->ret().get(), nullptr});
        stack.push_back({nullptr, "), "});
        for (size_t i = ps.size(); i-- > 0;) {
          stack.push_back({ps[i].get(), nullptr});
          if (i) stack.push_back({nullptr, ", "});
        }
        break;
      }
      case NodeKind::kPrimType: {
        auto* pt = static_cast<const PrimTypeNode*>(t);
        out->append("Prim[").append(DataTypeName(pt->dtype()));
        if (pt->has_value()) out->append(", value=").append(DimToString(pt->value()));
        out->append("]");
        break;
      }
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
  // Types are interned: the same node is the common case (a binding's
  // annotation and its value's type), answered without the stack's
  // allocation.
  if (a0.get() == b0.get()) return true;
  std::vector<std::pair<const TypeNode*, const TypeNode*>> stack{{a0.get(), b0.get()}};
  while (!stack.empty()) {
    auto [a, b] = stack.back();
    stack.pop_back();
    if (a == b) continue;
    if (a->kind() == NodeKind::kObjectType || b->kind() == NodeKind::kObjectType) continue;
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
      case NodeKind::kFuncType: {
        auto& x = static_cast<const FuncTypeNode*>(a)->fields();
        auto& y = static_cast<const FuncTypeNode*>(b)->fields();
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i) stack.push_back({x[i].get(), y[i].get()});
        break;
      }
      case NodeKind::kPrimType: {
        auto* x = static_cast<const PrimTypeNode*>(a);
        auto* y = static_cast<const PrimTypeNode*>(b);
        if (!DTypeCompatible(x->dtype(), y->dtype())) return false;
        if (x->has_value() && y->has_value() && x->value().is_const() && y->value().is_const() &&
            x->value().value != y->value().value)
          return false;
        break;
      }
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

bool TypeEqual(const Type& a, const Type& b) {
  // Types are hash-consed (see TypeTable): equal types are the same node.
  return a.get() == b.get();
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
      if (dx != dy) return ObjectTypeNode::Get();
      return PrimTypeNode::Make(dx);  // different known values (equal ones returned above)
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
