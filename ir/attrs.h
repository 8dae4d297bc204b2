// Call and function attributes: a sorted map from keys to values.
//
// Values are integers, floats, booleans, strings, types, lists of values
// (`padding=[1, 1, 1, 1]`, `names=["a", "b"]`, `[[1, 2], [3]]`) and maps from
// string keys to values (`config={mode = "fast", sizes = [1, 2]}`), nested
// up to kMaxAttrDepth levels.
#ifndef PLIR_IR_ATTRS_H_
#define PLIR_IR_ATTRS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/status.h"
#include "ir/symbol.h"
#include "ir/type.h"

namespace plir {

class AttrValue {
 public:
  // The numbering is part of the binary format (kMap was added last).
  enum class Kind : uint8_t { kInt, kFloat, kBool, kString, kType, kList, kMap };
  using MapEntry = std::pair<std::string, AttrValue>;
  // Lists and maps nest at most this deep (the parser and the loaders
  // reject deeper values).
  static constexpr int kMaxAttrDepth = 32;

  static AttrValue Int(int64_t v);
  static AttrValue Float(double v);
  static AttrValue Bool(bool v);
  static AttrValue String(std::string v);
  static AttrValue OfType(Type t);
  static AttrValue List(std::vector<AttrValue> items);
  // A map, sorted by key. Fails (InvalidArgument naming the key) if a key
  // appears twice.
  static StatusOr<AttrValue> Map(std::vector<MapEntry> entries);

  Kind kind() const { return kind_; }
  int64_t as_int() const { return i_; }
  double as_float() const { return f_; }
  bool as_bool() const { return i_ != 0; }
  const std::string& as_string() const { return s_; }
  const Type& as_type() const { return t_; }
  const std::vector<AttrValue>& as_list() const;
  const std::vector<MapEntry>& as_map() const;  // sorted by key
  // The value of `key` in a map, or nullptr (also when this is not a map).
  const AttrValue* Find(std::string_view key) const;
  // Lists and maps nested inside this value, itself included (a scalar: 0).
  int Depth() const;

  // Returns the list's elements as ints iff this is a list of ints.
  bool GetIntList(std::vector<int64_t>* out) const;
  // Returns the list's elements iff this is a list of strings.
  bool GetStringList(std::vector<std::string>* out) const;

  // Structural equality (types compared with TypeEqual).
  bool Equals(const AttrValue& o) const;
  void AppendTo(std::string* out) const;  // text-format spelling

 private:
  Kind kind_ = Kind::kInt;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  Type t_;
  std::shared_ptr<const std::vector<AttrValue>> list_;
  std::shared_ptr<const std::vector<MapEntry>> map_;
};

// An immutable attribute map, sorted by key (attributes print in key order).
class Attrs {
 public:
  using Entry = std::pair<Symbol, AttrValue>;
  Attrs() = default;
  // Fails (InvalidArgument naming the key) if a key appears twice.
  static StatusOr<Attrs> Make(std::vector<Entry> entries);

  const std::vector<Entry>& entries() const;
  bool empty() const { return !data_ || data_->entries.empty(); }
  size_t size() const { return data_ ? data_->entries.size() : 0; }
  // Returns the value for `key`, or nullptr.
  const AttrValue* Get(std::string_view key) const;
  // Returns a copy with `key` set to `value`.
  Attrs With(Symbol key, AttrValue value) const;

  bool Equals(const Attrs& o) const;
  // The shared entry list (null when empty): two Attrs with the same
  // identity hold the same entries (one list shared by several calls).
  const void* identity() const { return data_; }

 private:
  // One word: an intrusively counted, immutable entry list (null when
  // empty, as for most calls), so that a call node carries 8 bytes of
  // attributes, not a 16-byte shared_ptr.
  struct Data {
    mutable std::atomic<uint32_t> refs{1};
    std::vector<Entry> entries;
  };
  static void Release(const Data* d) {
    if (d && d->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete d;
  }
  const Data* data_ = nullptr;

 public:
  Attrs(const Attrs& o) : data_(o.data_) {
    if (data_) data_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  Attrs(Attrs&& o) noexcept : data_(o.data_) { o.data_ = nullptr; }
  Attrs& operator=(Attrs o) noexcept {
    std::swap(data_, o.data_);
    return *this;
  }
  ~Attrs() { Release(data_); }
};

// How control characters are escaped: `\xHH` (the text format) or
// `\u00HH` (JSON). Both escape `"`, `\`, newline, tab and carriage return.
enum class QuoteStyle { kText, kJson };
// Appends `s` as a quoted, escaped string literal.
void AppendQuoted(std::string_view s, std::string* out, QuoteStyle style = QuoteStyle::kText);
// True iff `s` can be written as a bare map key ([A-Za-z_][A-Za-z0-9_]*).
bool IsBareAttrKey(std::string_view s);
// Appends a float literal that reads back as the same double and always
// contains '.', 'e', or is inf/nan.
void AppendFloat(double v, std::string* out);

}  // namespace plir

#endif  // PLIR_IR_ATTRS_H_
