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
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "ir/internal/pointer_map.h"
#include "ir/support/huge_pages.h"

namespace plir::internal {

// Values in insertion order, in chunks that double in size (the first
// holds 64): growing never moves a value, so pointers to values stay valid,
// as in a std::deque. A deque's chunks are 512-byte blocks: at a million
// values of 24 bytes, the first write to each 4 KiB of them was a page
// fault inside malloc, about 5,700 on the parser's thread for one function
// of 1M bindings (perf record -e page-faults). These chunks grow into
// blocks of megabytes, which plir-opt maps with huge pages.
template <typename V>
class ChunkedStore {
 public:
  ChunkedStore() = default;
  ChunkedStore(const ChunkedStore&) = delete;
  ChunkedStore& operator=(const ChunkedStore&) = delete;
  ~ChunkedStore() { clear(); }

  size_t size() const { return size_; }
  V& operator[](size_t i) {
    const auto [c, at] = Locate(i);
    return chunks_[c][at];
  }
  V& back() { return (*this)[size_ - 1]; }
  void push_back(V value) {
    const auto [c, at] = Locate(size_);
    if (c == chunks_.size()) chunks_.push_back(std::allocator<V>().allocate(kFirst << c));
    std::construct_at(chunks_[c] + at, std::move(value));
    ++size_;
  }
  void clear() {
    for (size_t i = 0; i < size_; ++i) std::destroy_at(&(*this)[i]);
    for (size_t c = 0; c < chunks_.size(); ++c)
      std::allocator<V>().deallocate(chunks_[c], kFirst << c);
    chunks_.clear();
    size_ = 0;
  }

 private:
  static constexpr size_t kFirst = 64;
  // Chunk c holds kFirst << c values, after kFirst * (2^c - 1) of them.
  static std::pair<size_t, size_t> Locate(size_t i) {
    const size_t c = static_cast<size_t>(std::bit_width(i / kFirst + 1)) - 1;
    return {c, i - kFirst * ((size_t{1} << c) - 1)};
  }
  std::vector<V*> chunks_;
  size_t size_ = 0;
};

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
        if (V* v = p->Get(n.number(), store_)) return v;
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
      p->Reserve(num);
      if (V* v = p->Get(num, store_)) return {v, false};
      // A name that went to the map before its slot existed stays there.
      if (V* old = sparse_.Find(Key(n))) return {old, false};
      ++size_;
      return {p->Set(num, std::move(value), store_), true};
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
    store_.clear();
    size_ = 0;
  }

 private:
  // Values larger than a slot index live in one store shared by all
  // prefixes, in insertion order, and a prefix's array holds 1 + the
  // value's position there (0: absent). Numbers are shared between prefixes
  // ("%v1", "%d2", "%v3"), so each prefix's array spans the function's
  // largest number while holding a fraction of its names: at a million
  // bindings, arrays of 32-byte values indexed by number were the parser's
  // largest allocation (122 MB of a 257 MB peak); 4-byte slots over a dense
  // store are a third of that. Smaller values stay in the array itself.
  static constexpr bool kInline = sizeof(V) <= sizeof(uint32_t);

  // Growing never copies the values already stored, and pointers to them
  // stay valid.
  using Store = ChunkedStore<V>;

  struct PrefixSlot {
    const void* prefix;
    std::vector<uint8_t> present;  // kInline only
    std::vector<std::conditional_t<kInline, V, uint32_t>> slots;

    // Makes room for number `num` (doubling, so inserting in order is
    // linear).
    void Reserve(uint32_t num) {
      if (num < slots.size()) return;
      size_t size = std::max<size_t>(size_t{num} + 1, slots.size() * 2);
      // Past 256 KiB, at least 2 MiB: blocks that size get huge pages in
      // plir-opt (cli/huge_page_new.cc); the doublings between 256 KiB and
      // 2 MiB faulted in 4 KiB pages, several thousand page faults on the
      // parser's and the printer's threads for one function of 1M bindings.
      using Slot = typename decltype(slots)::value_type;
      constexpr size_t kLarge = (size_t{256} << 10) / sizeof(Slot);
      constexpr size_t kHuge = kHugePageBytes / sizeof(Slot);
      if (size > kLarge) size = std::max(size, kHuge);
      slots.resize(size);
      if constexpr (kInline) present.resize(size, 0);
    }
    V* Get(uint32_t num, Store& store) {
      if (num >= slots.size()) return nullptr;
      if constexpr (kInline) {
        return present[num] ? &slots[num] : nullptr;
      } else {
        return slots[num] ? &store[slots[num] - 1] : nullptr;
      }
    }
    // Stores `value` for `num`, absent and within Reserve's room.
    V* Set(uint32_t num, V value, Store& store) {
      if constexpr (kInline) {
        present[num] = 1;
        slots[num] = std::move(value);
        return &slots[num];
      } else {
        store.push_back(std::move(value));
        slots[num] = static_cast<uint32_t>(store.size());
        return &store.back();
      }
    }
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
  Store store_;
  size_t size_ = 0;
};

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_NAME_TABLE_H_
