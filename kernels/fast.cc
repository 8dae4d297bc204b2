// The fast-path switch, thread splitting and OpenBLAS calls of the kernels
// (kernels/internal/fast.h).
#include "kernels/internal/fast.h"

#include <cblas-openblas.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include "ir/parallel.h"

namespace plir::internal {
namespace {
// PLIR_REFERENCE_KERNELS=1 in the environment starts with the fast paths
// off (to measure or debug the reference loops in plir-run).
bool FastFromEnvironment() {
  const char* v = std::getenv("PLIR_REFERENCE_KERNELS");
  return !(v && *v && std::string(v) != "0");
}
std::atomic<bool> fast_enabled{FastFromEnvironment()};
std::atomic<uint64_t> fast_calls{0};

// OpenBLAS runs on the calling thread only (one OpenBLAS thread): Gemm
// splits a product over PLIR's own threads instead. OpenBLAS's pthread
// workers spin in sched_yield for ~2^28 cycles (about 0.1 s) after they
// start and after every threaded call; on plir-run mobilenet_v2 --threads 2
// that spinning was a third of the process's CPU samples, taken from the
// kernels' own threads on a 2-core machine. Its workers, started when the
// library loaded, are stopped (blas_thread_shutdown_, the pthread build's
// fork handler; weak, since the serial and OpenMP builds lack it), and with
// one thread OpenBLAS never starts them again.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

std::atomic<bool> blas_threads_owned{true};

void SingleThreadedBlas() {
  static std::once_flag once;
  std::call_once(once, [] {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
  });
}

// Calls gemm(m, n, a, b, c) on parts of the product: columns (or rows, when
// m > n) split over KernelThreads(), each part at least ~256K multiply-adds.
template <typename T, typename F>
void SplitGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T* c, int64_t ldc, F gemm) {
  if (!BlasThreadsOwned()) return gemm(m, n, a, b, c);  // OpenBLAS threads it
  SingleThreadedBlas();
  double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  constexpr double kPart = 1 << 18;
  if (KernelThreads() <= 1 || work < 2 * kPart) return gemm(m, n, a, b, c);
  if (n >= m) {
    int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(n * kPart / work));
    ParallelRange(n, grain, [&](int64_t lo, int64_t hi) {
      gemm(m, hi - lo, a, b + (tb ? lo * ldb : lo), c + lo);
    });
  } else {
    int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(m * kPart / work));
    ParallelRange(m, grain, [&](int64_t lo, int64_t hi) {
      gemm(hi - lo, n, a + (ta ? lo : lo * lda), b, c + lo * ldc);
    });
  }
}
}  // namespace

bool FastKernelsEnabled() { return fast_enabled.load(std::memory_order_relaxed); }
void SetFastKernelsEnabled(bool on) { fast_enabled.store(on, std::memory_order_relaxed); }

uint64_t FastPathCalls() { return fast_calls.load(std::memory_order_relaxed); }
void NoteFastPath() { fast_calls.fetch_add(1, std::memory_order_relaxed); }

int KernelThreads() { return DefaultThreads(); }

bool BlasThreadsOwned() { return blas_threads_owned.load(std::memory_order_relaxed); }
}  // namespace plir::internal

namespace plir {
void SetBlasThreadsOwned(bool owned) {
  internal::blas_threads_owned.store(owned, std::memory_order_relaxed);
}
void TakeOverBlasThreads() {
  if (internal::BlasThreadsOwned()) internal::SingleThreadedBlas();
}
}  // namespace plir

namespace plir::internal {

namespace {
std::atomic<bool> avx2_enabled{true};
}  // namespace

bool CpuHasAvx2Fma() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool yes = [] {
    const char* v = std::getenv("PLIR_NO_AVX2");
    if (v && *v && std::string(v) != "0") return false;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes && avx2_enabled.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

void SetAvx2Enabled(bool on) { avx2_enabled.store(on, std::memory_order_relaxed); }

// libmvec's AVX2 entry points (glibc's vector ABI names: 'd' = AVX2, 4
// lanes, one vector argument).
extern "C" {
__m256d _ZGVdN4v_exp(__m256d);
__m256d _ZGVdN4v_erf(__m256d);
__m256d _ZGVdN4v_tanh(__m256d);
}

namespace {

double Scalar(VecFn f, double x) {
  switch (f) {
    case VecFn::kExp:
      return std::exp(x);
    case VecFn::kErf:
      return std::erf(x);
    case VecFn::kTanh:
      return std::tanh(x);
  }
  return x;
}

template <typename T>
__attribute__((target("avx2,fma"))) void VecMathAvx2(VecFn f, const T* x, T* y, int64_t n) {
  __m256d (*vf)(__m256d) = f == VecFn::kExp   ? _ZGVdN4v_exp
                           : f == VecFn::kErf ? _ZGVdN4v_erf
                                              : _ZGVdN4v_tanh;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    if constexpr (std::is_same_v<T, float>) {
      _mm_storeu_ps(y + i, _mm256_cvtpd_ps(vf(_mm256_cvtps_pd(_mm_loadu_ps(x + i)))));
    } else {
      _mm256_storeu_pd(y + i, vf(_mm256_loadu_pd(x + i)));
    }
  }
  if (i < n) {  // the tail, through one padded vector
    double in[4] = {0, 0, 0, 0}, out[4];
    for (int64_t k = i; k < n; ++k) in[k - i] = static_cast<double>(x[k]);
    _mm256_storeu_pd(out, vf(_mm256_loadu_pd(in)));
    for (int64_t k = i; k < n; ++k) y[k] = static_cast<T>(out[k - i]);
  }
}

template <typename T>
void VecMathT(VecFn f, const T* x, T* y, int64_t n) {
  if (CpuHasAvx2Fma()) return VecMathAvx2(f, x, y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(Scalar(f, static_cast<double>(x[i])));
}

}  // namespace

void VecMath(VecFn f, const float* x, float* y, int64_t n) { VecMathT(f, x, y, n); }
void VecMath(VecFn f, const double* x, double* y, int64_t n) { VecMathT(f, x, y, n); }

void ParallelRange(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int64_t chunks = std::min<int64_t>(KernelThreads(), n / std::max<int64_t>(1, grain));
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  ParallelFor(static_cast<size_t>(chunks), static_cast<int>(chunks), [&](size_t i, size_t) {
    int64_t c = static_cast<int64_t>(i);
    fn(n * c / chunks, n * (c + 1) / chunks);
  });
}

void GemmOneThread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (BlasThreadsOwned()) SingleThreadedBlas();
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

void GemmOneThread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                   int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (BlasThreadsOwned()) SingleThreadedBlas();
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  SplitGemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc,
            [&](int64_t pm, int64_t pn, const float* pa, const float* pb, float* pc) {
              GemmOneThread(ta, tb, pm, pn, k, alpha, pa, lda, pb, ldb, beta, pc, ldc);
            });
}

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  SplitGemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc,
            [&](int64_t pm, int64_t pn, const double* pa, const double* pb, double* pc) {
              GemmOneThread(ta, tb, pm, pn, k, alpha, pa, lda, pb, ldb, beta, pc, ldc);
            });
}

}  // namespace plir::internal
