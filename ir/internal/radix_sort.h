// Internal: a stable LSD radix sort of records by a node address, for the
// module-level checks that look for a node recorded twice (a variable bound
// in two items, written twice). std::sort of a million records was 5% of a
// 1M-binding round trip; this is at most three linear passes.
#ifndef PLIR_IR_INTERNAL_RADIX_SORT_H_
#define PLIR_IR_INTERNAL_RADIX_SORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace plir::internal {

// Sorts `v` by key(element), a pointer, stably: 16-bit digits of address
// bits 3..50 (nodes are 8-aligned; user-space addresses have 47 bits).
template <typename T, typename KeyFn>
void RadixSortByAddress(std::vector<T>& v, KeyFn key) {
  if (v.size() < 4096) {
    std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
    return;
  }
  std::vector<T> tmp(v.size());
  std::vector<size_t> count(65537);
  for (int shift = 3; shift < 51; shift += 16) {
    std::fill(count.begin(), count.end(), 0);
    auto digit = [&](const T& e) {
      return (reinterpret_cast<uintptr_t>(key(e)) >> shift) & 0xffff;
    };
    for (const T& e : v) ++count[digit(e) + 1];
    // A digit that every record shares orders nothing: the top one, as a
    // rule (the nodes' addresses lie within a few GiB of each other).
    if (count[digit(v.front()) + 1] == v.size()) continue;
    for (size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
    for (const T& e : v) tmp[count[digit(e)]++] = e;
    v.swap(tmp);
  }
}

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_RADIX_SORT_H_
