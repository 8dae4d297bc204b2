// Module: an ordered map from global names to items (functions and extern
// kernels), held by value.
//
// A Module is a handle to immutable, shared contents: copying one is O(1)
// (one reference-count increment) and never copies IR. Updates return a new
// Module that shares every item they did not touch.
#ifndef PLIR_IR_MODULE_H_
#define PLIR_IR_MODULE_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "ir/status.h"

namespace plir {

class Module {
 public:
  Module();  // the empty module

  // Fails (AlreadyExists) if two items share a name.
  static StatusOr<Module> Make(std::vector<Item> items);

  // Items in module order.
  const std::vector<Item>& items() const { return data_->items; }
  size_t size() const { return data_->items.size(); }
  bool empty() const { return data_->items.empty(); }

  // Returns the item named `name` (without '@'), or null.
  Item Lookup(std::string_view name) const;
  Function LookupFunction(std::string_view name) const;  // null if absent or extern
  bool Contains(std::string_view name) const { return static_cast<bool>(Lookup(name)); }

  // Returns a module with `item` added at the end, or replacing the item of
  // the same name in place. Every other item is shared.
  Module WithItem(Item item) const;
  // Returns a module without the item `name` (the same module if absent).
  Module Without(std::string_view name) const;

  // True iff both handles refer to the same contents (no comparison of IR).
  bool same_as(const Module& o) const { return data_ == o.data_; }

 private:
  struct Data {
    std::vector<Item> items;
    std::unordered_map<std::string, size_t> index;
  };
  explicit Module(std::shared_ptr<const Data> d) : data_(std::move(d)) {}
  std::shared_ptr<const Data> data_;
};

}  // namespace plir

#endif  // PLIR_IR_MODULE_H_
