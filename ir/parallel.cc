#include "ir/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

// Spins (with the CPU's pause hint) until `done()` or `ns` nanoseconds have
// passed; returns done().
template <typename F>
bool SpinFor(int64_t ns, F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return done();
  }
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
//
// Between calls a helper spins for kHelperSpinNs before it sleeps on the
// condition variable, and the caller spins for kCallerSpinNs for the
// helpers still working before it sleeps: an interpreter runs one kernel
// after another, microseconds apart, and a sleeping helper took tens of
// microseconds to wake (a futex wake, a context switch), so that in a
// kernel of a fraction of a millisecond the caller had often done every
// part itself before the helper arrived. Nobody is woken who is not asleep
// (no futex call then). The same budget as OpenMP runtimes' spin-wait
// (KMP_BLOCKTIME), smaller: a spinning helper takes a core from nobody but
// a process that has more threads than cores.
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
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      next_ = &next;
      n_ = n;
      wanted_ = helpers;
      claimed_ = 0;
      active_ = 0;
      generation_.store(generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      wake = sleeping_ > 0;
    }
    if (wake) work_.notify_all();
    RunItems(fn, next, n, 0);
    // Helpers that have not joined yet are not waited for: no more join.
    std::unique_lock<std::mutex> lock(mu_);
    wanted_ = claimed_;
    if (active_.load(std::memory_order_relaxed) != 0) {
      lock.unlock();
      SpinFor(kCallerSpinNs, [&] { return active_.load(std::memory_order_acquire) == 0; });
      lock.lock();
      caller_waiting_ = true;
      done_.wait(lock, [&] { return active_.load(std::memory_order_relaxed) == 0; });
      caller_waiting_ = false;
    }
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

  static constexpr int64_t kHelperSpinNs = 200'000;
  static constexpr int64_t kCallerSpinNs = 50'000;

  void Helper() {
    in_pool = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      // Wait for a call this helper may join (under the lock, as the caller
      // sets one up): spinning first, then asleep.
      for (;;) {
        const uint64_t g = generation_.load(std::memory_order_relaxed);
        if (g != seen && claimed_ < wanted_) break;
        if (g != seen) {  // a call that needs no more helpers: not this one
          seen = g;
          continue;
        }
        lock.unlock();
        const bool called = SpinFor(
            kHelperSpinNs, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        lock.lock();
        if (called || generation_.load(std::memory_order_relaxed) != seen) continue;
        // The caller reads sleeping_ under the lock after it has moved
        // generation_: either it sees this helper asleep and wakes it, or
        // the helper sees the new generation above.
        ++sleeping_;
        work_.wait(lock);
        --sleeping_;
      }
      seen = generation_.load(std::memory_order_relaxed);
      size_t worker = ++claimed_;
      active_.fetch_add(1, std::memory_order_relaxed);
      const std::function<void(size_t, size_t)>& fn = *fn_;
      std::atomic<size_t>& next = *next_;
      size_t n = n_;
      lock.unlock();
      RunItems(fn, next, n, worker);
      lock.lock();
      if (active_.fetch_sub(1, std::memory_order_release) == 1 && caller_waiting_)
        done_.notify_one();
    }
  }

  std::mutex call_mu_;  // held by the call using the pool
  std::mutex mu_;       // guards what follows
  std::condition_variable work_, done_;
  size_t threads_ = 0;  // helpers started (only the caller holding call_mu_ starts them)
  const std::function<void(size_t, size_t)>* fn_ = nullptr;
  std::atomic<size_t>* next_ = nullptr;
  size_t n_ = 0;
  size_t wanted_ = 0;                    // helpers this call may use
  size_t claimed_ = 0;                   // helpers that joined it
  std::atomic<size_t> active_{0};        // helpers still in it (changed under mu_)
  std::atomic<uint64_t> generation_{0};  // calls so far (changed under mu_)
  size_t sleeping_ = 0;                  // helpers waiting on work_
  bool caller_waiting_ = false;          // the caller waits on done_
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
