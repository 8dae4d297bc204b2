#include "ir/tensor.h"
#include "ir/checked_math.h"

#include <limits>

#include <atomic>

#include "ir/op.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>

namespace plir {
namespace {

double Load(DataType dt, const char* p) {
  switch (dt) {
    case DataType::kBool: return *p ? 1 : 0;
    case DataType::kInt8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case DataType::kInt16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DataType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DataType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DataType::kUInt8: { uint8_t v; std::memcpy(&v, p, 1); return v; }
    case DataType::kUInt16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DataType::kUInt32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DataType::kUInt64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DataType::kFloat16: { uint16_t v; std::memcpy(&v, p, 2); return HalfToFloat(v); }
    case DataType::kBFloat16: { uint16_t v; std::memcpy(&v, p, 2); return BFloat16ToFloat(v); }
    case DataType::kFloat32: { float v; std::memcpy(&v, p, 4); return v; }
    case DataType::kFloat64: { double v; std::memcpy(&v, p, 8); return v; }
    default: return 0;
  }
}

void Store(DataType dt, double v, char* p) {
  auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  if (!IsFloat(dt) && dt != DataType::kBool) v = std::trunc(v);
  switch (dt) {
    case DataType::kBool: *p = v != 0; break;
    case DataType::kInt8: put(static_cast<int8_t>(v)); break;
    case DataType::kInt16: put(static_cast<int16_t>(v)); break;
    case DataType::kInt32: put(static_cast<int32_t>(v)); break;
    case DataType::kInt64: put(static_cast<int64_t>(v)); break;
    case DataType::kUInt8: put(static_cast<uint8_t>(v)); break;
    case DataType::kUInt16: put(static_cast<uint16_t>(v)); break;
    case DataType::kUInt32: put(static_cast<uint32_t>(v)); break;
    case DataType::kUInt64: put(static_cast<uint64_t>(v)); break;
    case DataType::kFloat16: put(FloatToHalf(static_cast<float>(v))); break;
    case DataType::kBFloat16: put(FloatToBFloat16(static_cast<float>(v))); break;
    case DataType::kFloat32: put(static_cast<float>(v)); break;
    case DataType::kFloat64: put(v); break;
    default: break;
  }
}

// Saturates: a shape whose element count does not fit is larger than any
// cap, so CheckTensorSize refuses it before anything is allocated.
int64_t Product(const std::vector<int64_t>& s) {
  auto n = CheckedProduct(s);
  return n ? *n : std::numeric_limits<int64_t>::max();
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

StatusOr<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
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
int64_t BroadcastIndex(int64_t flat, const std::vector<int64_t>& out, const std::vector<int64_t>& shape,
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

bool IsInteger(DataType dt) { return !IsFloat(dt) && dt != DataType::kBool; }

i128 LoadInt(DataType dt, const char* p) {
  switch (dt) {
    case DataType::kInt8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case DataType::kInt16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DataType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DataType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case DataType::kUInt8: { uint8_t v; std::memcpy(&v, p, 1); return v; }
    case DataType::kUInt16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DataType::kUInt32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DataType::kUInt64: { uint64_t v; std::memcpy(&v, p, 8); return v; }
    case DataType::kBool: return *p ? 1 : 0;
    default: return 0;
  }
}

// The value range of an integer dtype.
void IntRange(DataType dt, i128* lo, i128* hi) {
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
void StoreInt(DataType dt, i128 v, char* p) {
  uint64_t bits = static_cast<uint64_t>(v);  // two's complement, low bytes first
  std::memcpy(p, &bits, DataTypeSize(dt));
}

std::string Int128ToString(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) { s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10))); u /= 10; }
  return neg ? "-" + s : s;
}

// A tensor of integer dtype `dt` whose element i is `f(i, &value)`; f
// returns false on an arithmetic overflow. Fails naming `op` if a value
// overflows or does not fit the dtype.
template <typename F>
StatusOr<Tensor> IntTensor(const std::string& op, DataType dt, std::vector<int64_t> shape, F f) {
  Tensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  int64_t n = t.NumElements();
  int size = DataTypeSize(dt);
  i128 lo, hi;
  IntRange(dt, &lo, &hi);
  std::shared_ptr<std::string> data = AllocateTensorBuffer(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; ++i) {
    i128 v = 0;
    if (!f(i, &v))
      return InvalidArgument(op + ": " + std::string(DataTypeName(dt)) + " overflow at element " + std::to_string(i));
    if (v < lo || v > hi)
      return InvalidArgument(op + ": " + std::string(DataTypeName(dt)) + " overflow at element " + std::to_string(i) +
                             " (result " + Int128ToString(v) + ")");
    StoreInt(dt, v, data->data() + i * size);
  }
  t.data = std::move(data);
  return t;
}

thread_local const TensorAllocator* current_allocator = nullptr;

}  // namespace

const TensorAllocator* SetThreadTensorAllocator(const TensorAllocator* alloc) {
  const TensorAllocator* prev = current_allocator;
  current_allocator = alloc;
  return prev;
}

namespace {
std::atomic<int64_t> g_max_tensor_bytes{int64_t{16} << 30};
}  // namespace

int64_t MaxTensorBytes() { return g_max_tensor_bytes.load(); }
void SetMaxTensorBytes(int64_t bytes) { g_max_tensor_bytes.store(bytes); }

Status CheckTensorSize(const Type& type, const std::string& what) {
  std::vector<const TypeNode*> work{type.get()};
  while (!work.empty()) {
    const TypeNode* t = work.back();
    work.pop_back();
    if (!t) continue;
    if (auto* tup = As<TupleTypeNode>(t)) {
      for (const Type& f : tup->fields()) work.push_back(f.get());
      continue;
    }
    auto* tt = As<TensorTypeNode>(t);
    if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown) continue;
    std::vector<int64_t> dims;
    for (const Dim& d : tt->shape()) dims.push_back(d.value);
    PLIR_ASSIGN_OR_RETURN(int64_t n, ElementCount(dims, what + " (" + TypeToString(Type(tt)) + ")"));
    auto bytes = CheckedBytes(n, DataTypeSize(tt->dtype()), MaxTensorBytes(),
                              what + " (" + TypeToString(Type(tt)) + ")");
    if (!bytes.ok()) return bytes.status();
  }
  return Status::Ok();
}

std::shared_ptr<std::string> AllocateTensorBuffer(size_t bytes) {
  if (current_allocator) return (*current_allocator)(bytes);
  return std::make_shared<std::string>(bytes, '\0');
}

int64_t Tensor::NumElements() const { return Product(shape); }
double Tensor::GetDouble(int64_t i) const { return Load(dtype, data->data() + i * DataTypeSize(dtype)); }
int64_t Tensor::GetInt(int64_t i) const {
  if (IsFloat(dtype)) return static_cast<int64_t>(GetDouble(i));
  return static_cast<int64_t>(LoadInt(dtype, data->data() + i * DataTypeSize(dtype)));
}

Tensor Tensor::FromConstant(const ConstantNode& c) {
  Tensor t;
  t.dtype = c.tensor_type().dtype();
  for (const Dim& d : c.tensor_type().shape()) t.shape.push_back(d.value);
  t.data = c.data_ptr();
  return t;
}

StatusOr<Ref<ConstantNode>> Tensor::ToConstant() const {
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::Const(d));
  return ConstantNode::Make(TensorTypeNode::Make(std::move(dims), dtype), data);
}

Tensor MakeTensor(DataType dtype, std::vector<int64_t> shape, const std::function<double(int64_t)>& f) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = t.NumElements();
  int size = DataTypeSize(dtype);
  std::shared_ptr<std::string> data = AllocateTensorBuffer(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; ++i) Store(dtype, f(i), data->data() + i * size);
  t.data = std::move(data);
  return t;
}

StatusOr<Tensor> MakeIntTensor(DataType dtype, std::vector<int64_t> shape,
                               const std::function<int64_t(int64_t)>& f) {
  if (IsFloat(dtype)) return InvalidArgument("MakeIntTensor: " + std::string(DataTypeName(dtype)) + " is not an integer dtype");
  return IntTensor("MakeIntTensor", dtype, std::move(shape), [&](int64_t i, i128* v) {
    *v = f(i);
    return true;
  });
}


namespace {

std::vector<int64_t> IntList(const Attrs& attrs, const char* key, std::vector<int64_t> dflt) {
  const AttrValue* v = attrs.Get(key);
  if (!v) return dflt;
  std::vector<int64_t> l;
  v->GetIntList(&l);
  return l;
}

Status CheckArgs(const std::string& op, const std::vector<Tensor>& args, size_t n) {
  if (args.size() != n)
    return InvalidArgument(op + " takes " + std::to_string(n) + " tensor(s), got " + std::to_string(args.size()));
  for (const Tensor& t : args)
    if (!t.data || t.NumBytes() != static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype))
      return InvalidArgument(op + ": a tensor's data does not match its shape and dtype");
  return Status::Ok();
}

enum class BinOp { kAdd, kSub, kMul, kDiv };

OpEvalFn BinaryKernel(std::string op, BinOp kind) {
  return [op, kind](const std::vector<Tensor>& args, const Attrs&) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 2));
    const Tensor& a = args[0];
    const Tensor& b = args[1];
    if (a.dtype != b.dtype) return InvalidArgument(op + ": dtypes differ");
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShape(a.shape, b.shape));
    auto sa = Strides(a.shape), sb = Strides(b.shape);
    if (IsInteger(a.dtype)) {
      int size = DataTypeSize(a.dtype);
      const char* pa = a.data->data();
      const char* pb = b.data->data();
      for (int64_t i = 0; kind == BinOp::kDiv && i < b.NumElements(); ++i)
        if (LoadInt(b.dtype, pb + i * size) == 0) return InvalidArgument(op + ": integer division by zero");
      return IntTensor(op, a.dtype, shape, [&](int64_t i, i128* r) {
        i128 x = LoadInt(a.dtype, pa + BroadcastIndex(i, shape, a.shape, sa) * size);
        i128 y = LoadInt(b.dtype, pb + BroadcastIndex(i, shape, b.shape, sb) * size);
        switch (kind) {
          case BinOp::kAdd: return !__builtin_add_overflow(x, y, r);
          case BinOp::kSub: return !__builtin_sub_overflow(x, y, r);
          case BinOp::kMul: return !__builtin_mul_overflow(x, y, r);
          case BinOp::kDiv: *r = x / y; return true;  // truncates toward zero
        }
        return false;
      });
    }
    bool is_bool = a.dtype == DataType::kBool;
    return MakeTensor(a.dtype, shape, [&](int64_t i) {
      double x = a.GetDouble(BroadcastIndex(i, shape, a.shape, sa));
      double y = b.GetDouble(BroadcastIndex(i, shape, b.shape, sb));
      switch (kind) {
        case BinOp::kAdd: return x + y;
        case BinOp::kSub: return x - y;
        case BinOp::kMul: return x * y;
        case BinOp::kDiv: return is_bool ? (y == 0 ? 0.0 : x / y) : x / y;
      }
      return 0.0;
    });
  };
}

StatusOr<Tensor> Relu(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.relu", args, 1));
  const Tensor& a = args[0];
  if (IsInteger(a.dtype)) {
    int size = DataTypeSize(a.dtype);
    return IntTensor("nn.relu", a.dtype, a.shape, [&](int64_t i, i128* r) {
      i128 x = LoadInt(a.dtype, a.data->data() + i * size);
      *r = x > 0 ? x : 0;
      return true;
    });
  }
  return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return std::max(a.GetDouble(i), 0.0); });
}

StatusOr<Tensor> Softmax(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.softmax", args, 1));
  const Tensor& a = args[0];
  if (!IsFloat(a.dtype)) return InvalidArgument("nn.softmax needs a float tensor");
  int64_t nd = static_cast<int64_t>(a.shape.size());
  int64_t axis = attrs.Get("axis") ? attrs.Get("axis")->as_int() : -1;
  if (axis < 0) axis += nd;
  if (axis < 0 || axis >= nd) return InvalidArgument("nn.softmax: axis out of range");
  int64_t len = a.shape[axis];
  int64_t inner = 1;
  for (int64_t i = axis + 1; i < nd; ++i) inner *= a.shape[i];
  std::vector<double> out(a.NumElements());
  for (int64_t base = 0; base < a.NumElements(); ++base) {
    if ((base / inner) % len != 0) continue;  // first element of its row
    double mx = -INFINITY;
    for (int64_t k = 0; k < len; ++k) mx = std::max(mx, a.GetDouble(base + k * inner));
    double sum = 0;
    for (int64_t k = 0; k < len; ++k) sum += std::exp(a.GetDouble(base + k * inner) - mx);
    for (int64_t k = 0; k < len; ++k) out[base + k * inner] = std::exp(a.GetDouble(base + k * inner) - mx) / sum;
  }
  return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return out[i]; });
}

// A shape value passed to a kernel: a 1-D integer tensor (ops/interpreter
// convention for `Shape` operands and results).
StatusOr<std::vector<int64_t>> ShapeOperand(const std::string& op, const Tensor& t) {
  if (t.shape.size() != 1 || !IsInteger(t.dtype))
    return InvalidArgument(op + ": a shape value must be a 1-D integer tensor");
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.shape[0]; ++i) v.push_back(t.GetInt(i));
  return v;
}

Tensor ShapeResult(const std::vector<int64_t>& v) {
  return MakeTensor(DataType::kInt64, {static_cast<int64_t>(v.size())},
                    [&](int64_t i) { return static_cast<double>(v[i]); });
}

StatusOr<Tensor> Reshape(const std::vector<Tensor>& args, const Attrs& attrs) {
  if (args.size() == 2) {  // reshape(x, shape value)
    PLIR_RETURN_IF_ERROR(CheckArgs("reshape", args, 2));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOperand("reshape", args[1]));
    for (int64_t d : shape)
      if (d < 0) return InvalidArgument("reshape: negative dimension");
    if (Product(shape) != args[0].NumElements()) return InvalidArgument("reshape: element count differs");
    Tensor t = args[0];
    t.shape = shape;
    return t;
  }
  PLIR_RETURN_IF_ERROR(CheckArgs("reshape", args, 1));
  const Tensor& a = args[0];
  std::vector<int64_t> shape = IntList(attrs, "shape", {});
  int64_t known = 1, minus = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) minus = static_cast<int64_t>(i);
    else if (shape[i] < 0) return InvalidArgument("reshape: negative dimension");
    else known *= shape[i];
  }
  if (minus >= 0) shape[minus] = known ? a.NumElements() / known : 0;
  if (Product(shape) != a.NumElements()) return InvalidArgument("reshape: element count differs");
  Tensor t = a;  // shares the buffer
  t.shape = shape;
  return t;
}

StatusOr<Tensor> ShapeOf(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("shape_of", args, 1));
  return ShapeResult(args[0].shape);
}

// tensor_to_shape and shape_to_tensor: the same 1-D int64 values.
OpEvalFn ShapeIdentity(std::string op) {
  return [op](const std::vector<Tensor>& args, const Attrs&) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> v, ShapeOperand(op, args[0]));
    return ShapeResult(v);
  };
}

// Copies `n` elements of `size` bytes between row-major blocks: the output
// is outer x (parts along the axis) x inner.
Tensor NewTensor(DataType dt, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  t.data = AllocateTensorBuffer(static_cast<size_t>(t.NumElements()) * DataTypeSize(dt));
  return t;
}

StatusOr<int64_t> KernelAxis(const std::string& op, int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return InvalidArgument(op + ": axis " + std::to_string(axis) + " out of range");
  return axis < 0 ? axis + r : axis;
}

// take(x, indices, axis=a): NumPy take (indices must be in range; negative
// ones count from the end). Without axis, x is flattened.
StatusOr<Tensor> Take(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("take", args, 2));
  Tensor x = args[0];
  const Tensor& idx = args[1];
  if (!IsInteger(idx.dtype)) return InvalidArgument("take: indices must be integers");
  int64_t axis = 0;
  if (const AttrValue* a = attrs.Get("axis")) {
    if (x.shape.empty()) return InvalidArgument("take: axis on a 0-d tensor");
    PLIR_ASSIGN_OR_RETURN(axis, KernelAxis("take", a->as_int(), x.shape.size()));
  } else {
    x.shape = {x.NumElements()};
  }
  int64_t outer = 1, inner = 1, len = x.shape[axis];
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
  for (size_t i = axis + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  Tensor t = NewTensor(x.dtype, shape);
  size_t size = DataTypeSize(x.dtype);
  int64_t k = idx.NumElements();
  char* dst = const_cast<char*>(t.data->data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = idx.GetInt(j);
      if (i < 0) i += len;
      if (i < 0 || i >= len) return InvalidArgument("take: index " + std::to_string(idx.GetInt(j)) + " out of range");
      std::memcpy(dst + ((o * k + j) * inner) * size, x.data->data() + ((o * len + i) * inner) * size,
                  static_cast<size_t>(inner) * size);
    }
  return t;
}

// expand_dims(x, axis=[...]): inserts size-1 dimensions at the given
// positions of the result.
StatusOr<Tensor> ExpandDims(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("expand_dims", args, 1));
  std::vector<int64_t> axes = IntList(attrs, "axis", {});
  size_t rank = args[0].shape.size() + axes.size();
  std::vector<bool> unit(rank, false);
  for (int64_t a : axes) {
    PLIR_ASSIGN_OR_RETURN(int64_t x, KernelAxis("expand_dims", a, rank));
    if (unit[x]) return InvalidArgument("expand_dims: repeated axis");
    unit[x] = true;
  }
  std::vector<int64_t> shape;
  size_t j = 0;
  for (size_t i = 0; i < rank; ++i) shape.push_back(unit[i] ? 1 : args[0].shape[j++]);
  Tensor t = args[0];  // shares the buffer
  t.shape = shape;
  return t;
}

// concat(t1, t2, ..., axis=a): the tensors of the tuple argument (passed
// flattened) joined along `axis`.
StatusOr<Tensor> Concat(const std::vector<Tensor>& args, const Attrs& attrs) {
  if (args.empty()) return InvalidArgument("concat: no tensors");
  PLIR_RETURN_IF_ERROR(CheckArgs("concat", args, args.size()));
  const Tensor& first = args[0];
  if (first.shape.empty()) return InvalidArgument("concat: 0-d tensors");
  int64_t a = attrs.Get("axis") ? attrs.Get("axis")->as_int() : 0;
  PLIR_ASSIGN_OR_RETURN(int64_t axis, KernelAxis("concat", a, first.shape.size()));
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (const Tensor& t : args) {
    if (t.dtype != first.dtype || t.shape.size() != first.shape.size())
      return InvalidArgument("concat: tensors differ in dtype or rank");
    for (size_t i = 0; i < shape.size(); ++i)
      if (static_cast<int64_t>(i) != axis && t.shape[i] != first.shape[i])
        return InvalidArgument("concat: shapes differ outside the axis");
    shape[axis] += t.shape[axis];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  Tensor out = NewTensor(first.dtype, shape);
  size_t size = DataTypeSize(first.dtype);
  char* dst = const_cast<char*>(out.data->data());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor& t : args) {
      size_t n = static_cast<size_t>(t.shape[axis] * inner) * size;
      std::memcpy(dst, t.data->data() + o * n, n);
      dst += n;
    }
  return out;
}

// strided_slice(x, axes, begin, end[, strides]): the index tuples arrive as
// 1-D integer tensors. NumPy slicing semantics (negative indices count from
// the end, clamped to the range).
StatusOr<Tensor> StridedSlice(const std::vector<Tensor>& args, const Attrs&) {
  if (args.size() != 4 && args.size() != 5) return InvalidArgument("strided_slice takes 4 or 5 tensors");
  PLIR_RETURN_IF_ERROR(CheckArgs("strided_slice", args, args.size()));
  const Tensor& x = args[0];
  std::vector<std::vector<int64_t>> v;
  for (size_t i = 1; i < args.size(); ++i) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> t, ShapeOperand("strided_slice", args[i]));
    v.push_back(std::move(t));
  }
  size_t n = v[0].size();
  for (const auto& t : v)
    if (t.size() != n) return InvalidArgument("strided_slice: axes, begin, end (and strides) differ in length");
  size_t nd = x.shape.size();
  std::vector<int64_t> start(nd, 0), step(nd, 1), shape = x.shape;
  for (size_t i = 0; i < n; ++i) {
    PLIR_ASSIGN_OR_RETURN(int64_t ax, KernelAxis("strided_slice", v[0][i], nd));
    int64_t len = x.shape[ax], st = v.size() == 4 ? v[3][i] : 1;
    if (st == 0) return InvalidArgument("strided_slice: stride 0");
    auto clamp = [&](int64_t k) {
      if (k < 0) k += len;
      return st > 0 ? std::clamp<int64_t>(k, 0, len) : std::clamp<int64_t>(k, -1, len - 1);
    };
    int64_t lo = clamp(v[1][i]), hi = clamp(v[2][i]);
    start[ax] = lo;
    step[ax] = st;
    shape[ax] = st > 0 ? (hi > lo ? (hi - lo + st - 1) / st : 0) : (lo > hi ? (lo - hi - st - 1) / -st : 0);
  }
  Tensor out = NewTensor(x.dtype, shape);
  size_t size = DataTypeSize(x.dtype);
  auto in_strides = Strides(x.shape);
  int64_t total = out.NumElements();
  std::vector<int64_t> idx(nd, 0);
  char* dst = const_cast<char*>(out.data->data());
  for (int64_t e = 0; e < total; ++e) {
    int64_t off = 0;
    for (size_t k = 0; k < nd; ++k) off += (start[k] + idx[k] * step[k]) * in_strides[k];
    std::memcpy(dst + e * size, x.data->data() + off * size, size);
    for (size_t k = nd; k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// Copies elements as bytes: exact for every dtype.
StatusOr<Tensor> PermuteDims(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("permute_dims", args, 1));
  const Tensor& a = args[0];
  size_t nd = a.shape.size();
  std::vector<int64_t> axes = IntList(attrs, "axes", {});
  if (axes.empty())
    for (size_t i = nd; i-- > 0;) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != nd) return InvalidArgument("permute_dims: axes do not match the rank");
  std::vector<bool> seen(nd);
  for (int64_t& x : axes) {
    if (x < 0) x += static_cast<int64_t>(nd);
    if (x < 0 || x >= static_cast<int64_t>(nd) || seen[x]) return InvalidArgument("permute_dims: bad axes");
    seen[x] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t x : axes) shape.push_back(a.shape[x]);
  auto in_strides = Strides(a.shape);
  std::vector<int64_t> step(nd);  // input stride of each output dimension
  for (size_t i = 0; i < nd; ++i) step[i] = in_strides[axes[i]];
  Tensor t;
  t.dtype = a.dtype;
  t.shape = shape;
  int64_t n = t.NumElements();
  size_t size = DataTypeSize(a.dtype);
  std::shared_ptr<std::string> data = AllocateTensorBuffer(static_cast<size_t>(n) * size);
  const char* src = a.data->data();
  char* dst = data->data();
  std::vector<int64_t> idx(nd, 0);
  int64_t off = 0;  // input element of output element i
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * size, src + off * size, size);
    for (size_t d = nd; d-- > 0;) {  // odometer over the output's index
      off += step[d];
      if (++idx[d] < shape[d]) break;
      off -= step[d] * shape[d];
      idx[d] = 0;
    }
  }
  t.data = std::move(data);
  return t;
}

StatusOr<Tensor> Matmul(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("matmul", args, 2));
  Tensor a = args[0], b = args[1];
  if (a.dtype != b.dtype) return InvalidArgument("matmul: dtypes differ");
  if (a.shape.empty() || b.shape.empty()) return InvalidArgument("matmul: scalar operand");
  bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  if (a_vec) a.shape.insert(a.shape.begin(), 1);
  if (b_vec) b.shape.push_back(1);
  int64_t n = a.shape[a.shape.size() - 2], k = a.shape.back(), m = b.shape.back();
  if (b.shape[b.shape.size() - 2] != k) return InvalidArgument("matmul: contraction mismatch");
  std::vector<int64_t> ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastShape(ba, bb));
  auto sa = Strides(ba), sb = Strides(bb);
  std::vector<int64_t> shape = batch;
  shape.push_back(n);
  shape.push_back(m);
  auto offsets = [&](int64_t flat, int64_t* i, int64_t* j, int64_t* oa, int64_t* ob) {
    *j = flat % m;
    *i = (flat / m) % n;
    int64_t bi = flat / (m * n);
    *oa = BroadcastIndex(bi, batch, ba, sa) * n * k;
    *ob = BroadcastIndex(bi, batch, bb, sb) * k * m;
  };
  Tensor r;
  if (IsInteger(a.dtype)) {
    int size = DataTypeSize(a.dtype);
    StatusOr<Tensor> made = IntTensor("matmul", a.dtype, shape, [&](int64_t flat, i128* s) {
      int64_t i, j, oa, ob;
      offsets(flat, &i, &j, &oa, &ob);
      *s = 0;
      for (int64_t t = 0; t < k; ++t) {
        i128 p;
        if (__builtin_mul_overflow(LoadInt(a.dtype, a.data->data() + (oa + i * k + t) * size),
                                   LoadInt(b.dtype, b.data->data() + (ob + t * m + j) * size), &p) ||
            __builtin_add_overflow(*s, p, s))
          return false;
      }
      return true;
    });
    if (!made.ok()) return made.status();
    r = std::move(made).value();
  } else {
    r = MakeTensor(a.dtype, shape, [&](int64_t flat) {
      int64_t i, j, oa, ob;
      offsets(flat, &i, &j, &oa, &ob);
      double s = 0;
      for (int64_t t = 0; t < k; ++t) s += a.GetDouble(oa + i * k + t) * b.GetDouble(ob + t * m + j);
      return s;
    });
  }
  if (a_vec) r.shape.erase(r.shape.end() - 2);
  if (b_vec) r.shape.pop_back();
  return r;
}

StatusOr<Tensor> Conv2d(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.conv2d", args, 2));
  const Tensor& d = args[0];
  const Tensor& w = args[1];
  if (d.dtype != w.dtype) return InvalidArgument("nn.conv2d: dtypes differ");
  if (d.shape.size() != 4 || w.shape.size() != 4) return InvalidArgument("nn.conv2d: 4-D tensors needed");
  auto expand = [](std::vector<int64_t> v, size_t n) {
    if (v.size() == 1) v.assign(n, v[0]);
    if (n == 4 && v.size() == 2) v = {v[0], v[1], v[0], v[1]};
    return v;
  };
  std::vector<int64_t> st = expand(IntList(attrs, "strides", {1, 1}), 2);
  std::vector<int64_t> pad = expand(IntList(attrs, "padding", {0, 0, 0, 0}), 4);
  std::vector<int64_t> dil = expand(IntList(attrs, "dilation", {1, 1}), 2);
  if (st.size() != 2 || pad.size() != 4 || dil.size() != 2 || st[0] <= 0 || st[1] <= 0)
    return InvalidArgument("nn.conv2d: bad strides, padding or dilation");
  int64_t groups = attrs.Get("groups") ? attrs.Get("groups")->as_int() : 1;
  int64_t N = d.shape[0], C = d.shape[1], H = d.shape[2], W = d.shape[3];
  int64_t O = w.shape[0], I = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  if (groups <= 0 || O % groups != 0 || C != I * groups) return InvalidArgument("nn.conv2d: channel mismatch");
  int64_t OH = (H + pad[0] + pad[2] - dil[0] * (KH - 1) - 1) / st[0] + 1;
  int64_t OW = (W + pad[1] + pad[3] - dil[1] * (KW - 1) - 1) / st[1] + 1;
  if (OH < 0 || OW < 0) return InvalidArgument("nn.conv2d: window larger than the padded input");
  int64_t opg = O / groups;
  // Calls visit(data index, weight index) for each tap of output `flat`.
  auto taps = [&](int64_t flat, auto&& visit) {
    int64_t ow = flat % OW, oh = (flat / OW) % OH, o = (flat / (OW * OH)) % O, n = flat / (OW * OH * O);
    int64_t g = o / opg;
    for (int64_t ic = 0; ic < I; ++ic)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          int64_t ih = oh * st[0] - pad[0] + kh * dil[0];
          int64_t iw = ow * st[1] - pad[1] + kw * dil[1];
          if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
          int64_t c = g * I + ic;
          if (!visit(((n * C + c) * H + ih) * W + iw, ((o * I + ic) * KH + kh) * KW + kw)) return false;
        }
    return true;
  };
  if (IsInteger(d.dtype)) {
    int size = DataTypeSize(d.dtype);
    return IntTensor("nn.conv2d", d.dtype, {N, O, OH, OW}, [&](int64_t flat, i128* s) {
      *s = 0;
      return taps(flat, [&](int64_t di, int64_t wi) {
        i128 p;
        return !__builtin_mul_overflow(LoadInt(d.dtype, d.data->data() + di * size),
                                       LoadInt(w.dtype, w.data->data() + wi * size), &p) &&
               !__builtin_add_overflow(*s, p, s);
      });
    });
  }
  return MakeTensor(d.dtype, {N, O, OH, OW}, [&](int64_t flat) {
    double s = 0;
    taps(flat, [&](int64_t di, int64_t wi) {
      s += d.GetDouble(di) * w.GetDouble(wi);
      return true;
    });
    return s;
  });
}

// nn.conv2d in other layouts: transpose to NCHW / OIHW, convolve, transpose
// back.
StatusOr<Tensor> Conv2dAnyLayout(const std::vector<Tensor>& args, const Attrs& attrs) {
  if (!attrs.Get("data_layout") && !attrs.Get("kernel_layout") && !attrs.Get("out_layout"))
    return Conv2d(args, attrs);
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.conv2d", args, 2));
  auto layout = [&](const char* key, const std::string& def) {
    const AttrValue* v = attrs.Get(key);
    return v ? v->as_string() : def;
  };
  std::string dl = layout("data_layout", "NCHW"), kl = layout("kernel_layout", "OIHW");
  std::string ol = layout("out_layout", dl);
  auto axes = [](const std::string& l) -> std::vector<int64_t> {
    if (l == "NCHW" || l == "OIHW") return {0, 1, 2, 3};
    if (l == "NHWC" || l == "OHWI") return {0, 3, 1, 2};
    if (l == "HWIO") return {3, 2, 0, 1};
    return {};
  };
  auto da = axes(dl), ka = axes(kl), oa = axes(ol);
  if (da.empty() || ka.empty() || oa.empty() || ol == "OIHW" || ol == "OHWI" || ol == "HWIO")
    return InvalidArgument("nn.conv2d: unsupported layouts " + dl + "/" + kl + "/" + ol);
  if (args[0].shape.size() != 4 || args[1].shape.size() != 4)
    return InvalidArgument("nn.conv2d: 4-D tensors needed");
  auto permute = [&](const Tensor& t, const std::vector<int64_t>& a) -> StatusOr<Tensor> {
    std::vector<AttrValue> l;
    for (int64_t x : a) l.push_back(AttrValue::Int(x));
    PLIR_ASSIGN_OR_RETURN(Attrs pa, Attrs::Make({{Symbol("axes"), AttrValue::List(l)}}));
    return PermuteDims({t}, pa);
  };
  std::vector<Attrs::Entry> rest;
  for (const auto& e : attrs.entries())
    if (e.first.str() != "data_layout" && e.first.str() != "kernel_layout" && e.first.str() != "out_layout")
      rest.push_back(e);
  PLIR_ASSIGN_OR_RETURN(Tensor d, permute(args[0], da));
  PLIR_ASSIGN_OR_RETURN(Tensor w, permute(args[1], ka));
  PLIR_ASSIGN_OR_RETURN(Attrs plain, Attrs::Make(std::move(rest)));
  PLIR_ASSIGN_OR_RETURN(Tensor out, Conv2d({d, w}, plain));
  std::vector<int64_t> inverse(4);
  for (int64_t i = 0; i < 4; ++i) inverse[oa[i]] = i;
  return permute(out, inverse);
}

StatusOr<DataType> DtypeAttr(const std::string& op, const Attrs& attrs, DataType dflt) {
  const AttrValue* v = attrs.Get("dtype");
  if (!v) return dflt;
  std::optional<DataType> p = ParseDataType(v->as_string());
  if (!p) return InvalidArgument(op + ": unknown dtype " + v->as_string());
  return *p;
}

// zeros, ones, full.
OpEvalFn Creation(std::string op) {
  return [op](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    std::vector<int64_t> shape = IntList(attrs, "shape", {});
    for (int64_t d : shape)
      if (d < 0) return InvalidArgument(op + ": negative dimension");
    DataType dflt = op == "full" && !args.empty() ? args[0].dtype : DataType::kUnknown;
    PLIR_ASSIGN_OR_RETURN(DataType dt, DtypeAttr(op, attrs, dflt));
    if (dt == DataType::kUnknown) return InvalidArgument(op + ": dtype needed");
    if (op != "full") return MakeTensor(dt, shape, [&](int64_t) { return op == "ones" ? 1.0 : 0.0; });
    if (args.size() != 1 || !args[0].data || args[0].NumElements() != 1)
      return InvalidArgument("full: the fill value must be a scalar tensor");
    if (IsInteger(dt) && !IsFloat(args[0].dtype)) {  // exact
      i128 v = LoadInt(args[0].dtype, args[0].data->data());
      return IntTensor(op, dt, shape, [&](int64_t, i128* r) { *r = v; return true; });
    }
    double fill = args[0].GetDouble(0);
    return MakeTensor(dt, shape, [&](int64_t) { return fill; });
  };
}

StatusOr<Tensor> Astype(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("astype", args, 1));
  const Tensor& a = args[0];
  PLIR_ASSIGN_OR_RETURN(DataType dt, DtypeAttr("astype", attrs, DataType::kUnknown));
  if (dt == DataType::kUnknown) return InvalidArgument("astype: dtype needed");
  if (IsInteger(dt) && !IsFloat(a.dtype)) {  // integer to integer: exact, checked
    int size = DataTypeSize(a.dtype);
    return IntTensor("astype", dt, a.shape, [&](int64_t i, i128* r) {
      *r = LoadInt(a.dtype, a.data->data() + i * size);
      return true;
    });
  }
  return MakeTensor(dt, a.shape, [&](int64_t i) { return a.GetDouble(i); });
}

StatusOr<Tensor> Arange(const std::vector<Tensor>&, const Attrs& attrs) {
  auto num = [&](const char* k, double def) {
    const AttrValue* v = attrs.Get(k);
    if (!v) return def;
    return v->kind() == AttrValue::Kind::kInt ? static_cast<double>(v->as_int()) : v->as_float();
  };
  double start = num("start", 0), end = num("end", 0), step = num("step", 1);
  if (step == 0) return InvalidArgument("arange: step must not be 0");
  double count = std::ceil((end - start) / step);
  if (!(count < 9.0e15)) return InvalidArgument("arange: too many elements");
  int64_t n = static_cast<int64_t>(std::max(0.0, count));
  PLIR_ASSIGN_OR_RETURN(DataType dt, DtypeAttr("arange", attrs, DataType::kInt64));
  return MakeTensor(dt, {n}, [&](int64_t i) { return start + step * static_cast<double>(i); });
}

}  // namespace

StatusOr<Tensor> EvalOp(const std::string& op, const std::vector<Tensor>& args, const Attrs& attrs) {
  Op o = OpRegistry::Global().Lookup(op);
  if (!o) return NotFound("unknown op '" + op + "'");
  if (!o->def().eval) return Unimplemented("op " + op + " has no evaluation kernel");
  return o->def().eval(args, attrs);
}

int64_t EstimateWork(const std::string& op, const std::vector<Tensor>& args, int64_t out_elements) {
  Op o = OpRegistry::Global().Lookup(op);
  if (o && o->def().work) return o->def().work(args, out_elements);
  return out_elements;
}

namespace internal {

void RegisterCoreKernels(OpRegistry& r) {
  auto set = [&](const char* name, OpEvalFn eval, OpWorkFn work = nullptr) {
    Status s = r.SetKernel(name, std::move(eval), std::move(work));
    (void)s;  // every name is a core op
  };
  set("add", BinaryKernel("add", BinOp::kAdd));
  set("subtract", BinaryKernel("subtract", BinOp::kSub));
  set("multiply", BinaryKernel("multiply", BinOp::kMul));
  set("divide", BinaryKernel("divide", BinOp::kDiv));
  set("nn.relu", Relu);
  set("nn.softmax", Softmax);
  set("reshape", Reshape);
  set("permute_dims", PermuteDims);
  set("shape_of", ShapeOf);
  set("tensor_to_shape", ShapeIdentity("tensor_to_shape"));
  set("shape_to_tensor", ShapeIdentity("shape_to_tensor"));
  set("take", Take);
  set("expand_dims", ExpandDims);
  set("concat", Concat);
  set("strided_slice", StridedSlice);
  set("matmul", Matmul, [](const std::vector<Tensor>& args, int64_t out) {
    return args.size() == 2 && !args[0].shape.empty() ? out * args[0].shape.back() : out;
  });
  set("zeros", Creation("zeros"));
  set("ones", Creation("ones"));
  set("full", Creation("full"));
  set("astype", Astype);
  set("arange", Arange);
  set("nn.conv2d", Conv2dAnyLayout, [](const std::vector<Tensor>& args, int64_t out) {
    return args.size() == 2 && args[1].shape.size() == 4
               ? out * args[1].shape[1] * args[1].shape[2] * args[1].shape[3]
               : out;
  });
}

}  // namespace internal
}  // namespace plir
