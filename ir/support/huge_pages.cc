#include "ir/support/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace plir::internal {

void AdviseHugePages(const void* p, size_t n) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(p);
  const uintptr_t start = at & ~(page - 1);
  madvise(reinterpret_cast<void*>(start), at + n - start, MADV_HUGEPAGE);
}

}  // namespace plir::internal
