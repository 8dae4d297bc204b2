// Property tests over seeded random modules (testing/random_module.h).
#include <gtest/gtest.h>

#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "testing/random_module.h"

namespace plir {
namespace {

using testing::GenerateRandomModule;
using testing::RandomModuleOptions;

Module Generate(uint64_t seed, size_t bindings) {
  RandomModuleOptions o;
  o.seed = seed;
  o.num_bindings = bindings;
  o.bindings_per_function = std::max<size_t>(bindings / 3, 10);
  o.local_functions = seed >= 7;  // closures and calls of them too
  return GenerateRandomModule(o);
}

class PropertyTest : public ::testing::TestWithParam<std::pair<uint64_t, size_t>> {};

TEST_P(PropertyTest, GeneratedModulesVerify) {
  Module m = Generate(GetParam().first, GetParam().second);
  EXPECT_TRUE(Verify(m).ok()) << Verify(m).message();
}

TEST_P(PropertyTest, TextRoundTrip) {
  Module m = Generate(GetParam().first, GetParam().second);
  std::string printed = PrintModule(m);
  StatusOr<Module> parsed = ParseModule(printed);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  auto mismatch = FindFirstMismatch(m, *parsed);
  EXPECT_FALSE(mismatch) << mismatch->ToString();
  EXPECT_EQ(PrintModule(*parsed), printed);  // printing is a fixed point
  EXPECT_TRUE(Verify(*parsed).ok());
}

TEST_P(PropertyTest, HashAgreesWithEquality) {
  Module m = Generate(GetParam().first, GetParam().second);
  Module parsed = *ParseModule(PrintModule(m));
  Module copy = DeepCopy(m);
  EXPECT_TRUE(StructuralEqual(m, copy));
  EXPECT_EQ(StructuralHash(m), StructuralHash(parsed));
  EXPECT_EQ(StructuralHash(m), StructuralHash(copy));
  EXPECT_EQ(StructuralHash(m, true), StructuralHash(copy, true));
}

TEST_P(PropertyTest, AlphaRenamedBodiesEqualOnlyWithFreeVariableMapping) {
  Module m = Generate(GetParam().first, GetParam().second);
  Function f = m.LookupFunction("main");
  Function g = DeepCopy(f);
  // Inside the bodies the parameters are free variables, and they differ.
  EXPECT_FALSE(StructuralEqual(f->body(), g->body()));
  EXPECT_TRUE(StructuralEqual(f->body(), g->body(), /*map_free_vars=*/true));
  EXPECT_EQ(StructuralHash(f->body(), true), StructuralHash(g->body(), true));
}

TEST_P(PropertyTest, AnySingleChangeMakesItUnequal) {
  Module m = Generate(GetParam().first, GetParam().second);
  for (uint64_t k = 0; k < 8; ++k) {
    Module changed = testing::ApplySingleChange(m, GetParam().first * 131 + k);
    ASSERT_FALSE(changed.same_as(m));
    auto mismatch = FindFirstMismatch(m, changed);
    ASSERT_TRUE(mismatch) << "change " << k << " was not detected";
    EXPECT_FALSE(mismatch->path.empty());
    EXPECT_FALSE(StructuralEqual(m, changed, /*map_free_vars=*/true));
    EXPECT_NE(StructuralHash(m), StructuralHash(changed));
    // ... and the original module was not touched by the change.
    EXPECT_TRUE(StructuralEqual(m, DeepCopy(m)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, PropertyTest,
    ::testing::Values(std::pair<uint64_t, size_t>{1, 20}, std::pair<uint64_t, size_t>{2, 50},
                      std::pair<uint64_t, size_t>{3, 200}, std::pair<uint64_t, size_t>{4, 500},
                      std::pair<uint64_t, size_t>{5, 2000}, std::pair<uint64_t, size_t>{6, 5000},
                      std::pair<uint64_t, size_t>{7, 300}, std::pair<uint64_t, size_t>{8, 1000}));

TEST(LargePropertyTest, MillionBindingRoundTrip) {
  RandomModuleOptions o;
  o.seed = 42;
  o.num_bindings = 1000000;
  Module m = GenerateRandomModule(o);
  std::string printed = PrintModule(m);
  StatusOr<Module> parsed = ParseModule(printed);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_TRUE(StructuralEqual(m, *parsed));
  EXPECT_EQ(StructuralHash(m), StructuralHash(*parsed));
  EXPECT_TRUE(Verify(*parsed).ok());
}

}  // namespace
}  // namespace plir
