// Softmax and the normalizations, by hand and from ONNX's examples.
#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

TEST(NormalizationKernelTest, SoftmaxAndLogSoftmax) {
  // ONNX LogSoftmax's example.
  EXPECT_TRUE(Near(Values(Eval("nn.log_softmax", {F32({-1, 0, 1}, {1, 3})})),
                   {-2.40760596, -1.40760596, -0.40760596}));
  EXPECT_TRUE(Near(Values(Eval("nn.softmax", {F32({-1, 0, 1}, {1, 3})})),
                   {0.09003057, 0.24472847, 0.66524096}));
  EXPECT_TRUE(Near(Values(Eval("nn.softmax", {F32({1, 3, 1, 3}, {2, 2})}, A("axis", 0))),
                   {0.5, 0.5, 0.5, 0.5}));
  EXPECT_FALSE(Error("nn.log_softmax", {F32({1})}, A("axis", 2)).empty());
  EXPECT_FALSE(Error("nn.softmax", {T(DataType::kInt32, {1})}).empty());
}

TEST(NormalizationKernelTest, LayerNorm) {
  Tensor x = F32({1, 2, 3, 4, 6, 8}, {2, 3});
  Tensor gamma = F32({2, 2, 2}), beta = F32({1, 1, 1});
  // Row 1: mean 2, variance 2/3; row 2: mean 6, variance 8/3.
  double r = 1 / std::sqrt(2.0 / 3);
  EXPECT_TRUE(
      Near(Values(Eval("nn.layer_norm", {x, gamma, beta}, A("axes", L({-1}), "epsilon", 0.0))),
           {1 - 2 * r, 1, 1 + 2 * r, 1 - 2 * r, 1, 1 + 2 * r}));
  // Over both axes: mean 4, variance 16/3 - ... computed by hand: values 1,2,3,4,6,8.
  double mean = 4, var = (9 + 4 + 1 + 0 + 4 + 16) / 6.0;
  Tensor g2 = F32({1, 1, 1, 1, 1, 1}, {2, 3}), b2 = F32({0, 0, 0, 0, 0, 0}, {2, 3});
  std::vector<double> want;
  for (double v : {1, 2, 3, 4, 6, 8}) want.push_back((v - mean) / std::sqrt(var + 1e-5));
  EXPECT_TRUE(Near(Values(Eval("nn.layer_norm", {x, g2, b2}, A("axes", L({0, 1})))), want));
  // scale=false, center=false ignore gamma and beta.
  EXPECT_TRUE(Near(Values(Eval("nn.layer_norm", {x, gamma, beta},
                               A("axes", L({1}), "epsilon", 0.0, "scale", false, "center", false))),
                   {-r, 0, r, -r, 0, r}));
  EXPECT_FALSE(Error("nn.layer_norm", {x, F32({1, 1}), beta}, A("axes", L({1}))).empty());
  Tensor h = Eval(
      "nn.layer_norm",
      {T(DataType::kFloat16, {1, 3}), T(DataType::kFloat16, {1, 1}), T(DataType::kFloat16, {0, 0})},
      A("axes", L({0})));
  EXPECT_EQ(h.dtype, DataType::kFloat16);
  EXPECT_TRUE(Near(Values(h), {-1, 1}));
}

TEST(NormalizationKernelTest, RmsNorm) {
  double rms = std::sqrt((9 + 16) / 2.0 + 1e-5);
  EXPECT_TRUE(Near(Values(Eval("nn.rms_norm", {F32({3, 4}), F32({1, 2})})), {3 / rms, 8 / rms}));
}

TEST(NormalizationKernelTest, BatchNorm) {
  Tensor x = F32({1, 2, 3, 4}, {1, 2, 1, 2});
  Tensor out =
      Eval("nn.batch_norm", {x, F32({1, 2}), F32({0, 1}), F32({1.5, 3.5}), F32({0.25, 0.25})},
           A("epsilon", 0.0));
  EXPECT_EQ(out.shape, x.shape);
  EXPECT_TRUE(Near(Values(out), {-1, 1, -1, 3}));
  // Channels last (axis=-1).
  Tensor xl = F32({1, 3, 2, 4}, {2, 2});
  EXPECT_TRUE(Near(Values(Eval("nn.batch_norm",
                               {xl, F32({1, 2}), F32({0, 1}), F32({1.5, 3.5}), F32({0.25, 0.25})},
                               A("axis", -1, "epsilon", 0.0))),
                   {-1, -1, 1, 3}));
  EXPECT_FALSE(
      Error("nn.batch_norm", {x, F32({1}), F32({0, 1}), F32({1.5, 3.5}), F32({0.25, 0.25})})
          .empty());
}

TEST(NormalizationKernelTest, GroupAndInstanceNorm) {
  Tensor x = F32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 4, 2});
  Tensor ones = F32({1, 1, 1, 1}), zeros = F32({0, 0, 0, 0});
  double s = std::sqrt(1.25 + 1e-5);  // each group: 4 values spaced by 1, variance 1.25
  std::vector<double> g = {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s};
  std::vector<double> want = g;
  want.insert(want.end(), g.begin(), g.end());
  EXPECT_TRUE(Near(Values(Eval("nn.group_norm", {x, ones, zeros}, A("num_groups", 2))), want));
  // Instance norm: every channel [a, a + 1] -> [-1, 1] (epsilon 0).
  EXPECT_TRUE(Near(Values(Eval("nn.instance_norm", {x, F32({1, 1, 2, 1}), F32({0, 0, 0, 5})},
                               A("epsilon", 0.0))),
                   {-1, 1, -1, 1, -2, 2, 4, 6}));
  EXPECT_FALSE(Error("nn.group_norm", {x, ones, zeros}, A("num_groups", 3)).empty());
  EXPECT_FALSE(
      Error("nn.group_norm", {x, ones, zeros}, A("num_groups", 2, "axes", L({1}))).empty());
}

}  // namespace
}  // namespace plir
