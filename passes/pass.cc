#include "passes/pass.h"

#include "ir/op.h"  // ClosestNames

namespace plir {

const char* OptionTypeName(OptionType t) {
  switch (t) {
    case OptionType::kInt:
      return "int";
    case OptionType::kFloat:
      return "float";
    case OptionType::kBool:
      return "bool";
    case OptionType::kString:
      return "string";
    case OptionType::kIntList:
      return "list of ints";
    case OptionType::kFloatList:
      return "list of floats";
    case OptionType::kBoolList:
      return "list of bools";
    case OptionType::kStringList:
      return "list of strings";
  }
  return "?";
}

double PassOptions::GetFloat(const std::string& name) const {
  const AttrValue& v = values_.at(name);
  return v.kind() == AttrValue::Kind::kInt ? static_cast<double>(v.as_int()) : v.as_float();
}

std::vector<std::string> PassOptions::GetStringList(const std::string& name) const {
  std::vector<std::string> out;
  for (const AttrValue& v : values_.at(name).as_list()) out.push_back(v.as_string());
  return out;
}

std::vector<int64_t> PassOptions::GetIntList(const std::string& name) const {
  std::vector<int64_t> out;
  for (const AttrValue& v : values_.at(name).as_list()) out.push_back(v.as_int());
  return out;
}

const AttrValue* PassOptions::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

bool PassOptions::operator==(const PassOptions& o) const {
  if (values_.size() != o.values_.size()) return false;
  for (auto a = values_.begin(), b = o.values_.begin(); a != values_.end(); ++a, ++b)
    if (a->first != b->first || !a->second.Equals(b->second)) return false;
  return true;
}

const OptionSpec* PassInfo::FindOption(const std::string& n) const {
  for (const OptionSpec& o : options)
    if (o.name == n) return &o;
  return nullptr;
}

namespace {
// Converts `v` to `type` if it fits (ints widen to floats); else nullopt.
std::optional<AttrValue> Coerce(const AttrValue& v, OptionType type) {
  using K = AttrValue::Kind;
  auto scalar = [](const AttrValue& x, K want) -> std::optional<AttrValue> {
    if (x.kind() == want) return x;
    if (want == K::kFloat && x.kind() == K::kInt)
      return AttrValue::Float(static_cast<double>(x.as_int()));
    return std::nullopt;
  };
  auto list = [&](K want) -> std::optional<AttrValue> {
    if (v.kind() != K::kList) return std::nullopt;
    std::vector<AttrValue> items;
    for (const AttrValue& x : v.as_list()) {
      auto c = scalar(x, want);
      if (!c) return std::nullopt;
      items.push_back(*c);
    }
    return AttrValue::List(std::move(items));
  };
  switch (type) {
    case OptionType::kInt:
      return scalar(v, K::kInt);
    case OptionType::kFloat:
      return scalar(v, K::kFloat);
    case OptionType::kBool:
      return scalar(v, K::kBool);
    case OptionType::kString:
      return scalar(v, K::kString);
    case OptionType::kIntList:
      return list(K::kInt);
    case OptionType::kFloatList:
      return list(K::kFloat);
    case OptionType::kBoolList:
      return list(K::kBool);
    case OptionType::kStringList:
      return list(K::kString);
  }
  return std::nullopt;
}
}  // namespace

StatusOr<PassOptions> PassInfo::ResolveOptions(
    const std::map<std::string, AttrValue>& given) const {
  std::map<std::string, AttrValue> values;
  for (const auto& [key, value] : given) {
    const OptionSpec* spec = FindOption(key);
    if (!spec) {
      std::vector<std::string> names;
      for (const OptionSpec& o : options) names.push_back(o.name);
      std::string msg = "pass " + name + " has no option '" + key + "'";
      auto close = ClosestNames(key, names, 1);
      if (!close.empty())
        msg += "; did you mean '" + close[0] + "'?";
      else if (names.empty())
        msg += " (it takes no options)";
      return InvalidArgument(msg);
    }
    auto v = Coerce(value, spec->type);
    if (!v) {
      std::string got;
      value.AppendTo(&got);
      return InvalidArgument("option '" + key + "' of " + name + " must be " +
                             OptionTypeName(spec->type) + ", got " + got);
    }
    if (spec->min || spec->max) {
      std::vector<int64_t> ints;
      if (spec->type == OptionType::kInt) ints.push_back(v->as_int());
      if (spec->type == OptionType::kIntList)
        for (const AttrValue& item : v->as_list()) ints.push_back(item.as_int());
      for (int64_t i : ints) {
        if ((spec->min && i < *spec->min) || (spec->max && i > *spec->max)) {
          std::string range = spec->min && spec->max ? "from " + std::to_string(*spec->min) +
                                                           " to " + std::to_string(*spec->max)
                              : spec->min ? "at least " + std::to_string(*spec->min)
                                          : "at most " + std::to_string(*spec->max);
          return InvalidArgument("option '" + key + "' of " + name + " must be " + range +
                                 ", got " + std::to_string(i));
        }
      }
    }
    values.emplace(key, *v);
  }
  for (const OptionSpec& o : options)
    if (!values.count(o.name)) values.emplace(o.name, o.default_value);
  return PassOptions(std::move(values));
}

bool PassContext::ShouldRun(const std::string& pass, int min_opt_level) const {
  if (required.count(pass)) return true;
  if (disabled.count(pass)) return false;
  return opt_level >= min_opt_level;
}

namespace internal {
// Set while a function pass runs one function: its warnings are collected
// here and flushed in function order (not in the order threads finish).
thread_local std::vector<std::pair<std::string, std::string>>* t_warning_sink = nullptr;
void SetWarningSink(std::vector<std::pair<std::string, std::string>>* sink) {
  t_warning_sink = sink;
}
}  // namespace internal

void PassContext::Warn(const std::string& pass, const std::string& message) {
  if (internal::t_warning_sink) {
    internal::t_warning_sink->emplace_back(pass, message);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  warnings_.push_back(pass + ": " + message);
}

std::vector<std::string> PassContext::TakeWarnings() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(warnings_);
}

}  // namespace plir
