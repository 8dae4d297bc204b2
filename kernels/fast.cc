// The fast-path switch, thread splitting and OpenBLAS calls of the kernels
// (kernels/internal/fast.h).
#include "kernels/internal/fast.h"

#include <cblas-openblas.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

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
std::atomic<int> blas_threads{0};  // what OpenBLAS was last told
std::mutex blas_threads_mu;

// OpenBLAS keeps one process-wide thread count: set it when --threads (or
// a test) changed DefaultThreads() since the last call.
void SyncBlasThreads() {
  int want = KernelThreads();
  if (blas_threads.load(std::memory_order_relaxed) == want) return;
  std::lock_guard<std::mutex> lock(blas_threads_mu);
  if (blas_threads.load(std::memory_order_relaxed) == want) return;
  openblas_set_num_threads(want);
  blas_threads.store(want, std::memory_order_relaxed);
}
}  // namespace

bool FastKernelsEnabled() { return fast_enabled.load(std::memory_order_relaxed); }
void SetFastKernelsEnabled(bool on) { fast_enabled.store(on, std::memory_order_relaxed); }

uint64_t FastPathCalls() { return fast_calls.load(std::memory_order_relaxed); }
void NoteFastPath() { fast_calls.fetch_add(1, std::memory_order_relaxed); }

int KernelThreads() { return DefaultThreads(); }

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

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  SyncBlasThreads();
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  SyncBlasThreads();
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

}  // namespace plir::internal
