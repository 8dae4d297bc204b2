// Transparent huge pages: the one definition of their size and of the
// advice, for every room that puts large blocks on them (node slabs,
// name tables, plir-opt's operator new, tensor buffers).
//
// On the 2-CPU EPYC VM under PVM this project is measured on, the first
// write to a fresh 4 KiB page costs about 11 us; a huge page is faulted,
// cleared and mapped 2 MiB at a time (bench/RESULTS.md). The kernel gives
// huge pages only to the 2 MiB-aligned parts of a mapping advised
// MADV_HUGEPAGE when its THP setting is "madvise" (Debian's default).
#ifndef PLIR_IR_SUPPORT_HUGE_PAGES_H_
#define PLIR_IR_SUPPORT_HUGE_PAGES_H_

#include <cstddef>

namespace plir::internal {

constexpr size_t kHugePageBytes = size_t{2} << 20;

// Advises the pages that hold [p, p + n) for transparent huge pages
// (madvise MADV_HUGEPAGE from the page of the first byte). Advice only: a
// failure, or a kernel without THP, changes nothing.
void AdviseHugePages(const void* p, size_t n);

}  // namespace plir::internal

#endif  // PLIR_IR_SUPPORT_HUGE_PAGES_H_
