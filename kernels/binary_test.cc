// Binary elementwise kernels and where: ONNX's documented examples, exact
// integers, and errors for division by zero, overflow and bad shifts.
#include <limits>

#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

TEST(BinaryKernelTest, ModAndFloorMod) {
  // ONNX Mod (fmod=0): the sign of the divisor.
  Tensor x = T(DataType::kInt64, {-4, 7, 5, 4, -7, 8}),
         y = T(DataType::kInt64, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(Values(Eval("floor_mod", {x, y})), (std::vector<double>{0, -2, 5, 0, 2, 3}));
  // ONNX Mod (fmod=1): the sign of the dividend.
  EXPECT_EQ(Values(Eval("mod", {x, y})), (std::vector<double>{0, 1, 5, 0, -1, 3}));
  Tensor fx = F32({-4.3, 7.2, 5.0, 4.3, -7.2, 8.0}), fy = F32({2.1, -3.4, 8.0, -2.1, 3.4, 5.0});
  EXPECT_TRUE(Near(Values(Eval("mod", {fx, fy})), {-0.1, 0.4, 5, 0.1, -0.4, 3}));
  EXPECT_TRUE(Near(Values(Eval("floor_mod", {fx, fy})), {2.0, -3.0, 5, -2.0, 3.0, 3}));
  EXPECT_EQ(Values(Eval("floor_divide",
                        {T(DataType::kInt32, {-7, 7, 6}), T(DataType::kInt32, {2, 2, -4})})),
            (std::vector<double>{-4, 3, -2}));
  EXPECT_EQ(Values(Eval("floor_divide", {F32({-7}), F32({2})})), (std::vector<double>{-4}));
  EXPECT_NE(Error("floor_mod", {T(DataType::kInt32, {1}), T(DataType::kInt32, {0})})
                .find("division by zero"),
            std::string::npos);
  EXPECT_FALSE(Error("mod", {T(DataType::kUInt8, {1}), T(DataType::kUInt8, {0})}).empty());
}

TEST(BinaryKernelTest, PowerMaxMin) {
  EXPECT_EQ(Values(Eval("power",
                        {T(DataType::kInt32, {2, 3, -2, 0}), T(DataType::kInt32, {10, 3, 3, 0})})),
            (std::vector<double>{1024, 27, -8, 1}));
  EXPECT_NE(
      Error("power", {T(DataType::kInt32, {2}), T(DataType::kInt32, {31})}).find("int32 overflow"),
      std::string::npos);
  EXPECT_NE(Error("power", {T(DataType::kInt32, {3}), T(DataType::kInt32, {-1})})
                .find("negative exponent"),
            std::string::npos);
  EXPECT_EQ(Eval("power", {T(DataType::kInt64, {2}), T(DataType::kInt64, {62})}).GetInt(0),
            int64_t{1} << 62);
  EXPECT_EQ(Values(Eval("power", {T(DataType::kInt64, {-1}), T(DataType::kInt64, {-3})})),
            (std::vector<double>{-1}));
  // A huge exponent finishes at once (squaring, not a loop over y).
  EXPECT_FALSE(
      Error("power", {T(DataType::kInt64, {2}),
                      Raw<int64_t>(DataType::kInt64, {std::numeric_limits<int64_t>::max()}, {1})})
          .empty());
  EXPECT_TRUE(
      Near(Values(Eval("power", {F32({2, 4}), F32({0.5, -1})})), {1.4142135623730951, 0.25}));
  EXPECT_TRUE(Near(Values(Eval("maximum", {F32({1, NAN, 3}), F32({2, 0, -1})})), {2, NAN, 3}));
  EXPECT_EQ(Values(Eval("minimum", {T(DataType::kUInt16, {1, 60000}), T(DataType::kUInt16, {2})})),
            (std::vector<double>{1, 2}));
  EXPECT_EQ(Values(Eval("maximum", {T(DataType::kBool, {0, 1}), T(DataType::kBool, {0, 0})})),
            (std::vector<double>{0, 1}));
}

TEST(BinaryKernelTest, ComparisonsAreExactAndBool) {
  uint64_t m = std::numeric_limits<uint64_t>::max();
  Tensor a = Raw<uint64_t>(DataType::kUInt64, {m, m - 1}, {2}),
         b = Raw<uint64_t>(DataType::kUInt64, {m - 1}, {1});
  Tensor g = Eval("greater", {a, b});
  EXPECT_EQ(g.dtype, DataType::kBool);
  EXPECT_EQ(Values(g), (std::vector<double>{1, 0}));  // as doubles the two are equal
  EXPECT_EQ(Values(Eval("equal", {a, b})), (std::vector<double>{0, 1}));
  Tensor x = F32({1, 2, 3}), y = F32({2, 2, 2});
  EXPECT_EQ(Values(Eval("less", {x, y})), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(Values(Eval("less_equal", {x, y})), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(Values(Eval("greater_equal", {x, y})), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(Values(Eval("not_equal", {x, y})), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(Values(Eval("equal", {F32({NAN}), F32({NAN})})), (std::vector<double>{0}));
  // Broadcasting: (2, 1) against (3,).
  Tensor e = Eval("equal", {T(DataType::kInt8, {1, 2}, {2, 1}), T(DataType::kInt8, {1, 2, 3})});
  EXPECT_EQ(e.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values(e), (std::vector<double>{1, 0, 0, 0, 1, 0}));
}

TEST(BinaryKernelTest, LogicAndBitwise) {
  Tensor p = T(DataType::kBool, {1, 1, 0, 0}), q = T(DataType::kBool, {1, 0, 1, 0});
  EXPECT_EQ(Values(Eval("logical_and", {p, q})), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(Values(Eval("logical_or", {p, q})), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(Values(Eval("logical_xor", {p, q})), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(
      Values(Eval("bitwise_and", {T(DataType::kInt32, {12, -1}), T(DataType::kInt32, {10, 5})})),
      (std::vector<double>{8, 5}));
  EXPECT_EQ(Values(Eval("bitwise_or", {T(DataType::kUInt8, {12}), T(DataType::kUInt8, {10})})),
            (std::vector<double>{14}));
  EXPECT_EQ(
      Values(Eval("bitwise_xor", {T(DataType::kInt8, {12, -1}), T(DataType::kInt8, {10, 1})})),
      (std::vector<double>{6, -2}));
  EXPECT_FALSE(Error("bitwise_and", {F32({1}), F32({1})}).empty());
}

TEST(BinaryKernelTest, Shifts) {
  // ONNX BitShift's examples.
  Tensor x = T(DataType::kUInt8, {16, 4, 1}), y = T(DataType::kUInt8, {1, 2, 3});
  EXPECT_EQ(Values(Eval("right_shift", {x, y})), (std::vector<double>{8, 1, 0}));
  EXPECT_EQ(Values(Eval("left_shift", {x, y})), (std::vector<double>{32, 16, 8}));
  // Bits shifted out are lost; a shift by the width or more gives 0.
  EXPECT_EQ(
      Values(Eval("left_shift", {T(DataType::kUInt8, {200, 1}), T(DataType::kUInt8, {1, 8})})),
      (std::vector<double>{144, 0}));
  EXPECT_EQ(
      Values(Eval("right_shift", {T(DataType::kInt8, {-8, -8}), T(DataType::kInt8, {1, 100})})),
      (std::vector<double>{-4, -1}));
  EXPECT_EQ(Values(Eval("left_shift", {T(DataType::kInt8, {64}), T(DataType::kInt8, {1})})),
            (std::vector<double>{-128}));
  Tensor u = Eval("left_shift", {Raw<uint64_t>(DataType::kUInt64, {1}, {1}),
                                 Raw<uint64_t>(DataType::kUInt64, {63}, {1})});
  uint64_t got;
  std::memcpy(&got, u.data->data(), 8);
  EXPECT_EQ(got, uint64_t{1} << 63);
  EXPECT_NE(Error("left_shift", {T(DataType::kInt32, {1}), T(DataType::kInt32, {-1})})
                .find("negative shift"),
            std::string::npos);
}

TEST(BinaryKernelTest, Where) {
  // ONNX Where's example.
  Tensor c = T(DataType::kBool, {1, 0, 1, 1}, {2, 2});
  Tensor x = F32({1, 2, 3, 4}, {2, 2}), y = F32({9, 8, 7, 6}, {2, 2});
  EXPECT_EQ(Values(Eval("where", {c, x, y})), (std::vector<double>{1, 8, 3, 4}));
  // Broadcasting of all three: cond (2, 1), x scalar, y (3,).
  Tensor w = Eval("where", {T(DataType::kBool, {1, 0}, {2, 1}), Scalar(DataType::kInt64, 5),
                            T(DataType::kInt64, {1, 2, 3})});
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values(w), (std::vector<double>{5, 5, 5, 1, 2, 3}));
  EXPECT_FALSE(Error("where", {c, x, T(DataType::kInt32, {1})}).empty());
  EXPECT_FALSE(Error("where", {T(DataType::kBool, {1, 0, 1}), x, y}).empty());
}

TEST(BinaryKernelTest, HugeBroadcastIsRefusedBeforeAllocation) {
  Tensor a = MakeTensor(DataType::kFloat32, {1 << 20, 1}, [](int64_t) { return 0.0; });
  Tensor b = MakeTensor(DataType::kFloat32, {1, 1 << 20}, [](int64_t) { return 0.0; });
  EXPECT_NE(Error("add", {a, b}).find("exceeds the limit"), std::string::npos);
  EXPECT_NE(Error("less", {a, b}).find("exceeds the limit"), std::string::npos);
}

}  // namespace
}  // namespace plir
