// RadixSortByAddress orders records as std::stable_sort does, with digits
// that every record shares (skipped) and digits that differ.
#include "ir/internal/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace plir::internal {
namespace {

using Record = std::pair<const void*, int>;  // (address, order of insertion)

void ExpectSortsAsStableSort(std::vector<Record> v) {
  std::vector<Record> want = v;
  std::stable_sort(want.begin(), want.end(),
                   [](const Record& a, const Record& b) { return a.first < b.first; });
  RadixSortByAddress(v, [](const Record& r) { return r.first; });
  EXPECT_EQ(v, want);
}

const void* Address(uint64_t a) { return reinterpret_cast<const void*>(a); }

TEST(RadixSortTest, SortsStablyWhateverDigitsDiffer) {
  std::mt19937_64 rng(7);
  // Addresses 8-aligned below 2^47: within 1 MiB (only the lowest digit
  // differs), within 16 GiB (the top digit is shared), and anywhere.
  for (uint64_t span : {uint64_t{1} << 20, uint64_t{1} << 34, uint64_t{1} << 47}) {
    const uint64_t room = (uint64_t{1} << 47) - span;
    const uint64_t base = room ? ((uint64_t{0x7f12} << 32) % room) & ~uint64_t{7} : 0;
    std::vector<Record> v;
    for (int i = 0; i < 20000; ++i) {
      // Every fifth record repeats an earlier address: equal keys keep
      // their order.
      uint64_t a = i % 5 == 4 ? reinterpret_cast<uint64_t>(v[rng() % v.size()].first)
                              : base + (rng() % span & ~uint64_t{7});
      v.push_back({Address(a), i});
    }
    ExpectSortsAsStableSort(v);
  }
  // All one address: nothing moves.
  ExpectSortsAsStableSort(std::vector<Record>(5000, {Address(0x1000), 0}));
}

}  // namespace
}  // namespace plir::internal
