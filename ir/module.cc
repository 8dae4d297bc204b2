#include "ir/module.h"

namespace plir {

Module::Module() {
  static const std::shared_ptr<const Data>* empty = new std::shared_ptr<const Data>(
      std::make_shared<const Data>());
  data_ = *empty;
}

StatusOr<Module> Module::Make(std::vector<Item> items) {
  auto d = std::make_shared<Data>();
  d->index.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (!d->index.emplace(items[i]->name(), i).second)
      return AlreadyExists("global @" + items[i]->name() + " is defined twice");
  }
  d->items = std::move(items);
  return Module(std::shared_ptr<const Data>(std::move(d)));
}

Item Module::Lookup(std::string_view name) const {
  auto it = data_->index.find(std::string(name));
  return it == data_->index.end() ? Item() : data_->items[it->second];
}

Function Module::LookupFunction(std::string_view name) const {
  Item it = Lookup(name);
  if (!it || it->kind() != NodeKind::kFunction) return Function();
  return Downcast<FunctionNode>(it);
}

Module Module::WithItem(Item item) const {
  auto d = std::make_shared<Data>(*data_);
  auto it = d->index.find(item->name());
  if (it != d->index.end()) {
    d->items[it->second] = std::move(item);
  } else {
    d->index.emplace(item->name(), d->items.size());
    d->items.push_back(std::move(item));
  }
  return Module(std::shared_ptr<const Data>(std::move(d)));
}

Module Module::Without(std::string_view name) const {
  auto it = data_->index.find(std::string(name));
  if (it == data_->index.end()) return *this;
  auto d = std::make_shared<Data>();
  size_t drop = it->second;
  d->items.reserve(data_->items.size() - 1);
  for (size_t i = 0; i < data_->items.size(); ++i) {
    if (i == drop) continue;
    d->index.emplace(data_->items[i]->name(), d->items.size());
    d->items.push_back(data_->items[i]);
  }
  return Module(std::shared_ptr<const Data>(std::move(d)));
}

}  // namespace plir
