// Internal: the tokenizer of the text format. Copyable, so the parser can
// save a position and come back to it (function bodies are parsed after all
// signatures are known).
#ifndef PLIR_IR_INTERNAL_LEXER_H_
#define PLIR_IR_INTERNAL_LEXER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

namespace plir::internal {

enum class Tok : uint8_t {
  kEof,
  kError,      // text holds the message
  kIdent,      // foo, nn.conv2d, Tensor, float32, if, ...
  kLocal,      // %name   (text without '%')
  kGlobal,     // @name   (text without '@')
  kInt,        // 42, -7
  kFloat,      // 1.5, -2e-3, -inf
  kString,     // "..."   (value holds the decoded string)
  kHexString,  // x"0a0b" (value holds the decoded bytes)
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLBracket,
  kRBracket,
  kLAngle,
  kRAngle,
  kComma,
  kColon,
  kSemi,
  kEq,
  kDot,
  kArrow,
  kHash,
  kPlus,
  kMinus,
  kStar,  // dimension expressions: n + 1, m - 2, m * n
};

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;  // the token's spelling (or the error message)
  // The decoded string or hex payload: a view into storage the lexer (and
  // its copies) keep for the whole parse, so that tokens stay plain values
  // with no string of their own to construct, move and destroy.
  std::string_view value;
  // 64-bit: a file may hold more than 2^31 lines, or a line more than 2^31
  // characters (inputs up to ModuleFile::MaxBytes(), 16 GiB by default).
  int64_t line = 1;
  int64_t col = 1;
};

// Describes a token for error messages: "'{'", "identifier 'foo'", "end of input".
std::string DescribeToken(const Token& t);

class Lexer {
 public:
  explicit Lexer(std::string_view src)
      : src_(src), decoded_(std::make_shared<std::deque<std::string>>()) {}
  // Starts counting at `line`:`col` (for tests of positions past 2^31
  // without a file that long).
  Lexer(std::string_view src, int64_t line, int64_t col) : Lexer(src) {
    line_ = line;
    col_ = col;
  }
  Token Next();
  // Precondition: the last token returned was '{'. Skips raw bytes to just
  // past the matching '}' (strings and comments respected) without making
  // tokens. Returns false at end of input.
  bool SkipBracedBody();
  // Gives this lexer its own storage for decoded strings from here on (views
  // already handed out stay valid). A copy lexing on another thread must.
  void DetachStorage() { decoded_ = std::make_shared<std::deque<std::string>>(); }
  // The byte offset of the next unread character.
  size_t offset() const { return pos_; }
  // Goes on from byte `pos`, which starts a token or the space before one,
  // at `line`:`col` (a parser that found statement boundaries by a raw scan
  // starts lexing a statement there).
  void SeekTo(size_t pos, int64_t line, int64_t col) {
    pos_ = pos;
    line_ = line;
    col_ = col;
    after_dot_ = false;
  }

 private:
  char Peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  void Advance(size_t n = 1);
  Token Make(Tok kind, size_t start, int64_t line, int64_t col);
  Token Error(std::string_view message, int64_t line, int64_t col);
  // True at a CR that is not followed by LF (a line ending the format
  // does not have: an error, never a comment that runs on to the next LF).
  bool AtLoneCr() const { return Peek() == '\r' && Peek(1) != '\n'; }
  void SkipSpaceAndComments();

  std::string_view src_;
  size_t pos_ = 0;
  int64_t line_ = 1;
  int64_t col_ = 1;
  bool after_dot_ = false;  // `%t.1.0` is two accesses, not the float 1.0
  std::string error_;       // storage for the last error message
  // Decoded string and hex payloads (a deque: views stay valid); shared by
  // copies of the lexer (the parser saves and restores positions).
  std::shared_ptr<std::deque<std::string>> decoded_;
};

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_LEXER_H_
