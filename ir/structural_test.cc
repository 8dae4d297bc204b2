#include "ir/structural.h"

#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/visitor.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

using testing::ParseOrFail;

const char* kText = R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) -> Tensor[(2, 3), float32] {
  %a = add(%x, %y);
  %b = multiply(%a, %x);
  %c = nn.softmax(%b, axis=1);
  %c
}
)";

Ref<ConstantNode> LargeConstant(size_t n, char last) {
  auto data = std::make_shared<WritableTensorBytes>(std::string(n * 4, '\x01'));
  data->mutable_data()[n * 4 - 1] = last;
  auto c = ConstantNode::Make(
      TensorTypeNode::Make({Dim::Const(static_cast<int64_t>(n))}, DataType::kFloat32),
      std::shared_ptr<const TensorBytes>(std::move(data)));
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

// A constant's data hash is kept in the node after the first structural
// hash: the same value every time, the hash of its bytes, shared by the
// structural hash of every expression that holds it.
TEST(StructuralTest, ConstantDataHashIsTheHashOfItsBytesAndKept) {
  Ref<ConstantNode> a = LargeConstant(1 << 16, '\x02'), b = LargeConstant(1 << 16, '\x02'),
                    c = LargeConstant(1 << 16, '\x03');
  uint64_t first = a->DataHash();
  EXPECT_EQ(first, std::hash<std::string_view>()(a->data().view()));
  EXPECT_EQ(a->DataHash(), first);
  uint64_t h = StructuralHash(a.get());
  EXPECT_EQ(StructuralHash(a.get()), h);
  EXPECT_EQ(StructuralHash(b.get()), h);  // equal bytes in another buffer
  EXPECT_TRUE(StructuralEqual(a.get(), b.get()));
  EXPECT_NE(StructuralHash(c.get()), h);  // the last byte differs
  EXPECT_FALSE(StructuralEqual(a.get(), c.get()));
  // A tuple holding it hashes the same whether or not the constant's hash
  // was computed before.
  Ref<ConstantNode> fresh = LargeConstant(1 << 16, '\x02');
  Expr t1 = TupleNode::Make({a, a}), t2 = TupleNode::Make({fresh, fresh});
  EXPECT_EQ(StructuralHash(t1.get()), StructuralHash(t2.get()));
}

TEST(StructuralTest, ParsedTwiceIsEqualWithEqualHash) {
  Module a = ParseOrFail(kText), b = ParseOrFail(kText);
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralTest, NamesAreHintsOnly) {
  std::string renamed = kText;
  for (auto [from, to] : {std::pair{"%a", "%p"}, {"%b", "%q"}, {"%x", "%in"}})
    for (size_t pos; (pos = renamed.find(from)) != std::string::npos;) renamed.replace(pos, 2, to);
  Module a = ParseOrFail(kText), b = ParseOrFail(renamed);
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralTest, MismatchReportsPath) {
  std::string changed = kText;
  changed.replace(changed.find("multiply(%a, %x)"), 16, "multiply(%a, %a)");
  Module a = ParseOrFail(kText), b = ParseOrFail(changed);
  auto m = FindFirstMismatch(a, b);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "@main, body, block 0, binding 1 (%b), value, argument 1");
  EXPECT_EQ(m->lhs, "variable %x");
  EXPECT_EQ(m->rhs, "variable %a");
  EXPECT_NE(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralTest, AttributeMismatchNamesAttribute) {
  std::string changed = kText;
  changed.replace(changed.find("axis=1"), 6, "axis=0");
  auto m = FindFirstMismatch(ParseOrFail(kText), ParseOrFail(changed));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "@main, body, block 0, binding 2 (%c), value");
  EXPECT_NE(m->lhs.find("axis=1"), std::string::npos);
  EXPECT_NE(m->rhs.find("axis=0"), std::string::npos);
}

TEST(StructuralTest, MissingItemReported) {
  Module a = ParseOrFail(kText);
  Module b = a.Without("main");
  auto m = FindFirstMismatch(a, b);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "@main");
  EXPECT_EQ(m->rhs, "nothing");
}

TEST(StructuralTest, ItemOrderDoesNotMatter) {
  Module a = ParseOrFail("def @f() { 1 }\ndef @g() { 2 }\n");
  Module b = ParseOrFail("def @g() { 2 }\ndef @f() { 1 }\n");
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralTest, FreeVariablesNeedMapping) {
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t), y = VarNode::Make("y", t);
  Expr ex = *MakeOpCall("add", {x, x});
  Expr ey = *MakeOpCall("add", {y, y});
  EXPECT_FALSE(StructuralEqual(ex, ey));
  EXPECT_TRUE(StructuralEqual(ex, ey, /*map_free_vars=*/true));
  EXPECT_EQ(StructuralHash(ex, true), StructuralHash(ey, true));
  EXPECT_NE(StructuralHash(ex, false), StructuralHash(ey, false));
  // The mapping is a bijection: add(x, x) is not add(x, y).
  Expr exy = *MakeOpCall("add", {x, y});
  EXPECT_FALSE(StructuralEqual(ex, exy, true));
  EXPECT_FALSE(StructuralEqual(exy, ex, true));
}

TEST(StructuralTest, FreeVariablesOfDifferentTypesDoNotMap) {
  Var x = VarNode::Make("x", TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32));
  Var y = VarNode::Make("y", TensorTypeNode::Make({Dim::Const(2)}, DataType::kInt32));
  EXPECT_FALSE(StructuralEqual(x, y, true));
}

TEST(StructuralTest, BindingTypeAnnotationsMatter) {
  Module a = ParseOrFail("def @f(%x: Object) -> Object { %y: Object = %x; %y }");
  Module b = ParseOrFail("def @f(%x: Object) -> Object { %y = %x; %y }");
  EXPECT_TRUE(StructuralEqual(a, b));  // the inferred type is the same
  Module c = ParseOrFail("def @f(%x: Tensor) -> Object { %y: Tensor[float32] = %x; %y }");
  Module d = ParseOrFail("def @f(%x: Tensor) -> Object { %y: Tensor = %x; %y }");
  EXPECT_FALSE(StructuralEqual(c, d));
}

TEST(StructuralTest, LocalFunctionsAndCallables) {
  auto parse = [](const char* body, const char* cb) {
    return ParseOrFail(std::string("def @f(%x: Tensor[(2,), float32], %cb: ") + cb + ") {\n" +
                       body + "\n}");
  };
  const char* impure = "Callable[(Object), (), pure=false]";
  const char* pure = "Callable[(Object), ()]";
  const char* body = "%g = fn(%y: Tensor[(2,), float32]) { add(%y, %x) };\n%u = %cb(%x);\n%g";
  const char* renamed = "%h = fn(%z: Tensor[(2,), float32]) { add(%z, %x) };\n%v = %cb(%x);\n%h";
  const char* swapped = "%g = fn(%y: Tensor[(2,), float32]) { add(%x, %y) };\n%u = %cb(%x);\n%g";
  Module a = parse(body, impure);
  // Parameters and bindings of a local function are definitions: renaming
  // them changes nothing.
  EXPECT_TRUE(StructuralEqual(a, parse(renamed, impure)));
  EXPECT_EQ(StructuralHash(a), StructuralHash(parse(renamed, impure)));
  EXPECT_FALSE(StructuralEqual(a, parse(swapped, impure)));
  // Purity is part of a Callable type.
  EXPECT_FALSE(StructuralEqual(a, parse(body, pure)));
  EXPECT_NE(StructuralHash(a), StructuralHash(parse(body, pure)));
}

TEST(StructuralTest, DataflowFlagMatters) {
  Module a = ParseOrFail("def @f(%x: Object) { dataflow { %y = %x; output %y; } %y }");
  Module b = ParseOrFail("def @f(%x: Object) { dataflow { %y = %x; %z = %y; output %z; } %z }");
  Module c = ParseOrFail("def @f(%x: Object) { dataflow { %y = %x; %z = %y; output %y, %z; } %z }");
  EXPECT_FALSE(StructuralEqual(b, c));
  EXPECT_FALSE(StructuralEqual(a, b));
}

TEST(StructuralTest, SharedSubtreeWithDifferentBindingsIsNotEqual) {
  // Both sides share the node `add(%x, %x)`, but %x is bound to different
  // parameters relative to the other side's structure.
  Type t = ObjectTypeNode::Get();
  Var x = VarNode::Make("x", t), y = VarNode::Make("y", t);
  SeqExpr body = SeqExprNode::Make({}, TupleNode::Make({x}));
  Function f = FunctionNode::Make("f", {x, y}, nullptr, body);
  Function g = FunctionNode::Make("f", {y, x}, nullptr, body);
  EXPECT_FALSE(StructuralEqual(f, g));
  EXPECT_NE(StructuralHash(f), StructuralHash(g));
}

}  // namespace
}  // namespace plir
