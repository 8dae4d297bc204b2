// Reference kernels of data movement and shape values: reshape, permute_dims, take, expand_dims,
// concat, strided_slice, shape_of, shape/tensor conversions.
#include "kernels/internal/elements.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

StatusOr<Tensor> Reshape(const std::vector<Tensor>& args, const Attrs& attrs) {
  if (args.size() == 2) {  // reshape(x, shape value)
    PLIR_RETURN_IF_ERROR(CheckArgs("reshape", args, 2));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOperand("reshape", args[1]));
    for (int64_t d : shape)
      if (d < 0) return InvalidArgument("reshape: negative dimension");
    if (Product(shape) != args[0].NumElements())
      return InvalidArgument("reshape: element count differs");
    Tensor t = args[0];
    t.shape = shape;
    return t;
  }
  PLIR_RETURN_IF_ERROR(CheckArgs("reshape", args, 1));
  const Tensor& a = args[0];
  std::vector<int64_t> shape = IntList(attrs, "shape", {});
  int64_t known = 1, minus = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1)
      minus = static_cast<int64_t>(i);
    else if (shape[i] < 0)
      return InvalidArgument("reshape: negative dimension");
    else
      known *= shape[i];
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
  char* dst = MutableData(t);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = idx.GetInt(j);
      if (i < 0) i += len;
      if (i < 0 || i >= len)
        return InvalidArgument("take: index " + std::to_string(idx.GetInt(j)) + " out of range");
      std::memcpy(dst + ((o * k + j) * inner) * size,
                  x.data->data() + ((o * len + i) * inner) * size,
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
  Tensor out = NewTensorForOverwrite(first.dtype, shape);  // the parts fill it
  size_t size = DataTypeSize(first.dtype);
  char* dst = MutableData(out);
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
  if (args.size() != 4 && args.size() != 5)
    return InvalidArgument("strided_slice takes 4 or 5 tensors");
  PLIR_RETURN_IF_ERROR(CheckArgs("strided_slice", args, args.size()));
  const Tensor& x = args[0];
  std::vector<std::vector<int64_t>> v;
  for (size_t i = 1; i < args.size(); ++i) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> t, ShapeOperand("strided_slice", args[i]));
    v.push_back(std::move(t));
  }
  size_t n = v[0].size();
  for (const auto& t : v)
    if (t.size() != n)
      return InvalidArgument("strided_slice: axes, begin, end (and strides) differ in length");
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
    shape[ax] =
        st > 0 ? (hi > lo ? (hi - lo + st - 1) / st : 0) : (lo > hi ? (lo - hi - st - 1) / -st : 0);
  }
  Tensor out = NewTensorForOverwrite(x.dtype, shape);  // every element copied in
  size_t size = DataTypeSize(x.dtype);
  auto in_strides = Strides(x.shape);
  int64_t total = out.NumElements();
  std::vector<int64_t> idx(nd, 0);
  char* dst = MutableData(out);
  // With step 1 on the last axis, each output row is one contiguous run of
  // the input: one memcpy per row (an attention block's q/k/v slices),
  // not one per element.
  const int64_t row = nd > 0 && step[nd - 1] == 1 ? shape[nd - 1] : 1;
  const size_t outer_dims = row > 1 ? nd - 1 : nd;
  for (int64_t e = 0; e < total; e += row) {
    int64_t off = 0;
    for (size_t k = 0; k < nd; ++k) off += (start[k] + idx[k] * step[k]) * in_strides[k];
    std::memcpy(dst + e * size, x.data->data() + off * size, row * size);
    for (size_t k = outer_dims; k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// dst[j] = src[j * stride] for n elements of type T (byte pointers: the
// tensor bytes need not be aligned for T).
template <typename T>
void CopyStrided(const char* src, int64_t stride, int64_t n, char* dst) {
  for (int64_t j = 0; j < n; ++j) {
    T v;
    std::memcpy(&v, src + j * stride * static_cast<int64_t>(sizeof(T)), sizeof(T));
    std::memcpy(dst + j * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
  }
}

// Copies elements as bytes: exact for every dtype.
// Batched transposes (the last two axes swapped, the leading ones kept: a
// weight's transpose, attention's keys): tiles of 32 x 32 elements, so that
// the strided side stays in cache (the row-by-row gather below reads a new
// cache line for every element of a tall matrix).
template <typename E>
void TransposeTiled(const char* src, int64_t batch, int64_t rows, int64_t cols, char* dst) {
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batch; ++b) {
    const E* in = reinterpret_cast<const E*>(src) + b * rows * cols;
    E* out = reinterpret_cast<E*>(dst) + b * rows * cols;
    for (int64_t i0 = 0; i0 < cols; i0 += kTile)
      for (int64_t j0 = 0; j0 < rows; j0 += kTile) {
        int64_t i1 = std::min(cols, i0 + kTile), j1 = std::min(rows, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) out[i * rows + j] = in[j * cols + i];
      }
  }
}

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
    if (x < 0 || x >= static_cast<int64_t>(nd) || seen[x])
      return InvalidArgument("permute_dims: bad axes");
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
  // Every output element is copied in.
  std::shared_ptr<WritableTensorBytes> data =
      AllocateTensorBufferForOverwrite(static_cast<size_t>(n) * size);
  const char* src = a.data->data();
  char* dst = data->mutable_data();
  bool batched_transpose = nd >= 2 && axes[nd - 2] == static_cast<int64_t>(nd - 1) &&
                           axes[nd - 1] == static_cast<int64_t>(nd - 2) && a.shape[nd - 1] > 1 &&
                           a.shape[nd - 2] > 1 && (size == 4 || size == 8);
  for (size_t k = 0; batched_transpose && k + 2 < nd; ++k)
    batched_transpose = axes[k] == static_cast<int64_t>(k);
  if (n > 0 && batched_transpose) {
    int64_t rows = a.shape[nd - 2], cols = a.shape[nd - 1], batch = n / (rows * cols);
    if (size == 4)
      TransposeTiled<uint32_t>(src, batch, rows, cols, dst);
    else
      TransposeTiled<uint64_t>(src, batch, rows, cols, dst);
  } else if (n > 0) {
    // Rows of the innermost output dimension, each a strided gather of
    // whole elements (typed for the common sizes, so the copy is a load and
    // a store); an odometer over the outer dimensions finds each row's start.
    int64_t inner = nd ? shape[nd - 1] : 1, istep = nd ? step[nd - 1] : 0;
    std::vector<int64_t> idx(nd, 0);
    int64_t off = 0;  // input element of the row's first output element
    for (int64_t row = 0; row < n / inner; ++row) {
      char* d = dst + row * inner * size;
      const char* s0 = src + off * size;
      switch (size) {
        case 4:
          CopyStrided<uint32_t>(s0, istep, inner, d);
          break;
        case 8:
          CopyStrided<uint64_t>(s0, istep, inner, d);
          break;
        case 2:
          CopyStrided<uint16_t>(s0, istep, inner, d);
          break;
        case 1:
          CopyStrided<uint8_t>(s0, istep, inner, d);
          break;
        default:
          for (int64_t j = 0; j < inner; ++j)
            std::memcpy(d + j * size, s0 + j * istep * size, size);
      }
      for (size_t k = nd ? nd - 1 : 0; k-- > 0;) {  // odometer over the outer index
        off += step[k];
        if (++idx[k] < shape[k]) break;
        off -= step[k] * shape[k];
        idx[k] = 0;
      }
    }
  }
  t.data = std::move(data);
  return t;
}

// ---- broadcast_to, squeeze, flatten, tile, repeat, flip, tril/triu,
// gather/scatter, one_hot, nn.pad. Elements are copied as bytes (exact for
// every dtype); results that can be larger than the operands are checked
// against the size cap first; indices out of range are errors.

// The coordinates of flat index `i` in `shape`.
void Unravel(int64_t i, const std::vector<int64_t>& shape, std::vector<int64_t>* c) {
  c->resize(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    (*c)[k] = shape[k] ? i % shape[k] : 0;
    if (shape[k]) i /= shape[k];
  }
}

int64_t Ravel(const std::vector<int64_t>& c, const std::vector<int64_t>& strides) {
  int64_t f = 0;
  for (size_t k = 0; k < c.size(); ++k) f += c[k] * strides[k];
  return f;
}

// A result whose element i is input element src(i) (a byte copy).
template <typename F>
StatusOr<Tensor> Gather(const std::string& op, const Tensor& x, const std::vector<int64_t>& shape,
                        F src) {
  PLIR_RETURN_IF_ERROR(CheckResult(op, x.dtype, shape));
  Tensor out = NewTensor(x.dtype, shape);
  int size = DataTypeSize(x.dtype);
  char* dst = MutableData(out);
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    int64_t j = src(i);
    if (j < 0)
      std::memset(dst + i * size, 0, size);
    else
      std::memcpy(dst + i * size, ElemPtr(x, j), size);
  }
  return out;
}

StatusOr<Tensor> BroadcastTo(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("broadcast_to", args, 2));
  const Tensor& x = args[0];
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOperand("broadcast_to", args[1]));
  auto b = BroadcastShape(x.shape, shape);
  if (!b.ok() || *b != shape)
    return InvalidArgument("broadcast_to: the tensor does not broadcast to the shape");
  auto st = Strides(x.shape);
  return Gather("broadcast_to", x, shape,
                [&](int64_t i) { return BroadcastIndex(i, shape, x.shape, st); });
}

StatusOr<Tensor> Squeeze(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("squeeze", args, 1));
  Tensor t = args[0];
  std::vector<bool> drop(t.shape.size(), false);
  if (const AttrValue* v = attrs.Get("axis")) {
    PLIR_ASSIGN_OR_RETURN(auto axes, KernelAxes("squeeze", v, t.shape.size()));
    for (int64_t a : axes) {
      if (t.shape[a] != 1)
        return InvalidArgument("squeeze: dimension " + std::to_string(a) + " is not 1");
      drop[a] = true;
    }
  } else {
    for (size_t i = 0; i < t.shape.size(); ++i) drop[i] = t.shape[i] == 1;
  }
  std::vector<int64_t> shape;
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (!drop[i]) shape.push_back(t.shape[i]);
  t.shape = shape;  // shares the buffer
  return t;
}

StatusOr<Tensor> Flatten(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("flatten", args, 1));
  Tensor t = args[0];
  t.shape = {t.NumElements()};
  return t;
}

StatusOr<Tensor> Tile(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("tile", args, 1));
  Tensor x = args[0];
  std::vector<int64_t> reps = IntList(attrs, "repeats", {});
  for (int64_t r : reps)
    if (r < 0) return InvalidArgument("tile: repeats must be non-negative");
  size_t rank = std::max(x.shape.size(), reps.size());
  x.shape.insert(x.shape.begin(), rank - x.shape.size(), 1);
  reps.insert(reps.begin(), rank - reps.size(), 1);
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    auto d = CheckedMul(x.shape[i], reps[i]);
    if (!d) return InvalidArgument("tile: the result's size does not fit in 64 bits");
    shape[i] = *d;
  }
  auto st = Strides(x.shape);
  std::vector<int64_t> c;
  return Gather("tile", x, shape, [&](int64_t i) {
    Unravel(i, shape, &c);
    for (size_t k = 0; k < rank; ++k) c[k] %= x.shape[k];
    return Ravel(c, st);
  });
}

StatusOr<Tensor> Repeat(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("repeat", args, 1));
  Tensor x = args[0];
  int64_t r = IntAttrOr(attrs, "repeats", 1);
  if (r < 0) return InvalidArgument("repeat: repeats must be non-negative");
  int64_t axis = 0;
  if (const AttrValue* a = attrs.Get("axis")) {
    PLIR_ASSIGN_OR_RETURN(axis, KernelAxis("repeat", a->as_int(), x.shape.size()));
  } else {
    x.shape = {x.NumElements()};
  }
  std::vector<int64_t> shape = x.shape;
  auto d = CheckedMul(shape[axis], r);
  if (!d) return InvalidArgument("repeat: the result's size does not fit in 64 bits");
  shape[axis] = *d;
  auto st = Strides(x.shape);
  std::vector<int64_t> c;
  return Gather("repeat", x, shape, [&](int64_t i) {
    Unravel(i, shape, &c);
    c[axis] /= r;
    return Ravel(c, st);
  });
}

StatusOr<Tensor> Flip(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("flip", args, 1));
  const Tensor& x = args[0];
  PLIR_ASSIGN_OR_RETURN(int64_t axis,
                        KernelAxis("flip", IntAttrOr(attrs, "axis", 0), x.shape.size()));
  auto st = Strides(x.shape);
  std::vector<int64_t> c;
  return Gather("flip", x, x.shape, [&](int64_t i) {
    Unravel(i, x.shape, &c);
    c[axis] = x.shape[axis] - 1 - c[axis];
    return Ravel(c, st);
  });
}

OpEvalFn Triangle(std::string op, bool lower) {
  return [op, lower](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& x = args[0];
    if (x.shape.size() < 2) return InvalidArgument(op + ": a tensor of rank >= 2 needed");
    int64_t k = IntAttrOr(attrs, "k", 0);
    int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
    return Gather(op, x, x.shape, [&](int64_t i) -> int64_t {
      int64_t j = i % cols, r = (i / cols) % rows;
      // j - r compared with k without overflow (k may be any int64).
      i128 d = static_cast<i128>(j) - r;
      bool keep = lower ? d <= k : d >= k;
      return keep ? i : -1;
    });
  };
}

StatusOr<int64_t> IndexAt(const std::string& op, const Tensor& idx, int64_t i, int64_t len) {
  int64_t v = idx.GetInt(i);
  if (v < 0) v += len;
  if (v < 0 || v >= len)
    return InvalidArgument(op + ": index " + std::to_string(idx.GetInt(i)) + " out of range [" +
                           std::to_string(-len) + ", " + std::to_string(len) + ")");
  return v;
}

StatusOr<Tensor> GatherElements(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "gather_elements";
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 2));
  const Tensor& x = args[0];
  const Tensor& idx = args[1];
  if (!IsInteger(idx.dtype)) return InvalidArgument(op + ": indices must be integers");
  if (idx.shape.size() != x.shape.size())
    return InvalidArgument(op + ": data and indices differ in rank");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, KernelAxis(op, IntAttrOr(attrs, "axis", 0), x.shape.size()));
  for (size_t k = 0; k < x.shape.size(); ++k)
    if (static_cast<int64_t>(k) != axis && idx.shape[k] > x.shape[k])
      return InvalidArgument(op + ": indices are larger than the data outside the axis");
  std::vector<int64_t> src(idx.NumElements());
  auto st = Strides(x.shape);
  std::vector<int64_t> c;
  for (int64_t i = 0; i < idx.NumElements(); ++i) {
    Unravel(i, idx.shape, &c);
    PLIR_ASSIGN_OR_RETURN(c[axis], IndexAt(op, idx, i, x.shape[axis]));
    src[i] = Ravel(c, st);
  }
  return Gather(op, x, idx.shape, [&](int64_t i) { return src[i]; });
}

// The index tuples of indices' last axis (gather_nd / scatter_nd): for each
// tuple, the flat offset of its slice in `x` (of `slice` elements each),
// after `b` batch dimensions.
StatusOr<std::vector<int64_t>> NdOffsets(const std::string& op, const Tensor& x, const Tensor& idx,
                                         int64_t b, int64_t* slice) {
  if (!IsInteger(idx.dtype)) return InvalidArgument(op + ": indices must be integers");
  if (idx.shape.empty()) return InvalidArgument(op + ": indices must have rank >= 1");
  int64_t m = idx.shape.back();
  if (b < 0 || b >= static_cast<int64_t>(idx.shape.size()) ||
      b + m > static_cast<int64_t>(x.shape.size()))
    return InvalidArgument(op + ": indices do not fit the data");
  for (int64_t k = 0; k < b; ++k)
    if (idx.shape[k] != x.shape[k]) return InvalidArgument(op + ": batch dimensions differ");
  *slice = 1;
  for (size_t k = b + m; k < x.shape.size(); ++k) *slice *= x.shape[k];
  int64_t batch_size = 1;  // elements of x per batch entry
  for (size_t k = b; k < x.shape.size(); ++k) batch_size *= x.shape[k];
  int64_t tuples = m ? idx.NumElements() / m : 0;
  if (m == 0) {
    tuples = 1;
    for (size_t k = 0; k + 1 < idx.shape.size(); ++k) tuples *= idx.shape[k];
  }
  int64_t per_batch = 1;
  for (size_t k = b; k + 1 < idx.shape.size(); ++k) per_batch *= idx.shape[k];
  auto st = Strides(x.shape);
  std::vector<int64_t> out(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = per_batch ? (t / per_batch) * batch_size : 0;
    for (int64_t j = 0; j < m; ++j) {
      PLIR_ASSIGN_OR_RETURN(int64_t v, IndexAt(op, idx, t * m + j, x.shape[b + j]));
      off += v * st[b + j];
    }
    out[t] = off;
  }
  return out;
}

StatusOr<Tensor> GatherNd(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "gather_nd";
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 2));
  const Tensor& x = args[0];
  const Tensor& idx = args[1];
  int64_t b = IntAttrOr(attrs, "batch_dims", 0), slice = 1;
  PLIR_ASSIGN_OR_RETURN(auto offs, NdOffsets(op, x, idx, b, &slice));
  std::vector<int64_t> shape(idx.shape.begin(), idx.shape.end() - 1);
  shape.insert(shape.end(), x.shape.begin() + b + idx.shape.back(), x.shape.end());
  return Gather(op, x, shape, [&](int64_t i) { return offs[i / slice] + i % slice; });
}

// Applies `reduction` of update u at element j of the result (doubles for
// floats, exact integers otherwise).
struct Scatter {
  std::string op, red;
  DataType dt;
  std::vector<double> f;
  std::vector<i128> n;
  std::vector<int64_t> count;  // mean: updates applied per element
  bool exact;
  Scatter(std::string o, std::string r, const Tensor& x)
      : op(std::move(o)), red(std::move(r)), dt(x.dtype) {
    exact = !IsFloat(dt);
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      if (exact)
        n.push_back(LoadInt(dt, ElemPtr(x, i)));
      else
        f.push_back(x.GetDouble(i));
    }
    if (red == "mean") count.assign(x.NumElements(), 1);
  }
  Status Apply(int64_t j, const Tensor& u, int64_t k) {
    if (exact) {
      i128 v = LoadInt(dt, ElemPtr(u, k));
      i128& t = n[j];
      if (red == "update")
        t = v;
      else if (red == "add" || red == "mean") {
        if (__builtin_add_overflow(t, v, &t)) return InvalidArgument(op + ": overflow");
      } else if (red == "mul") {
        if (__builtin_mul_overflow(t, v, &t)) return InvalidArgument(op + ": overflow");
      } else if (red == "min")
        t = std::min(t, v);
      else if (red == "max")
        t = std::max(t, v);
      else
        return InvalidArgument(op + ": unknown reduction " + red);
    } else {
      double v = u.GetDouble(k);
      double& t = f[j];
      if (red == "update")
        t = v;
      else if (red == "add" || red == "mean")
        t += v;
      else if (red == "mul")
        t *= v;
      else if (red == "min")
        t = std::isnan(t) || std::isnan(v) ? NAN : std::min(t, v);
      else if (red == "max")
        t = std::isnan(t) || std::isnan(v) ? NAN : std::max(t, v);
      else
        return InvalidArgument(op + ": unknown reduction " + red);
    }
    if (red == "mean") ++count[j];
    return Status::Ok();
  }
  StatusOr<Tensor> Result(const std::vector<int64_t>& shape) {
    if (exact) {
      if (red == "mean")
        for (size_t i = 0; i < n.size(); ++i) n[i] /= count[i];
      if (dt == DataType::kBool)
        for (i128& v : n) v = v != 0;
      return IntTensor(op, dt, shape, [&](int64_t i, i128* r) {
        *r = n[i];
        return true;
      });
    }
    if (red == "mean")
      for (size_t i = 0; i < f.size(); ++i) f[i] /= static_cast<double>(count[i]);
    return MakeTensor(dt, shape, [&](int64_t i) { return f[i]; });
  }
};

StatusOr<Tensor> ScatterElements(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "scatter_elements";
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 3));
  const Tensor& x = args[0];
  const Tensor& idx = args[1];
  const Tensor& u = args[2];
  if (!IsInteger(idx.dtype)) return InvalidArgument(op + ": indices must be integers");
  if (u.dtype != x.dtype || u.shape != idx.shape || idx.shape.size() != x.shape.size())
    return InvalidArgument(op +
                           ": updates must have the indices' shape and the data's dtype and rank");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, KernelAxis(op, IntAttrOr(attrs, "axis", 0), x.shape.size()));
  for (size_t k = 0; k < x.shape.size(); ++k)
    if (static_cast<int64_t>(k) != axis && idx.shape[k] > x.shape[k])
      return InvalidArgument(op + ": indices are larger than the data outside the axis");
  Scatter s(op, StringAttrOr(attrs, "reduction", "update"), x);
  auto st = Strides(x.shape);
  std::vector<int64_t> c;
  for (int64_t i = 0; i < idx.NumElements(); ++i) {
    Unravel(i, idx.shape, &c);
    PLIR_ASSIGN_OR_RETURN(c[axis], IndexAt(op, idx, i, x.shape[axis]));
    PLIR_RETURN_IF_ERROR(s.Apply(Ravel(c, st), u, i));
  }
  return s.Result(x.shape);
}

StatusOr<Tensor> ScatterNd(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "scatter_nd";
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 3));
  const Tensor& x = args[0];
  const Tensor& idx = args[1];
  const Tensor& u = args[2];
  int64_t slice = 1;
  PLIR_ASSIGN_OR_RETURN(auto offs, NdOffsets(op, x, idx, 0, &slice));
  std::vector<int64_t> ushape(idx.shape.begin(), idx.shape.end() - 1);
  ushape.insert(ushape.end(), x.shape.begin() + idx.shape.back(), x.shape.end());
  if (u.dtype != x.dtype || u.shape != ushape)
    return InvalidArgument(
        op + ": updates must have shape indices.shape[:-1] + data.shape[m:] and the data's dtype");
  Scatter s(op, StringAttrOr(attrs, "reduction", "update"), x);
  for (int64_t t = 0; t < static_cast<int64_t>(offs.size()); ++t)
    for (int64_t e = 0; e < slice; ++e)
      PLIR_RETURN_IF_ERROR(s.Apply(offs[t] + e, u, t * slice + e));
  return s.Result(x.shape);
}

StatusOr<Tensor> OneHot(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "one_hot";
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 3));
  const Tensor& idx = args[0];
  const Tensor& on = args[1];
  const Tensor& off = args[2];
  if (!IsInteger(idx.dtype)) return InvalidArgument(op + ": indices must be integers");
  if (on.NumElements() != 1 || off.NumElements() != 1 || on.dtype != off.dtype)
    return InvalidArgument(op + ": on_value and off_value must be scalars of one dtype");
  int64_t depth = IntAttrOr(attrs, "depth", -1);
  if (depth < 0) return InvalidArgument(op + ": depth must be non-negative");
  size_t rank = idx.shape.size() + 1;
  PLIR_ASSIGN_OR_RETURN(int64_t axis, KernelAxis(op, IntAttrOr(attrs, "axis", -1), rank));
  std::vector<int64_t> shape = idx.shape;
  shape.insert(shape.begin() + axis, depth);
  PLIR_RETURN_IF_ERROR(CheckResult(op, on.dtype, shape));
  Tensor out = NewTensor(on.dtype, shape);
  int size = DataTypeSize(on.dtype);
  char* dst = MutableData(out);
  int64_t inner = 1;
  for (size_t k = axis + 1; k < rank; ++k) inner *= shape[k];
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    int64_t pos = (i / inner) % depth;
    int64_t src = (i / inner / depth) * inner + i % inner;  // the index element
    int64_t v = idx.GetInt(src);
    if (v < 0) v += depth;  // ONNX: negative indices count from depth
    std::memcpy(dst + i * size, (v == pos ? on : off).data->data(), size);
  }
  return out;
}

StatusOr<Tensor> Pad(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "nn.pad";
  if (args.size() != 1 && args.size() != 2) return InvalidArgument(op + " takes 1 or 2 tensors");
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, args.size()));
  const Tensor& x = args[0];
  std::string mode = StringAttrOr(attrs, "pad_mode", "constant");
  std::vector<int64_t> pw = IntList(attrs, "pad_width", {});
  size_t nd = x.shape.size();
  if (pw.size() != 2 * nd) return InvalidArgument(op + ": pad_width needs two values per axis");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return InvalidArgument(op + ": unknown pad_mode " + mode);
  std::vector<int64_t> shape(nd);
  for (size_t k = 0; k < nd; ++k) {
    auto n = CheckedAdd(x.shape[k], pw[2 * k]);
    if (n) n = CheckedAdd(*n, pw[2 * k + 1]);
    if (!n || *n < 0) return InvalidArgument(op + ": a padded dimension is out of range");
    shape[k] = *n;
    bool grows = pw[2 * k] > 0 || pw[2 * k + 1] > 0;
    if (mode != "constant" && grows && x.shape[k] == 0)
      return InvalidArgument(op + ": " + mode + " padding of an empty dimension");
  }
  Tensor value = MakeTensor(x.dtype, {}, [](int64_t) { return 0.0; });
  if (args.size() == 2) {
    if (args[1].NumElements() != 1 || args[1].dtype != x.dtype)
      return InvalidArgument(op + ": pad_value must be a scalar of the data's dtype");
    value = args[1];
  }
  PLIR_RETURN_IF_ERROR(CheckResult(op, x.dtype, shape));
  auto st = Strides(x.shape);
  std::vector<int64_t> c;
  Tensor out = NewTensor(x.dtype, shape);
  int size = DataTypeSize(x.dtype);
  char* dst = MutableData(out);
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    Unravel(i, shape, &c);
    bool inside = true;
    for (size_t k = 0; k < nd; ++k) {
      int64_t n = x.shape[k];
      int64_t v = c[k] - pw[2 * k];
      if (v >= 0 && v < n) {
        c[k] = v;
        continue;
      }
      if (mode == "constant") {
        inside = false;
        break;
      }
      if (mode == "edge") {
        c[k] = v < 0 ? 0 : n - 1;
        continue;
      }
      if (n == 1) {
        c[k] = 0;
        continue;
      }
      int64_t period = 2 * (n - 1);  // reflect (the edge is not repeated)
      int64_t m = ((v % period) + period) % period;
      c[k] = m < n ? m : period - m;
    }
    std::memcpy(dst + i * size, inside ? ElemPtr(x, Ravel(c, st)) : value.data->data(), size);
  }
  return out;
}

}  // namespace

void RegisterDataMovementKernels(OpKernelTable& t) {
  Set(t, "reshape", Reshape);
  Set(t, "permute_dims", PermuteDims);
  Set(t, "shape_of", ShapeOf);
  Set(t, "tensor_to_shape", ShapeIdentity("tensor_to_shape"));
  Set(t, "shape_to_tensor", ShapeIdentity("shape_to_tensor"));
  Set(t, "take", Take);
  Set(t, "expand_dims", ExpandDims);
  Set(t, "concat", Concat);
  Set(t, "strided_slice", StridedSlice);
  Set(t, "broadcast_to", BroadcastTo);
  Set(t, "squeeze", Squeeze);
  Set(t, "flatten", Flatten);
  Set(t, "tile", Tile);
  Set(t, "repeat", Repeat);
  Set(t, "flip", Flip);
  Set(t, "tril", Triangle("tril", true));
  Set(t, "triu", Triangle("triu", false));
  Set(t, "gather_elements", GatherElements);
  Set(t, "gather_nd", GatherNd);
  Set(t, "scatter_elements", ScatterElements);
  Set(t, "scatter_nd", ScatterNd);
  Set(t, "one_hot", OneHot);
  Set(t, "nn.pad", Pad);
}

}  // namespace plir::internal
