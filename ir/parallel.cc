#include "ir/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
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

namespace {

// One worker's share: the items it takes from `next`, in order.
void RunItems(const std::function<void(size_t, size_t)>& fn, std::atomic<size_t>& next, size_t n,
              size_t worker) {
  for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(i, worker);
}

// fn over [0, n) on t threads started for this call (the caller is worker
// 0): for calls the pool below cannot take.
void ParallelForSpawned(size_t n, size_t t, const std::function<void(size_t, size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto run = [&](size_t worker) { RunItems(fn, next, n, worker); };
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

// True on the pool's helpers, and on a caller while the pool runs its call:
// a ParallelFor from there is nested and does not wait for the pool.
thread_local bool in_pool = false;

// Helper threads kept for the process, waiting on a condition variable
// between calls. Starting threads per call cost more than the work of most
// kernels: on plir-run mobilenet_v2 (hundreds of ParallelRange calls of a
// millisecond or less), thread creation, the new threads' stacks and malloc
// arenas (page faults) left two threads no faster than one.
//
// One call at a time uses the pool; a concurrent call (from a second thread)
// or a nested one (from fn) starts threads of its own as before. The pool
// is never destroyed (its helpers would have to be joined at exit); a
// forked child, which has only the forking thread, makes a new one.
class Pool {
 public:
  // Runs fn over [0, n) on the caller and up to t - 1 helpers. False if the
  // pool is in use.
  bool Run(size_t n, size_t t, const std::function<void(size_t, size_t)>& fn) {
    std::unique_lock<std::mutex> call(call_mu_, std::try_to_lock);
    if (!call.owns_lock()) return false;
    in_pool = true;
    size_t helpers = Grow(t - 1);
    std::atomic<size_t> next{0};
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      next_ = &next;
      n_ = n;
      wanted_ = helpers;
      claimed_ = 0;
      active_ = 0;
      ++generation_;
    }
    work_.notify_all();
    RunItems(fn, next, n, 0);
    // Helpers that have not woken yet are not waited for: no more join.
    std::unique_lock<std::mutex> lock(mu_);
    wanted_ = claimed_;
    done_.wait(lock, [&] { return active_ == 0; });
    fn_ = nullptr;
    next_ = nullptr;
    in_pool = false;
    return true;
  }

  Pool* next_abandoned = nullptr;  // see GetPool

 private:
  // Starts helpers until there are `want` (or no more can be started).
  size_t Grow(size_t want) {
    while (threads_ < want) {
      try {
        std::thread(&Pool::Helper, this).detach();
      } catch (const std::system_error&) {
        break;
      }
      ++threads_;
    }
    return std::min(want, threads_);
  }

  void Helper() {
    in_pool = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_.wait(lock, [&] { return generation_ != seen && claimed_ < wanted_; });
      seen = generation_;
      size_t worker = ++claimed_;
      ++active_;
      const std::function<void(size_t, size_t)>& fn = *fn_;
      std::atomic<size_t>& next = *next_;
      size_t n = n_;
      lock.unlock();
      RunItems(fn, next, n, worker);
      lock.lock();
      if (--active_ == 0) done_.notify_one();
    }
  }

  std::mutex call_mu_;  // held by the call using the pool
  std::mutex mu_;       // guards what follows
  std::condition_variable work_, done_;
  size_t threads_ = 0;  // helpers started (only the caller holding call_mu_ starts them)
  const std::function<void(size_t, size_t)>* fn_ = nullptr;
  std::atomic<size_t>* next_ = nullptr;
  size_t n_ = 0;
  size_t wanted_ = 0;   // helpers this call may use
  size_t claimed_ = 0;  // helpers that joined it
  size_t active_ = 0;   // helpers still in it
  uint64_t generation_ = 0;
};

std::atomic<Pool*> the_pool{nullptr};
Pool* abandoned = nullptr;  // pools of the parent, in a forked child
std::once_flag fork_handler_once;

Pool* GetPool() {
  Pool* p = the_pool.load(std::memory_order_acquire);
  if (p) return p;
  std::call_once(fork_handler_once, [] {
    // The child of a fork has none of the helpers: it starts a new pool
    // (the old one is left as it was, never touched again).
    // (It stays reachable, from `abandoned`: a leak checker in the child
    // sees no leak.)
    pthread_atfork(nullptr, nullptr, [] {
      if (Pool* old = the_pool.exchange(nullptr, std::memory_order_acq_rel)) {
        old->next_abandoned = abandoned;
        abandoned = old;
      }
    });
  });
  Pool* fresh = new Pool;  // never deleted (see Pool)
  if (the_pool.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return p;
}

}  // namespace

void ParallelFor(size_t n, int threads, const std::function<void(size_t, size_t)>& fn) {
  size_t t = ParallelThreads(n, threads);
  if (t <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  // The pool keeps at most as many helpers as the machine has cores (4 at
  // least): kept threads keep their stacks and malloc arenas, so a request
  // for many more (--threads 300) starts and joins its threads as before,
  // and an address-space limit still leaves room after it.
  static const size_t max_pooled =
      std::max<size_t>(4, static_cast<size_t>(std::thread::hardware_concurrency()));
  if (!in_pool && t <= max_pooled && GetPool()->Run(n, t, fn)) return;
  ParallelForSpawned(n, t, fn);
}

}  // namespace plir
