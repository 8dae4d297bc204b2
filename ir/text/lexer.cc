#include "ir/text/lexer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ir/text_rules.h"

namespace plir::internal {
namespace {
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string DescribeToken(const Token& t) {
  switch (t.kind) {
    case Tok::kEof:
      return "end of input";
    case Tok::kError:
      return "an invalid token";
    case Tok::kIdent:
      return "identifier '" + std::string(t.text) + "'";
    case Tok::kLocal:
      return "'%" + std::string(t.text) + "'";
    case Tok::kGlobal:
      return "'@" + std::string(t.text) + "'";
    case Tok::kInt:
      return "integer " + std::string(t.text);
    case Tok::kFloat:
      return "float " + std::string(t.text);
    case Tok::kString:
      return "string " + std::string(t.text);
    case Tok::kHexString:
      return "hex payload";
    default:
      return "'" + std::string(t.text) + "'";
  }
}

void Lexer::Advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < src_.size(); ++i) {
    char c = src_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) {
      ++col_;  // columns count characters, not UTF-8 continuation bytes
    }
  }
}

Token Lexer::Make(Tok kind, size_t start, int64_t line, int64_t col) {
  Token t;
  t.kind = kind;
  t.text = src_.substr(start, pos_ - start);
  t.line = line;
  t.col = col;
  return t;
}

Token Lexer::Error(std::string_view message, int64_t line, int64_t col) {
  error_ = std::string(message);
  Token t;
  t.kind = Tok::kError;
  t.text = error_;
  t.line = line;
  t.col = col;
  return t;
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || (c == '\r' && !AtLoneCr())) {
      ++pos_;
      ++col_;
    } else if (c == '\n') {
      ++pos_;
      ++line_;
      col_ = 1;
    } else if (c == '/' && Peek(1) == '/') {
      // To the line's end; a lone CR stops it too (Next() reports it), so a
      // file with CR line endings is an error, not one long comment.
      while (pos_ < src_.size() && src_[pos_] != '\n' && !AtLoneCr()) Advance();
    } else {
      break;
    }
  }
}

namespace {

// Non-zero iff one of the 8 bytes of `w` (little-endian) equals one of the
// bytes the body scan stops at ('\n', '{', '}', '"', '/'): the classic "has
// a zero byte" test (Hacker's Delight, 6-1) applied to w XOR each byte
// repeated. Its lowest set bit is exact (borrows only run upwards), so
// FirstSpecial gives the position of the first such byte.
inline uint64_t HasSpecialByte(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  return has_zero(w ^ (kOnes * '\n')) | has_zero(w ^ (kOnes * '{')) | has_zero(w ^ (kOnes * '}')) |
         has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '/'));
}

// The index (0..7) of the first byte a non-zero mask of the test above marks.
// The words are loaded little-endian: byte 0 is the lowest.
static_assert(std::endian::native == std::endian::little, "the byte scans assume little-endian");
inline size_t FirstSpecial(uint64_t mask) {
  return static_cast<size_t>(std::countr_zero(mask)) >> 3;
}

// The plain stretch of a body: counts the newlines from `p` up to the first
// '{', '}', '"' or '/' and returns that byte's position, or where fewer than
// a whole block is left (the caller's byte loop does the rest). Most of a
// large module's bytes pass through here on one thread before the parallel
// parse can start; the AVX2 version takes 64 bytes a step (hardware
// popcount included), the SSE2 one 16.
#if defined(__x86_64__)
#define PLIR_AVX2 __attribute__((target("avx2,popcnt")))
// The bytes of `v` that equal '{', '}', '"' or '/', as a bit mask.
PLIR_AVX2 inline uint32_t StopBytes32(__m256i v) {
  const __m256i open = _mm256_set1_epi8('{'), close = _mm256_set1_epi8('}'),
                quote = _mm256_set1_epi8('"'), slash = _mm256_set1_epi8('/');
  return static_cast<uint32_t>(_mm256_movemask_epi8(
      _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, open), _mm256_cmpeq_epi8(v, close)),
                      _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, slash)))));
}
PLIR_AVX2 inline uint32_t NewlineBytes32(__m256i v) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n'))));
}
PLIR_AVX2 size_t SkipPlainAvx2(const char* s, size_t p, size_t n, int64_t* lines) {
  while (p + 64 <= n) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + p));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + p + 32));
    const uint64_t stop = StopBytes32(a) | uint64_t{StopBytes32(b)} << 32;
    const uint64_t nl = NewlineBytes32(a) | uint64_t{NewlineBytes32(b)} << 32;
    if (stop) {
      const int k = std::countr_zero(stop);
      *lines += std::popcount(nl & ((uint64_t{1} << k) - 1));
      return p + static_cast<size_t>(k);
    }
    *lines += std::popcount(nl);
    p += 64;
  }
  return p;
}
#undef PLIR_AVX2
#endif

size_t SkipPlain(const char* s, size_t p, size_t n, int64_t* lines) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  if (avx2) return SkipPlainAvx2(s, p, n, lines);
#endif
#if defined(__SSE2__)
  const __m128i kNewline = _mm_set1_epi8('\n'), kOpen = _mm_set1_epi8('{'),
                kClose = _mm_set1_epi8('}'), kQuote = _mm_set1_epi8('"'),
                kSlash = _mm_set1_epi8('/');
  while (p + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + p));
    unsigned nl = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, kNewline)));
    const unsigned stop = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, kOpen), _mm_cmpeq_epi8(v, kClose)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, kQuote), _mm_cmpeq_epi8(v, kSlash)))));
    if (stop) {
      *lines += std::popcount(nl & ((1u << std::countr_zero(stop)) - 1));
      return p + static_cast<size_t>(std::countr_zero(stop));
    }
    *lines += std::popcount(nl);
    p += 16;
  }
#endif
  return p;
}

}  // namespace

bool Lexer::SkipBracedBody() {
  // A tight byte loop (this first pass touches every byte of every body):
  // plain stretches go by in blocks (SkipPlain), then runs of 8 bytes with
  // none of the five bytes it stops at are skipped whole. Only newlines are
  // counted on the way: every newline byte passed is one line (an escaped
  // one in a string too), so the column is recomputed once at the end from
  // the last of them.
  int depth = 1;
  after_dot_ = false;
  const char* s = src_.data();
  const size_t n = src_.size();
  size_t p = pos_;
  int64_t lines = 0;
  bool found = false;
  while (p < n) {
    p = SkipPlain(s, p, n, &lines);
    while (p + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, s + p, 8);
      if (uint64_t m = HasSpecialByte(w)) {  // straight to the first special byte
        p += FirstSpecial(m);
        break;
      }
      p += 8;
    }
    if (p >= n) break;
    char c = s[p++];
    switch (c) {
      case '\n':
        ++lines;
        break;
      case '{':
        ++depth;
        break;
      case '}':
        if (--depth == 0) found = true;
        break;
      case '"': {  // a string: to its closing quote (escapes skipped), or the line's end
        // Most strings (hex payloads of megabytes among them) hold neither a
        // newline nor a backslash before their quote: memchr finds it.
        const void* q = std::memchr(s + p, '"', n - p);
        const size_t stop = q ? static_cast<const char*>(q) - s : n;
        if (!std::memchr(s + p, '\n', stop - p) && !std::memchr(s + p, '\\', stop - p)) p = stop;
        while (p < n && s[p] != '"' && s[p] != '\n') {
          if (s[p] == '\\' && p + 1 < n) {
            lines += s[p + 1] == '\n';  // an escaped newline is still a line
            p += 2;
          } else {
            ++p;
          }
        }
        if (p < n && s[p] == '"') ++p;
        break;
      }
      case '/':
        if (p < n && s[p] == '/')
          while (p < n && s[p] != '\n') ++p;
        break;
      default:
        break;
    }
    if (found) break;
  }
  // Columns count characters, not UTF-8 continuation bytes.
  auto columns = [&](size_t from, size_t to) {
    int64_t cols = 0;
    for (size_t i = from; i < to; ++i) cols += (static_cast<unsigned char>(s[i]) & 0xc0) != 0x80;
    return cols;
  };
  if (lines == 0) {
    col_ += columns(pos_, p);
  } else {
    line_ += lines;
    const char* last = static_cast<const char*>(memrchr(s + pos_, '\n', p - pos_));
    col_ = 1 + columns(static_cast<size_t>(last - s) + 1, p);
  }
  pos_ = p;
  return found;
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  bool after_dot = after_dot_;
  after_dot_ = false;
  int64_t line = line_, col = col_;
  size_t start = pos_;
  if (pos_ >= src_.size()) return Make(Tok::kEof, start, line, col);
  char c = src_[pos_];
  if (c == '\r')  // SkipSpaceAndComments stops only at a lone one
    return Error(
        "carriage return without a line feed: the file uses CR line endings, which the text "
        "format does not have (use LF or CRLF)",
        line, col);
  if (pos_ == 0 && src_.substr(0, 3) == "\xef\xbb\xbf")
    return Error("the file starts with a UTF-8 byte order mark (BOM); save it without one", line,
                 col);

  auto single = [&](Tok k) {
    Advance();
    return Make(k, start, line, col);
  };
  switch (c) {
    case '(':
      return single(Tok::kLParen);
    case ')':
      return single(Tok::kRParen);
    case '{':
      return single(Tok::kLBrace);
    case '}':
      return single(Tok::kRBrace);
    case '[':
      return single(Tok::kLBracket);
    case ']':
      return single(Tok::kRBracket);
    case '<':
      return single(Tok::kLAngle);
    case '>':
      return single(Tok::kRAngle);
    case ',':
      return single(Tok::kComma);
    case ':':
      return single(Tok::kColon);
    case ';':
      return single(Tok::kSemi);
    case '=':
      return single(Tok::kEq);
    case '#':
      return single(Tok::kHash);
    case '+':
      return single(Tok::kPlus);
    case '*':
      return single(Tok::kStar);
    case '.':
      after_dot_ = true;
      return single(Tok::kDot);
    default:
      break;
  }
  if (c == '%' || c == '@') {
    Advance();
    size_t name_start = pos_;
    while (pos_ < src_.size() && IsIdentChar(src_[pos_])) {
      ++pos_;
      ++col_;
    }
    if (pos_ == name_start)
      return Error(std::string("expected a name after '") + c + "'", line, col);
    Token t = Make(c == '%' ? Tok::kLocal : Tok::kGlobal, start, line, col);
    t.text = src_.substr(name_start, pos_ - name_start);
    return t;
  }
  if (c == '-' && Peek(1) == '>') {
    Advance(2);
    return Make(Tok::kArrow, start, line, col);
  }
  if (c == '-' && Peek(1) == 'i' && Peek(2) == 'n' && Peek(3) == 'f' && !IsIdentChar(Peek(4))) {
    Advance(4);
    return Make(Tok::kFloat, start, line, col);
  }
  if (c == '-' && !IsDigit(Peek(1))) {  // a binary minus: n - 1
    Advance();
    return Make(Tok::kMinus, start, line, col);
  }
  if (IsDigit(c) || (c == '-' && IsDigit(Peek(1)))) {
    if (c == '-') Advance();
    while (IsDigit(Peek())) Advance();
    if (after_dot) return Make(Tok::kInt, start, line, col);
    bool is_float = false;
    if (Peek() == '.' && IsDigit(Peek(1))) {
      is_float = true;
      Advance();
      while (IsDigit(Peek())) Advance();
    }
    if (Peek() == 'e' || Peek() == 'E') {
      size_t k = 1;
      if (Peek(1) == '+' || Peek(1) == '-') k = 2;
      if (IsDigit(Peek(k))) {
        is_float = true;
        Advance(k);
        while (IsDigit(Peek())) Advance();
      }
    }
    if (IsIdentStart(Peek()))
      return Error("malformed number '" + std::string(src_.substr(start, pos_ - start + 1)) + "'",
                   line, col);
    return Make(is_float ? Tok::kFloat : Tok::kInt, start, line, col);
  }
  if (c == 'x' && Peek(1) == '"') {
    Advance(2);
    // The digits run to the first byte that is not one (no newline among
    // them: the column advances by their count); then pairs are decoded
    // from a table, without a per-byte Advance.
    static const std::array<int8_t, 256> kDigit = [] {
      std::array<int8_t, 256> d;
      for (int i = 0; i < 256; ++i) d[i] = static_cast<int8_t>(HexDigit(static_cast<char>(i)));
      return d;
    }();
    const char* s = src_.data();
    const size_t from = pos_, n = src_.size();
    size_t q = from;
    while (q < n && kDigit[static_cast<unsigned char>(s[q])] >= 0) ++q;
    const size_t digits = q - from;
    if (digits % 2 == 0 && (q >= n || s[q] == '\n'))
      return Error("unterminated hex payload", line, col);
    if (digits % 2 != 0 || s[q] != '"') {  // the pair holding the bad byte
      size_t bad_pair = from + (digits & ~size_t{1});
      int64_t l = line_, cc = col_ + static_cast<int64_t>(bad_pair - from);
      return Error("invalid hex payload: expected pairs of hex digits", l, cc);
    }
    std::string bytes(digits / 2, '\0');
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<char>(kDigit[static_cast<unsigned char>(s[from + 2 * i])] * 16 +
                                   kDigit[static_cast<unsigned char>(s[from + 2 * i + 1])]);
    pos_ = q + 1;  // past the closing quote
    col_ += static_cast<int64_t>(digits + 1);
    Token t = Make(Tok::kHexString, start, line, col);
    t.value = decoded_->emplace_back(std::move(bytes));
    return t;
  }
  if (IsIdentStart(c)) {
    // A dotted op name or attribute key (nn.conv2d, relax.force_pure).
    size_t p = pos_ + IdentTokenLength(std::string_view(src_).substr(pos_));
    col_ += static_cast<int64_t>(p - pos_);  // ASCII only: one column per byte
    pos_ = p;
    return Make(Tok::kIdent, start, line, col);
  }
  if (c == '"') {
    Advance();
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) return Error("unterminated string", line, col);
      char ch = Peek();
      if (ch == '"') break;
      if (ch == '\n') return Error("newline in string (use \\n)", line, col);
      if (ch == '\r') return Error("carriage return in string (use \\r)", line, col);
      if (ch == '\\') {
        int64_t el = line_, ec = col_;
        char e = Peek(1);
        switch (e) {
          case '"':
            value.push_back('"');
            break;
          case '\\':
            value.push_back('\\');
            break;
          case 'n':
            value.push_back('\n');
            break;
          case 't':
            value.push_back('\t');
            break;
          case 'r':
            value.push_back('\r');
            break;
          case 'x': {
            int hi = HexDigit(Peek(2)), lo = HexDigit(Peek(3));
            if (hi < 0 || lo < 0)
              return Error("invalid \\x escape: expected two hex digits", el, ec);
            value.push_back(static_cast<char>(hi * 16 + lo));
            Advance(2);
            break;
          }
          default:
            return Error("invalid escape '\\" + std::string(1, e) +
                             "' (allowed: \\\" \\\\ \\n \\t \\r \\xHH)",
                         el, ec);
        }
        Advance(2);
        continue;
      }
      value.push_back(ch);
      Advance();
    }
    Advance();
    // Strings are UTF-8 text (so every module can be written as JSON); \xHH
    // escapes spell bytes, and the bytes must still make UTF-8.
    if (!IsValidUtf8(value))
      return Error("string is not valid UTF-8 (\\xHH escapes must spell UTF-8 sequences)", line,
                   col);
    Token t = Make(Tok::kString, start, line, col);
    t.value = decoded_->emplace_back(std::move(value));
    return t;
  }
  unsigned char uc = static_cast<unsigned char>(c);
  if (uc < 0x20 || uc >= 0x7f) {
    char buf[8];
    static const char* kHex = "0123456789abcdef";
    buf[0] = '0';
    buf[1] = 'x';
    buf[2] = kHex[uc >> 4];
    buf[3] = kHex[uc & 15];
    buf[4] = 0;
    return Error(std::string("unexpected byte ") + buf, line, col);
  }
  return Error("unexpected character '" + std::string(1, c) + "'", line, col);
}

}  // namespace plir::internal
