#include "ir/attrs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

namespace plir {

AttrValue AttrValue::Int(int64_t v) {
  AttrValue a;
  a.kind_ = Kind::kInt;
  a.i_ = v;
  return a;
}
AttrValue AttrValue::Float(double v) {
  AttrValue a;
  a.kind_ = Kind::kFloat;
  a.f_ = v;
  return a;
}
AttrValue AttrValue::Bool(bool v) {
  AttrValue a;
  a.kind_ = Kind::kBool;
  a.i_ = v;
  return a;
}
AttrValue AttrValue::String(std::string v) {
  AttrValue a;
  a.kind_ = Kind::kString;
  a.s_ = std::move(v);
  return a;
}
AttrValue AttrValue::OfType(Type t) {
  AttrValue a;
  a.kind_ = Kind::kType;
  a.t_ = std::move(t);
  return a;
}
AttrValue AttrValue::List(std::vector<AttrValue> items) {
  AttrValue a;
  a.kind_ = Kind::kList;
  a.list_ = std::make_shared<const std::vector<AttrValue>>(std::move(items));
  return a;
}

StatusOr<AttrValue> AttrValue::Map(std::vector<MapEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const MapEntry& a, const MapEntry& b) { return a.first < b.first; });
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i].first == entries[i - 1].first)
      return InvalidArgument("map key '" + entries[i].first + "' given twice");
  AttrValue a;
  a.kind_ = Kind::kMap;
  a.map_ = std::make_shared<const std::vector<MapEntry>>(std::move(entries));
  return a;
}

const std::vector<AttrValue>& AttrValue::as_list() const {
  static const std::vector<AttrValue> kEmpty;
  return list_ ? *list_ : kEmpty;
}

const std::vector<AttrValue::MapEntry>& AttrValue::as_map() const {
  static const std::vector<MapEntry> kEmpty;
  return map_ ? *map_ : kEmpty;
}

const AttrValue* AttrValue::Find(std::string_view key) const {
  const auto& m = as_map();
  auto it = std::lower_bound(m.begin(), m.end(), key,
                             [](const MapEntry& e, std::string_view k) { return e.first < k; });
  return it != m.end() && it->first == key ? &it->second : nullptr;
}

int AttrValue::Depth() const {
  int d = 0;
  if (kind_ == Kind::kList)
    for (const AttrValue& e : as_list()) d = std::max(d, e.Depth());
  else if (kind_ == Kind::kMap)
    for (const MapEntry& e : as_map()) d = std::max(d, e.second.Depth());
  else
    return 0;
  return d + 1;
}

bool AttrValue::GetStringList(std::vector<std::string>* out) const {
  if (kind_ != Kind::kList) return false;
  out->clear();
  for (const AttrValue& v : as_list()) {
    if (v.kind() != Kind::kString) return false;
    out->push_back(v.as_string());
  }
  return true;
}

bool IsBareAttrKey(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  // Words the value grammar reads as literals.
  return s != "true" && s != "false" && s != "inf" && s != "nan";
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
        if (!a[i].Equals(b[i])) return false;
      return true;
    }
    case Kind::kMap: {
      const auto& a = as_map();
      const auto& b = o.as_map();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (a[i].first != b[i].first || !a[i].second.Equals(b[i].second)) return false;
      return true;
    }
  }
  return false;
}

void AppendQuoted(std::string_view s, std::string* out, QuoteStyle style) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
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
  if (std::isnan(v)) {
    out->append("nan");
    return;
  }
  if (std::isinf(v)) {
    out->append(v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string_view s(buf, res.ptr - buf);
  out->append(s);
  if (s.find_first_of(".e") == std::string_view::npos) out->append(".0");
}

void AttrValue::AppendTo(std::string* out) const {
  switch (kind_) {
    case Kind::kInt:
      out->append(std::to_string(i_));
      break;
    case Kind::kFloat:
      AppendFloat(f_, out);
      break;
    case Kind::kBool:
      out->append(i_ ? "true" : "false");
      break;
    case Kind::kString:
      AppendQuoted(s_, out);
      break;
    case Kind::kType:
      AppendType(t_, out);
      break;
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
    case Kind::kMap: {
      out->push_back('{');
      const auto& m = as_map();
      for (size_t i = 0; i < m.size(); ++i) {
        if (i) out->append(", ");
        if (IsBareAttrKey(m[i].first))
          out->append(m[i].first);
        else
          AppendQuoted(m[i].first, out);
        out->append(" = ");
        m[i].second.AppendTo(out);
      }
      out->push_back('}');
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
