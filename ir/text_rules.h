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

}  // namespace plir

#endif  // PLIR_IR_TEXT_RULES_H_
