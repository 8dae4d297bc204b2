// A map from variables to values for one function, without a heap node per
// entry: a dense array indexed by VarNode::index(), checked on every access
// (the slot must hold the very variable), and an open-addressing table for
// the variables whose index is missing, stale or out of range.
//
// Plugins see only the public SDK headers, so this is a plugin-local copy of
// the idea of ir/internal/pointer_map.h; canonicalize_bindings has the same
// file (in its own namespace: both plugins load into one process).
#ifndef PLIR_PLUGINS_CSE_VAR_MAP_H_
#define PLIR_PLUGINS_CSE_VAR_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/expr.h"

namespace plir::cse_local {

template <typename V>
class VarMap {
 public:
  // `index_bound`: indices below it go to the dense array (the number of
  // variables the function defines is a good bound; more costs memory).
  explicit VarMap(size_t index_bound = 0) : bound_(index_bound) {}

  bool empty() const { return size_ == 0; }

  // Returns the value for `v`, or nullptr.
  const V* Find(const VarNode* v) const {
    if (size_ == 0) return nullptr;
    uint32_t i = v->index();
    if (i < dense_.size() && dense_[i].key == v) return &dense_[i].value;
    if (overflow_size_ == 0) return nullptr;
    for (size_t s = Slot(v);; s = (s + 1) & mask_) {
      if (overflow_[s].key == v) return &overflow_[s].value;
      if (overflow_[s].key == nullptr) return nullptr;
    }
  }

  V* FindMutable(const VarNode* v) { return const_cast<V*>(Find(v)); }

  // Sets `v` -> `value`, inserting or overwriting.
  void Set(const VarNode* v, V value) {
    uint32_t i = v->index();
    if (i < bound_) {
      if (dense_.empty()) dense_.resize(bound_);
      Entry& e = dense_[i];
      if (e.key == v) {
        e.value = std::move(value);
        return;
      }
      if (e.key == nullptr) {
        e.key = v;
        e.value = std::move(value);
        ++size_;
        return;
      }
      // Another variable holds this index (a stale index): use the table.
    }
    if ((overflow_size_ + 1) * 4 > overflow_.size() * 3) Grow();
    for (size_t s = Slot(v);; s = (s + 1) & mask_) {
      Entry& e = overflow_[s];
      if (e.key == v) {
        e.value = std::move(value);
        return;
      }
      if (e.key == nullptr) {
        e.key = v;
        e.value = std::move(value);
        ++overflow_size_;
        ++size_;
        return;
      }
    }
  }

 private:
  struct Entry {
    const VarNode* key = nullptr;
    V value{};
  };
  size_t Slot(const void* key) const {
    uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }
  void Grow() {
    std::vector<Entry> old;
    old.swap(overflow_);
    overflow_.resize(old.empty() ? 64 : old.size() * 2);
    mask_ = overflow_.size() - 1;
    for (Entry& e : old) {
      if (!e.key) continue;
      size_t s = Slot(e.key);
      while (overflow_[s].key) s = (s + 1) & mask_;
      overflow_[s] = std::move(e);
    }
  }

  size_t bound_;
  size_t size_ = 0;
  std::vector<Entry> dense_;
  std::vector<Entry> overflow_;
  size_t overflow_size_ = 0;
  size_t mask_ = 0;
};

}  // namespace plir::cse_local

#endif  // PLIR_PLUGINS_CSE_VAR_MAP_H_
