// Type inference of the op families added for real models: static shapes
// exact, unknown and symbolic shapes degrade to what is known, errors name
// the op.
#include <gtest/gtest.h>

#include "ir/op.h"

namespace plir {
namespace {

// A tensor type: dims >= 0 are constants, -1 is the symbol n; rank -1 is
// an unknown rank.
Type Ten(std::vector<int64_t> dims, DataType dt = DataType::kFloat32, int rank = 0) {
  if (rank < 0) return TensorTypeNode::MakeRank(-1, dt);
  std::vector<Dim> d;
  for (int64_t v : dims) d.push_back(v >= 0 ? Dim::Const(v) : Dim::Sym(Symbol("n")));
  return TensorTypeNode::Make(std::move(d), dt);
}

std::string Infer(const std::string& op, std::vector<Type> types, Attrs attrs = Attrs()) {
  std::vector<Expr> args;
  for (const Type& t : types) args.push_back(VarNode::Make("a", t));
  auto r = MakeOpCall(op, args, attrs);
  return r.ok() ? TypeToString((*r)->type()) : "error: " + r.status().message();
}

AttrValue Ints(std::vector<int64_t> v) {
  std::vector<AttrValue> l;
  for (int64_t x : v) l.push_back(AttrValue::Int(x));
  return AttrValue::List(l);
}
Attrs A(std::vector<Attrs::Entry> e) { return *Attrs::Make(std::move(e)); }
Attrs::Entry E(const char* k, AttrValue v) { return {Symbol(k), std::move(v)}; }

bool Fails(const std::string& s, const std::string& what) {
  return s.rfind("error: ", 0) == 0 && s.find(what) != std::string::npos;
}

TEST(FamiliesInferTest, Unary) {
  EXPECT_EQ(Infer("erf", {Ten({2, -1})}), "Tensor[(2, n), float32]");
  EXPECT_EQ(Infer("isnan", {Ten({2, 3})}), "Tensor[(2, 3), bool]");
  EXPECT_EQ(Infer("logical_not", {Ten({}, DataType::kFloat32, -1)}), "Tensor[bool]");
  EXPECT_TRUE(Fails(Infer("sqrt", {Ten({2}, DataType::kInt32)}), "sqrt expects a float dtype"));
  EXPECT_TRUE(
      Fails(Infer("bitwise_not", {Ten({2})}), "bitwise_not expects an integer or bool dtype"));
  EXPECT_EQ(Infer("abs", {Ten({2}, DataType::kInt8)}), "Tensor[(2,), int8]");
  EXPECT_EQ(Infer("clip", {Ten({4}), Ten({}), Ten({})}), "Tensor[(4,), float32]");
  EXPECT_TRUE(
      Fails(Infer("clip", {Ten({4}), Ten({2}), Ten({})}), "clip: bound 1 must be a 0-d tensor"));
  EXPECT_TRUE(
      Fails(Infer("clip", {Ten({4}), Ten({}, DataType::kFloat64), Ten({})}), "dtypes differ"));
}

TEST(FamiliesInferTest, BinaryAndWhere) {
  EXPECT_EQ(Infer("less", {Ten({2, 1}), Ten({3})}), "Tensor[(2, 3), bool]");
  EXPECT_EQ(Infer("maximum", {Ten({-1, 1}), Ten({1, 4})}), "Tensor[(n, 4), float32]");
  EXPECT_TRUE(
      Fails(Infer("left_shift", {Ten({2}), Ten({2})}), "left_shift expects an integer dtype"));
  EXPECT_TRUE(Fails(Infer("floor_mod", {Ten({2}), Ten({3})}), "floor_mod: shapes"));
  EXPECT_EQ(Infer("where", {Ten({2, 1}, DataType::kBool), Ten({}), Ten({3})}),
            "Tensor[(2, 3), float32]");
  EXPECT_TRUE(
      Fails(Infer("where", {Ten({2}), Ten({2}), Ten({2})}), "where: the condition must be bool"));
  EXPECT_TRUE(
      Fails(Infer("where", {Ten({2}, DataType::kBool), Ten({2}), Ten({2}, DataType::kInt32)}),
            "dtypes differ"));
}

TEST(FamiliesInferTest, Reductions) {
  Type x = Ten({3, 2, 4});
  EXPECT_EQ(Infer("sum", {x}, A({E("axis", Ints({1}))})), "Tensor[(3, 4), float32]");
  EXPECT_EQ(Infer("mean", {x}, A({E("axis", Ints({-1, 0})), E("keepdims", AttrValue::Bool(true))})),
            "Tensor[(1, 2, 1), float32]");
  EXPECT_EQ(Infer("max", {x}), "Tensor[(), float32]");
  EXPECT_EQ(Infer("argmax", {x}, A({E("axis", AttrValue::Int(2))})), "Tensor[(3, 2), int64]");
  EXPECT_EQ(Infer("argmin", {Ten({}, DataType::kFloat32, -1)}, A({E("axis", AttrValue::Int(2))})),
            "Tensor[int64]");
  EXPECT_EQ(Infer("sum", {Ten({-1, 2})}, A({E("axis", Ints({1}))})), "Tensor[(n,), float32]");
  EXPECT_TRUE(Fails(Infer("sum", {x}, A({E("axis", Ints({3}))})), "sum: axis 3 out of range"));
  EXPECT_TRUE(Fails(Infer("sum", {x}, A({E("axis", Ints({1, -2}))})), "given twice"));
  EXPECT_EQ(Infer("cumsum", {x}, A({E("axis", AttrValue::Int(1))})), "Tensor[(3, 2, 4), float32]");
  EXPECT_EQ(Infer("cumsum", {x}), "Tensor[(24,), float32]");
  EXPECT_EQ(Infer("cumsum", {Ten({2}, DataType::kInt8)},
                  A({E("axis", AttrValue::Int(0)), E("dtype", AttrValue::String("int64"))})),
            "Tensor[(2,), int64]");
  EXPECT_TRUE(
      Fails(Infer("variance", {Ten({2}, DataType::kInt32)}), "variance expects a float dtype"));
  EXPECT_EQ(Infer("argsort", {x}), "Tensor[(3, 2, 4), int64]");
  EXPECT_EQ(Infer("argsort", {x}, A({E("axis", AttrValue::Int(0))})), "Tensor[(3, 2, 4), int64]");
  EXPECT_TRUE(Fails(Infer("argsort", {x}, A({E("axis", AttrValue::Int(3))})), "out of range"));
  EXPECT_TRUE(Fails(Infer("argsort", {Ten({})}), "rank >= 1"));
  EXPECT_TRUE(Fails(Infer("argsort", {Ten({2}, DataType::kBool)}), "argsort"));
}

TEST(FamiliesInferTest, Normalization) {
  Type x = Ten({2, 3, 4});
  Attrs ln = A({E("axes", Ints({-1}))});
  EXPECT_EQ(Infer("nn.layer_norm", {x, Ten({4}), Ten({4})}, ln), "Tensor[(2, 3, 4), float32]");
  EXPECT_TRUE(Fails(Infer("nn.layer_norm", {x, Ten({3}), Ten({4})}, ln), "nn.layer_norm: gamma"));
  EXPECT_TRUE(
      Fails(Infer("nn.layer_norm", {x, Ten({4}), Ten({4})}), "requires"));  // axes is required
  EXPECT_EQ(
      Infer("nn.group_norm", {x, Ten({3}), Ten({3})}, A({E("num_groups", AttrValue::Int(3))})),
      "Tensor[(2, 3, 4), float32]");
  EXPECT_TRUE(Fails(
      Infer("nn.group_norm", {x, Ten({3}), Ten({3})}, A({E("num_groups", AttrValue::Int(2))})),
      "not divisible by num_groups=2"));
  EXPECT_EQ(Infer("nn.instance_norm", {x, Ten({3}), Ten({3})}), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(Infer("nn.batch_norm", {x, Ten({3}), Ten({3}), Ten({3}), Ten({3})}),
            "Tensor[(2, 3, 4), float32]");
  EXPECT_TRUE(
      Fails(Infer("nn.batch_norm", {x, Ten({3}), Ten({3}), Ten({4}), Ten({3})}), "moving_mean"));
  EXPECT_EQ(Infer("nn.rms_norm", {x, Ten({4})}), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(Infer("nn.log_softmax", {Ten({-1, 4})}), "Tensor[(n, 4), float32]");
  EXPECT_TRUE(Fails(Infer("nn.log_softmax", {x}, A({E("axis", AttrValue::Int(3))})),
                    "nn.log_softmax: axis 3"));
}

TEST(FamiliesInferTest, Pooling) {
  Type x = Ten({1, 3, 224, 224});
  Attrs resnet = A(
      {E("pool_size", Ints({3, 3})), E("strides", Ints({2, 2})), E("padding", Ints({1, 1, 1, 1}))});
  EXPECT_EQ(Infer("nn.max_pool2d", {x}, resnet), "Tensor[(1, 3, 112, 112), float32]");
  EXPECT_EQ(Infer("nn.avg_pool2d", {Ten({1, 1, 4, 4})},
                  A({E("pool_size", Ints({3})), E("strides", Ints({2})),
                     E("ceil_mode", AttrValue::Bool(true))})),
            "Tensor[(1, 1, 2, 2), float32]");
  EXPECT_EQ(Infer("nn.max_pool1d", {Ten({1, 2, 10})},
                  A({E("pool_size", Ints({2})), E("dilation", Ints({3}))})),
            "Tensor[(1, 2, 7), float32]");
  EXPECT_EQ(Infer("nn.max_pool3d", {Ten({1, 2, 4, 4, 4})},
                  A({E("pool_size", Ints({2})), E("strides", Ints({2}))})),
            "Tensor[(1, 2, 2, 2, 2), float32]");
  EXPECT_EQ(Infer("nn.max_pool2d", {Ten({1, 8, 8, 3})},
                  A({E("pool_size", Ints({2})), E("strides", Ints({2})),
                     E("layout", AttrValue::String("NHWC"))})),
            "Tensor[(1, 4, 4, 3), float32]");
  EXPECT_EQ(Infer("nn.max_pool2d", {Ten({1, 3, -1, 8})}, A({E("pool_size", Ints({2}))})),
            "Tensor[ndim=4, float32]");
  EXPECT_EQ(Infer("nn.adaptive_avg_pool2d", {x}, A({E("output_size", Ints({1, 1}))})),
            "Tensor[(1, 3, 1, 1), float32]");
  EXPECT_EQ(Infer("nn.adaptive_avg_pool2d", {x}), "Tensor[(1, 3, 224, 224), float32]");
  EXPECT_TRUE(Fails(Infer("nn.max_pool2d", {Ten({1, 1, 2, 2})}, A({E("pool_size", Ints({3}))})),
                    "nn.max_pool2d: the window"));
  EXPECT_TRUE(Fails(Infer("nn.max_pool2d", {Ten({1, 2, 2})}), "expects 4-D data"));
  EXPECT_TRUE(Fails(Infer("nn.max_pool2d", {x}, A({E("pool_size", Ints({1, 2, 3}))})),
                    "'pool_size' has 3 values"));
  EXPECT_TRUE(Fails(Infer("nn.avg_pool2d", {x}, A({E("strides", Ints({0}))})), "must be positive"));
}

Type ShapeVal(std::vector<int64_t> v) {
  std::vector<Dim> d;
  for (int64_t x : v) d.push_back(x >= 0 ? Dim::Const(x) : Dim::Sym(Symbol("n")));
  return ShapeTypeNode::Make(std::move(d));
}

TEST(FamiliesInferTest, DataMovement) {
  EXPECT_EQ(Infer("broadcast_to", {Ten({3, 1}), ShapeVal({2, 3, 6})}),
            "Tensor[(2, 3, 6), float32]");
  EXPECT_EQ(Infer("broadcast_to", {Ten({3, 1}), ShapeVal({-1, 3, 6})}),
            "Tensor[(n, 3, 6), float32]");
  EXPECT_TRUE(Fails(Infer("broadcast_to", {Ten({3, 2}), ShapeVal({3, 6})}), "does not broadcast"));
  EXPECT_EQ(Infer("squeeze", {Ten({1, 3, 1})}), "Tensor[(3,), float32]");
  EXPECT_EQ(Infer("squeeze", {Ten({1, -1, 1})}, A({E("axis", Ints({0}))})),
            "Tensor[(n, 1), float32]");
  EXPECT_EQ(Infer("squeeze", {Ten({1, -1})}), "Tensor[float32]");  // n might be 1
  EXPECT_TRUE(Fails(Infer("squeeze", {Ten({2, 3})}, A({E("axis", Ints({0}))})), "is not 1"));
  EXPECT_EQ(Infer("flatten", {Ten({2, 3})}), "Tensor[(6,), float32]");
  EXPECT_EQ(Infer("tile", {Ten({2, 2})}, A({E("repeats", Ints({3, 1, 2}))})),
            "Tensor[(3, 2, 4), float32]");
  EXPECT_EQ(Infer("repeat", {Ten({2, -1})},
                  A({E("repeats", AttrValue::Int(3)), E("axis", AttrValue::Int(0))})),
            "Tensor[(6, n), float32]");
  EXPECT_EQ(Infer("repeat", {Ten({2, 2})}, A({E("repeats", AttrValue::Int(3))})),
            "Tensor[(12,), float32]");
  EXPECT_TRUE(Fails(Infer("tril", {Ten({3})}), "tril expects a tensor of rank >= 2"));
  EXPECT_EQ(Infer("gather_elements", {Ten({3, 3}), Ten({2, 3}, DataType::kInt64)}),
            "Tensor[(2, 3), float32]");
  EXPECT_TRUE(Fails(Infer("gather_elements", {Ten({3, 3}), Ten({2, 3})}),
                    "gather_elements expects an integer dtype"));
  EXPECT_EQ(Infer("gather_nd", {Ten({2, 2, 2}), Ten({2, 1}, DataType::kInt64)},
                  A({E("batch_dims", AttrValue::Int(1))})),
            "Tensor[(2, 2), float32]");
  EXPECT_EQ(Infer("gather_nd", {Ten({2, 3}), Ten({4, 2}, DataType::kInt64)}),
            "Tensor[(4,), float32]");
  EXPECT_TRUE(
      Fails(Infer("gather_nd", {Ten({2, 3}), Ten({4, 3}, DataType::kInt64)}), "do not fit"));
  EXPECT_EQ(Infer("scatter_nd", {Ten({8}), Ten({4, 1}, DataType::kInt64), Ten({4})}),
            "Tensor[(8,), float32]");
  EXPECT_TRUE(Fails(Infer("scatter_elements", {Ten({8}), Ten({4}, DataType::kInt64), Ten({4})},
                          A({E("reduction", AttrValue::String("avg"))})),
                    "unknown reduction"));
  EXPECT_EQ(
      Infer("one_hot",
            {Ten({2, 3}, DataType::kInt64), Ten({}, DataType::kInt8), Ten({}, DataType::kInt8)},
            A({E("depth", AttrValue::Int(5)), E("axis", AttrValue::Int(1))})),
      "Tensor[(2, 5, 3), int8]");
  EXPECT_EQ(Infer("nn.pad", {Ten({3, 2})}, A({E("pad_width", Ints({0, 0, 2, 1}))})),
            "Tensor[(3, 5), float32]");
  EXPECT_EQ(Infer("nn.pad", {Ten({-1, 2}), Ten({})}, A({E("pad_width", Ints({0, 0, 2, 1}))})),
            "Tensor[(n, 5), float32]");
  EXPECT_TRUE(Fails(Infer("nn.pad", {Ten({3, 2})}, A({E("pad_width", Ints({1, 1}))})),
                    "pad_width has 2 values"));
  EXPECT_TRUE(Fails(
      Infer("nn.pad", {Ten({3, 2})},
            A({E("pad_width", Ints({0, 0, 2, 2})), E("pad_mode", AttrValue::String("reflect"))})),
      "reflect padding"));
  EXPECT_EQ(Infer("split", {Ten({5, 2})}, A({E("indices_or_sections", AttrValue::Int(3))})),
            "(Tensor[(2, 2), float32], Tensor[(2, 2), float32], Tensor[(1, 2), float32])");
  EXPECT_EQ(Infer("split", {Ten({2, 6})},
                  A({E("indices_or_sections", Ints({2, 5})), E("axis", AttrValue::Int(1))})),
            "(Tensor[(2, 2), float32], Tensor[(2, 3), float32], Tensor[(2, 1), float32])");
  EXPECT_EQ(Infer("split", {Ten({-1, 2})}, A({E("indices_or_sections", AttrValue::Int(2))})),
            "(Tensor[ndim=2, float32], Tensor[ndim=2, float32])");
}

TEST(FamiliesInferTest, Convolution) {
  EXPECT_EQ(Infer("nn.conv1d", {Ten({1, 4, 10}), Ten({8, 2, 3})},
                  A({E("groups", AttrValue::Int(2)), E("padding", Ints({1}))})),
            "Tensor[(1, 8, 10), float32]");
  EXPECT_EQ(Infer("nn.conv3d", {Ten({1, 1, 4, 4, 4}), Ten({2, 1, 3, 3, 3})},
                  A({E("strides", Ints({2}))})),
            "Tensor[(1, 2, 1, 1, 1), float32]");
  EXPECT_EQ(Infer("nn.conv2d_transpose", {Ten({1, 1, 3, 3}), Ten({1, 2, 3, 3})}),
            "Tensor[(1, 2, 5, 5), float32]");
  EXPECT_EQ(Infer("nn.conv2d_transpose", {Ten({1, 4, 3, 3}), Ten({4, 2, 3, 3})},
                  A({E("strides", Ints({2})), E("padding", Ints({1})),
                     E("output_padding", Ints({1})), E("groups", AttrValue::Int(2))})),
            "Tensor[(1, 4, 6, 6), float32]");
  EXPECT_EQ(Infer("nn.conv1d_transpose", {Ten({1, 1, -1}), Ten({1, 2, 3})}),
            "Tensor[ndim=3, float32]");
  EXPECT_TRUE(Fails(Infer("nn.conv1d", {Ten({1, 3, 10}), Ten({8, 2, 3})}), "input channels"));
  EXPECT_TRUE(Fails(Infer("nn.conv1d", {Ten({1, 3, 2}), Ten({8, 3, 3})}), "kernel larger"));
  EXPECT_TRUE(Fails(Infer("nn.conv1d", {Ten({1, 3, 10}), Ten({8, 3, 3})},
                          A({E("data_layout", AttrValue::String("NWC"))})),
                    "only data_layout NCW"));
  EXPECT_TRUE(Fails(Infer("nn.conv2d_transpose", {Ten({1, 1, 3, 3}), Ten({1, 2, 3, 3})},
                          A({E("output_padding", Ints({1}))})),
                    "output_padding must be smaller"));
}

TEST(FamiliesInferTest, Einsum) {
  auto ein = [](std::vector<Type> ops, const char* eq) {
    std::vector<Expr> fields;
    for (const Type& t : ops) fields.push_back(VarNode::Make("a", t));
    auto r = MakeOpCall("einsum", {TupleNode::Make(fields)},
                        A({E("subscripts", AttrValue::String(eq))}));
    return r.ok() ? TypeToString((*r)->type()) : "error: " + r.status().message();
  };
  EXPECT_EQ(ein({Ten({2, 3}), Ten({3, 4})}, "ij,jk->ik"), "Tensor[(2, 4), float32]");
  EXPECT_EQ(ein({Ten({2, 3}), Ten({3, 4})}, "ij,jk"), "Tensor[(2, 4), float32]");
  EXPECT_EQ(ein({Ten({5, 2, 3}), Ten({3, 4})}, "...ij,jk->...ik"), "Tensor[(5, 2, 4), float32]");
  EXPECT_EQ(ein({Ten({-1, 3}), Ten({3})}, "ij,j->i"), "Tensor[(n,), float32]");
  EXPECT_EQ(ein({Ten({3}), Ten({3})}, "i,i"), "Tensor[(), float32]");
  EXPECT_TRUE(
      Fails(ein({Ten({2, 3}), Ten({4, 4})}, "ij,jk->ik"), "einsum: a label has sizes 3 and 4"));
  EXPECT_TRUE(Fails(ein({Ten({2, 3})}, "ijk->i"), "does not match operand 0"));
}

}  // namespace
}  // namespace plir
