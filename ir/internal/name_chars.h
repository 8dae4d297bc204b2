// The characters of names in the text format, in one place: the lexer reads
// them, the printer writes only them, and the verifier refuses names (from
// JSON or binary files) made of others.
#ifndef PLIR_IR_INTERNAL_NAME_CHARS_H_
#define PLIR_IR_INTERNAL_NAME_CHARS_H_

#include <cstddef>
#include <string_view>

namespace plir::internal {

// May start an identifier (an attribute key, a word).
inline bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
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

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_NAME_CHARS_H_
