#include "ir/symbol.h"

#include <memory>
#include <mutex>
#include <unordered_set>

namespace plir {
namespace {
struct Interner {
  std::mutex mu;
  // Node-based set: element addresses are stable.
  std::unordered_set<std::string> strings;
};
Interner& GetInterner() {
  static auto* interner = new Interner();  // never destroyed: symbols outlive main
  return *interner;
}
}  // namespace

const std::string* Symbol::Empty() {
  static const std::string* empty = new std::string();
  return empty;
}

Symbol::Symbol(std::string_view s) {
  if (s.empty()) return;
  Interner& in = GetInterner();
  std::lock_guard<std::mutex> lock(in.mu);
  s_ = &*in.strings.emplace(s).first;
}

}  // namespace plir
