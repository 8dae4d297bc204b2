// TextPageReleaser: gives the pages of a mapped text input back to the
// system as the parser finishes with them (ParseOptions::done_with).
#ifndef PLIR_IR_SERIALIZE_PAGE_RELEASER_H_
#define PLIR_IR_SERIALIZE_PAGE_RELEASER_H_

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>

namespace plir::internal {

// Takes the byte ranges the parser reports (from any thread), and releases
// them in runs of at least kRun bytes: one madvise per reported range (one
// per item: 1,000 items of 50 KB) cost a TLB shootdown on the other cores
// each, 2-3% of a 1M-op parse on two cores (perf: flush_tlb_mm_range under
// madvise). Reported ranges are kept, merged with the pending ones less than
// kGap away, until a merged run is long enough; items finish roughly in file
// order, so few are pending at a time. ReleaseAll releases what is left.
class TextPageReleaser {
 public:
  static constexpr size_t kRun = size_t{4} << 20;
  // Runs this close join across the gap: the text between items (their
  // headers, read before the bodies) is never reported. Small, so that it
  // does not bridge an item another thread is still parsing (a page
  // released while in use is only read back from the file when touched
  // again, but that costs a fault).
  static constexpr size_t kGap = 4096;

  // Releases the whole pages within [base + begin, base + end) of a private
  // read-only mapping (MADV_DONTNEED).
  explicit TextPageReleaser(const char* base);
  // For tests: `release(begin, end)` instead of madvise.
  explicit TextPageReleaser(std::function<void(size_t begin, size_t end)> release)
      : release_(std::move(release)) {}

  void Done(size_t begin, size_t end);
  void ReleaseAll();

 private:
  std::function<void(size_t, size_t)> release_;
  std::mutex mu_;
  std::map<size_t, size_t> pending_;  // begin -> end: disjoint runs more than kGap apart
};

}  // namespace plir::internal

#endif  // PLIR_IR_SERIALIZE_PAGE_RELEASER_H_
