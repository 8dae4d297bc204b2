// The SDK's rewriting helpers: the binding mutator, replacing uses, the
// block rewriter, unused-binding removal, op-call matching and type
// inference from types, the greedy pattern driver (use counts, visibility,
// operand matching, erasure, diagnostics, trace) and outlining. The value
// table that CSE uses: value_table_test.cc.
#include "ir/rewrite.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/analysis/unused_bindings.h"
#include "ir/structural.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

using testing::FindBinding;
using testing::ParseOrFail;

// Compares `f` with the function @name of `expected_text`, structurally.
void ExpectFunction(const Function& f, const std::string& expected_text) {
  Module want = ParseOrFail(expected_text);
  Item w = want.Lookup(f->name());
  ASSERT_TRUE(w) << f->name();
  EXPECT_TRUE(StructuralEqual(Item(f), w, true)) << PrintItem(f) << "\nexpected\n" << PrintItem(w);
}

constexpr char kChain[] = R"(
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %a = add(%x, %y);
    %b = multiply(%a, %x);
    %c = nn.relu(%b);
    output %c;
  }
  %c
}
)";

// RewriteChildren: a walker's callbacks see each child; nothing changed
// gives the node itself; a change rebuilds only what holds it; errors stop
// the rewrite.
// A call of a function value: its callee variable goes to the expression
// callback like an argument; a local function's body goes to the body
// callback.
TEST(RewriteChildrenTest, CalleeVariablesAndLocalFunctions) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32], %f: Callable[(Tensor[(2,), float32]), Tensor[(2,), float32]]) {
  %g = fn(%y: Tensor[(2,), float32]) { add(%y, %x) };
  %a = %f(%x);
  %a
}
)");
  Function f = m.LookupFunction("main");
  const auto& bindings = f->body()->blocks()[0]->bindings();
  Expr g = bindings[0]->var();
  const VarNode* fv = f->params()[1].get();
  auto f_to_g = [&](const Expr& c) -> StatusOr<Expr> { return c.get() == fv ? g : c; };
  auto same_body = [](const SeqExpr& s) -> StatusOr<SeqExpr> { return s; };
  auto call = RewriteChildren(bindings[1]->value(), f_to_g, same_body);
  ASSERT_TRUE(call.ok());
  EXPECT_EQ(PrintExpr(*call), "%g(%x)");
  int bodies = 0;
  auto count_body = [&](const SeqExpr& s) -> StatusOr<SeqExpr> {
    ++bodies;
    return s;
  };
  auto fn = RewriteChildren(bindings[0]->value(), f_to_g, count_body);
  ASSERT_TRUE(fn.ok());
  EXPECT_EQ(bodies, 1);
  EXPECT_EQ(fn->get(), bindings[0]->value().get());
}

TEST(RewriteChildrenTest, RebuildsOnlyWhatChanged) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32], %c: Prim[bool]) -> Tensor[(2,), float32] {
  %t = (%x, %y);
  %g = %t.1;
  %a = add(%x, %g);
  %r = if (%c) {
    %u = multiply(%a, %x);
    %u
  } else {
    %a
  };
  %r
}
)");
  Function f = m.LookupFunction("main");
  const auto& bindings = f->body()->blocks()[0]->bindings();
  const VarNode* x = f->params()[0].get();
  Expr y = f->params()[1];
  auto same = [](const Expr& c) -> StatusOr<Expr> { return c; };
  auto same_body = [](const SeqExpr& s) -> StatusOr<SeqExpr> { return s; };
  auto x_to_y = [&](const Expr& c) -> StatusOr<Expr> { return c.get() == x ? y : c; };
  int bodies = 0;
  auto count_body = [&](const SeqExpr& s) -> StatusOr<SeqExpr> {
    ++bodies;
    return s;
  };
  for (const auto& b : bindings) {
    auto r = RewriteChildren(b->value(), same, same_body);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->get(), b->value().get()) << "unchanged children must give the node itself";
  }
  // The tuple and the call take %y for %x; the access of %t is unchanged.
  auto tuple = RewriteChildren(bindings[0]->value(), x_to_y, same_body);
  ASSERT_TRUE(tuple.ok());
  EXPECT_EQ(PrintExpr(*tuple), "(%y, %y)");
  auto get = RewriteChildren(bindings[1]->value(), x_to_y, same_body);
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->get(), bindings[1]->value().get());
  auto call = RewriteChildren(bindings[2]->value(), x_to_y, same_body);
  ASSERT_TRUE(call.ok());
  EXPECT_EQ(PrintExpr(*call), "add(%y, %g)");
  EXPECT_TRUE(TypeEqual((*call)->type(), bindings[2]->value()->type()));
  // An `if`: both branches go to the body callback.
  auto branch = RewriteChildren(bindings[3]->value(), same, count_body);
  ASSERT_TRUE(branch.ok());
  EXPECT_EQ(bodies, 2);
  EXPECT_EQ(branch->get(), bindings[3]->value().get());
  // An error from a callback is returned.
  auto fail = [](const Expr&) -> StatusOr<Expr> { return InvalidArgument("stop"); };
  auto err = RewriteChildren(bindings[2]->value(), fail, same_body);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().message(), "stop");
}

TEST(ReplaceAllUsesTest, ReplacesUsesNotDefinitions) {
  Module m = ParseOrFail(kChain);
  Function f = m.LookupFunction("main");
  const VarNode* x = f->params()[0].get();
  Function g = ReplaceAllUses(f, x, f->params()[1]);
  ExpectFunction(g, R"(
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %a = add(%y, %y);
    %b = multiply(%a, %y);
    %c = nn.relu(%b);
    output %c;
  }
  %c
}
)");
  // Nothing to replace: the same function, shared.
  Var unused = VarNode::Make("z", x->type());
  EXPECT_EQ(ReplaceAllUses(f, unused.get(), f->params()[1]).get(), f.get());
  // The binding of %c is shared by the rewritten function? No: %b changed, so
  // only the parameters are shared.
  EXPECT_EQ(g->params()[0].get(), f->params()[0].get());
}

TEST(BlockRewriterTest, EditsAndSharing) {
  Module m = ParseOrFail(kChain);
  Function f = m.LookupFunction("main");
  Block block = f->body()->blocks()[0];
  {
    BlockRewriter rw(block);
    EXPECT_EQ(rw.Build().get(), block.get());  // no edit: the same block
  }
  BlockRewriter rw(block);
  const VarBindingNode* a = block->bindings()[0].get();
  Var d = VarNode::Make("d", a->var()->type(), true);
  rw.InsertBefore(
      0, VarBindingNode::Make(
             d, *MakeOpCall("subtract", std::vector<Expr>{f->params()[0], f->params()[1]})));
  rw.Replace(0, VarBindingNode::Make(a->var(), *MakeOpCall("add", std::vector<Expr>{d, d})));
  rw.Erase(2);
  rw.InsertAfter(1, VarBindingNode::Make(block->bindings()[2]->var(),
                                         *MakeOpCall("nn.relu", std::vector<Expr>{a->var()})));
  Block out = rw.Build();
  ASSERT_EQ(out->bindings().size(), 4u);
  EXPECT_EQ(out->bindings()[0]->var().get(), d.get());
  EXPECT_EQ(out->bindings()[2].get(), block->bindings()[1].get());  // untouched: shared
  EXPECT_TRUE(out->is_dataflow());
  SeqExpr body = SeqExprNode::Make({out}, f->body()->result());
  Function g = FunctionNode::Make("main", f->params(), f->ret_type(), body);
  ExpectFunction(g, R"(
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %d = subtract(%x, %y);
    %a = add(%d, %d);
    %b = multiply(%a, %x);
    %c = nn.relu(%a);
    output %c;
  }
  %c
}
)");
}

TEST(MatchTest, OpCallsAndCallTir) {
  Module m = ParseOrFail(R"(
extern @k(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] attrs {op_pattern = 0}
extern @k2(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32]
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %x);
  %r = reshape(%a, shape=[2]);
  %m = matmul(%x, %x);
  %t = call_tir(@k, (%a,), sinfo_args=[Tensor[(2,), float32]]);
  %v = call_tir(@k, (%a,), shape[(2, 3)], sinfo_args=[Tensor[(2,), float32]]);
  %t
}
)");
  Function f = m.LookupFunction("main");
  const Expr& a = FindBinding(f, "a")->value();
  EXPECT_TRUE(MatchOpCall(a, "add"));
  EXPECT_TRUE(MatchOpCall(a, "add", 2));
  EXPECT_FALSE(MatchOpCall(a, "add", 1));
  EXPECT_FALSE(MatchOpCall(a, "multiply"));
  EXPECT_TRUE(MatchOpCallWithPattern(a, OpPattern::kBroadcast));
  EXPECT_FALSE(MatchOpCallWithPattern(FindBinding(f, "r")->value(), OpPattern::kBroadcast));
  EXPECT_TRUE(MatchOpCallWithPattern(FindBinding(f, "r")->value(), OpPattern::kInjective));
  EXPECT_FALSE(MatchOpCallWithPattern(FindBinding(f, "m")->value(), OpPattern::kInjective));
  CallTirMatch ct;
  EXPECT_FALSE(MatchCallTir(a, &ct));
  ASSERT_TRUE(MatchCallTir(FindBinding(f, "t")->value(), &ct));
  EXPECT_EQ(ct.kernel->name(), "k");
  ASSERT_EQ(ct.args.size(), 1u);
  EXPECT_EQ(ct.args[0].get(), FindBinding(f, "a")->var().get());
  EXPECT_EQ(ct.tir_vars, nullptr);
  ASSERT_TRUE(MatchCallTir(FindBinding(f, "v")->value(), &ct));  // with tir_vars
  ASSERT_NE(ct.tir_vars, nullptr);
  EXPECT_EQ(ct.tir_vars->kind(), NodeKind::kShapeExpr);
  EXPECT_EQ(KernelPattern(*m.Lookup("k")), OpPattern::kElemWise);
  EXPECT_EQ(KernelPattern(*m.Lookup("k2")), OpPattern::kOpaque);
}

// relu(relu(x)) -> relu(x), looking through the operand's binding.
class ReluIdempotent : public RewritePattern {
 public:
  ReluIdempotent() : RewritePattern(2) {}
  std::optional<Expr> MatchAndRewrite(const Expr& v, const RewriteContext& ctx) const override {
    const CallNode* outer = MatchOpCall(v, "nn.relu", 1);
    if (!outer) return std::nullopt;
    auto* arg = As<VarNode>(outer->args()[0]);
    const Expr* def = arg ? ctx.Definition(arg) : nullptr;
    if (!def || !MatchOpCall(*def, "nn.relu", 1)) return std::nullopt;
    return *def;
  }
};

// multiply(a, b) -> add(a, b): a toy with lower benefit, to check ordering.
class MulToAdd : public RewritePattern {
 public:
  explicit MulToAdd(int benefit) : RewritePattern(benefit) {}
  std::optional<Expr> MatchAndRewrite(const Expr& v, const RewriteContext&) const override {
    const CallNode* c = MatchOpCall(v, "multiply", 2);
    if (!c) return std::nullopt;
    return *MakeOpCall("add", c->args());
  }
};
class MulToSub : public RewritePattern {
 public:
  explicit MulToSub(int benefit) : RewritePattern(benefit) {}
  std::optional<Expr> MatchAndRewrite(const Expr& v, const RewriteContext&) const override {
    const CallNode* c = MatchOpCall(v, "multiply", 2);
    if (!c) return std::nullopt;
    return *MakeOpCall("subtract", c->args());
  }
};

TEST(PatternDriverTest, FixpointAndBenefit) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %a = nn.relu(%x);
    %b = nn.relu(%a);
    %c = nn.relu(%b);
    %d = multiply(%c, %x);
    output %d;
  }
  %d
}
)");
  Function f = m.LookupFunction("main");
  ReluIdempotent relu;
  MulToAdd to_add(1);
  MulToSub to_sub(5);
  const RewritePattern* patterns[] = {&to_add, &relu, &to_sub};
  GreedyRewriteOptions keep;
  keep.erase_unused = false;
  GreedyRewriteResult r = ApplyPatternsGreedily(f, patterns, keep);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.rewrites, 3);  // %b, %c (through the rewritten %b), %d
  EXPECT_EQ(r.iterations, 2);
  EXPECT_EQ(r.erased, 0);
  ExpectFunction(r.function, R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %a = nn.relu(%x);
    %b = nn.relu(%x);
    %c = nn.relu(%x);
    %d = subtract(%c, %x);
    output %d;
  }
  %d
}
)");
  // No pattern applies: converged after one sweep, the same function.
  const RewritePattern* none[] = {&relu};
  GreedyRewriteResult same = ApplyPatternsGreedily(r.function, none, keep);
  EXPECT_TRUE(same.converged);
  EXPECT_EQ(same.function.get(), r.function.get());
  // An iteration limit that stops it early is reported.
  GreedyRewriteOptions once;
  once.max_iterations = 1;
  EXPECT_FALSE(ApplyPatternsGreedily(f, patterns, once).converged);
}

// By default the driver erases the producers its rewrites left unused (%b,
// then %a, which only %b used), not a binding that was unused before (%u).
TEST(PatternDriverTest, ErasesProducersLeftUnused) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %u = add(%x, %x);
    %a = nn.relu(%x);
    %b = nn.relu(%a);
    %c = nn.relu(%b);
    output %c;
  }
  %c
}
)");
  ReluIdempotent relu;
  const RewritePattern* patterns[] = {&relu};
  GreedyRewriteResult r = ApplyPatternsGreedily(m.LookupFunction("main"), patterns);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.erased, 2);
  ExpectFunction(r.function, R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %u = add(%x, %x);
    %c = nn.relu(%x);
    output %c;
  }
  %c
}
)");
}

// A pattern that records what the context says at each binding it sees.
class Probe : public RewritePattern {
 public:
  std::string name() const override { return "Probe"; }
  std::optional<Expr> MatchAndRewrite(const Expr& /*v*/, const RewriteContext& ctx) const override {
    const std::string& at = ctx.binding()->var()->name_hint();
    if (watch) uses[at] = ctx.NumUses(watch);
    for (size_t i = 0; i < probes.size(); ++i)
      if (probes[i].first == at) visible[i] = ctx.IsVisible(probes[i].second);
    return std::nullopt;
  }
  const VarNode* watch = nullptr;  // uses[binding] = NumUses(watch) there
  mutable std::map<std::string, size_t> uses;
  std::vector<std::pair<std::string, Expr>> probes;  // at binding `first`, is `second` visible?
  mutable std::map<size_t, bool> visible;
};

// relu(relu(y)) -> the inner call itself, the way a new user writes it:
// MatchOperand looks through the variable; the pattern checks no scope.
class ReluOfReluToOperand : public RewritePattern {
 public:
  std::string name() const override { return "ReluOfReluToOperand"; }
  std::optional<Expr> MatchAndRewrite(const Expr& v, const RewriteContext& ctx) const override {
    const CallNode* outer = MatchOpCall(v, "nn.relu", 1);
    if (!outer) return std::nullopt;
    const CallNode* inner = ctx.MatchOperand(*outer, 0, "nn.relu");
    if (!inner) return std::nullopt;
    return Expr(inner);
  }
};

TEST(PatternDriverTest, UseCountsStayCurrent) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = nn.relu(%x);
  %b = nn.relu(%a);
  %c = add(%a, %b);
  %d = add(%c, %c);
  %d
}
)");
  Function f = m.LookupFunction("main");
  ReluIdempotent relu;  // rewrites %b = relu(%a) into relu(%x): %a loses a use
  Probe probe;
  probe.watch = FindBinding(f, "a")->var().get();
  const RewritePattern* patterns[] = {&relu, &probe};
  GreedyRewriteOptions one;
  one.max_iterations = 1;
  ApplyPatternsGreedily(f, patterns, one);
  EXPECT_EQ(probe.uses["a"], 2u);  // %b and %c use it
  EXPECT_EQ(probe.uses["c"], 1u);  // %b's use went when %b was rewritten
}

// IsVisible: a dataflow variable may be named in its block only, and no
// variable before its definition.
TEST(PatternDriverTest, IsVisibleFollowsTheDataflowScope) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %lv = nn.relu(%x);
    %a = add(%lv, %x);
    output %a;
  }
  %b = add(%a, %x);
  %b
}
)");
  Function f = m.LookupFunction("main");
  Expr lv = FindBinding(f, "lv")->var();
  Expr a = FindBinding(f, "a")->var();
  Probe probe;
  probe.probes = {{"a", lv}, {"b", lv}, {"b", a}, {"lv", a}, {"b", f->params()[0]}};
  const RewritePattern* patterns[] = {&probe};
  ApplyPatternsGreedily(f, patterns);
  ASSERT_EQ(probe.visible.size(), 5u);
  EXPECT_TRUE(probe.visible[0]);   // %lv in its block
  EXPECT_FALSE(probe.visible[1]);  // %lv outside it
  EXPECT_TRUE(probe.visible[2]);   // an output, after its block
  EXPECT_FALSE(probe.visible[3]);  // %a before its definition
  EXPECT_TRUE(probe.visible[4]);   // a parameter
}

// The driver refuses a replacement that would name a dataflow variable
// outside its block, says which pattern made it, and traces it.
TEST(PatternDriverTest, RefusesInvisibleReplacementsAndNamesThePattern) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %lv = add(%x, %x);
    %a = nn.relu(%lv);
    %c = nn.relu(%a);
    output %a, %c;
  }
  %b = nn.relu(%a);
  %d = add(%b, %c);
  %d
}
)");
  ReluOfReluToOperand pattern;
  const RewritePattern* patterns[] = {&pattern};
  std::vector<std::string> events;
  GreedyRewriteOptions o;
  o.trace = [&](const PatternEvent& e) {
    events.push_back(std::string(e.pattern) + (e.applied ? " applied at %" : " refused at %") +
                     e.var->name_hint());
  };
  GreedyRewriteResult r = ApplyPatternsGreedily(m.LookupFunction("main"), patterns, o);
  // %c = relu(%a) becomes relu(%lv), in the block; %b = relu(%a) would
  // become relu(%lv) outside it: refused, in both sweeps.
  EXPECT_TRUE(r.converged);
  ASSERT_EQ(r.stats.size(), 1u);
  EXPECT_EQ(r.stats[0].name, "ReluOfReluToOperand");
  EXPECT_EQ(r.stats[0].applied, 1);
  EXPECT_EQ(r.stats[0].refused, 2);
  ASSERT_EQ(r.diagnostics.size(), 1u);  // reported once
  EXPECT_EQ(r.diagnostics[0].rfind("pattern ReluOfReluToOperand at %b: ", 0), 0u)
      << r.diagnostics[0];
  std::vector<std::string> want = {"ReluOfReluToOperand applied at %c",
                                   "ReluOfReluToOperand refused at %b",
                                   "ReluOfReluToOperand refused at %b"};
  EXPECT_EQ(events, want);
  ExpectFunction(r.function, R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %lv = add(%x, %x);
    %a = nn.relu(%lv);
    %c = nn.relu(%lv);
    output %a, %c;
  }
  %b = nn.relu(%a);
  %d = add(%b, %c);
  %d
}
)");
}

// MatchOperand looks through variables and copies, and only at calls of
// the op asked for.
TEST(PatternDriverTest, MatchOperandLooksThroughVariables) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 4), float32]) -> Tensor[(3, 4), float32] {
  %t = permute_dims(%x);
  %u = %t;
  %m = matmul(%u, %y);
  %m
}
)");
  class Check : public RewritePattern {
   public:
    std::optional<Expr> MatchAndRewrite(const Expr& v, const RewriteContext& ctx) const override {
      const CallNode* mm = MatchOpCall(v, "matmul", 2);
      if (!mm) return std::nullopt;
      found = ctx.MatchOperand(*mm, 0, "permute_dims");
      wrong_op = ctx.MatchOperand(*mm, 0, "add");
      param = ctx.MatchOperand(*mm, 1, "permute_dims");
      out_of_range = ctx.MatchOperand(*mm, 2, "permute_dims");
      return std::nullopt;
    }
    mutable const CallNode *found = nullptr, *wrong_op = nullptr, *param = nullptr,
                           *out_of_range = nullptr;
  } check;
  const RewritePattern* patterns[] = {&check};
  Function f = m.LookupFunction("main");
  ApplyPatternsGreedily(f, patterns);
  EXPECT_EQ(check.found, FindBinding(f, "t")->value().get());
  EXPECT_EQ(check.wrong_op, nullptr);
  EXPECT_EQ(check.param, nullptr);
  EXPECT_EQ(check.out_of_range, nullptr);
}

TEST(InferOpTypeTest, InfersFromTypesAlone) {
  Type a = TensorTypeNode::Make({Dim::Const(2), Dim::Const(3)}, DataType::kFloat32);
  Type b = TensorTypeNode::Make({Dim::Const(3), Dim::Const(4)}, DataType::kFloat32);
  Type ab[] = {a, b};
  StatusOr<Type> t = InferOpType("matmul", ab);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(
      TypeEqual(*t, TensorTypeNode::Make({Dim::Const(2), Dim::Const(4)}, DataType::kFloat32)));
  Type aa[] = {a, a};
  EXPECT_FALSE(InferOpType("matmul", aa).ok());  // contraction dimensions differ
  EXPECT_EQ(InferOpType("no.such_op", aa).status().code(), StatusCode::kNotFound);
  Type one[] = {a};
  Attrs attrs =
      *Attrs::Make({{Symbol("axes"), AttrValue::List({AttrValue::Int(1), AttrValue::Int(0)})}});
  StatusOr<Type> p = InferOpType("permute_dims", one, attrs);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(
      TypeEqual(*p, TensorTypeNode::Make({Dim::Const(3), Dim::Const(2)}, DataType::kFloat32)));
}

// RemoveUnusedBindings: unused pure bindings go, in nested bodies too;
// impure ones and what they use stay.
TEST(RemoveUnusedBindingsTest, ErasesUnusedPureBindings) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> Tensor[(2,), float32] {
  %a = add(%x, %x);
  %b = multiply(%a, %x);
  %k = nn.relu(%x);
  %p = call_packed("side_effect", %k, sinfo_args=[Tensor[(2,), float32]]);
  %i = if (%c) {
    %dead = add(%x, %x);
    %x
  } else {
    %x
  };
  %i
}
)");
  Function f = m.LookupFunction("main");
  UnusedBindingRemover remover(&m);
  Function out = remover.Remove(f);
  EXPECT_EQ(remover.erased(), 3u);  // %b, %a, %dead
  ExpectFunction(out, R"(
def @main(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> Tensor[(2,), float32] {
  %k = nn.relu(%x);
  %p = call_packed("side_effect", %k, sinfo_args=[Tensor[(2,), float32]]);
  %i = if (%c) {
    %x
  } else {
    %x
  };
  %i
}
)");
  EXPECT_EQ(RemoveUnusedBindings(out, &m).get(), out.get());  // nothing left: the same function
}

// RemoveFromEach: the items on several threads give what one remover gives
// item by item, including whether a call of a module function is impure
// (computed once for all threads), and unchanged items stay the same node.
TEST(RemoveUnusedBindingsTest, RemoveFromEachIsTheSerialRemoval) {
  std::string text = R"(
def @impure(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %p = call_packed("side_effect", %x, sinfo_args=[Tensor[(2,), float32]]);
  %x
}
def @pure(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %x
}
)";
  for (int i = 0; i < 64; ++i) {
    std::string n = std::to_string(i);
    if (i % 3 == 0) {  // nothing to remove
      text += "def @f" + n + "(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  %a" + n +
              " = add(%x, %x);\n  %a" + n + "\n}\n";
    } else {
      text += "def @f" + n + "(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  %i" + n +
              " = @impure(%x);\n  %q" + n + " = @pure(%x);\n  %d" + n +
              " = multiply(%x, %x);\n  %x\n}\n";
    }
  }
  Module m = ParseOrFail(text);
  for (int threads : {1, 2, 3, 8}) {
    std::vector<Item> each = UnusedBindingRemover::RemoveFromEach(m, threads);
    ASSERT_EQ(each.size(), m.size());
    UnusedBindingRemover serial(&m);
    size_t changed = 0;
    for (size_t i = 0; i < m.size(); ++i) {
      Item want = serial.Remove(m.items()[i]);
      EXPECT_TRUE(StructuralEqual(each[i], want)) << threads << " threads: @" << want->name();
      EXPECT_EQ(each[i].get() == m.items()[i].get(), want.get() == m.items()[i].get());
      changed += each[i].get() != m.items()[i].get();
    }
    EXPECT_EQ(changed, 42u);  // @impure's %p stays; each @fN with i % 3 != 0 loses %q and %d
    EXPECT_EQ(serial.erased(), 84u);
  }
}

// BindingMutator: a pass overrides one binding; the SDK rebuilds blocks and
// bodies (nested ones too), sharing what is unchanged.
class AddToSubtract : public BindingMutator {
 public:
  AddToSubtract() : BindingMutator("AddToSubtract") {}

 protected:
  StatusOr<plir::Binding> VisitBinding(const plir::Binding& b) override {
    PLIR_ASSIGN_OR_RETURN(Expr value, Mutate(b->value()));
    if (const CallNode* c = MatchOpCall(value, "add", 2)) {
      PLIR_ASSIGN_OR_RETURN(value, MakeOpCall("subtract", c->args()));
    }
    if (MatchOpCall(value, "nn.relu", 1)) return plir::Binding();  // erased (none is used here)
    return Rebind(b, b->var(), std::move(value));
  }
};

TEST(BindingMutatorTest, BindingHookRebuildsWhatHoldsIt) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> Tensor[(2,), float32] {
  dataflow {
    %r = nn.relu(%x);
    output %r;
  }
  %m = multiply(%x, %x);
  %i = if (%c) {
    %a = add(%x, %m);
    %a
  } else {
    %x
  };
  %i
}
)");
  Function f = m.LookupFunction("main");
  AddToSubtract pass;
  StatusOr<Function> out = pass.MutateFunction(f);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ExpectFunction(*out, R"(
def @main(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> Tensor[(2,), float32] {
  %m = multiply(%x, %x);
  %i = if (%c) {
    %a = subtract(%x, %m);
    %a
  } else {
    %x
  };
  %i
}
)");
  // The unchanged binding is shared.
  EXPECT_EQ(FindBinding(*out, "m"), FindBinding(f, "m"));
  // Nothing to do: the function itself.
  StatusOr<Function> again = AddToSubtract().MutateFunction(*out);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), out->get());
}

// A block hook and remapping: a pass renames every use through RemapVar
// and counts blocks; nesting past max_depth is an error naming the pass.
class CopyPropagation : public BindingMutator {
 public:
  explicit CopyPropagation(int max_depth = 2000) : BindingMutator("CopyPropagation", max_depth) {}
  int blocks = 0;

 protected:
  StatusOr<Block> VisitBindingBlock(const Block& b) override {
    ++blocks;
    return BindingMutator::VisitBindingBlock(b);
  }
  StatusOr<plir::Binding> VisitBinding(const plir::Binding& b) override {
    PLIR_ASSIGN_OR_RETURN(Expr value, Mutate(b->value()));
    if (value->kind() == NodeKind::kVar && TypeEqual(value->type(), b->var()->type())) {
      RemapVar(b->var().get(), value);
      return plir::Binding();
    }
    return Rebind(b, b->var(), std::move(value));
  }
};

TEST(BindingMutatorTest, BlockHookRemapAndDepth) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %a = %x;
    %b = add(%a, %a);
    output %b;
  }
  %c = %b;
  %c
}
)");
  CopyPropagation pass;
  StatusOr<Function> out = pass.MutateFunction(m.LookupFunction("main"));
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(pass.blocks, 2);
  ExpectFunction(*out, R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
    %b = add(%x, %x);
    output %b;
  }
  %b
}
)");
  CopyPropagation shallow(1);  // body 0, value 1, its arguments 2
  StatusOr<Function> deep = shallow.MutateFunction(m.LookupFunction("main"));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(), "CopyPropagation: expressions nest deeper than 1 levels");
}

// The replacements are keyed by the variable itself: a variable of another
// function with the same number, and one a pass made (no number), each
// have their own; UnmapVar undoes one, and it can be remapped again.
class RemapProbe : public BindingMutator {
 public:
  RemapProbe() : BindingMutator("RemapProbe") {}
  using BindingMutator::Remapped;
  using BindingMutator::RemapVar;
  using BindingMutator::ReserveRemaps;
  using BindingMutator::UnmapVar;
  Expr Use(const Expr& v) { return VisitVarUse(v); }
};

TEST(BindingMutatorTest, RemapIsKeyedByTheVariable) {
  Module m = ParseOrFail(R"(
def @f(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %y);
  %a
}
def @g(%p: Tensor[(2,), float32], %q: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %b = add(%p, %q);
  %b
}
)");
  Var x = m.LookupFunction("f")->params()[0];
  Var y = m.LookupFunction("f")->params()[1];
  Var p = m.LookupFunction("g")->params()[0];
  ASSERT_EQ(x->index(), p->index());  // numbered per function
  Var made = VarNode::Make("made", x->type());
  ASSERT_EQ(made->index(), VarNode::kNoIndex);
  RemapProbe probe;
  probe.ReserveRemaps(4);
  EXPECT_EQ(probe.Remapped(x.get()), nullptr);
  EXPECT_EQ(probe.Use(x).get(), x.get());
  probe.RemapVar(x.get(), y);
  probe.RemapVar(p.get(), x);
  probe.RemapVar(made.get(), p);
  EXPECT_EQ(probe.Use(x).get(), y.get());
  EXPECT_EQ(probe.Use(p).get(), x.get());
  EXPECT_EQ(probe.Use(made).get(), p.get());
  EXPECT_EQ(probe.Use(y).get(), y.get());
  probe.UnmapVar(x.get());
  EXPECT_EQ(probe.Remapped(x.get()), nullptr);
  EXPECT_EQ(probe.Use(x).get(), x.get());
  ASSERT_NE(probe.Remapped(p.get()), nullptr);
  EXPECT_EQ(probe.Remapped(p.get())->get(), x.get());
  probe.UnmapVar(y.get());  // never mapped: nothing to undo
  EXPECT_EQ(probe.Remapped(y.get()), nullptr);
  probe.RemapVar(x.get(), p);
  EXPECT_EQ(probe.Use(x).get(), p.get());
}

TEST(OutlineTest, OutlinesBindingsIntoAFunctionAndCallsIt) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) {
  dataflow {
    %a = add(%x, const<Tensor[(2,), float32]>[1, 2]);
    %b = multiply(%a, %y);
    %u = nn.relu(%x);
    %c = nn.relu(%b);
    %d = add(%c, %a);
    output %d, %u;
  }
  %r = (%d, %u);
  %r
}
)");
  Function f = m.LookupFunction("main");
  std::vector<const VarBindingNode*> group{FindBinding(f, "a"), FindBinding(f, "b"),
                                           FindBinding(f, "c")};
  OutlineOptions opts;
  opts.name = "fused";
  opts.attrs = *Attrs::Make({{Symbol("Primitive"), AttrValue::Bool(true)}});
  auto r = OutlineBindings(f, group, opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto [caller, callee] = *r;
  ExpectFunction(callee, R"(
def @fused(%x: Tensor[(2,), float32], %p: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) attrs {Primitive = true} {
  dataflow {
    %a = add(%x, %p);
    %b = multiply(%a, %y);
    %c = nn.relu(%b);
    output %a, %c;
  }
  (%a, %c)
}
)");
  ExpectFunction(caller, R"(
def @fused(%x: Tensor[(2,), float32], %p: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) attrs {Primitive = true} {
  dataflow {
    %a = add(%x, %p);
    %b = multiply(%a, %y);
    %c = nn.relu(%b);
    output %a, %c;
  }
  (%a, %c)
}
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) {
  dataflow {
    %u = nn.relu(%x);
    %t = @fused(%x, const<Tensor[(2,), float32]>[1, 2], %y);
    %a = %t.0;
    %c = %t.1;
    %d = add(%c, %a);
    output %d, %u;
  }
  %r = (%d, %u);
  %r
}
)");
  // The module with both verifies.
  Module out = m.WithItem(caller).WithItem(callee);
  EXPECT_TRUE(Verify(out).ok()) << Verify(out).message();

  // One output: the call binds the output's own variable.
  std::vector<const VarBindingNode*> tail{FindBinding(f, "c"), FindBinding(f, "d")};
  OutlineOptions o2;
  o2.name = "tail";
  auto r2 = OutlineBindings(f, tail, o2);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(FindBinding(r2->first, "d")->var().get(), FindBinding(f, "d")->var().get());
  EXPECT_EQ(r2->second->params().size(), 2u);  // %b, %a
}

TEST(OutlineTest, Errors) {
  Module m = ParseOrFail(kChain);
  Function f = m.LookupFunction("main");
  // %b, between %a and %c, uses %a.
  std::vector<const VarBindingNode*> gap{FindBinding(f, "a"), FindBinding(f, "c")};
  OutlineOptions o;
  o.name = "g";
  auto r = OutlineBindings(f, gap, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("%b, between the outlined bindings, uses %a"),
            std::string::npos)
      << r.status().message();
  std::vector<const VarBindingNode*> reversed{FindBinding(f, "b"), FindBinding(f, "a")};
  EXPECT_FALSE(OutlineBindings(f, reversed, o).ok());
  o.outputs = {f->params()[0].get()};
  std::vector<const VarBindingNode*> one{FindBinding(f, "a")};
  EXPECT_FALSE(OutlineFunction(one, o).ok());
}

}  // namespace
}  // namespace plir
