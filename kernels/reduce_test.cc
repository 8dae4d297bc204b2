// Reductions, arg-reductions and scans: ONNX's documented examples.
#include <limits>

#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

Tensor OnnxData() {  // ONNX ReduceSum / ReduceMean's example data, shape (3, 2, 2)
  return F32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 2, 2});
}

TEST(ReduceKernelTest, OnnxExamples) {
  Attrs keep1 = A("axis", L({1}), "keepdims", true);
  Tensor s = Eval("sum", {OnnxData()}, keep1);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(Values(s), (std::vector<double>{4, 6, 12, 14, 20, 22}));
  EXPECT_EQ(Values(Eval("mean", {OnnxData()}, keep1)), (std::vector<double>{2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(Values(Eval("max", {OnnxData()}, keep1)), (std::vector<double>{3, 4, 7, 8, 11, 12}));
  EXPECT_EQ(Values(Eval("min", {OnnxData()}, keep1)), (std::vector<double>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(Values(Eval("prod", {OnnxData()}, keep1)),
            (std::vector<double>{3, 8, 35, 48, 99, 120}));
  Tensor all = Eval("sum", {OnnxData()});
  EXPECT_EQ(all.shape, (std::vector<int64_t>{}));
  EXPECT_EQ(Values(all), (std::vector<double>{78}));
  Tensor k = Eval("mean", {OnnxData()}, A("keepdims", true));
  EXPECT_EQ(k.shape, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(Values(k), (std::vector<double>{6.5}));
  Tensor two = Eval("sum", {OnnxData()}, A("axis", L({0, -1})));
  EXPECT_EQ(two.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(Values(two), (std::vector<double>{33, 45}));
  EXPECT_TRUE(Near(Values(Eval("variance", {F32({1, 2, 3, 4})})), {1.25}));
  EXPECT_TRUE(Near(Values(Eval("std", {F32({1, 2, 3, 4})})), {1.118033988749895}));
  EXPECT_FALSE(Error("sum", {OnnxData()}, A("axis", L({3}))).empty());
  EXPECT_FALSE(Error("sum", {OnnxData()}, A("axis", L({1, 1}))).empty());
}

TEST(ReduceKernelTest, IntegersAreExact) {
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor s = Eval("sum", {Raw<int64_t>(DataType::kInt64, {big, 1, 1}, {3})});
  EXPECT_EQ(s.GetInt(0), big + 2);
  EXPECT_NE(
      Error("sum", {Raw<int64_t>(DataType::kInt64, {std::numeric_limits<int64_t>::max(), 1}, {2})})
          .find("overflow"),
      std::string::npos);
  EXPECT_FALSE(Error("prod", {T(DataType::kInt8, {16, 16})}).empty());
  EXPECT_EQ(Values(Eval("mean", {T(DataType::kInt32, {-3, -4})})),
            (std::vector<double>{-3}));  // truncated
  EXPECT_EQ(Values(Eval("max", {T(DataType::kUInt8, {3, 250, 7})})), (std::vector<double>{250}));
  EXPECT_FALSE(Error("variance", {T(DataType::kInt32, {1})}).empty());
}

TEST(ReduceKernelTest, EmptyReductions) {
  Tensor e = MakeTensor(DataType::kFloat32, {0, 3}, [](int64_t) { return 0.0; });
  EXPECT_EQ(Values(Eval("sum", {e}, A("axis", L({0})))), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(Values(Eval("prod", {e}, A("axis", L({0})))), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(Values(Eval("max", {e}, A("axis", L({0})))),
            (std::vector<double>{-INFINITY, -INFINITY, -INFINITY}));
  EXPECT_FALSE(Error("argmax", {e}, A("axis", 0)).empty());
  // A 0-size tensor reduced to a huge result is refused before allocation.
  Tensor h = MakeTensor(DataType::kFloat32, {0, int64_t{1} << 50}, [](int64_t) { return 0.0; });
  EXPECT_NE(Error("sum", {h}, A("axis", L({0}))).find("exceeds the limit"), std::string::npos);
}

TEST(ReduceKernelTest, ArgMaxArgMin) {
  // ONNX ArgMax's examples.
  Tensor d = F32({2, 1, 3, 10}, {2, 2});
  Tensor a0 = Eval("argmax", {d}, A("axis", 0, "keepdims", true));
  EXPECT_EQ(a0.dtype, DataType::kInt64);
  EXPECT_EQ(a0.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Values(a0), (std::vector<double>{1, 1}));
  Tensor a1 = Eval("argmax", {d}, A("axis", 1, "keepdims", true));
  EXPECT_EQ(a1.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Values(a1), (std::vector<double>{0, 1}));
  Tensor ties = F32({2, 2, 3, 10}, {2, 2});
  EXPECT_EQ(Values(Eval("argmax", {ties}, A("axis", 1))), (std::vector<double>{0, 1}));
  EXPECT_EQ(Values(Eval("argmax", {ties}, A("axis", 1, "select_last_index", true))),
            (std::vector<double>{1, 1}));
  EXPECT_EQ(Values(Eval("argmin", {d}, A("axis", 1))), (std::vector<double>{1, 0}));
  EXPECT_EQ(Values(Eval("argmin", {ties}, A("axis", 1, "select_last_index", true))),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(Values(Eval("argmax", {d})), (std::vector<double>{3}));  // flattened
  EXPECT_EQ(Values(Eval("argmax", {F32({1, NAN, 5})})), (std::vector<double>{1}));
  uint64_t m = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(Values(Eval("argmax", {Raw<uint64_t>(DataType::kUInt64, {m - 1, m, m - 2}, {3})})),
            (std::vector<double>{1}));
}

TEST(ReduceKernelTest, Argsort) {
  // ONNX TopK's example rows, sorted by hand; ties keep their order.
  Tensor x = F32({0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11}, {3, 4});
  Tensor up = Eval("argsort", {x});
  EXPECT_EQ(up.dtype, DataType::kInt64);
  EXPECT_EQ(up.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(Values(up), (std::vector<double>{0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3}));
  EXPECT_EQ(Values(Eval("argsort", {x}, A("descending", true))),
            (std::vector<double>{3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(Values(Eval("argsort", {x}, A("axis", 0, "descending", true))),
            (std::vector<double>{2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0}));
  Tensor ties = T(DataType::kInt32, {5, 3, 5, 3});
  EXPECT_EQ(Values(Eval("argsort", {ties})), (std::vector<double>{1, 3, 0, 2}));
  EXPECT_EQ(Values(Eval("argsort", {ties}, A("descending", true))),
            (std::vector<double>{0, 2, 1, 3}));
  EXPECT_EQ(Values(Eval("argsort", {F32({2, NAN, 1})})), (std::vector<double>{2, 0, 1}));
  uint64_t m = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(Values(Eval("argsort", {Raw<uint64_t>(DataType::kUInt64, {m, m - 1}, {2})})),
            (std::vector<double>{1, 0}));  // exact, though equal as doubles
  EXPECT_FALSE(Error("argsort", {F32({1, 2})}, A("axis", 1)).empty());
  EXPECT_FALSE(Error("argsort", {T(DataType::kBool, {1, 0})}).empty());
}

TEST(ReduceKernelTest, CumSum) {
  // ONNX CumSum's examples.
  Tensor x = T(DataType::kFloat64, {1, 2, 3, 4, 5});
  EXPECT_EQ(Values(Eval("cumsum", {x}, A("axis", 0))), (std::vector<double>{1, 3, 6, 10, 15}));
  EXPECT_EQ(Values(Eval("cumsum", {x}, A("axis", 0, "exclusive", true))),
            (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(Values(Eval("cumsum", {x}, A("axis", 0, "reverse", true))),
            (std::vector<double>{15, 14, 12, 9, 5}));
  EXPECT_EQ(Values(Eval("cumsum", {x}, A("axis", 0, "exclusive", true, "reverse", true))),
            (std::vector<double>{14, 12, 9, 5, 0}));
  Tensor m = T(DataType::kInt32, {1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(Values(Eval("cumsum", {m}, A("axis", 0))), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(Values(Eval("cumsum", {m}, A("axis", 1))), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(Values(Eval("cumsum", {m}, A("axis", -1, "reverse", true))),
            (std::vector<double>{6, 5, 3, 15, 11, 6}));
  Tensor flat = Eval("cumsum", {m});
  EXPECT_EQ(flat.shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(Values(flat), (std::vector<double>{1, 3, 6, 10, 15, 21}));
  EXPECT_EQ(Values(Eval("cumprod", {m}, A("axis", 1))), (std::vector<double>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(Values(Eval("cumprod", {m}, A("axis", 1, "exclusive", true))),
            (std::vector<double>{1, 1, 2, 1, 4, 20}));
  EXPECT_NE(Error("cumsum", {T(DataType::kInt8, {100, 100})}, A("axis", 0)).find("overflow"),
            std::string::npos);
  // Exclusive: the total after the last element is never stored.
  EXPECT_EQ(
      Values(Eval("cumsum", {T(DataType::kInt8, {100, 27, 100})}, A("axis", 0, "exclusive", true))),
      (std::vector<double>{0, 100, 127}));
  Tensor cast = Eval("cumsum", {T(DataType::kInt8, {100, 100})}, A("axis", 0, "dtype", "int32"));
  EXPECT_EQ(cast.dtype, DataType::kInt32);
  EXPECT_EQ(Values(cast), (std::vector<double>{100, 200}));
}

}  // namespace
}  // namespace plir
