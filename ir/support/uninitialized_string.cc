// Compiled as C++23 (see BUILD) for std::string::resize_and_overwrite, the
// standard way to size a string without writing it; libstdc++'s string has
// the same layout in every language mode.
#include "ir/support/uninitialized_string.h"

namespace plir::internal {

void ResizeUninitialized(std::string& s, size_t n) {
  // Return n itself: libstdc++ 12 passes the capacity, not n, to the callback.
  s.resize_and_overwrite(n, [n](char*, size_t) { return n; });
}

std::string UninitializedString(size_t n) {
  std::string s;
  ResizeUninitialized(s, n);
  return s;
}

}  // namespace plir::internal
