// CPU tensors (part of the SDK: FoldConstant, the interpreter and plugins
// use the same code). Row-major, little-endian, any dtype of the spec.
//
// The core ops' reference kernels are looked up in kernels/op_kernels.h;
// call_tir targets (extern functions) find theirs in the KernelRegistry
// (kernels/extern_kernels.h). Float kernels compute in double and round once into the
// tensor's dtype; integer kernels compute exactly in integers and fail
// (InvalidArgument, "overflow") when a result does not fit the dtype.
#ifndef PLIR_KERNELS_TENSOR_H_
#define PLIR_KERNELS_TENSOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/status.h"
#include "ir/tensor_bytes.h"

namespace plir {

struct Tensor {
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  // NumElements() * DataTypeSize(dtype) bytes, owned or borrowed
  // (ir/tensor_bytes.h); never written once shared.
  std::shared_ptr<const TensorBytes> data;

  int64_t NumElements() const;
  size_t NumBytes() const { return data ? data->size() : 0; }
  // Element i converted to double (exact for floats and for integers up to
  // 2^53) or to int64 (exact for every integer dtype but uint64 above 2^63).
  double GetDouble(int64_t i) const;
  int64_t GetInt(int64_t i) const;

  static Tensor FromConstant(const ConstantNode& c);
  // Fails if the shape has a negative or symbolic dimension.
  StatusOr<Ref<ConstantNode>> ToConstant() const;
};

// Where kernels allocate tensor buffers. The interpreter installs one per
// thread to count live bytes; by default buffers come from the heap. With
// `zero` the buffer is all zero bytes; without, its contents are
// unspecified and the caller writes every byte before any is read.
using TensorAllocator =
    std::function<std::shared_ptr<WritableTensorBytes>(size_t bytes, bool zero)>;
// Installs `alloc` for the calling thread (null restores the default);
// returns the previous one.
const TensorAllocator* SetThreadTensorAllocator(const TensorAllocator* alloc);
// A buffer of `bytes` zero bytes.
std::shared_ptr<WritableTensorBytes> AllocateTensorBuffer(size_t bytes);
// A buffer of `bytes` the caller overwrites in full (a kernel's output, a
// tensor read from a file): it is not zeroed first.
std::shared_ptr<WritableTensorBytes> AllocateTensorBufferForOverwrite(size_t bytes);

// Operand donation. A caller that holds the only reference to an operand
// that nothing reads after the call (the interpreter: a variable at its last
// use) may lend the operand's buffer to the kernel for that call. While a
// ScopedDonation of it is alive on this thread, an elementwise kernel whose
// output has the operand's dtype and shape (a unary map, clip, a binary op
// with this operand first and the other broadcast) writes its output into
// that buffer instead of a new one: each output element depends on the same
// element of the operand only, so in place gives the same bytes. The kernel
// takes it only while the operand is its bytes' sole owner and the bytes are
// not borrowed (a mapped file); a call that no ScopedDonation names, such
// as FoldConstant's or a plugin's, never has its operands written.
class ScopedDonation {
 public:
  explicit ScopedDonation(const Tensor* operand);
  ~ScopedDonation();
  ScopedDonation(const ScopedDonation&) = delete;
  ScopedDonation& operator=(const ScopedDonation&) = delete;

 private:
  const TensorBytes* prev_;
};

// Tensor buffers of 2 MiB or more get transparent huge pages (madvise
// before their first touch; kernels/internal/uninitialized.h). Off by
// default: turn it on only where every such block is a mapping of its own,
// as in plir-run, which fixes glibc's mmap threshold at 1 MiB.
void SetHugePageTensorBuffers(bool on);

// The largest tensor the interpreter and plir-run create (default 16 GiB;
// plir-run --max-tensor-bytes). CheckTensorSize fails (ResourceExhausted,
// naming `what` and the type) if a static tensor in `type` (tuples
// included) is larger, or its size does not fit in 64 bits; it is called
// before anything of that type is allocated.
int64_t MaxTensorBytes();
void SetMaxTensorBytes(int64_t bytes);
Status CheckTensorSize(const Type& type, const std::string& what);

// A tensor of `shape` and `dtype` whose elements are given by `f(i)` (as
// double for float dtypes, truncated to the integer dtype otherwise).
Tensor MakeTensor(DataType dtype, std::vector<int64_t> shape,
                  const std::function<double(int64_t)>& f);
// The same with exact integer elements (integer and bool dtypes): fails if
// a value does not fit the dtype.
StatusOr<Tensor> MakeIntTensor(DataType dtype, std::vector<int64_t> shape,
                               const std::function<int64_t(int64_t)>& f);

}  // namespace plir

#endif  // PLIR_KERNELS_TENSOR_H_
