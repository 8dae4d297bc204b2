// Runs the parser fuzz target in-process on deterministic mutations of the
// spec examples (byte flips, insertions, deletions, truncations, splices),
// so every `bazel test` exercises it without libFuzzer. tools/fuzz.sh runs
// the same target under libFuzzer with sanitizers for open-ended fuzzing.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "testing/ir_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace plir {
namespace {

std::string Mutate(std::string s, std::mt19937_64& rng, const std::vector<std::string>& pool) {
  static const char* kTokens[] = {"(", ")", "{", "}", "[", "]", ",", ";", "=", "%", "@", "\"", ".",
                                  "<", ">", "->", "dataflow", "output", "if", "else", "const",
                                  "Tensor", "x\"", "-", "1e400", "\\", "\n", "//", "#", "nn.relu(",
                                  "fn(", "Callable[(", ", pure=false]", "%f(", "fn() { %x }"};
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t pos = s.empty() ? 0 : rng() % s.size();
    switch (rng() % 6) {
      case 0: if (!s.empty()) s[pos] = static_cast<char>(rng()); break;
      case 1: s.insert(pos, kTokens[rng() % (sizeof kTokens / sizeof *kTokens)]); break;
      case 2: if (!s.empty()) s.erase(pos, 1 + rng() % 8); break;
      case 3: s.resize(pos); break;
      case 4: {
        const std::string& other = pool[rng() % pool.size()];
        size_t from = other.empty() ? 0 : rng() % other.size();
        s.insert(pos, other.substr(from, rng() % 64));
        break;
      }
      default: {
        if (s.size() > 2) {
          size_t a = rng() % s.size();
          s.insert(pos, s.substr(a, rng() % 32));
        }
      }
    }
  }
  return s;
}

TEST(ParserFuzzTest, MutatedExamplesNeverCrash) {
  std::vector<std::string> pool;
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir"))
    pool.push_back(testing::ReadTestFile(f));
  ASSERT_FALSE(pool.empty());
  // Callable types, calls of variables and local functions.
  pool.push_back(testing::ReadTestFile("testing/fuzz/seeds/callables.plir"));
  std::mt19937_64 rng(20261129);
  for (int i = 0; i < 30000; ++i) {
    std::string input = Mutate(pool[i % pool.size()], rng, pool);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  // Pure noise, too.
  for (int i = 0; i < 2000; ++i) {
    std::string noise(rng() % 256, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(noise.data()), noise.size());
  }
}

}  // namespace
}  // namespace plir
