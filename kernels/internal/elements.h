// Element access and shared checks of the reference kernels (internal to
// kernels/): loads and stores of any dtype, broadcasting, exact integer
// results, and the argument checks every kernel makes.
#ifndef PLIR_KERNELS_INTERNAL_ELEMENTS_H_
#define PLIR_KERNELS_INTERNAL_ELEMENTS_H_

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "ir/checked_math.h"
#include "ir/op.h"
#include "kernels/tensor.h"

namespace plir::internal {

// The value of type T stored at p (any alignment).
template <typename T>
inline T Read(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline double Load(DataType dt, const char* p) {
  switch (dt) {
    case DataType::kBool:
      return *p ? 1 : 0;
    case DataType::kInt8:
      return Read<int8_t>(p);
    case DataType::kInt16:
      return Read<int16_t>(p);
    case DataType::kInt32:
      return Read<int32_t>(p);
    case DataType::kInt64:
      return static_cast<double>(Read<int64_t>(p));
    case DataType::kUInt8:
      return Read<uint8_t>(p);
    case DataType::kUInt16:
      return Read<uint16_t>(p);
    case DataType::kUInt32:
      return Read<uint32_t>(p);
    case DataType::kUInt64:
      return static_cast<double>(Read<uint64_t>(p));
    case DataType::kFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return HalfToFloat(v);
    }
    case DataType::kBFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return BFloat16ToFloat(v);
    }
    case DataType::kFloat32:
      return Read<float>(p);
    case DataType::kFloat64:
      return Read<double>(p);
    default:
      return 0;
  }
}

inline void Store(DataType dt, double v, char* p) {
  auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  if (!IsFloat(dt) && dt != DataType::kBool) v = std::trunc(v);
  switch (dt) {
    case DataType::kBool:
      *p = v != 0;
      break;
    case DataType::kInt8:
      put(static_cast<int8_t>(v));
      break;
    case DataType::kInt16:
      put(static_cast<int16_t>(v));
      break;
    case DataType::kInt32:
      put(static_cast<int32_t>(v));
      break;
    case DataType::kInt64:
      put(static_cast<int64_t>(v));
      break;
    case DataType::kUInt8:
      put(static_cast<uint8_t>(v));
      break;
    case DataType::kUInt16:
      put(static_cast<uint16_t>(v));
      break;
    case DataType::kUInt32:
      put(static_cast<uint32_t>(v));
      break;
    case DataType::kUInt64:
      put(static_cast<uint64_t>(v));
      break;
    case DataType::kFloat16:
      put(FloatToHalf(static_cast<float>(v)));
      break;
    case DataType::kBFloat16:
      put(FloatToBFloat16(static_cast<float>(v)));
      break;
    case DataType::kFloat32:
      put(static_cast<float>(v));
      break;
    case DataType::kFloat64:
      put(v);
      break;
    default:
      break;
  }
}

// Saturates: a shape whose element count does not fit is larger than any
// cap, so CheckTensorSize refuses it before anything is allocated.
inline int64_t Product(const std::vector<int64_t>& s) {
  auto n = CheckedProduct(s);
  return n ? *n : std::numeric_limits<int64_t>::max();
}

inline std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

inline StatusOr<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return InvalidArgument("shapes do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// Maps an index of `out` to the flat index of a broadcast operand of `shape`.
inline int64_t BroadcastIndex(int64_t flat, const std::vector<int64_t>& out,
                              const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& strides) {
  int64_t idx = 0;
  size_t off = out.size() - shape.size();
  for (size_t i = out.size(); i-- > 0;) {
    int64_t coord = flat % out[i];
    flat /= out[i];
    if (i >= off && shape[i - off] != 1) idx += coord * strides[i - off];
  }
  return idx;
}

using i128 = __int128;

inline bool IsInteger(DataType dt) { return !IsFloat(dt) && dt != DataType::kBool; }

inline i128 LoadInt(DataType dt, const char* p) {
  switch (dt) {
    case DataType::kInt8:
      return Read<int8_t>(p);
    case DataType::kInt16:
      return Read<int16_t>(p);
    case DataType::kInt32:
      return Read<int32_t>(p);
    case DataType::kInt64:
      return Read<int64_t>(p);
    case DataType::kUInt8:
      return Read<uint8_t>(p);
    case DataType::kUInt16:
      return Read<uint16_t>(p);
    case DataType::kUInt32:
      return Read<uint32_t>(p);
    case DataType::kUInt64:
      return Read<uint64_t>(p);
    case DataType::kBool:
      return *p ? 1 : 0;
    default:
      return 0;
  }
}

// The value range of an integer dtype.
inline void IntRange(DataType dt, i128* lo, i128* hi) {
  int bits = DataTypeSize(dt) * 8;
  bool is_signed = dt == DataType::kInt8 || dt == DataType::kInt16 || dt == DataType::kInt32 ||
                   dt == DataType::kInt64;
  if (dt == DataType::kBool) {
    *lo = 0;
    *hi = 1;
  } else if (is_signed) {
    *hi = (static_cast<i128>(1) << (bits - 1)) - 1;
    *lo = -*hi - 1;
  } else {
    *lo = 0;
    *hi = (static_cast<i128>(1) << bits) - 1;
  }
}

// Stores `v` (which must be in range) as an integer of dtype `dt`.
inline void StoreInt(DataType dt, i128 v, char* p) {
  uint64_t bits = static_cast<uint64_t>(v);  // two's complement, low bytes first
  std::memcpy(p, &bits, DataTypeSize(dt));
}

inline std::string Int128ToString(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

// A tensor of integer dtype `dt` whose element i is `f(i, &value)`; f
// returns false on an arithmetic overflow. Fails naming `op` if a value
// overflows or does not fit the dtype.
template <typename F>
inline StatusOr<Tensor> IntTensor(const std::string& op, DataType dt, std::vector<int64_t> shape,
                                  F f) {
  Tensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  int64_t n = t.NumElements();
  int size = DataTypeSize(dt);
  i128 lo, hi;
  IntRange(dt, &lo, &hi);
  std::shared_ptr<WritableTensorBytes> data = AllocateTensorBuffer(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; ++i) {
    i128 v = 0;
    if (!f(i, &v))
      return InvalidArgument(op + ": " + std::string(DataTypeName(dt)) + " overflow at element " +
                             std::to_string(i));
    if (v < lo || v > hi)
      return InvalidArgument(op + ": " + std::string(DataTypeName(dt)) + " overflow at element " +
                             std::to_string(i) + " (result " + Int128ToString(v) + ")");
    StoreInt(dt, v, data->mutable_data() + i * size);
  }
  t.data = std::move(data);
  return t;
}

inline std::vector<int64_t> IntList(const Attrs& attrs, const char* key,
                                    std::vector<int64_t> dflt) {
  const AttrValue* v = attrs.Get(key);
  if (!v) return dflt;
  std::vector<int64_t> l;
  v->GetIntList(&l);
  return l;
}

// A per-spatial-axis attribute of a conv or pool op over `n` axes: one value
// for all, or `n` values; with `pad`, 2n values (begins, then ends), where
// one value or n values stand for both ends.
inline StatusOr<std::vector<int64_t>> SpatialAttr(const std::string& op, const Attrs& attrs,
                                                  const char* key, int n, int64_t def, bool pad) {
  std::vector<int64_t> v = IntList(attrs, key, {def});
  size_t want = pad ? 2 * n : n;
  if (v.size() == 1) return std::vector<int64_t>(want, v[0]);
  if (pad && static_cast<int>(v.size()) == n) {
    std::vector<int64_t> out(v);
    out.insert(out.end(), v.begin(), v.end());
    return out;
  }
  if (v.size() != want)
    return InvalidArgument(op + ": attribute '" + std::string(key) + "' has the wrong length");
  return v;
}

inline Status CheckArgs(const std::string& op, const std::vector<Tensor>& args, size_t n) {
  if (args.size() != n)
    return InvalidArgument(op + " takes " + std::to_string(n) + " tensor(s), got " +
                           std::to_string(args.size()));
  for (const Tensor& t : args)
    if (!t.data || t.NumBytes() != static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype))
      return InvalidArgument(op + ": a tensor's data does not match its shape and dtype");
  return Status::Ok();
}

// A shape value passed to a kernel: a 1-D integer tensor (ops/interpreter
// convention for `Shape` operands and results).
inline StatusOr<std::vector<int64_t>> ShapeOperand(const std::string& op, const Tensor& t) {
  if (t.shape.size() != 1 || !IsInteger(t.dtype))
    return InvalidArgument(op + ": a shape value must be a 1-D integer tensor");
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.shape[0]; ++i) v.push_back(t.GetInt(i));
  return v;
}

inline Tensor ShapeResult(const std::vector<int64_t>& v) {
  return MakeTensor(DataType::kInt64, {static_cast<int64_t>(v.size())},
                    [&](int64_t i) { return static_cast<double>(v[i]); });
}

inline Tensor NewTensor(DataType dt, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  t.data = AllocateTensorBuffer(static_cast<size_t>(t.NumElements()) * DataTypeSize(dt));
  return t;
}

// The same, not zeroed: for kernels that write every element of their output.
inline Tensor NewTensorForOverwrite(DataType dt, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  t.data =
      AllocateTensorBufferForOverwrite(static_cast<size_t>(t.NumElements()) * DataTypeSize(dt));
  return t;
}

// The output of an elementwise kernel that writes every element, each from
// the same element of `operand` only: the operand's own buffer when the
// caller donated it for this call (ScopedDonation, kernels/tensor.h) and
// its dtype and shape are the output's, else a new buffer.
Tensor OutputForOverwrite(const Tensor& operand, DataType dt, std::vector<int64_t> shape);

inline StatusOr<int64_t> KernelAxis(const std::string& op, int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    return InvalidArgument(op + ": axis " + std::to_string(axis) + " out of range");
  return axis < 0 ? axis + r : axis;
}

inline StatusOr<DataType> DtypeAttr(const std::string& op, const Attrs& attrs, DataType dflt) {
  const AttrValue* v = attrs.Get("dtype");
  if (!v) return dflt;
  std::optional<DataType> p = ParseDataType(v->as_string());
  if (!p) return InvalidArgument(op + ": unknown dtype " + v->as_string());
  return *p;
}

// ---- Helpers of the families added for real models (issue 20) ----

inline int64_t IntAttrOr(const Attrs& attrs, const char* key, int64_t def) {
  const AttrValue* v = attrs.Get(key);
  return v && (v->kind() == AttrValue::Kind::kInt || v->kind() == AttrValue::Kind::kBool)
             ? v->as_int()
             : def;
}
inline bool BoolAttrOr(const Attrs& attrs, const char* key, bool def) {
  const AttrValue* v = attrs.Get(key);
  return v && (v->kind() == AttrValue::Kind::kInt || v->kind() == AttrValue::Kind::kBool)
             ? v->as_bool()
             : def;
}
inline double FloatAttrOr(const Attrs& attrs, const char* key, double def) {
  const AttrValue* v = attrs.Get(key);
  if (!v) return def;
  if (v->kind() == AttrValue::Kind::kInt) return static_cast<double>(v->as_int());
  return v->kind() == AttrValue::Kind::kFloat ? v->as_float() : def;
}
inline std::string StringAttrOr(const Attrs& attrs, const char* key, const std::string& def) {
  const AttrValue* v = attrs.Get(key);
  return v && v->kind() == AttrValue::Kind::kString ? v->as_string() : def;
}

inline Status NeedFloat(const std::string& op, const Tensor& t) {
  if (!IsFloat(t.dtype))
    return InvalidArgument(op + " needs a float tensor, got " + std::string(DataTypeName(t.dtype)));
  return Status::Ok();
}

// Normalized, sorted, distinct axes (`v` absent: all of them).
inline StatusOr<std::vector<int64_t>> KernelAxes(const std::string& op, const AttrValue* v,
                                                 size_t rank) {
  std::vector<int64_t> axes;
  if (!v) {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
    return axes;
  }
  if (v->kind() == AttrValue::Kind::kInt)
    axes.push_back(v->as_int());
  else
    v->GetIntList(&axes);
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    PLIR_ASSIGN_OR_RETURN(a, KernelAxis(op, a, rank));
    if (seen[a]) return InvalidArgument(op + ": repeated axis");
    seen[a] = true;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// The element size in bytes and a pointer to element i.
inline const char* ElemPtr(const Tensor& t, int64_t i) {
  return t.data->data() + i * DataTypeSize(t.dtype);
}
// The bytes of a kernel's own output, made by NewTensor or
// NewTensorForOverwrite (owned, not yet shared): borrowed bytes are never
// written.
inline char* MutableData(Tensor& t) {
  if (t.data->borrowed()) std::abort();
  return const_cast<char*>(t.data->data());
}

// Reduction geometry: for a tensor of `shape` reduced over the (sorted)
// `axes`, each element's "outer" index (its position with the reduced axes
// dropped) and "inner" index (its position within the reduced axes).
struct ReduceGeometry {
  std::vector<int64_t> shape;
  std::vector<bool> reduced;
  int64_t outer = 1, inner = 1;
  ReduceGeometry(const std::vector<int64_t>& s, const std::vector<int64_t>& axes)
      : shape(s), reduced(s.size(), false) {
    for (int64_t a : axes) reduced[a] = true;
    for (size_t i = 0; i < s.size(); ++i) (reduced[i] ? inner : outer) *= s[i];
  }
  // Flat index of the element at (outer o, inner k).
  int64_t Flat(int64_t o, int64_t k) const {
    int64_t flat = 0, mul = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      int64_t c;
      if (reduced[i]) {
        c = k % shape[i];
        k /= shape[i];
      } else {
        c = o % shape[i];
        o /= shape[i];
      }
      flat += c * mul;
      mul *= shape[i];
    }
    return flat;
  }
};

// Fails (ResourceExhausted) if a result of `shape` and `dt` would be larger
// than MaxTensorBytes() or has a negative dimension: kernels whose result
// can be larger than their operands (broadcast_to, tile, pad, one_hot, a
// reduction over a 0-size axis) check before they allocate.
inline Status CheckResult(const std::string& op, DataType dt, const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0) return InvalidArgument(op + ": negative result dimension " + std::to_string(d));
  PLIR_ASSIGN_OR_RETURN(int64_t n, ElementCount(shape, op + " result"));
  auto b = CheckedBytes(n, std::max(1, DataTypeSize(dt)), MaxTensorBytes(), op + " result");
  if (!b.ok()) return b.status();
  return Status::Ok();
}

}  // namespace plir::internal

#endif  // PLIR_KERNELS_INTERNAL_ELEMENTS_H_
