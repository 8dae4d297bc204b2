// The text format contract: every spec example parses, verifies, prints, and
// re-parses to a structurally equal module; printing is a fixed point.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "ir/builder.h"
#include "ir/op.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/text_rules.h"
#include "ir/verifier.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

using testing::ParseOrFail;

void ExpectRoundTrip(const std::string& text, const std::string& what) {
  SCOPED_TRACE(what);
  StatusOr<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(Verify(*m).ok()) << Verify(*m).message();
  std::string printed = PrintModule(*m);
  StatusOr<Module> again = ParseModule(printed);
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << printed;
  auto mismatch = FindFirstMismatch(*m, *again);
  EXPECT_FALSE(mismatch) << mismatch->ToString() << "\n" << printed;
  EXPECT_EQ(StructuralHash(*m), StructuralHash(*again));
  EXPECT_EQ(PrintModule(*again), printed) << "printing is not a fixed point";
}

TEST(TextFormatTest, EverySpecExampleRoundTrips) {
  auto files = testing::ListTestFiles("examples/spec", ".plir");
  ASSERT_EQ(files.size(), 4u);
  for (const std::string& f : files) ExpectRoundTrip(testing::ReadTestFile(f), f);
}

TEST(TextFormatTest, Conv2dExampleInfersOutputShape) {
  Module m = ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  Function main = m.LookupFunction("main");
  ASSERT_TRUE(main);
  EXPECT_EQ(TypeToString(main->body()->result()->type()), "Tensor[(1, 32, 222, 222), float32]");
}

TEST(TextFormatTest, DataflowOutputsAreOrdinaryVariables) {
  Module m = ParseOrFail(testing::ReadTestFile("examples/spec/blocks_and_if.plir"));
  Function main = m.LookupFunction("main");
  const Block& df = main->body()->blocks()[1];
  ASSERT_TRUE(df->is_dataflow());
  ASSERT_EQ(df->bindings().size(), 3u);
  EXPECT_TRUE(df->bindings()[0]->var()->is_dataflow());   // %a
  EXPECT_FALSE(df->bindings()[1]->var()->is_dataflow());  // %b, the output
  EXPECT_TRUE(df->bindings()[2]->var()->is_dataflow());   // %unused
}

// The parser reads a dataflow block's output line ahead of its bindings (a
// byte scan), so that each variable is made with its final flag: the scan
// must skip strings and comments that hold the bytes it stops at, nested
// bodies with their own output lines, and find an output line that shares
// a line with a binding.
TEST(TextFormatTest, OutputLineFoundAheadOfTheBindings) {
  const char* text = R"(
def @main(%x: Tensor[(2,), float32], %get: Callable[(Prim[int64], Object), Object]) {
  dataflow {
    %a = %get(0, "output %b; } {");
    // output %b;
    %f = fn(%y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      dataflow {
        %b = add(%y, %x);
        %t = add(%b, %y);
        output %t;
      }
      %t
    };
    %b = add(%x, %x); %c = %f(%b); output %c, %a;
  }
  %c
}
)";
  Module m = ParseOrFail(text);
  ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
  Function main = m.LookupFunction("main");
  const Block& df = main->body()->blocks()[0];
  ASSERT_TRUE(df->is_dataflow());
  ASSERT_EQ(df->bindings().size(), 4u);
  EXPECT_FALSE(df->bindings()[0]->var()->is_dataflow());  // %a: listed
  EXPECT_TRUE(df->bindings()[1]->var()->is_dataflow());   // %f
  EXPECT_TRUE(df->bindings()[2]->var()->is_dataflow());   // %b: only the string and comment name it
  EXPECT_FALSE(df->bindings()[3]->var()->is_dataflow());  // %c: listed
  auto* fn = As<LocalFnNode>(df->bindings()[1]->value());
  ASSERT_NE(fn, nullptr);
  const Block& inner = fn->body()->blocks()[0];
  ASSERT_EQ(inner->bindings().size(), 2u);
  EXPECT_TRUE(inner->bindings()[0]->var()->is_dataflow());   // the inner %b
  EXPECT_FALSE(inner->bindings()[1]->var()->is_dataflow());  // %t
  ExpectRoundTrip(text, "output line ahead");
}

TEST(TextFormatTest, ManyOutputsAndAnEmptyOutputLine) {
  std::string text = "def @main(%x: Tensor[(2,), float32]) {\n  dataflow {\n";
  for (int i = 0; i < 20; ++i) text += "    %v" + std::to_string(i) + " = add(%x, %x);\n";
  text += "    output ";
  for (int i = 0; i < 20; i += 2) text += std::string(i ? ", " : "") + "%v" + std::to_string(i);
  text += ";\n  }\n  dataflow {\n    %w = add(%x, %x);\n    output;\n  }\n  %v0\n}\n";
  Module m = ParseOrFail(text);
  ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
  Function main = m.LookupFunction("main");
  const Block& df = main->body()->blocks()[0];
  ASSERT_EQ(df->bindings().size(), 20u);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(df->bindings()[i]->var()->is_dataflow(), i % 2 == 1) << "%v" << i;
  EXPECT_TRUE(main->body()->blocks()[1]->bindings()[0]->var()->is_dataflow());  // %w
  ExpectRoundTrip(text, "many outputs");
}

TEST(TextFormatTest, PrinterMakesNamesUnique) {
  // Two different variables named %lv1 (one per if branch scope), and one
  // built through the API with a clashing hint.
  Module m = ParseOrFail(R"(
def @f(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> Tensor[(2,), float32] {
  %lv1 = if (%c) {
    %lv1 = add(%x, %x);
    %lv1
  } else {
    %x
  };
  %lv1
}
)");
  std::string printed = PrintModule(m);
  EXPECT_NE(printed.find("%lv1: Tensor[(2,), float32] = if"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%lv1_1: Tensor[(2,), float32] = add"), std::string::npos) << printed;
  ExpectRoundTrip(printed, "unique names");
}

TEST(TextFormatTest, AllTypeForms) {
  ExpectRoundTrip(R"(
extern @k(%a: Tensor[(n, 3), float32], %b: Tensor[ndim=2, float16], %c: Tensor[int8], %d: Tensor,
          %e: (Tensor[(), bool], (Object,), ()), %f: Prim[int64], %g: Shape[(1, n)],
          %h: Shape[ndim=2], %i: Tensor[(4,), bfloat16], %j: Tensor[(2, 3)], %l: Tensor[ndim=1], %m: Shape)
  -> (Tensor[(n, 3), float32],) attrs {target = "llvm", tile = [4, 8]}
def @main(%x: Tensor[(n, 3), float32]) -> Object {
  %t = call_tir(@k, (%x,), sinfo_args=[Tensor[(n, 3), float32]]);
  %o = call_packed("f", %t, sinfo_args=[Object]);
  %o
}
)",
                  "types");
}

TEST(TextFormatTest, LiteralsAndConstants) {
  ExpectRoundTrip(R"(
def @main() -> Object {
  %i = -7;
  %f = -2e-3;
  %g = 1.5;
  %w = 3.0;
  %b = true;
  %s = "quote \" backslash \\ newline \n tab \t";
  %c1 = const<Tensor[(2, 2), float32]>[1, 2.5, -3, 4e10];
  %c2 = const<Tensor[(3,), int8]>[-128, 0, 127];
  %c3 = const<Tensor[(2,), bool]>[true, false];
  %c4 = const<Tensor[(4,), uint8]>x"0a0b0c0d";
  %c5 = const<Tensor[(2,), float16]>[0.5, 65504];
  %c6 = const<Tensor[(2,), bfloat16]>[1, -2];
  %c7 = const<Tensor[(1,), uint64]>[18446744073709551615];
  %c8 = const<Tensor[(0,), float32]>[];
  %c9 = const<Tensor[(), float64]>[0.1];
  %tup = (%i, %f, (%b,), ());
  %e = %tup.2.0;
  %tup
}
)",
                  "literals");
}

TEST(TextFormatTest, HexPayloadIsLittleEndianRowMajor) {
  Module m = ParseOrFail(R"(
def @main() -> Tensor[(2,), int16] {
  const<Tensor[(2,), int16]>x"01000201"
}
)");
  auto* c = As<ConstantNode>(m.LookupFunction("main")->body()->result());
  ASSERT_TRUE(c);
  int16_t v[2];
  std::memcpy(v, c->data().data(), 4);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 0x0102);
}

TEST(TextFormatTest, LargeConstantsPrintAsHex) {
  std::string elems;
  for (int i = 0; i < 100; ++i) elems += (i ? ", " : "") + std::to_string(i);
  std::string text =
      "def @main() -> Tensor[(100,), int32] {\n  const<Tensor[(100,), int32]>[" + elems + "]\n}\n";
  Module m = ParseOrFail(text);
  std::string printed = PrintModule(m);
  EXPECT_NE(printed.find("x\"00000000010000000200"), std::string::npos) << printed;
  ExpectRoundTrip(printed, "hex");
}

TEST(TextFormatTest, NonFiniteFloats) {
  ExpectRoundTrip(R"(
def @main() -> Object {
  %a = inf;
  %b = -inf;
  %n = nan;
  %c = const<Tensor[(3,), float32]>[inf, -inf, nan];
  (%a, %b, %n, %c)
}
)",
                  "non-finite");
}

TEST(TextFormatTest, NestedCallsAndIfs) {
  ExpectRoundTrip(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32], %c: Tensor[(), bool]) -> Tensor[(2, 3), float32] {
  %r = add(multiply(%x, %y), if (%c) {
    if (%c) { nn.relu(%x) } else { %x }
  } else {
    %z = nn.softmax(%x, axis=0);
    %z
  });
  %r
}
)",
                  "nested");
}

TEST(TextFormatTest, ForwardReferencesAndInferredReturnTypes) {
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32]) {
  @later(%x)
}
def @later(%y: Tensor[(2,), float32]) {
  nn.relu(%y)
}
)");
  EXPECT_EQ(TypeToString(m.LookupFunction("main")->ret_type()), "Tensor[(2,), float32]");
  ExpectRoundTrip(PrintModule(m), "forward");
}

// A body parsed on demand from inside an op call's arguments starts again at
// depth 1: its own op calls must not reuse the half-built arguments of the
// call that reached it (an argument before the reaching one, and after it).
// Expected: the same module with the return types written, so that nothing
// is parsed on demand.
TEST(TextFormatTest, BodyParsedOnDemandInsideAnOpCallsArguments) {
  Module m = ParseOrFail(R"(
def @main(%a: Tensor[(2,), float32], %b: Tensor[(2,), float32]) {
  %r = subtract(%b, @later(%a));
  %s = add(@later(%b), %a);
  multiply(%r, %s)
}
def @later(%x: Tensor[(2,), float32]) {
  %y = multiply(%x, %x);
  %y
}
)");
  EXPECT_EQ(PrintModule(m), PrintModule(ParseOrFail(R"(
def @main(%a: Tensor[(2,), float32], %b: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %r = subtract(%b, @later(%a));
  %s = add(@later(%b), %a);
  multiply(%r, %s)
}
def @later(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %y = multiply(%x, %x);
  %y
}
)")));
}

TEST(TextFormatTest, EmptyDataflowBlockAndNoOutputs) {
  ExpectRoundTrip(R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  dataflow {
  }
  dataflow {
    %a = add(%x, %x);
  }
  %x
}
)",
                  "empty blocks");
}

TEST(TextFormatTest, VersionHeader) {
  EXPECT_TRUE(ParseModule("#[version = \"1\"]\n").ok());
  auto bad = ParseModule("#[version = \"2\"]\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unsupported format version \"2\""), std::string::npos);
}

TEST(TextFormatTest, AttributesPrintInKeyOrder) {
  Module m = ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  std::string printed = PrintModule(m);
  EXPECT_NE(printed.find("channels=32, kernel_size=[5, 5], padding=[1, 1, 1, 1]"),
            std::string::npos)
      << printed;
}

TEST(TextFormatTest, CallablesAndLocalFunctions) {
  ExpectRoundTrip(R"(
def @main(%x: Tensor[(2,), float32], %get: Callable[(Prim[int64], Object), Object], %set: Callable[(Prim[int64], Object), (), pure=false]) -> () {
  %a = %get(0, "a");
  %b = match_cast(%a, sinfo_args=[Tensor[(2,), float32]]);
  dataflow {
    %f = fn(%y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      dataflow {
        %t = add(%y, %x);
        output %t;
      }
      %t
    };
    %c = %f(%b);
    output %f, %c;
  }
  %g = fn() {
    %u = %set(1, %c);
    %u
  };
  %v = %g();
  %v
}
)",
                  "callables");
  Module m = ParseOrFail(R"(
def @main(%x: Tensor[(2,), float32], %set: Callable[(Prim[int64], Object), (), pure=false]) {
  %f = fn(%y: Tensor[(2,), float32]) { add(%y, %x) };
  %g = fn() { %set(0, %x) };
  %f
})");
  const FunctionNode* f = m.LookupFunction("main").get();
  // A local function's type: its parameters, its body's type, and pure iff
  // its body has no side effect.
  EXPECT_EQ(TypeToString(f->ret_type()),
            "Callable[(Tensor[(2,), float32]), Tensor[(2,), float32]]");
  EXPECT_EQ(TypeToString(f->body()->blocks()[0]->bindings()[1]->var()->type()),
            "Callable[(), (), pure=false]");
}

// Dimension expressions print in one canonical form: spaced operators,
// parentheses only where the tree needs them, constant operands folded.
TEST(TextFormatTest, DimensionExpressions) {
  auto canon = [](const char* text) {
    auto t = ParseType(text);
    return t.ok() ? TypeToString(*t) : "error: " + t.status().message();
  };
  EXPECT_EQ(canon("Tensor[(n+1, m*n), float32]"), "Tensor[(n + 1, m * n), float32]");
  EXPECT_EQ(canon("Tensor[((r + 1) * 8, r * (8 + 0)), float32]"),
            "Tensor[((r + 1) * 8, r * 8), float32]");
  EXPECT_EQ(canon("Tensor[(a - (b - c), (a - b) - c, a + b + c), float32]"),
            "Tensor[(a - (b - c), a - b - c, a + b + c), float32]");
  EXPECT_EQ(canon("Tensor[(n -1, 2 * 3 + 4), float32]"), "Tensor[(n - 1, 10), float32]");
  EXPECT_EQ(canon("Shape[(n + m,)]"), "Shape[(n + m,)]");
  EXPECT_EQ(canon("Prim[int64, value=n * 2]"), "Prim[int64, value=n * 2]");
  EXPECT_EQ(canon("Prim[int64, value=3]"), "Prim[int64, value=3]");
  EXPECT_NE(canon("Tensor[(n + ), float32]").find("expected a dimension"), std::string::npos);
  EXPECT_NE(canon("Tensor[((n + 1, 2), float32]").find("')'"), std::string::npos);
  // Equal expressions are equal types (interned): TypeEqual is identity.
  EXPECT_TRUE(
      TypeEqual(*ParseType("Tensor[(n+1,), float32]"), *ParseType("Tensor[(n + 1,), float32]")));
  EXPECT_FALSE(
      TypeEqual(*ParseType("Tensor[(n + 1,), float32]"), *ParseType("Tensor[(1 + n,), float32]")));
}

// TypeDimNames: the names a type's dimensions use, in order, each once;
// kBindable keeps only bare-name dimensions; a Callable's are its own.
TEST(TextFormatTest, TypeDimNames) {
  auto names = [](const char* text, DimNameKind kind) {
    auto t = ParseType(text);
    EXPECT_TRUE(t.ok()) << text;
    std::string out;
    for (Symbol s : TypeDimNames(*t, kind)) out += s.str() + " ";
    return out;
  };
  const char* t =
      "(Tensor[(n, m * k, 4), float32], (Shape[(k, n + 1)], Prim[int64, value=p]), Tensor[(q,), "
      "int8], Callable[(Tensor[(z,), float32]), Tensor[(z,), float32]])";
  EXPECT_EQ(names(t, DimNameKind::kAll), "n m k p q ");
  EXPECT_EQ(names(t, DimNameKind::kBindable), "n k p q ");
  EXPECT_EQ(names("Tensor[ndim=2, float32]", DimNameKind::kAll), "");
}

TEST(TextFormatTest, DimensionArithmetic) {
  Dim n = Dim::Sym(Symbol("n")), m = Dim::Sym(Symbol("m"));
  Dim e = DimMul(DimAdd(n, Dim::Const(1)), Dim::Const(8));
  EXPECT_EQ(DimToString(e), "(n + 1) * 8");
  EXPECT_EQ(DimToString(DimSub(e, DimMul(n, Dim::Const(8)))), "8");  // differ by a constant
  EXPECT_EQ(DimToString(DimSub(DimMul(m, n), n)), "m * n - n");
  std::vector<Symbol> names;
  DimNames(DimAdd(DimMul(m, n), n), &names);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].str(), "m");
  EXPECT_EQ(names[1].str(), "n");
  auto value = [](Symbol s) -> std::optional<int64_t> {
    if (s.str() == "n") return 3;
    return std::nullopt;
  };
  EXPECT_EQ(EvalDim(e, value), std::optional<int64_t>(32));
  EXPECT_EQ(EvalDim(DimAdd(m, n), value), std::nullopt);
  Dim s = SubstituteDim(DimAdd(m, DimMul(n, Dim::Const(2))), [](Symbol x) -> std::optional<Dim> {
    if (x.str() == "n") return Dim::Const(5);
    return std::nullopt;
  });
  EXPECT_EQ(DimToString(s), "m + 10");
  EXPECT_EQ(DimToString(SubstituteDim(s, [](Symbol) { return std::optional<Dim>(Dim::Const(1)); })),
            "11");
  EXPECT_EQ(DimToString(*ParseDimText("(a+b)*c")), "(a + b) * c");
  // Expressions are small: 128 operands read, 129 do not (text and loaders).
  std::string sum = "a0";
  for (int i = 1; i < 128; ++i) sum += " + a" + std::to_string(i);
  EXPECT_TRUE(ParseDimText(sum).ok());
  EXPECT_TRUE(ParseType("Tensor[(" + sum + ",), float32]").ok());
  EXPECT_FALSE(ParseDimText(sum + " + z").ok());
  auto big = ParseType("Tensor[(" + sum + " + z,), float32]");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("more than 128 operands"), std::string::npos)
      << big.status().message();
  // Inference gives up on a dimension that would be larger.
  Dim d = *ParseDimText(sum);
  EXPECT_TRUE(DimTooLarge(DimAdd(d, Dim::Sym(Symbol("z")))));
  EXPECT_FALSE(DimTooLarge(d));
  EXPECT_FALSE(ParseDimText("a +").ok());
  EXPECT_FALSE(ParseDimText("((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((a"
                            "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))")
                   .ok());
}

TEST(TextFormatTest, ParseTypeStandalone) {
  auto t = ParseType("Tensor[(2, n), float32]");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(TypeToString(*t), "Tensor[(2, n), float32]");
  EXPECT_FALSE(ParseType("Tensor[(2, n), float33]").ok());
  auto c = ParseType("Callable[(Prim[int64], (Object, Tensor)), Object, pure=false]");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(TypeToString(*c), "Callable[(Prim[int64], (Object, Tensor)), Object, pure=false]");
  EXPECT_EQ(TypeToString(*ParseType("Callable[(), Object, pure=true]")), "Callable[(), Object]");
  EXPECT_FALSE(ParseType("Callable[Object, Object]").ok());
  EXPECT_FALSE(ParseType("Callable[(Object), Object, pure=maybe]").ok());
}

// TVM's attribute keys are dotted (relax.force_pure, tir.noalias): they read,
// verify, print and read back, in calls and on functions alike; a key the
// lexer cannot read as one token is still refused by the verifier.
TEST(TextFormatTest, DottedAttributeKeysRoundTrip) {
  const char* text =
      "def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] "
      "attrs {relax.force_pure = true, tir.noalias = 1, num_input = 1} {\n"
      "  %y = nn.softmax(%x, axis=0);\n"
      "  %y\n"
      "}\n";
  ExpectRoundTrip(text, "dotted keys");
  StatusOr<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::string printed = PrintModule(*m);
  EXPECT_NE(printed.find("relax.force_pure"), std::string::npos) << printed;
  EXPECT_NE(printed.find("tir.noalias"), std::string::npos) << printed;
  EXPECT_FALSE(IsAttrKeyText("relax."));
  EXPECT_FALSE(IsAttrKeyText("relax..x"));
  EXPECT_FALSE(IsAttrKeyText(".x"));
  EXPECT_TRUE(IsAttrKeyText("a.b_2.c"));
}

// A block of more than 2^14 bindings prints on several threads
// (PrintBindingsInParallel), with the bytes of a serial print: names made
// unique in first-use order across the runs' borders (hints that clash
// with each other and with a parameter, and one to clean), dataflow
// outputs, tuples and their items. A block with a nested scope (an if)
// prints serially, and the same.
Module LargeBlockModule(bool with_if) {
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t);
  BlockBuilder bb;
  Var prev = *bb.EmitCall("add", {x, x}, Attrs(), {}, "v");  // an ordinary block first
  bb.BeginDataflowBlock();
  const char* hints[] = {"v", "x", "a b", "v_1"};
  for (int i = 0; i < 40000; ++i) {
    const char* hint = hints[i % 4];
    if (with_if && i == 30000) {
      BlockBuilder inner;
      Var y = *inner.EmitCall("negative", {prev}, Attrs(), {}, "v");
      Var c = VarNode::Make("c", TensorTypeNode::Make({}, DataType::kBool));
      Expr cond = *MakeOpCall("less", {*MakeOpCall("sum", {prev}), *MakeOpCall("sum", {x})});
      Var cv = bb.Emit(cond, "c");
      Expr e = *IfNode::Make(cv, inner.Finalize(y), SeqExprNode::Make({}, prev));
      prev = bb.Emit(e, hint);
      continue;
    }
    if (i % 5 == 3) {
      Var tup = bb.Emit(TupleNode::Make({prev, x}), hint);
      prev = bb.Emit(*TupleGetItemNode::Make(tup, 0), hint);
    } else if (i % 1000 == 999) {
      prev = bb.EmitOutput(*MakeOpCall("multiply", {prev, x}), hint);
    } else {
      prev = *bb.EmitCall(i % 2 ? "add" : "subtract", {prev, x}, Attrs(), {}, hint);
    }
  }
  Var out = bb.EmitOutput(prev, "out");
  bb.EndBlock();
  return *Module::Make({FunctionNode::Make("main", {x}, nullptr, bb.Finalize(out))});
}

TEST(TextFormatTest, LargeBlockPrintsTheSameOnAnyNumberOfThreads) {
  for (bool with_if : {false, true}) {
    SCOPED_TRACE(with_if ? "with an if" : "calls and tuples");
    Module m = LargeBlockModule(with_if);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    std::string serial = PrintModule(m, PrintOptions{.threads = 1});
    EXPECT_NE(serial.find("%v_1_1: "), std::string::npos);  // "v_1" after v's own v_1
    EXPECT_NE(serial.find("%x_1: "), std::string::npos);    // the parameter keeps %x
    EXPECT_NE(serial.find("%a_b: "), std::string::npos);
    for (int threads : {2, 3, 8}) {
      SCOPED_TRACE(threads);
      EXPECT_TRUE(PrintModule(m, PrintOptions{.threads = threads}) == serial);
      std::string streamed;
      ASSERT_TRUE(PrintModuleTo(
                      m,
                      [&](std::string_view piece) {
                        streamed.append(piece);
                        return Status::Ok();
                      },
                      PrintOptions{.threads = threads})
                      .ok());
      EXPECT_TRUE(streamed == serial);
      EXPECT_TRUE(PrintItem(m.items()[0], PrintOptions{.threads = threads}) ==
                  PrintItem(m.items()[0], PrintOptions{.threads = 1}));
    }
    StatusOr<Module> again = ParseModule(serial);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_FALSE(FindFirstMismatch(m, *again));
  }
}

}  // namespace
}  // namespace plir
