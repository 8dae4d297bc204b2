// Relay's tests of ToBasicBlockNormalForm (apache/tvm tests/python/relay/
// test_pass_to_basic_block_normal_form.py), on inputs built with shared
// expression nodes (text cannot share a nested expression), compared
// structurally with the upstream expected programs in tests/relay/.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/plugin_loader.h"
#include "ir/op.h"
#include "ir/serialize/module_file.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"

namespace plir {

// The plugin stays loaded for the whole process (its pass is registered in
// the global registry). A global, not a function-local static, so that
// LeakSanitizer sees it reachable (an optimizer may drop an unused local).
PluginLoader* g_relay_bbnf_loader = nullptr;

namespace {

std::string g_plugin;

Type Scalar(DataType dt) { return TensorTypeNode::Make({}, dt); }
Expr Const(float v) {
  auto data = std::make_shared<WritableTensorBytes>(std::string(sizeof(float), '\0'));
  std::memcpy(data->mutable_data(), &v, sizeof(float));
  return *ConstantNode::Make(Scalar(DataType::kFloat32), data);
}
Expr ConstI(int32_t v) {
  auto data = std::make_shared<WritableTensorBytes>(std::string(sizeof(int32_t), '\0'));
  std::memcpy(data->mutable_data(), &v, sizeof(int32_t));
  return *ConstantNode::Make(Scalar(DataType::kInt32), data);
}
Expr ConstB(bool v) {
  auto data = std::make_shared<WritableTensorBytes>(std::string(1, v ? '\1' : '\0'));
  return *ConstantNode::Make(Scalar(DataType::kBool), data);
}
Expr Call(const char* op, Expr a, Expr b) { return *MakeOpCall(op, {a, b}); }
SeqExpr Body(Expr result) { return SeqExprNode::Make({}, result); }
Expr If(Expr c, Expr t, Expr f) { return *IfNode::Make(c, Body(t), Body(f)); }

Module RunPass(const Module& m) {
  if (!g_relay_bbnf_loader) {
    g_relay_bbnf_loader = new PluginLoader();
    auto r = g_relay_bbnf_loader->LoadPath(g_plugin);
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
  auto step = MakePassStep(PassRegistry::Global(), "ToBasicBlockNormalForm");
  EXPECT_TRUE(step.ok()) << step.status().message();
  PassContext ctx;
  auto out = PassManager().Run({*step}, m, ctx);
  EXPECT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(Verify(*out).ok()) << Verify(*out).message();
  return *out;
}

// Runs the pass on `input` and compares with the upstream expected file.
void Check(const Module& input, const std::string& expected_file) {
  Module out = RunPass(input);
  auto expected = LoadModuleFile("plugins/to_basic_block_normal_form/tests/relay/" + expected_file);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto mm = FindFirstMismatch(*expected, out, /*map_free_vars=*/true);
  EXPECT_FALSE(mm) << mm->ToString() << "\nexpected:\n"
                   << PrintModule(*expected) << "got:\n"
                   << PrintModule(out);
}

Module One(Function f) { return *Module::Make({f}); }

// Relay's check_basic_block_normal_form: no non-leaf expression node is
// reached from two different scopes (bodies: the function's, if branches,
// local functions' bodies). Returns a description of the first violation.
std::string BasicBlockNormalFormViolation(const Module& m) {
  std::unordered_map<const Node*, const Node*> scope_of;
  struct Item {
    const Node* n;
    const Node* scope;
  };
  std::vector<Item> stack;
  for (const auto& item : m.items())
    if (auto* f = As<FunctionNode>(item)) stack.push_back({f->body().get(), f->body().get()});
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const Node* n = it.n;
    switch (n->kind()) {
      case NodeKind::kCall:
      case NodeKind::kTuple:
      case NodeKind::kTupleGetItem:
      case NodeKind::kIf:
      case NodeKind::kLocalFn: {
        auto [at, fresh] = scope_of.emplace(n, it.scope);
        if (!fresh) {
          if (at->second != it.scope)
            return std::string("a ") + NodeKindName(n->kind()) + " is shared by two scopes";
          continue;
        }
        break;
      }
      default:
        break;
    }
    switch (n->kind()) {
      case NodeKind::kCall:
        for (const Expr& a : static_cast<const CallNode*>(n)->args())
          stack.push_back({a.get(), it.scope});
        break;
      case NodeKind::kTuple:
        for (const Expr& f : static_cast<const TupleNode*>(n)->fields())
          stack.push_back({f.get(), it.scope});
        break;
      case NodeKind::kTupleGetItem:
        stack.push_back({static_cast<const TupleGetItemNode*>(n)->tuple().get(), it.scope});
        break;
      case NodeKind::kIf: {
        auto* i = static_cast<const IfNode*>(n);
        stack.push_back({i->cond().get(), it.scope});
        stack.push_back({i->then_body().get(), i->then_body().get()});
        stack.push_back({i->else_body().get(), i->else_body().get()});
        break;
      }
      case NodeKind::kLocalFn: {
        auto* f = static_cast<const LocalFnNode*>(n);
        stack.push_back({f->body().get(), f->body().get()});
        break;
      }
      case NodeKind::kSeqExpr: {
        auto* s = static_cast<const SeqExprNode*>(n);
        for (const Block& b : s->blocks())
          for (const Binding& x : b->bindings()) stack.push_back({x->value().get(), s});
        stack.push_back({s->result().get(), s});
        break;
      }
      default:
        break;
    }
  }
  return "";
}

TEST(RelayBasicBlockNormalForm, TopLevelNestedIf) {
  Var x = VarNode::Make("x", Scalar(DataType::kBool));
  Var y = VarNode::Make("y", Scalar(DataType::kFloat32));
  Var z = VarNode::Make("z", Scalar(DataType::kFloat32));
  Expr y2 = Call("add", y, y), z2 = Call("add", z, z);
  Expr true_branch = If(ConstB(true), Call("add", z2, y2), Call("add", Const(3), y2));
  Expr false_branch = If(ConstB(false), z2, Const(1));
  Expr body = If(x, true_branch, false_branch);
  Check(One(FunctionNode::Make("main", {x, y, z}, nullptr, Body(body))),
        "top_level_nested_if.expected_upstream.plir");
}

TEST(RelayBasicBlockNormalForm, NestedIf) {
  Var x = VarNode::Make("x", Scalar(DataType::kBool));
  Var y = VarNode::Make("y", Scalar(DataType::kFloat32));
  Expr y2 = Call("add", y, y);
  Expr true_branch = If(ConstB(true), y2, Call("add", Const(3), y2));
  Expr false_branch = If(ConstB(false), Const(2), Const(1));
  Check(One(FunctionNode::Make("main", {x, y}, nullptr, Body(If(x, true_branch, false_branch)))),
        "nested_if.expected_upstream.plir");
}

TEST(RelayBasicBlockNormalForm, If) {
  Var x = VarNode::Make("x", Scalar(DataType::kFloat32));
  Expr v1 = Call("add", x, Const(1));
  Expr v2 = *MakeOpCall("call_packed", {StringImmNode::Make("equal"), x, Const(2)}, Attrs(),
                        {Scalar(DataType::kBool)});
  Expr body = If(v2, Call("multiply", v1, Const(2)), Call("multiply", v1, Const(1)));
  Check(One(FunctionNode::Make("main", {x}, nullptr, Body(body))), "if.expected_upstream.plir");
}

TEST(RelayBasicBlockNormalForm, Recursion) {
  Type i64 = Scalar(DataType::kInt64);
  auto c = [&](int64_t v) {
    auto data = std::make_shared<WritableTensorBytes>(std::string(sizeof(int64_t), '\0'));
    std::memcpy(data->mutable_data(), &v, sizeof(int64_t));
    return Expr(*ConstantNode::Make(i64, data));
  };
  Var n = VarNode::Make("n", i64);
  Expr m = Call("multiply", n, c(2));
  Expr cond = *MakeOpCall("call_packed", {StringImmNode::Make("equal"), n, c(0)}, Attrs(),
                          {Scalar(DataType::kBool)});
  Expr rec = MakeGlobalCall(GlobalVarNode::Make("f"), {Call("subtract", n, c(1))}, i64);
  Expr body = If(cond, m, Call("add", m, rec));
  Check(One(FunctionNode::Make("f", {n}, i64, Body(body))), "recursion.expected_upstream.plir");
}

TEST(RelayBasicBlockNormalForm, NoExplicitBind) {
  Expr c = ConstI(1);
  Expr y = Call("add", c, c);
  Expr z = Call("add", y, y);
  Module in = One(FunctionNode::Make("main", {}, nullptr, Body(Call("add", z, z))));
  Module out = RunPass(in);
  EXPECT_TRUE(out.same_as(in)) << "nothing is shared across scopes: the module is unchanged";
  Check(in, "no_explicit_bind.expected_upstream.plir");
}

TEST(RelayBasicBlockNormalForm, Function) {
  Var x = VarNode::Make("x", Scalar(DataType::kFloat32));
  Check(One(FunctionNode::Make("main", {x}, nullptr, Body(Call("add", x, x)))),
        "function.expected_upstream.plir");
}

TEST(RelayBasicBlockNormalForm, Let) {
  // test_let1, test_let1_1 and test_let3: programs already in basic block
  // normal form are unchanged (parsed, they share nothing).
  auto in =
      LoadModuleFile("plugins/to_basic_block_normal_form/tests/relay/let.expected_upstream.plir");
  ASSERT_TRUE(in.ok()) << in.status().message();
  Module out = RunPass(*in);
  EXPECT_TRUE(out.same_as(*in));
  Check(*in, "let.expected_upstream.plir");
}

// test_higher_order_return: one expression shared by two local functions'
// bodies (a tuple of closures).
TEST(RelayBasicBlockNormalForm, HigherOrderReturn) {
  Type t = TensorTypeNode::Make({Dim::Const(1)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t), y = VarNode::Make("y", t), z = VarNode::Make("z", t);
  Expr x2 = Call("add", x, x);
  Expr func_a = LocalFnNode::Make({y}, nullptr, Body(Call("add", x2, y)));
  Expr func_b = LocalFnNode::Make({z}, nullptr, Body(Call("add", x2, z)));
  Module in =
      One(FunctionNode::Make("main", {x}, nullptr, Body(TupleNode::Make({func_a, func_b}))));
  EXPECT_NE(BasicBlockNormalFormViolation(in), "");
  Module out = RunPass(in);
  EXPECT_EQ(BasicBlockNormalFormViolation(out), "") << PrintModule(out);
  Check(in, "higher_order_return.expected_upstream.plir");
}

// test_higher_order_nested: the shared expression is used by local
// functions in both branches of an if whose condition calls a Callable
// parameter.
TEST(RelayBasicBlockNormalForm, HigherOrderNested) {
  Type t = TensorTypeNode::Make({Dim::Const(1)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t), s = VarNode::Make("s", t), z = VarNode::Make("z", t);
  Var f = VarNode::Make("f", FuncTypeNode::Make({}, Scalar(DataType::kBool)));
  Expr shared = Call("add", s, s);
  Expr func_true = LocalFnNode::Make({x}, nullptr, Body(Call("add", x, shared)));
  Expr func_false = LocalFnNode::Make({z}, nullptr, Body(Call("add", z, shared)));
  Expr cond = *MakeValueCall(f, {});
  Module in =
      One(FunctionNode::Make("main", {f, s}, nullptr, Body(If(cond, func_true, func_false))));
  EXPECT_NE(BasicBlockNormalFormViolation(in), "");
  Module out = RunPass(in);
  EXPECT_EQ(BasicBlockNormalFormViolation(out), "") << PrintModule(out);
  Check(in, "higher_order_nested.expected_upstream.plir");
}

// Not one of Relay's: a node shared by a binding in the body and an if
// branch inside a dataflow-free body is bound right before its first use.
TEST(RelayBasicBlockNormalForm, SharedWithBindingValueIsBoundBeforeIt) {
  Var x = VarNode::Make("x", Scalar(DataType::kFloat32));
  Var c = VarNode::Make("c", Scalar(DataType::kBool));
  Expr shared = Call("multiply", x, x);
  Var a = VarNode::Make("a", Scalar(DataType::kFloat32));
  Expr branch = If(c, Call("add", shared, Const(1)), Const(0));
  SeqExpr body = SeqExprNode::Make(
      {BindingBlockNode::Make({VarBindingNode::Make(a, Call("add", shared, x))}, false)},
      Call("add", a, branch));
  Module out = RunPass(One(FunctionNode::Make("main", {x, c}, nullptr, body)));
  auto expected = ParseModule(R"(
def @main(%x: Tensor[(), float32], %c: Tensor[(), bool]) {
  %s = multiply(%x, %x);
  %a = add(%s, %x);
  add(%a, if (%c) { add(%s, const<Tensor[(), float32]>[1]) } else { const<Tensor[(), float32]>[0] })
})");
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto mm = FindFirstMismatch(*expected, out, true);
  EXPECT_FALSE(mm) << mm->ToString() << "\n" << PrintModule(out);
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) plir::g_plugin = argv[1];
  return RUN_ALL_TESTS();
}
