// Type inference of the core ops, and run-time registration of new ops.
#include "ir/op.h"

#include <gtest/gtest.h>

#include "ir/text/parser.h"

namespace plir {
namespace {

// Infers the type of `op(args...)` where args are given as types.
std::string Infer(const std::string& op, const std::vector<std::string>& arg_types,
                  Attrs attrs = Attrs()) {
  std::vector<Expr> args;
  for (const auto& t : arg_types) args.push_back(VarNode::Make("a", *ParseType(t)));
  auto r = MakeOpCall(op, args, attrs);
  return r.ok() ? TypeToString((*r)->type()) : "error: " + r.status().message();
}

Attrs Ints(const char* key, std::vector<int64_t> v) {
  std::vector<AttrValue> l;
  for (auto x : v) l.push_back(AttrValue::Int(x));
  return *Attrs::Make({{Symbol(key), AttrValue::List(l)}});
}

TEST(OpTest, Broadcasting) {
  EXPECT_EQ(Infer("add", {"Tensor[(2, 3), float32]", "Tensor[(3,), float32]"}),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(Infer("multiply", {"Tensor[(4, 1, 5), float32]", "Tensor[(3, 1), float32]"}),
            "Tensor[(4, 3, 5), float32]");
  EXPECT_EQ(Infer("add", {"Tensor[(n, 1), float32]", "Tensor[(1, 4), float32]"}),
            "Tensor[(n, 4), float32]");
  EXPECT_EQ(Infer("add", {"Tensor[(n, 4), float32]", "Tensor[(n, 4), float32]"}),
            "Tensor[(n, 4), float32]");
  EXPECT_EQ(Infer("add", {"Tensor[(n, 4), float32]", "Tensor[(m, 4), float32]"}),
            "Tensor[ndim=2, float32]");
  EXPECT_EQ(Infer("add", {"Tensor[(2,), float32]", "Tensor[(3,), float32]"}).substr(0, 6),
            "error:");
  EXPECT_NE(Infer("add", {"Tensor[(2,), float32]", "Tensor[(2,), int32]"}).find("dtypes differ"),
            std::string::npos);
  EXPECT_EQ(Infer("add", {"Tensor[ndim=2, float32]", "Tensor[(3,), float32]"}),
            "Tensor[ndim=2, float32]");
}

TEST(OpTest, ObjectOperandsInferLessSpecificTypes) {
  EXPECT_EQ(Infer("add", {"Object", "Tensor[(3,), float32]"}), "Tensor[float32]");
  EXPECT_EQ(Infer("nn.relu", {"Object"}), "Tensor");
  EXPECT_EQ(Infer("nn.conv2d", {"Object", "Object"}), "Tensor[ndim=4]");
  EXPECT_EQ(Infer("add", {"Prim[int64]", "Tensor[(3,), float32]"}).substr(0, 6), "error:");
}

Attrs Int(const char* key, int64_t v) { return *Attrs::Make({{Symbol(key), AttrValue::Int(v)}}); }

TEST(OpTest, ShapeOps) {
  EXPECT_EQ(Infer("shape_of", {"Tensor[(n, 4), float32]"}), "Shape[(n, 4)]");
  EXPECT_EQ(Infer("shape_of", {"Tensor[ndim=3, float32]"}), "Shape[ndim=3]");
  EXPECT_EQ(Infer("shape_of", {"Object"}), "Shape");
  EXPECT_EQ(Infer("tensor_to_shape", {"Tensor[(2,), int64]"}), "Shape[ndim=2]");
  EXPECT_EQ(Infer("tensor_to_shape", {"Tensor[(n,), int64]"}), "Shape");
  EXPECT_NE(Infer("tensor_to_shape", {"Tensor[(2, 2), int64]"}).find("1-D"), std::string::npos);
  EXPECT_NE(Infer("tensor_to_shape", {"Tensor[(2,), float32]"}).find("integer"), std::string::npos);
  EXPECT_EQ(Infer("shape_to_tensor", {"Shape[(n, 4)]"}), "Tensor[(2,), int64]");
  EXPECT_EQ(Infer("reshape", {"Tensor[(4, 6), float32]", "Shape[(3, 8)]"}),
            "Tensor[(3, 8), float32]");
  EXPECT_EQ(Infer("reshape", {"Tensor[(4, 6), float32]", "Shape[(n, 8)]"}),
            "Tensor[(n, 8), float32]");
  EXPECT_EQ(Infer("reshape", {"Tensor[(4, 6), float32]", "Shape[ndim=2]"}),
            "Tensor[ndim=2, float32]");
  EXPECT_NE(Infer("reshape", {"Tensor[(4, 6), float32]", "Shape[(5, 5)]"}).find("24 elements"),
            std::string::npos);
  EXPECT_NE(
      Infer("reshape", {"Tensor[(4, 6), float32]", "Tensor[(2,), int64]"}).find("shape value"),
      std::string::npos);
  EXPECT_NE(Infer("reshape", {"Tensor[(4, 6), float32]", "Shape[(3, 8)]"}, Ints("shape", {3, 8}))
                .find("not both"),
            std::string::npos);
}

TEST(OpTest, TakeExpandDimsConcat) {
  EXPECT_EQ(Infer("take", {"Tensor[(5, 4, n), float32]", "Tensor[(2, 3), int64]"}, Int("axis", 1)),
            "Tensor[(5, 2, 3, n), float32]");
  EXPECT_EQ(Infer("take", {"Tensor[(5, 4), float32]", "Tensor[(7,), int32]"}),
            "Tensor[(7,), float32]");
  EXPECT_NE(Infer("take", {"Tensor[(5, 4), float32]", "Tensor[(7,), int32]"}, Int("axis", 2))
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(Infer("take", {"Tensor[(5,), float32]", "Tensor[(1,), float32]"}, Int("axis", 0))
                .find("integers"),
            std::string::npos);
  EXPECT_EQ(Infer("expand_dims", {"Tensor[(3, n), float32]"}, Ints("axis", {0, -1})),
            "Tensor[(1, 3, n, 1), float32]");
  EXPECT_NE(Infer("expand_dims", {"Tensor[(3,), float32]"}, Ints("axis", {0, -3})).find("twice"),
            std::string::npos);
  EXPECT_EQ(Infer("concat", {"(Tensor[(2, 3), float32], Tensor[(4, 3), float32])"}),
            "Tensor[(6, 3), float32]");
  EXPECT_EQ(
      Infer("concat", {"(Tensor[(2, 3), float32], Tensor[(2, 5), float32])"}, Int("axis", -1)),
      "Tensor[(2, 8), float32]");
  EXPECT_EQ(Infer("concat", {"(Tensor[(n, 3), float32],)"}), "Tensor[(n, 3), float32]");
  EXPECT_EQ(Infer("concat", {"(Tensor[(n, 3), float32], Tensor[(2, 3), float32])"}),
            "Tensor[(n + 2, 3), float32]");
  EXPECT_EQ(
      Infer("concat",
            {"(Tensor[(a, 3), float32], Tensor[(b * 2, 3), float32], Tensor[(4, 3), float32])"}),
      "Tensor[(a + b * 2 + 4, 3), float32]");
  EXPECT_NE(
      Infer("concat", {"(Tensor[(2, 3), float32], Tensor[(2, 4), float32])"}).find("dimension 1"),
      std::string::npos);
  EXPECT_NE(Infer("concat", {"Tensor[(2, 3), float32]"}).find("tuple"), std::string::npos);
}

TEST(OpTest, StridedSlice) {
  auto slice = [](const std::string& x, const std::string& idx, bool inbound) {
    Module m =
        *ParseModule("def @f(%x: " + x + ", %r: Prim[int64, value=r]) {\n  strided_slice(%x, " +
                     idx + (inbound ? ", assume_inbound=true" : "") + ")\n}\n");
    return TypeToString(m.LookupFunction("f")->body()->type());
  };
  EXPECT_EQ(slice("Tensor[(10, 4), float32]", "(0,), (2,), (7,)", false),
            "Tensor[(5, 4), float32]");
  EXPECT_EQ(slice("Tensor[(10, 4), float32]", "(0, 1), (-3, 0), (100, 4), (1, 2)", false),
            "Tensor[(3, 2), float32]");
  EXPECT_EQ(slice("Tensor[(10, 4), float32]", "(0,), (9,), (0,), (-3,)", false),
            "Tensor[(3, 4), float32]");
  EXPECT_EQ(slice("Tensor[(n, 4), float32]", "(0,), (prim[r],), (prim[r + 2],)", true),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(slice("Tensor[(n, 4), float32]", "(0,), (prim[r],), (prim[r * 2],)", true),
            "Tensor[(r * 2 - r, 4), float32]");
  EXPECT_EQ(slice("Tensor[(n, 4), float32]", "(0,), (prim[r],), (prim[r + 2],)", false),
            "Tensor[ndim=2, float32]");
  EXPECT_FALSE(
      ParseModule(
          "def @f(%x: Tensor[(4,), float32]) {\n  strided_slice(%x, (0,), (0, 1), (2,))\n}\n")
          .ok());
  EXPECT_FALSE(
      ParseModule("def @f(%x: Tensor[(4,), float32]) {\n  strided_slice(%x, (3,), (0,), (2,))\n}\n")
          .ok());
}

TEST(OpTest, Matmul) {
  EXPECT_EQ(Infer("matmul", {"Tensor[(2, 3), float32]", "Tensor[(3, 4), float32]"}),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(Infer("matmul", {"Tensor[(8, 2, 3), float32]", "Tensor[(3, 4), float32]"}),
            "Tensor[(8, 2, 4), float32]");
  EXPECT_EQ(Infer("matmul", {"Tensor[(3,), float32]", "Tensor[(3, 4), float32]"}),
            "Tensor[(4,), float32]");
  EXPECT_EQ(Infer("matmul", {"Tensor[(2, 3), float32]", "Tensor[(3,), float32]"}),
            "Tensor[(2,), float32]");
  EXPECT_EQ(Infer("matmul", {"Tensor[(b, n, k), float32]", "Tensor[(k, 5), float32]"}),
            "Tensor[(b, n, 5), float32]");
  EXPECT_NE(
      Infer("matmul", {"Tensor[(2, 3), float32]", "Tensor[(4, 5), float32]"}).find("contraction"),
      std::string::npos);
}

TEST(OpTest, Conv2dOutputShapes) {
  Attrs a = *Attrs::Make({{Symbol("padding"), Ints("p", {1, 1, 1, 1}).entries()[0].second},
                          {Symbol("channels"), AttrValue::Int(32)}});
  EXPECT_EQ(Infer("nn.conv2d",
                  {"Tensor[(1, 3, 224, 224), float32]", "Tensor[(32, 3, 5, 5), float32]"}, a),
            "Tensor[(1, 32, 222, 222), float32]");
  Attrs s = *Attrs::Make({{Symbol("strides"), Ints("s", {2, 2}).entries()[0].second}});
  EXPECT_EQ(
      Infer("nn.conv2d", {"Tensor[(n, 3, 32, 32), float32]", "Tensor[(8, 3, 3, 3), float32]"}, s),
      "Tensor[(n, 8, 15, 15), float32]");
  EXPECT_NE(Infer("nn.conv2d", {"Tensor[(1, 4, 8, 8), float32]", "Tensor[(8, 3, 3, 3), float32]"})
                .find("input channels"),
            std::string::npos);
  Attrs bad = *Attrs::Make({{Symbol("channels"), AttrValue::Int(7)}});
  EXPECT_NE(
      Infer("nn.conv2d", {"Tensor[(1, 3, 8, 8), float32]", "Tensor[(8, 3, 3, 3), float32]"}, bad)
          .find("channels=7"),
      std::string::npos);
}

TEST(OpTest, ReshapeAndPermute) {
  EXPECT_EQ(Infer("reshape", {"Tensor[(4, 6), float32]"}, Ints("shape", {3, -1})),
            "Tensor[(3, 8), float32]");
  EXPECT_NE(
      Infer("reshape", {"Tensor[(4, 6), float32]"}, Ints("shape", {5, 5})).find("24 elements"),
      std::string::npos);
  EXPECT_EQ(Infer("reshape", {"Tensor[(n, 6), float32]"}, Ints("shape", {2, -1})),
            "Tensor[ndim=2, float32]");
  EXPECT_EQ(Infer("permute_dims", {"Tensor[(2, 3, n), float32]"}, Ints("axes", {2, 0, 1})),
            "Tensor[(n, 2, 3), float32]");
  EXPECT_EQ(Infer("permute_dims", {"Tensor[(2, 3), float32]"}), "Tensor[(3, 2), float32]");
  EXPECT_NE(
      Infer("permute_dims", {"Tensor[(2, 3), float32]"}, Ints("axes", {0, 0})).find("repeated"),
      std::string::npos);
  EXPECT_NE(Infer("reshape", {"Tensor[(4, 6), float32]"}).find("requires attribute 'shape'"),
            std::string::npos);
}

TEST(OpTest, SoftmaxAxisChecked) {
  Attrs a = *Attrs::Make({{Symbol("axis"), AttrValue::Int(2)}});
  EXPECT_NE(Infer("nn.softmax", {"Tensor[(2, 3), float32]"}, a).find("axis 2 out of range"),
            std::string::npos);
}

TEST(OpTest, RuntimeRegistration) {
  OpDef def;
  def.name = "test.double";
  def.description = "doubles";
  def.min_args = def.max_args = 1;
  def.origin = "op_test";
  def.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    return args[0]->type();
  };
  ASSERT_TRUE(OpRegistry::Global().Register(def).ok());
  EXPECT_EQ(Infer("test.double", {"Tensor[(2,), int8]"}), "Tensor[(2,), int8]");
  // The parser sees the new op.
  EXPECT_TRUE(ParseModule("def @f(%x: Tensor[(2,), int8]) { test.double(%x) }").ok());
  // Registering the same name again fails and names both origins.
  def.origin = "second";
  Status s = OpRegistry::Global().Register(def);
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(s.message().find("registered by second is already registered by op_test"),
            std::string::npos);
  EXPECT_FALSE(OpRegistry::Global().Register(OpDef{}).ok());
}

TEST(OpTest, CoreOpsAreRegistered) {
  for (const char* name :
       {"add", "subtract", "multiply", "divide", "nn.relu", "nn.softmax", "matmul", "reshape",
        "permute_dims", "nn.conv2d", "call_tir", "call_packed", "vm.kill_object"})
    EXPECT_TRUE(OpRegistry::Global().Lookup(name)) << name;
  EXPECT_FALSE(OpRegistry::Global().Lookup("call_packed")->pure());
  EXPECT_TRUE(OpRegistry::Global().Lookup("add")->pure());
}

// The ops added for TVM's tests (docs/text-format.md).
std::string InferText(const std::string& call) {
  auto m = ParseModule(
      "def @f(%x: Tensor[(2, 28, 28, 3), float32], %w: Tensor[(4, 3, 3, 3), float32], "
      "%s: Shape[(2, 3)], %c: Tensor[(), float32]) { " +
      call + " }");
  return m.ok() ? TypeToString(m->LookupFunction("f")->ret_type())
                : "error: " + m.status().message();
}

TEST(OpTest, CreationOps) {
  EXPECT_EQ(InferText("zeros(shape=[4, 4], dtype=\"float32\")"), "Tensor[(4, 4), float32]");
  EXPECT_EQ(InferText("ones(shape=[16], dtype=\"int32\")"), "Tensor[(16,), int32]");
  EXPECT_EQ(InferText("full(%c, shape=[2, 3])"), "Tensor[(2, 3), float32]");
  EXPECT_EQ(InferText("full(%c, shape=[2], dtype=\"int8\")"), "Tensor[(2,), int8]");
  EXPECT_NE(InferText("zeros(shape=[4])").find("dtype"), std::string::npos);
  EXPECT_NE(InferText("zeros(shape=[-1], dtype=\"float32\")").find("negative"), std::string::npos);
  EXPECT_NE(InferText("full(%x, shape=[2])").find("scalar"), std::string::npos);
  EXPECT_NE(InferText("zeros(shape=[2], dtype=\"float33\")").find("unknown dtype"),
            std::string::npos);
}

TEST(OpTest, AstypeArangeShapeToTensor) {
  EXPECT_EQ(InferText("astype(%x, dtype=\"float16\")"), "Tensor[(2, 28, 28, 3), float16]");
  EXPECT_EQ(InferText("arange(start=0, end=160, step=1, dtype=\"float32\")"),
            "Tensor[(160,), float32]");
  EXPECT_EQ(InferText("arange(end=10, step=3)"), "Tensor[(4,), int64]");
  EXPECT_EQ(InferText("arange(start=5, end=0, step=1)"), "Tensor[(0,), int64]");
  EXPECT_NE(InferText("arange(end=3, step=0)").find("step"), std::string::npos);
  EXPECT_EQ(InferText("shape_to_tensor(%s)"), "Tensor[(2,), int64]");
  EXPECT_NE(InferText("shape_to_tensor(%x)").find("shape value"), std::string::npos);
}

TEST(OpTest, Conv2dLayouts) {
  EXPECT_EQ(InferText("nn.conv2d(%x, %w, data_layout=\"NHWC\", kernel_layout=\"OHWI\")"),
            "Tensor[(2, 26, 26, 4), float32]");
  EXPECT_EQ(
      InferText(
          "nn.conv2d(%x, %w, data_layout=\"NHWC\", kernel_layout=\"OHWI\", out_layout=\"NCHW\")"),
      "Tensor[(2, 4, 26, 26), float32]");
  EXPECT_NE(InferText("nn.conv2d(%x, %w, data_layout=\"NCWH\")").find("unsupported data_layout"),
            std::string::npos);
  // Read as NCHW / OIHW, the same operands do not fit.
  EXPECT_EQ(InferText("nn.conv2d(%x, %w)").substr(0, 6), "error:");
}

}  // namespace
}  // namespace plir

namespace plir {
namespace {

TEST(OpPatternTest, EveryCoreOpDeclaresItsPattern) {
  OpRegistry& r = OpRegistry::Global();
  auto pattern = [&](const char* n) { return r.Lookup(n)->pattern(); };
  EXPECT_EQ(pattern("add"), OpPattern::kBroadcast);
  EXPECT_EQ(pattern("subtract"), OpPattern::kBroadcast);
  EXPECT_EQ(pattern("multiply"), OpPattern::kBroadcast);
  EXPECT_EQ(pattern("divide"), OpPattern::kBroadcast);
  EXPECT_EQ(pattern("nn.relu"), OpPattern::kElemWise);
  EXPECT_EQ(pattern("reshape"), OpPattern::kInjective);
  EXPECT_EQ(pattern("permute_dims"), OpPattern::kInjective);
  EXPECT_EQ(pattern("matmul"), OpPattern::kOutEWiseFusable);
  EXPECT_EQ(pattern("nn.conv2d"), OpPattern::kOutEWiseFusable);
  EXPECT_EQ(pattern("nn.softmax"), OpPattern::kOpaque);
  EXPECT_EQ(pattern("call_tir"), OpPattern::kOpaque);
  EXPECT_EQ(pattern("call_packed"), OpPattern::kOpaque);
  EXPECT_EQ(OpPatternFromInt(4), OpPattern::kOutEWiseFusable);
  EXPECT_EQ(OpPatternFromInt(5), OpPattern::kOpaque);
  EXPECT_EQ(OpPatternFromInt(-1), OpPattern::kOpaque);
  EXPECT_STREQ(OpPatternName(OpPattern::kCommReduce), "comm_reduce");
}

TEST(OpPatternTest, RenderOpDocsListsEveryOp) {
  OpRegistry& r = OpRegistry::Global();
  std::string md = RenderOpDocs(r, OpDocFormat::kMarkdown);
  std::string text = RenderOpDocs(r, OpDocFormat::kText);
  for (const std::string& n : r.Names()) {
    EXPECT_NE(md.find("| `" + n + "` |"), std::string::npos) << n;
    EXPECT_NE(text.find(n + "("), std::string::npos) << n;
  }
  EXPECT_NE(md.find("| `nn.conv2d` | `nn.conv2d(x0, x1)` | `strides: list of ints = [1, 1]`"),
            std::string::npos);
  EXPECT_NE(md.find("`shape: list of ints (required)`"), std::string::npos);
  EXPECT_NE(text.find("call_packed(x0, ...)  pattern=opaque impure"), std::string::npos) << text;
  EXPECT_NE(text.find("add(x0, x1)  pattern=broadcast  elementwise add"), std::string::npos);
}

}  // namespace
}  // namespace plir
