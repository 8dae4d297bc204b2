// Module: an ordered map from global names to items (functions and extern
// kernels), held by value.
//
// A Module is a handle to immutable, shared contents: copying one is O(1)
// (one reference-count increment) and never copies IR. Updates return a new
// Module that shares every item they did not touch, in O(log F) for F items:
// the item list and the name index are persistent tries.
#ifndef PLIR_IR_MODULE_H_
#define PLIR_IR_MODULE_H_

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expr.h"
#include "ir/status.h"

namespace plir {

namespace internal {
struct ItemTrieNode;
struct NameIndexNode;
}  // namespace internal

// The items of a module, in order: a persistent vector (a 32-way trie with
// path copying), so that replacing or appending one item costs O(log F) in
// the number of items F and shares everything else. Reads are O(log32 F);
// iteration is amortized O(1) per item. Converts to a std::vector<Item>.
class ItemList {
 public:
  ItemList() = default;
  explicit ItemList(const std::vector<Item>& items);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Item& operator[](size_t i) const;
  const Item& front() const { return (*this)[0]; }
  const Item& back() const { return (*this)[size_ - 1]; }

  // Returns a list with item `i` replaced (i < size()).
  ItemList With(size_t i, Item item) const;
  // Returns a list with `item` appended.
  ItemList Append(Item item) const;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Item;
    using difference_type = std::ptrdiff_t;
    using pointer = const Item*;
    using reference = const Item&;
    const_iterator() = default;
    reference operator*() const { return leaf_[i_ & 31]; }
    pointer operator->() const { return &leaf_[i_ & 31]; }
    const_iterator& operator++();
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.i_ == b.i_;
    }
    friend bool operator!=(const const_iterator& a, const const_iterator& b) {
      return a.i_ != b.i_;
    }

   private:
    friend class ItemList;
    const_iterator(const ItemList* list, size_t i);
    void Load();
    const ItemList* list_ = nullptr;
    size_t i_ = 0;
    const Item* leaf_ = nullptr;  // the slots of i_'s leaf
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

  std::vector<Item> ToVector() const { return std::vector<Item>(begin(), end()); }
  operator std::vector<Item>() const { return ToVector(); }  // NOLINT: implicit

 private:
  std::shared_ptr<const internal::ItemTrieNode> root_;
  size_t size_ = 0;
  int shift_ = 0;  // 5 * (levels above the leaves)
};

class Module {
 public:
  Module();  // the empty module

  // Fails (AlreadyExists) if two items share a name.
  static StatusOr<Module> Make(std::vector<Item> items);

  // Items in module order.
  const ItemList& items() const { return data_->items; }
  size_t size() const { return data_->items.size(); }
  bool empty() const { return data_->items.empty(); }

  // Returns the item named `name` (without '@'), or null. O(log F).
  Item Lookup(std::string_view name) const;
  Function LookupFunction(std::string_view name) const;  // null if absent or extern
  bool Contains(std::string_view name) const { return static_cast<bool>(Lookup(name)); }

  // Returns a module with `item` added at the end, or replacing the item of
  // the same name in place. Every other item is shared. O(log F).
  Module WithItem(Item item) const;
  // Returns a module without the item `name` (the same module if absent).
  // O(F): later items move up one place.
  Module Without(std::string_view name) const;

  // True iff both handles refer to the same contents (no comparison of IR).
  bool same_as(const Module& o) const { return data_ == o.data_; }

 private:
  struct Data {
    ItemList items;
    // A persistent hash trie from name hashes to positions.
    std::shared_ptr<const internal::NameIndexNode> index;
  };
  explicit Module(std::shared_ptr<const Data> d) : data_(std::move(d)) {}
  // Returns the position of the item named `name`, or SIZE_MAX.
  size_t Find(std::string_view name) const;
  std::shared_ptr<const Data> data_;
};

}  // namespace plir

#endif  // PLIR_IR_MODULE_H_
