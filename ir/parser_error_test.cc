// One test per kind of parse error: each checks the reported position
// (file:line:column) and the message.
#include <gtest/gtest.h>

#include <string>

#include "ir/text/parser.h"

namespace plir {
namespace {

void ExpectError(const std::string& text, int line, int col, const std::string& needle) {
  ParseOptions opts;
  opts.filename = "test.plir";
  StatusOr<Module> m = ParseModule(text, opts);
  ASSERT_FALSE(m.ok()) << "parsed without error:\n" << text;
  const std::string& msg = m.status().message();
  std::string prefix = "test.plir:" + std::to_string(line) + ":" + std::to_string(col) + ": ";
  EXPECT_EQ(msg.compare(0, prefix.size(), prefix), 0)
      << "want prefix " << prefix << "\ngot: " << msg;
  EXPECT_NE(msg.find(needle), std::string::npos) << "want '" << needle << "' in: " << msg;
}

const char* kHead = "def @f(%x: Tensor[(2, 3), float32]) {\n";

TEST(ParseErrorTest, BadShapeValues) {
  ExpectError(std::string(kHead) + "  %a = shape[2, 3];\n  %a\n}\n", 2, 14,
              "'(' to start the shape");
  ExpectError(std::string(kHead) + "  %a = shape[(2, -3)];\n  %a\n}\n", 2, 18,
              "negative dimension");
  ExpectError(std::string(kHead) + "  %a = shape[(2, 3);\n  %a\n}\n", 2, 20,
              "']' to close the shape value");
  ExpectError(std::string(kHead) + "  %a = reshape(%x, shape[(5,)]);\n  %a\n}\n", 2, 8,
              "has 6 elements");
}

TEST(ParseErrorTest, CallTirVarsMustBeAShape) {
  ExpectError(
      "extern @k(%a: Object) -> Object\ndef @f(%x: Tensor[(2,), float32]) {\n"
      "  %a = call_tir(@k, (%x,), %x, sinfo_args=[Object]);\n  %a\n}\n",
      3, 8, "third argument (tir_vars) must be a shape value");
}

TEST(ParseErrorTest, BadDimensionExpressions) {
  ExpectError("def @f(%x: Tensor[(n + , 3), float32]) {\n  %x\n}\n", 1, 24, "a dimension");
  ExpectError("def @f(%x: Tensor[(n * -2,), float32]) {\n  %x\n}\n", 1, 24, "negative dimension");
  ExpectError(std::string(kHead) + "  %a = prim[n +];\n  %a\n}\n", 2, 16, "a dimension");
  ExpectError("def @f(%x: Prim[int64, size=n]) {\n  %x\n}\n", 1, 24, "'value'");
}

TEST(ParseErrorTest, UnexpectedCharacter) {
  ExpectError(std::string(kHead) + "  %a = add(%x, $);\n  %a\n}\n", 2, 16,
              "unexpected character '$'");
}
// The first pass skips bodies with a raw byte scan; positions after a body
// must still count lines (escaped newlines in strings too) and characters
// (not UTF-8 bytes).
TEST(ParseErrorTest, PositionsAfterASkippedBody) {
  const char* same_line =
      "def @f(%x: Object) -> Object { call_packed(\"\xc3\xa9\xc3\xa9\", %x, sinfo_args=[Object]) }"
      " def @g(%y: Objekt) -> Object { %y }\n";
  ExpectError(same_line, 1, 88, "unknown type 'Objekt'");
  const char* next_lines =
      "def @f(%x: Object) -> Object {\n  %a = call_packed(\"\xc3\xa9\\\n{x}\", %x, "
      "sinfo_args=[Object]); // \xc3\xbc }\n  %a\n} def @g(%y: Objekt) -> Object { %y }\n";
  ExpectError(next_lines, 5, 14, "unknown type 'Objekt'");
}
TEST(ParseErrorTest, UnexpectedByte) {
  ExpectError(std::string("def @f() {\n  \x01\n}"), 2, 3, "unexpected byte 0x01");
}
TEST(ParseErrorTest, UnterminatedString) {
  ExpectError("def @f() {\n  \"abc\n}", 2, 3, "newline in string");
  ExpectError("def @f() {\n  \"abc", 2, 3, "unterminated string");
}
TEST(ParseErrorTest, InvalidEscape) {
  ExpectError("def @f() {\n  \"a\\qb\"\n}", 2, 5, "invalid escape '\\q'");
}
TEST(ParseErrorTest, MalformedNumber) {
  ExpectError("def @f() {\n  12abc\n}", 2, 3, "malformed number");
}
TEST(ParseErrorTest, IntegerOverflow) {
  ExpectError("def @f() {\n  99999999999999999999\n}", 2, 3, "does not fit in int64");
}
TEST(ParseErrorTest, MissingSemicolon) {
  ExpectError(std::string(kHead) + "  %a = add(%x, %x)\n  %a\n}\n", 3, 3,
              "expected ';' after the binding, found '%a'");
}
TEST(ParseErrorTest, UnknownOpSuggestsClosest) {
  ExpectError(std::string(kHead) + "  %a = ad(%x, %x);\n  %a\n}\n", 2, 8,
              "unknown op 'ad'; did you mean 'add'?");
}
TEST(ParseErrorTest, UnknownGlobalSuggestsClosest) {
  ExpectError("def @main() {\n  @mian()\n}\n", 2, 3, "unknown global @mian; did you mean @main?");
}
TEST(ParseErrorTest, UndefinedVariable) {
  ExpectError(std::string(kHead) + "  %a = add(%x, %y);\n  %a\n}\n", 2, 16,
              "undefined variable %y");
}
TEST(ParseErrorTest, VariableDefinedTwice) {
  ExpectError(std::string(kHead) + "  %a = add(%x, %x);\n  %a = add(%x, %x);\n  %a\n}\n", 3, 3,
              "%a is already defined at 2:3");
}
TEST(ParseErrorTest, DataflowVariableUsedOutsideItsBlock) {
  ExpectError(std::string(kHead) + "  dataflow {\n    %a = add(%x, %x);\n  }\n  %a\n}\n", 5, 3,
              "%a is a dataflow variable of the block at 3:5");
}
TEST(ParseErrorTest, BranchVariableUsedOutsideTheBranch) {
  ExpectError(
      "def @f(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) {\n"
      "  %r = if (%c) {\n    %t = add(%x, %x);\n    %t\n  } else {\n    %x\n  };\n  %t\n}\n",
      8, 3, "local to an if branch");
}
TEST(ParseErrorTest, CallsOfFunctionValues) {
  const char* head = "def @f(%x: Tensor[(2,), float32], %cb: Callable[(Prim[int64]), Object]) {\n";
  ExpectError(std::string(head) + "  %a = %x(1);\n  %a\n}\n", 2, 8,
              "cannot call a value of type Tensor[(2,), float32]");
  ExpectError(std::string(head) + "  %a = %cb(1, 2);\n  %a\n}\n", 2, 8,
              "takes 1 argument(s), got 2");
  ExpectError(std::string(head) + "  %a = %cb(%x);\n  %a\n}\n", 2, 8,
              "argument 0 has type Tensor[(2,), float32], the parameter expects Prim[int64]");
  ExpectError(std::string(head) + "  %a = %cb(1, axis=0);\n  %a\n}\n", 2, 15,
              "takes no attributes");
}
TEST(ParseErrorTest, LocalFunctions) {
  ExpectError(std::string(kHead) + "  %g = fn(%x: Object) { %x };\n  %g\n}\n", 2, 11,
              "%x is already defined at 1:8");
  ExpectError(std::string(kHead) + "  %g = fn(%y: Object) { %y };\n  %y\n}\n", 3, 3,
              "local to an if branch or a local function");
  ExpectError(
      std::string(kHead) + "  %g = fn(%y: Object) -> Tensor[(2,), float32] { (%y,) };\n  %g\n}\n",
      2, 48, "the local function returns (Object,), which does not match");
  ExpectError(std::string(kHead) + "  %g = fn(%y) { %y };\n  %g\n}\n", 2, 13, "expected ':'");
  ExpectError(std::string(kHead) + "  %t: Callable[(Object) Object] = %x;\n  %x\n}\n", 2, 25,
              "expected ',' and the Callable's return type");
}
TEST(ParseErrorTest, IncompatibleAnnotation) {
  ExpectError(std::string(kHead) + "  %a: Tensor[(3, 2), float32] = add(%x, %x);\n  %a\n}\n", 2, 7,
              "the annotation Tensor[(3, 2), float32] of %a is incompatible");
}
TEST(ParseErrorTest, ShapesDoNotBroadcast) {
  ExpectError(
      "def @f(%x: Tensor[(2, 3), float32], %y: Tensor[(4,), float32]) {\n  add(%x, %y)\n}\n", 2, 3,
      "do not broadcast");
}
TEST(ParseErrorTest, WrongArity) {
  ExpectError(std::string(kHead) + "  nn.relu(%x, %x)\n}\n", 2, 3,
              "nn.relu takes 1 argument, got 2");
}
TEST(ParseErrorTest, UnknownAttribute) {
  ExpectError(std::string(kHead) + "  nn.softmax(%x, axes=1)\n}\n", 2, 3,
              "nn.softmax has no attribute 'axes'; did you mean 'axis'?");
}
TEST(ParseErrorTest, AttributeOfWrongKind) {
  ExpectError(std::string(kHead) + "  nn.softmax(%x, axis=\"one\")\n}\n", 2, 3,
              "attribute 'axis' of nn.softmax must be int");
}
TEST(ParseErrorTest, AttributeGivenTwice) {
  ExpectError(std::string(kHead) + "  nn.softmax(%x, axis=1, axis=0)\n}\n", 2, 26,
              "attribute 'axis' given twice");
}
TEST(ParseErrorTest, PositionalAfterKeyword) {
  ExpectError(std::string(kHead) + "  matmul(%x, axis=1, %x)\n}\n", 2, 22,
              "positional argument after keyword arguments");
}
TEST(ParseErrorTest, UnknownDtypeSuggestsClosest) {
  ExpectError("def @f(%x: Tensor[(2,), flaot32]) {\n  %x\n}\n", 1, 25,
              "unknown dtype 'flaot32'; did you mean 'float32'?");
}
TEST(ParseErrorTest, UnknownType) {
  ExpectError("def @f(%x: Tensr[(2,), float32]) {\n  %x\n}\n", 1, 12, "unknown type 'Tensr'");
}
TEST(ParseErrorTest, ConstantElementCount) {
  ExpectError("def @f() {\n  const<Tensor[(2, 2), float32]>[1, 2, 3]\n}\n", 2, 41,
              "has 4 elements; found 3");
  ExpectError("def @f() {\n  const<Tensor[(2,), float32]>[1, 2, 3]\n}\n", 2, 38,
              "has 2 elements; found more");
}
TEST(ParseErrorTest, ConstantHexLength) {
  ExpectError("def @f() {\n  const<Tensor[(2,), int32]>x\"0102\"\n}\n", 2, 29,
              "the hex payload has 2 bytes; Tensor[(2,), int32] needs 8");
}
// Malformed hex payloads: the position of the pair holding the bad byte
// (or of the payload, when it has no closing quote on its line), as the
// byte-at-a-time lexer reported them before the payload was decoded in one
// scan (checked against that build's messages).
TEST(ParseErrorTest, MalformedHexPayloads) {
  auto text = [](const std::string& payload) {
    return "def @f() {\n  const<Tensor[(2,), int8]>" + payload + "\n}\n";
  };
  const char* kPairs = "invalid hex payload: expected pairs of hex digits";
  ExpectError(text("x\"0102030"), 2, 36, kPairs);  // odd, then the end of the line
  ExpectError(text("x\"01020g04\""), 2, 34, kPairs);
  ExpectError(text("x\"010203"), 2, 28, "unterminated hex payload");
  ExpectError(text("x\"0102\n03\""), 2, 28, "unterminated hex payload");
  ExpectError(text("x\"zz\""), 2, 30, kPairs);
  ExpectError(text("x\"a\""), 2, 30, kPairs);  // one digit before the quote
  ExpectError(text("x\"01 02\""), 2, 32, kPairs);
  ExpectError(text("x\"\xc3\xbf\xc3\xbf\""), 2, 30, kPairs);  // UTF-8, not hex
  ExpectError(text("x\"\""), 2, 28, "the hex payload has 0 bytes");
  ExpectError("def @f() {\n  const<Tensor[(2,), int8]>x\"010", 2, 32, kPairs);  // end of input
  ExpectError("def @f() {\n  const<Tensor[(2,), int8]>x\"0102", 2, 28, "unterminated hex payload");
}
TEST(ParseErrorTest, ConstantElementOutOfRange) {
  ExpectError("def @f() {\n  const<Tensor[(2,), int8]>[1, 300]\n}\n", 2, 32,
              "element 300 does not fit in int8");
  ExpectError("def @f() {\n  const<Tensor[(1,), int32]>[1.5]\n}\n", 2, 30,
              "expected an integer element of int32, found float 1.5");
}
TEST(ParseErrorTest, ConstantNeedsStaticShape) {
  ExpectError("def @f() {\n  const<Tensor[(n,), int8]>[1]\n}\n", 2, 9,
              "a constant needs a tensor type with a static shape");
}
TEST(ParseErrorTest, DuplicateGlobal) {
  ExpectError("def @f() {\n  1\n}\ndef @f() {\n  2\n}\n", 4, 5, "@f is already defined at 1:5");
}
TEST(ParseErrorTest, DuplicateParameter) {
  ExpectError("def @f(%x: Object, %x: Object) {\n  %x\n}\n", 1, 20,
              "parameter %x is declared twice");
}
TEST(ParseErrorTest, MissingResult) {
  ExpectError(std::string(kHead) + "  %a = add(%x, %x);\n}\n", 3, 1,
              "expected a result expression before '}'");
}
TEST(ParseErrorTest, OutputNamesForeignVariable) {
  ExpectError(
      std::string(kHead) + "  dataflow {\n    %a = add(%x, %x);\n    output %x;\n  }\n  %x\n}\n", 4,
      12, "%x in the output line is not bound in this dataflow block");
}
TEST(ParseErrorTest, OutputListedTwice) {
  ExpectError(std::string(kHead) +
                  "  dataflow {\n    %a = add(%x, %x);\n    output %a, %a;\n  }\n  %a\n}\n",
              4, 16, "%a is listed twice in the output line");
}
TEST(ParseErrorTest, BindingAfterOutputLine) {
  ExpectError(std::string(kHead) +
                  "  dataflow {\n    %a = add(%x, %x);\n    output %a;\n    %b = add(%a, %a);\n  "
                  "}\n  %a\n}\n",
              5, 5, "bindings must come before the output line");
}
TEST(ParseErrorTest, NestingTooDeep) {
  std::string text = "def @f(%x: Tensor[(2,), float32]) {\n  ";
  for (int i = 0; i < 5000; ++i) text += "nn.relu(";
  text += "%x";
  for (int i = 0; i < 5000; ++i) text += ")";
  text += "\n}\n";
  ExpectError(text, 2, 3 + 8 * (kMaxNestingDepth - 1), "nesting deeper than 1000 levels");
}
TEST(ParseErrorTest, UnterminatedBody) {
  ExpectError("def @f() {\n  %a = 1;\n", 1, 10, "unterminated function body");
}
TEST(ParseErrorTest, ReturnTypeMismatch) {
  ExpectError("def @f(%x: Tensor[(2,), float32]) -> Tensor[(3,), float32] {\n  nn.relu(%x)\n}\n", 1,
              60,
              "@f returns Tensor[(2,), float32], which does not match its declared return type");
}
TEST(ParseErrorTest, ExternCalledDirectly) {
  ExpectError("extern @k(%a: Object) -> Object\ndef @f() {\n  @k(1)\n}\n", 3, 3,
              "@k is an extern kernel; call it through call_tir");
}
TEST(ParseErrorTest, CallTirOfFunction) {
  ExpectError("def @g() {\n  1\n}\ndef @f() {\n  call_tir(@g, (), sinfo_args=[Object])\n}\n", 5, 12,
              "call_tir needs an extern kernel, but @g is a function");
}
TEST(ParseErrorTest, RecursionWithoutReturnType) {
  ExpectError("def @f(%x: Object) {\n  @f(%x)\n}\n", 2, 3, "cannot infer the return type of @f");
}
TEST(ParseErrorTest, GlobalCallArity) {
  ExpectError("def @g(%a: Object) -> Object {\n  %a\n}\ndef @f() {\n  @g(1, 2)\n}\n", 5, 5,
              "@g takes 1 argument(s), got 2");
}
TEST(ParseErrorTest, UnsupportedVersion) {
  ExpectError("#[version = \"0.0.5\"]\n", 1, 13, "unsupported format version \"0.0.5\"");
}
TEST(ParseErrorTest, TupleIndexOutOfRange) {
  ExpectError("def @f(%t: (Object, Object)) {\n  %t.2\n}\n", 2, 6, "tuple index 2 out of range");
}
TEST(ParseErrorTest, ConditionNotBoolean) {
  ExpectError(std::string(kHead) + "  if (%x) { %x } else { %x }\n}\n", 2, 3,
              "the condition of an if must be a boolean scalar");
}
TEST(ParseErrorTest, ExternNeedsReturnType) {
  ExpectError("extern @k(%a: Object)\ndef @f() {\n  1\n}\n", 2, 1,
              "expected '->' and the return type");
}
TEST(ParseErrorTest, TopLevelGarbage) {
  ExpectError("hello", 1, 1, "expected 'def' or 'extern', found identifier 'hello'");
}
TEST(ParseErrorTest, ErrorShowsSourceLineAndCaret) {
  StatusOr<Module> m = ParseModule(std::string(kHead) + "  %a = ad(%x, %x);\n  %a\n}\n");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("\n    %a = ad(%x, %x);\n         ^"), std::string::npos)
      << m.status().message();
}
TEST(ParseErrorTest, EmptyInputIsAnEmptyModule) {
  StatusOr<Module> m = ParseModule("  // nothing here\n");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->empty());
}

}  // namespace
}  // namespace plir
