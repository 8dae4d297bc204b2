#include <gtest/gtest.h>

#include "ir/expr.h"
#include "ir/op.h"

namespace plir {
namespace {

TEST(NodeTest, RefCountsShareOneNode) {
  Var x = VarNode::Make("x", ObjectTypeNode::Get());
  EXPECT_EQ(x->use_count(), 1u);
  {
    Var y = x;
    Expr e = x;
    EXPECT_EQ(x->use_count(), 3u);
    EXPECT_EQ(y.get(), x.get());
  }
  EXPECT_EQ(x->use_count(), 1u);
}

TEST(NodeTest, VariablesHaveIdentityNotName) {
  Var a = VarNode::Make("x", ObjectTypeNode::Get());
  Var b = VarNode::Make("x", ObjectTypeNode::Get());
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(a->name_hint(), b->name_hint());
}

TEST(NodeTest, DestroyingAVeryDeepTreeDoesNotRecurse) {
  // 1,000,000 nested tuples: a recursive destructor would overflow the stack.
  Expr e = PrimValueNode::Int(0);
  for (int i = 0; i < 1000000; ++i) e = TupleNode::Make({e});
  e = Expr();
  SUCCEED();
}

TEST(NodeTest, AsChecksKind) {
  Expr e = PrimValueNode::Int(3);
  EXPECT_NE(As<PrimValueNode>(e), nullptr);
  EXPECT_EQ(As<VarNode>(e), nullptr);
}

}  // namespace
}  // namespace plir
