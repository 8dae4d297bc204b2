// Reference kernels of data movement and shape values: reshape, permute_dims, take, expand_dims, concat, strided_slice, shape_of, shape/tensor conversions.
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
}

}  // namespace plir::internal
