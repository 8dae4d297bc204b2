#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

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

TEST(NodeTest, CellsFreedOnAThreadThatEndedServeTheNextThread) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under ASan every node is its own operator new";
#else
  // A size class no other test uses (249 to 256 bytes): thread A frees its
  // cells, ends, and leaves them to the pool; thread B, whose own list of
  // the class is empty, must take them rather than carve new ones.
  constexpr size_t kSize = 250;
  std::set<void*> freed;
  std::thread a([&] {
    std::vector<void*> cells;
    for (int i = 0; i < 100; ++i) cells.push_back(internal::AllocNodeMemory(kSize));
    for (void* p : cells) {
      freed.insert(p);
      internal::FreeNodeMemory(p, kSize);
    }
  });
  a.join();
  std::vector<void*> reused;
  std::thread b([&] {
    for (int i = 0; i < 100; ++i) reused.push_back(internal::AllocNodeMemory(kSize));
  });
  b.join();
  for (void* p : reused) EXPECT_TRUE(freed.count(p)) << p;
  for (void* p : reused) internal::FreeNodeMemory(p, kSize);
#endif
}

TEST(NodeTest, AsChecksKind) {
  Expr e = PrimValueNode::Int(3);
  EXPECT_NE(As<PrimValueNode>(e), nullptr);
  EXPECT_EQ(As<VarNode>(e), nullptr);
}

}  // namespace
}  // namespace plir
