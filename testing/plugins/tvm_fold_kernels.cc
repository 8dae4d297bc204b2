// Kernels for the PrimFuncs of TVM's FoldConstant tests
// (apache/tvm tests/python/relax/test_transform_fold_constant.py), loaded by
// FoldConstant's golden tests only (plugin_deps). TVM folds a call_tir by
// building the PrimFunc's TIR body; in PLIR an extern is a signature and its
// semantics is the kernel registered for it, so each kernel here computes
// exactly what the PrimFunc of that name computes, for the shapes the
// PrimFunc's buffers allow (`out` is the call's declared result type, the
// PrimFunc's output buffers). A call whose tensors do not fit is an error.
#include <string>
#include <vector>

#include "kernels/op_kernels.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// The static shape of tensor type `t`, or an error naming the kernel.
StatusOr<std::vector<int64_t>> StaticShape(const std::string& kernel, const Type& t) {
  auto* tt = As<TensorTypeNode>(t);
  if (!tt || !tt->IsStatic())
    return InvalidArgument("@" + kernel + ": the result must be a tensor of constant shape, not " +
                           TypeToString(t));
  std::vector<int64_t> shape;
  for (const Dim& d : tt->shape()) shape.push_back(d.value);
  return shape;
}

Status Arity(const std::string& kernel, const std::vector<Tensor>& in, size_t n) {
  if (in.size() != n)
    return InvalidArgument("@" + kernel + " takes " + std::to_string(n) + " tensor(s), got " +
                           std::to_string(in.size()));
  return Status::Ok();
}

// The result buffer must have the input's shape and dtype.
Status SameAsInput(const std::string& kernel, const Tensor& a, const Type& out) {
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticShape(kernel, out));
  if (shape != a.shape || As<TensorTypeNode>(out)->dtype() != a.dtype)
    return InvalidArgument("@" + kernel + ": the result " + TypeToString(out) +
                           " must have the input's shape and dtype");
  return Status::Ok();
}

// addone (float32 and int32 versions, any rank: the tests declare (16, 16),
// (2, 2), (2048,) and (n, m)): B[i] = A[i] + 1 in A's dtype.
StatusOr<Tensor> AddOne(const std::vector<Tensor>& in, const Type& out) {
  PLIR_RETURN_IF_ERROR(Arity("addone", in, 1));
  const Tensor& a = in[0];
  PLIR_RETURN_IF_ERROR(SameAsInput("addone", a, out));
  if (IsFloat(a.dtype))
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return a.GetDouble(i) + 1.0; });
  if (!IsInt(a.dtype)) return InvalidArgument("@addone: needs a float or integer tensor");
  // Exact; a result that does not fit the dtype is an error (left to run time).
  return MakeIntTensor(a.dtype, a.shape, [&](int64_t i) { return a.GetInt(i) + 1; });
}

// identity: B[i] = A[i].
StatusOr<Tensor> Identity(const std::vector<Tensor>& in, const Type& out) {
  PLIR_RETURN_IF_ERROR(Arity("identity", in, 1));
  PLIR_RETURN_IF_ERROR(SameAsInput("identity", in[0], out));
  return in[0];
}

// func (test_one_fold_transpose): B[i, j] = A[j, i] for A (r, c), B (c, r).
StatusOr<Tensor> Transpose(const std::vector<Tensor>& in, const Type& out) {
  PLIR_RETURN_IF_ERROR(Arity("func", in, 1));
  const Tensor& a = in[0];
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticShape("func", out));
  if (a.shape.size() != 2 || shape != std::vector<int64_t>{a.shape[1], a.shape[0]} ||
      As<TensorTypeNode>(out)->dtype() != a.dtype)
    return InvalidArgument("@func: transposes a 2-D tensor into " + TypeToString(out));
  int64_t rows = a.shape[0], cols = a.shape[1];
  // Element (i, j) of B, i < cols, j < rows, is A[j, i].
  if (IsFloat(a.dtype))
    return MakeTensor(a.dtype, shape,
                      [&](int64_t k) { return a.GetDouble((k % rows) * cols + k / rows); });
  return MakeIntTensor(a.dtype, shape,
                       [&](int64_t k) { return a.GetInt((k % rows) * cols + k / rows); });
}

// sub: C[i] = A[i] - B[i], all three of one shape (no broadcasting).
StatusOr<Tensor> Sub(const std::vector<Tensor>& in, const Type& out) {
  PLIR_RETURN_IF_ERROR(Arity("sub", in, 2));
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  PLIR_RETURN_IF_ERROR(SameAsInput("sub", a, out));
  if (b.shape != a.shape || b.dtype != a.dtype)
    return InvalidArgument("@sub: both inputs must have the result's shape and dtype");
  if (IsFloat(a.dtype))
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return a.GetDouble(i) - b.GetDouble(i); });
  return MakeIntTensor(a.dtype, a.shape, [&](int64_t i) { return a.GetInt(i) - b.GetInt(i); });
}

// split (test_fold_tuple_output): B[i, j] = A[i, j] and C[i, j] = A[i + r, j]
// where r is B's row count; A (r + s, w), B (r, w), C (s, w).
StatusOr<std::vector<Tensor>> Split(const std::vector<Tensor>& in, const Type& out) {
  PLIR_RETURN_IF_ERROR(Arity("split", in, 1));
  const Tensor& a = in[0];
  auto* tt = As<TupleTypeNode>(out);
  if (!tt || tt->fields().size() != 2)
    return InvalidArgument("@split: the result must be a pair of tensors");
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> b, StaticShape("split", tt->fields()[0]));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> c, StaticShape("split", tt->fields()[1]));
  if (a.shape.size() != 2 || b.size() != 2 || c.size() != 2 || b[1] != a.shape[1] ||
      c[1] != a.shape[1] || b[0] + c[0] != a.shape[0] ||
      As<TensorTypeNode>(tt->fields()[0])->dtype() != a.dtype ||
      As<TensorTypeNode>(tt->fields()[1])->dtype() != a.dtype)
    return InvalidArgument("@split: splits the rows of a 2-D tensor into " + TypeToString(out));
  int64_t offset = b[0] * a.shape[1];
  std::vector<Tensor> r;
  if (IsFloat(a.dtype)) {
    r.push_back(MakeTensor(a.dtype, b, [&](int64_t i) { return a.GetDouble(i); }));
    r.push_back(MakeTensor(a.dtype, c, [&](int64_t i) { return a.GetDouble(offset + i); }));
  } else {
    PLIR_ASSIGN_OR_RETURN(Tensor upper,
                          MakeIntTensor(a.dtype, b, [&](int64_t i) { return a.GetInt(i); }));
    PLIR_ASSIGN_OR_RETURN(
        Tensor lower, MakeIntTensor(a.dtype, c, [&](int64_t i) { return a.GetInt(offset + i); }));
    r.push_back(std::move(upper));
    r.push_back(std::move(lower));
  }
  return r;
}

// shape_to_tensor (test_call_tir_with_primitive_args_not_folded):
// out[0] = m. The PrimFunc takes m as a primitive (T.int64) argument; a
// kernel receives tensors, so m comes as a 0-d int64 tensor. FoldConstant
// never calls it with a primitive value (TVM folds tensor arguments only).
StatusOr<Tensor> ShapeToTensor(const std::vector<Tensor>& in, const Type& out) {
  PLIR_RETURN_IF_ERROR(Arity("shape_to_tensor", in, 1));
  if (!in[0].shape.empty() || in[0].dtype != DataType::kInt64)
    return InvalidArgument("@shape_to_tensor: m is a 0-d int64 tensor");
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticShape("shape_to_tensor", out));
  if (shape != std::vector<int64_t>{1})
    return InvalidArgument("@shape_to_tensor: the result is (1,) int64");
  return MakeIntTensor(DataType::kInt64, {1}, [&](int64_t) { return in[0].GetInt(0); });
}

Status Add(PluginHost& host, std::string name, std::string description, ExternKernelFn fn,
           ExternKernelTupleFn tuple_fn = nullptr) {
  ExternKernelDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.fn = std::move(fn);
  d.tuple_fn = std::move(tuple_fn);
  return host.RegisterExternKernel(std::move(d));
}

Status Register(PluginHost& host) {
  PLIR_RETURN_IF_ERROR(Add(host, "addone", "B = A + 1 (TVM test PrimFunc)", AddOne));
  PLIR_RETURN_IF_ERROR(Add(host, "identity", "B = A (TVM test PrimFunc)", Identity));
  PLIR_RETURN_IF_ERROR(Add(host, "func", "B[i, j] = A[j, i] (TVM test PrimFunc)", Transpose));
  PLIR_RETURN_IF_ERROR(Add(host, "sub", "C = A - B (TVM test PrimFunc)", Sub));
  PLIR_RETURN_IF_ERROR(
      Add(host, "split", "rows of A into (B, C) (TVM test PrimFunc)", nullptr, Split));
  return Add(host, "shape_to_tensor", "out = [m] (TVM test PrimFunc)", ShapeToTensor);
}

}  // namespace

PLIR_PLUGIN("tvm_fold_kernels", "1.0", Register)
