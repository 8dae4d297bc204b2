#include "ir/builder.h"

#include <gtest/gtest.h>

#include "ir/text/printer.h"
#include "ir/verifier.h"

namespace plir {
namespace {

TEST(BuilderTest, EmitsTypedBindingsInBlocks) {
  Type t = TensorTypeNode::Make({Dim::Const(2), Dim::Const(3)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t);
  BlockBuilder bb;
  Var a = *bb.EmitCall("add", {x, x}, Attrs(), {}, "a");  // ordinary block
  bb.BeginDataflowBlock();
  Var b = *bb.EmitCall("nn.relu", {a}, Attrs(), {}, "b");
  EXPECT_TRUE(b->is_dataflow());
  Var out = bb.EmitOutput(*MakeOpCall("multiply", {b, a}), "out");
  EXPECT_FALSE(out->is_dataflow());
  bb.EndBlock();
  SeqExpr body = bb.Finalize(out);
  ASSERT_EQ(body->blocks().size(), 2u);
  EXPECT_FALSE(body->blocks()[0]->is_dataflow());
  EXPECT_TRUE(body->blocks()[1]->is_dataflow());
  EXPECT_EQ(TypeToString(a->type()), "Tensor[(2, 3), float32]");
  Module m = *Module::Make({FunctionNode::Make("main", {x}, nullptr, body)});
  EXPECT_TRUE(Verify(m).ok()) << Verify(m).message();
  EXPECT_NE(PrintModule(m).find("output %out;"), std::string::npos);
}

TEST(BuilderTest, AnnotationsMustBeCompatible) {
  Var x = VarNode::Make("x", TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32));
  BlockBuilder bb;
  EXPECT_TRUE(bb.EmitAnnotated(x, TensorTypeNode::MakeRank(1, DataType::kFloat32), "ok").ok());
  auto bad = bb.EmitAnnotated(x, TensorTypeNode::MakeRank(1, DataType::kInt32), "bad");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bb.EmitCall("nn.relu", {x, x}).ok());
}

}  // namespace
}  // namespace plir
