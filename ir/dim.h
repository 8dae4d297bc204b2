// Dimensions of shapes: constants, symbolic names and expressions over them
// (the algebra that types, inference and the loaders share).
#ifndef PLIR_IR_DIM_H_
#define PLIR_IR_DIM_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/status.h"
#include "ir/symbol.h"

namespace plir {

// One dimension of a shape: a constant, or a symbolic variable named `sym`.
struct Dim {
  int64_t value = 0;
  Symbol sym;  // empty for constants

  static Dim Const(int64_t v) { return Dim{v, Symbol()}; }
  static Dim Sym(Symbol s) { return Dim{0, s}; }
  bool is_const() const { return sym.empty(); }
  friend bool operator==(const Dim& a, const Dim& b) {
    return a.value == b.value && a.sym == b.sym;
  }
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }
};

std::string DimToString(const Dim& d);

// Dimension expressions (TVM's PrimExpr dimensions: `n + 1`, `m * n`,
// `(r + 1) * 8`): a Dim whose `sym` holds the expression's canonical text
// (binary operators spaced, parentheses only where needed, constant
// operands folded), so that equal expressions are equal Dims and every
// format stores them as the text. `+`, `-` and `*` over names and
// non-negative integers.
bool DimIsExpr(const Dim& d);
// Appends every name `d` mentions (the name itself for a plain name), in
// order of appearance, without repeats.
void DimNames(const Dim& d, std::vector<Symbol>* out);
// The value of `d` given values of names (nullopt where unknown or on
// overflow).
std::optional<int64_t> EvalDim(const Dim& d,
                               const std::function<std::optional<int64_t>(Symbol)>& value);
// `d` with names replaced where `f` gives a dimension, folded again.
Dim SubstituteDim(const Dim& d, const std::function<std::optional<Dim>(Symbol)>& f);
// Arithmetic on dimensions: constants fold (while the result is a
// non-negative int64), anything else builds the expression.
Dim DimAdd(const Dim& a, const Dim& b);
Dim DimSub(const Dim& a, const Dim& b);
Dim DimMul(const Dim& a, const Dim& b);
// Expressions are small: at most kMaxDimTerms operands and operators (the
// parser and loaders refuse larger ones; inference that would build one
// gives up on that dimension instead: DimTooLarge).
inline constexpr int kMaxDimTerms = 255;
bool DimTooLarge(const Dim& d);
// Reads a dimension's text (an integer, a name or an expression, as the
// loaders store it) in canonical form; an error for anything else.
StatusOr<Dim> ParseDimText(std::string_view text);
// A stored symbolic dimension's text as a Dim: a name (letters, digits,
// `_`, not starting with a digit) is the name; anything else is read by
// ParseDimText (an expression in canonical form, digits a constant; an
// error for what the text format cannot spell).
StatusOr<Dim> LoadDimText(std::string_view text);

}  // namespace plir

#endif  // PLIR_IR_DIM_H_
