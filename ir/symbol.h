// Symbol: an interned, immutable string (op names, attribute keys, symbolic
// dimension names). Equal symbols are pointer-equal; interned strings live for
// the whole process.
#ifndef PLIR_IR_SYMBOL_H_
#define PLIR_IR_SYMBOL_H_

#include <functional>
#include <string>
#include <string_view>

namespace plir {

class Symbol {
 public:
  Symbol() = default;  // the empty symbol
  explicit Symbol(std::string_view s);

  const std::string& str() const { return *s_; }
  bool empty() const { return s_->empty(); }
  const std::string* ptr() const { return s_; }

  friend bool operator==(Symbol a, Symbol b) { return a.s_ == b.s_; }
  friend bool operator!=(Symbol a, Symbol b) { return a.s_ != b.s_; }
  // Orders by string content (deterministic across runs).
  friend bool operator<(Symbol a, Symbol b) { return *a.s_ < *b.s_; }

 private:
  static const std::string* Empty();
  const std::string* s_ = Empty();
};

}  // namespace plir

template <>
struct std::hash<plir::Symbol> {
  size_t operator()(plir::Symbol s) const { return std::hash<const void*>()(s.ptr()); }
};

#endif  // PLIR_IR_SYMBOL_H_
