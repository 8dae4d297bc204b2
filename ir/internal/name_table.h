// Internal: tables keyed by variable, and by variable name, laid out so that
// the common case indexes an array instead of probing a hash table.
//
// At a million variables in one function, every hash table probe is a cache
// miss; the parser's name scopes, the printer's name tables and the
// verifier's states were most of a large function's round trip. Variables
// carry a dense index in their function, and generated names are a prefix
// plus a number ("v123"), so both map to array slots in definition order.
#ifndef PLIR_IR_INTERNAL_NAME_TABLE_H_
#define PLIR_IR_INTERNAL_NAME_TABLE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "ir/internal/pointer_map.h"

namespace plir::internal {

// Maps names (NameHints) to V. For each prefix, names whose number is small
// live in an array indexed by the number; names without a number, or with a
// large one, in a hash map keyed by (prefix, number).
template <typename V>
class NameTable {
 public:
  // Returns the value for `n`, or nullptr. Valid until the next Insert.
  V* Find(const NameHint& n) {
    if (n.number() != NameHint::kNoNumber) {
      if (PrefixSlot* p = FindPrefix(n.prefix().ptr())) {
        if (n.number() < p->present.size() && p->present[n.number()]) return &p->values[n.number()];
      }
    }
    return sparse_.Find(Key(n));
  }
  // Inserts `n` -> `value` unless present. Returns the entry's value (valid
  // until the next Insert) and whether it was inserted.
  std::pair<V*, bool> Insert(const NameHint& n, V value) {
    uint32_t num = n.number();
    if (num != NameHint::kNoNumber && num < DenseLimit()) {
      PrefixSlot* p = FindPrefix(n.prefix().ptr());
      if (!p) p = AddPrefix(n.prefix().ptr());
      if (num >= p->present.size()) {
        size_t size = std::max<size_t>(num + 1, p->present.size() * 2);
        p->present.resize(size, 0);
        p->values.resize(size);
      }
      if (p->present[num]) return {&p->values[num], false};
      // A name that went to the map before its slot existed stays there.
      if (V* old = sparse_.Find(Key(n))) return {old, false};
      p->present[num] = 1;
      p->values[num] = std::move(value);
      ++size_;
      return {&p->values[num], true};
    }
    auto r = sparse_.Insert(Key(n), std::move(value));
    if (r.second) ++size_;
    return r;
  }
  size_t size() const { return size_; }
  void Clear() {
    prefixes_.clear();
    prefix_index_ = PointerMap<uint32_t>();
    last_ = nullptr;
    sparse_.Clear();
    size_ = 0;
  }

 private:
  struct PrefixSlot {
    const void* prefix;
    std::vector<uint8_t> present;
    std::vector<V> values;
  };
  struct PairKey {
    const void* prefix = nullptr;
    uint32_t number = 0;
    friend bool operator==(const PairKey& a, const PairKey& b) {
      return a.prefix == b.prefix && a.number == b.number;
    }
  };
  static PairKey Key(const NameHint& n) { return PairKey{n.prefix().ptr(), n.number()}; }

  // Open addressing on (prefix, number).
  class PairMap {
   public:
    V* Find(const PairKey& k) {
      if (size_ == 0) return nullptr;
      for (size_t i = Hash(k) & mask_;; i = (i + 1) & mask_) {
        if (!slots_[i].used) return nullptr;
        if (slots_[i].key == k) return &slots_[i].value;
      }
    }
    std::pair<V*, bool> Insert(const PairKey& k, V value) {
      if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 64 : slots_.size() * 2);
      for (size_t i = Hash(k) & mask_;; i = (i + 1) & mask_) {
        Entry& e = slots_[i];
        if (!e.used) {
          e.key = k;
          e.value = std::move(value);
          e.used = true;
          ++size_;
          return {&e.value, true};
        }
        if (e.key == k) return {&e.value, false};
      }
    }
    void Clear() {
      slots_.clear();
      mask_ = 0;
      size_ = 0;
    }

   private:
    struct Entry {
      PairKey key;
      V value{};
      bool used = false;
    };
    static size_t Hash(const PairKey& k) {
      uint64_t h = (reinterpret_cast<uintptr_t>(k.prefix) ^ (uint64_t{k.number} << 32)) *
                   0x9e3779b97f4a7c15ull;
      return static_cast<size_t>(h >> 20);
    }
    void Rehash(size_t n) {
      std::vector<Entry> old;
      old.swap(slots_);
      slots_.resize(n);
      mask_ = n - 1;
      for (Entry& e : old) {
        if (!e.used) continue;
        for (size_t i = Hash(e.key) & mask_;; i = (i + 1) & mask_) {
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

  size_t DenseLimit() const { return std::max<size_t>(size_t{1} << 16, size_ * 4); }
  PrefixSlot* FindPrefix(const void* prefix) {
    if (last_ && last_->prefix == prefix) return last_;
    const uint32_t* i = prefix_index_.Find(prefix);
    if (!i) return nullptr;
    last_ = &prefixes_[*i];
    return last_;
  }
  PrefixSlot* AddPrefix(const void* prefix) {
    prefix_index_.Insert(prefix, static_cast<uint32_t>(prefixes_.size()));
    prefixes_.push_back(PrefixSlot{prefix, {}, {}});
    last_ = &prefixes_.back();  // the vector may have moved: re-point
    return last_;
  }

  std::vector<PrefixSlot> prefixes_;
  PointerMap<uint32_t> prefix_index_;
  PrefixSlot* last_ = nullptr;
  PairMap sparse_;
  size_t size_ = 0;
};

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_NAME_TABLE_H_
