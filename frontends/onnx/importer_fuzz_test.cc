// Replays the importer's fuzz target over fuzz_corpus/ (node-test models)
// and deterministic mutations of them (byte flips, truncations, splices,
// inserted varints), so `bazel test` exercises it without libFuzzer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void RunTarget(const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

std::string Mutate(std::string s, std::mt19937_64& rng, const std::vector<std::string>& pool) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t at = s.empty() ? 0 : rng() % s.size();
    switch (rng() % 6) {
      case 0: if (!s.empty()) s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8))); break;
      case 1: if (!s.empty()) s[at] = static_cast<char>(rng()); break;
      case 2: s.resize(at); break;
      case 3: s.erase(at, std::min<size_t>(s.size() - at, 1 + rng() % 16)); break;
      case 4: s.insert(at, std::string(1, static_cast<char>(0x80 | (rng() & 0x7f))) + std::string(1, static_cast<char>(rng() & 0x7f))); break;
      default: {
        const std::string& o = pool[rng() % pool.size()];
        size_t from = o.empty() ? 0 : rng() % o.size();
        s.insert(at, o.substr(from, 1 + rng() % 64));
      }
    }
  }
  return s;
}

TEST(ImporterFuzzTest, CorpusAndMutations) {
  std::vector<std::string> pool;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator("frontends/onnx/fuzz_corpus")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    pool.push_back(ss.str());
  }
  ASSERT_GE(pool.size(), 5u) << "no corpus";
  for (const std::string& s : pool) RunTarget(s);
  std::mt19937_64 rng(20261201);
  int n = 4000;
  if (const char* e = std::getenv("FUZZ_MUTATIONS")) n = std::atoi(e);
  for (int i = 0; i < n; ++i) RunTarget(Mutate(pool[rng() % pool.size()], rng, pool));
}

}  // namespace
