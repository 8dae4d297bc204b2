// Unary elementwise kernels: values from ONNX's documented examples or by
// hand, every dtype class, and errors instead of overflow.
#include <limits>

#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

TEST(ElementwiseKernelTest, MathFunctions) {
  EXPECT_TRUE(
      Near(Values(Eval("erf", {F32({0, 1, -0.5})})), {0, 0.8427007929497149, -0.5204998778130465}));
  EXPECT_TRUE(Near(Values(Eval("sigmoid", {F32({0, 2, -800})})), {0.5, 0.8807970779778823, 0}));
  EXPECT_TRUE(Near(Values(Eval("tanh", {F32({0, 1})})), {0, 0.7615941559557649}));
  EXPECT_TRUE(Near(Values(Eval("sqrt", {F32({4, 2})})), {2, 1.4142135623730951}));
  EXPECT_TRUE(Near(Values(Eval("rsqrt", {F32({4, 0.25})})), {0.5, 2}));
  EXPECT_TRUE(Near(Values(Eval("exp", {F32({0, 1})})), {1, 2.718281828459045}));
  EXPECT_TRUE(Near(Values(Eval("log", {F32({1, 2.718281828459045})})), {0, 1}));
  EXPECT_TRUE(Near(Values(Eval("nn.gelu", {F32({1, 0, -1})})),
                   {0.8413447460685429, 0, -0.15865525393145707}));
  EXPECT_TRUE(Near(Values(Eval("nn.gelu_tanh", {F32({1})})), {0.8411919906082768}));
  EXPECT_TRUE(Near(Values(Eval("nn.silu", {F32({1})})), {0.7310585786300049}));
  EXPECT_TRUE(Near(Values(Eval("atanh", {F32({0.5})})), {0.5493061443340549}));
  EXPECT_TRUE(Near(Values(Eval("acosh", {F32({2})})), {1.3169578969248166}));
  EXPECT_TRUE(Near(Values(Eval("nn.leakyrelu", {F32({-1, 2})}, A("alpha", 0.1))), {-0.1, 2}));
  EXPECT_TRUE(Near(Values(Eval("nn.softplus", {F32({-1, 0, 1})})),
                   {0.31326168751822286, 0.6931471805599453, 1.3132616875182228}));
  // Float-only math refuses integers.
  EXPECT_NE(Error("exp", {T(DataType::kInt32, {1})}).find("does not take int32"),
            std::string::npos);
}

TEST(ElementwiseKernelTest, HalfAndBFloat16RoundOnce) {
  Tensor h = Eval("sqrt", {T(DataType::kFloat16, {2})});
  EXPECT_EQ(h.dtype, DataType::kFloat16);
  EXPECT_EQ(h.GetDouble(0), 1.4140625);  // the float16 nearest sqrt(2)
  Tensor b = Eval("exp", {T(DataType::kBFloat16, {1})});
  EXPECT_EQ(b.dtype, DataType::kBFloat16);
  EXPECT_EQ(b.GetDouble(0), 2.71875);
  Tensor d = Eval("sin", {T(DataType::kFloat64, {1})});
  EXPECT_EQ(d.GetDouble(0), std::sin(1.0));
}

TEST(ElementwiseKernelTest, RoundIsHalfToEven) {
  // ONNX Round's example.
  Tensor x = F32({0.1, 0.5, 0.9, 1.2, 1.5, 1.8, 2.3, 2.5, 2.7, -1.1, -1.5, -1.9, -2.2, -2.5, -2.8});
  EXPECT_EQ(Values(Eval("round", {x})),
            (std::vector<double>{0, 0, 1, 1, 2, 2, 2, 2, 3, -1, -2, -2, -2, -2, -3}));
  EXPECT_EQ(Values(Eval("ceil", {F32({-1.5, 1.2})})), (std::vector<double>{-1, 2}));
  EXPECT_EQ(Values(Eval("floor", {F32({-1.5, 1.2})})), (std::vector<double>{-2, 1}));
  EXPECT_EQ(Values(Eval("floor", {T(DataType::kInt16, {-3, 7})})), (std::vector<double>{-3, 7}));
}

TEST(ElementwiseKernelTest, IntegerUnaryIsExact) {
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor a = Eval("abs", {Raw<int64_t>(DataType::kInt64, {-big, 3}, {2})});
  EXPECT_EQ(a.GetInt(0), big);
  EXPECT_EQ(a.GetInt(1), 3);
  EXPECT_NE(Error("abs", {Raw<int8_t>(DataType::kInt8, {-128}, {1})}).find("int8 overflow"),
            std::string::npos);
  EXPECT_EQ(Eval("negative", {Raw<int32_t>(DataType::kInt32, {5, -7}, {2})}).GetInt(1), 7);
  EXPECT_FALSE(Error("negative", {Raw<uint8_t>(DataType::kUInt8, {1}, {1})}).empty());
  EXPECT_EQ(Values(Eval("sign", {T(DataType::kInt8, {-5, 0, 9})})),
            (std::vector<double>{-1, 0, 1}));
  EXPECT_TRUE(Near(Values(Eval("sign", {F32({-0.5, 0, NAN})})), {-1, 0, NAN}));
  EXPECT_FALSE(Error("square", {Raw<int16_t>(DataType::kInt16, {200}, {1})}).empty());
  EXPECT_FALSE(Error("abs", {T(DataType::kBool, {1})}).empty());
}

TEST(ElementwiseKernelTest, BitwiseNotAndLogicalNot) {
  EXPECT_EQ(Values(Eval("bitwise_not", {T(DataType::kUInt8, {0, 255, 5})})),
            (std::vector<double>{255, 0, 250}));
  EXPECT_EQ(Values(Eval("bitwise_not", {T(DataType::kInt8, {0, -1, 5})})),
            (std::vector<double>{-1, 0, -6}));
  Tensor u = Eval("bitwise_not", {Raw<uint64_t>(DataType::kUInt64, {1}, {1})});
  uint64_t got;
  std::memcpy(&got, u.data->data(), 8);
  EXPECT_EQ(got, std::numeric_limits<uint64_t>::max() - 1);
  EXPECT_EQ(Values(Eval("bitwise_not", {T(DataType::kBool, {1, 0})})), (std::vector<double>{0, 1}));
  EXPECT_FALSE(Error("bitwise_not", {F32({1})}).empty());
  Tensor n = Eval("logical_not", {F32({0, 2.5, -1})});
  EXPECT_EQ(n.dtype, DataType::kBool);
  EXPECT_EQ(Values(n), (std::vector<double>{1, 0, 0}));
}

TEST(ElementwiseKernelTest, Predicates) {
  double inf = INFINITY;
  Tensor x = F32({-inf, 0, inf, NAN});
  EXPECT_EQ(Values(Eval("isinf", {x})), (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(Values(Eval("isinf", {x}, A("detect_negative", false))),
            (std::vector<double>{0, 0, 1, 0}));
  EXPECT_EQ(Values(Eval("isinf", {x}, A("detect_positive", false))),
            (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(Values(Eval("isnan", {x})), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(Values(Eval("isfinite", {x})), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(Values(Eval("isnan", {T(DataType::kInt32, {3})})), (std::vector<double>{0}));
}

TEST(ElementwiseKernelTest, Clip) {
  // ONNX Clip's example: [-2, 0, 2] to [-1, 1].
  EXPECT_EQ(Values(Eval("clip", {F32({-2, 0, 2}), Scalar(DataType::kFloat32, -1),
                                 Scalar(DataType::kFloat32, 1)})),
            (std::vector<double>{-1, 0, 1}));
  // NumPy: max wins when min > max; NaN passes through.
  EXPECT_TRUE(Near(Values(Eval("clip", {F32({-5, 5, NAN}), Scalar(DataType::kFloat32, 2),
                                        Scalar(DataType::kFloat32, 1)})),
                   {1, 1, NAN}));
  const int64_t big = (int64_t{1} << 60) + 3;
  Tensor c = Eval("clip", {Raw<int64_t>(DataType::kInt64, {big, -big, 7}, {3}),
                           Raw<int64_t>(DataType::kInt64, {-big + 1}, {}),
                           Raw<int64_t>(DataType::kInt64, {big - 1}, {})});
  EXPECT_EQ(c.GetInt(0), big - 1);
  EXPECT_EQ(c.GetInt(1), -big + 1);
  EXPECT_EQ(c.GetInt(2), 7);
  EXPECT_FALSE(
      Error("clip", {F32({1}), Scalar(DataType::kFloat64, 0), Scalar(DataType::kFloat32, 1)})
          .empty());
  EXPECT_FALSE(Error("clip", {F32({1}), F32({0, 1}), Scalar(DataType::kFloat32, 1)}).empty());
}

TEST(ElementwiseKernelTest, AstypeFloatToIntIsCheckedNotUndefined) {
  EXPECT_EQ(Values(Eval("astype", {F32({-2.7, 3.9})}, A("dtype", "int32"))),
            (std::vector<double>{-2, 3}));
  EXPECT_FALSE(Error("astype", {F32({NAN})}, A("dtype", "int32")).empty());
  EXPECT_FALSE(Error("astype", {F32({300})}, A("dtype", "uint8")).empty());
}

TEST(ElementwiseKernelTest, OnnxActivations) {
  // ONNX's examples: Elu, Selu, Celu, HardSigmoid, HardSwish, Softsign, ThresholdedRelu, Mish.
  Tensor x = F32({-1, 0, 1});
  EXPECT_TRUE(Near(Values(Eval("nn.elu", {x}, A("alpha", 2.0))), {-1.2642411, 0, 1}));
  EXPECT_TRUE(
      Near(Values(Eval("nn.selu", {x}, A("alpha", 2.0, "gamma", 3.0))), {-3.79272318, 0, 3}));
  EXPECT_TRUE(Near(Values(Eval("nn.selu", {x})), {-1.1113307, 0, 1.05070098}));
  EXPECT_TRUE(Near(Values(Eval("nn.celu", {x}, A("alpha", 2.0))), {-0.7869387, 0, 1}));
  EXPECT_TRUE(
      Near(Values(Eval("nn.hardsigmoid", {x}, A("alpha", 0.5, "beta", 0.6))), {0.1, 0.6, 1}));
  EXPECT_TRUE(Near(Values(Eval("nn.hardswish", {F32({-4, 1, 4})})), {0, 0.6666667, 4}));
  EXPECT_TRUE(Near(Values(Eval("nn.softsign", {x})), {-0.5, 0, 0.5}));
  EXPECT_TRUE(
      Near(Values(Eval("nn.thresholded_relu", {F32({-1.5, 0, 1.5, 2, 2.2})}, A("alpha", 2.0))),
           {0, 0, 0, 0, 2.2}));
  EXPECT_TRUE(Near(Values(Eval("nn.mish", {x})), {-0.30340146, 0, 0.86509836}));
  EXPECT_TRUE(Near(Values(Eval("nn.relu6", {F32({-1, 3, 7})})), {0, 3, 6}));
}

}  // namespace
}  // namespace plir
