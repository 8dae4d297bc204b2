// plir-opt's operator new (cli/huge_page_new.cc), checked through the
// kernel's own account of the process's mappings (/proc/self/smaps: the
// VmFlags of a region advised MADV_HUGEPAGE include "hg").
#include "cli/huge_page_new.h"

#include <malloc.h>

#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "gtest/gtest.h"
#include "testing/proc_smaps.h"

namespace {

using plir::testing::KernelHasThp;
using plir::testing::VmFlagsOf;
bool Advised(const void* p) { return plir::testing::AdvisedHugePages(p); }

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

TEST(HugePageNewTest, AdvisesLargeBlocksOnlyOnceEnabled) {
  if (kSanitized) GTEST_SKIP() << "sanitizer builds keep their runtime's operator new";
  if (!KernelHasThp()) GTEST_SKIP() << "this kernel has no transparent huge pages";
  // As plir-opt's main: every block of 128 KiB or more is its own mapping.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);

  auto before = std::make_unique<char[]>(8 << 20);
  ASSERT_FALSE(VmFlagsOf(before.get()).empty()) << "no mapping found for the block";
  EXPECT_FALSE(Advised(before.get())) << VmFlagsOf(before.get());

  ASSERT_TRUE(plir::cli::EnableHugePageBlocks());
  auto large = std::make_unique<char[]>(8 << 20);
  EXPECT_TRUE(Advised(large.get())) << VmFlagsOf(large.get());
  // On a 2 MiB boundary, so that huge pages can cover all of it but its end.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.get()) % (2 << 20), 0u);
  // An odd size too, and freed by operator delete (free) like any block.
  for (size_t n : {size_t{3 << 20} + 17, size_t{2 << 20}}) {
    void* p = ::operator new(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (2 << 20), 0u) << n;
    EXPECT_TRUE(Advised(p)) << n;
    ::operator delete(p);
  }
  // Just under 2 MiB: a mapping of its own too, but not advised (it could
  // not hold a huge page).
  auto under = std::make_unique<char[]>((2 << 20) - 4096);
  EXPECT_FALSE(Advised(under.get())) << VmFlagsOf(under.get());
  // The earlier block is untouched, and the memory is usable end to end.
  EXPECT_FALSE(Advised(before.get()));
  large[0] = 1;
  large[(8 << 20) - 1] = 2;
  EXPECT_EQ(large[0] + large[(8 << 20) - 1], 3);
}

int handler_calls = 0;

TEST(HugePageNewTest, FailureCallsTheNewHandlerThenThrows) {
  if (kSanitized) GTEST_SKIP() << "sanitizer builds keep their runtime's operator new";
  plir::cli::EnableHugePageBlocks();
  handler_calls = 0;
  std::set_new_handler([] {
    if (++handler_calls == 3) std::set_new_handler(nullptr);
  });
  const size_t impossible = size_t{1} << 62;
  EXPECT_THROW(
      {
        void* p = ::operator new(impossible);
        ::operator delete(p);
      },
      std::bad_alloc);
  EXPECT_EQ(handler_calls, 3);
  // The nothrow form (libstdc++'s, over this one) gives null.
  EXPECT_EQ(::operator new(impossible, std::nothrow), nullptr);
}

}  // namespace
