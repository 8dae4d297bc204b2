// Shared helpers of the op families' type inference (internal to ir/ops).
#ifndef PLIR_IR_OPS_INFER_UTIL_H_
#define PLIR_IR_OPS_INFER_UTIL_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "ir/checked_math.h"
#include "ir/op.h"

namespace plir::internal {

using Args = ExprSpan;

// Returns the tensor type of args[i]; nullptr if the argument is an Object
// (type unknown). Fails if the argument is known not to be a tensor.
inline StatusOr<const TensorTypeNode*> TensorArg(const std::string& op, const Args& args,
                                                 size_t i) {
  const Type& t = args[i]->type();
  if (t->kind() == NodeKind::kObjectType) return static_cast<const TensorTypeNode*>(nullptr);
  if (auto* tt = As<TensorTypeNode>(t)) return tt;
  return InvalidArgument(op + " expects a tensor as argument " + std::to_string(i) + ", got " +
                         TypeToString(t));
}

inline Type UnknownTensor(DataType dt = DataType::kUnknown) {
  return TensorTypeNode::MakeRank(-1, dt);
}

inline std::string ShapeStr(const TensorTypeNode* t) { return TypeToString(Type(t)); }

// NumPy broadcasting of two known shapes. Returns nullopt when the result
// cannot be determined statically (different symbolic dims): rank is known.
inline StatusOr<std::optional<std::vector<Dim>>> Broadcast(const std::string& op,
                                                           const TensorTypeNode* a,
                                                           const TensorTypeNode* b) {
  const auto& x = a->shape();
  const auto& y = b->shape();
  size_t n = std::max(x.size(), y.size());
  std::vector<Dim> out(n);
  bool known = true;
  for (size_t i = 0; i < n; ++i) {
    const Dim* dx = i < n - x.size() ? nullptr : &x[i - (n - x.size())];
    const Dim* dy = i < n - y.size() ? nullptr : &y[i - (n - y.size())];
    if (!dx) {
      out[i] = *dy;
      continue;
    }
    if (!dy) {
      out[i] = *dx;
      continue;
    }
    if (*dx == *dy) {
      out[i] = *dx;
      continue;
    }
    if (dx->is_const() && dx->value == 1) {
      out[i] = *dy;
      continue;
    }
    if (dy->is_const() && dy->value == 1) {
      out[i] = *dx;
      continue;
    }
    if (dx->is_const() && dy->is_const())
      return InvalidArgument(op + ": shapes " + ShapeStr(a) + " and " + ShapeStr(b) +
                             " do not broadcast (dimension " + std::to_string(i) + ": " +
                             std::to_string(dx->value) + " vs " + std::to_string(dy->value) + ")");
    known = false;
  }
  if (!known) return std::optional<std::vector<Dim>>();
  return std::optional<std::vector<Dim>>(std::move(out));
}

inline StatusOr<DataType> SameDType(const std::string& op, const TensorTypeNode* a,
                                    const TensorTypeNode* b) {
  DataType x = a->dtype(), y = b->dtype();
  if (x != DataType::kUnknown && y != DataType::kUnknown && x != y)
    return InvalidArgument(op + ": operand dtypes differ: " + std::string(DataTypeName(x)) +
                           " vs " + std::string(DataTypeName(y)));
  return x != DataType::kUnknown ? x : y;
}

inline TypeInferFn Elementwise(std::string op) {
  return [op](const Args& args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    PLIR_ASSIGN_OR_RETURN(auto b, TensorArg(op, args, 1));
    if (!a || !b) {
      DataType dt = a ? a->dtype() : b ? b->dtype() : DataType::kUnknown;
      return UnknownTensor(dt);
    }
    PLIR_ASSIGN_OR_RETURN(DataType dt, SameDType(op, a, b));
    // Same type on both sides (the common case): share the operand's node.
    if (a == b ||
        (a->dtype() == b->dtype() && a->has_shape() && b->has_shape() && a->shape() == b->shape()))
      return Type(a);
    if (a->has_shape() && b->has_shape()) {
      PLIR_ASSIGN_OR_RETURN(auto shape, Broadcast(op, a, b));
      if (shape && *shape == a->shape() && dt == a->dtype()) return Type(a);
      if (shape && *shape == b->shape() && dt == b->dtype()) return Type(b);
      if (shape) return TensorTypeNode::Make(std::move(*shape), dt);
      return TensorTypeNode::MakeRank(std::max(a->ndim(), b->ndim()), dt);
    }
    if (a->ndim() >= 0 && b->ndim() >= 0)
      return TensorTypeNode::MakeRank(std::max(a->ndim(), b->ndim()), dt);
    return UnknownTensor(dt);
  };
}

inline StatusOr<Type> InferUnarySame(const std::string& op, const Args& args) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
  if (!a) return UnknownTensor();
  return Type(a);
}

// Normalizes `axis` against `ndim`; fails if out of range.
inline StatusOr<int64_t> NormalizeAxis(const std::string& op, int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    return InvalidArgument(op + ": axis " + std::to_string(axis) + " out of range for rank " +
                           std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

inline StatusOr<DataType> DTypeAttr(const std::string& op, const Attrs& attrs, DataType def) {
  const AttrValue* v = attrs.Get("dtype");
  if (!v) {
    if (def == DataType::kUnknown) return InvalidArgument(op + " requires attribute dtype");
    return def;
  }
  std::optional<DataType> dt = ParseDataType(v->as_string());
  if (!dt) return InvalidArgument(op + ": unknown dtype \"" + v->as_string() + "\"");
  return *dt;
}

inline bool IsIntDType(DataType dt) {
  return dt != DataType::kUnknown && dt != DataType::kBool && !IsFloat(dt);
}

// Registers `def`; core names are distinct, so a failure is a programming error.
inline void Add(OpRegistry& r, OpDef def) {
  Status s = r.Register(std::move(def));
  (void)s;  // core names are distinct; a failure here is a programming error
}

inline OpDef Def(std::string name, std::string desc, int min_args, int max_args, TypeInferFn infer,
                 std::vector<AttrSpec> attrs = {}, bool pure = true,
                 OpPattern pattern = OpPattern::kOpaque) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(desc);
  d.min_args = min_args;
  d.max_args = max_args;
  d.infer = std::move(infer);
  d.attrs = std::move(attrs);
  d.pure = pure;
  d.pattern = pattern;
  return d;
}

// ---- Helpers shared by the families added for real models (issue 20) ----

// Attribute readers: the value, or `def` when absent.
inline int64_t IntAttr(const Attrs& attrs, const char* key, int64_t def) {
  const AttrValue* v = attrs.Get(key);
  return v && (v->kind() == AttrValue::Kind::kInt || v->kind() == AttrValue::Kind::kBool)
             ? v->as_int()
             : def;
}
inline bool BoolAttr(const Attrs& attrs, const char* key, bool def) {
  const AttrValue* v = attrs.Get(key);
  return v && (v->kind() == AttrValue::Kind::kInt || v->kind() == AttrValue::Kind::kBool)
             ? v->as_bool()
             : def;
}
inline double FloatAttr(const Attrs& attrs, const char* key, double def) {
  const AttrValue* v = attrs.Get(key);
  if (!v) return def;
  if (v->kind() == AttrValue::Kind::kInt) return static_cast<double>(v->as_int());
  return v->kind() == AttrValue::Kind::kFloat ? v->as_float() : def;
}
inline std::string StringAttr(const Attrs& attrs, const char* key, const std::string& def) {
  const AttrValue* v = attrs.Get(key);
  return v && v->kind() == AttrValue::Kind::kString ? v->as_string() : def;
}
// An int-list attribute; nullopt when absent.
inline std::optional<std::vector<int64_t>> IntListAttr(const Attrs& attrs, const char* key) {
  const AttrValue* v = attrs.Get(key);
  if (!v) return std::nullopt;
  std::vector<int64_t> l;
  v->GetIntList(&l);
  return l;
}

// A per-spatial-axis int-list attribute of a conv or pool op over `n` axes:
// 1 or n values (with `pad`: 1, n or 2n, all begins then all ends) as n (2n)
// values; absent: `def` for each.
inline StatusOr<std::vector<int64_t>> SpatialAttr(const std::string& op, const Attrs& attrs,
                                                  const char* key, int n, int64_t def, bool pad) {
  std::vector<int64_t> v = IntListAttr(attrs, key).value_or(std::vector<int64_t>{def});
  size_t want = pad ? 2 * n : n;
  if (v.size() == 1) return std::vector<int64_t>(want, v[0]);
  if (pad && static_cast<int>(v.size()) == n) {
    std::vector<int64_t> out(v);
    out.insert(out.end(), v.begin(), v.end());
    return out;
  }
  if (v.size() != want)
    return InvalidArgument(op + ": attribute '" + key + "' has " + std::to_string(v.size()) +
                           " values, expected " +
                           (pad ? "1, " + std::to_string(n) + " or " + std::to_string(2 * n)
                                : "1 or " + std::to_string(n)));
  return v;
}

// Which dtypes an op accepts.
enum class DTypeClass {
  kAny,      // every dtype
  kNumeric,  // integers and floats (not bool)
  kFloat,    // float16, bfloat16, float32, float64
  kIntBool,  // integers and bool (bitwise ops)
  kInt,      // integers only (shifts)
};

inline bool DTypeIn(DataType dt, DTypeClass c) {
  if (dt == DataType::kUnknown) return true;
  switch (c) {
    case DTypeClass::kAny:
      return true;
    case DTypeClass::kNumeric:
      return dt != DataType::kBool;
    case DTypeClass::kFloat:
      return IsFloat(dt);
    case DTypeClass::kIntBool:
      return !IsFloat(dt);
    case DTypeClass::kInt:
      return IsIntDType(dt);
  }
  return true;
}

inline const char* DTypeClassName(DTypeClass c) {
  switch (c) {
    case DTypeClass::kAny:
      return "any dtype";
    case DTypeClass::kNumeric:
      return "a numeric (integer or float) dtype";
    case DTypeClass::kFloat:
      return "a float dtype";
    case DTypeClass::kIntBool:
      return "an integer or bool dtype";
    case DTypeClass::kInt:
      return "an integer dtype";
  }
  return "";
}

inline Status CheckDType(const std::string& op, const TensorTypeNode* t, DTypeClass c) {
  if (t && !DTypeIn(t->dtype(), c))
    return InvalidArgument(op + " expects " + DTypeClassName(c) + ", got " + ShapeStr(t));
  return Status::Ok();
}

// The same shape as `t`, with dtype `dt`.
inline Type WithDType(const TensorTypeNode* t, DataType dt) {
  if (t->dtype() == dt) return Type(t);
  if (t->has_shape()) return TensorTypeNode::Make(t->shape(), dt);
  return TensorTypeNode::MakeRank(t->ndim(), dt);
}

// A unary elementwise op: the operand's type (its dtype checked against
// `c`), or its shape with `result` as dtype (isnan: bool).
inline TypeInferFn UnaryInfer(std::string op, DTypeClass c, DataType result = DataType::kUnknown) {
  return [op, c, result](const Args& args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    if (!a) return UnknownTensor(result);
    PLIR_RETURN_IF_ERROR(CheckDType(op, a, c));
    return result == DataType::kUnknown ? Type(a) : WithDType(a, result);
  };
}

// The broadcast of tensor types a and b's shapes (either may be null:
// unknown), with dtype dt.
inline StatusOr<Type> BroadcastTypes(const std::string& op, const TensorTypeNode* a,
                                     const TensorTypeNode* b, DataType dt) {
  if (!a || !b) return UnknownTensor(dt);
  if (a->has_shape() && b->has_shape()) {
    PLIR_ASSIGN_OR_RETURN(auto shape, Broadcast(op, a, b));
    if (shape) {
      if (*shape == a->shape() && a->dtype() == dt) return Type(a);
      if (*shape == b->shape() && b->dtype() == dt) return Type(b);
      return TensorTypeNode::Make(std::move(*shape), dt);
    }
    return TensorTypeNode::MakeRank(std::max(a->ndim(), b->ndim()), dt);
  }
  if (a->ndim() >= 0 && b->ndim() >= 0)
    return TensorTypeNode::MakeRank(std::max(a->ndim(), b->ndim()), dt);
  return UnknownTensor(dt);
}

// A binary op with NumPy broadcasting: operands of one dtype (checked
// against `c`); the result has that dtype, or `result` (comparisons: bool).
inline TypeInferFn BinaryInfer(std::string op, DTypeClass c, DataType result = DataType::kUnknown) {
  return [op, c, result](const Args& args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    PLIR_ASSIGN_OR_RETURN(auto b, TensorArg(op, args, 1));
    PLIR_RETURN_IF_ERROR(CheckDType(op, a, c));
    PLIR_RETURN_IF_ERROR(CheckDType(op, b, c));
    DataType dt = a ? a->dtype() : b ? b->dtype() : DataType::kUnknown;
    if (a && b) {
      PLIR_ASSIGN_OR_RETURN(dt, SameDType(op, a, b));
    }
    if (result != DataType::kUnknown) dt = result;
    return BroadcastTypes(op, a, b, dt);
  };
}

// Normalized, sorted, distinct axes of a reduction (`axis` absent: all).
inline StatusOr<std::vector<int64_t>> ReduceAxes(const std::string& op, const Attrs& attrs,
                                                 int ndim, const char* key = "axis") {
  std::vector<int64_t> axes;
  const AttrValue* v = attrs.Get(key);
  if (!v) {
    for (int i = 0; i < ndim; ++i) axes.push_back(i);
    return axes;
  }
  if (v->kind() == AttrValue::Kind::kInt)
    axes.push_back(v->as_int());
  else
    v->GetIntList(&axes);
  std::vector<bool> seen(ndim, false);
  for (int64_t& a : axes) {
    PLIR_ASSIGN_OR_RETURN(a, NormalizeAxis(op, a, ndim));
    if (seen[a]) return InvalidArgument(op + ": axis " + std::to_string(a) + " given twice");
    seen[a] = true;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// The type of a reduction of `a` over `axis` (keepdims: size-1 dims stay).
inline StatusOr<Type> ReduceType(const std::string& op, const TensorTypeNode* a, const Attrs& attrs,
                                 DataType dt, const char* key = "axis") {
  bool keep = BoolAttr(attrs, "keepdims", false);
  if (!a || a->ndim() < 0) return UnknownTensor(dt);
  PLIR_ASSIGN_OR_RETURN(auto axes, ReduceAxes(op, attrs, a->ndim(), key));
  int out_rank = keep ? a->ndim() : a->ndim() - static_cast<int>(axes.size());
  if (!a->has_shape()) return TensorTypeNode::MakeRank(out_rank, dt);
  std::vector<Dim> out;
  for (int i = 0; i < a->ndim(); ++i) {
    bool red = std::binary_search(axes.begin(), axes.end(), i);
    if (!red)
      out.push_back(a->shape()[i]);
    else if (keep)
      out.push_back(Dim::Const(1));
  }
  return TensorTypeNode::Make(std::move(out), dt);
}

// A description with the ONNX ops the PLIR op serves (docs/ops.md lists them).
inline std::string Onnx(const std::string& desc, const std::string& onnx) {
  return desc + " (ONNX: " + onnx + ")";
}

}  // namespace plir::internal

#endif  // PLIR_IR_OPS_INFER_UTIL_H_
