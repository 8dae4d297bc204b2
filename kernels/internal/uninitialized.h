// Tensor buffers as strings, sized without being written first.
//
// NewTensorString: the buffer every tensor allocation gets. With `zero`
// false its contents are left as the allocator gave them, for buffers that
// the caller overwrites in full (a kernel's output, a tensor read from a
// file): std::string(n, '\0') writes every byte first, which for a fresh
// large buffer also faults every page in one pass more than the kernel's
// own. After SetHugePageTensors(true), buffers of kHugePageBytes or more
// (ir/support/huge_pages.h) are marked for transparent huge pages before
// their first touch (madvise MADV_HUGEPAGE, what glibc's
// glibc.malloc.hugetlb=1 tunable does for every mmapped chunk), so that a
// fresh 5 MB activation faults in 2 MiB at a time instead of 4 KiB
// (bench/RESULTS.md: plir-run on mobilenet_v2).
// A kernel without THP, or with THP "never", ignores the advice. Only a
// process whose large blocks are each their own mapping may turn it on
// (plir-run fixes glibc's mmap threshold at 1 MiB): with glibc's default,
// moving threshold a large block can sit in the heap, and the advice would
// then give the small blocks around it huge pages too. Within its own
// mapping a tensor buffer's RSS does not grow: every byte is written.
#ifndef PLIR_KERNELS_INTERNAL_UNINITIALIZED_H_
#define PLIR_KERNELS_INTERNAL_UNINITIALIZED_H_

#include <cstddef>
#include <memory>
#include <string>

namespace plir::internal {

std::string NewTensorString(size_t n, bool zero);
void SetHugePageTensors(bool on);

}  // namespace plir::internal

#endif  // PLIR_KERNELS_INTERNAL_UNINITIALIZED_H_
