// The characters of names in the text format, in one place: the lexer reads
// them, the printer writes only them, and the verifier refuses names (from
// JSON or binary files) made of others.
#ifndef PLIR_IR_INTERNAL_NAME_CHARS_H_
#define PLIR_IR_INTERNAL_NAME_CHARS_H_

namespace plir::internal {

// May start an identifier (an attribute key, a word).
inline bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
// May follow it, and makes up a name after '%' or '@'.
inline bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_NAME_CHARS_H_
