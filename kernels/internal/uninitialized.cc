#include "kernels/internal/uninitialized.h"

#include <atomic>
#include <cstring>

#include "ir/support/huge_pages.h"
#include "ir/support/uninitialized_string.h"

namespace plir::internal {

namespace {
std::atomic<bool> huge_page_tensors{false};
}  // namespace

void SetHugePageTensors(bool on) { huge_page_tensors.store(on, std::memory_order_relaxed); }

std::string NewTensorString(size_t n, bool zero) {
  std::string s = UninitializedString(n);
  // The block is a mapping of its own (see the header): advised before
  // anything touches its pages.
  if (n >= kHugePageBytes && huge_page_tensors.load(std::memory_order_relaxed))
    AdviseHugePages(s.data(), n);
  if (zero) std::memset(s.data(), 0, n);
  return s;
}

}  // namespace plir::internal
