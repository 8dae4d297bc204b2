// ScopedValueTable (ir/value_table.h), the SDK's table of values in scope
// that CommonSubexpressionElimination is built on.
#include "ir/value_table.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "testing/ir_test_util.h"

namespace plir {
namespace {

using testing::FindBinding;
using testing::ParseOrFail;

// ScopedValueTable: values equal by structure (variables by identity) are
// one entry; a scope removes what it inserted and restores the payloads it
// changed, also across nested scopes.
TEST(ScopedValueTableTest, FindsEqualValuesAndUndoesScopes) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %y);
  %b = add(%x, %y);
  %c = add(%y, %x);
  %d = (%x, %y);
  %e = (%x, %y);
  %f = nn.relu(%x);
  %g = multiply(%x, %y);
  %g
}
)");
  Function f = m.LookupFunction("main");
  ASSERT_TRUE(f);
  auto value = [&](const std::string& name) { return FindBinding(f, name)->value(); };
  ScopedValueTable<int> t;
  auto [a, a_new] = t.FindOrInsert(value("a"));
  EXPECT_TRUE(a_new);
  EXPECT_EQ(t.FindOrInsert(value("b")), std::make_pair(a, false));  // same op, same variables
  EXPECT_TRUE(t.FindOrInsert(value("c")).second);                   // the arguments swapped
  auto [d, d_new] = t.FindOrInsert(value("d"));                     // not a call: StructuralHash
  EXPECT_TRUE(d_new);
  EXPECT_EQ(t.FindOrInsert(value("e")), std::make_pair(d, false));
  t.Update(a) = 1;
  EXPECT_EQ(t.size(), 3u);

  t.PushScope();
  t.Update(a) = 2;                               // saved, then changed
  auto [g, g_new] = t.FindOrInsert(value("f"));  // added in the scope
  EXPECT_TRUE(g_new);
  t.Update(g) = 7;
  t.PushScope();
  t.Update(a) = 3;
  EXPECT_TRUE(t.FindOrInsert(value("g")).second);
  EXPECT_EQ(t.size(), 5u);
  t.PopScope();
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.payload(a), 2);
  EXPECT_EQ(t.payload(g), 7);
  EXPECT_EQ(t.FindOrInsert(value("f")), std::make_pair(g, false));
  t.PopScope();
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.payload(a), 1);
  EXPECT_TRUE(t.FindOrInsert(value("f")).second);  // gone with its scope
  t.Update(a) = 4;                                 // outside any scope: nothing saved
  EXPECT_EQ(t.payload(a), 4);
}

// More values under one first argument than a chain holds still find
// their entries, and a scope undoes insertions past the chain's limit.
TEST(ScopedValueTableTest, ManyValuesOfOneVariable) {
  std::string text =
      "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  %v0 = nn.relu(%x);\n";
  for (int i = 1; i <= 40; ++i)
    text += "  %v" + std::to_string(i) + " = add(%x, %v" + std::to_string(i - 1) + ");\n";
  text += "  %v40\n}\n";
  Module m = ParseOrFail(text);
  Function f = m.LookupFunction("main");
  ASSERT_TRUE(f);
  ScopedValueTable<int> t;
  std::vector<uint32_t> index;
  for (int i = 0; i <= 20; ++i) {
    auto [k, inserted] = t.FindOrInsert(FindBinding(f, "v" + std::to_string(i))->value());
    EXPECT_TRUE(inserted) << i;
    index.push_back(k);
  }
  t.PushScope();
  for (int i = 21; i <= 40; ++i)
    EXPECT_TRUE(t.FindOrInsert(FindBinding(f, "v" + std::to_string(i))->value()).second) << i;
  t.PopScope();
  for (int i = 0; i <= 20; ++i)
    EXPECT_EQ(t.FindOrInsert(FindBinding(f, "v" + std::to_string(i))->value()),
              std::make_pair(index[i], false))
        << i;
  for (int i = 21; i <= 40; ++i)
    EXPECT_TRUE(t.FindOrInsert(FindBinding(f, "v" + std::to_string(i))->value()).second) << i;
}

// BoundVars as CSE keeps them: the first variable inline, the others behind
// a pointer. A scope saves a deep copy (what the scope adds does not reach
// it), copies are independent, and EraseDataflow keeps the order of what
// stays.
TEST(BoundVarsTest, CopiesDeeplyAndErasesDataflowInOrder) {
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var a = VarNode::Make("a", t), c = VarNode::Make("c", t);
  Var b = VarNode::Make("b", t, /*is_dataflow=*/true), d = VarNode::Make("d", t, true);
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %v = negative(%x);
  %v
}
)");
  Expr value = FindBinding(m.LookupFunction("main"), "v")->value();
  ScopedValueTable<BoundVars> table;
  const uint32_t i = table.FindOrInsert(value).first;
  for (const Var& v : {b, a, c}) table.Update(i).push_back(v);
  table.PushScope();
  table.Update(i).push_back(d);  // the payload is saved first: b, a, c
  BoundVars inside = table.payload(i);
  table.PopScope();

  BoundVars restored = table.payload(i);  // b, a, c
  EXPECT_EQ(restored.front().get(), b.get());
  restored.EraseDataflow();  // a, c
  EXPECT_EQ(restored.front().get(), a.get());
  EXPECT_EQ(table.payload(i).front().get(), b.get());  // the table's own is untouched

  BoundVars copy = inside;  // b, a, c, d
  copy.EraseDataflow();     // a, c
  EXPECT_EQ(copy.front().get(), a.get());
  EXPECT_EQ(inside.front().get(), b.get());  // the copy's erase left `inside` alone
  BoundVars moved = std::move(inside);
  moved.EraseDataflow();
  EXPECT_EQ(moved.front().get(), a.get());

  BoundVars only_dataflow;
  only_dataflow.push_back(b);
  only_dataflow.push_back(d);
  only_dataflow.EraseDataflow();
  EXPECT_TRUE(only_dataflow.empty());
  // Order: c before a stays c first once the dataflow variables go.
  BoundVars order;
  for (const Var& v : {d, c, b, a}) order.push_back(v);
  order.EraseDataflow();
  EXPECT_EQ(order.front().get(), c.get());
}
}  // namespace
}  // namespace plir
