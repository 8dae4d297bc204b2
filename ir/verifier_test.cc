// One test per kind of verifier error, each checking where it is reported.
// Ill-formed IR cannot come from the parser, so these build it by hand.
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ir/builder.h"
#include "ir/op.h"
#include "ir/parallel.h"
#include "ir/text/parser.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

Type T2() { return TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32); }
Expr Add(Expr a, Expr b) { return *MakeOpCall("add", {a, b}); }
Binding Bind(Var v, Expr e) { return VarBindingNode::Make(v, e); }
Block Ordinary(std::vector<Binding> b) { return BindingBlockNode::Make(std::move(b), false); }
Block Dataflow(std::vector<Binding> b) { return BindingBlockNode::Make(std::move(b), true); }

// Verifies a module of the given items and expects exactly one error.
void ExpectOneError(std::vector<Item> items, const std::string& path, const std::string& needle) {
  Module m = *Module::Make(std::move(items));
  auto errors = VerifyModule(m);
  ASSERT_EQ(errors.size(), 1u) << (errors.empty() ? "no error" : Verify(m).message());
  EXPECT_EQ(errors[0].path, path);
  EXPECT_NE(errors[0].message.find(needle), std::string::npos) << errors[0].message;
  EXPECT_FALSE(Verify(m).ok());
}

TEST(VerifierTest, WellFormedExamplesPass) {
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir")) {
    Module m = testing::ParseOrFail(testing::ReadTestFile(f));
    EXPECT_TRUE(Verify(m).ok()) << f << ": " << Verify(m).message();
  }
}

TEST(VerifierTest, BoundTwice) {
  Var x = VarNode::Make("x", T2()), a = VarNode::Make("a", T2());
  auto f = FunctionNode::Make(
      "f", {x}, nullptr,
      SeqExprNode::Make({Ordinary({Bind(a, Add(x, x)), Bind(a, Add(x, x))})}, a));
  ExpectOneError({f}, "@f, body, block 0, binding 1 (%a), bound variable",
                 "%a is bound more than once");
}

// Calls of function values and local functions, built by hand (the parser
// rejects these shapes).
TEST(VerifierTest, CallOfANonCallableValue) {
  Var x = VarNode::Make("x", T2()), a = VarNode::Make("a", T2());
  Expr bad = CallNode::MakeUnchecked(x, {x}, Attrs(), {}, T2());
  auto f = FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({Ordinary({Bind(a, bad)})}, a));
  ExpectOneError({f}, "@f, body, block 0, binding 0 (%a), value",
                 "cannot call a value of type Tensor[(2,), float32]");
}

TEST(VerifierTest, CallOfAFunctionValueWithWrongArityOrType) {
  Type ft = FuncTypeNode::Make({T2()}, T2());
  Var x = VarNode::Make("x", T2()), g = VarNode::Make("g", ft), a = VarNode::Make("a", T2());
  Expr two_args = CallNode::MakeUnchecked(g, {x, x}, Attrs(), {}, T2());
  auto f = FunctionNode::Make("f", {x, g}, nullptr,
                              SeqExprNode::Make({Ordinary({Bind(a, two_args)})}, a));
  ExpectOneError({f}, "@f, body, block 0, binding 0 (%a), value", "takes 1 argument(s), got 2");
  // A recorded type other than the Callable's return type (as a file may hold).
  Var b = VarNode::Make("b", ObjectTypeNode::Get());
  Expr wrong_type = CallNode::MakeUnchecked(g, {x}, Attrs(), {}, ObjectTypeNode::Get());
  auto f2 = FunctionNode::Make("f", {x, g}, nullptr,
                               SeqExprNode::Make({Ordinary({Bind(b, wrong_type)})}, b));
  ExpectOneError({f2}, "@f, body, block 0, binding 0 (%b), value",
                 "disagrees with the callee's return type Tensor[(2,), float32]");
}

TEST(VerifierTest, LocalFunctionScopes) {
  Var x = VarNode::Make("x", T2()), y = VarNode::Make("y", T2()), t = VarNode::Make("t", T2());
  Var fv = VarNode::Make("fv", FuncTypeNode::Make({T2()}, T2()));
  // The local function's parameter and its bindings are not visible after it.
  LocalFn fn =
      LocalFnNode::Make({y}, nullptr, SeqExprNode::Make({Ordinary({Bind(t, Add(y, x))})}, t));
  Var after = VarNode::Make("after", T2());
  auto f = FunctionNode::Make(
      "f", {x}, nullptr,
      SeqExprNode::Make({Ordinary({Bind(fv, fn), Bind(after, Add(t, x))})}, after));
  ExpectOneError({f}, "@f, body, block 0, binding 1 (%after), value, argument 0",
                 "variable %t is used outside the scope where it is bound");
  // Well-formed: the closure uses %x of the enclosing function.
  auto ok =
      FunctionNode::Make("g", {x}, nullptr, SeqExprNode::Make({Ordinary({Bind(fv, fn)})}, fv));
  EXPECT_TRUE(Verify(*Module::Make({ok})).ok()) << Verify(*Module::Make({ok})).message();
}

TEST(VerifierTest, UsedBeforeDefinition) {
  Var x = VarNode::Make("x", T2()), a = VarNode::Make("a", T2()), b = VarNode::Make("b", T2());
  auto f = FunctionNode::Make(
      "f", {x}, nullptr,
      SeqExprNode::Make({Ordinary({Bind(a, Add(b, x)), Bind(b, Add(x, x))})}, a));
  ExpectOneError({f}, "@f, body, block 0, binding 0 (%a), value, argument 0",
                 "variable %b is used before its definition");
}

TEST(VerifierTest, NotDefined) {
  Var x = VarNode::Make("x", T2()), ghost = VarNode::Make("ghost", T2());
  auto f = FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({}, Add(x, ghost)));
  ExpectOneError({f}, "@f, body, result, argument 1", "variable %ghost is not defined");
}

TEST(VerifierTest, DataflowVariableEscapes) {
  Var x = VarNode::Make("x", T2()), a = VarNode::Make("a", T2(), /*is_dataflow=*/true);
  auto f =
      FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({Dataflow({Bind(a, Add(x, x))})}, a));
  ExpectOneError({f}, "@f, body, result",
                 "dataflow variable %a is used outside its dataflow block");
}

TEST(VerifierTest, DataflowVariableInOrdinaryBlock) {
  Var x = VarNode::Make("x", T2()), a = VarNode::Make("a", T2(), true);
  auto f =
      FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({Ordinary({Bind(a, Add(x, x))})}, x));
  ExpectOneError({f}, "@f, body, block 0, binding 0 (%a), bound variable",
                 "dataflow variable %a is bound outside a dataflow block");
}

TEST(VerifierTest, BranchVariableUsedOutside) {
  Var x = VarNode::Make("x", T2()),
      c = VarNode::Make("c", TensorTypeNode::Make({}, DataType::kBool));
  Var t = VarNode::Make("t", T2()), r = VarNode::Make("r", T2());
  SeqExpr then_body = SeqExprNode::Make({Ordinary({Bind(t, Add(x, x))})}, t);
  Expr iff = *IfNode::Make(c, then_body, SeqExprNode::Make({}, x));
  auto f = FunctionNode::Make("f", {x, c}, nullptr,
                              SeqExprNode::Make({Ordinary({Bind(r, iff)})}, Add(r, t)));
  ExpectOneError({f}, "@f, body, result, argument 1",
                 "variable %t is used outside the scope where it is bound");
}

// @f and @g, each fine alone, binding the same variable %a.
std::vector<Item> TwoFunctionsBindingOneVariable() {
  Var x = VarNode::Make("x", T2()), y = VarNode::Make("y", T2()), a = VarNode::Make("a", T2());
  auto f =
      FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({Ordinary({Bind(a, Add(x, x))})}, a));
  auto g =
      FunctionNode::Make("g", {y}, nullptr, SeqExprNode::Make({Ordinary({Bind(a, Add(y, y))})}, a));
  return {f, g};
}

TEST(VerifierTest, VariableBoundInTwoFunctions) {
  // Each function alone is fine; sharing the binding's variable is not.
  ExpectOneError(TwoFunctionsBindingOneVariable(),
                 "@g, body, block 0, binding 0 (%a), bound variable",
                 "variable %a is bound more than once (also in @f)");
}

// VerifyParsedModule is for parsed modules only: it leaves out the check
// above, which no parsed module can fail. On parsed modules, well-formed or
// not, it reports what VerifyModule does (the parser fuzzer checks this on
// every input).
TEST(VerifierTest, VerifyParsedModuleLeavesOutOnlyTheCheckAcrossItems) {
  Module shared = *Module::Make(TwoFunctionsBindingOneVariable());
  EXPECT_FALSE(Verify(shared).ok());
  EXPECT_TRUE(VerifyParsed(shared).ok());

  std::vector<std::string> texts;
  for (const auto& file : testing::ListTestFiles("examples/spec", ".plir"))
    texts.push_back(testing::ReadTestFile(file));
  // Not well-formed: an unbound symbolic dimension, in the second of two items.
  texts.push_back(R"(
def @f(%x: Tensor[(2,), float32]) {
  %a = add(%x, %x);
  %a
}

def @g(%x: Tensor[(2,), float32]) {
  %a = call_packed("g", %x, sinfo_args=[Tensor[(n,), float32]]);
  %a
})");
  for (const std::string& text : texts) {
    Module m = testing::ParseOrFail(text);
    std::vector<VerifyError> full = VerifyModule(m), parsed = VerifyParsedModule(m, {});
    ASSERT_EQ(full.size(), parsed.size()) << text;
    for (size_t i = 0; i < full.size(); ++i) EXPECT_EQ(full[i].ToString(), parsed[i].ToString());
    EXPECT_EQ(Verify(m).message(), VerifyParsed(m).message());
  }
  EXPECT_FALSE(VerifyParsed(testing::ParseOrFail(texts.back())).ok());
}

TEST(VerifierTest, VariableBoundInTwoOfManyFunctions) {
  // Enough variables that the module-level check takes its radix-sort path.
  Var shared = VarNode::Make("shared", T2());
  std::vector<Item> items;
  for (int f = 0; f < 100; ++f) {
    Var x = VarNode::Make("x", T2());
    std::vector<Binding> b;
    Expr last = x;
    for (int i = 0; i < 50; ++i) {
      Var v = (i == 20 && (f == 10 || f == 90)) ? shared : VarNode::Make("v", T2());
      b.push_back(Bind(v, Add(last, x)));
      last = v;
    }
    items.push_back(FunctionNode::Make("f" + std::to_string(f), {x}, nullptr,
                                       SeqExprNode::Make({Ordinary(b)}, last)));
  }
  ExpectOneError(items, "@f90, body, block 0, binding 20 (%shared), bound variable",
                 "variable %shared is bound more than once (also in @f10)");
}

TEST(VerifierTest, VariableBoundInTwoOfMoreItemsThanPackedRecordsHold) {
  // Past 65,536 items the (variable, item) records cannot pack the item into
  // the address's top bits: the check takes 16-byte pairs, same message.
  Var shared = VarNode::Make("shared", T2());
  std::vector<Item> items;
  const int n = (1 << 16) + 10;
  for (int f = 0; f < n; ++f) {
    Var x = VarNode::Make("x", T2());
    Var v = (f == 3 || f == n - 2) ? shared : VarNode::Make("v", T2());
    items.push_back(FunctionNode::Make("f" + std::to_string(f), {x}, nullptr,
                                       SeqExprNode::Make({Ordinary({Bind(v, Add(x, x))})}, v)));
  }
  ExpectOneError(
      items, "@f" + std::to_string(n - 2) + ", body, block 0, binding 0 (%shared), bound variable",
      "variable %shared is bound more than once (also in @f3)");
}

TEST(VerifierTest, ManyVariablesBoundInTwoItemsOfALargeModule) {
  // Past 65,536 records the check splits them by address over the threads:
  // the errors are still every later binding of each shared variable, in
  // the variables' address order, each naming the item bound before, and
  // max_errors cuts that list.
  std::vector<Var> shared;
  for (int k = 0; k < 30; ++k) shared.push_back(VarNode::Make("s" + std::to_string(k), T2()));
  std::map<int, std::vector<int>> bound_in;  // shared variable -> items binding it, in order
  std::vector<Item> items;
  for (int f = 0; f < 200; ++f) {
    Var x = VarNode::Make("x", T2());
    std::vector<Binding> b;
    Expr last = x;
    for (int i = 0; i < 400; ++i) {
      int k = i - 100;
      bool share =
          k >= 0 && k < 30 && (f == 5 * k || f == 5 * k + 3 || (k % 3 == 0 && f == 5 * k + 4));
      Var v = share ? shared[k] : VarNode::Make("v", T2());
      if (share) bound_in[k].push_back(f);
      b.push_back(Bind(v, Add(last, x)));
      last = v;
    }
    items.push_back(FunctionNode::Make("f" + std::to_string(f), {x}, nullptr,
                                       SeqExprNode::Make({Ordinary(b)}, last)));
  }
  std::vector<int> by_address(30);
  for (int k = 0; k < 30; ++k) by_address[k] = k;
  std::sort(by_address.begin(), by_address.end(),
            [&](int a, int b) { return shared[a].get() < shared[b].get(); });
  std::vector<VerifyError> want;
  for (int k : by_address)
    for (size_t j = 1; j < bound_in[k].size(); ++j)
      want.push_back({"@f" + std::to_string(bound_in[k][j]) + ", body, block 0, binding " +
                          std::to_string(100 + k) + " (%s" + std::to_string(k) +
                          "), bound variable",
                      "variable %s" + std::to_string(k) + " is bound more than once (also in @f" +
                          std::to_string(bound_in[k][j - 1]) + ")"});
  ASSERT_EQ(want.size(), 40u);
  Module m = *Module::Make(std::move(items));
  for (size_t max_errors : {size_t{100}, size_t{7}}) {
    std::vector<VerifyError> got = VerifyModule(m, max_errors);
    ASSERT_EQ(got.size(), std::min(max_errors, want.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].path, want[i].path) << i;
      EXPECT_EQ(got[i].message, want[i].message) << i;
    }
  }
}

TEST(VerifierTest, VariableOfAnotherFunction) {
  Var x = VarNode::Make("x", T2()), y = VarNode::Make("y", T2()), a = VarNode::Make("a", T2());
  auto f =
      FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({Ordinary({Bind(a, Add(x, x))})}, a));
  auto g = FunctionNode::Make("g", {y}, nullptr, SeqExprNode::Make({}, Add(y, a)));
  // Bound in an earlier function: out of its scope; in a later one: undefined here.
  ExpectOneError({f, g}, "@g, body, result, argument 1",
                 "variable %a is used outside the scope where it is bound");
  ExpectOneError({g, f}, "@g, body, result, argument 1", "variable %a is not defined");
}

// A thread's verifier serves item after item: nothing of one item (its
// variables in scope, its errors) carries into the next. On one thread, one
// verifier checks every function; each odd function uses the variable the
// function before it bound, which is out of its scope there.
TEST(VerifierTest, AVerifierReusedForTheNextItemStartsClean) {
  std::vector<Item> items;
  Var before;
  for (int i = 0; i < 16; ++i) {
    Var x = VarNode::Make("x", T2()), a = VarNode::Make("a" + std::to_string(i), T2());
    const std::string name = "f" + std::to_string(i);
    if (i % 2 == 0) {
      items.push_back(FunctionNode::Make(name, {x}, nullptr,
                                         SeqExprNode::Make({Ordinary({Bind(a, Add(x, x))})}, a)));
      before = a;
    } else {
      items.push_back(
          FunctionNode::Make(name, {x}, nullptr, SeqExprNode::Make({}, Add(x, before))));
    }
  }
  Module m = *Module::Make(std::move(items));
  for (int threads : {1, 2}) {
    SetDefaultThreads(threads);
    auto errors = VerifyModule(m, 1000);
    ASSERT_EQ(errors.size(), 8u) << threads << " threads";
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(errors[i].path, "@f" + std::to_string(2 * i + 1) + ", body, result, argument 1");
      EXPECT_EQ(errors[i].message, "variable %a" + std::to_string(2 * i) +
                                       " is used outside the scope where it is bound");
    }
  }
  SetDefaultThreads(0);
}

TEST(VerifierTest, ManyFunctionsVerifyInParallelInModuleOrder) {
  // One error per function; the report lists them in module order.
  std::vector<Item> items;
  for (int i = 0; i < 64; ++i) {
    Var x = VarNode::Make("x", T2()), ghost = VarNode::Make("ghost" + std::to_string(i), T2());
    items.push_back(FunctionNode::Make("f" + std::to_string(i), {x}, nullptr,
                                       SeqExprNode::Make({}, Add(x, ghost))));
  }
  Module m = *Module::Make(std::move(items));
  auto errors = VerifyModule(m, 1000);
  ASSERT_EQ(errors.size(), 64u);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(errors[i].path, "@f" + std::to_string(i) + ", body, result, argument 1");
  EXPECT_EQ(VerifyModule(m, 5).size(), 5u);
}

TEST(VerifierTest, UnknownGlobal) {
  auto f = FunctionNode::Make(
      "f", {}, nullptr,
      SeqExprNode::Make({}, MakeGlobalCall(GlobalVarNode::Make("nope"), {}, T2())));
  ExpectOneError({f}, "@f, body, result, callee", "unknown global @nope");
}

TEST(VerifierTest, ExternCalledDirectly) {
  Var p = VarNode::Make("p", T2());
  auto k = ExternFuncNode::Make("k", {p}, T2());
  Var x = VarNode::Make("x", T2());
  auto f = FunctionNode::Make(
      "f", {x}, nullptr,
      SeqExprNode::Make({}, MakeGlobalCall(GlobalVarNode::Make("k"), {x}, T2())));
  ExpectOneError({k, f}, "@f, body, result", "@k is an extern kernel; call it through call_tir");
}

TEST(VerifierTest, CallTirOfAFunction) {
  auto g = FunctionNode::Make("g", {}, nullptr, SeqExprNode::Make({}, PrimValueNode::Int(1)));
  Expr call =
      *MakeOpCall("call_tir", {GlobalVarNode::Make("g"), TupleNode::Make({})}, Attrs(), {T2()});
  auto f = FunctionNode::Make("f", {}, nullptr, SeqExprNode::Make({}, call));
  ExpectOneError({g, f}, "@f, body, result",
                 "call_tir needs an extern kernel, but @g is a function");
}

TEST(VerifierTest, AnnotationInconsistent) {
  Var x = VarNode::Make("x", T2());
  Var a = VarNode::Make("a", TensorTypeNode::Make({Dim::Const(3)}, DataType::kFloat32));
  auto f =
      FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({Ordinary({Bind(a, Add(x, x))})}, x));
  ExpectOneError({f}, "@f, body, block 0, binding 0 (%a)",
                 "the annotation Tensor[(3,), float32] of %a is incompatible with its value's type "
                 "Tensor[(2,), float32]");
}

TEST(VerifierTest, ReturnTypeInconsistent) {
  Var x = VarNode::Make("x", T2());
  auto f =
      FunctionNode::Make("f", {x}, PrimTypeNode::Make(DataType::kInt64), SeqExprNode::Make({}, x));
  ExpectOneError({f}, "@f", "the return type Prim[int64] is incompatible with the body's type");
}

TEST(VerifierTest, GlobalCallArgumentMismatch) {
  Var p = VarNode::Make("p", T2());
  auto g = FunctionNode::Make("g", {p}, nullptr, SeqExprNode::Make({}, p));
  auto f = FunctionNode::Make("f", {}, nullptr,
                              SeqExprNode::Make({}, MakeGlobalCall(GlobalVarNode::Make("g"),
                                                                   {PrimValueNode::Int(1)}, T2())));
  ExpectOneError({g, f}, "@f, body, result", "argument 0 of @g has type Prim[int64]");
  auto h = FunctionNode::Make(
      "h", {}, nullptr, SeqExprNode::Make({}, MakeGlobalCall(GlobalVarNode::Make("g"), {}, T2())));
  ExpectOneError({g, h}, "@h, body, result", "@g takes 1 argument(s), got 0");
}

TEST(VerifierTest, OpCallThatNoLongerTypeChecks) {
  Var x = VarNode::Make("x", T2());
  Var y = VarNode::Make("y", TensorTypeNode::Make({Dim::Const(3)}, DataType::kFloat32));
  Expr bad = CallNode::MakeUnchecked(OpRegistry::Global().Lookup("add"), {x, y}, Attrs(), {}, T2());
  auto f = FunctionNode::Make("f", {x, y}, nullptr, SeqExprNode::Make({}, bad));
  ExpectOneError({f}, "@f, body, result", "do not broadcast");
}

// An op of `nargs` operands, registered once per process (--gtest_repeat),
// whose inference counts its runs in *inferred and gives its first
// operand's type, or an error when the operands' types differ.
Op CountedOp(const std::string& name, int nargs, int* inferred) {
  if (!OpRegistry::Global().Lookup(name)) {
    OpDef def;
    def.name = name;
    def.min_args = def.max_args = nargs;
    def.origin = "verifier_test";
    def.infer = [inferred](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
      ++*inferred;
      for (const Expr& a : args)
        if (a->type() != args[0]->type()) return InvalidArgument("operand types differ");
      return args[0]->type();
    };
    EXPECT_TRUE(OpRegistry::Global().Register(def).ok());
  }
  return OpRegistry::Global().Lookup(name);
}

// A call that MakeOpCall or the parser made got its type from its op's
// inference, and nothing it holds can change: the verifier does not run the
// inference again. A call built with its own type (MakeUnchecked, as the
// loaders and plugins may) is inferred and checked.
TEST(VerifierTest, InfersOnlyTheOpCallsNotMadeByTheirInference) {
  static int inferred = 0;
  Op op = CountedOp("verifier_test.counted", 1, &inferred);
  ASSERT_TRUE(op);
  auto module_of = [](Var x, Expr call) {
    return *Module::Make({FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({}, call))});
  };

  Var x = VarNode::Make("x", T2());
  Expr made = *MakeOpCall(op, std::vector<Expr>{x}, Attrs(), std::vector<Type>{});
  EXPECT_TRUE(Downcast<CallNode>(made)->type_inferred());
  inferred = 0;
  EXPECT_TRUE(Verify(module_of(x, made)).ok());
  EXPECT_EQ(inferred, 0);

  Module parsed =
      testing::ParseOrFail("def @f(%x: Tensor[(2,), float32]) { verifier_test.counted(%x) }");
  inferred = 0;
  EXPECT_TRUE(Verify(parsed).ok());
  EXPECT_EQ(inferred, 0);

  Expr typed = CallNode::MakeUnchecked(op, {x}, Attrs(), {}, T2());
  EXPECT_FALSE(Downcast<CallNode>(typed)->type_inferred());
  inferred = 0;
  EXPECT_TRUE(Verify(module_of(x, typed)).ok());
  EXPECT_EQ(inferred, 1);
  Expr mistyped = CallNode::MakeUnchecked(op, {x}, Attrs(), {}, ObjectTypeNode::Get());
  EXPECT_NE(Verify(module_of(x, mistyped)).message().find("disagrees with the inferred type"),
            std::string::npos);
}

// Calls read from a file (MakeUnchecked) that repeat an op, its attributes
// and their operands' types are inferred once: the others take that type.
// A recorded type that disagrees is still an error, at every such call, and
// so is a call whose inference fails, whatever came before it.
TEST(VerifierTest, InfersARepeatedOpCallOnceAndChecksEachRecordedType) {
  static int inferred = 0;
  Op op = CountedOp("verifier_test.counted_memo", 2, &inferred);
  ASSERT_TRUE(op);
  const Type t3 = TensorTypeNode::Make({Dim::Const(3)}, DataType::kFloat32);
  Var x = VarNode::Make("x", T2()), y = VarNode::Make("y", T2()), z = VarNode::Make("z", t3);
  // f(x, y, z) { a0 = op(operands 0); a1 = op(operands 1); ...; x }, each
  // call with its recorded type (MakeUnchecked, as a loader makes it).
  auto module_of = [&](std::vector<std::pair<std::vector<Expr>, Type>> calls) {
    std::vector<Binding> bindings;
    for (size_t i = 0; i < calls.size(); ++i)
      bindings.push_back(
          Bind(VarNode::Make("a" + std::to_string(i), calls[i].second),
               CallNode::MakeUnchecked(op, calls[i].first, Attrs(), {}, calls[i].second)));
    return *Module::Make(
        {FunctionNode::Make("f", {x, y, z}, nullptr, SeqExprNode::Make({Ordinary(bindings)}, x))});
  };
  const Type object = ObjectTypeNode::Get();

  inferred = 0;
  EXPECT_TRUE(Verify(module_of({{{x, y}, T2()}, {{y, x}, T2()}, {{x, x}, T2()}})).ok());
  EXPECT_EQ(inferred, 1);

  // The same key, the second call's recorded type wrong; then the first's.
  for (int wrong = 0; wrong < 2; ++wrong) {
    std::vector<VerifyError> errors = VerifyModule(
        module_of({{{x, y}, wrong == 0 ? T2() : object}, {{y, x}, wrong == 1 ? T2() : object}}));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].message.find("disagrees with the inferred type Tensor[(2,), float32]"),
              std::string::npos)
        << errors[0].message;
    EXPECT_NE(errors[0].path.find(wrong == 0 ? "a1" : "a0"), std::string::npos) << errors[0].path;
  }

  // Other operand types are another key. A call whose inference fails is
  // an error each time, after a call that was inferred.
  std::vector<VerifyError> errors =
      VerifyModule(module_of({{{x, y}, T2()}, {{x, z}, T2()}, {{z, y}, t3}, {{x, z}, T2()}}));
  ASSERT_EQ(errors.size(), 3u);
  for (const VerifyError& e : errors)
    EXPECT_NE(e.message.find("operand types differ"), std::string::npos) << e.message;
}

TEST(VerifierTest, ReportsSeveralErrors) {
  Var x = VarNode::Make("x", T2()), g1 = VarNode::Make("g1", T2()), g2 = VarNode::Make("g2", T2());
  auto f = FunctionNode::Make("f", {x}, nullptr, SeqExprNode::Make({}, Add(g1, g2)));
  Module m = *Module::Make({f});
  EXPECT_EQ(VerifyModule(m).size(), 2u);
  EXPECT_NE(Verify(m).message().find("%g1"), std::string::npos);
  EXPECT_NE(Verify(m).message().find("%g2"), std::string::npos);
}

// Symbolic dimensions must be bound where used: by a parameter's type or
// an earlier match_cast in scope (Relax's rule).
std::vector<VerifyError> ParseAndVerify(const std::string& text) {
  return VerifyModule(testing::ParseOrFail(text));
}

TEST(VerifierTest, SymbolicDimBoundByParameter) {
  EXPECT_TRUE(ParseAndVerify(R"(
def @f(%x: Tensor[(n, 2), float32]) {
  %a = call_packed("g", %x, sinfo_args=[Tensor[(n,), float32]]);
  %a
})")
                  .empty());
}

TEST(VerifierTest, SymbolicDimNotBound) {
  auto errors = ParseAndVerify(R"(
def @f(%x: Tensor[(2,), float32]) {
  %a = call_packed("g", %x, sinfo_args=[Tensor[(n,), float32]]);
  %a
})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "@f, body, block 0, binding 0 (%a), sinfo_args");
  EXPECT_NE(errors[0].message.find("symbolic dimension n is not bound"), std::string::npos)
      << errors[0].message;
}

TEST(VerifierTest, SymbolicDimInAnnotationNotBound) {
  auto errors = ParseAndVerify(R"(
def @f(%x: Tensor[ndim=1, float32]) {
  %a: Tensor[(m,), float32] = nn.relu(%x);
  %a
})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "@f, body, block 0, binding 0 (%a), type");
}

TEST(VerifierTest, SymbolicDimInShapeValue) {
  EXPECT_TRUE(ParseAndVerify(R"(
def @f(%x: Tensor[(n,), float32]) {
  %t = shape_to_tensor(shape[(n, 2)]);
  %t
})")
                  .empty());
  auto errors = ParseAndVerify(R"(
def @f(%x: Tensor[(n,), float32]) {
  %t = shape_to_tensor(shape[(k, 2)]);
  %t
})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "@f, body, block 0, binding 0 (%t), shape value");
  EXPECT_NE(errors[0].message.find("symbolic dimension k is not bound"), std::string::npos)
      << errors[0].message;
}

// A name inside an expression is a use; a Prim value binds its name.
TEST(VerifierTest, SymbolicExpressionsAndPrimValues) {
  EXPECT_TRUE(ParseAndVerify(R"(
def @f(%r: Prim[int64, value=r], %x: Tensor[(n,), float32]) {
  %a = strided_slice(%x, (0,), (prim[r * 8],), (prim[r * 8 + n],), assume_inbound=true);
  %a
})")
                  .empty());
  auto errors = ParseAndVerify(R"(
def @f(%x: Tensor[(n,), float32]) {
  %a = call_packed("g", prim[k + n], sinfo_args=[Object]);
  %a
})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "@f, body, block 0, binding 0 (%a), value");
  EXPECT_NE(errors[0].message.find("symbolic dimension k is not bound"), std::string::npos)
      << errors[0].message;
  // `m * n` in a parameter's type binds neither name.
  auto uses = ParseAndVerify(R"(
def @f(%x: Tensor[(m * n,), float32]) {
  %a = call_packed("g", %x, sinfo_args=[Tensor[(m,), float32]]);
  %a
})");
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_NE(uses[0].message.find("symbolic dimension m is not bound"), std::string::npos);
}

TEST(VerifierTest, MatchCastBindsSymbolicDims) {
  EXPECT_TRUE(ParseAndVerify(R"(
def @f(%x: Tensor[ndim=2, float32]) -> Tensor[ndim=2, float32] {
  %y = match_cast(%x, sinfo_args=[Tensor[(m, n), float32]]);
  %z = call_packed("g", %y, sinfo_args=[Tensor[(n, m), float32]]);
  %z
})")
                  .empty());
}

TEST(VerifierTest, MatchCastInBranchBindsOnlyThere) {
  auto errors = ParseAndVerify(R"(
def @f(%x: Tensor[ndim=1, float32], %c: Tensor[(), bool]) {
  %r = if (%c) {
    %y = match_cast(%x, sinfo_args=[Tensor[(k,), float32]]);
    %y
  } else {
    %x
  };
  %s = call_packed("g", %r, sinfo_args=[Tensor[(k,), float32]]);
  %s
})");
  ASSERT_EQ(errors.size(), 1u) << errors[0].ToString();
  EXPECT_EQ(errors[0].path, "@f, body, block 0, binding 1 (%s), sinfo_args");
}

TEST(VerifierTest, MatchCastTypeIsChecked) {
  auto m = ParseModule(
      "def @f(%x: Tensor[(2,), float32]) { match_cast(%x, sinfo_args=[Tensor[(3,), float32]]) }");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("can never match"), std::string::npos)
      << m.status().message();
}

TEST(VerifierTest, ItemAttributeKeysMustBeTextNames) {
  // A key the text format cannot spell (from JSON or binary input) would be
  // printed as text the parser rejects; keys inside map values are quoted.
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] attrs {cfg = {"any key" = 1}} {
  %x
}
)");
  EXPECT_TRUE(Verify(m).ok());
  Function f = m.LookupFunction("main");
  Function bad = FunctionNode::Make(f->name(), f->params(), f->ret_type(), f->body(),
                                    f->attrs().With(Symbol("num_{nput"), AttrValue::Int(2)));
  Status s = Verify(m.WithItem(bad));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("attribute key 'num_{nput' cannot be written in the text format"),
            std::string::npos)
      << s.message();
}

// Strings must be valid UTF-8 wherever they live (hostile round F2): a
// binary or JSON file, or a plugin, can hold any bytes, which JSON could
// not be read back with. The parser refuses them in string literals.
TEST(VerifierTest, StringsMustBeValidUtf8) {
  const std::string bad = "\xed\xa0\x80\xff";  // a surrogate and a stray byte
  Module m = testing::ParseOrFail(R"(
def @main(%x: Object) -> Object attrs {note = "ok", names = ["a"]} {
  %y = call_packed("f", %x);
  %y
}
)");
  ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
  Function f = m.LookupFunction("main");
  // A function attribute, directly and inside a list and a map.
  for (const AttrValue& v :
       {AttrValue::String(bad), AttrValue::List({AttrValue::String("a"), AttrValue::String(bad)}),
        *AttrValue::Map({{bad, AttrValue::Int(1)}})}) {
    Function g = FunctionNode::Make(f->name(), f->params(), f->ret_type(), f->body(),
                                    f->attrs().With(Symbol("note"), v));
    Status s = Verify(m.WithItem(g));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("attribute 'note' holds a string that is not valid UTF-8"),
              std::string::npos)
        << s.message();
  }
  // A string argument (call_packed's function name), and a call attribute.
  Var x = f->params()[0], y = VarNode::Make("y", ObjectTypeNode::Get());
  auto with_body = [&](Expr value, Var bound) {
    return FunctionNode::Make("main", {x}, ObjectTypeNode::Get(),
                              SeqExprNode::Make({Ordinary({Bind(bound, value)})}, bound));
  };
  Expr packed_bad = *MakeOpCall("call_packed", {StringImmNode::Make(bad), x});
  ExpectOneError({with_body(packed_bad, y)},
                 "@main, body, block 0, binding 0 (%y), value, argument 0", "is not valid UTF-8");
  auto* call = As<CallNode>(packed_bad);
  Expr attr_bad = CallNode::MakeUnchecked(call->callee(), {StringImmNode::Make("f"), x},
                                          *Attrs::Make({{Symbol("tag"), AttrValue::String(bad)}}),
                                          {}, call->type());
  // (call_packed takes no attribute 'tag' either: a second error.)
  Status attr_status = Verify(*Module::Make({with_body(attr_bad, y)}));
  EXPECT_NE(attr_status.message().find("@main, body, block 0, binding 0 (%y), value: attribute "
                                       "'tag' holds a string that is not valid UTF-8"),
            std::string::npos)
      << attr_status.message();
  // A variable's name.
  Expr packed = *MakeOpCall("call_packed", {StringImmNode::Make("f"), x});
  Var named_bad = VarNode::Make(bad, ObjectTypeNode::Get());
  Module vm = *Module::Make({with_body(packed, named_bad)});
  Status s = Verify(vm);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the name of variable"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("is not valid UTF-8"), std::string::npos) << s.message();
  // Valid UTF-8 beyond ASCII is fine.
  Expr packed_ok = *MakeOpCall("call_packed", {StringImmNode::Make("caf\xc3\xa9"), x});
  EXPECT_TRUE(Verify(*Module::Make({with_body(packed_ok, y)})).ok());
}

}  // namespace
}  // namespace plir
