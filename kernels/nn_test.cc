// Convolutions: conv1d / conv3d and the transposed ones, by hand and from
// ONNX's ConvTranspose examples.
#include <limits>

#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

TEST(ConvKernelTest, Conv1d) {
  Tensor x = F32({1, 2, 3, 4, 5}, {1, 1, 5});
  Tensor w = F32({1, 0, -1}, {1, 1, 3});
  EXPECT_EQ(Values(Eval("nn.conv1d", {x, w})), (std::vector<double>{-2, -2, -2}));
  EXPECT_EQ(Values(Eval("nn.conv1d", {x, w}, A("padding", L({1})))),
            (std::vector<double>{-2, -2, -2, -2, 4}));
  EXPECT_EQ(Values(Eval("nn.conv1d", {x, w}, A("padding", L({1, 0}), "strides", L({2})))),
            (std::vector<double>{-2, -2}));
  EXPECT_EQ(Values(Eval("nn.conv1d", {x, F32({1, 1}, {1, 1, 2})}, A("dilation", L({2})))),
            (std::vector<double>{4, 6, 8}));
  // Groups: each channel with its own filter.
  Tensor g = Eval("nn.conv1d", {F32({1, 2, 3, 10, 20, 30}, {1, 2, 3}), F32({2, 3}, {2, 1, 1})},
                  A("groups", 2));
  EXPECT_EQ(g.shape, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Values(g), (std::vector<double>{2, 4, 6, 30, 60, 90}));
  EXPECT_FALSE(Error("nn.conv1d", {x, F32({1, 1, 1, 1, 1, 1}, {1, 1, 6})}).empty());
  EXPECT_FALSE(Error("nn.conv1d", {x, w}, A("groups", 2)).empty());
  EXPECT_FALSE(Error("nn.conv1d", {x, w}, A("strides", L({0}))).empty());
}

TEST(ConvKernelTest, Conv3dAndIntegers) {
  Tensor x = MakeTensor(DataType::kFloat32, {1, 1, 2, 2, 2}, [](int64_t) { return 1.0; });
  EXPECT_EQ(Values(Eval("nn.conv3d", {x, x})), (std::vector<double>{8}));
  Tensor y = Eval("nn.conv3d", {x, x}, A("padding", L({1})));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 1, 3, 3, 3}));
  EXPECT_EQ(y.GetDouble(0), 1);
  EXPECT_EQ(y.GetDouble(13), 8);  // the centre
  const int64_t big = int64_t{1} << 40;
  Tensor r = Eval("nn.conv1d", {Raw<int64_t>(DataType::kInt64, {big, 1}, {1, 1, 2}),
                                Raw<int64_t>(DataType::kInt64, {1000, 3}, {1, 1, 2})});
  EXPECT_EQ(r.GetInt(0), big * 1000 + 3);
  EXPECT_NE(Error("nn.conv1d", {Raw<int64_t>(DataType::kInt64, {big, 1}, {1, 1, 2}),
                                Raw<int64_t>(DataType::kInt64, {big, 3}, {1, 1, 2})})
                .find("overflow"),
            std::string::npos);
}

TEST(ConvKernelTest, Transposed) {
  // ONNX ConvTranspose's 1-D example: x [0, 1, 2], W ones (1, 2, 3).
  Tensor ones3 = MakeTensor(DataType::kFloat32, {1, 2, 3}, [](int64_t) { return 1.0; });
  Tensor y = Eval("nn.conv1d_transpose", {F32({0, 1, 2}, {1, 1, 3}), ones3});
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(Values(y), (std::vector<double>{0, 1, 3, 3, 2, 0, 1, 3, 3, 2}));
  // ONNX ConvTranspose's 2-D example: x 0..8 (3x3), W ones (1, 2, 3, 3).
  Tensor x2 = MakeTensor(DataType::kFloat32, {1, 1, 3, 3},
                         [](int64_t i) { return static_cast<double>(i); });
  Tensor w2 = MakeTensor(DataType::kFloat32, {1, 2, 3, 3}, [](int64_t) { return 1.0; });
  Tensor y2 = Eval("nn.conv2d_transpose", {x2, w2});
  EXPECT_EQ(y2.shape, (std::vector<int64_t>{1, 2, 5, 5}));
  std::vector<double> one = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                             27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<double> both = one;
  both.insert(both.end(), one.begin(), one.end());
  EXPECT_EQ(Values(y2), both);
  // Strides and output_padding: (2 - 1) * 2 + 2 + 1 = 5 outputs.
  Tensor s = Eval("nn.conv1d_transpose", {F32({1, 2}, {1, 1, 2}), F32({1, 1}, {1, 1, 2})},
                  A("strides", L({2}), "output_padding", L({1})));
  EXPECT_EQ(Values(s), (std::vector<double>{1, 1, 2, 2, 0}));
  // Padding crops the result.
  EXPECT_EQ(Values(Eval("nn.conv1d_transpose", {F32({1, 2}, {1, 1, 2}), F32({1, 1}, {1, 1, 2})},
                        A("strides", L({2}), "padding", L({1})))),
            (std::vector<double>{1, 2}));
  EXPECT_FALSE(
      Error("nn.conv1d_transpose", {F32({1, 2}, {1, 1, 2}), F32({1, 1}, {2, 1, 1})}).empty());
  Tensor x3 = MakeTensor(DataType::kFloat64, {1, 1, 1, 1, 1}, [](int64_t) { return 2.0; });
  Tensor w3 = MakeTensor(DataType::kFloat64, {1, 1, 2, 2, 2},
                         [](int64_t i) { return static_cast<double>(i); });
  EXPECT_EQ(Values(Eval("nn.conv3d_transpose", {x3, w3})),
            (std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14}));
}

}  // namespace
}  // namespace plir
