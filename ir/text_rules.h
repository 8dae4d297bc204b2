// The rules of the text format that more than the parser must know, in one
// place: the lexer reads names and keys by them, the printer writes only
// what they allow, and the verifier refuses (in modules loaded from JSON or
// binary, or built by a pass) what the text could not hold.
// The format itself: docs/text-format.md.
#ifndef PLIR_IR_TEXT_RULES_H_
#define PLIR_IR_TEXT_RULES_H_

#include <cstddef>
#include <string_view>

namespace plir {

// The parser reads at most this many levels of nesting (deeper input is a
// clean error); the verifier refuses a module whose text would be deeper.
inline constexpr int kMaxNestingDepth = 1000;

// May start an identifier (an attribute key, a word).
inline bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// May follow it, and makes up a name after '%' or '@'.
inline bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

// The length of the identifier token at the start of `s` (0 if none): words
// joined by single dots, each word starting with IsIdentStart (`nn.conv2d`,
// `relax.force_pure`, `tir.noalias`). Op names and attribute keys are such
// tokens; a dot not followed by a word ends the token.
inline size_t IdentTokenLength(std::string_view s) {
  if (s.empty() || !IsIdentStart(s[0])) return 0;
  size_t p = 0;
  while (true) {
    while (p < s.size() && IsIdentChar(s[p])) ++p;
    if (p + 1 < s.size() && s[p] == '.' && IsIdentStart(s[p + 1])) {
      ++p;
      continue;
    }
    return p;
  }
}

// Whether `key` reads back as an attribute key: one whole identifier token.
inline bool IsAttrKeyText(std::string_view key) {
  return !key.empty() && IdentTokenLength(key) == key.size();
}

// The length of the valid UTF-8 sequence at the start of `s` (0 if none; a
// surrogate or an overlong form is not valid).
inline size_t Utf8SequenceLength(std::string_view s) {
  if (s.empty()) return 0;
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;  // not a surrogate
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((b(k) & 0xc0) != 0x80) return 0;
  return n;
}

// Whether `s` is valid UTF-8 (what JSON can hold, and the text's strings).
inline bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace plir

#endif  // PLIR_IR_TEXT_RULES_H_
