// Hostile inputs, by class, at the IR level: shape arithmetic that would
// overflow, names and nesting the text format cannot read back.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "ir/checked_math.h"
#include "ir/op.h"
#include "ir/serialize/serialize.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"

namespace plir {
namespace {

std::string Err(std::string_view text) {
  auto m = ParseModule(text);
  if (m.ok()) {
    Status v = Verify(*m);
    return v.ok() ? "" : v.message();
  }
  return m.status().message();
}

TEST(CheckedMathTest, DetectsOverflow) {
  const int64_t big = int64_t{1} << 62;
  EXPECT_EQ(CheckedMul(big, 2), std::nullopt);
  EXPECT_EQ(CheckedMul(-big, 2), -2 * big);
  EXPECT_EQ(CheckedAdd(std::numeric_limits<int64_t>::max(), 1), std::nullopt);
  std::vector<int64_t> dims{1 << 21, 1 << 21, 1 << 21};
  EXPECT_EQ(CheckedProduct(dims), std::nullopt);
  std::vector<int64_t> ok{3, 4, 5};
  EXPECT_EQ(CheckedProduct(ok), 60);
  std::vector<int64_t> neg{3, -1};
  EXPECT_EQ(CheckedProduct(neg), std::nullopt);
  EXPECT_FALSE(ElementCount(dims, "t").ok());
  EXPECT_FALSE(CheckedBytes(int64_t{1} << 61, 8, int64_t{1} << 40, "t").ok());
  EXPECT_EQ(*CheckedBytes(10, 4, 100, "t"), 40);
}

TEST(HostileShapeTest, TensorTypeWhoseElementCountOverflows) {
  std::string e =
      Err("def @f(%x: Tensor[(4294967296, 4294967296), float32]) -> Tensor[(4294967296, "
          "4294967296), float32] {\n"
          "  %x\n}\n");
  EXPECT_NE(e.find("1:19: the tensor shape has more elements than fit in 64 bits"),
            std::string::npos)
      << e;
}

TEST(HostileShapeTest, ReshapeToAnOverflowingShape) {
  std::string e =
      Err("def @f(%x: Tensor[(4,), float32]) {\n"
          "  %y = reshape(%x, shape=[4611686018427387904, 4]);\n  %y\n}\n");
  EXPECT_NE(e.find("does not fit in 64 bits"), std::string::npos) << e;
}

TEST(HostileShapeTest, Conv2dAttributesValidated) {
  const std::string head =
      "def @f(%d: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 2, 3, 3), float32]) {\n  %y = "
      "nn.conv2d(%d, %w";
  EXPECT_NE(Err(head + ", groups=0);\n  %y\n}\n").find("groups must be positive"),
            std::string::npos);
  EXPECT_NE(Err(head + ", groups=-2);\n  %y\n}\n").find("groups must be positive"),
            std::string::npos);
  EXPECT_NE(Err(head + ", groups=2, strides=[0, 1]);\n  %y\n}\n").find("strides must be positive"),
            std::string::npos);
  EXPECT_NE(
      Err(head + ", groups=2, dilation=[4611686018427387904, 1]);\n  %y\n}\n").find("overflows"),
      std::string::npos);
  EXPECT_NE(Err(head + ", groups=4);\n  %y\n}\n").find("not divisible by groups=4"),
            std::string::npos);
  EXPECT_EQ(Err(head + ", groups=2);\n  %y\n}\n"), "");
}

TEST(HostileNameTest, JsonNamesTheTextFormatCannotSpellAreRefused) {
  auto m = ParseModule("def @scale(%x: Tensor[(2,), float32]) {\n  %x\n}\n");
  ASSERT_TRUE(m.ok());
  std::string json = SaveJson(*m);
  size_t at = json.find("\"scale\"");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 7, "\"sc ale\\n\\u001b\"");
  auto loaded = LoadJson(json);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Status v = Verify(*loaded);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("cannot be written in the text format"), std::string::npos)
      << v.message();
  // The message escapes the control bytes it quotes.
  EXPECT_EQ(v.message().find('\x1b'), std::string::npos);
  EXPECT_NE(v.message().find("\\x1b"), std::string::npos) << v.message();
}

TEST(HostileNestingTest, PrinterAndParserAgreeOnDepth) {
  // The deepest call nest the parser reads: printed, it parses again.
  auto nest = [](int n) {
    std::string text = "def @f(%x: Tensor[(2,), float32]) {\n  %y = ";
    for (int i = 0; i < n; ++i) text += "nn.relu(";
    text += "%x";
    for (int i = 0; i < n; ++i) text += ")";
    return text + ";\n  %y\n}\n";
  };
  auto ok = ParseModule(nest(kMaxNestingDepth - 2));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_TRUE(Verify(*ok).ok());
  auto again = ParseModule(PrintModule(*ok));
  EXPECT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(ParseModule(nest(kMaxNestingDepth + 5)).ok());
  // One level deeper, built from a binary file (which has no nesting
  // limit): the verifier refuses it instead of the printer writing text the
  // parser would reject.
  auto deeper = ParseModule(nest(kMaxNestingDepth - 2));
  ASSERT_TRUE(deeper.ok());
  std::string bin = SaveBinary(*deeper);
  auto loaded = LoadBinary(bin);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(Verify(*loaded).ok());
  Op relu = OpRegistry::Global().Lookup("nn.relu");
  Function f = (*loaded).LookupFunction("f");
  Expr e = f->body()->blocks()[0]->bindings()[0]->value();
  for (int i = 0; i < 10; ++i) e = *MakeOpCall(relu, {e});
  Var y = VarNode::Make("y", e->type());
  Function g = FunctionNode::Make(
      "f", f->params(), nullptr,
      SeqExprNode::Make({BindingBlockNode::Make({VarBindingNode::Make(y, e)}, false)}, y));
  auto m = Module::Make({g});
  ASSERT_TRUE(m.ok());
  Status v = Verify(*m);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("nested deeper than 1000 levels"), std::string::npos) << v.message();
}

// Local functions nested in local functions: the parser's depth limit
// applies, the deepest nest it reads prints back to text it reads again,
// and one level more is a clean error.
TEST(HostileNestingTest, NestedLocalFunctions) {
  auto nest = [](int n) {
    std::string text = "def @f(%x: Tensor[(2,), float32]) {\n  %g = ";
    for (int i = 0; i < n; ++i) text += "fn() { ";
    text += "%x";
    for (int i = 0; i < n; ++i) text += " }";
    return text + ";\n  %g\n}\n";
  };
  int deepest = 0;
  for (int n = 1; n <= kMaxNestingDepth; ++n) {
    if (!ParseModule(nest(n)).ok()) break;
    deepest = n;
  }
  ASSERT_GT(deepest, 100);
  ASSERT_LT(deepest, kMaxNestingDepth);
  auto m = ParseModule(nest(deepest));
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(Verify(*m).ok()) << Verify(*m).message();
  auto again = ParseModule(PrintModule(*m));
  EXPECT_TRUE(again.ok()) << again.status().message();
  auto too_deep = ParseModule(nest(deepest + 1));
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.status().message().find("nest"), std::string::npos)
      << too_deep.status().message();
}

// Malformed Callable types and local functions in JSON and binary files are
// load errors, never crashes.
TEST(HostileLoadTest, MalformedCallablesAndLocalFunctions) {
  auto json = [](const std::string& nodes) {
    return LoadJson("{\"format\":\"plir\",\"version\":1,\"nodes\":[" + nodes + "],\"items\":[]}");
  };
  auto no_ret = json("{\"k\":\"FuncType\"}");
  ASSERT_FALSE(no_ret.ok());
  EXPECT_NE(no_ret.status().message().find("needs a return type"), std::string::npos)
      << no_ret.status().message();
  auto short_fn = json("{\"k\":\"ObjectType\"},{\"k\":\"LocalFn\",\"c\":[0]}");
  ASSERT_FALSE(short_fn.ok());
  EXPECT_NE(short_fn.status().message().find("too few children"), std::string::npos)
      << short_fn.status().message();
  auto not_a_body = json("{\"k\":\"ObjectType\"},{\"k\":\"LocalFn\",\"c\":[0,0]}");
  ASSERT_FALSE(not_a_body.ok());
  auto not_a_type =
      json("{\"k\":\"PrimValue\",\"dt\":\"int64\",\"v\":1},{\"k\":\"FuncType\",\"c\":[0]}");
  ASSERT_FALSE(not_a_type.ok());
  // Binary: every truncation of a module with both kinds fails cleanly.
  auto m = ParseModule(
      "def @f(%x: Tensor[(2,), float32], %cb: Callable[(Object), (), pure=false]) {\n"
      "  %g = fn(%y: Tensor[(2,), float32]) { add(%y, %x) };\n  %u = %cb(%x);\n  %g\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::string bin = SaveBinary(*m);
  ASSERT_TRUE(LoadBinary(bin).ok());
  for (size_t n = 0; n < bin.size(); ++n) EXPECT_FALSE(LoadBinary(bin.substr(0, n)).ok()) << n;
}

// Input formats (the hostile round's F1, F2, F5): line endings the format
// does not have, strings that are not UTF-8, a byte order mark.
const char* kTwoFunctions =
    "// a comment\n"
    "def @f(%x: Tensor[(2,), float32]) {\n  %x\n}\n"
    "def @g(%x: Tensor[(2,), float32]) {\n  // inside\n  %x\n}\n";

TEST(HostileTextTest, LoneCrIsAnErrorNotAComment) {
  std::string cr = kTwoFunctions;
  for (char& c : cr)
    if (c == '\n') c = '\r';
  std::string e = Err(cr);
  EXPECT_EQ(e.rfind("<input>:1:13: carriage return without a line feed", 0), 0u) << e;
  // A lone CR inside a body (after a comment there) too.
  std::string body = kTwoFunctions;
  body.replace(body.find("  // inside\n"), 12, "  // inside\r");
  e = Err(body);
  EXPECT_NE(e.find("6:12: carriage return without a line feed"), std::string::npos) << e;
  // CRLF still reads as before.
  std::string crlf;
  for (char c : std::string(kTwoFunctions)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto m = ParseModule(crlf);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto lf = ParseModule(kTwoFunctions);
  ASSERT_TRUE(lf.ok());
  EXPECT_EQ(PrintModule(*m), PrintModule(*lf));
  EXPECT_NE(Err("def @f() { \"a\rb\" }\n").find("1:12: carriage return in string"),
            std::string::npos);
}

TEST(HostileTextTest, StringsMustBeUtf8) {
  for (const char* s : {"\\xed\\xa0\\x80\\xff", "\\xff", "\\xc0\\x80", "\xff", "\xed\xa0\x80",
                        "\\xf4\\x90\\x80\\x80", "\\xe2\\x82"}) {
    std::string e = Err(std::string("def @f(%x: Object) {\n  call_packed(\"") + s +
                        "\", %x, sinfo_args=[Object])\n}\n");
    EXPECT_NE(e.find("2:15: string is not valid UTF-8"), std::string::npos) << s << ": " << e;
    EXPECT_EQ(e.find('\xff'), std::string::npos) << e;
  }
  // Valid UTF-8, raw or spelled by escapes, still reads.
  for (const char* s : {"\\xe2\\x82\\xac", "\xe2\x82\xac", "\\xf0\\x9f\\x98\\x80", "\\x01"})
    EXPECT_EQ(Err(std::string("def @f(%x: Object) {\n  call_packed(\"") + s +
                  "\", %x, sinfo_args=[Object])\n}\n"),
              "")
        << s;
}

TEST(HostileTextTest, ByteOrderMarkIsAClearError) {
  std::string e = Err(std::string("\xef\xbb\xbf") + kTwoFunctions);
  EXPECT_EQ(e.rfind("<input>:1:1: the file starts with a UTF-8 byte order mark", 0), 0u) << e;
  EXPECT_EQ(e.find("\xef\xbb\xbf"), std::string::npos) << e;  // the excerpt escapes it
}

TEST(HostileTextTest, InvalidUtf8InANameIsEscapedInTheMessage) {
  std::string e = Err("def @f\xff\xfe(%x: Object) {\n  %x\n}\n");
  EXPECT_NE(e.find("1:7: unexpected byte 0xff"), std::string::npos) << e;
  EXPECT_EQ(e.find('\xff'), std::string::npos) << e;
  EXPECT_EQ(e.find('\xfe'), std::string::npos) << e;
  EXPECT_NE(e.find("def @f\\xff\\xfe(%x"), std::string::npos) << e;
}

// A binary module can hold strings that are not UTF-8 (the text parser
// refuses them; a .plirb carries any bytes): it loads, but the verifier,
// which every tool runs on its input, refuses it, so that no tool writes
// JSON that cannot be read back (hostile round F2, the binary side).
TEST(HostileInputTest, BinaryStringsThatAreNotUtf8FailVerification) {
  const std::string bad = "\xed\xa0\x80\xff";
  Var x = VarNode::Make("x", ObjectTypeNode::Get()), y = VarNode::Make("y", ObjectTypeNode::Get());
  Expr call = *MakeOpCall("call_packed", {StringImmNode::Make(bad), x});
  Function f = FunctionNode::Make(
      "f", {x}, ObjectTypeNode::Get(),
      SeqExprNode::Make({BindingBlockNode::Make({VarBindingNode::Make(y, call)}, false)}, y));
  Module m = *Module::Make({f});
  StatusOr<Module> loaded = LoadBinary(SaveBinary(m));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Status s = Verify(*loaded);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not valid UTF-8"), std::string::npos) << s.message();
  // What the check prevents: its JSON does not load.
  EXPECT_FALSE(LoadJson(SaveJson(*loaded)).ok());
}

}  // namespace
}  // namespace plir
