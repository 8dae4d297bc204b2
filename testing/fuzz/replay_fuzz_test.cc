// Replays a fuzz target in-process: every file of its corpus directory
// (seeds and any input a libFuzzer run kept), then deterministic mutations
// of them (byte flips, insertions, deletions, truncations, splices), so each
// `bazel test` exercises the target without libFuzzer. The target aborts on
// a broken contract; a crash fails the test.
//   replay_fuzz_test CORPUS_DIR [SEED_DIR...] [modules:DIR]
// `modules:DIR` adds each DIR/*.plir as the reprint target's inputs: its
// binary form after a 0 byte and its JSON form after a 1 byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "ir/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> g_dirs;

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

void RunTarget(const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

TEST(ReplayFuzzTest, CorpusAndMutations) {
  std::vector<std::string> pool = ReadAll();
  ASSERT_FALSE(pool.empty()) << "no corpus";
  for (const std::string& s : pool) RunTarget(s);
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 3000; ++i) {
    std::string s = pool[rng() % pool.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = s.empty() ? 0 : rng() % s.size();
      switch (rng() % 5) {
        case 0: if (!s.empty()) s[pos] = static_cast<char>(rng()); break;
        case 1: if (!s.empty()) s.erase(pos, 1 + rng() % 8); break;
        case 2: s.resize(pos); break;
        case 3: {
          const std::string& o = pool[rng() % pool.size()];
          if (!o.empty()) s.insert(pos, o.substr(rng() % o.size(), rng() % 64));
          break;
        }
        default: if (s.size() > 2) s.insert(pos, s.substr(rng() % s.size(), rng() % 32));
      }
    }
    RunTarget(s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) g_dirs.push_back(argv[i]);
  return RUN_ALL_TESTS();
}
