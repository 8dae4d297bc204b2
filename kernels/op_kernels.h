// The reference kernels of the ops: how FoldConstant, the interpreter and
// plugins compute a call of an op on concrete tensors.
//
// The core ops' definitions are in ir/ops/ and their kernels here, one file
// per family (kernels/<family>.cc), so that the IR core links no
// computation. A plugin's op may instead carry its own kernel in
// `OpDef::eval` (ir/op.h); lookups try that first.
#ifndef PLIR_KERNELS_OP_KERNELS_H_
#define PLIR_KERNELS_OP_KERNELS_H_

#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/op.h"
#include "ir/status.h"
#include "ir/support/registry.h"
#include "kernels/tensor.h"

namespace plir {

// Whether the kernels take over the BLAS library's threads, as they do by
// default: on the first matrix product OpenBLAS is set to one thread and its
// workers are stopped (they spin after every threaded call), and products
// are split over PLIR's own threads (--threads). That is process-wide, so a
// host that uses the same OpenBLAS itself (the Python package, beside numpy
// and torch) calls SetBlasThreadsOwned(false) before any kernel runs: each
// product then goes to OpenBLAS whole, threaded as OpenBLAS is set up.
void SetBlasThreadsOwned(bool owned);
// Does now what the first matrix product would (while the kernels own the
// BLAS threads): one OpenBLAS thread, its workers stopped. OpenBLAS starts
// its workers when it loads, and they spin in sched_yield until stopped, on
// the cores a short run needs for parsing and reading weights: a tool calls
// this first (plir-run does).
void TakeOverBlasThreads();

// How to compute one op: `eval` computes a call; `work` (optional) counts
// its multiply-adds from the argument shapes and output size.
struct OpKernel {
  OpEvalFn eval;
  OpWorkFn work;
};

// Kernels by op name. The process-wide table holds the reference kernels of
// every core op family, registered once on first use.
class OpKernelTable {
 public:
  static OpKernelTable& Global();

  // Fails (InvalidArgument) without an eval function, (AlreadyExists) if
  // `op` has a kernel.
  Status Register(std::string op, OpKernel kernel);
  // The kernel of `op`, or null.
  const OpKernel* Lookup(std::string_view op) const;

  OpKernelTable() = default;  // tests may use private tables

 private:
  Registry<std::shared_ptr<const OpKernel>> kernels_;
};

// The kernel that computes `op`: the op's own (`OpDef::eval`, a plugin's
// op) or its reference kernel; null if it has none.
OpEvalFn FindOpKernel(const OpNode& op);

// Evaluates a registered op on concrete tensors through its kernel. Fails if
// the op is unknown or has no kernel, and with the kernel's error (shape
// errors, integer division by zero, overflow).
StatusOr<Tensor> EvalOp(const std::string& op, const std::vector<Tensor>& args, const Attrs& attrs);
// The same for an op already looked up.
StatusOr<Tensor> EvalOp(const OpNode& op, const std::vector<Tensor>& args, const Attrs& attrs);
// matmul(a, permute_dims(w)) for a 2-D `w`, without the transposed copy
// where the fast path takes it (float32 / float64: one GEMM reading w
// through BLAS's transpose flag); otherwise permute_dims and matmul through
// their kernels, with their errors. The interpreter computes a permute_dims
// whose only use is a matmul's right operand (a Linear layer's weight, as
// ONNX exports it) this way.
StatusOr<Tensor> MatmulOfTransposed(const Tensor& a, const Tensor& w);
// Former name of EvalOp, kept for source compatibility.
inline StatusOr<Tensor> EvalCoreOp(const std::string& op, const std::vector<Tensor>& args,
                                   const Attrs& attrs) {
  return EvalOp(op, args, attrs);
}

// Multiply-adds a call of `op` costs, from the argument shapes and the
// output size (the kernel's `work` if it has one, else out_elements).
// Used to cap constant folding.
int64_t EstimateWork(const std::string& op, const std::vector<Tensor>& args, int64_t out_elements);
int64_t EstimateWork(const OpNode& op, const std::vector<Tensor>& args, int64_t out_elements);

namespace internal {
// The families (kernels/<family>.cc), called once by OpKernelTable::Global().
void RegisterElementwiseKernels(OpKernelTable& t);  // unary
void RegisterBinaryKernels(OpKernelTable& t);
void RegisterReduceKernels(OpKernelTable& t);
void RegisterNormalizationKernels(OpKernelTable& t);
void RegisterPoolingKernels(OpKernelTable& t);
void RegisterNnKernels(OpKernelTable& t);  // convolution
void RegisterLinalgKernels(OpKernelTable& t);
void RegisterDataMovementKernels(OpKernelTable& t);
void RegisterCreationKernels(OpKernelTable& t);

// Registers a core op's kernel (core names are distinct: a failure is a
// programming error, caught by op_kernels_test).
inline void Set(OpKernelTable& t, const char* op, OpEvalFn eval, OpWorkFn work = nullptr) {
  Status s = t.Register(op, OpKernel{std::move(eval), std::move(work)});
  (void)s;
}
}  // namespace internal

}  // namespace plir

#endif  // PLIR_KERNELS_OP_KERNELS_H_
