// A string of n bytes whose contents are left as the allocator gave them:
// for a buffer the caller overwrites before anything reads it (a tensor
// kernel's output, a chunk of the binary writer's output). std::string(n,
// '\0') writes every byte first, which for a fresh large buffer is one
// pass more over memory that the caller then writes again; on this
// project's VM that first pass is also the one that faults every page in
// (ir/support/huge_pages.h).
#ifndef PLIR_IR_SUPPORT_UNINITIALIZED_STRING_H_
#define PLIR_IR_SUPPORT_UNINITIALIZED_STRING_H_

#include <cstddef>
#include <string>

namespace plir::internal {

std::string UninitializedString(size_t n);
// Sets `s` to n bytes, those past its old size left as they are in its
// buffer (a buffer reused: the caller overwrites them).
void ResizeUninitialized(std::string& s, size_t n);

}  // namespace plir::internal

#endif  // PLIR_IR_SUPPORT_UNINITIALIZED_STRING_H_
