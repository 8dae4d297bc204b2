#include "ir/parallel.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace plir {
namespace {
std::atomic<int> default_threads{0};  // 0: the hardware's
}  // namespace

int DefaultThreads() {
  int n = default_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void SetDefaultThreads(int n) { default_threads.store(n > 0 ? n : 0, std::memory_order_relaxed); }

size_t ParallelThreads(size_t n, int threads) {
  size_t t = threads > 0 ? static_cast<size_t>(threads) : static_cast<size_t>(DefaultThreads());
  return std::max<size_t>(1, std::min(t, n));
}

void ParallelFor(size_t n, int threads, const std::function<void(size_t, size_t)>& fn) {
  size_t t = ParallelThreads(n, threads);
  if (t <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  std::atomic<size_t> next{0};
  auto run = [&](size_t worker) {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(i, worker);
  };
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  for (size_t w = 1; w < t; ++w) {
    // A thread that cannot be created (a process-count or address-space
    // limit, or a pids cgroup) means fewer workers, down to the caller's
    // thread alone: the work is the same, and the threads already started
    // are still joined below.
    try {
      pool.emplace_back(run, w);
    } catch (const std::system_error&) {
      break;
    }
  }
  run(0);  // the caller's thread works too
  for (std::thread& th : pool) th.join();
}

}  // namespace plir
