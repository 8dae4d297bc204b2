// Compiled as C++23 (see BUILD) for std::string::resize_and_overwrite, the
// standard way to size a string without writing it; libstdc++'s string has
// the same layout in every language mode.
#include "kernels/internal/uninitialized.h"

#include <atomic>
#include <cstring>

#include "ir/support/huge_pages.h"

namespace plir::internal {

namespace {
std::atomic<bool> huge_page_tensors{false};
}  // namespace

void SetHugePageTensors(bool on) { huge_page_tensors.store(on, std::memory_order_relaxed); }

std::string NewTensorString(size_t n, bool zero) {
  std::string s;
  // Return n itself: libstdc++ 12 passes the capacity, not n, to the callback.
  s.resize_and_overwrite(n, [n](char*, size_t) { return n; });
  // The block is a mapping of its own (see the header): advised before
  // anything touches its pages.
  if (n >= kHugePageBytes && huge_page_tensors.load(std::memory_order_relaxed))
    AdviseHugePages(s.data(), n);
  if (zero) std::memset(s.data(), 0, n);
  return s;
}

}  // namespace plir::internal
