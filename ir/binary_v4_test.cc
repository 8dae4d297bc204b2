// Binary format version 4: a module as a table of version 3 shards, written
// and loaded in parallel; the default for large modules.
#include <gtest/gtest.h>

#include <cstring>

#include "ir/op.h"
#include "ir/parallel.h"
#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/support/crc32c.h"
#include "ir/verifier.h"
#include "testing/ir_test_util.h"
#include "testing/random_module.h"

namespace plir {
namespace {

std::string Concat(const BinaryParts& p) {
  std::string s;
  for (std::string_view piece : p.pieces) s.append(piece);
  return s;
}
std::string Shards(const Module& m, size_t k) { return Concat(SaveBinaryShards(m, k)); }
uint32_t VersionOf(const std::string& b) {
  uint32_t v;
  std::memcpy(&v, b.data() + 8, 4);
  return v;
}
uint64_t U64At(const std::string& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void PutU64(std::string* b, size_t at, uint64_t v) { std::memcpy(&(*b)[at], &v, 8); }
// Recomputes the shard table's checksum (bytes 32 to the first shard).
void Reseal(std::string* b) {
  uint64_t k = U64At(*b, 32);
  uint64_t first = (40 + 8 * k + 63) / 64 * 64;
  PutU64(b, 24, Crc32c(std::string_view(*b).substr(32, first - 32)));
}
// Where shard `s` of a well-formed file starts.
size_t ShardAt(const std::string& b, size_t s) {
  uint64_t k = U64At(b, 32);
  size_t at = (40 + 8 * k + 63) / 64 * 64;
  for (size_t i = 0; i < s; ++i) at += (U64At(b, 40 + 8 * i) + 63) / 64 * 64;
  return at;
}
Module Many(size_t bindings, size_t per_function, uint64_t seed = 7) {
  testing::RandomModuleOptions o;
  o.seed = seed;
  o.num_bindings = bindings;
  o.bindings_per_function = per_function;
  return testing::GenerateRandomModule(o);
}

TEST(BinaryV4Test, ShardsRoundTripInOrderAndLoadLikeVersion3) {
  Module m = Many(400, 10);
  ASSERT_GE(m.size(), 20u);
  for (size_t k : {size_t{2}, size_t{3}, size_t{7}, m.size()}) {
    std::string b = Shards(m, k);
    ASSERT_EQ(VersionOf(b), 4u);
    EXPECT_EQ(U64At(b, 32), k);
    EXPECT_EQ(b.size() % 64, 0u);
    auto back = LoadBinary(b);
    ASSERT_TRUE(back.ok()) << back.status().message();
    ASSERT_EQ(back->size(), m.size());
    for (size_t i = 0; i < m.size(); ++i) EXPECT_EQ(back->items()[i]->name(), m.items()[i]->name());
    EXPECT_TRUE(StructuralEqual(m, *back, true)) << "k=" << k;
  }
  // Asked for more shards than items: one an item.
  EXPECT_EQ(U64At(Shards(m, 5000), 32), std::min<size_t>(m.size(), 1024));
}

TEST(BinaryV4Test, OneShardOrOneItemIsVersion3) {
  Module m = Many(400, 10);
  BinarySaveOptions v3;
  v3.version = 3;
  EXPECT_EQ(Shards(m, 1), SaveBinary(m, v3));
  Module one = *Module::Make({m.items()[0]});
  EXPECT_EQ(Shards(one, 8), SaveBinary(one, v3));
  // The default (version 4) keeps small modules in version 3.
  EXPECT_EQ(SaveBinary(m), SaveBinary(m, v3));
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir")) {
    Module e = testing::ParseOrFail(testing::ReadTestFile(f));
    EXPECT_EQ(VersionOf(SaveBinary(e)), 3u) << f;
  }
}

TEST(BinaryV4Test, LargeModulesAreShardedByDefaultTheSameOnAnyNumberOfThreads) {
  Module m = Many(20000, 50);
  std::string b = SaveBinary(m);
  ASSERT_EQ(VersionOf(b), 4u);
  EXPECT_GE(U64At(b, 32), 2u);
  int before = DefaultThreads();
  SetDefaultThreads(1);
  std::string serial = SaveBinary(m);
  auto loaded = LoadBinary(b);
  SetDefaultThreads(before);
  EXPECT_EQ(serial, b);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(StructuralEqual(m, *loaded, true));
  EXPECT_EQ(SaveBinary(*loaded), b);
  // The pieces are the bytes.
  EXPECT_EQ(Concat(SaveBinaryParts(m)), b);
}

// Four functions, of which f0 and f<other> bind the same variable (an
// ill-formed module).
Module SharingAVariable(int other) {
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var a = VarNode::Make("a", t);
  std::vector<Item> items;
  for (int i = 0; i < 4; ++i) {
    Var p = VarNode::Make("p", t);
    Expr v = *MakeOpCall("add", {p, p});
    const bool shared = i == 0 || i == other;
    items.push_back(FunctionNode::Make(
        "f" + std::to_string(i), {p}, nullptr,
        SeqExprNode::Make(
            {BindingBlockNode::Make({VarBindingNode::Make(shared ? a : p, v)}, false)},
            shared ? Expr(a) : Expr(p))));
  }
  return *Module::Make(items);
}

// An ill-formed module whose variable is bound in two functions keeps it
// one variable: it is not split into shards that would each make their own.
TEST(BinaryV4Test, AVariableSharedByTwoFunctionsIsNotSplit) {
  // f0 and f<other> bind the same variable: in two shards, or (2 shards of
  // 4 functions, f0 and f1) within one.
  for (auto [shards, other] : {std::pair{4, 3}, std::pair{2, 3}, std::pair{2, 1}}) {
    Module m = SharingAVariable(other);
    std::string b = Shards(m, shards);
    EXPECT_EQ(VersionOf(b), 3u) << shards << " shards, f0 and f" << other;
    auto back = LoadBinary(b);
    ASSERT_TRUE(back.ok()) << back.status().message();
    auto bound = [](const Module& mod, const std::string& name) {
      return mod.LookupFunction(name)->body()->blocks()[0]->bindings()[0]->var().get();
    };
    EXPECT_EQ(bound(*back, "f0"), bound(*back, "f" + std::to_string(other)))
        << shards << " shards, f0 and f" << other;
  }
}

// SaveVerifiedBinaryParts skips that check (plir-opt writes a module the
// verifier passes, or does not keep the file): the same bytes for a module
// that verifies, in every version. Its premise: the verifier rejects a
// variable in two items, whichever two.
TEST(BinaryV4Test, AVerifiedModuleIsWrittenTheSameWithoutTheCheck) {
  Module m = Many(20000, 50);
  ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
  for (int version : {2, 3, 4}) {
    BinarySaveOptions o;
    o.version = version;
    EXPECT_EQ(Concat(SaveVerifiedBinaryParts(m, o)), SaveBinary(m, o)) << "version " << version;
  }
  ASSERT_EQ(VersionOf(SaveBinary(m)), 4u);
  for (int other : {1, 2, 3}) {
    Status s = Verify(SharingAVariable(other));
    EXPECT_FALSE(s.ok()) << "f0 and f" << other;
  }
}

// SaveVerifiedBinaryTo into a file (a sink with write_at) puts each shard
// out as it is done, its node chunks then serving later shards, and the
// shard table last over zeros: the same bytes as SaveVerifiedBinaryParts,
// in every version, with or without write_at.
TEST(BinaryV4Test, WrittenShardByShardToAFileTheBytesAreTheSame) {
  Module m = Many(70000, 50);  // 16 shards of about 4,400 bindings
  ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
  for (int version : {2, 3, 4}) {
    BinarySaveOptions o;
    o.version = version;
    const std::string want = Concat(SaveVerifiedBinaryParts(m, o));
    for (bool seekable : {true, false}) {
      std::string file;
      int writes_at = 0;
      BinarySink sink;
      sink.append = [&](std::string_view b) {
        file.append(b);
        return Status::Ok();
      };
      if (seekable)
        sink.write_at = [&](uint64_t at, std::string_view b) {
          ++writes_at;
          if (at > file.size() || b.size() > file.size() - at) return Internal("past the end");
          // Only zeros are overwritten: the place the table was kept.
          EXPECT_EQ(file.substr(at, b.size()), std::string(b.size(), '\0'));
          file.replace(at, b.size(), b);
          return Status::Ok();
        };
      ASSERT_TRUE(SaveVerifiedBinaryTo(m, o, sink).ok());
      EXPECT_EQ(file, want) << "version " << version << (seekable ? ", seekable" : "");
      EXPECT_EQ(writes_at, seekable && version == 4 ? 1 : 0) << "version " << version;
    }
  }
  ASSERT_EQ(VersionOf(SaveBinary(m)), 4u);
  ASSERT_EQ(U64At(SaveBinary(m), 32), 16u);

  // A sink's error ends the write and is returned; the table is not written.
  int appends = 0, writes_at = 0;
  BinarySink failing;
  failing.append = [&](std::string_view) {
    return ++appends == 3 ? Internal("disk full") : Status::Ok();
  };
  failing.write_at = [&](uint64_t, std::string_view) {
    ++writes_at;
    return Status::Ok();
  };
  Status s = SaveVerifiedBinaryTo(m, BinarySaveOptions{}, failing);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("disk full"), std::string::npos) << s.message();
  EXPECT_EQ(writes_at, 0);
}

TEST(BinaryV4Test, ConstantsInShardsBorrowTheBytesAndTheirChecksumIsChecked) {
  auto type = TensorTypeNode::Make({Dim::Const(256)}, DataType::kUInt8);
  std::vector<Item> items;
  for (int i = 0; i < 4; ++i) {
    Expr c =
        *ConstantNode::Make(type, CopyTensorBytes(std::string(256, static_cast<char>('a' + i))));
    items.push_back(
        FunctionNode::Make("w" + std::to_string(i), {}, type, SeqExprNode::Make({}, c)));
  }
  Module m = *Module::Make(items);
  std::string b = Shards(m, 4);
  ASSERT_EQ(VersionOf(b), 4u);
  // 64-aligned, owned by the keepalive.
  std::shared_ptr<char> buf(static_cast<char*>(std::aligned_alloc(64, b.size())), std::free);
  std::memcpy(buf.get(), b.data(), b.size());
  BinaryLoadOptions o;
  o.keepalive = buf;
  auto back = LoadBinary(std::string_view(buf.get(), b.size()), o);
  ASSERT_TRUE(back.ok()) << back.status().message();
  for (const Item& item : back->items()) {
    auto* c = static_cast<const ConstantNode*>(
        static_cast<const FunctionNode*>(item.get())->body()->result().get());
    EXPECT_TRUE(c->data().borrowed()) << item->name();
  }
  EXPECT_TRUE(StructuralEqual(m, *back, true));
  // A flipped weight byte in the third shard: loading does not read the
  // data; checking it names the shard.
  size_t last_byte = ShardAt(b, 3) - 1;
  while (b[last_byte] == 0) --last_byte;  // the padding after shard 2
  b[last_byte] ^= 1;
  EXPECT_TRUE(LoadBinary(b).ok());
  Status st = VerifyBinaryTensorData(b);
  EXPECT_NE(st.message().find("shard 2 of 4: tensor data checksum mismatch"), std::string::npos)
      << st.message();
}

TEST(BinaryV4Test, CorruptTablesAndShardsAreCleanErrorsNamingTheShard) {
  Module m = Many(400, 10);
  const std::string good = Shards(m, 3);
  ASSERT_EQ(VersionOf(good), 4u);
  auto error = [](const std::string& b) {
    auto r = LoadBinary(b);
    return r.ok() ? std::string("loaded") : r.status().message();
  };
  auto contains = [&](const std::string& b, const std::string& want) {
    std::string e = error(b);
    EXPECT_NE(e.find(want), std::string::npos) << e;
  };
  std::string b = good;
  b[40] ^= 1;  // a shard size, checksum not updated
  contains(b, "checksum mismatch (the shard table");
  for (uint64_t k : {uint64_t{0}, uint64_t{1}, uint64_t{1025}, ~uint64_t{0}}) {
    b = good;
    PutU64(&b, 32, k);
    contains(b, "shard count " + std::to_string(k));
  }
  b = good;
  PutU64(&b, 40, U64At(b, 40) + (1 << 30));
  Reseal(&b);
  contains(b, "shard 0 (");
  b = good;
  PutU64(&b, 40, U64At(b, 40) + 64);  // shard 0 swallows the start of shard 1
  Reseal(&b);
  std::string e = error(b);
  EXPECT_EQ(e.rfind("corrupt binary module: ", 0), 0u) << e;
  b = good;
  b[ShardAt(b, 1) + 8] = 2;  // shard 1 claims version 2
  contains(b, "shard 1 is not a version 3 module");
  b = good;
  b[ShardAt(b, 2) + 200] ^= 0x40;  // inside shard 2's sections
  contains(b, "shard 2 of 3: checksum mismatch");
  b = good;
  b[b.size() - 1] = 1;  // the last shard's padding, if it has any
  if (U64At(b, 40 + 16) % 64) contains(b, "shard 2 is not followed by zeros");
  b = good + std::string(64, '\0');
  PutU64(&b, 16, b.size() - 32);
  contains(b, "64 bytes after the last shard");
  // Two shards that each hold a function of the same name.
  Module f1 = Many(40, 10, 1), f2 = Many(40, 10, 1);
  std::vector<Item> twice = f1.items();
  for (const Item& i : f2.items()) twice.push_back(i);
  std::string s1 = Shards(f1, 2), s2 = Shards(f2, 2);
  // Build a 4-shard file from the shards of the two 2-shard files.
  auto shard = [](const std::string& f, size_t i) {
    return f.substr(ShardAt(f, i), U64At(f, 40 + 8 * i));
  };
  std::vector<std::string> parts = {shard(s1, 0), shard(s1, 1), shard(s2, 0), shard(s2, 1)};
  std::string dup = good.substr(0, 32);
  std::string table(8, '\0');
  PutU64(&table, 0, 4);
  for (const std::string& p : parts) {
    table.append(8, '\0');
    PutU64(&table, table.size() - 8, p.size());
  }
  table.resize((table.size() + 32 + 63) / 64 * 64 - 32, '\0');
  dup += table;
  for (const std::string& p : parts) {
    dup += p;
    dup.resize((dup.size() + 63) / 64 * 64, '\0');
  }
  PutU64(&dup, 16, dup.size() - 32);
  Reseal(&dup);
  contains(dup, "corrupt binary module: ");
  contains(dup, f1.items()[0]->name());
}

TEST(BinaryV4Test, EveryTruncationIsACleanError) {
  Module m = Many(200, 10);
  const std::string good = Shards(m, 4);
  for (size_t n = 0; n < good.size(); n += 1 + n / 16) {
    auto r = LoadBinary(std::string_view(good).substr(0, n));
    EXPECT_FALSE(r.ok()) << n;
  }
}

}  // namespace
}  // namespace plir
