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
  // A per-thread direct-mapped cache of recent symbols in front of the
  // locked table: every parsed variable interns its name's prefix, and the
  // same few prefixes come back (trivially destructible, so usable during
  // static destruction).
  constexpr size_t kCache = 256;
  thread_local const std::string* cache[kCache] = {};
  size_t h = s.size();
  for (unsigned char c : s.substr(0, 16)) h = h * 131 + c;
  const std::string*& slot = cache[h & (kCache - 1)];
  if (slot && *slot == s) {
    s_ = slot;
    return;
  }
  Interner& in = GetInterner();
  std::lock_guard<std::mutex> lock(in.mu);
  s_ = &*in.strings.emplace(s).first;
  slot = s_;
}

}  // namespace plir
