// The fast paths (kernels/internal/fast.h) against the reference loops, on
// random (seeded) shapes, strides, groups, padding, dilation and
// broadcasting: each case runs once with the fast paths on and once with
// them off, and must take the fast path when they are on.
#include <random>

#include "ir/parallel.h"
#include "kernels/internal/fast.h"
#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(20261201);
  return rng;
}
int64_t Uniform(int64_t lo, int64_t hi) {  // in [lo, hi]
  return std::uniform_int_distribution<int64_t>(lo, hi)(Rng());
}

Tensor Random(DataType dt, std::vector<int64_t> shape, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  return MakeTensor(dt, std::move(shape), [&](int64_t) { return u(Rng()); });
}

struct FastOff {
  FastOff() { internal::SetFastKernelsEnabled(false); }
  ~FastOff() { internal::SetFastKernelsEnabled(true); }
};

// Runs `op` both ways; the results must agree within `tol` relative to the
// scale of the terms (float32: a few ulps per term of a sum of `terms`).
::testing::AssertionResult Agree(const std::string& op, const std::vector<Tensor>& args,
                                 const Attrs& attrs, int64_t terms = 1) {
  uint64_t before = internal::FastPathCalls();
  auto fast = EvalOp(op, args, attrs);
  bool took = internal::FastPathCalls() > before;
  StatusOr<Tensor> ref = [&] {
    FastOff off;
    return EvalOp(op, args, attrs);
  }();
  if (fast.ok() != ref.ok())
    return ::testing::AssertionFailure()
           << op << ": fast " << (fast.ok() ? "ok" : fast.status().message()) << ", reference "
           << (ref.ok() ? "ok" : ref.status().message());
  if (!fast.ok()) return ::testing::AssertionFailure() << op << ": " << fast.status().message();
  if (!took) return ::testing::AssertionFailure() << op << ": the fast path was not taken";
  if (fast->dtype != ref->dtype || fast->shape != ref->shape)
    return ::testing::AssertionFailure() << op << ": dtype or shape differs";
  double eps = ref->dtype == DataType::kFloat32 ? 6e-8 : 1.2e-16;
  double tol = 8 * eps * static_cast<double>(std::max<int64_t>(terms, 1));
  for (int64_t i = 0; i < ref->NumElements(); ++i) {
    double f = fast->GetDouble(i), r = ref->GetDouble(i);
    if ((std::isnan(f) && std::isnan(r)) || f == r) continue;
    if (!(std::fabs(f - r) <= tol * (1 + std::fabs(r))))
      return ::testing::AssertionFailure()
             << op << ": element " << i << " of " << ref->NumElements() << ": fast " << f
             << ", reference " << r << " (tolerance " << tol << ")";
  }
  return ::testing::AssertionSuccess();
}

const DataType kFloats[] = {DataType::kFloat32, DataType::kFloat64};

TEST(FastPathTest, Conv2dGroupsStridesPaddingDilation) {
  for (int iter = 0; iter < 120; ++iter) {
    DataType dt = kFloats[iter % 2];
    int64_t groups = Uniform(1, 3), ig = Uniform(1, 4), og = Uniform(1, 3);
    if (iter % 4 == 3) ig = 1;  // depthwise (with a channel multiplier og)
    int64_t N = Uniform(1, 2), C = groups * ig, H = Uniform(1, 9), W = Uniform(1, 9);
    int64_t KH = Uniform(1, 3), KW = Uniform(1, 3), dh = Uniform(1, 2), dw = Uniform(1, 2);
    std::vector<int64_t> pad{Uniform(0, 2), Uniform(0, 2), Uniform(0, 2), Uniform(0, 2)};
    std::vector<int64_t> st{Uniform(1, 3), Uniform(1, 3)};
    if (H + pad[0] + pad[2] < dh * (KH - 1) + 1 || W + pad[1] + pad[3] < dw * (KW - 1) + 1)
      continue;
    Tensor x = Random(dt, {N, C, H, W}), w = Random(dt, {groups * og, ig, KH, KW});
    EXPECT_TRUE(Agree("nn.conv2d", {x, w},
                      A("strides", st, "padding", pad, "dilation", L({dh, dw}), "groups", groups),
                      ig * KH * KW))
        << "case " << iter;
  }
}

TEST(FastPathTest, Conv2dPointwiseAndLayouts) {
  Tensor x = Random(DataType::kFloat32, {2, 16, 5, 7}),
         w = Random(DataType::kFloat32, {8, 16, 1, 1});
  EXPECT_TRUE(Agree("nn.conv2d", {x, w}, Attrs(), 16));  // the input is its own im2col
  EXPECT_TRUE(Agree("nn.conv2d", {x, w}, A("strides", L({2, 2})), 16));
  // NHWC / HWIO transposes around the NCHW kernel.
  Tensor xh = Random(DataType::kFloat32, {1, 6, 6, 4}),
         wh = Random(DataType::kFloat32, {3, 3, 4, 5});
  EXPECT_TRUE(Agree("nn.conv2d", {xh, wh},
                    A("data_layout", "NHWC", "kernel_layout", "HWIO", "padding", L({1, 1})), 36));
  // Depthwise, as in MobileNet: groups == channels.
  Tensor xd = Random(DataType::kFloat32, {1, 8, 10, 10}),
         wd = Random(DataType::kFloat32, {8, 1, 3, 3});
  EXPECT_TRUE(Agree("nn.conv2d", {xd, wd}, A("groups", 8, "padding", L({1, 1})), 9));
  EXPECT_TRUE(Agree("nn.conv2d", {xd, wd}, A("groups", 8, "strides", L({2, 2})), 9));
}

// Depthwise convolution (groups == input channels, a channel multiplier of
// 1 to 3): shapes wide and tall enough for the vector blocks (4 rows x 16
// columns) and their masked right edge, strides 1 to 3 (phases of the
// padded plane), asymmetric padding up to 3 (wider than the window too),
// dilation 1 to 2; with the AVX2 clone and with the baseline loops.
TEST(FastPathTest, DepthwiseConv2d) {
  for (bool avx2 : {true, false}) {
    internal::SetAvx2Enabled(avx2);
    for (int iter = 0; iter < 150; ++iter) {
      DataType dt = iter % 5 == 4 ? DataType::kFloat64 : DataType::kFloat32;
      int64_t C = Uniform(1, 5), og = iter % 3 == 0 ? Uniform(2, 3) : 1, N = Uniform(1, 2);
      int64_t H = Uniform(1, 13), W = Uniform(1, 41);
      int64_t KH = Uniform(1, 3), KW = Uniform(1, 3), dh = Uniform(1, 2), dw = Uniform(1, 2);
      if (iter % 2 == 0) KH = KW = 3, dh = dw = 1;  // MobileNet's
      std::vector<int64_t> pad{Uniform(0, 3), Uniform(0, 3), Uniform(0, 3), Uniform(0, 3)};
      std::vector<int64_t> st{Uniform(1, 3), Uniform(1, 3)};
      if (H + pad[0] + pad[2] < dh * (KH - 1) + 1 || W + pad[1] + pad[3] < dw * (KW - 1) + 1)
        continue;
      Tensor x = Random(dt, {N, C, H, W}), w = Random(dt, {C * og, 1, KH, KW});
      EXPECT_TRUE(Agree("nn.conv2d", {x, w},
                        A("strides", st, "padding", pad, "dilation", L({dh, dw}), "groups", C),
                        KH * KW))
          << "case " << iter << " avx2 " << avx2 << ": " << N << "x" << C << "x" << H << "x" << W
          << " k " << KH << "x" << KW << " og " << og << " s " << st[0] << "," << st[1];
    }
    // MobileNet's shapes: 3x3, padding 1, stride 1 and 2, even and odd sizes;
    // threads split the planes.
    SetDefaultThreads(2);
    for (int64_t s : {1, 2})
      for (int64_t h : {7, 14, 28, 57}) {
        Tensor x = Random(DataType::kFloat32, {1, 24, h, h}),
               w = Random(DataType::kFloat32, {24, 1, 3, 3});
        EXPECT_TRUE(Agree("nn.conv2d", {x, w},
                          A("strides", L({s, s}), "padding", L({1, 1}), "groups", 24), 9))
            << "stride " << s << " size " << h << " avx2 " << avx2;
      }
    SetDefaultThreads(0);
    // Depthwise conv1d (groups == channels).
    Tensor x1 = Random(DataType::kFloat32, {2, 6, 37}), w1 = Random(DataType::kFloat32, {12, 1, 3});
    EXPECT_TRUE(
        Agree("nn.conv1d", {x1, w1}, A("strides", L({2}), "padding", L({1, 2}), "groups", 6), 3));
  }
  internal::SetAvx2Enabled(true);
}

TEST(FastPathTest, Conv1d) {
  for (int iter = 0; iter < 60; ++iter) {
    DataType dt = kFloats[iter % 2];
    int64_t groups = Uniform(1, 3), ig = iter % 3 == 2 ? 1 : Uniform(1, 4), og = Uniform(1, 3);
    int64_t N = Uniform(1, 2), W = Uniform(1, 12), K = Uniform(1, 4), d = Uniform(1, 3);
    std::vector<int64_t> pad{Uniform(0, 3), Uniform(0, 3)};
    if (W + pad[0] + pad[1] < d * (K - 1) + 1) continue;
    Tensor x = Random(dt, {N, groups * ig, W}), w = Random(dt, {groups * og, ig, K});
    EXPECT_TRUE(Agree(
        "nn.conv1d", {x, w},
        A("strides", L({Uniform(1, 3)}), "padding", pad, "dilation", L({d}), "groups", groups),
        ig * K))
        << "case " << iter;
  }
}

TEST(FastPathTest, MatmulBatchedAndBroadcast) {
  struct Case {
    std::vector<int64_t> a, b;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}},
      {{1, 7}, {7, 1}},
      {{4}, {4, 3}},
      {{2, 4}, {4}},
      {{5}, {5}},
      {{2, 3, 4}, {4, 6}},
      {{2, 3, 4}, {2, 4, 6}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{3, 4}, {2, 4, 5}},
      {{1, 2, 3, 4}, {3, 1, 4, 2}},
      {{2, 0, 3}, {3, 4}},
      {{2, 3, 0}, {0, 4}},
      {{64, 48}, {48, 80}},
  };
  for (DataType dt : kFloats)
    for (const Case& c : cases)
      EXPECT_TRUE(Agree("matmul", {Random(dt, c.a), Random(dt, c.b)}, Attrs(), c.a.back()))
          << c.a.size() << "-D x " << c.b.size() << "-D";
  for (int iter = 0; iter < 40; ++iter) {
    int64_t n = Uniform(1, 9), k = Uniform(1, 9), m = Uniform(1, 9);
    std::vector<int64_t> a{n, k}, b{k, m};
    for (int64_t r = Uniform(0, 2); r > 0; --r) {
      int64_t d = Uniform(1, 3);
      a.insert(a.begin(), Uniform(0, 1) ? d : 1);
      b.insert(b.begin(), Uniform(0, 1) ? d : 1);
    }
    EXPECT_TRUE(
        Agree("matmul", {Random(kFloats[iter % 2], a), Random(kFloats[iter % 2], b)}, Attrs(), k));
  }
}

// Products large enough that Gemm splits them over 2 threads: by columns,
// by rows (more rows than columns), a batch split over the threads, and a
// 1x1 convolution (the input as its own im2col matrix) and a 3x3 one.
TEST(FastPathTest, GemmSplitOverThreads) {
  SetDefaultThreads(2);
  for (DataType dt : kFloats) {
    EXPECT_TRUE(Agree("matmul", {Random(dt, {40, 128}), Random(dt, {128, 601})}, Attrs(), 128));
    EXPECT_TRUE(Agree("matmul", {Random(dt, {333, 64}), Random(dt, {64, 200})}, Attrs(), 64));
    EXPECT_TRUE(Agree("matmul", {Random(dt, {8, 50, 32}), Random(dt, {8, 32, 51})}, Attrs(), 32));
    EXPECT_TRUE(
        Agree("matmul", {Random(dt, {3, 1, 130, 64}), Random(dt, {2, 64, 129})}, Attrs(), 64));
    EXPECT_TRUE(Agree("nn.conv2d", {Random(dt, {1, 64, 30, 31}), Random(dt, {128, 64, 1, 1})},
                      Attrs(), 64));
    EXPECT_TRUE(Agree("nn.conv2d", {Random(dt, {1, 16, 30, 30}), Random(dt, {48, 16, 3, 3})},
                      A("padding", L({1, 1})), 144));
  }
  SetDefaultThreads(0);
}

// Random shapes that broadcast with `out`: each dimension kept or 1, and
// leading ones dropped.
std::vector<int64_t> BroadcastOperand(const std::vector<int64_t>& out) {
  std::vector<int64_t> s;
  for (int64_t d : out) s.push_back(Uniform(0, 2) ? d : 1);
  s.erase(s.begin(), s.begin() + Uniform(0, static_cast<int64_t>(s.size())));
  return s;
}

TEST(FastPathTest, BinaryBroadcasting) {
  const char* ops[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
  for (int iter = 0; iter < 200; ++iter) {
    DataType dt = kFloats[iter % 2];
    std::vector<int64_t> out;
    for (int64_t r = Uniform(0, 4); r > 0; --r) out.push_back(Uniform(1, 5));
    std::vector<int64_t> a = out, b = BroadcastOperand(out);
    if (iter % 3 == 1) std::swap(a, b);
    if (iter % 7 == 0) b = {};                            // scalar
    if (iter % 7 == 1 && !out.empty()) b = {out.back()};  // row
    const char* op = ops[iter % 6];
    Tensor ta = Random(dt, a), tb = Random(dt, b, 0.5, 2);
    EXPECT_TRUE(Agree(op, {ta, tb}, Attrs())) << op << " case " << iter;
  }
  // Channel broadcast (a conv's bias), NaN through maximum / minimum, and a
  // large same-shape add split across threads.
  Tensor x = Random(DataType::kFloat32, {2, 8, 5, 5}),
         bias = Random(DataType::kFloat32, {1, 8, 1, 1});
  EXPECT_TRUE(Agree("add", {x, bias}, Attrs()));
  Tensor nan = F32({NAN, 1, -2, NAN}, {4}), y = F32({0, NAN, 3, 1}, {4});
  EXPECT_TRUE(Agree("maximum", {nan, y}, Attrs()));
  EXPECT_TRUE(Agree("minimum", {nan, y}, Attrs()));
  Tensor big = Random(DataType::kFloat32, {300000});
  SetDefaultThreads(2);
  EXPECT_TRUE(Agree("add", {big, big}, Attrs()));
  SetDefaultThreads(0);
}

// power with a scalar exponent of 2, 0.5 or 1 has loops of its own; other
// exponents stay on the reference.
TEST(FastPathTest, PowerByAScalar) {
  for (DataType dt : kFloats) {
    Tensor x = Random(dt, {3, 7, 5}, -3, 3);
    for (double e : {2.0, 0.5, 1.0}) {
      Tensor ex = MakeTensor(dt, {}, [&](int64_t) { return e; });
      EXPECT_TRUE(Agree("power", {x, ex}, Attrs())) << e;
      Tensor row = MakeTensor(dt, {1, 1, 1}, [&](int64_t) { return e; });
      EXPECT_TRUE(Agree("power", {x, row}, Attrs())) << e;
    }
    // The edges of sqrt against pow(x, 0.5): -0 is +0, -inf is +inf.
    Tensor edges = MakeTensor(dt, {6}, [](int64_t i) {
      const double v[] = {-0.0, 0.0, -INFINITY, INFINITY, NAN, -4};
      return v[i];
    });
    Tensor half = MakeTensor(dt, {}, [](int64_t) { return 0.5; });
    EXPECT_TRUE(Agree("power", {edges, half}, Attrs()));
    auto got = EvalOp("power", {edges, half}, Attrs());
    ASSERT_TRUE(got.ok());
    EXPECT_FALSE(std::signbit(got->GetDouble(0)));
    EXPECT_EQ(got->GetDouble(2), INFINITY);
    EXPECT_TRUE(Agree("power", {edges, MakeTensor(dt, {}, [](int64_t) { return 2.0; })}, Attrs()));
  }
  uint64_t before = internal::FastPathCalls();
  Tensor x = Random(DataType::kFloat32, {4}, 0.5, 2);
  ASSERT_TRUE(
      EvalOp("power", {x, MakeTensor(DataType::kFloat32, {}, [](int64_t) { return 3.0; })}, Attrs())
          .ok());
  EXPECT_EQ(internal::FastPathCalls(), before);  // pow(x, 3): the reference
}

TEST(FastPathTest, Unary) {
  const char* ops[] = {"nn.relu", "abs",  "negative", "square",  "sqrt",
                       "rsqrt",   "ceil", "erf",      "floor",   "trunc",
                       "exp",     "tanh", "sigmoid",  "nn.gelu", "nn.silu"};
  for (DataType dt : kFloats)
    for (const char* op : ops) {
      bool positive = std::string(op) == "sqrt" || std::string(op) == "rsqrt";
      Tensor x = Random(dt, {3, 7, 11}, positive ? 0.01 : -3, 3);
      EXPECT_TRUE(Agree(op, {x}, Attrs())) << op;
    }
  EXPECT_TRUE(Agree("nn.relu", {F32({NAN, -0.0, -1, 2}, {4})}, Attrs()));
  // clip by scalar bounds (ReLU6 and others), hi winning when lo > hi; NaN
  // and -0 stay.
  const double bounds[][2] = {{0, 6}, {-1, 1}, {0.5, -0.5}, {-INFINITY, 0}, {0, 0}};
  for (DataType dt : kFloats)
    for (const auto& b : bounds) {
      Tensor lo = MakeTensor(dt, {}, [&](int64_t) { return b[0]; });
      Tensor hi = MakeTensor(dt, {}, [&](int64_t) { return b[1]; });
      EXPECT_TRUE(Agree("clip", {Random(dt, {5, 9, 13}, -8, 8), lo, hi}, Attrs()))
          << b[0] << " " << b[1];
      EXPECT_TRUE(Agree("clip",
                        {MakeTensor(dt, {4},
                                    [](int64_t i) {
                                      const double v[] = {NAN, -0.0, -7, 7};
                                      return v[i];
                                    }),
                         lo, hi},
                        Attrs()));
    }
}

// libmvec's exp, erf and tanh (VecMath), with AVX2 and without, against
// the scalar libm call: special values exactly, every length's tail, and
// finite values within 4 ulp of double (float32: the same after rounding
// but for a last-bit tie).
TEST(FastPathTest, VecMathAgainstLibm) {
  const double specials[] = {0.0,    -0.0,  1.0,  -1.0, 0.5,      -2.5,      20.0, -20.0,
                             1000.0, -1000, 1e-8, -745, INFINITY, -INFINITY, NAN};
  std::vector<double> xs(std::begin(specials), std::end(specials));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-6, 6);
  for (int i = 0; i < 997; ++i) xs.push_back(u(rng));
  for (bool avx2 : {true, false}) {
    internal::SetAvx2Enabled(avx2);
    for (internal::VecFn f :
         {internal::VecFn::kExp, internal::VecFn::kErf, internal::VecFn::kTanh}) {
      auto ref = [f](double x) {
        return f == internal::VecFn::kExp   ? std::exp(x)
               : f == internal::VecFn::kErf ? std::erf(x)
                                            : std::tanh(x);
      };
      for (size_t n = 0; n <= xs.size(); n += n < 9 ? 1 : 250) {  // every tail length
        std::vector<double> y(n);
        internal::VecMath(f, xs.data(), y.data(), static_cast<int64_t>(n));
        std::vector<float> xf(n), yf(n);
        for (size_t i = 0; i < n; ++i) xf[i] = static_cast<float>(xs[i]);
        internal::VecMath(f, xf.data(), yf.data(), static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i) {
          double want = ref(xs[i]);
          if (std::isnan(want) || std::isinf(want) || want == 0) {
            EXPECT_TRUE(std::isnan(want) ? std::isnan(y[i])
                                         : y[i] == want && std::signbit(y[i]) == std::signbit(want))
                << "f" << static_cast<int>(f) << "(" << xs[i] << ") = " << y[i] << ", libm "
                << want;
          } else {
            EXPECT_LE(std::fabs(y[i] - want), 4 * std::fabs(want) * 2.220446049250313e-16)
                << "f" << static_cast<int>(f) << "(" << xs[i] << ") = " << y[i] << ", libm "
                << want;
          }
          float wf = static_cast<float>(ref(static_cast<double>(xf[i])));
          if (std::isnan(wf))
            EXPECT_TRUE(std::isnan(yf[i]));
          else if (std::isinf(wf) || wf == 0)
            EXPECT_EQ(yf[i], wf) << "f" << static_cast<int>(f) << "(" << xf[i] << "f)";
          else
            EXPECT_LE(std::fabs(yf[i] - wf), std::fabs(wf) * 1.2e-7f)
                << "f" << static_cast<int>(f) << "(" << xf[i] << "f) = " << yf[i] << ", libm "
                << wf;
        }
      }
    }
  }
  internal::SetAvx2Enabled(true);
}

TEST(FastPathTest, Reductions) {
  const char* ops[] = {"sum", "mean", "max", "min"};
  for (int iter = 0; iter < 120; ++iter) {
    DataType dt = kFloats[iter % 2];
    std::vector<int64_t> shape;
    for (int64_t r = Uniform(1, 4); r > 0; --r) shape.push_back(Uniform(1, 6));
    int64_t rank = shape.size(), first = Uniform(0, rank - 1), last = Uniform(first, rank - 1);
    std::vector<int64_t> axes;
    for (int64_t i = first; i <= last; ++i) axes.push_back(i - (Uniform(0, 1) ? rank : 0));
    const char* op = ops[iter % 4];
    EXPECT_TRUE(Agree(op, {Random(dt, shape)}, A("axis", axes, "keepdims", iter % 3 == 0), 36))
        << op << " case " << iter;
  }
  // Global average pooling as a mean over H and W; NaN through max.
  EXPECT_TRUE(Agree("mean", {Random(DataType::kFloat32, {2, 64, 7, 7})}, A("axis", L({2, 3})), 49));
  EXPECT_TRUE(Agree("max", {F32({1, NAN, 3, 4, 5, 6}, {2, 3})}, A("axis", L({1}))));
  EXPECT_TRUE(Agree("max", {F32({1, NAN, 3, 4, 5, 6}, {2, 3})}, A("axis", L({0}))));
}

TEST(FastPathTest, SoftmaxAndNorms) {
  for (int iter = 0; iter < 40; ++iter) {
    DataType dt = kFloats[iter % 2];
    std::vector<int64_t> shape;
    for (int64_t r = Uniform(1, 4); r > 0; --r) shape.push_back(Uniform(1, 7));
    int64_t axis = Uniform(0, shape.size() - 1);
    Tensor x = Random(dt, shape, -4, 4);
    EXPECT_TRUE(Agree("nn.softmax", {x}, A("axis", axis), shape[axis]));
    EXPECT_TRUE(Agree("nn.log_softmax", {x}, A("axis", axis), shape[axis]));
    // layer_norm / rms_norm over the last one or two axes.
    std::vector<int64_t> axes{-1}, ns{shape.back()};
    if (shape.size() >= 2 && iter % 2) {
      axes = {-2, -1};
      ns = {shape[shape.size() - 2], shape.back()};
    }
    int64_t terms = 1;
    for (int64_t d : ns) terms *= d;
    EXPECT_TRUE(Agree("nn.layer_norm", {x, Random(dt, ns), Random(dt, ns)},
                      A("axes", axes, "epsilon", 1e-5), 4 * terms));
    EXPECT_TRUE(Agree("nn.rms_norm", {x, Random(dt, ns)}, A("axes", axes), 4 * terms));
  }
  for (int64_t axis : {1, 3}) {
    Tensor x = Random(DataType::kFloat32, {2, 3, 4, 5});
    int64_t C = x.shape[axis];
    std::vector<Tensor> args{x, Random(DataType::kFloat32, {C}), Random(DataType::kFloat32, {C}),
                             Random(DataType::kFloat32, {C}),
                             Random(DataType::kFloat32, {C}, 0.1, 2)};
    EXPECT_TRUE(Agree("nn.batch_norm", args, A("axis", axis, "epsilon", 1e-3)));
    EXPECT_TRUE(Agree("nn.batch_norm", args, A("axis", axis, "scale", false, "center", false)));
  }
}

TEST(FastPathTest, Pooling) {
  for (int iter = 0; iter < 120; ++iter) {
    DataType dt = kFloats[iter % 2];
    int nd = iter % 3 == 0 ? 1 : 2;
    std::string d = std::to_string(nd) + "d";
    std::vector<int64_t> shape{Uniform(1, 2), Uniform(1, 3)}, k, s, dil, pad(2 * nd);
    for (int i = 0; i < nd; ++i) {
      shape.push_back(Uniform(1, 9));
      k.push_back(Uniform(1, 3));
      s.push_back(Uniform(1, 3));
      dil.push_back(Uniform(1, 2));
    }
    bool fits = true;
    for (int i = 0; i < nd; ++i) {
      pad[i] = Uniform(0, (k[i] - 1) / 2 + 1);
      pad[i + nd] = Uniform(0, (k[i] - 1) / 2 + 1);
      fits = fits && shape[2 + i] + pad[i] + pad[i + nd] >= dil[i] * (k[i] - 1) + 1;
    }
    Tensor x = Random(dt, shape);
    if (fits) {
      Attrs attrs = A("pool_size", k, "strides", s, "dilation", dil, "padding", pad, "ceil_mode",
                      iter % 4 == 1, "count_include_pad", iter % 5 == 2);
      EXPECT_TRUE(Agree("nn.max_pool" + d, {x}, attrs)) << "case " << iter;
      EXPECT_TRUE(Agree("nn.avg_pool" + d, {x}, attrs, 9)) << "case " << iter;
    }
    std::vector<int64_t> size;
    for (int i = 0; i < nd; ++i) size.push_back(Uniform(1, 4));
    EXPECT_TRUE(Agree("nn.adaptive_avg_pool" + d, {x}, A("output_size", size), 81));
    EXPECT_TRUE(Agree("nn.adaptive_max_pool" + d, {x}, A("output_size", size)));
  }
}

// Dtypes and layouts without a fast path still compute (the reference).
TEST(FastPathTest, OtherDtypesStayOnTheReference) {
  Tensor x = MakeTensor(DataType::kInt32, {1, 1, 3, 3}, [](int64_t i) { return i; });
  Tensor w = MakeTensor(DataType::kInt32, {1, 1, 2, 2}, [](int64_t) { return 1; });
  uint64_t before = internal::FastPathCalls();
  Tensor y = Eval("nn.conv2d", {x, w});
  EXPECT_EQ(Values(y), (std::vector<double>{8, 12, 20, 24}));
  EXPECT_EQ(internal::FastPathCalls(), before);
}

}  // namespace
}  // namespace plir
