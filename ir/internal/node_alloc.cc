// Node memory: per-thread slabs of fixed-size cells.
//
// Why not malloc: a chain binding is three or four nodes, and glibc's
// malloc/free (with malloc_consolidate at teardown) was a third of plir-opt's
// time on a 200k-binding function (bench/RESULTS.md). Nodes are small and of
// few sizes, so each thread carves 256 KiB slabs into cells of 8-byte size
// classes (8..256 bytes) and keeps one free list per class: allocating is a
// list pop or a pointer bump, freeing a push, with no lock and no header per
// cell. A node freed on another thread than the one that built it (parallel
// passes) goes to the freeing thread's lists. When a thread ends, its free
// lists move to a global pool that other threads draw from; slabs are never
// returned to the system (a compiler process reuses them for the next
// module). mimalloc would serve too, but it is a process-wide malloc
// replacement that every plugin and test would inherit; this is 150 lines
// scoped to nodes.
//
// Under AddressSanitizer every node is a separate operator new, so that
// use-after-free and leaks of single nodes stay visible.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "ir/node.h"

#if defined(__SANITIZE_ADDRESS__)
#define PLIR_NODE_ALLOC_PLAIN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLIR_NODE_ALLOC_PLAIN 1
#endif
#endif

namespace plir::internal {

#ifdef PLIR_NODE_ALLOC_PLAIN

void* AllocNodeMemory(size_t size) { return ::operator new(size); }
void FreeNodeMemory(void* p, size_t) { ::operator delete(p); }

#else

namespace {

constexpr size_t kGranule = 8;
constexpr size_t kMaxSmall = 256;
constexpr size_t kClasses = kMaxSmall / kGranule;
constexpr size_t kSlabBytes = 256 * 1024;

struct Cell {
  Cell* next;
};

struct FreeList {
  Cell* head = nullptr;
  size_t count = 0;
};

// Free lists that outlived their thread, handed to the next thread that
// runs dry; and the slabs themselves, kept for the life of the process.
struct GlobalPool {
  std::mutex mu;
  std::vector<FreeList> lists[kClasses];
  // lists[c].size(), written under `mu` and read without it: a thread whose
  // free list runs dry looks here first and takes the lock only when the
  // pool has a list of its class (the lock on every bump allocation was a
  // tenth of LoadBinary's instructions). A stale zero only means that
  // thread bumps a fresh cell instead.
  std::atomic<size_t> available[kClasses] = {};
};

GlobalPool& Pool() {
  static auto* pool = new GlobalPool();  // never destroyed: nodes outlive main
  return *pool;
}

struct ThreadCache {
  FreeList lists[kClasses];
  char* bump = nullptr;
  size_t left = 0;

  void* Alloc(size_t cls, size_t bytes) {
    FreeList& l = lists[cls];
    if (Cell* c = l.head) {
      l.head = c->next;
      --l.count;
      return c;
    }
    if (TakeFromPool(cls)) return Alloc(cls, bytes);
    if (left < bytes) {
      bump = static_cast<char*>(::operator new(kSlabBytes));
      left = kSlabBytes;
    }
    void* p = bump;
    bump += bytes;
    left -= bytes;
    return p;
  }

  void Free(void* p, size_t cls) {
    Cell* c = static_cast<Cell*>(p);
    c->next = lists[cls].head;
    lists[cls].head = c;
    ++lists[cls].count;
  }

  bool TakeFromPool(size_t cls) {
    GlobalPool& pool = Pool();
    if (pool.available[cls].load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.lists[cls].empty()) return false;
    lists[cls] = pool.lists[cls].back();
    pool.lists[cls].pop_back();
    pool.available[cls].store(pool.lists[cls].size(), std::memory_order_relaxed);
    return true;
  }

  void DonateToPool() {
    GlobalPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    for (size_t i = 0; i < kClasses; ++i) {
      if (lists[i].head) pool.lists[i].push_back(lists[i]);
      pool.available[i].store(pool.lists[i].size(), std::memory_order_relaxed);
      lists[i] = FreeList();
    }
  }
};

// A plain pointer, usable during static destruction; the reaper (whose
// destructor runs when the thread ends) hands the lists to the pool. A thread
// that frees nodes after its reaper ran (static destructors of the main
// thread) gets a fresh cache that is simply never reclaimed.
thread_local ThreadCache* tls_cache = nullptr;
thread_local bool tls_reaped = false;

struct Reaper {
  ~Reaper() {
    if (tls_cache) tls_cache->DonateToPool();
    tls_reaped = true;
  }
};
thread_local Reaper tls_reaper;

ThreadCache* Cache() {
  if (tls_cache) return tls_cache;
  if (!tls_reaped) (void)&tls_reaper;  // registers the reaper for this thread
  tls_cache = new ThreadCache();
  return tls_cache;
}

}  // namespace

void* AllocNodeMemory(size_t size) {
  if (size == 0 || size > kMaxSmall) return ::operator new(size);
  size_t cls = (size - 1) / kGranule;
  return Cache()->Alloc(cls, (cls + 1) * kGranule);
}

void FreeNodeMemory(void* p, size_t size) {
  if (size == 0 || size > kMaxSmall) {
    ::operator delete(p);
    return;
  }
  Cache()->Free(p, (size - 1) / kGranule);
}

#endif

}  // namespace plir::internal
