// --check-execution's comparison, tolerance, binding report and the check
// before any pass runs.
#include "driver/execution_check.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/text/parser.h"

namespace plir {
namespace {

ValueRef Floats(std::vector<double> v, std::vector<int64_t> shape) {
  return Value::OfTensor(
      MakeTensor(DataType::kFloat32, std::move(shape), [&](int64_t i) { return v[i]; }));
}

TEST(ExecutionCheckTest, ParsesTolerances) {
  auto t = ParseTolerance("0.01");
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->rtol, 0.01);
  EXPECT_DOUBLE_EQ(t->atol, 1e-8);
  t = ParseTolerance("0,0.5");
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->rtol, 0);
  EXPECT_DOUBLE_EQ(t->atol, 0.5);
  for (const char* bad : {"", ",", "1,", "x", "-1", "1,2,3", "inf", "nan", "1e5x"})
    EXPECT_FALSE(ParseTolerance(bad).ok()) << bad;
}

TEST(ExecutionCheckTest, ComparesWithinTheToleranceAndFindsTheWorstElement) {
  Tolerance t{0.1, 0};
  EXPECT_TRUE(CompareValues(Floats({1, 2}, {2}), Floats({1.05, 2.1}, {2}), t).what.empty());
  ValueDifference d =
      CompareValues(Floats({1, 2, 3, 4}, {2, 2}), Floats({1, 2.5, 3, 2}, {2, 2}), t);
  EXPECT_DOUBLE_EQ(d.max_abs_error, 2);
  EXPECT_EQ(d.what, "max abs error 2 at index 3 ([1, 1]): 4 before, 2 after");
  d = CompareValues(Floats({1, 2}, {2}), Floats({1, 2}, {1, 2}), t);
  EXPECT_EQ(d.what, "was float32[2], is float32[1, 2]");
  ValueRef nan = Floats({NAN}, {1});
  EXPECT_TRUE(CompareValues(nan, nan, t).what.empty());
  EXPECT_FALSE(CompareValues(nan, Floats({0}, {1}), t).what.empty());
  d = CompareValues(Value::OfTuple({Floats({1}, {1}), Floats({1}, {1})}),
                    Value::OfTuple({Floats({1}, {1}), Floats({3}, {1})}), t);
  EXPECT_EQ(d.what, "field 1: max abs error 2 at index 0: 1 before, 3 after");
}

TEST(ExecutionCheckTest, NamesTheFirstBindingThatDiffers) {
  auto a = ParseModule(R"(def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %a = add(%x, %x);
  %b = multiply(%a, %x);
  %c = add(%b, %x);
  %c
})");
  auto b = ParseModule(R"(def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %a = add(%x, %x);
  %b2 = multiply(%a, %a);
  %c = add(%b2, %x);
  %c
})");
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<ValueRef> args = {Floats({1, 2}, {2})};
  auto first = FirstDifferingBinding(*a, *b, "main", args, Tolerance{});
  ASSERT_TRUE(first.ok()) << first.status().message();
  // %b is not in both; %c is: 2+1 = 3 vs 4+1 = 5, 8+2 = 10 vs 16+2 = 18.
  EXPECT_EQ(*first, "%c in @main: max abs error 8 at index 1: 10 before, 18 after");
  auto same = FirstDifferingBinding(*a, *a, "main", args, Tolerance{});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, "");
}

TEST(ExecutionCheckTest, AnEntryThatCannotRunFailsBeforeAnyPass) {
  auto m = ParseModule("def @main(%x: Tensor[(n), float32]) -> Tensor[(n), float32] { %x }");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto c = ExecutionChecker::Create(*m, {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("parameter x has type"), std::string::npos)
      << c.status().message();
  ExecutionCheckOptions other;
  other.entry = "absent";
  c = ExecutionChecker::Create(*m, other);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no function @absent"), std::string::npos);
}

TEST(ExecutionCheckTest, RandomInputsAreSeeded) {
  auto m = ParseModule("def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] { %x }");
  ASSERT_TRUE(m.ok());
  auto f = m->LookupFunction("main");
  auto a = MakeEntryArgs(*f, {.seed = 3});
  auto b = MakeEntryArgs(*f, {.seed = 3});
  auto c = MakeEntryArgs(*f, {.seed = 4});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(ValuesBitwiseEqual(a->args[0], b->args[0]));
  EXPECT_FALSE(ValuesBitwiseEqual(a->args[0], c->args[0]));
  EXPECT_EQ(a->description, "random inputs (seed 3)");
}

}  // namespace
}  // namespace plir
