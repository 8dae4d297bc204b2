// A string of n bytes whose contents are left as the allocator gave them,
// for tensor buffers that the caller overwrites in full: a kernel's output,
// a tensor read from a file. std::string(n, '\0') writes every byte first,
// which for a fresh large buffer also faults every page in one pass more
// than the kernel's own.
#ifndef PLIR_KERNELS_INTERNAL_UNINITIALIZED_H_
#define PLIR_KERNELS_INTERNAL_UNINITIALIZED_H_

#include <cstddef>
#include <memory>
#include <string>

namespace plir::internal {

std::string NewStringForOverwrite(size_t n);

}  // namespace plir::internal

#endif  // PLIR_KERNELS_INTERNAL_UNINITIALIZED_H_
