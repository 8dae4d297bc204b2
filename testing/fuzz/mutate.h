// The one mutator of the fuzz replay tests: deterministic edits of an input
// (byte flips, insertions of format tokens, deletions, truncations, splices
// from other inputs and from itself), so that each `bazel test` exercises a
// fuzz target or loader without libFuzzer.
#ifndef PLIR_TESTING_FUZZ_MUTATE_H_
#define PLIR_TESTING_FUZZ_MUTATE_H_

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace plir::fuzz {

struct MutateOptions {
  int max_edits = 4;                // 1..max_edits edits per mutation
  int max_erase = 8;                // a deletion removes 1..max_erase bytes
  std::vector<std::string> tokens;  // inserted whole; none: random bytes
  // A format-specific edit (e.g. a length field), chosen as often as any
  // other kind of edit; may leave `s` unchanged.
  std::function<void(std::string* s, size_t pos, std::mt19937_64& rng)> custom;
};

// Returns `s` after 1..max_edits random edits. `pool` (may be empty) gives
// the splices' sources.
std::string Mutate(std::string s, std::mt19937_64& rng, const std::vector<std::string>& pool,
                   const MutateOptions& options);

// Token sets of the formats: PLIR text, JSON.
const std::vector<std::string>& PlirTextTokens();
const std::vector<std::string>& JsonTokens();

}  // namespace plir::fuzz

#endif  // PLIR_TESTING_FUZZ_MUTATE_H_
