// plir-opt's global operator new: a block of 2 MiB or more is advised for
// transparent huge pages before anything touches it.
//
// Why. On one function of a million ops, the serial steps (the input's
// verification, CanonicalizeBindings, CommonSubexpressionElimination,
// DeadCodeElimination, the printer's naming pass) each build tables of
// 16-64 MB indexed by variable (VarMap, ScopedValueTable) or by node, and
// the first write to each 4 KiB page of them is a page fault: 7% of all
// samples of the cleanup pipeline on one function, on the thread the other
// core waits for (`perf record -g`, bench/RESULTS.md). A huge page faults
// in 2 MiB at a time. glibc does this itself under its tunable
// `glibc.malloc.hugetlb=1` (madvise(MADV_HUGEPAGE) on every mmapped chunk
// of 2 MiB or more), but a program cannot set a tunable for itself: glibc
// reads them when the process starts. Measured on 1M ops
// (bench/RESULTS.md): the cleanup pipeline on one function 2.63 -> 1.86 s
// with the advice, then 1.48 -> 1.31 s with the alignment below; the
// binary round trip about a third faster; peak RSS within 3 MB.
//
// Where the advice goes. plir-opt's main fixes glibc's mmap threshold at
// 128 KiB before EnableHugePageBlocks(), so every block this large is a
// mapping of its own and the advice covers that block only (as
// kernels/internal/uninitialized.h explains for plir-run's tensors). A
// kernel without THP, or with THP "never", ignores it; with THP "always"
// it is already the default. The allocation itself stays glibc's (malloc,
// or posix_memalign below), so any operator delete (libstdc++'s, a
// plugin's: free) frees it.
//
// Not in sanitizer builds: their runtimes provide operator new themselves.
#include "cli/huge_page_new.h"

#include <cstddef>
#include <cstdlib>
#include <new>

#include "ir/support/huge_pages.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PLIR_HUGE_PAGE_NEW 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define PLIR_HUGE_PAGE_NEW 0
#endif
#endif
#ifndef PLIR_HUGE_PAGE_NEW
#define PLIR_HUGE_PAGE_NEW 1
#endif

namespace plir::cli {

namespace {
// Set once by main, before any thread starts.
bool huge_page_blocks = false;
}  // namespace

bool EnableHugePageBlocks() {
  huge_page_blocks = PLIR_HUGE_PAGE_NEW != 0;
  return huge_page_blocks;
}

}  // namespace plir::cli

#if PLIR_HUGE_PAGE_NEW
// As the standard says of the replaceable operator new: a null result
// calls the new-handler and tries again, and with no handler throws
// std::bad_alloc (what --memory-limit's message is made from). The other
// forms (nothrow, array) of libstdc++ call this one.
//
// A large block starts on a 2 MiB boundary (posix_memalign; free() takes it
// back like any other): a huge page covers only a whole aligned 2 MiB of
// the mapping, and the kernel aligns only mappings whose length is a
// multiple of 2 MiB, which glibc's never are. Unaligned, both ends of every
// block stayed 4 KiB pages (up to 1,022 faults a block; the text round trip
// of one function had 16.6k faults, a third of them in the parser's name
// table). The 2 MiB the alignment may skip are address space, never
// touched.
void* operator new(std::size_t n) {
  const bool huge = n >= plir::internal::kHugePageBytes && plir::cli::huge_page_blocks;
  for (;;) {
    void* p = nullptr;
    if (huge) {
      if (posix_memalign(&p, plir::internal::kHugePageBytes, n) != 0) p = nullptr;
    } else {
      p = std::malloc(n != 0 ? n : 1);
    }
    if (p) {
      if (huge) plir::internal::AdviseHugePages(p, n);
      return p;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}
#endif
