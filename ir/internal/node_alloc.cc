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
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "ir/internal/node_memory_ahead.h"
#include "ir/node.h"
#include "ir/parallel.h"
#include "ir/support/huge_pages.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it (EINVAL)
#endif

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

struct NodeMemoryAhead::State {};
NodeMemoryAhead::NodeMemoryAhead(size_t) {}
NodeMemoryAhead::~NodeMemoryAhead() = default;
size_t NodeMemoryAhead::populated() const { return 0; }

#else

namespace {

constexpr size_t kGranule = 8;
constexpr size_t kMaxSmall = 256;
constexpr size_t kClasses = kMaxSmall / kGranule;
constexpr size_t kSlabBytes = 256 * 1024;
// A thread's slabs after its first kSmallSlabs are one huge page each:
// kHugeSlabBytes, aligned to it and advised MADV_HUGEPAGE (this machine's
// THP setting is "madvise"), so that the kernel maps, and clears, 2 MiB at
// a time. On the 2-CPU EPYC VM under PVM the first write to a fresh 4 KiB
// page costs about 11 us (0.36 GB/s), to a huge page's 2 MiB about 0.1 ms
// (18 GB/s); the 1M-op modules build about 110 MB of nodes. A thread
// building a small module keeps to 256 KiB slabs, so that its RSS does not
// grow by a huge page.
constexpr size_t kSmallSlabs = 4;
constexpr size_t kHugeSlabBytes = kHugePageBytes;

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

// A fresh anonymous mapping of `bytes`, or null. A multiple of
// kHugeSlabBytes is aligned to it and advised MADV_HUGEPAGE: the kernel
// gives huge pages only to the aligned 2 MiB of a mapping, and mmap aligns
// to 4 KiB.
void* MapAligned(size_t bytes) {
  const bool huge = bytes % kHugeSlabBytes == 0;
  const size_t extra = huge ? kHugeSlabBytes : 0;
  void* m = mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  if (!huge) return m;
  char* base = static_cast<char*>(m);
  const uintptr_t at = reinterpret_cast<uintptr_t>(base);
  char* p = base + ((kHugeSlabBytes - at % kHugeSlabBytes) % kHugeSlabBytes);
  if (p != base) munmap(base, static_cast<size_t>(p - base));
  if (p + bytes != base + bytes + extra)
    munmap(p + bytes, static_cast<size_t>(base + bytes + extra - (p + bytes)));
  AdviseHugePages(p, bytes);
  return p;
}

// A fresh slab: its own mapping, faulted in with one madvise call instead of
// a page fault on the first write to each of its 64 pages. On the 2-CPU
// EPYC VM of 2026-12-05 a fault is a trip through the hypervisor (PVM):
// first touch runs at 0.3 GB/s, a populated range at 0.5-0.7 GB/s. There it
// cut plir-opt's CPU time by 9-12% on the 1M-op text round trip and cleanup
// pipeline (both shapes; bench/RESULTS.md). A kernel without
// MADV_POPULATE_WRITE refuses the call, and the slab faults as before.
char* NewSlab(size_t bytes) {
  void* p = MapAligned(bytes);
  // Refused (the address-space cap of --memory-limit): operator new fails
  // the same way, and runs the new handler that names the out-of-memory
  // (driver/supervisor.cc) instead of a bad_alloc no caller expects.
  if (!p) return static_cast<char*>(::operator new(bytes));
  madvise(p, bytes, MADV_POPULATE_WRITE);
  return static_cast<char*>(p);
}

struct ThreadCache {
  FreeList lists[kClasses];
  char* bump = nullptr;
  size_t left = 0;
  size_t slabs = 0;  // taken so far (NewSlab)
  // A NodeMemoryAhead's region: the slabs not handed out yet, and where
  // the helper reads how far they have been.
  char* region_next = nullptr;
  char* region_end = nullptr;
  std::atomic<char*>* region_mark = nullptr;

  void* Alloc(size_t cls, size_t bytes) {
    FreeList& l = lists[cls];
    if (Cell* c = l.head) {
      l.head = c->next;
      --l.count;
      return c;
    }
    if (TakeFromPool(cls)) return Alloc(cls, bytes);
    if (left < bytes) {
      if (region_next != region_end) {
        bump = region_next;
        region_next += kSlabBytes;
        if (region_mark) region_mark->store(region_next, std::memory_order_release);
        left = kSlabBytes;
      } else {
        left = slabs++ < kSmallSlabs ? kSlabBytes : kHugeSlabBytes;
        bump = NewSlab(left);
      }
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

struct NodeMemoryAhead::State {
  ThreadCache* cache;
  char* begin;
  char* end;
  std::atomic<char*> used;  // the calling thread's slabs have reached here
  std::atomic<bool> stop{false};
  std::atomic<size_t> populated{0};
  std::thread helper;

  // The helper: populates the region a huge page at a time, at most
  // kAheadBytes past `used`; gives up on the first refusal (a kernel
  // without MADV_POPULATE_WRITE), leaving the rest to fault as usual.
  void Populate() {
    constexpr size_t kStep = kHugeSlabBytes;
    char* p = begin;
    while (p < end && !stop.load(std::memory_order_relaxed)) {
      if (p >= used.load(std::memory_order_acquire) + kAheadBytes) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      size_t n = std::min<size_t>(kStep, static_cast<size_t>(end - p));
      if (madvise(p, n, MADV_POPULATE_WRITE) != 0) return;
      p += n;
      populated.store(static_cast<size_t>(p - begin), std::memory_order_relaxed);
    }
  }
};

NodeMemoryAhead::NodeMemoryAhead(size_t bytes) {
  ThreadCache* cache = Cache();
  // Nested, or nothing to gain: leave the slabs as they are.
  if (bytes < (size_t{4} << 20) || DefaultThreads() < 2 || cache->region_mark) return;
  size_t size = (bytes + kHugeSlabBytes - 1) / kHugeSlabBytes * kHugeSlabBytes;
  void* region = MapAligned(size);
  if (!region) return;
  state_ = std::make_unique<State>();
  State& s = *state_;
  s.cache = cache;
  s.begin = static_cast<char*>(region);
  s.end = s.begin + size;
  s.used.store(s.begin, std::memory_order_relaxed);
  cache->region_next = s.begin;
  cache->region_end = s.end;
  cache->region_mark = &s.used;
  s.helper = std::thread([&s] { s.Populate(); });
}

NodeMemoryAhead::~NodeMemoryAhead() {
  if (!state_) return;
  State& s = *state_;
  s.stop.store(true, std::memory_order_relaxed);
  s.helper.join();
  // The slabs not handed out go back to the system, populated or not; the
  // thread allocates its next slabs as before.
  ThreadCache* cache = s.cache;
  if (cache->region_next != cache->region_end)
    munmap(cache->region_next, static_cast<size_t>(cache->region_end - cache->region_next));
  cache->region_next = cache->region_end = nullptr;
  cache->region_mark = nullptr;
}

size_t NodeMemoryAhead::populated() const {
  return state_ ? state_->populated.load(std::memory_order_relaxed) : 0;
}

#endif

}  // namespace plir::internal
