#include "ir/support/mapping.h"

#include <sys/mman.h>

namespace plir {

std::shared_ptr<const void> MapReadOnly(int fd, size_t length, uint64_t offset, bool populate) {
  void* p = mmap(nullptr, length, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<const void>(
      p, [length](const void* q) { munmap(const_cast<void*>(q), length); });
}

}  // namespace plir
