// Replays deterministic corruptions of saved modules (byte flips,
// truncations, insertions, length fields set huge) into the binary (versions
// 4, 3, 2 and 1) and JSON loaders: every input gives a module or a clean error.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/support/crc32c.h"
#include "ir/text/parser.h"
#include "ir/verifier.h"
#include "testing/fuzz/mutate.h"
#include "testing/ir_test_util.h"
#include "testing/random_module.h"

namespace plir {
namespace {

std::string SaveV2(const Module& m) {
  BinarySaveOptions o;
  o.version = 2;
  return SaveBinary(m, o);
}
std::string SaveV3(const Module& m) {
  BinarySaveOptions o;
  o.version = 3;
  return SaveBinary(m, o);
}

std::vector<std::string> Seeds(std::string (*save)(const Module&)) {
  std::vector<std::string> out;
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir"))
    out.push_back(save(testing::ParseOrFail(testing::ReadTestFile(f))));
  testing::RandomModuleOptions o;
  o.num_bindings = 60;
  out.push_back(save(testing::GenerateRandomModule(o)));
  // Constants, two sharing their bytes (version 3 stores them once).
  out.push_back(
      save(testing::ParseOrFail("def @f() {\n  %a = const<Tensor[(4,), uint8]>x\"deadbeef\";\n"
                                "  %b = const<Tensor[(2, 3), "
                                "float32]>x\"000000000000803f0000004000004040000080400000a040\";\n"
                                "  (%a, %b, const<Tensor[(1,), int8]>x\"7f\")\n}\n")));
  return out;
}

// Makes a binary module's header consistent with its contents (magic,
// `version`, payload length, checksum), so that corruption reaches the
// sections. Version 1 files carry the checksum PLIR wrote for them.
void Reseal(std::string* s, uint32_t version) {
  if (s->size() < 32) return;
  uint64_t len = s->size() - 32;
  std::memcpy(&(*s)[16], &len, 8);
  std::memcpy(&(*s)[0], kBinaryMagic, 8);
  std::memcpy(&(*s)[8], &version, 4);
  std::memset(&(*s)[12], 0, 4);
  if (version == 4) {  // CRC-32C of the shard table and its padding
    if (s->size() < 40) return;
    uint64_t k;
    std::memcpy(&k, &(*s)[32], 8);
    uint64_t first = k <= 1024 ? (40 + 8 * k + 63) / 64 * 64 : 0;
    if (first == 0 || first > s->size()) return;
    uint64_t sum = Crc32c(std::string_view(*s).substr(32, first - 32));
    std::memcpy(&(*s)[24], &sum, 8);
    return;
  }
  if (version == 3) {  // CRC-32C of the tensor data, and of bytes 32 to it
    if (s->size() < 144) return;
    uint64_t off;
    std::memcpy(&off, &(*s)[120], 8);
    if (off < 32 || off > s->size()) return;
    uint64_t data = Crc32c(std::string_view(*s).substr(off));
    uint64_t sum = Crc32c(std::string_view(*s).substr(32, off - 32));
    std::memcpy(&(*s)[136], &data, 8);
    std::memcpy(&(*s)[24], &sum, 8);
    return;
  }
  uint64_t h = version == 1 ? 1469598103934665603ull : 0xcbf29ce484222325ull;
  for (size_t i = 32; i < s->size(); ++i)
    h = (h ^ static_cast<unsigned char>((*s)[i])) * 0x100000001b3ull;
  std::memcpy(&(*s)[24], &h, 8);
}

std::string Corrupt(std::string s, std::mt19937_64& rng, bool fix_header, uint32_t version = 2) {
  static const fuzz::MutateOptions kOptions = [] {
    fuzz::MutateOptions o;
    o.max_edits = 3;
    o.max_erase = 16;
    o.custom = [](std::string* s, size_t pos, std::mt19937_64&) {  // a LEB128 count or length, huge
      if (!s->empty())
        s->replace(pos, std::min<size_t>(5, s->size() - pos), "\xff\xff\xff\xff\x0f");
    };
    return o;
  }();
  s = fuzz::Mutate(std::move(s), rng, {}, kOptions);
  if (fix_header) Reseal(&s, version);
  return s;
}

// Loads `bytes`; a module that loads must save and load back to itself,
// and where the loader proves no variable bound in two items (LoadFacts),
// the verifier's check across items must find nothing.
void LoadsCleanly(const std::string& bytes, int* loaded) {
  LoadFacts facts;
  auto m = LoadBinary(bytes, {}, &facts);
  if (m.ok()) {
    ++*loaded;
    auto again = LoadBinary(SaveBinary(*m));
    ASSERT_TRUE(again.ok()) << again.status().message();
    ASSERT_TRUE(StructuralEqual(*m, *again, /*map_free_vars=*/true));
    if (facts.bindings_unshared)
      ASSERT_EQ(VerifyModule(*m).empty(), VerifyParsedModule(*m, {}).empty());
  } else {
    ASSERT_FALSE(m.status().message().empty());
  }
}

TEST(LoaderFuzzTest, CorruptVersion3BinaryNeverCrashes) {
  auto seeds = Seeds(&SaveV3);
  std::mt19937_64 rng(17);
  int loaded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = Corrupt(seeds[i % seeds.size()], rng, i % 4 != 0, 3);
    LoadsCleanly(s, &loaded);
    if (::testing::Test::HasFatalFailure()) return;
    BinaryLoadOptions o;
    o.verify_tensor_data = true;
    o.keepalive = std::make_shared<int>(0);  // constants view `s`
    (void)LoadBinary(s, o);
  }
  std::printf("%d of 20000 corrupted version 3 binaries still loaded\n", loaded);
}

// Version 4: a version 3 file per shard behind a shard table.
std::vector<std::string> SplitV4(const std::string& s) {
  uint64_t k;
  std::memcpy(&k, &s[32], 8);
  size_t at = (40 + 8 * k + 63) / 64 * 64;
  std::vector<std::string> shards;
  for (size_t i = 0; i < k; ++i) {
    uint64_t n;
    std::memcpy(&n, &s[40 + 8 * i], 8);
    shards.push_back(s.substr(at, n));
    at += (n + 63) / 64 * 64;
  }
  return shards;
}
std::string JoinV4(const std::vector<std::string>& shards) {
  std::string s(32, '\0');
  auto put = [&s](uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); };
  put(shards.size());
  for (const std::string& shard : shards) put(shard.size());
  for (const std::string& shard : shards) {
    s.resize((s.size() + 63) / 64 * 64, '\0');
    s += shard;
  }
  s.resize((s.size() + 63) / 64 * 64, '\0');
  Reseal(&s, 4);
  return s;
}

TEST(LoaderFuzzTest, CorruptVersion4BinaryNeverCrashes) {
  std::vector<std::string> seeds;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    testing::RandomModuleOptions o;
    o.seed = seed;
    o.num_bindings = 120;
    o.bindings_per_function = 15;
    // The module outlives the pieces: they view its constants' bytes.
    const Module m = testing::GenerateRandomModule(o);
    BinaryParts p = SaveBinaryShards(m, 2 + seed % 3);
    std::string s;
    for (std::string_view piece : p.pieces) s.append(piece);
    ASSERT_EQ(s[8], 4);
    ASSERT_EQ(JoinV4(SplitV4(s)), s);
    seeds.push_back(std::move(s));
  }
  std::mt19937_64 rng(19);
  int loaded = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::string& seed = seeds[i % seeds.size()];
    std::string s;
    if (i % 2 == 0) {  // the table and anything after it, the header resealed 3 times in 4
      s = Corrupt(seed, rng, i % 4 != 0, 4);
    } else {  // one shard, resealed as version 3 7 times in 8, in a file rebuilt around it
      std::vector<std::string> shards = SplitV4(seed);
      size_t k = rng() % shards.size();
      shards[k] = Corrupt(shards[k], rng, i % 8 != 1, 3);
      s = JoinV4(shards);
    }
    LoadsCleanly(s, &loaded);
    if (::testing::Test::HasFatalFailure()) return;
    BinaryLoadOptions o;
    o.verify_tensor_data = true;
    o.keepalive = std::make_shared<int>(0);
    (void)LoadBinary(s, o);
  }
  std::printf("%d of 10000 corrupted version 4 binaries still loaded\n", loaded);
}

TEST(LoaderFuzzTest, CorruptBinaryNeverCrashes) {
  auto seeds = Seeds(&SaveV2);
  std::mt19937_64 rng(11);
  int loaded = 0;
  for (int i = 0; i < 20000; ++i) {
    LoadsCleanly(Corrupt(seeds[i % seeds.size()], rng, i % 4 != 0), &loaded);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::printf("%d of 20000 corrupted binaries still loaded\n", loaded);
}

TEST(LoaderFuzzTest, CorruptVersion1BinaryNeverCrashes) {
  auto seeds = Seeds(&internal::SaveBinaryV1);
  std::mt19937_64 rng(13);
  int loaded = 0;
  for (int i = 0; i < 5000; ++i) {
    LoadsCleanly(Corrupt(seeds[i % seeds.size()], rng, i % 4 != 0, 1), &loaded);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::printf("%d of 5000 corrupted version 1 binaries still loaded\n", loaded);
}

// Every field of the version 2 and 3 section tables (and version 3's
// tensor-data entry) set to boundary values.
TEST(LoaderFuzzTest, LyingSectionTableNeverCrashes) {
  int loaded = 0;
  for (uint32_t version : {2, 3}) {
    for (const std::string& seed : Seeds(version == 2 ? &SaveV2 : &SaveV3)) {
      for (size_t field = 0; field < (version == 2 ? 10u : 13u); ++field) {
        uint64_t old;
        std::memcpy(&old, &seed[32 + 8 * field], 8);
        for (uint64_t v :
             {uint64_t{0}, uint64_t{1}, old - 1, old + 1, old * 2, old / 2, uint64_t{1} << 32,
              (uint64_t{1} << 32) - 1, uint64_t{1} << 62, ~uint64_t{0}, seed.size() - 112}) {
          std::string s = seed;
          std::memcpy(&s[32 + 8 * field], &v, 8);
          Reseal(&s, version);
          LoadsCleanly(s, &loaded);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
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

TEST(LoaderFuzzTest, HugeCountsAreRejectedBeforeAllocating) {
  std::string b = SaveV2(testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir")));
  // Claim 2^40 nodes: more than the node section's bytes can hold.
  std::string evil = b;
  uint64_t count = uint64_t{1} << 40;
  std::memcpy(&evil[32 + 16 * 3], &count, 8);
  Reseal(&evil, 2);
  auto m = LoadBinary(evil);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("the node count (1099511627776) exceeds what the section's"),
            std::string::npos)
      << m.status().message();
  // A section size past the end of the file.
  evil = b;
  uint64_t size = uint64_t{1} << 62;
  std::memcpy(&evil[32 + 16 * 1 + 8], &size, 8);
  Reseal(&evil, 2);
  m = LoadBinary(evil);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(
                "the type section's size (4611686018427387904 bytes) exceeds the file"),
            std::string::npos)
      << m.status().message();
}

TEST(LoaderFuzzTest, HugeLengthsInVersion1AreRejectedBeforeAllocating) {
  std::string b = internal::SaveBinaryV1(
      testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir")));
  // Claim 2^62 strings right after the header.
  std::string evil = b.substr(0, 32) + std::string("\xff\xff\xff\xff\xff\xff\xff\xff\x3f", 9);
  Reseal(&evil, 1);
  auto m = LoadBinary(evil);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("string count exceeds the file size"), std::string::npos);
}

}  // namespace
}  // namespace plir
