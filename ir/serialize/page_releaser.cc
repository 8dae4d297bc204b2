// See page_releaser.h.
#include "ir/serialize/page_releaser.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <iterator>

namespace plir::internal {

TextPageReleaser::TextPageReleaser(const char* base) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  release_ = [base, page](size_t begin, size_t end) {
    uintptr_t b = (reinterpret_cast<uintptr_t>(base) + begin + page - 1) & ~(page - 1);
    uintptr_t e = (reinterpret_cast<uintptr_t>(base) + end) & ~(page - 1);
    if (page > 1 && e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
  };
}

void TextPageReleaser::Done(size_t begin, size_t end) {
  if (end <= begin) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto next = pending_.lower_bound(begin);
  if (next != pending_.end() && next->first - end <= kGap) {  // joins the run after it
    end = next->second;
    next = pending_.erase(next);
  }
  if (next != pending_.begin()) {
    auto prev = std::prev(next);
    if (begin - prev->second <= kGap) {  // joins the run before it
      begin = prev->first;
      pending_.erase(prev);
    }
  }
  if (end - begin >= kRun)
    release_(begin, end);
  else
    pending_.emplace(begin, end);
}

void TextPageReleaser::ReleaseAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [b, e] : pending_) release_(b, e);
  pending_.clear();
}

}  // namespace plir::internal
