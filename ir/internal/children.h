// Internal: the uniform structural view of a node's children, shared by every
// iterative traversal (equality, hashing, visiting, verifying).
//
// Children come in definition/evaluation order. A variable is a child in one
// of two roles: a definition (function parameter, binding target), whose
// only child is its type, or a use, which has no children. Types of
// expressions are derived and are not children; types written in the IR
// (parameters, binding annotations, return types, constant types,
// sinfo_args) are.
#ifndef PLIR_IR_INTERNAL_CHILDREN_H_
#define PLIR_IR_INTERNAL_CHILDREN_H_

#include <string>

#include "ir/expr.h"
#include "ir/node.h"

namespace plir::internal {

struct Child {
  const Node* node;
  bool is_def;  // a variable in definition position
};

// Number of structural children of `n` (`is_def`: n is a var definition).
size_t NumChildren(const Node* n, bool is_def);
// The i-th child; precondition i < NumChildren(n, is_def).
Child ChildAt(const Node* n, bool is_def, size_t i);
// Human-readable label of child i of `n`: "argument 1", "binding 3 (%lv2)".
std::string ChildLabel(const Node* n, size_t i);
// Compares the non-child (scalar) fields of two nodes of the same kind.
bool ShallowEqual(const Node* a, const Node* b);
// Hashes the kind and scalar fields (agrees with ShallowEqual).
uint64_t ShallowHash(const Node* n);
// A one-line description for messages: "%x", "call of add", "42", "Tensor[...]".
std::string ShortDescription(const Node* n);

inline uint64_t HashMix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ull;
  v ^= v >> 32;
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_CHILDREN_H_
