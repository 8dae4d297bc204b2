// VarMap: a map from the variables of one function to values, laid out for
// speed: a dense array indexed by VarNode::index() (the variable's position
// in its function's definition order), checked on every access (the slot
// must hold the very variable), and an open-addressing table for variables
// whose index is missing (kNoIndex: made by a pass), stale (moved from
// another function) or already taken. Lookups in definition order walk the
// array sequentially; no heap node per entry.
//
// Clear() is O(1): entries carry the generation they were set in, so one map
// serves function after function. Pointers returned by Find/Insert stay
// valid until the next Insert, Set or Clear.
#ifndef PLIR_IR_VAR_MAP_H_
#define PLIR_IR_VAR_MAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/expr.h"

namespace plir {

template <typename V>
class VarMap {
 public:
  // `expected_vars`: about how many variables the function defines (the
  // dense array is sized for it up front; it grows past it as needed).
  explicit VarMap(size_t expected_vars = 0) : expected_(expected_vars) {}

  // Returns the value for `v`, or nullptr.
  const V* Find(const VarNode* v) const { return const_cast<VarMap*>(this)->Find(v); }
  V* Find(const VarNode* v) {
    if (size_ == 0) return nullptr;
    uint32_t i = v->index();
    if (i < dense_.size() && dense_[i].key == v && dense_[i].gen == gen_) return &dense_[i].value;
    if (sparse_size_ == 0) return nullptr;
    for (size_t s = Slot(v);; s = (s + 1) & mask_) {
      Entry& e = sparse_[s];
      if (e.key == v) return &e.value;
      if (e.key == nullptr) return nullptr;
    }
  }
  bool Contains(const VarNode* v) const { return Find(v) != nullptr; }

  // Inserts `v` -> `value` unless present. Returns the entry's value and
  // whether it was inserted.
  std::pair<V*, bool> Insert(const VarNode* v, V value) {
    uint32_t i = v->index();
    if (i != VarNode::kNoIndex && i < DenseLimit()) {
      if (i >= dense_.size())
        dense_.resize(std::max<size_t>({i + 1, dense_.size() * 2, expected_}));
      Entry& e = dense_[i];
      bool live = e.key != nullptr && e.gen == gen_;
      if (live && e.key == v) return {&e.value, false};
      if (!live) {  // free, or left from before the last Clear()
        if (V* found = FindSparse(v)) return {found, false};
        e = Entry{v, gen_, std::move(value)};
        ++size_;
        return {&e.value, true};
      }
      // Another variable holds this index: use the table.
    }
    if (V* found = FindSparse(v)) return {found, false};
    if ((sparse_size_ + 1) * 4 > sparse_.size() * 3)
      Rehash(sparse_.empty() ? 64 : sparse_.size() * 2);
    for (size_t s = Slot(v);; s = (s + 1) & mask_) {
      Entry& e = sparse_[s];
      if (e.key == nullptr) {
        e = Entry{v, gen_, std::move(value)};
        ++sparse_size_;
        ++size_;
        return {&e.value, true};
      }
    }
  }
  // Sets `v` -> `value`, inserting or overwriting.
  void Set(const VarNode* v, V value) {
    auto [entry, inserted] = Insert(v, value);
    if (!inserted) *entry = std::move(value);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Sizes the dense array for about `expected_vars` variables when it next
  // grows (a table grown by doubling holds the old array and the new one
  // at once).
  void Expect(size_t expected_vars) { expected_ = std::max(expected_, expected_vars); }
  // Empties the map in O(1) (the table of unindexed variables, usually
  // empty, is dropped).
  void Clear() {
    ++gen_;
    size_ = 0;
    if (sparse_size_) {
      sparse_.clear();
      sparse_size_ = 0;
      mask_ = 0;
    }
  }

 private:
  struct Entry {
    const VarNode* key = nullptr;
    uint32_t gen = 0;
    V value{};
  };
  // Indices are dense, so a function of n variables needs about n slots; a
  // far larger (stale) index goes to the table instead.
  size_t DenseLimit() const { return std::max<size_t>({expected_, size_t{1} << 16, size_ * 4}); }
  V* FindSparse(const VarNode* v) {
    if (sparse_size_ == 0) return nullptr;
    for (size_t s = Slot(v);; s = (s + 1) & mask_) {
      Entry& e = sparse_[s];
      if (e.key == v) return &e.value;
      if (e.key == nullptr) return nullptr;
    }
  }
  size_t Slot(const void* key) const {
    uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }
  void Rehash(size_t n) {
    std::vector<Entry> old;
    old.swap(sparse_);
    sparse_.resize(n);
    mask_ = n - 1;
    for (Entry& e : old) {
      if (!e.key) continue;
      size_t s = Slot(e.key);
      while (sparse_[s].key) s = (s + 1) & mask_;
      sparse_[s] = std::move(e);
    }
  }

  size_t expected_;
  uint32_t gen_ = 1;  // 0 marks a never-set slot
  size_t size_ = 0;
  std::vector<Entry> dense_;
  std::vector<Entry> sparse_;
  size_t sparse_size_ = 0;
  size_t mask_ = 0;
};

// A bound for the variable indices of `f` (parsed functions number their
// variables in text order, nested ones included): past the last top-level
// binding's index, within reason. A VarMap sized by it holds f's variables
// in its dense array; any beyond go to its hashed overflow.
inline size_t VarIndexBound(const FunctionNode& f) {
  size_t n = f.params().size();
  for (const Block& b : f.body()->blocks()) n += b->bindings().size();
  size_t bound = n;
  for (const Block& b : f.body()->blocks()) {
    if (b->bindings().empty()) continue;
    uint32_t i = b->bindings().back()->var()->index();
    if (i != VarNode::kNoIndex && i < 4 * n + 1024) bound = std::max<size_t>(bound, i + 1);
  }
  return bound + 64;
}

}  // namespace plir

#endif  // PLIR_IR_VAR_MAP_H_
