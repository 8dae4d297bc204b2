// The fast paths of the kernels (internal to kernels/): a switch that turns
// them off (fast_path_test compares them with the reference loops), thread
// splitting that follows plir-run / plir-opt --threads (DefaultThreads()),
// and matrix products through OpenBLAS.
//
// Fast paths take float32 (and float64 where cheap) tensors, which are
// always dense and row-major (kernels/tensor.h); every other case stays on
// the reference loop. They compute in the tensor's dtype, so results may
// differ from the reference (double accumulation, one rounding) by float
// reassociation: a few ulps, growing with the length of a sum.
#ifndef PLIR_KERNELS_INTERNAL_FAST_H_
#define PLIR_KERNELS_INTERNAL_FAST_H_

#include <cstdint>
#include <cstdlib>
#include <functional>

#include "kernels/tensor.h"

namespace plir::internal {

// Whether kernels take their fast paths (default: yes, unless the
// environment sets PLIR_REFERENCE_KERNELS=1). Process-wide.
bool FastKernelsEnabled();
void SetFastKernelsEnabled(bool on);

// How many times a fast path ran (fast_path_test checks that its cases
// take the path they compare); NoteFastPath() counts one.
uint64_t FastPathCalls();
void NoteFastPath();

// The threads kernels use: DefaultThreads() (ir/parallel.h), i.e. the
// --threads of plir-run and plir-opt, or the hardware's.
int KernelThreads();

// Calls fn(begin, end) over disjoint ranges covering [0, n), on up to
// KernelThreads() threads, each range at least `grain` items (so that small
// loops stay on the caller's thread). fn must not throw.
void ParallelRange(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// False after SetBlasThreadsOwned(false) (kernels/op_kernels.h): Gemm then
// hands each product to OpenBLAS whole, threaded by OpenBLAS, and callers
// do not split products over threads of their own.
bool BlasThreadsOwned();

// C (m x n, leading dimension ldc) = alpha * op(A) * op(B) + beta * C,
// row-major, op = transpose when ta / tb. Gemm splits C's columns (or rows)
// over KernelThreads() threads, each calling OpenBLAS single-threaded (its
// own threads are never used: they spin after each threaded call);
// GemmOneThread runs on the caller's thread (for callers that split the
// work themselves, e.g. over a batch).
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);
void GemmOneThread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void GemmOneThread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                   int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// Typed access to a tensor's elements (its dtype must be T's).
template <typename T>
const T* DataOf(const Tensor& t) {
  return reinterpret_cast<const T*>(t.data->data());
}
template <typename T>
T* MutableDataOf(Tensor& t) {  // a kernel's own output: never borrowed bytes
  if (t.data->borrowed()) std::abort();
  return reinterpret_cast<T*>(const_cast<char*>(t.data->data()));
}

// Whether this CPU runs AVX2 and FMA code. The build targets baseline
// x86-64 (no -mavx2), so kernels that gain from 32-byte vectors keep a
// clone marked __attribute__((target("avx2,fma"))) and choose it at run
// time with this; PLIR_NO_AVX2=1 in the environment turns the clones off
// (to compare them with the baseline loops), and so does
// SetAvx2Enabled(false) (fast_path_test runs both).
bool CpuHasAvx2Fma();
void SetAvx2Enabled(bool on);

// y[i] = f(x[i]) for i in [0, n), f = exp, erf or tanh computed in double
// (float inputs are widened and the result rounded once, as the reference
// loops do): through glibc's libmvec, 4 doubles per call, where the CPU has
// AVX2 (CpuHasAvx2Fma()), else one libm call per element. libmvec is
// within 4 ulp in double; rounded to float32 it gave the scalar call's
// result for every one of 2^20 arguments in [-4, 4] tried (erf).
enum class VecFn { kExp, kErf, kTanh };
void VecMath(VecFn f, const float* x, float* y, int64_t n);
void VecMath(VecFn f, const double* x, double* y, int64_t n);

// Whether a fast path handles `t`: float32 or float64.
inline bool FastFloat(const Tensor& t) {
  return t.dtype == DataType::kFloat32 || t.dtype == DataType::kFloat64;
}

// Calls body(tag) with a null pointer of the element type of `t`, a
// FastFloat tensor.
template <typename F>
void ForFloat(const Tensor& t, F body) {
  if (t.dtype == DataType::kFloat32)
    body(static_cast<float*>(nullptr));
  else
    body(static_cast<double*>(nullptr));
}

}  // namespace plir::internal

#endif  // PLIR_KERNELS_INTERNAL_FAST_H_
