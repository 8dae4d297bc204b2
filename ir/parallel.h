// Parallel loops over independent work items (functions of a module): used
// by the text parser and printer and by parallel function passes, so one
// setting (plir-opt --threads) governs them all.
#ifndef PLIR_IR_PARALLEL_H_
#define PLIR_IR_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace plir {

// The number of threads parallel work uses when a caller asks for 0
// ("default"): the hardware's concurrency unless SetDefaultThreads changed
// it. Always >= 1.
int DefaultThreads();
// Sets the default (n >= 1), or restores the hardware's when n <= 0.
void SetDefaultThreads(int n);

// Calls fn(i, worker) for every i in [0, n), on up to `threads` threads
// (0: DefaultThreads()); `worker` in [0, number of threads used) identifies
// the calling thread, for per-thread state. Items are handed out in order,
// one at a time; when a thread cannot be created, fewer are used (down to
// the caller's alone). With one thread (or n <= 1) everything runs on the caller's
// thread. Up to as many helper threads as the machine has cores are kept
// for later calls (started on first use); a call for more threads, one made
// while another thread's call holds them, or one from inside fn starts
// threads of its own. fn must not throw.
void ParallelFor(size_t n, int threads, const std::function<void(size_t i, size_t worker)>& fn);

// The number of threads ParallelFor(n, threads, ...) uses at most.
size_t ParallelThreads(size_t n, int threads);

}  // namespace plir

#endif  // PLIR_IR_PARALLEL_H_
