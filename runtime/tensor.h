// CPU tensors and reference kernels for the core ops, shared by FoldConstant
// and the interpreter. Row-major, little-endian, any dtype of the spec.
// Kernels compute in double (floats) or int64 (integers) and store in the
// tensor's dtype.
#ifndef PLIR_RUNTIME_TENSOR_H_
#define PLIR_RUNTIME_TENSOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/status.h"

namespace plir {

struct Tensor {
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  std::shared_ptr<const std::string> data;  // NumElements() * DataTypeSize(dtype) bytes

  int64_t NumElements() const;
  size_t NumBytes() const { return data ? data->size() : 0; }
  double GetDouble(int64_t i) const;
  int64_t GetInt(int64_t i) const;

  static Tensor FromConstant(const ConstantNode& c);
  // Fails if the shape has a negative or symbolic dimension.
  StatusOr<Ref<ConstantNode>> ToConstant() const;
};

// Where kernels allocate tensor buffers. The interpreter installs one per
// thread to count live bytes; by default buffers come from the heap.
using TensorAllocator = std::function<std::shared_ptr<std::string>(size_t bytes)>;
// Installs `alloc` for the calling thread (null restores the default);
// returns the previous one.
const TensorAllocator* SetThreadTensorAllocator(const TensorAllocator* alloc);
std::shared_ptr<std::string> AllocateTensorBuffer(size_t bytes);

// A tensor of `shape` and `dtype` whose elements are given by `f(i)` (as
// double for float dtypes, rounded to the integer dtype otherwise).
Tensor MakeTensor(DataType dtype, std::vector<int64_t> shape,
                  const std::function<double(int64_t)>& f);

// Evaluates a core op on concrete tensors. Supports add, subtract,
// multiply, divide, nn.relu, nn.softmax, matmul, reshape, permute_dims,
// nn.conv2d (with data/kernel/out layouts), zeros, ones, full, astype and
// arange. Fails on other ops, on integer division by zero, and on shape
// errors.
StatusOr<Tensor> EvalCoreOp(const std::string& op, const std::vector<Tensor>& args,
                            const Attrs& attrs);

// Number of elements `op` would produce and the multiply-adds it costs,
// computed from the argument shapes (used to cap constant folding).
int64_t EstimateWork(const std::string& op, const std::vector<Tensor>& args, int64_t out_elements);

}  // namespace plir

#endif  // PLIR_RUNTIME_TENSOR_H_
