// "Did you mean": the one edit-distance ranking behind every suggestion PLIR
// makes (unknown ops, passes, options, YAML keys, attributes, names).
#ifndef PLIR_IR_SUPPORT_CLOSEST_NAMES_H_
#define PLIR_IR_SUPPORT_CLOSEST_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace plir {

// Returns up to `max` names from `candidates` closest to `name` by edit
// distance (case-insensitive; at most max(2, |name|/2) edits), best first.
std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates, size_t max = 3);

}  // namespace plir

#endif  // PLIR_IR_SUPPORT_CLOSEST_NAMES_H_
