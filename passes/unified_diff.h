// Line-based unified diff (Myers' algorithm), for --print-changed, golden
// test failures and plir-diff.
#ifndef PLIR_PASSES_UNIFIED_DIFF_H_
#define PLIR_PASSES_UNIFIED_DIFF_H_

#include <string>
#include <string_view>

namespace plir {

// Returns a unified diff of `a` and `b` with `context` lines of context, with
// headers "--- a_name" / "+++ b_name"; empty iff the texts are equal.
std::string UnifiedDiff(std::string_view a, std::string_view b, const std::string& a_name,
                        const std::string& b_name, int context = 3);

}  // namespace plir

#endif  // PLIR_PASSES_UNIFIED_DIFF_H_
