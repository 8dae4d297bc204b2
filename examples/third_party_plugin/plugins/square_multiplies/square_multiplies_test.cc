// Unit tests of an out-of-tree plugin with PLIR's public test helpers
// (@plir//testing:plugin_test_util): the plugin's op joins a fusion group of
// PLIR's own FuseOps, because it declares its pattern kind.
#include "ir/op.h"
#include "testing/plugin_test_util.h"

namespace plir::testing {
namespace {

void LoadPlugins() {
  LoadPluginOrFail("plugins/square_multiplies/libplir_square_multiplies.so");
  LoadPluginOrFail("external/plir/plugins/fuse_ops/libplir_fuse_ops.so");
}

TEST(SquareMultiplies, RegistersAnElementwiseOp) {
  LoadPlugins();
  Op square = OpRegistry::Global().Lookup("example.square");
  ASSERT_TRUE(square);
  EXPECT_EQ(square->pattern(), OpPattern::kElemWise);
  EXPECT_TRUE(square->pure());
}

TEST(SquareMultiplies, TheNewOpFusesWithCoreOps) {
  LoadPlugins();
  Module in = ParseOrFail(R"(
def @main(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  dataflow {
    %a = add(%x, %y);
    %b = multiply(%a, %a);
    %c = nn.relu(%b);
    output %c;
  }
  %c
}
)");
  Module out = RunPassesOrFail(in, {"SquareMultiplies", "FuseOps"});
  EXPECT_TRUE(ModulesEqual(out, R"(
def @fused_add_example_square_nn_relu(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) -> Tensor[(4,), float32] attrs {Primitive = true} {
  dataflow {
    %a = add(%x, %y);
    %b = example.square(%a);
    %c = nn.relu(%b);
    output %c;
  }
  %c
}
def @main(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  dataflow {
    %c = @fused_add_example_square_nn_relu(%x, %y);
    output %c;
  }
  %c
}
)"));
}

}  // namespace
}  // namespace plir::testing
