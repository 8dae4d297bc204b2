// Structural equality and hashing of IR.
//
// Two trees are structurally equal iff they have the same shape and scalar
// fields, with bound variables matched by position of definition. Free
// variables (used but not defined inside the compared trees) must be the same
// variable, unless `map_free_vars` is set: then they are matched by order of
// first occurrence (a bijection, with equal types). Global variables compare
// by name. Hash agrees with equality: equal trees have equal hashes (under the
// same `map_free_vars`). Both are iterative: no recursion, any depth.
#ifndef PLIR_IR_STRUCTURAL_H_
#define PLIR_IR_STRUCTURAL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "ir/module.h"
#include "ir/node.h"

namespace plir {

// Where two trees first differ, e.g. path "@main, body, block 1, binding 3
// (%lv2), value, argument 1", lhs "variable %a", rhs "variable %b".
struct StructuralMismatch {
  std::string path;
  std::string lhs;
  std::string rhs;
  std::string ToString() const { return path + ": " + lhs + " vs " + rhs; }
};

// Returns the first mismatch in pre-order, or nullopt iff the trees are equal.
std::optional<StructuralMismatch> FindFirstMismatch(const Node* lhs, const Node* rhs,
                                                    bool map_free_vars = false);
template <typename T, typename U>
std::optional<StructuralMismatch> FindFirstMismatch(const Ref<T>& lhs, const Ref<U>& rhs,
                                                    bool map_free_vars = false) {
  return FindFirstMismatch(static_cast<const Node*>(lhs.get()), static_cast<const Node*>(rhs.get()),
                           map_free_vars);
}
// Modules are equal iff they have the same item names and equal items
// (item order is not compared; the printer keeps it).
std::optional<StructuralMismatch> FindFirstMismatch(const Module& lhs, const Module& rhs,
                                                    bool map_free_vars = false);

inline bool StructuralEqual(const Node* lhs, const Node* rhs, bool map_free_vars = false) {
  return !FindFirstMismatch(lhs, rhs, map_free_vars).has_value();
}
template <typename T, typename U>
bool StructuralEqual(const Ref<T>& lhs, const Ref<U>& rhs, bool map_free_vars = false) {
  return StructuralEqual(static_cast<const Node*>(lhs.get()), static_cast<const Node*>(rhs.get()),
                         map_free_vars);
}
inline bool StructuralEqual(const Module& lhs, const Module& rhs, bool map_free_vars = false) {
  return !FindFirstMismatch(lhs, rhs, map_free_vars).has_value();
}

uint64_t StructuralHash(const Node* n, bool map_free_vars = false);
template <typename T>
uint64_t StructuralHash(const Ref<T>& n, bool map_free_vars = false) {
  return StructuralHash(static_cast<const Node*>(n.get()), map_free_vars);
}
// Independent of item order, like equality.
uint64_t StructuralHash(const Module& m, bool map_free_vars = false);

}  // namespace plir

#endif  // PLIR_IR_STRUCTURAL_H_
