// Internal: an open-addressing hash map keyed by string views, and a chunked
// arena that gives the keys stable storage. The parser's scopes and the
// printer's name tables used node-based std::unordered_map<std::string, ...>:
// a malloc per entry and a std::string per key, most of a 100k-binding
// function's parse and print time in perf (bench/RESULTS.md).
#ifndef PLIR_IR_INTERNAL_STRING_MAP_H_
#define PLIR_IR_INTERNAL_STRING_MAP_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace plir::internal {

// FNV-1a over the bytes, then a multiplicative mix of the result.
inline uint64_t HashBytes(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

// Copies strings into large chunks; a returned view stays valid as long as
// the arena. Never frees one string alone.
class StringArena {
 public:
  std::string_view Store(std::string_view s) {
    if (s.size() > left_) {
      size_t n = s.size() > kChunk / 4 ? s.size() : kChunk;
      chunks_.push_back(std::make_unique<char[]>(n));
      next_ = chunks_.back().get();
      left_ = n;
    }
    if (!s.empty()) std::memcpy(next_, s.data(), s.size());
    std::string_view out(next_, s.size());
    next_ += s.size();
    left_ -= s.size();
    return out;
  }
  void Clear() {
    if (chunks_.size() > 1) chunks_.erase(chunks_.begin(), chunks_.end() - 1);
    if (!chunks_.empty()) {
      next_ = chunks_.back().get();
      left_ = kChunk;
    }
  }

 private:
  static constexpr size_t kChunk = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> chunks_;
  char* next_ = nullptr;
  size_t left_ = 0;
};

// Keys are views: the caller keeps their bytes alive (in the input buffer, a
// StringArena, or a node) for as long as the entry exists.
template <typename V>
class StringMap {
 public:
  // Returns the value for `key`, or nullptr.
  V* Find(std::string_view key) {
    if (size_ == 0) return nullptr;
    uint64_t h = HashBytes(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Entry& e = slots_[i];
      if (!e.used) return nullptr;
      if (e.hash == h && e.key == key) return &e.value;
    }
  }
  // Inserts `key` -> `value` unless present. Returns the entry's value and
  // whether it was inserted.
  std::pair<V*, bool> Insert(std::string_view key, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 64 : slots_.size() * 2);
    uint64_t h = HashBytes(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Entry& e = slots_[i];
      if (!e.used) {
        e = Entry{key, h, std::move(value), true};
        ++size_;
        return {&e.value, true};
      }
      if (e.hash == h && e.key == key) return {&e.value, false};
    }
  }
  size_t size() const { return size_; }
  // Empties the map; a table far larger than its contents is shrunk, so
  // clearing per function stays proportional to that function.
  void Clear() {
    if (size_ == 0) return;
    if (slots_.size() > 256 && slots_.size() > size_ * 8) {
      slots_.assign(64, Entry{});
      mask_ = 63;
    } else {
      for (Entry& e : slots_) e.used = false;
    }
    size_ = 0;
  }
  void Reserve(size_t n) {
    size_t want = 64;
    while (want * 3 < n * 4) want *= 2;
    if (want > slots_.size()) Rehash(want);
  }

 private:
  struct Entry {
    std::string_view key;
    uint64_t hash = 0;
    V value{};
    bool used = false;
  };
  void Rehash(size_t n) {
    std::vector<Entry> old;
    old.swap(slots_);
    slots_.resize(n);
    mask_ = n - 1;
    for (Entry& e : old) {
      if (!e.used) continue;
      for (size_t i = e.hash & mask_;; i = (i + 1) & mask_) {
        if (!slots_[i].used) {
          slots_[i] = std::move(e);
          break;
        }
      }
    }
  }
  std::vector<Entry> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_STRING_MAP_H_
