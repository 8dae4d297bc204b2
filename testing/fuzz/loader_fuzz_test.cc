// Replays deterministic corruptions of saved modules (byte flips,
// truncations, insertions, length fields set huge) into the binary and JSON
// loaders: every input gives a module or a clean error.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/parser.h"
#include "ir/serialize.h"
#include "ir/structural.h"
#include "testing/ir_test_util.h"
#include "testing/random_module.h"

namespace plir {
namespace {

std::vector<std::string> Seeds(std::string (*save)(const Module&)) {
  std::vector<std::string> out;
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir"))
    out.push_back(save(testing::ParseOrFail(testing::ReadTestFile(f))));
  testing::RandomModuleOptions o;
  o.num_bindings = 60;
  out.push_back(save(testing::GenerateRandomModule(o)));
  return out;
}

std::string Corrupt(std::string s, std::mt19937_64& rng, bool fix_header) {
  int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = rng() % s.size();
    switch (rng() % 5) {
      case 0: s[pos] = static_cast<char>(rng()); break;
      case 1: s.resize(pos); break;
      case 2: s.insert(pos, 1, static_cast<char>(rng())); break;
      case 3: s.erase(pos, 1 + rng() % 16); break;
      default: s.replace(pos, std::min<size_t>(5, s.size() - pos), "\xff\xff\xff\xff\x0f"); break;
    }
  }
  if (fix_header && s.size() >= 32) {
    // Make the header consistent so that corruption reaches the payload.
    uint64_t len = s.size() - 32;
    std::memcpy(&s[16], &len, 8);
    std::memcpy(&s[0], kBinaryMagic, 8);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 32; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ull;
    std::memcpy(&s[24], &h, 8);
    uint32_t v = 1;
    std::memcpy(&s[8], &v, 4);
  }
  return s;
}

TEST(LoaderFuzzTest, CorruptBinaryNeverCrashes) {
  auto seeds = Seeds(&SaveBinary);
  std::mt19937_64 rng(11);
  int loaded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = Corrupt(seeds[i % seeds.size()], rng, i % 4 != 0);
    auto m = LoadBinary(bytes);
    if (m.ok()) {
      ++loaded;
      auto again = LoadBinary(SaveBinary(*m));
      ASSERT_TRUE(again.ok());
      ASSERT_TRUE(StructuralEqual(*m, *again, /*map_free_vars=*/true));
    } else {
      ASSERT_FALSE(m.status().message().empty());
    }
  }
  std::printf("%d of 20000 corrupted binaries still loaded\n", loaded);
}

TEST(LoaderFuzzTest, CorruptJsonNeverCrashes) {
  auto seeds = Seeds(&SaveJson);
  std::mt19937_64 rng(12);
  for (int i = 0; i < 5000; ++i) {
    std::string text = Corrupt(seeds[i % seeds.size()], rng, false);
    auto m = LoadJson(text);
    if (m.ok()) {
      auto again = LoadJson(SaveJson(*m));
      ASSERT_TRUE(again.ok()) << again.status().message();
      // Loaded modules are not verified: a variable may be used before its
      // binding, and such free uses only match with map_free_vars.
      auto mm = FindFirstMismatch(*m, *again, /*map_free_vars=*/true);
      ASSERT_FALSE(mm) << mm->ToString();
    }
  }
}

TEST(LoaderFuzzTest, HugeLengthsAreRejectedBeforeAllocating) {
  std::string b = SaveBinary(testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir")));
  // Claim 2^62 strings right after the header.
  std::string evil = b.substr(0, 32) + std::string("\xff\xff\xff\xff\xff\xff\xff\xff\x3f", 9);
  uint64_t len = evil.size() - 32, h = 1469598103934665603ull;
  for (size_t i = 32; i < evil.size(); ++i) h = (h ^ static_cast<unsigned char>(evil[i])) * 1099511628211ull;
  std::memcpy(&evil[16], &len, 8);
  std::memcpy(&evil[24], &h, 8);
  auto m = LoadBinary(evil);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("string count exceeds the file size"), std::string::npos);
}

}  // namespace
}  // namespace plir
