// Replays a fuzz target in-process: every file of its corpus directory
// (seeds and any input a libFuzzer run kept), then deterministic mutations
// of them (byte flips, insertions, deletions, truncations, splices), so each
// `bazel test` exercises the target without libFuzzer. The target aborts on
// a broken contract; a crash fails the test.
//   replay_fuzz_test [--mutations=N] [--noise=N] [--tokens=plir|json]
//                    CORPUS_DIR [SEED_DIR...] [modules:DIR]
// `modules:DIR` adds each DIR/*.plir as the reprint target's inputs: its
// binary form after a 0 byte and its JSON form after a 1 byte. --mutations
// (default 3000) mutated inputs are run, then --noise (default 0) inputs of
// random bytes; --tokens inserts that format's tokens (testing/fuzz/mutate.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ir/serialize/serialize.h"
#include "ir/text/parser.h"
#include "testing/fuzz/mutate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> g_dirs;
int g_mutations = 3000;
int g_noise = 0;
plir::fuzz::MutateOptions g_options;

std::vector<std::string> ReadAll() {
  std::vector<std::string> out;
  for (std::string dir : g_dirs) {
    bool modules = dir.rfind("modules:", 0) == 0;
    if (modules) dir = dir.substr(8);
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      if (!modules) {
        out.push_back(ss.str());
        continue;
      }
      if (f.extension() != ".plir") continue;
      auto m = plir::ParseModule(ss.str());
      if (!m.ok()) continue;
      out.push_back(std::string(1, '\0') + plir::SaveBinary(*m));
      out.push_back(std::string(1, '\1') + plir::SaveJson(*m));
    }
  }
  return out;
}

void RunTarget(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(ReplayFuzzTest, CorpusAndMutations) {
  std::vector<std::string> pool = ReadAll();
  ASSERT_FALSE(pool.empty()) << "no corpus";
  for (const std::string& s : pool) RunTarget(s);
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < g_mutations; ++i)
    RunTarget(plir::fuzz::Mutate(pool[rng() % pool.size()], rng, pool, g_options));
  for (int i = 0; i < g_noise; ++i) {
    std::string noise(rng() % 256, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    RunTarget(noise);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--mutations=", 0) == 0)
      g_mutations = std::stoi(a.substr(12));
    else if (a.rfind("--noise=", 0) == 0)
      g_noise = std::stoi(a.substr(8));
    else if (a == "--tokens=plir")
      g_options.tokens = plir::fuzz::PlirTextTokens();
    else if (a == "--tokens=json")
      g_options.tokens = plir::fuzz::JsonTokens();
    else if (a.rfind("--", 0) == 0) {
      fprintf(stderr, "replay_fuzz_test: unknown flag %s\n", a.c_str());
      return 2;
    } else {
      g_dirs.push_back(a);
    }
  }
  return RUN_ALL_TESTS();
}
