// Replays the safetensors corpus (testing/fuzz/corpus/safetensors: good_*
// files must load, bad_* files must be rejected with an error naming the
// file) and deterministic mutations of the good ones (byte flips,
// truncations, header-length edits, JSON token splices) through the fuzz
// target, which aborts if a lying header is accepted. tools/fuzz.sh
// safetensors runs the same target under libFuzzer with sanitizers.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "interpreter/safetensors.h"
#include "testing/fuzz/mutate.h"
#include "testing/ir_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace plir {
namespace {

const char kCorpus[] = "testing/fuzz/corpus/safetensors";

std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

int Fuzz(const std::string& s) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(SafetensorsFuzzTest, CorpusGoodLoadsBadIsRejected) {
  auto files = testing::ListTestFiles(kCorpus, ".safetensors");
  int good = 0, bad = 0;
  for (const std::string& f : files) {
    bool is_good = Base(f).rfind("good_", 0) == 0;
    if (!is_good && Base(f).rfind("bad_", 0) != 0) continue;  // e.g. inputs a fuzzing run added
    std::string bytes = testing::ReadTestFile(f);
    Fuzz(bytes);
    auto in_memory = ParseSafetensors(bytes, f);
    auto on_disk = SafetensorsReader::Open(f);
    if (is_good) {
      ++good;
      EXPECT_TRUE(in_memory.ok()) << f << ": " << in_memory.status().message();
      ASSERT_TRUE(on_disk.ok()) << f << ": " << on_disk.status().message();
      for (size_t i = 0; i < (*on_disk)->entries().size(); ++i)
        EXPECT_TRUE((*on_disk)->Read(i).ok());
    } else {
      ++bad;
      ASSERT_FALSE(in_memory.ok()) << f << " was accepted";
      EXPECT_EQ(in_memory.status().message().rfind(f + ": ", 0), 0u)
          << in_memory.status().message();
      ASSERT_FALSE(on_disk.ok()) << f << " was accepted from disk";
      EXPECT_NE(on_disk.status().message().find(f), std::string::npos);
    }
  }
  EXPECT_GE(good, 3);
  EXPECT_GE(bad, 20);
}

std::string Mutate(std::string s, std::mt19937_64& rng) {
  static const fuzz::MutateOptions kOptions = [] {
    fuzz::MutateOptions o;
    o.max_edits = 3;
    o.tokens = fuzz::JsonTokens();
    for (const char* t :
         {"\"F32\"", "\"dtype\"", "\"shape\"", "\"data_offsets\"", "\"__metadata__\""})
      o.tokens.push_back(t);
    o.custom = [](std::string* s, size_t pos, std::mt19937_64& rng) {
      if (s->size() < 8) return;
      if (rng() % 2) {  // a digit in the header
        if (pos >= 8) (*s)[pos] = static_cast<char>('0' + rng() % 10);
        return;
      }
      uint64_t n;  // the header length off by a little, or huge
      std::memcpy(&n, s->data(), 8);
      n = rng() % 4 == 0 ? rng() : n + (rng() % 17) - 8;
      std::memcpy(&(*s)[0], &n, 8);
    };
    return o;
  }();
  return fuzz::Mutate(std::move(s), rng, {}, kOptions);
}

TEST(SafetensorsFuzzTest, MutationsGiveAHeaderOrACleanError) {
  std::vector<std::string> seeds;
  for (const std::string& f : testing::ListTestFiles(kCorpus, ".safetensors"))
    if (Base(f).rfind("good_", 0) == 0) seeds.push_back(testing::ReadTestFile(f));
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (int i = 0; i < 5; ++i)
    tensors.emplace_back("w" + std::to_string(i),
                         MakeTensor(i % 2 ? DataType::kFloat16 : DataType::kInt32, {i, 2},
                                    [](int64_t k) { return k; }));
  std::string path = ::testing::TempDir() + "/seed.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, tensors).ok());
  seeds.push_back(testing::ReadTestFile(path));
  std::mt19937_64 rng(14);
  int accepted = 0, total = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string m = Mutate(seeds[round % seeds.size()], rng);
    Fuzz(m);  // aborts on a violated invariant
    accepted += ParseSafetensors(m, "x").ok();
    ++total;
  }
  EXPECT_LT(accepted, total);  // most mutations are rejected...
  EXPECT_GT(total - accepted, total / 2);
}

}  // namespace
}  // namespace plir
