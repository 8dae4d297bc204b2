// SplitByFunction / MergeShards: shards that verify on their own, a merge
// that restores the module byte for byte, and the errors of a bad merge.
#include "cli/module_shards.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "ir/serialize/serialize.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "testing/random_module.h"

namespace plir {
namespace {

constexpr char kCalls[] = R"(
extern @kernel(%x: Tensor[(2), float32]) -> Tensor[(2), float32]

def @leaf(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %a = add(%x, %x);
  %a
}

def @mid(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %a = @leaf(%x);
  %b = multiply(%a, %a);
  %b
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %a = @mid(%x);
  %b = @leaf(%a);
  %c = call_tir(@kernel, (%b,), sinfo_args=[Tensor[(2), float32]]);
  %c
}
)";

Module Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

std::set<std::string> Names(const Module& m, bool shard_externs) {
  std::set<std::string> out;
  for (const Item& item : m.items()) {
    const AttrValue* v = item->attrs().Get(kShardExternAttr);
    if (static_cast<bool>(v) == shard_externs) out.insert(item->name());
  }
  return out;
}

TEST(ModuleShards, CalleesInOtherShardsBecomeMarkedStubs) {
  Module m = Parse(kCalls);
  // The call graph of kCalls.
  std::map<std::string, std::set<std::string>> callees = {
      {"kernel", {}}, {"leaf", {}}, {"mid", {"leaf"}}, {"main", {"mid", "leaf", "kernel"}}};
  for (size_t n : {1, 2, 3, 4, 6}) {
    auto shards = SplitByFunction(m, n);
    ASSERT_TRUE(shards.ok()) << shards.status().message();
    ASSERT_EQ(shards->size(), n);
    std::vector<std::string> order;
    for (const Module& s : *shards) {
      EXPECT_TRUE(Verify(s).ok()) << Verify(s).message() << "\n" << PrintModule(s);
      std::set<std::string> owned = Names(s, false), wanted;
      for (const Item& item : s.items())
        if (owned.count(item->name())) order.push_back(item->name());
      for (const std::string& f : owned)
        for (const std::string& c : callees[f])
          if (!owned.count(c)) wanted.insert(c);
      // Exactly the callees owned elsewhere come along, as stubs.
      EXPECT_EQ(Names(s, true), wanted) << n << " shards:\n" << PrintModule(s);
    }
    // Every item owned once, in module order.
    EXPECT_EQ(order, (std::vector<std::string>{"kernel", "leaf", "mid", "main"})) << n;
  }
  // A function's stub keeps its signature and drops its body; an extern's
  // is a marked copy.
  auto shards = SplitByFunction(m, 4);
  ASSERT_TRUE(shards.ok());
  std::string text;
  for (const Module& s : *shards)
    if (Names(s, false).count("main")) text = PrintModule(s);
  EXPECT_NE(text.find("def @mid(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] attrs "
                      "{shard_extern = true} {\n  @mid(%x)\n}"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("multiply"), std::string::npos) << text;
  EXPECT_NE(text.find("extern @kernel(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] attrs "
                      "{shard_extern = true}"),
            std::string::npos)
      << text;
}

TEST(ModuleShards, MergeRestoresTheModuleExactly) {
  testing::RandomModuleOptions o;
  o.seed = 7;
  o.num_bindings = 600;
  o.bindings_per_function = 40;
  Module m = testing::GenerateRandomModule(o);
  ASSERT_GT(m.size(), 10u);
  for (size_t n : {1, 2, 3, 7, 40}) {
    auto shards = SplitByFunction(m, n);
    ASSERT_TRUE(shards.ok()) << shards.status().message();
    ASSERT_EQ(shards->size(), n);
    for (const Module& s : *shards) ASSERT_TRUE(Verify(s).ok()) << n << ":\n" << PrintModule(s);
    // Through the binary format, as the build actions pass them.
    std::vector<Module> reloaded;
    for (const Module& s : *shards) {
      auto r = LoadBinary(SaveBinary(s));
      ASSERT_TRUE(r.ok()) << r.status().message();
      reloaded.push_back(*r);
    }
    auto merged = MergeShards(reloaded);
    ASSERT_TRUE(merged.ok()) << merged.status().message();
    EXPECT_EQ(SaveBinary(*merged), SaveBinary(m)) << n << " shards";
    EXPECT_EQ(PrintModule(*merged), PrintModule(m)) << n << " shards";
  }
}

TEST(ModuleShards, ShardsAreBalancedBySize) {
  testing::RandomModuleOptions o;
  o.seed = 3;
  o.num_bindings = 2000;
  o.bindings_per_function = 50;
  Module m = testing::GenerateRandomModule(o);
  auto shards = SplitByFunction(m, 4);
  ASSERT_TRUE(shards.ok());
  size_t total = PrintModule(m).size();
  for (const Module& s : *shards) {
    size_t size = PrintModule(s).size();
    EXPECT_GT(size, total / 8) << PrintModule(s).substr(0, 200);
    EXPECT_LT(size, total / 2);
  }
}

TEST(ModuleShards, Errors) {
  Module m = Parse(kCalls);
  auto zero = SplitByFunction(m, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("at least 1"), std::string::npos);

  // More shards than items: the non-empty ones hold one item each, in
  // order (kernel, leaf, mid, main).
  auto many = SplitByFunction(m, 200);
  ASSERT_TRUE(many.ok());
  auto shards = std::make_optional<std::vector<Module>>();
  for (const Module& s : *many)
    if (!Names(s, false).empty()) shards->push_back(s);
  ASSERT_EQ(shards->size(), 4u);
  for (size_t k = 0; k < 4; ++k) ASSERT_EQ(Names((*shards)[k], false).size(), 1u) << k;
  auto merged_many = MergeShards(*many);
  ASSERT_TRUE(merged_many.ok());
  EXPECT_EQ(PrintModule(*merged_many), PrintModule(m));
  // Resplitting a shard (which holds marked stubs) is refused.
  auto again = SplitByFunction((*shards)[3], 2);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already a shard's stub"), std::string::npos)
      << again.status().message();
  // A shard given twice: its items have two owners.
  auto twice = MergeShards({(*shards)[0], (*shards)[1], (*shards)[1], (*shards)[2], (*shards)[3]});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("@leaf is in shard 1 and in shard 2"), std::string::npos)
      << twice.status().message();
  // A shard missing: another calls a function no shard defines.
  auto missing = MergeShards({(*shards)[0], (*shards)[2], (*shards)[3]});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("calls @leaf, which no shard defines"),
            std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace plir
