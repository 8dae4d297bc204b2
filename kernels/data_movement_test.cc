// Data movement kernels added for real models: ONNX's documented examples
// (Expand, Tile, GatherElements, GatherND, ScatterElements, ScatterND, Pad,
// Trilu, OneHot) and hand-computed values.
#include <limits>

#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

Tensor Shape(std::vector<double> v) {
  return T(DataType::kInt64, v, {static_cast<int64_t>(v.size())});
}

TEST(DataMovementKernelTest, BroadcastToSqueezeFlatten) {
  // ONNX Expand's example, (3, 1) with (2, 1, 6): Relax's broadcast_to takes
  // the result shape (2, 3, 6); Expand's bidirectional rule is the importer's.
  Tensor e = Eval("broadcast_to", {F32({1, 2, 3}, {3, 1}), Shape({2, 3, 6})});
  EXPECT_FALSE(Error("broadcast_to", {F32({1, 2, 3}, {3, 1}), Shape({2, 1, 6})}).empty());
  EXPECT_EQ(e.shape, (std::vector<int64_t>{2, 3, 6}));
  EXPECT_EQ(e.GetDouble(6), 2);
  EXPECT_EQ(e.GetDouble(18 + 17), 3);
  EXPECT_FALSE(Error("broadcast_to", {F32({1, 2, 3}), Shape({2})}).empty());
  EXPECT_FALSE(
      Error("broadcast_to", {F32({1}), Shape({int64_t{1} << 40, 1 << 20})}).empty());  // size cap
  Tensor s = Eval("squeeze", {F32({1, 2}, {1, 2, 1})});
  EXPECT_EQ(s.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(Eval("squeeze", {F32({1, 2}, {1, 2, 1})}, A("axis", L({-1}))).shape,
            (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(Error("squeeze", {F32({1, 2}, {1, 2, 1})}, A("axis", L({1}))).empty());
  EXPECT_EQ(Eval("flatten", {F32({1, 2, 3, 4}, {2, 2})}).shape, (std::vector<int64_t>{4}));
}

TEST(DataMovementKernelTest, TileRepeatFlip) {
  // ONNX Tile's example.
  Tensor t = Eval("tile", {F32({0, 1, 2, 3}, {2, 2})}, A("repeats", L({2, 2})));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(Values(t), (std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(Eval("tile", {F32({1, 2})}, A("repeats", L({2, 1}))).shape,
            (std::vector<int64_t>{2, 2}));
  EXPECT_FALSE(Error("tile", {F32({1})}, A("repeats", L({int64_t{1} << 62}))).empty());
  Tensor r =
      Eval("repeat", {T(DataType::kInt32, {1, 2, 3, 4}, {2, 2})}, A("repeats", 2, "axis", 1));
  EXPECT_EQ(Values(r), (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(Values(Eval("repeat", {T(DataType::kInt32, {1, 2, 3, 4}, {2, 2})}, A("repeats", 2))),
            (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(Values(Eval("repeat", {T(DataType::kInt32, {1, 2, 3, 4}, {2, 2})},
                        A("repeats", 2, "axis", 0))),
            (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4}));
  EXPECT_EQ(Values(Eval("flip", {F32({1, 2, 3, 4, 5, 6}, {2, 3})}, A("axis", 1))),
            (std::vector<double>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(Values(Eval("flip", {F32({1, 2, 3, 4, 5, 6}, {2, 3})})),
            (std::vector<double>{4, 5, 6, 1, 2, 3}));
}

TEST(DataMovementKernelTest, Trilu) {
  Tensor x = F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  EXPECT_EQ(Values(Eval("tril", {x})), (std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  EXPECT_EQ(Values(Eval("triu", {x}, A("k", 1))), (std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(Values(Eval("tril", {x}, A("k", -1))),
            (std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_EQ(Values(Eval("triu", {x}, A("k", std::numeric_limits<int64_t>::min()))), Values(x));
  EXPECT_FALSE(Error("tril", {F32({1, 2})}).empty());
}

TEST(DataMovementKernelTest, GatherElementsAndGatherNd) {
  // ONNX GatherElements' examples.
  Tensor g =
      Eval("gather_elements",
           {F32({1, 2, 3, 4}, {2, 2}), T(DataType::kInt64, {0, 0, 1, 0}, {2, 2})}, A("axis", 1));
  EXPECT_EQ(Values(g), (std::vector<double>{1, 1, 4, 3}));
  Tensor g0 = Eval("gather_elements", {F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}),
                                       T(DataType::kInt32, {1, 2, 0, 2, 0, 0}, {2, 3})});
  EXPECT_EQ(Values(g0), (std::vector<double>{4, 8, 3, 7, 2, 3}));
  Tensor gn = Eval("gather_elements",
                   {F32({1, 2, 3, 4}, {2, 2}), T(DataType::kInt64, {-1, 0}, {1, 2})}, A("axis", 1));
  EXPECT_EQ(Values(gn), (std::vector<double>{2, 1}));
  EXPECT_NE(Error("gather_elements",
                  {F32({1, 2, 3, 4}, {2, 2}), T(DataType::kInt64, {2, 0}, {1, 2})}, A("axis", 1))
                .find("out of range"),
            std::string::npos);
  // ONNX GatherND's examples.
  Tensor d = T(DataType::kInt32, {0, 1, 2, 3}, {2, 2});
  EXPECT_EQ(Values(Eval("gather_nd", {d, T(DataType::kInt64, {0, 0, 1, 1}, {2, 2})})),
            (std::vector<double>{0, 3}));
  Tensor rows = Eval("gather_nd", {d, T(DataType::kInt64, {1, 0}, {2, 1})});
  EXPECT_EQ(rows.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values(rows), (std::vector<double>{2, 3, 0, 1}));
  Tensor d3 = T(DataType::kInt32, {0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  Tensor b = Eval("gather_nd", {d3, T(DataType::kInt64, {1, 0}, {2, 1})}, A("batch_dims", 1));
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values(b), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_FALSE(Error("gather_nd", {d, T(DataType::kInt64, {0, 0, 0}, {1, 3})}).empty());
  EXPECT_FALSE(Error("gather_nd", {d, T(DataType::kInt64, {5, 0}, {1, 2})}).empty());
}

TEST(DataMovementKernelTest, Scatter) {
  // ONNX ScatterElements' examples.
  Tensor x = F32({1, 2, 3, 4, 5}, {1, 5});
  Tensor s = Eval("scatter_elements",
                  {x, T(DataType::kInt64, {1, 3}, {1, 2}), F32({1.1, 2.1}, {1, 2})}, A("axis", 1));
  EXPECT_TRUE(Near(Values(s), {1, 1.1, 3, 2.1, 5}));
  Tensor add =
      Eval("scatter_elements", {x, T(DataType::kInt64, {1, 1}, {1, 2}), F32({1.1, 2.1}, {1, 2})},
           A("axis", 1, "reduction", "add"));
  EXPECT_TRUE(Near(Values(add), {1, 5.2, 3, 4, 5}));
  Tensor mx =
      Eval("scatter_elements", {x, T(DataType::kInt64, {1, 1}, {1, 2}), F32({1.1, 2.1}, {1, 2})},
           A("axis", 1, "reduction", "max"));
  EXPECT_TRUE(Near(Values(mx), {1, 2.1, 3, 4, 5}));
  Tensor neg = Eval("scatter_elements", {x, T(DataType::kInt64, {-1}, {1, 1}), F32({9}, {1, 1})},
                    A("axis", 1));
  EXPECT_TRUE(Near(Values(neg), {1, 2, 3, 4, 9}));
  EXPECT_FALSE(Error("scatter_elements", {x, T(DataType::kInt64, {5}, {1, 1}), F32({9}, {1, 1})},
                     A("axis", 1))
                   .empty());
  // ONNX ScatterND's example.
  Tensor nd = Eval("scatter_nd", {T(DataType::kInt32, {1, 2, 3, 4, 5, 6, 7, 8}),
                                  T(DataType::kInt64, {4, 3, 1, 7}, {4, 1}),
                                  T(DataType::kInt32, {9, 10, 11, 12})});
  EXPECT_EQ(Values(nd), (std::vector<double>{1, 11, 3, 10, 9, 6, 7, 12}));
  Tensor mul = Eval("scatter_nd",
                    {T(DataType::kInt32, {1, 2, 3, 4, 5, 6, 7, 8}),
                     T(DataType::kInt64, {1, 1}, {2, 1}), T(DataType::kInt32, {3, 5})},
                    A("reduction", "mul"));
  EXPECT_EQ(Values(mul), (std::vector<double>{1, 30, 3, 4, 5, 6, 7, 8}));
  // Slices: the rows of a matrix.
  Tensor rows = Eval("scatter_nd", {F32({0, 0, 0, 0}, {2, 2}), T(DataType::kInt64, {1}, {1, 1}),
                                    F32({7, 8}, {1, 2})});
  EXPECT_EQ(Values(rows), (std::vector<double>{0, 0, 7, 8}));
  EXPECT_FALSE(
      Error("scatter_nd", {F32({0, 0}), T(DataType::kInt64, {0}, {1, 1}), F32({1, 2})}).empty());
}

TEST(DataMovementKernelTest, OneHot) {
  Tensor o = Eval("one_hot",
                  {T(DataType::kInt64, {0, 2, -1}), Scalar(DataType::kFloat32, 5),
                   Scalar(DataType::kFloat32, 0)},
                  A("depth", 3));
  EXPECT_EQ(o.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(Values(o), (std::vector<double>{5, 0, 0, 0, 0, 5, 0, 0, 5}));
  Tensor a0 =
      Eval("one_hot",
           {T(DataType::kInt32, {1, 0}), Scalar(DataType::kInt8, 1), Scalar(DataType::kInt8, -1)},
           A("depth", 2, "axis", 0));
  EXPECT_EQ(a0.dtype, DataType::kInt8);
  EXPECT_EQ(Values(a0), (std::vector<double>{-1, 1, 1, -1}));  // out[pos][i]
  EXPECT_FALSE(Error("one_hot",
                     {T(DataType::kInt64, {0}), Scalar(DataType::kFloat32, 1),
                      Scalar(DataType::kFloat32, 0)},
                     A("depth", int64_t{1} << 62))
                   .empty());
}

TEST(DataMovementKernelTest, Pad) {
  // ONNX Pad's examples: pads (x1_begin=0, x2_begin=2, x1_end=0, x2_end=0).
  Tensor x = F32({1.0, 1.2, 2.3, 3.4, 4.5, 5.7}, {3, 2});
  Attrs pw = A("pad_width", L({0, 0, 2, 0}));
  Tensor c = Eval("nn.pad", {x}, pw);
  EXPECT_EQ(c.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(Near(Values(c), {0, 0, 1.0, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7}));
  EXPECT_TRUE(Near(Values(Eval("nn.pad", {x, Scalar(DataType::kFloat32, 7)}, pw)),
                   {7, 7, 1.0, 1.2, 7, 7, 2.3, 3.4, 7, 7, 4.5, 5.7}));
  EXPECT_TRUE(
      Near(Values(Eval("nn.pad", {x}, A("pad_width", L({0, 0, 2, 0}), "pad_mode", "reflect"))),
           {1.0, 1.2, 1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7}));
  EXPECT_TRUE(Near(Values(Eval("nn.pad", {x}, A("pad_width", L({0, 0, 2, 0}), "pad_mode", "edge"))),
                   {1.0, 1.0, 1.0, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7}));
  // Reflect of [1, 2, 3] by 2 on both sides: 3 2 | 1 2 3 | 2 1.
  EXPECT_EQ(
      Values(Eval("nn.pad", {F32({1, 2, 3})}, A("pad_width", L({2, 2}), "pad_mode", "reflect"))),
      (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));
  // Negative widths crop.
  EXPECT_EQ(Values(Eval("nn.pad", {F32({1, 2, 3, 4})}, A("pad_width", L({-1, 1})))),
            (std::vector<double>{2, 3, 4, 0}));
  EXPECT_FALSE(Error("nn.pad", {F32({1, 2})}, A("pad_width", L({1}))).empty());
  EXPECT_FALSE(Error("nn.pad", {F32({1, 2})}, A("pad_width", L({-3, 0}))).empty());
  EXPECT_FALSE(Error("nn.pad", {F32({1, 2})}, A("pad_width", L({int64_t{1} << 40, 0}))).empty());
}

// strided_slice against index arithmetic done here, element by element:
// rows copied whole (step 1 on the last axis) and not (other steps, the
// last axis sliced or not, negative steps, empty results, a scalar-like 1-D).
TEST(DataMovementKernelTest, StridedSliceMatchesIndexArithmetic) {
  struct Case {
    std::vector<int64_t> shape, axes, begin, end, strides;
  };
  const Case cases[] = {
      {{4, 6, 5}, {2}, {1}, {4}, {1}},  // the last axis, contiguous runs
      {{4, 6, 5}, {1}, {2}, {6}, {1}},  // rows whole
      {{4, 6, 5}, {0, 2}, {3, 4}, {0, 0}, {-1, -2}},
      {{4, 6, 5}, {1, 2}, {0, 1}, {6, 5}, {2, 1}},
      {{4, 6, 5}, {2}, {3}, {3}, {1}},  // empty
      {{7}, {0}, {-5}, {100}, {1}},
      {{3, 1, 8}, {0, 2}, {-1, 2}, {-4, 8}, {-1, 3}},
  };
  for (const Case& c : cases) {
    int64_t n = 1;
    for (int64_t d : c.shape) n *= d;
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
    Tensor x = F32(v, c.shape);
    auto vec = [](const std::vector<int64_t>& a) {
      return Shape(std::vector<double>(a.begin(), a.end()));
    };
    Tensor y = Eval("strided_slice", {x, vec(c.axes), vec(c.begin), vec(c.end), vec(c.strides)});
    // Expected: per axis, the list of input indices it takes.
    std::vector<std::vector<int64_t>> take(c.shape.size());
    for (size_t a = 0; a < c.shape.size(); ++a)
      for (int64_t i = 0; i < c.shape[a]; ++i) take[a].push_back(i);
    for (size_t j = 0; j < c.axes.size(); ++j) {
      int64_t ax = c.axes[j], len = c.shape[ax], st = c.strides[j];
      auto clamp = [&](int64_t k) {
        if (k < 0) k += len;
        return st > 0 ? std::clamp<int64_t>(k, 0, len) : std::clamp<int64_t>(k, -1, len - 1);
      };
      take[ax].clear();
      for (int64_t i = clamp(c.begin[j]); st > 0 ? i < clamp(c.end[j]) : i > clamp(c.end[j]);
           i += st)
        take[ax].push_back(i);
    }
    std::vector<int64_t> want_shape;
    for (const auto& t : take) want_shape.push_back(static_cast<int64_t>(t.size()));
    ASSERT_EQ(y.shape, want_shape);
    std::vector<double> want;
    std::vector<size_t> idx(c.shape.size(), 0);
    int64_t total = 1;
    for (int64_t d : want_shape) total *= d;
    for (int64_t e = 0; e < total; ++e) {
      int64_t off = 0;
      for (size_t a = 0; a < c.shape.size(); ++a) off = off * c.shape[a] + take[a][idx[a]];
      want.push_back(v[off]);
      for (size_t a = c.shape.size(); a-- > 0;) {
        if (++idx[a] < take[a].size()) break;
        idx[a] = 0;
      }
    }
    EXPECT_EQ(Values(y), want);
  }
}

}  // namespace
}  // namespace plir
