#include "ir/attrs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace plir {

AttrValue AttrValue::Int(int64_t v) { AttrValue a; a.kind_ = Kind::kInt; a.i_ = v; return a; }
AttrValue AttrValue::Float(double v) { AttrValue a; a.kind_ = Kind::kFloat; a.f_ = v; return a; }
AttrValue AttrValue::Bool(bool v) { AttrValue a; a.kind_ = Kind::kBool; a.i_ = v; return a; }
AttrValue AttrValue::String(std::string v) {
  AttrValue a; a.kind_ = Kind::kString; a.s_ = std::move(v); return a;
}
AttrValue AttrValue::OfType(Type t) { AttrValue a; a.kind_ = Kind::kType; a.t_ = std::move(t); return a; }
AttrValue AttrValue::List(std::vector<AttrValue> items) {
  AttrValue a;
  a.kind_ = Kind::kList;
  a.list_ = std::make_shared<const std::vector<AttrValue>>(std::move(items));
  return a;
}

const std::vector<AttrValue>& AttrValue::as_list() const {
  static const std::vector<AttrValue> kEmpty;
  return list_ ? *list_ : kEmpty;
}

bool AttrValue::GetIntList(std::vector<int64_t>* out) const {
  if (kind_ != Kind::kList) return false;
  out->clear();
  for (const AttrValue& v : as_list()) {
    if (v.kind() != Kind::kInt) return false;
    out->push_back(v.as_int());
  }
  return true;
}

bool AttrValue::Equals(const AttrValue& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kInt:
    case Kind::kBool:
      return i_ == o.i_;
    case Kind::kFloat:
      // Bitwise, so that NaN equals itself and -0.0 differs from 0.0.
      return std::memcmp(&f_, &o.f_, sizeof f_) == 0;
    case Kind::kString:
      return s_ == o.s_;
    case Kind::kType:
      return TypeEqual(t_, o.t_);
    case Kind::kList: {
      const auto& a = as_list();
      const auto& b = o.as_list();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!a[i].Equals(b[i])) return false;  // elements are never lists
      return true;
    }
  }
  return false;
}

void AppendQuoted(std::string_view s, std::string* out, QuoteStyle style) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\t': out->append("\\t"); break;
      case '\r': out->append("\\r"); break;
      default:
        if (c < 0x20 || (c == 0x7f && style == QuoteStyle::kText)) {
          static const char* kHex = "0123456789abcdef";
          out->append(style == QuoteStyle::kJson ? "\\u00" : "\\x");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

void AppendFloat(double v, std::string* out) {
  if (std::isnan(v)) { out->append("nan"); return; }
  if (std::isinf(v)) { out->append(v < 0 ? "-inf" : "inf"); return; }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string_view s(buf, res.ptr - buf);
  out->append(s);
  if (s.find_first_of(".e") == std::string_view::npos) out->append(".0");
}

void AttrValue::AppendTo(std::string* out) const {
  switch (kind_) {
    case Kind::kInt: out->append(std::to_string(i_)); break;
    case Kind::kFloat: AppendFloat(f_, out); break;
    case Kind::kBool: out->append(i_ ? "true" : "false"); break;
    case Kind::kString: AppendQuoted(s_, out); break;
    case Kind::kType: AppendType(t_, out); break;
    case Kind::kList: {
      out->push_back('[');
      const auto& l = as_list();
      for (size_t i = 0; i < l.size(); ++i) {
        if (i) out->append(", ");
        l[i].AppendTo(out);
      }
      out->push_back(']');
      break;
    }
  }
}

StatusOr<Attrs> Attrs::Make(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.first < b.first; });
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i].first == entries[i - 1].first)
      return InvalidArgument("attribute '" + entries[i].first.str() + "' given twice");
  Attrs a;
  if (!entries.empty()) {
    Data* d = new Data();
    d->entries = std::move(entries);
    a.data_ = d;
  }
  return a;
}

const std::vector<Attrs::Entry>& Attrs::entries() const {
  static const std::vector<Entry> kEmpty;
  return data_ ? data_->entries : kEmpty;
}

const AttrValue* Attrs::Get(std::string_view key) const {
  for (const Entry& e : entries())
    if (e.first.str() == key) return &e.second;
  return nullptr;
}

Attrs Attrs::With(Symbol key, AttrValue value) const {
  std::vector<Entry> e;
  for (const Entry& x : entries())
    if (x.first != key) e.push_back(x);
  e.emplace_back(key, std::move(value));
  return *Attrs::Make(std::move(e));
}

bool Attrs::Equals(const Attrs& o) const {
  const auto& a = entries();
  const auto& b = o.entries();
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || !a[i].second.Equals(b[i].second)) return false;
  return true;
}

}  // namespace plir
