// The lexer's positions and the error formatter, at sizes a file would need
// gigabytes for: the lexer can start counting at any line and column, and
// FormatError is given 64-bit positions directly.
#include "ir/text/lexer.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/text/parser_impl.h"

namespace plir {
namespace {

using internal::Lexer;
using internal::Tok;

TEST(LexerPositionTest, LinesAndColumnsPast2To31) {
  const int64_t big = int64_t{3} << 30;  // 3 * 2^30 > 2^31
  Lexer lex("\n\n  garbage\n", big, 1);
  auto t = lex.Next();
  EXPECT_EQ(t.kind, Tok::kIdent);
  EXPECT_EQ(t.line, big + 2);
  EXPECT_EQ(t.col, 3);
  Lexer wide("  x", 1, big);
  t = wide.Next();
  EXPECT_EQ(t.line, 1);
  EXPECT_EQ(t.col, big + 2);
}

TEST(LexerPositionTest, SkippedBodyCountsPast2To31) {
  const int64_t big = int64_t{5} << 30;
  Lexer lex("{\n a b \n}  z", big, 1);
  ASSERT_EQ(lex.Next().kind, Tok::kLBrace);
  ASSERT_TRUE(lex.SkipBracedBody());
  auto t = lex.Next();
  EXPECT_EQ(t.line, big + 2);
  EXPECT_EQ(t.col, 4);
}

// Skipping a body lands where tokenizing through it does: on the token
// after the closing brace, with its line and column. The bodies put newlines,
// braces, strings (with escapes), comments and UTF-8 strings at every
// offset of the scan's 64-, 16- and 8-byte blocks.
TEST(LexerPositionTest, SkippedBodyEndsWhereTokensEnd) {
  const std::string pieces[] = {"a",        " ",
                                "\n",       "{ b }",
                                "\"s}{\"",  "\"x\\\\y\\\"\"",
                                "// } {\n", "\"\xc3\xa9\"",
                                "\"a/b\"",  "; c = d(e);"};
  uint64_t seed = 12345;
  for (int round = 0; round < 300; ++round) {
    std::string body = "{";
    const int count = 1 + round % 97;
    for (int k = 0; k < count; ++k) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      body += pieces[(seed >> 33) % std::size(pieces)];
    }
    body += "}  z";
    Lexer skip(body, 7, 3);
    ASSERT_EQ(skip.Next().kind, Tok::kLBrace);
    ASSERT_TRUE(skip.SkipBracedBody()) << body;
    auto after_skip = skip.Next();
    Lexer walk(body, 7, 3);
    int depth = 0;
    internal::Token t;
    do {
      t = walk.Next();
      ASSERT_NE(t.kind, Tok::kEof) << body;
      ASSERT_NE(t.kind, Tok::kError) << body;
      depth += t.kind == Tok::kLBrace;
      depth -= t.kind == Tok::kRBrace;
    } while (depth > 0);
    auto after_walk = walk.Next();
    EXPECT_EQ(after_skip.line, after_walk.line) << body;
    EXPECT_EQ(after_skip.col, after_walk.col) << body;
    EXPECT_EQ(after_skip.text, "z") << body;
  }
}

TEST(FormatErrorTest, PrintsSixtyFourBitPositions) {
  text_internal::ParseFailure f{"boom", int64_t{2200000000}, int64_t{4300000000}};
  std::string m = text_internal::FormatError("abc\n", "f.plir", f).message();
  EXPECT_EQ(m.rfind("f.plir:2200000000:4300000000: boom", 0), 0u) << m;
}

TEST(FormatErrorTest, ExcerptOfALongLineIsBounded) {
  // A 64 MB line: the excerpt shows about a hundred bytes around the column.
  std::string src(64 << 20, 'a');
  src[1000] = '!';
  text_internal::ParseFailure f{"unexpected", 1, 1001};
  std::string m = text_internal::FormatError(src, "f.plir", f).message();
  EXPECT_LT(m.size(), 600u) << m.size();
  size_t bang = m.find('!');
  ASSERT_NE(bang, std::string::npos) << m;
  size_t line_start = m.rfind('\n', bang) + 1;
  size_t caret = m.find('^');
  ASSERT_NE(caret, std::string::npos);
  EXPECT_EQ(caret - (m.rfind('\n', caret) + 1), bang - line_start) << m;
}

TEST(FormatErrorTest, ExcerptEscapesInvalidUtf8AndControlBytes) {
  std::string src = "def @f\xff\xfe(\x01) \xc3\xa9 x\n";
  text_internal::ParseFailure f{"unexpected byte 0xff", 1, 7};
  std::string m = text_internal::FormatError(src, "f.plir", f).message();
  EXPECT_EQ(m.find('\xff'), std::string::npos) << m;
  EXPECT_EQ(m.find('\x01'), std::string::npos) << m;
  EXPECT_NE(m.find("def @f\\xff\\xfe(\\x01) \xc3\xa9 x"), std::string::npos) << m;
  // The caret is under the \xff.
  size_t caret = m.find('^');
  size_t esc = m.find("\\xff");
  EXPECT_EQ(caret - (m.rfind('\n', caret) + 1), esc - (m.rfind('\n', esc) + 1)) << m;
}

}  // namespace
}  // namespace plir
