// Checked 64-bit arithmetic for shapes, element counts and byte sizes.
// Type inference, the loaders and the tensor kernels use these so that a
// hostile shape (a dimension near 2^63, a product that wraps) is an error,
// never undefined behaviour or a tiny allocation followed by a large write.
#ifndef PLIR_IR_CHECKED_MATH_H_
#define PLIR_IR_CHECKED_MATH_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include "ir/status.h"

namespace plir {

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of non-negative dimensions; nullopt if one is negative or the
// product does not fit in int64_t.
inline std::optional<int64_t> CheckedProduct(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    auto r = CheckedMul(n, d);
    if (!r) return std::nullopt;
    n = *r;
  }
  return n;
}

// `what` has `dims`: the element count, or an error naming `what`.
inline StatusOr<int64_t> ElementCount(std::span<const int64_t> dims, const std::string& what) {
  auto n = CheckedProduct(dims);
  if (!n) return InvalidArgument(what + ": the element count does not fit in 64 bits");
  return *n;
}

// Bytes of `elements` elements of `element_size` bytes, if at most `limit`.
inline StatusOr<int64_t> CheckedBytes(int64_t elements, int64_t element_size, int64_t limit,
                                      const std::string& what) {
  auto n = CheckedMul(elements, element_size);
  if (!n || *n > limit)
    return ResourceExhausted(what + ": " +
                             (n ? std::to_string(*n) + " bytes" : std::string("the size")) +
                             " exceeds the limit of " + std::to_string(limit) + " bytes");
  return *n;
}

}  // namespace plir

#endif  // PLIR_IR_CHECKED_MATH_H_
