// einsum: the equations of ONNX's Einsum tests (transpose, matmul, batch
// matmul, inner and outer products, trace, diagonal, ellipsis), by hand.
#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

Tensor Ein(const std::string& eq, const std::vector<Tensor>& ops) {
  return Eval("einsum", ops, A("subscripts", eq));
}

TEST(EinsumKernelTest, CommonEquations) {
  Tensor a = F32({1, 2, 3, 4}, {2, 2}), b = F32({5, 6, 7, 8}, {2, 2});
  EXPECT_EQ(Values(Ein("ij,jk->ik", {a, b})), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(Values(Ein("ij,jk", {a, b})),
            (std::vector<double>{19, 22, 43, 50}));  // implicit output
  EXPECT_EQ(Values(Ein("ij->ji", {a})), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(Values(Ein("ji", {a})),
            (std::vector<double>{1, 3, 2, 4}));                 // implicit: sorted labels (i, j)
  EXPECT_EQ(Values(Ein("ii", {a})), (std::vector<double>{5}));  // trace
  EXPECT_EQ(Values(Ein("ii->i", {a})), (std::vector<double>{1, 4}));  // diagonal
  EXPECT_EQ(Values(Ein("ij->", {a})), (std::vector<double>{10}));
  EXPECT_EQ(Values(Ein("ij->i", {a})), (std::vector<double>{3, 7}));
  Tensor x = F32({1, 2, 3}), y = F32({4, 5, 6});
  Tensor inner = Ein("i,i", {x, y});
  EXPECT_EQ(inner.shape, (std::vector<int64_t>{}));
  EXPECT_EQ(Values(inner), (std::vector<double>{32}));
  Tensor outer = Ein("i,j->ij", {x, F32({1, 10})});
  EXPECT_EQ(outer.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values(outer), (std::vector<double>{1, 10, 2, 20, 3, 30}));
  // Batch matmul and the batch diagonal with an ellipsis.
  Tensor p = F32({1, 2, 3, 4, 1, 0, 0, 1}, {2, 2, 2}), q = F32({1, 1, 1, 1, 2, 3, 4, 5}, {2, 2, 2});
  EXPECT_EQ(Values(Ein("bij,bjk->bik", {p, q})), (std::vector<double>{3, 3, 7, 7, 2, 3, 4, 5}));
  EXPECT_EQ(Values(Ein("...ij,...jk->...ik", {p, q})),
            (std::vector<double>{3, 3, 7, 7, 2, 3, 4, 5}));
  EXPECT_EQ(Values(Ein("...ii->...i", {p})), (std::vector<double>{1, 4, 1, 1}));
  // Ellipsis broadcast: (2, 2, 2) with (2, 2).
  EXPECT_EQ(Values(Ein("...ij,jk->...ik", {p, F32({1, 0, 0, 1}, {2, 2})})), Values(p));
}

TEST(EinsumKernelTest, IntegersAndErrors) {
  const int64_t big = int64_t{1} << 40;
  Tensor r = Ein("i,i", {Raw<int64_t>(DataType::kInt64, {big, 1}, {2}),
                         Raw<int64_t>(DataType::kInt64, {1000, 3}, {2})});
  EXPECT_EQ(r.GetInt(0), big * 1000 + 3);
  EXPECT_FALSE(Error("einsum", {F32({1, 2}), F32({1, 2, 3})}, A("subscripts", "i,i")).empty());
  EXPECT_FALSE(Error("einsum", {F32({1, 2})}, A("subscripts", "i,i")).empty());
  EXPECT_FALSE(Error("einsum", {F32({1, 2})}, A("subscripts", "i1")).empty());
  EXPECT_FALSE(Error("einsum", {F32({1, 2})}, A("subscripts", "i->ii")).empty());
  EXPECT_FALSE(Error("einsum", {F32({1, 2})}, A("subscripts", "i->j")).empty());
  Tensor v = MakeTensor(DataType::kFloat32, {2048}, [](int64_t) { return 1.0; });
  EXPECT_NE(Error("einsum", {v, v, v}, A("subscripts", "a,b,c->")).find("2^30"), std::string::npos);
}

}  // namespace
}  // namespace plir
