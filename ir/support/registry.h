// The one registry shape behind the op, pass and kernel registries: names
// to immutable entries, safe to read from many threads while plugins
// register more. Each registry keeps its own checks and messages (what an
// entry must have, how a duplicate is reported); this holds the table.
#ifndef PLIR_IR_SUPPORT_REGISTRY_H_
#define PLIR_IR_SUPPORT_REGISTRY_H_

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/support/closest_names.h"

namespace plir {

// `Handle` is a shared, immutable entry (a std::shared_ptr<const T>, or a
// node reference): default-constructed it is null, and it converts to bool.
template <typename Handle>
class Registry {
 public:
  // Adds `entry` under `name` if the name is free. Returns null if it was
  // added, else the entry that holds the name (for the caller's message).
  Handle Insert(std::string name, Handle entry) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto [it, added] = entries_.try_emplace(std::move(name), std::move(entry));
    return added ? Handle() : it->second;
  }
  // The entry named `name`, or null.
  Handle Lookup(std::string_view name) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = entries_.find(std::string(name));
    return it == entries_.end() ? Handle() : it->second;
  }
  // Every name, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      names.reserve(entries_.size());
      for (const auto& [n, e] : entries_) names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  // Up to `max` names closest to `name` ("did you mean").
  std::vector<std::string> Suggest(std::string_view name, size_t max = 3) const {
    return ClosestNames(name, Names(), max);
  }

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Handle> entries_;
};

}  // namespace plir

#endif  // PLIR_IR_SUPPORT_REGISTRY_H_
