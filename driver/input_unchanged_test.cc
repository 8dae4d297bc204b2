// The report that started PLIR, as a test: running a pipeline that rewrites
// conv2d.plir leaves the original module equal to a re-parse of the file,
// with the same hash; and a plugin that mutates its input through a
// const_cast is caught and named.
#include <gtest/gtest.h>

#include "driver/plugin_loader.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

class InputUnchangedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(loader_.LoadPath("testing/plugins/libplir_test_good.so").ok());
    ASSERT_TRUE(loader_.LoadPath("testing/plugins/libplir_test_misbehaving.so").ok());
    text_ = testing::ReadTestFile("examples/spec/conv2d.plir");
  }
  PipelineStep Step(const std::string& name) { return *MakePassStep(PassRegistry::Global(), name); }
  PluginLoader loader_;
  std::string text_;
};

TEST_F(InputUnchangedTest, RewritingPipelineLeavesTheInputAlone) {
  Module original = testing::ParseOrFail(text_);
  uint64_t hash_before = StructuralHash(original);
  std::string printed_before = PrintModule(original);
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
  ctx.instruments.push_back(std::make_shared<VerifyInstrument>());
  auto out = PassManager().Run({Step("TestBindResult"), Step("TestReluToSoftmax")}, original, ctx);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_FALSE(StructuralEqual(*out, original));  // the pass did rewrite
  EXPECT_TRUE(StructuralEqual(original, testing::ParseOrFail(text_)));
  EXPECT_EQ(StructuralHash(original), hash_before);
  EXPECT_EQ(PrintModule(original), printed_before);
}

TEST_F(InputUnchangedTest, MutatingPluginIsCaughtAndNamed) {
  Module original = testing::ParseOrFail(text_);
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
  auto out = PassManager().Run({Step("TestBindResult"), Step("TestMutatesInput")}, original, ctx);
  ASSERT_FALSE(out.ok());
  const std::string& msg = out.status().message();
  EXPECT_NE(msg.find("pass TestMutatesInput (plugin test_misbehaving"), std::string::npos) << msg;
  EXPECT_NE(msg.find("modified its input module (changed: @main)"), std::string::npos) << msg;
}

// A constant's bytes are hashed once and the hash kept in the node; the
// instrument must still see a write into them.
TEST_F(InputUnchangedTest, WriteIntoAConstantsBytesIsCaught) {
  Module original = testing::ParseOrFail(
      "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n"
      "  %y = add(%x, const<Tensor[(2,), float32]>[1, 2]);\n"
      "  %y\n"
      "}\n");
  StructuralHash(original);  // fills the constant's cached hash
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
  auto out = PassManager().Run({Step("TestMutatesConstant")}, original, ctx);
  ASSERT_FALSE(out.ok());
  const std::string& msg = out.status().message();
  EXPECT_NE(msg.find("pass TestMutatesConstant (plugin test_misbehaving"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("modified its input module (changed: @main)"), std::string::npos) << msg;
}

TEST_F(InputUnchangedTest, VerifierInstrumentNamesThePass) {
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<VerifyInstrument>());
  auto out = PassManager().Run({Step("TestBreaksModule")}, testing::ParseOrFail(text_), ctx);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(
      out.status().message().find("after pass TestBreaksModule: the module is not well-formed"),
      std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace plir
