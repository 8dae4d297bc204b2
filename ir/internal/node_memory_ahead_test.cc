#include "ir/internal/node_memory_ahead.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "ir/node.h"
#include "ir/parallel.h"
#include "testing/proc_smaps.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace plir::internal {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kCell = 96;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPlainNodes = true;
#else
constexpr bool kPlainNodes = false;
#endif

// Whether this kernel populates ranges (Linux 5.14 and later).
bool KernelPopulates() {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bool ok = madvise(page, 4096, MADV_POPULATE_WRITE) == 0;
  munmap(page, 4096);
  return ok;
}

// Allocates `bytes` of cells, each filled with its own index.
std::vector<void*> FillCells(size_t bytes) {
  std::vector<void*> cells;
  for (size_t i = 0; i < bytes / kCell; ++i) {
    void* p = AllocNodeMemory(kCell);
    std::memset(p, static_cast<int>(i & 0xff), kCell);
    cells.push_back(p);
  }
  return cells;
}

bool CellsIntact(const std::vector<void*>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto* b = static_cast<const unsigned char*>(cells[i]);
    for (size_t j = 0; j < kCell; ++j)
      if (b[j] != (i & 0xff)) return false;
  }
  return true;
}

void FreeCells(const std::vector<void*>& cells) {
  for (void* p : cells) FreeNodeMemory(p, kCell);
}

TEST(NodeMemoryAheadTest, PopulatesAheadOfTheBuildAndNeverChangesItsBytes) {
  if (kPlainNodes) GTEST_SKIP() << "under ASan every node is its own operator new";
  if (!KernelPopulates()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE";
  SetDefaultThreads(2);
  std::vector<void*> cells;
  {
    NodeMemoryAhead ahead(256 * kMiB);
    // Cells written while the helper populates the pages around them.
    cells = FillCells(24 * kMiB);
    // The region is on huge pages too.
    if (testing::KernelHasThp()) EXPECT_TRUE(testing::AdvisedHugePages(cells.front()));
    // The helper catches up with the build, then stops short of the region's
    // end: at most kAheadBytes (and a step) past what the build used.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (ahead.populated() < 24 * kMiB && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_GE(ahead.populated(), 24 * kMiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_LE(ahead.populated(), 24 * kMiB + NodeMemoryAhead::kAheadBytes + 2 * kMiB);
    EXPECT_TRUE(CellsIntact(cells));
  }
  // After it: the cells stay, and the thread allocates as before.
  std::vector<void*> more = FillCells(8 * kMiB);
  EXPECT_TRUE(CellsIntact(cells));
  EXPECT_TRUE(CellsIntact(more));
  FreeCells(cells);
  FreeCells(more);
  SetDefaultThreads(0);
}

// A thread's first node slabs are small; once it has built about a MiB of
// nodes, each new slab is a 2 MiB mapping on a 2 MiB boundary, advised for
// huge pages (node_alloc.cc), as the kernel's smaps shows.
TEST(NodeSlabTest, AThreadBuildingMuchGetsHugePageSlabs) {
  if (kPlainNodes) GTEST_SKIP() << "under ASan every node is its own operator new";
  if (!testing::KernelHasThp()) GTEST_SKIP() << "this kernel has no transparent huge pages";
  std::vector<void*> cells;
  std::thread([&] { cells = FillCells(8 * kMiB); }).join();  // a thread with fresh slabs
  ASSERT_FALSE(cells.empty());
  EXPECT_FALSE(testing::AdvisedHugePages(cells.front())) << testing::VmFlagsOf(cells.front());
  EXPECT_TRUE(testing::AdvisedHugePages(cells.back())) << testing::VmFlagsOf(cells.back());
  // The last cells' slab: a 2 MiB-aligned mapping of its own, none of whose
  // cells cross its boundary.
  const auto at = reinterpret_cast<uintptr_t>(cells.back());
  EXPECT_EQ(testing::VmFlagsOf(reinterpret_cast<void*>(at - at % (2 * kMiB))),
            testing::VmFlagsOf(cells.back()));
  EXPECT_TRUE(CellsIntact(cells));
  FreeCells(cells);
}

TEST(NodeMemoryAheadTest, DoesNothingOnOneThreadOrForLittleMemory) {
  SetDefaultThreads(1);
  {
    NodeMemoryAhead ahead(64 * kMiB);
    std::vector<void*> cells = FillCells(8 * kMiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(ahead.populated(), 0u);
    EXPECT_TRUE(CellsIntact(cells));
    FreeCells(cells);
  }
  SetDefaultThreads(2);
  {
    NodeMemoryAhead small(1 * kMiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(small.populated(), 0u);
  }
  SetDefaultThreads(0);
}

TEST(NodeMemoryAheadTest, NestedReservationsLeaveTheOuterOneInCharge) {
  if (kPlainNodes || !KernelPopulates()) GTEST_SKIP();
  SetDefaultThreads(2);
  NodeMemoryAhead outer(64 * kMiB);
  std::vector<void*> cells = FillCells(4 * kMiB);
  {
    NodeMemoryAhead inner(64 * kMiB);
    std::vector<void*> more = FillCells(4 * kMiB);
    EXPECT_EQ(inner.populated(), 0u);
    EXPECT_TRUE(CellsIntact(more));
    FreeCells(more);
  }
  // The outer region still serves the thread after the inner one ended.
  std::vector<void*> after = FillCells(4 * kMiB);
  EXPECT_TRUE(CellsIntact(cells));
  EXPECT_TRUE(CellsIntact(after));
  FreeCells(cells);
  FreeCells(after);
  SetDefaultThreads(0);
}

}  // namespace
}  // namespace plir::internal
