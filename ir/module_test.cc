// Module copies are O(1) handle copies; updates share untouched items.
#include <gtest/gtest.h>

#include "ir/module.h"
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
  EXPECT_EQ(m2.items()[0].get(), new_a.get());          // replaced in place
  EXPECT_EQ(m2.items()[1].get(), m.items()[1].get());   // shared
  EXPECT_EQ(m2.items()[2].get(), m.items()[2].get());   // shared
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

}  // namespace
}  // namespace plir
