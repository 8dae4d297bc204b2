// Internal: an open-addressing hash map from node pointers to small values,
// for the traversals' variable tables. std::unordered_map allocates a node
// per entry; at a million variables that allocation dominated structural
// equality (bench/RESULTS.md).
#ifndef PLIR_IR_INTERNAL_POINTER_MAP_H_
#define PLIR_IR_INTERNAL_POINTER_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace plir::internal {

template <typename V>
class PointerMap {
 public:
  // Returns the value for `key`, or nullptr.
  const V* Find(const void* key) const {
    if (size_ == 0) return nullptr;
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }
  V* FindMutable(const void* key) { return const_cast<V*>(Find(key)); }
  // Sets `key` -> `value`, inserting or overwriting.
  void Set(const void* key, V value) {
    if (V* v = FindMutable(key))
      *v = value;
    else
      Insert(key, value);
  }
  // Reserves room for `n` entries without rehashing.
  void Reserve(size_t n) {
    size_t want = 64;
    while (want * 3 < n * 4) want *= 2;
    if (want > slots_.size()) Rehash(want);
  }
  // Inserts `key` -> `value` unless present; returns true iff inserted.
  bool Insert(const void* key, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return false;
      if (slots_[i].key == nullptr) {
        slots_[i] = {key, value};
        ++size_;
        return true;
      }
    }
  }
  size_t size() const { return size_; }

 private:
  struct Entry {
    const void* key = nullptr;
    V value{};
  };
  size_t Slot(const void* key) const {
    uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }
  void Grow() { Rehash(slots_.empty() ? 64 : slots_.size() * 2); }
  void Rehash(size_t n) {
    std::vector<Entry> old;
    old.swap(slots_);
    slots_.resize(n);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Entry& e : old)
      if (e.key) Insert(e.key, e.value);
  }
  std::vector<Entry> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_POINTER_MAP_H_
