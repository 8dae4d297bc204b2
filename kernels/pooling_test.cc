// Pooling kernels: ONNX's MaxPool / AveragePool examples and hand-computed
// windows with padding, ceil_mode, dilation and count_include_pad.
#include <limits>

#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

Tensor Iota(std::vector<int64_t> shape, DataType dt = DataType::kFloat32) {
  return MakeTensor(dt, shape, [](int64_t i) { return static_cast<double>(i + 1); });
}

TEST(PoolingKernelTest, MaxAndAvg2d) {
  Tensor x = Iota({1, 1, 4, 4});
  Attrs a = A("pool_size", L({2, 2}), "strides", L({2, 2}));
  Tensor m = Eval("nn.max_pool2d", {x}, a);
  EXPECT_EQ(m.shape, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(Values(m), (std::vector<double>{6, 8, 14, 16}));
  EXPECT_EQ(Values(Eval("nn.avg_pool2d", {x}, a)), (std::vector<double>{3.5, 5.5, 11.5, 13.5}));
  // ONNX maxpool_2d_ceil: kernel 3, stride 2, ceil_mode.
  Tensor c = Eval("nn.max_pool2d", {x},
                  A("pool_size", L({3, 3}), "strides", L({2, 2}), "ceil_mode", true));
  EXPECT_EQ(c.shape, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(Values(c), (std::vector<double>{11, 12, 15, 16}));
  // ONNX maxpool_2d_dilations: kernel 2, dilation 2.
  EXPECT_EQ(Values(Eval("nn.max_pool2d", {x}, A("pool_size", L({2, 2}), "dilation", L({2, 2})))),
            (std::vector<double>{11, 12, 15, 16}));
}

TEST(PoolingKernelTest, OnnxMaxPoolPads) {
  // ONNX maxpool_2d_pads: 5x5 input 1..25, kernel 5, pads 2.
  Tensor y = Eval("nn.max_pool2d", {Iota({1, 1, 5, 5})},
                  A("pool_size", L({5, 5}), "padding", L({2, 2, 2, 2})));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 1, 5, 5}));
  EXPECT_EQ(Values(y), (std::vector<double>{13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                                            25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}));
}

TEST(PoolingKernelTest, AvgPoolPaddingAndCountIncludePad) {
  Tensor x = Iota({1, 1, 5, 5});
  Attrs base = A("pool_size", L({3, 3}), "padding", L({2}));
  Tensor ex = Eval("nn.avg_pool2d", {x}, base);
  EXPECT_EQ(ex.shape, (std::vector<int64_t>{1, 1, 7, 7}));
  // (0, 0): only x[0][0] = 1 is inside; (0, 1): x[0][0..1]; (2, 2): the 3x3 block at the corner.
  EXPECT_TRUE(Near({ex.GetDouble(0), ex.GetDouble(1), ex.GetDouble(2 * 7 + 2)},
                   {1, 1.5, (1 + 2 + 3 + 6 + 7 + 8 + 11 + 12 + 13) / 9.0}));
  Tensor in = Eval("nn.avg_pool2d", {x},
                   A("pool_size", L({3, 3}), "padding", L({2}), "count_include_pad", true));
  EXPECT_TRUE(Near({in.GetDouble(0), in.GetDouble(1)}, {1 / 9.0, 3 / 9.0}));
  // 1-D with asymmetric padding (begin 1, end 0): windows [-1, 1), [1, 3).
  Tensor one = Eval(
      "nn.avg_pool1d", {F32({2, 4, 6, 8}, {1, 1, 4})},
      A("pool_size", L({2}), "strides", L({2}), "padding", L({1, 0}), "count_include_pad", true));
  EXPECT_EQ(Values(one), (std::vector<double>{1, 5}));
}

TEST(PoolingKernelTest, ThreeDAndChannelsLast) {
  Tensor x = Iota({1, 1, 2, 2, 2});
  EXPECT_EQ(Values(Eval("nn.max_pool3d", {x}, A("pool_size", L({2, 2, 2})))),
            (std::vector<double>{8}));
  EXPECT_EQ(Values(Eval("nn.avg_pool3d", {x}, A("pool_size", L({2})))), (std::vector<double>{4.5}));
  // NHWC: two channels interleaved.
  Tensor nhwc = F32({1, 10, 2, 20, 3, 30, 4, 40}, {1, 2, 2, 2});
  Tensor m = Eval("nn.max_pool2d", {nhwc}, A("pool_size", L({2, 2}), "layout", "NHWC"));
  EXPECT_EQ(m.shape, (std::vector<int64_t>{1, 1, 1, 2}));
  EXPECT_EQ(Values(m), (std::vector<double>{4, 40}));
}

TEST(PoolingKernelTest, IntegerMaxPoolIsExact) {
  uint64_t big = std::numeric_limits<uint64_t>::max();
  Tensor x = Raw<uint64_t>(DataType::kUInt64, {big - 1, big, 3, big - 2}, {1, 1, 4});
  Tensor m = Eval("nn.max_pool1d", {x}, A("pool_size", L({2}), "strides", L({2})));
  uint64_t got[2];
  std::memcpy(got, m.data->data(), 16);
  EXPECT_EQ(got[0], big);
  EXPECT_EQ(got[1], big - 2);
  EXPECT_EQ(Values(Eval("nn.max_pool1d", {T(DataType::kInt8, {-5, -3, -100}, {1, 1, 3})},
                        A("pool_size", L({3})))),
            (std::vector<double>{-3}));
}

TEST(PoolingKernelTest, AdaptiveAndGlobal) {
  // ONNX GlobalAveragePool's example: 1..9 -> 5.
  Tensor g = Eval("nn.adaptive_avg_pool2d", {Iota({1, 1, 3, 3})}, A("output_size", L({1, 1})));
  EXPECT_EQ(g.shape, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(Values(g), (std::vector<double>{5}));
  EXPECT_EQ(Values(Eval("nn.adaptive_max_pool2d", {Iota({1, 1, 3, 3})}, A("output_size", L({1})))),
            (std::vector<double>{9}));
  // 5 -> 3: windows [0, 2), [1, 4), [3, 5).
  EXPECT_EQ(Values(Eval("nn.adaptive_avg_pool1d", {Iota({1, 1, 5})}, A("output_size", L({3})))),
            (std::vector<double>{1.5, 3, 4.5}));
  // Without output_size: the input's size (identity windows).
  EXPECT_EQ(Values(Eval("nn.adaptive_avg_pool1d", {Iota({1, 1, 3})})),
            (std::vector<double>{1, 2, 3}));
}

TEST(PoolingKernelTest, HostileAttributesAreErrors) {
  Tensor x = Iota({1, 1, 4, 4});
  EXPECT_FALSE(
      Error("nn.max_pool2d", {x}, A("pool_size", L({5, 5}))).empty());  // larger than the input
  EXPECT_FALSE(
      Error("nn.max_pool2d", {x}, A("pool_size", L({2, 2}), "strides", L({0, 1}))).empty());
  EXPECT_FALSE(Error("nn.max_pool2d", {x}, A("pool_size", L({2, 2, 2}))).empty());
  EXPECT_FALSE(Error("nn.max_pool2d", {Iota({4, 4})}, A("pool_size", L({2, 2}))).empty());
  EXPECT_FALSE(Error("nn.max_pool2d", {x}, A("layout", "HWCN")).empty());
  // Huge padding and a large window: refused by the size cap, no hang.
  EXPECT_FALSE(Error("nn.avg_pool2d", {x}, A("pool_size", L({1}), "padding", L({int64_t{1} << 40})))
                   .empty());
  EXPECT_FALSE(
      Error("nn.adaptive_avg_pool2d", {x}, A("output_size", L({int64_t{1} << 40, 1 << 20})))
          .empty());
  // A window of 2^30 taps on a 4-wide input is clipped to the input (no hang).
  int64_t k = int64_t{1} << 30;
  Tensor big = Eval("nn.max_pool1d", {Iota({1, 1, 4})},
                    A("pool_size", L({k}), "strides", L({k}), "padding", L({k - 2})));
  EXPECT_EQ(Values(big), (std::vector<double>{2, 4}));  // windows [-(k-2), 2) and [2, k + 2)
}

}  // namespace
}  // namespace plir
