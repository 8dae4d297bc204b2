#include "ir/module.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "ir/support/fnv.h"

namespace plir {
namespace internal {

// A node of the item trie: a leaf holds up to 32 items, an inner node up to
// 32 children. Immutable once shared.
struct ItemTrieNode {
  std::vector<Item> items;
  std::vector<std::shared_ptr<const ItemTrieNode>> children;
};

// A node of the name index: a hash array mapped trie on 5-bit chunks of the
// names' 64-bit hashes. A slot is either a subtrie or the positions of the
// names with that full hash (more than one only on a hash collision).
struct NameIndexNode {
  struct Slot {
    uint64_t hash = 0;
    std::vector<uint32_t> positions;
    std::shared_ptr<const NameIndexNode> child;
  };
  uint32_t bitmap = 0;
  std::vector<Slot> slots;  // in bit order
};

}  // namespace internal

namespace {

using internal::ItemTrieNode;
using internal::NameIndexNode;
using TriePtr = std::shared_ptr<const ItemTrieNode>;
using IndexPtr = std::shared_ptr<const NameIndexNode>;

uint64_t NameHash(std::string_view s) {
  uint64_t h = Fnv1a64(s);
  return h ^ (h >> 32);
}

// Trie depths are bounded by log32 of the item count (at most 13 levels), so
// the recursions below are shallow whatever the input.
TriePtr TrieWith(const TriePtr& node, int shift, size_t i, Item item) {
  auto copy = std::make_shared<ItemTrieNode>(node ? *node : ItemTrieNode());
  size_t slot = (i >> shift) & 31;
  if (shift == 0) {
    if (copy->items.size() <= slot) copy->items.resize(slot + 1);
    copy->items[slot] = std::move(item);
  } else {
    if (copy->children.size() <= slot) copy->children.resize(slot + 1);
    copy->children[slot] = TrieWith(copy->children[slot], shift - 5, i, std::move(item));
  }
  return copy;
}

// Returns `node` with (hash -> pos) added. Copies the path (the persistent
// update), or, with `in_place`, changes nodes that nobody shares yet (while
// a module is being built).
IndexPtr IndexInsert(const IndexPtr& node, uint64_t hash, uint32_t pos, int shift, bool in_place);

// A new node holding an existing slot's entries and one more.
IndexPtr IndexPair(const NameIndexNode::Slot& a, uint64_t hash, uint32_t pos, int shift) {
  IndexPtr n = std::make_shared<NameIndexNode>();
  for (uint32_t p : a.positions) n = IndexInsert(n, a.hash, p, shift, true);
  return IndexInsert(n, hash, pos, shift, true);
}

IndexPtr IndexInsert(const IndexPtr& node, uint64_t hash, uint32_t pos, int shift, bool in_place) {
  std::shared_ptr<NameIndexNode> copy =
      in_place && node ? std::const_pointer_cast<NameIndexNode>(node)
                       : std::make_shared<NameIndexNode>(node ? *node : NameIndexNode());
  uint32_t bit = 1u << ((hash >> shift) & 31);
  size_t at = std::popcount(copy->bitmap & (bit - 1));
  if (!(copy->bitmap & bit)) {
    copy->bitmap |= bit;
    NameIndexNode::Slot s;
    s.hash = hash;
    s.positions = {pos};
    copy->slots.insert(copy->slots.begin() + at, std::move(s));
    return copy;
  }
  NameIndexNode::Slot& s = copy->slots[at];
  if (s.child) {
    s.child = IndexInsert(s.child, hash, pos, shift + 5, in_place);
  } else if (s.hash == hash) {
    s.positions.push_back(pos);  // a different name with the same hash
  } else {
    s.child = IndexPair(s, hash, pos, shift + 5);
    s.positions.clear();
    s.hash = 0;
  }
  return copy;
}

// Calls fn(position) for each position stored under `hash`.
template <typename Fn>
void IndexFind(const NameIndexNode* node, uint64_t hash, Fn&& fn) {
  for (int shift = 0; node; shift += 5) {
    uint32_t bit = 1u << ((hash >> shift) & 31);
    if (!(node->bitmap & bit)) return;
    const NameIndexNode::Slot& s = node->slots[std::popcount(node->bitmap & (bit - 1))];
    if (s.child) {
      node = s.child.get();
      continue;
    }
    if (s.hash == hash)
      for (uint32_t p : s.positions) fn(p);
    return;
  }
}

}  // namespace

// ----- ItemList --------------------------------------------------------

ItemList::ItemList(const std::vector<Item>& items) {
  size_ = items.size();
  if (items.empty()) return;
  // Leaves of 32, then levels of 32 children, bottom-up.
  std::vector<TriePtr> level;
  for (size_t i = 0; i < items.size(); i += 32) {
    auto leaf = std::make_shared<ItemTrieNode>();
    leaf->items.assign(items.begin() + i, items.begin() + std::min(items.size(), i + 32));
    level.push_back(std::move(leaf));
  }
  shift_ = 0;
  while (level.size() > 1) {
    std::vector<TriePtr> up;
    for (size_t i = 0; i < level.size(); i += 32) {
      auto inner = std::make_shared<ItemTrieNode>();
      inner->children.assign(level.begin() + i, level.begin() + std::min(level.size(), i + 32));
      up.push_back(std::move(inner));
    }
    level = std::move(up);
    shift_ += 5;
  }
  root_ = level[0];
}

const Item& ItemList::operator[](size_t i) const {
  const ItemTrieNode* n = root_.get();
  for (int shift = shift_; shift > 0; shift -= 5) n = n->children[(i >> shift) & 31].get();
  return n->items[i & 31];
}

ItemList ItemList::With(size_t i, Item item) const {
  ItemList out = *this;
  out.root_ = TrieWith(root_, shift_, i, std::move(item));
  return out;
}

ItemList ItemList::Append(Item item) const {
  ItemList out = *this;
  if (!root_) {
    out.shift_ = 0;
  } else if (size_ == (size_t{32} << shift_)) {  // full: grow a level
    auto top = std::make_shared<ItemTrieNode>();
    top->children.push_back(root_);
    out.root_ = top;
    out.shift_ += 5;
  }
  out.root_ = TrieWith(out.root_, out.shift_, size_, std::move(item));
  ++out.size_;
  return out;
}

ItemList::const_iterator::const_iterator(const ItemList* list, size_t i) : list_(list), i_(i) {
  Load();
}

void ItemList::const_iterator::Load() {
  if (i_ >= list_->size_) {
    leaf_ = nullptr;
    return;
  }
  const ItemTrieNode* n = list_->root_.get();
  for (int shift = list_->shift_; shift > 0; shift -= 5) n = n->children[(i_ >> shift) & 31].get();
  leaf_ = n->items.data();
}

ItemList::const_iterator& ItemList::const_iterator::operator++() {
  ++i_;
  if ((i_ & 31) == 0) Load();  // the next leaf
  return *this;
}

// ----- Module ----------------------------------------------------------

Module::Module() {
  static const std::shared_ptr<const Data>* empty =
      new std::shared_ptr<const Data>(std::make_shared<const Data>());
  data_ = *empty;
}

StatusOr<Module> Module::Make(std::vector<Item> items) {
  auto d = std::make_shared<Data>();
  IndexPtr index = std::make_shared<NameIndexNode>();  // built in place, then frozen
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& name = items[i]->name();
    uint64_t h = NameHash(name);
    bool dup = false;
    IndexFind(index.get(), h, [&](uint32_t p) { dup |= items[p]->name() == name; });
    if (dup) return AlreadyExists("global @" + name + " is defined twice");
    index = IndexInsert(index, h, static_cast<uint32_t>(i), 0, /*in_place=*/true);
  }
  d->index = std::move(index);
  d->items = ItemList(items);
  return Module(std::shared_ptr<const Data>(std::move(d)));
}

size_t Module::Find(std::string_view name) const {
  size_t found = SIZE_MAX;
  IndexFind(data_->index.get(), NameHash(name), [&](uint32_t p) {
    if (found == SIZE_MAX && data_->items[p]->name() == name) found = p;
  });
  return found;
}

Item Module::Lookup(std::string_view name) const {
  size_t p = Find(name);
  return p == SIZE_MAX ? Item() : data_->items[p];
}

Function Module::LookupFunction(std::string_view name) const {
  Item it = Lookup(name);
  if (!it || it->kind() != NodeKind::kFunction) return Function();
  return Downcast<FunctionNode>(it);
}

Module Module::WithItem(Item item) const {
  auto d = std::make_shared<Data>();
  size_t p = Find(item->name());
  if (p != SIZE_MAX) {
    d->index = data_->index;  // same names, same positions
    d->items = data_->items.With(p, std::move(item));
  } else {
    d->index = IndexInsert(data_->index, NameHash(item->name()),
                           static_cast<uint32_t>(data_->items.size()), 0, /*in_place=*/false);
    d->items = data_->items.Append(std::move(item));
  }
  return Module(std::shared_ptr<const Data>(std::move(d)));
}

Module Module::Without(std::string_view name) const {
  size_t drop = Find(name);
  if (drop == SIZE_MAX) return *this;
  std::vector<Item> rest;
  rest.reserve(data_->items.size() - 1);
  size_t i = 0;
  for (const Item& it : data_->items)
    if (i++ != drop) rest.push_back(it);
  return *Make(std::move(rest));
}

}  // namespace plir
