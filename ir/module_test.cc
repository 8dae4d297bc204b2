// Module copies are O(1) handle copies; updates share untouched items.
#include "ir/module.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/structural.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

Module Sample() {
  return testing::ParseOrFail(R"(
def @a(%x: Tensor[(2,), float32]) { nn.relu(%x) }
def @b(%x: Tensor[(2,), float32]) { add(%x, %x) }
extern @k(%x: Object) -> Object
)");
}

TEST(ModuleTest, CopySharesEverything) {
  Module m = Sample();
  Module copy = m;
  EXPECT_TRUE(copy.same_as(m));
  for (size_t i = 0; i < m.size(); ++i) EXPECT_EQ(copy.items()[i].get(), m.items()[i].get());
}

TEST(ModuleTest, ReplaceSharesUntouchedItems) {
  Module m = Sample();
  Function b = m.LookupFunction("b");
  Function new_a = FunctionNode::Make("a", b->params(), nullptr, b->body());
  Module m2 = m.WithItem(new_a);
  EXPECT_FALSE(m2.same_as(m));
  ASSERT_EQ(m2.size(), 3u);
  EXPECT_EQ(m2.items()[0].get(), new_a.get());         // replaced in place
  EXPECT_EQ(m2.items()[1].get(), m.items()[1].get());  // shared
  EXPECT_EQ(m2.items()[2].get(), m.items()[2].get());  // shared
  // The original is unchanged.
  EXPECT_NE(m.LookupFunction("a").get(), new_a.get());
  EXPECT_EQ(m.size(), 3u);
}

TEST(ModuleTest, AddAndRemove) {
  Module m = Sample();
  Function c = FunctionNode::Make("c", {}, nullptr, SeqExprNode::Make({}, PrimValueNode::Int(1)));
  Module added = m.WithItem(c);
  ASSERT_EQ(added.size(), 4u);
  EXPECT_EQ(added.items()[3].get(), c.get());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(added.items()[i].get(), m.items()[i].get());
  Module removed = added.Without("a");
  ASSERT_EQ(removed.size(), 3u);
  EXPECT_FALSE(removed.Contains("a"));
  EXPECT_EQ(removed.Lookup("b").get(), m.Lookup("b").get());
  EXPECT_EQ(removed.Lookup("c").get(), c.get());
  EXPECT_TRUE(removed.Without("zzz").same_as(removed));
}

TEST(ModuleTest, DuplicateNamesRejected) {
  Module m = Sample();
  std::vector<Item> items = m.items();
  items.push_back(m.items()[0]);
  auto r = Module::Make(items);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("@a is defined twice"), std::string::npos);
}

TEST(ModuleTest, LookupDistinguishesExterns) {
  Module m = Sample();
  EXPECT_TRUE(m.Lookup("k"));
  EXPECT_FALSE(m.LookupFunction("k"));
  EXPECT_FALSE(m.Lookup("missing"));
}

Item NamedItem(const std::string& name, int64_t value) {
  return FunctionNode::Make(name, {}, nullptr, SeqExprNode::Make({}, PrimValueNode::Int(value)));
}

// The persistent item list and name index against a plain vector model,
// across the sizes where the tries grow levels (32, 1024, 32768 items).
TEST(ModuleTest, RandomUpdatesMatchAVectorModel) {
  std::mt19937_64 rng(42);
  std::vector<Item> model;
  Module m;
  std::vector<Module> snapshots;
  for (int step = 0; step < 40000; ++step) {
    uint64_t r = rng() % 100;
    if (r < 70 || model.empty()) {  // add
      Item it = NamedItem("f" + std::to_string(step), step);
      model.push_back(it);
      m = m.WithItem(it);
    } else if (r < 97) {  // replace
      size_t i = rng() % model.size();
      Item it = NamedItem(model[i]->name(), -step);
      model[i] = it;
      m = m.WithItem(it);
    } else if (model.size() < 5000) {  // remove (O(F): only while small)
      size_t i = rng() % model.size();
      m = m.Without(model[i]->name());
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (step % 9973 == 0) snapshots.push_back(m);
  }
  ASSERT_EQ(m.size(), model.size());
  size_t i = 0;
  for (const Item& it : m.items()) {
    ASSERT_EQ(it.get(), model[i].get()) << i;
    ++i;
  }
  EXPECT_EQ(i, model.size());
  for (size_t k = 0; k < model.size(); k += 7) {
    EXPECT_EQ(m.items()[k].get(), model[k].get());
    EXPECT_EQ(m.Lookup(model[k]->name()).get(), model[k].get());
  }
  EXPECT_FALSE(m.Contains("f-1"));
  EXPECT_EQ(m.items().back().get(), model.back().get());
  // Older modules are untouched by later updates.
  for (const Module& s : snapshots) {
    std::vector<Item> items = s.items();
    EXPECT_EQ(items.size(), s.size());
    for (const Item& it : items) EXPECT_EQ(s.Lookup(it->name()).get(), it.get());
  }
}

TEST(ModuleTest, ReplacingAnItemSharesTheRestOfALargeModule) {
  std::vector<Item> items;
  for (int i = 0; i < 5000; ++i) items.push_back(NamedItem("f" + std::to_string(i), i));
  Module m = *Module::Make(items);
  Module m2 = m.WithItem(NamedItem("f2500", -1));
  for (int i = 0; i < 5000; ++i) {
    if (i == 2500) continue;
    ASSERT_EQ(m2.items()[i].get(), m.items()[i].get());
  }
  EXPECT_EQ(m.Lookup("f2500").get(), items[2500].get());
  EXPECT_NE(m2.Lookup("f2500").get(), items[2500].get());
}

}  // namespace
}  // namespace plir
