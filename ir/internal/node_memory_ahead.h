// Internal: node memory faulted in ahead of a long single-threaded build.
//
// Loading a binary module builds its nodes on one thread, and a third of that
// thread's time was the kernel's: a page fault (allocate, clear and map a
// page) on the first write to every 4 KiB of new node memory
// (bench/RESULTS.md). While a NodeMemoryAhead lives, the calling thread's
// node slabs come from one reserved region, and a helper thread faults that
// region in with madvise(MADV_POPULATE_WRITE) a few MiB ahead of what the
// calling thread has used, on the core that is otherwise idle. Populating
// does not change a page's bytes, so the helper never races with the nodes
// being written; it stays at most kAheadBytes in front, so an overestimate
// of `bytes` costs address space, not memory. What the build leaves of the
// region stays the thread's slabs, as any slab does (never returned).
//
// Without a second thread (DefaultThreads() == 1), on a kernel without
// MADV_POPULATE_WRITE (before 5.14) or under AddressSanitizer, it changes
// nothing but where the slabs come from: the build faults as before.
#ifndef PLIR_IR_INTERNAL_NODE_MEMORY_AHEAD_H_
#define PLIR_IR_INTERNAL_NODE_MEMORY_AHEAD_H_

#include <cstddef>
#include <memory>

namespace plir::internal {

class NodeMemoryAhead {
 public:
  static constexpr size_t kAheadBytes = size_t{8} << 20;

  // `bytes`: about how much node memory the calling thread will build.
  // Small requests (under 4 MiB) do nothing.
  explicit NodeMemoryAhead(size_t bytes);
  // Stops and joins the helper. Must be destroyed on the constructing thread.
  ~NodeMemoryAhead();
  NodeMemoryAhead(const NodeMemoryAhead&) = delete;
  NodeMemoryAhead& operator=(const NodeMemoryAhead&) = delete;

  // Bytes the helper has populated so far (for tests).
  size_t populated() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_NODE_MEMORY_AHEAD_H_
