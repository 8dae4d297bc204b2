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
