// LoadFacts: what a loader proves about the module it returns. The binary
// loader (versions 2 to 4) proves that no variable is bound in two items
// from the records themselves, for every well-formed module and for no
// module where the check across items (VerifyModule) would find one.
#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"
#include "ir/verifier.h"
#include "testing/random_module.h"

namespace plir {
namespace {

Type T2() { return TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32); }
Expr Add(Expr a, Expr b) { return *MakeOpCall("add", {std::move(a), std::move(b)}); }
Block Ordinary(std::vector<Binding> b) { return BindingBlockNode::Make(std::move(b), false); }
Binding Bind(Var v, Expr e) { return VarBindingNode::Make(std::move(v), std::move(e)); }

std::string Save(const Module& m, int version) {
  BinarySaveOptions o;
  o.version = version;
  return version == 4 ? [&] {
    auto p = SaveBinaryShards(m, 2);
    std::string s;
    for (std::string_view piece : p.pieces) s.append(piece);
    return s;
  }()
                      : SaveBinary(m, o);
}

// Loads `m` saved in every binary version (4: two shards, or version 3
// where the writer keeps a shared variable in one file) and returns whether
// each load proved the bindings unshared; checks the proof's promise: then
// the check across items finds nothing.
std::vector<bool> Proven(const Module& m) {
  std::vector<bool> out;
  for (int version : {2, 3, 4}) {
    LoadFacts facts;
    facts.bindings_unshared = true;  // must be overwritten
    auto back = LoadBinary(Save(m, version), {}, &facts);
    EXPECT_TRUE(back.ok()) << back.status().message();
    if (!back.ok()) return {};
    if (facts.bindings_unshared)
      EXPECT_EQ(VerifyModule(*back).empty(), VerifyParsedModule(*back, {}).empty())
          << "version " << version;
    out.push_back(facts.bindings_unshared);
  }
  return out;
}

const std::vector<bool> kAll = {true, true, true}, kNone = {false, false, false};

// Functions @f and @g, each binding a variable of its own to `shared`.
Module TwoFunctionsBinding(const Expr& shared) {
  std::vector<Item> items;
  for (const char* name : {"f", "g"}) {
    Var x = VarNode::Make("x", T2()), a = VarNode::Make("a", shared->type());
    items.push_back(FunctionNode::Make(name, {x}, nullptr,
                                       SeqExprNode::Make({Ordinary({Bind(a, shared)})}, x)));
  }
  return *Module::Make(items);
}

TEST(LoadFactsTest, AWellFormedModuleIsProvenInEveryVersion) {
  testing::RandomModuleOptions o;
  o.num_bindings = 3000;
  o.bindings_per_function = 40;
  Module m = testing::GenerateRandomModule(o);
  ASSERT_TRUE(Verify(m).ok());
  EXPECT_EQ(Proven(m), kAll);
  // Nodes that bind nothing may be shared by items: here one tuple (and
  // the op, the types).
  Module tuples =
      TwoFunctionsBinding(TupleNode::Make({PrimValueNode::Int(1), PrimValueNode::Int(2)}));
  ASSERT_TRUE(Verify(tuples).ok()) << Verify(tuples).message();
  EXPECT_EQ(Proven(tuples), kAll);
}

TEST(LoadFactsTest, AVariableBoundInTwoItemsIsNot) {
  Var a = VarNode::Make("a", T2());
  std::vector<Item> items;
  for (const char* name : {"f", "g"}) {
    Var x = VarNode::Make("x", T2());
    items.push_back(FunctionNode::Make(name, {x}, nullptr,
                                       SeqExprNode::Make({Ordinary({Bind(a, Add(x, x))})}, a)));
  }
  Module m = *Module::Make(items);
  EXPECT_EQ(Proven(m), kNone);
  EXPECT_FALSE(Verify(m).ok());
  EXPECT_TRUE(VerifyParsed(m).ok());  // what the proof would have let through
  // A parameter of two functions, and one binding (the same record) in two.
  Var p = VarNode::Make("p", T2());
  Binding b = Bind(VarNode::Make("b", T2()), Add(p, p));
  Module params =
      *Module::Make({FunctionNode::Make("f", {p}, nullptr, SeqExprNode::Make({}, p)),
                     FunctionNode::Make("g", {p}, nullptr, SeqExprNode::Make({Ordinary({b})}, p))});
  EXPECT_EQ(Proven(params), kNone);
  Var q = VarNode::Make("q", T2());
  Module binding =
      *Module::Make({FunctionNode::Make("f", {p}, nullptr, SeqExprNode::Make({Ordinary({b})}, p)),
                     FunctionNode::Make("g", {q}, nullptr, SeqExprNode::Make({Ordinary({b})}, q))});
  EXPECT_EQ(Proven(binding), kNone);
  EXPECT_FALSE(Verify(binding).ok());
}

TEST(LoadFactsTest, ANodeHoldingABindingSharedByTwoItemsIsNot) {
  // A local function (its parameter and body binding) inside a tuple that
  // two functions' bindings share: the tuple is the shared record.
  Var lp = VarNode::Make("lp", T2()), lb = VarNode::Make("lb", T2());
  Expr fn =
      LocalFnNode::Make({lp}, T2(), SeqExprNode::Make({Ordinary({Bind(lb, Add(lp, lp))})}, lb));
  Module m = TwoFunctionsBinding(TupleNode::Make({fn}));
  EXPECT_EQ(Proven(m), kNone);
  EXPECT_FALSE(Verify(m).ok());
  // One item binding one variable twice: not proven (and an error anyway).
  Var x = VarNode::Make("x", T2()), a = VarNode::Make("a", T2());
  Module twice = *Module::Make({FunctionNode::Make(
      "f", {x}, nullptr,
      SeqExprNode::Make({Ordinary({Bind(a, Add(x, x)), Bind(a, Add(x, x))})}, a))});
  EXPECT_EQ(Proven(twice), kNone);
  EXPECT_FALSE(Verify(twice).ok());
}

TEST(LoadFactsTest, TextIsProvenJsonAndVersion1AreNotErrorsAreNot) {
  const std::string text =
      "def @f(%x: Tensor[(2,), float32]) {\n  %a = add(%x, %x);\n  %a\n}\n"
      "def @g(%x: Tensor[(2,), float32]) {\n  %a = add(%x, %x);\n  %a\n}\n";
  LoadFacts facts;
  auto m = LoadModule(text, "t.plir", &facts);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(facts.bindings_unshared);
  for (const std::string& other : {SaveJson(*m), internal::SaveBinaryV1(*m)}) {
    facts.bindings_unshared = true;
    ASSERT_TRUE(LoadModule(other, "o", &facts).ok());
    EXPECT_FALSE(facts.bindings_unshared);
  }
  facts.bindings_unshared = true;
  EXPECT_FALSE(LoadModule(text.substr(0, 40), "t.plir", &facts).ok());
  EXPECT_FALSE(facts.bindings_unshared);
  std::string bin = SaveBinary(*m);
  facts.bindings_unshared = true;
  EXPECT_FALSE(LoadBinary(bin.substr(0, bin.size() - 1), {}, &facts).ok());
  EXPECT_FALSE(facts.bindings_unshared);
}

}  // namespace
}  // namespace plir
