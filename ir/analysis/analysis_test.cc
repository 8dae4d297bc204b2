// The SDK analyses: def-use, purity, free variables, call graph.
#include <gtest/gtest.h>

#include "ir/analysis/call_graph.h"
#include "ir/analysis/def_use.h"
#include "ir/analysis/free_vars.h"
#include "ir/analysis/purity.h"
#include "ir/builder.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

using testing::FindBinding;
using testing::ParseOrFail;

std::vector<std::string> Names(const std::vector<Var>& vs) {
  std::vector<std::string> out;
  for (const Var& v : vs) out.push_back(v->name_hint());
  return out;
}

constexpr char kModule[] = R"(
def @effect(%x: Tensor[(2,), float32]) -> Object {
  call_packed("print", %x, sinfo_args=[Object])
}
def @calls_effect(%x: Tensor[(2,), float32]) -> Object {
  %r = @effect(%x);
  %r
}
extern @kern(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32]
def @pure_helper(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %y = call_tir(@kern, (%x,), sinfo_args=[Tensor[(2,), float32]]);
  %y
}
def @main(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) {
  dataflow {
    %a = add(%x, %x);
    %b = multiply(%a, %a);
    %u = nn.relu(%x);
    output %a, %b;
  }
  %h = @pure_helper(%b);
  %r = if (%c) {
    %t = add(%b, %a);
    %t
  } else {
    %b
  };
  %out = (%r, %b);
  %out
}
def @unreached() -> Object {
  %e = @calls_effect(const<Tensor[(2,), float32]>[1, 2]);
  %e
}
)";

TEST(DefUseTest, CountsUsesUsersAndDefinitions) {
  Module m = ParseOrFail(kModule);
  Function f = m.LookupFunction("main");
  DefUse du = DefUse::Compute(*f);
  const SeqExprNode& body = *f->body();
  const VarNode* x = f->params()[0].get();
  const VarNode* a = FindBinding(body, "a")->var().get();
  const VarNode* b = FindBinding(body, "b")->var().get();
  const VarNode* u = FindBinding(body, "u")->var().get();
  const VarNode* r = FindBinding(body, "r")->var().get();

  // %x: add(%x, %x) twice, relu once.
  EXPECT_EQ(du.NumUses(x), 3u);
  EXPECT_EQ(du.Definition(x), nullptr);
  EXPECT_TRUE(du.Find(x)->is_param);
  ASSERT_EQ(du.Users(x).size(), 2u);
  EXPECT_EQ(du.Users(x)[0], FindBinding(body, "a"));
  EXPECT_EQ(du.Users(x)[1], FindBinding(body, "u"));

  EXPECT_EQ(du.NumUses(a), 3u);  // multiply twice, %t in the then branch
  EXPECT_EQ(du.Definition(a), FindBinding(body, "a"));
  ASSERT_EQ(du.Users(a).size(), 2u);
  EXPECT_EQ(du.Users(a)[1], FindBinding(body, "t"));  // innermost binding

  // %b: multiply's user... %h, %t, the else branch's result, %out.
  EXPECT_EQ(du.NumUses(b), 4u);
  EXPECT_TRUE(du.UsedInResult(b));
  EXPECT_TRUE(du.UsedInResult(b, As<IfNode>(FindBinding(body, "r")->value())->else_body().get()));
  EXPECT_FALSE(du.UsedInResult(b, &body));

  EXPECT_EQ(du.NumUses(u), 0u);
  EXPECT_TRUE(du.Users(u).empty());
  EXPECT_EQ(du.NumUses(r), 1u);
  EXPECT_FALSE(du.UsedInResult(r));

  const VarNode* out = FindBinding(body, "out")->var().get();
  EXPECT_TRUE(du.UsedInResult(out, &body));
  // Every variable of the function, in definition order.
  std::vector<std::string> order;
  for (const VarNode* v : du.vars()) order.push_back(v->name_hint());
  EXPECT_EQ(order, (std::vector<std::string>{"x", "c", "a", "b", "u", "h", "r", "t", "out"}));
  // A variable of another function is not known.
  Function other = m.LookupFunction("effect");
  EXPECT_FALSE(du.Defines(other->params()[0].get()));
  EXPECT_EQ(du.NumUses(other->params()[0].get()), 0u);
}

TEST(DefUseTest, WorksForVariablesWithoutIndex) {
  // A function built by hand: no index hints from a parser.
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t);
  Var y = VarNode::Make("y", t);
  Expr add = *MakeOpCall("add", std::vector<Expr>{x, x});
  Function f = FunctionNode::Make(
      "f", {x}, nullptr,
      SeqExprNode::Make({BindingBlockNode::Make({VarBindingNode::Make(y, add)}, false)}, y));
  DefUse du = DefUse::Compute(*f);
  EXPECT_EQ(du.NumUses(x.get()), 2u);
  EXPECT_EQ(du.NumUses(y.get()), 1u);
  EXPECT_TRUE(du.UsedInResult(y.get(), f->body().get()));
}

TEST(PurityTest, OpsFunctionsAndExterns) {
  Module m = ParseOrFail(kModule);
  ImpureFunctions impure = ImpureFunctions::Compute(m);
  EXPECT_TRUE(impure.Contains("effect"));
  EXPECT_TRUE(impure.Contains("calls_effect"));  // transitively
  EXPECT_TRUE(impure.Contains("unreached"));
  EXPECT_FALSE(impure.Contains("pure_helper"));  // call_tir of an extern is pure
  EXPECT_FALSE(impure.Contains("main"));
  EXPECT_FALSE(impure.Contains("kern"));
  EXPECT_EQ(impure.size(), 3u);

  const SeqExprNode& body = *m.LookupFunction("main")->body();
  const Expr& h = FindBinding(body, "h")->value();
  EXPECT_TRUE(IsPure(FindBinding(body, "a")->value()));
  EXPECT_TRUE(IsPure(h, &impure));
  EXPECT_FALSE(IsPure(h));                               // without module knowledge: conservative
  EXPECT_TRUE(IsPure(FindBinding(body, "r")->value()));  // an if of pure branches
  EXPECT_TRUE(ContainsControlFlow(FindBinding(body, "r")->value().get()));
  EXPECT_FALSE(ContainsControlFlow(FindBinding(body, "a")->value().get()));
  const Expr& e = FindBinding(*m.LookupFunction("unreached")->body(), "e")->value();
  EXPECT_FALSE(IsPure(e, &impure));
  EXPECT_TRUE(HasSideEffects(m.LookupFunction("effect").get()));
  EXPECT_FALSE(HasSideEffects(m.LookupFunction("main").get(), &impure));
}

TEST(PurityTest, IfWithImpureBranch) {
  Module m = ParseOrFail(R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(2,), float32]) -> Object {
  %r = if (%c) {
    %p = call_packed("print", %x, sinfo_args=[Object]);
    %p
  } else {
    %x
  };
  %r
}
)");
  const SeqExprNode& body = *m.LookupFunction("main")->body();
  EXPECT_FALSE(IsPure(FindBinding(body, "r")->value()));
}

// DimNamesUsed: the names the types written in an expression use (call
// sinfo_args, shape and symbolic values), in order, each once; not the
// types of the variables it reads.
TEST(DimNamesUsedTest, WrittenTypesOnly) {
  Module m = testing::ParseOrFail(R"(
extern @k(%a: Tensor[(n,), float32]) -> Tensor[(n,), float32]
def @main(%x: Tensor[(n, m), float32], %s: Shape[(q,)]) -> Tensor[(n,), float32] {
  %a = call_tir(@k, (%x,), sinfo_args=[Tensor[(n * k2,), float32]]);
  %t = (shape[(p, 4)], prim[r], %s, %a);
  %y = match_cast(%a, sinfo_args=[Tensor[(n,), float32]]);
  %y
}
)");
  Function f = m.LookupFunction("main");
  auto names = [&](const char* var) {
    std::string out;
    for (const auto& b : f->body()->blocks()[0]->bindings())
      if (b->var()->name_hint() == var)
        for (Symbol s : DimNamesUsed(b->value())) out += s.str() + " ";
    return out;
  };
  EXPECT_EQ(names("a"), "n k2 ");
  EXPECT_EQ(names("t"), "p r ");  // not q (%s's type) nor n (%a's)
  EXPECT_EQ(names("y"), "n ");
}

TEST(FreeVarsTest, ExpressionsFunctionsAndBindingRuns) {
  Module m = ParseOrFail(kModule);
  Function f = m.LookupFunction("main");
  const SeqExprNode& body = *f->body();
  EXPECT_TRUE(FreeVars(f.get()).empty());
  EXPECT_EQ(Names(FreeVars(FindBinding(body, "r")->value())),
            (std::vector<std::string>{"c", "b", "a"}));
  EXPECT_EQ(Names(FreeVars(FindBinding(body, "out")->value())),
            (std::vector<std::string>{"r", "b"}));
  // A run of bindings: %a, %b, %u use %x only.
  auto bindings = body.blocks()[0]->bindings();
  EXPECT_EQ(Names(FreeVars(bindings)), (std::vector<std::string>{"x"}));
  std::vector<const VarBindingNode*> tail{bindings[1].get(), bindings[2].get()};
  EXPECT_EQ(Names(FreeVars(std::span<const VarBindingNode* const>(tail))),
            (std::vector<std::string>{"a", "x"}));
}

TEST(CallGraphTest, CallsReferencesCallersReachability) {
  Module m = ParseOrFail(kModule);
  CallGraph g = CallGraph::Build(m);
  ASSERT_EQ(g.size(), 6u);
  auto idx = [&](const char* n) { return *g.IndexOf(n); };
  EXPECT_FALSE(g.IndexOf("missing").has_value());
  EXPECT_EQ(g.Callees(idx("main")), std::vector<uint32_t>{uint32_t(idx("pure_helper"))});
  EXPECT_TRUE(g.Callees(idx("pure_helper")).empty());  // call_tir's kernel is a reference
  EXPECT_EQ(g.References(idx("pure_helper")), std::vector<uint32_t>{uint32_t(idx("kern"))});
  EXPECT_EQ(g.Callers(idx("effect")), std::vector<uint32_t>{uint32_t(idx("calls_effect"))});
  size_t roots[] = {idx("main")};
  std::vector<bool> r = g.Reachable(roots);
  EXPECT_TRUE(r[idx("main")] && r[idx("pure_helper")] && r[idx("kern")]);
  EXPECT_FALSE(r[idx("effect")] || r[idx("calls_effect")] || r[idx("unreached")]);
  size_t seeds[] = {idx("effect")};
  std::vector<bool> c = g.TransitiveCallers(seeds);
  EXPECT_TRUE(c[idx("effect")] && c[idx("calls_effect")] && c[idx("unreached")]);
  EXPECT_FALSE(c[idx("main")]);
}

// Local functions and calls of function values: purity follows the
// Callable's type, defining a function has no effect, free variables of a
// local function are what it captures, def-use sees uses inside it.
TEST(AnalysisTest, LocalFunctionsAndCallables) {
  Module m = ParseOrFail(R"(
def @f(%x: Tensor[(2,), float32], %get: Callable[(), Object], %put: Callable[(Object), (), pure=false]) -> () {
  %k = add(%x, %x);
  %g = fn(%y: Tensor[(2,), float32]) {
    %t = add(%y, %k);
    %p = %put(%t);
    %t
  };
  %a = %get();
  %b = %g(%x);
  %c = %put(%a);
  %c
})");
  Function f = m.LookupFunction("f");
  const SeqExprNode& body = *f->body();
  const VarBindingNode* g = FindBinding(body, "g");
  const VarBindingNode* a = FindBinding(body, "a");
  const VarBindingNode* b = FindBinding(body, "b");
  const VarBindingNode* c = FindBinding(body, "c");
  ASSERT_TRUE(g && a && b && c);
  // The local function calls an impure callback: its type is impure, yet
  // defining it has no effect; calling it has.
  EXPECT_EQ(TypeToString(g->var()->type()),
            "Callable[(Tensor[(2,), float32]), Tensor[(2,), float32], pure=false]");
  EXPECT_TRUE(IsPure(g->value()));
  EXPECT_FALSE(IsPure(b->value()));
  EXPECT_TRUE(IsPure(a->value()));
  EXPECT_FALSE(IsPure(c->value()));
  EXPECT_TRUE(ImpureFunctions::Compute(m).Contains("f"));
  // What the closure captures.
  EXPECT_EQ(Names(FreeVars(g->value())), (std::vector<std::string>{"k", "put"}));
  // Def-use: %k is used inside the local function (by its binding %t); %y
  // is the local function's parameter.
  DefUse du = DefUse::Compute(*f);
  const VarNode* k = FindBinding(body, "k")->var().get();
  ASSERT_EQ(du.Users(k).size(), 1u);
  EXPECT_EQ(du.Users(k)[0]->var()->name_hint(), "t");
  auto* fn = As<LocalFnNode>(g->value());
  ASSERT_TRUE(fn);
  ASSERT_TRUE(du.Find(fn->params()[0].get()));
  EXPECT_TRUE(du.Find(fn->params()[0].get())->is_param);
  EXPECT_EQ(du.NumUses(g->var().get()), 1u);  // the callee of %b
}

}  // namespace
}  // namespace plir
