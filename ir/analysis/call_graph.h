// The call graph of a module (SDK analysis).
//
// Nodes are the module's items, by position in module order. Item i
// *calls* item j when a call in i's body has @j as its callee; it
// *references* item j when @j appears anywhere in i's body (a callee, the
// kernel of a call_tir, a global passed as a value). References to names
// the module lacks are ignored (the verifier reports them).
#ifndef PLIR_IR_ANALYSIS_CALL_GRAPH_H_
#define PLIR_IR_ANALYSIS_CALL_GRAPH_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/module.h"

namespace plir {

class CallGraph {
 public:
  // One walk of every function body.
  static CallGraph Build(const Module& m);

  size_t size() const { return names_.size(); }
  const std::string& name(size_t item) const { return names_[item]; }
  // The position of the item named `name`, if any.
  std::optional<size_t> IndexOf(std::string_view name) const;

  // Distinct items, in order of first occurrence in the body.
  const std::vector<uint32_t>& Callees(size_t item) const { return callees_[item]; }
  const std::vector<uint32_t>& References(size_t item) const { return refs_[item]; }
  // Items that call `item`, in module order.
  const std::vector<uint32_t>& Callers(size_t item) const { return callers_[item]; }

  // The items reachable from `roots` through references (roots included).
  std::vector<bool> Reachable(std::span<const size_t> roots) const;
  // `seeds` and every item that (transitively) calls one of them.
  std::vector<bool> TransitiveCallers(std::span<const size_t> seeds) const;

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string_view, uint32_t> index_;  // views into names_
  std::vector<std::vector<uint32_t>> callees_, refs_, callers_;
};

}  // namespace plir

#endif  // PLIR_IR_ANALYSIS_CALL_GRAPH_H_
