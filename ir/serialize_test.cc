// JSON and binary round trips: structural equality, variable identity and
// sharing preserved, versioned headers, clean errors.
#include "ir/serialize.h"

#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/verifier.h"
#include "testing/ir_test_util.h"
#include "testing/random_module.h"

namespace plir {
namespace {

using Saver = std::string (*)(const Module&);
using Loader = StatusOr<Module> (*)(std::string_view);

class SerializeTest : public ::testing::TestWithParam<std::pair<Saver, Loader>> {
 protected:
  Module RoundTrip(const Module& m) {
    auto r = GetParam().second(GetParam().first(m));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : Module();
  }
};

TEST_P(SerializeTest, SpecExamplesRoundTrip) {
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir")) {
    Module m = testing::ParseOrFail(testing::ReadTestFile(f));
    Module back = RoundTrip(m);
    auto mm = FindFirstMismatch(m, back);
    EXPECT_FALSE(mm) << f << ": " << mm->ToString();
    EXPECT_TRUE(PrintModule(m) == PrintModule(back)) << f;
    EXPECT_TRUE(Verify(back).ok());
  }
}

TEST_P(SerializeTest, RandomModulesRoundTrip) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    testing::RandomModuleOptions o;
    o.seed = seed;
    o.num_bindings = 400;
    Module m = testing::GenerateRandomModule(o);
    Module back = RoundTrip(m);
    auto mm = FindFirstMismatch(m, back);
    EXPECT_FALSE(mm) << "seed " << seed << ": " << mm->ToString();
    EXPECT_EQ(StructuralHash(m), StructuralHash(back));
    EXPECT_TRUE(PrintModule(m) == PrintModule(back)) << "printed forms differ, seed " << seed;
  }
}

TEST_P(SerializeTest, SharingAndVariableIdentityArePreserved) {
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t);
  Expr shared = *MakeOpCall("add", {x, x});  // one node used twice
  Var a = VarNode::Make("a", t);
  Expr pair = TupleNode::Make({shared, shared});
  Function f = FunctionNode::Make("f", {x}, nullptr,
                                  SeqExprNode::Make({BindingBlockNode::Make({VarBindingNode::Make(a, shared)}, false)}, pair));
  Module back = RoundTrip(*Module::Make({f}));
  Function g = back.LookupFunction("f");
  ASSERT_TRUE(g);
  auto* tuple = As<TupleNode>(g->body()->result());
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->fields()[0].get(), tuple->fields()[1].get());  // shared again
  EXPECT_EQ(g->body()->blocks()[0]->bindings()[0]->value().get(), tuple->fields()[0].get());
  auto* call = As<CallNode>(tuple->fields()[0]);
  EXPECT_EQ(call->args()[0].get(), g->params()[0].get());  // the same variable
  EXPECT_EQ(call->args()[1].get(), g->params()[0].get());
}

INSTANTIATE_TEST_SUITE_P(Formats, SerializeTest,
                         ::testing::Values(std::pair<Saver, Loader>{&SaveJson, &LoadJson},
                                           std::pair<Saver, Loader>{&SaveBinary, &LoadBinary}));

// Published FNV-1a 64-bit test vectors (the FNV reference test suite).
TEST(ChecksumTest, Fnv1a64MatchesPublishedVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);  // the offset basis
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
  // One step by hand: (basis ^ byte) * prime mod 2^64.
  EXPECT_EQ(Fnv1a64(std::string_view("\0", 1)), 0xcbf29ce484222325ull * 0x100000001b3ull);
}

TEST(BinaryFormatTest, HeaderIsChecked) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  std::string b = SaveBinary(m);
  EXPECT_EQ(b.compare(0, 8, std::string(kBinaryMagic, 8)), 0);
  std::string bad_magic = b;
  bad_magic[1] = 'X';
  EXPECT_NE(LoadBinary(bad_magic).status().message().find("bad magic"), std::string::npos);
  std::string bad_version = b;
  bad_version[8] = 9;
  EXPECT_NE(LoadBinary(bad_version).status().message().find("format version 9"), std::string::npos);
  std::string flipped = b;
  flipped[b.size() - 3] ^= 0x40;
  EXPECT_NE(LoadBinary(flipped).status().message().find("checksum mismatch"), std::string::npos);
  EXPECT_NE(LoadBinary(b.substr(0, b.size() - 1)).status().message().find("payload bytes"), std::string::npos);
  EXPECT_FALSE(LoadBinary("").ok());
}

TEST(BinaryFormatTest, ConstantsAreRawBytes) {
  Module m = testing::ParseOrFail("def @f() { const<Tensor[(4,), uint8]>x\"deadbeef\" }");
  std::string b = SaveBinary(m);
  EXPECT_NE(b.find("\xde\xad\xbe\xef"), std::string::npos);
}

TEST(JsonFormatTest, VersionAndErrors) {
  EXPECT_NE(LoadJson("{\"format\":\"plir\",\"version\":2,\"nodes\":[],\"items\":[]}").status().message().find("unsupported"),
            std::string::npos);
  EXPECT_NE(LoadJson("{").status().message().find("invalid JSON"), std::string::npos);
  EXPECT_NE(LoadJson("{\"format\":\"plir\",\"version\":1,\"nodes\":[{\"k\":\"Var\",\"c\":[5],\"n\":\"x\"}],\"items\":[]}")
                .status().message().find("node 0: child id out of range"),
            std::string::npos);
  EXPECT_NE(LoadJson("{\"format\":\"plir\",\"version\":1,\"nodes\":[{\"k\":\"ObjectType\"},{\"k\":\"Call\",\"c\":[0,0,0],\"nargs\":1,\"nsinfo\":0}],\"items\":[]}")
                .status().message().find("does not fit here"),
            std::string::npos);
}

TEST(FormatDetectionTest, ByMagicOrBrace) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  EXPECT_EQ(DetectFormat(SaveBinary(m)), ModuleFormat::kBinary);
  EXPECT_EQ(DetectFormat(SaveJson(m)), ModuleFormat::kJson);
  EXPECT_EQ(DetectFormat(PrintModule(m)), ModuleFormat::kText);
  for (const std::string& s : {SaveBinary(m), SaveJson(m), PrintModule(m)}) {
    auto r = LoadModule(s, "x");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(StructuralEqual(*r, m));
  }
}

}  // namespace
}  // namespace plir
