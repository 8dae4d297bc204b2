// ScopedValueTable: the values bound so far, found by value, with scopes
// that undo what they added: what common-subexpression elimination and
// value numbering need (MLIR's CSE keeps an llvm::ScopedHashTable for it).
//
// Values are keyed by structure, variables by identity: two calls of the
// same op on the same variables with equal attributes are one value. A call
// of an op on variables only, without sinfo_args (most bindings' values), is
// hashed and compared here without StructuralHash's and StructuralEqual's
// tables; every other value takes those.
//
// Each entry holds a Payload (what the pass keeps per value: the variables
// bound to it, say). Update(i) gives the payload for change and, inside a
// scope, saves it first if the entry is older than the scope; PopScope()
// removes the entries the scope added and restores the payloads it changed.
//
// Layout. A call of an op on variables (most values) is chained under its
// first argument: a VarMap indexed by the variable's number holds the latest
// such entry, each entry the one before it. The argument was defined shortly
// before its uses, so the lookup reads memory the walk touched recently. A
// chain holds at most kMaxChain entries; the values of a variable used
// first by more calls than that go to the index below, so a lookup never
// walks more than kMaxChain entries. Every other value is found through an
// open-addressing index (linear probing) over the hashes. On one function of
// a million ops, that index alone missed the cache on nearly every lookup
// (bench/RESULTS.md); std::unordered_multimap was slower still. Entries are
// removed only by PopScope, latest first: the latest entry heads its chain,
// and undoing the latest insertion of a linear-probing table restores it
// exactly.
#ifndef PLIR_IR_VALUE_TABLE_H_
#define PLIR_IR_VALUE_TABLE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "ir/structural.h"
#include "ir/var_map.h"

namespace plir {

// The variables bound to one value, earliest first. Almost every value has
// one: the first is kept inline and the rest behind a pointer, so a table
// entry costs no allocation and 16 bytes (at a million values the table's
// entries are tens of megabytes of fresh memory, and their first touch was
// a third of CSE's time on one function).
class BoundVars {
 public:
  BoundVars() = default;
  BoundVars(const BoundVars& o)
      : first_(o.first_), rest_(o.rest_ ? std::make_unique<std::vector<Var>>(*o.rest_) : nullptr) {}
  BoundVars& operator=(const BoundVars& o) {
    if (this != &o) *this = BoundVars(o);
    return *this;
  }
  BoundVars(BoundVars&&) noexcept = default;
  BoundVars& operator=(BoundVars&&) noexcept = default;

  bool empty() const { return first_.get() == nullptr; }
  const Var& front() const { return first_; }
  [[gnu::always_inline]] void push_back(Var v) {
    if (empty()) {
      first_ = std::move(v);
      return;
    }
    if (!rest_) rest_ = std::make_unique<std::vector<Var>>();
    rest_->push_back(std::move(v));
  }
  // Drops the dataflow variables, keeping the order of the others.
  void EraseDataflow() {
    if (!rest_ || rest_->empty()) {  // one variable (almost every value): no list to rebuild
      if (!empty() && first_->is_dataflow()) first_ = Var();
      return;
    }
    std::vector<Var> kept;
    if (!empty() && !first_->is_dataflow()) kept.push_back(first_);
    for (Var& v : *rest_)
      if (!v->is_dataflow()) kept.push_back(std::move(v));
    rest_.reset();
    first_ = Var();
    for (Var& v : kept) push_back(std::move(v));
  }

 private:
  Var first_;
  std::unique_ptr<std::vector<Var>> rest_;  // null while one variable or none
};

// A call of an op on variables only, without sinfo_args (the values the
// table hashes and compares itself); else null.
inline const CallNode* OpCallOnVars(const Expr& v) {
  auto* c = As<CallNode>(v);
  if (!c || c->callee()->kind() != NodeKind::kOp || !c->sinfo_args().empty()) return nullptr;
  for (const Expr& a : c->args())
    if (a->kind() != NodeKind::kVar) return nullptr;
  return c;
}

namespace value_table_internal {

inline uint64_t Mix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ull;
  v ^= v >> 32;
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

inline uint64_t Key(const Expr& v, const CallNode* simple) {
  if (!simple) return StructuralHash(v);
  uint64_t h = Mix(0x5eed5eed, reinterpret_cast<uintptr_t>(simple->callee().get()));
  for (const Expr& a : simple->args()) h = Mix(h, reinterpret_cast<uintptr_t>(a.get()));
  return Mix(h, simple->args().size());
}

inline bool Equal(const Expr& a, const CallNode* sa, const Expr& b) {
  const CallNode* sb = OpCallOnVars(b);
  if (!sa || !sb) return (sa == nullptr) == (sb == nullptr) && StructuralEqual(a, b);
  if (sa->callee().get() != sb->callee().get() || sa->args().size() != sb->args().size())
    return false;
  for (size_t i = 0; i < sa->args().size(); ++i)
    if (sa->args()[i].get() != sb->args()[i].get()) return false;
  return sa->attrs().Equals(sb->attrs());
}

}  // namespace value_table_internal

template <typename Payload>
class ScopedValueTable {
 public:
  // Sizes the table for about `n` values (growing a table of a million
  // entries rehashes it again and again).
  void Reserve(size_t n) {
    entries_.reserve(n);
    chains_ = VarMap<Chain>(n);
  }
  size_t size() const { return entries_.size(); }
  const Expr& value(uint32_t i) const { return entries_[i].value; }
  const Payload& payload(uint32_t i) const { return entries_[i].payload; }

  // The entry of the value equal to `value`, inserting it (with a
  // default Payload) if there is none. Returns its index and whether it was
  // inserted.
  // (Always inlined, as the table's other lookups: it runs once per binding,
  // and a pass's walk calling it out of line measured 4-9% slower on 1M ops.)
  [[gnu::always_inline]] std::pair<uint32_t, bool> FindOrInsert(const Expr& value) {
    using namespace value_table_internal;
    const CallNode* simple = OpCallOnVars(value);
    const VarNode* first_arg = simple && !simple->args().empty()
                                   ? static_cast<const VarNode*>(simple->args()[0].get())
                                   : nullptr;
    const uint64_t hash = Key(value, simple);
    auto eq = [&](const Expr& v) { return Equal(value, simple, v); };
    if (int64_t found = Find(hash, first_arg, eq); found >= 0)
      return {static_cast<uint32_t>(found), false};
    return {Insert(hash, first_arg, value), true};
  }

  // Entry i's payload, for change. Inside a scope, an entry older than the
  // scope has its payload saved first (once per scope), for PopScope.
  [[gnu::always_inline]] Payload& Update(uint32_t i) {
    Entry& e = entries_[i];
    if (!scopes_.empty() && e.stamp != scope_id_ && i < scopes_.back().entries) {
      saved_.push_back(Saved{i, e.payload});
      e.stamp = scope_id_;
    }
    return e.payload;
  }

  // Opens a scope; PopScope closes the latest one, removing the entries it
  // added and restoring the payloads it changed.
  void PushScope() { scopes_.push_back(Scope{entries_.size(), saved_.size(), scope_id_ = ++ids_}); }
  void PopScope() {
    const Scope s = scopes_.back();
    scopes_.pop_back();
    Truncate(s.entries);
    while (saved_.size() > s.saved) {  // latest first: the earliest copy wins
      entries_[saved_.back().entry].payload = std::move(saved_.back().payload);
      saved_.pop_back();
    }
    scope_id_ = scopes_.empty() ? 0 : scopes_.back().id;
  }

 private:
  static constexpr uint32_t kMaxChain = 8;

  // Set in Entry::previous when the entry is chained under its value's
  // first argument (else it is in the index). The first argument is not
  // stored: the value gives it back (40 bytes an entry with BoundVars
  // instead of 64).
  static constexpr uint32_t kChained = uint32_t{1} << 31;
  struct Entry {
    uint64_t hash;
    Expr value;
    Payload payload;
    uint32_t stamp = 0;     // the scope that last saved `payload`
    uint32_t previous = 0;  // kChained, and the chain's entry before it: index + 1; 0 = none
  };
  struct Chain {
    uint32_t latest = 0;  // entry index + 1; 0 = none
    uint32_t length = 0;
  };
  struct Slot {
    uint32_t index = 0;  // entry index + 1; 0 = empty
    uint32_t tag = 0;    // low bits of the hash: most mismatches skip the entry
  };
  struct Scope {
    size_t entries;  // entries when it opened
    size_t saved;    // saved payloads when it opened
    uint32_t id;
  };
  struct Saved {
    uint32_t entry;
    Payload payload;
  };

  // The index of the entry with `hash` whose value `eq` accepts, or -1.
  // `first_arg`: the value's first argument if it is a simple call with
  // arguments, else null.
  template <typename Eq>
  [[gnu::always_inline]] int64_t Find(uint64_t hash, const VarNode* first_arg, Eq eq) const {
    if (first_arg) {
      const Chain* c = chains_.Find(first_arg);
      if (!c) return -1;
      for (uint32_t i = c->latest; i != 0; i = entries_[i - 1].previous & ~kChained) {
        const Entry& e = entries_[i - 1];
        if (e.hash == hash && eq(e.value)) return i - 1;
      }
      if (c->length < kMaxChain) return -1;  // all of first_arg's values are chained
    }
    if (slots_.empty()) return -1;
    for (size_t i = Home(hash);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.index == 0) return -1;
      if (s.tag == static_cast<uint32_t>(hash) && eq(entries_[s.index - 1].value))
        return s.index - 1;
    }
  }

  [[gnu::always_inline]] uint32_t Insert(uint64_t hash, const VarNode* first_arg, Expr value) {
    const uint32_t index = static_cast<uint32_t>(entries_.size());
    if (first_arg) {
      Chain* c = chains_.Insert(first_arg, Chain{}).first;
      if (c->length < kMaxChain) {
        entries_.push_back(Entry{hash, std::move(value), Payload{}, 0, c->latest | kChained});
        c->latest = index + 1;
        ++c->length;
        return index;
      }
    }
    if (2 * (indexed_ + 1) > slots_.size()) Rehash(std::max<size_t>(16, 2 * slots_.size()));
    entries_.push_back(Entry{hash, std::move(value), Payload{}, 0, 0});
    Place(index + 1);
    ++indexed_;
    return index;
  }

  // Removes the entries from index `n` on, latest first.
  void Truncate(size_t n) {
    while (entries_.size() > n) {
      const Entry& e = entries_.back();
      if (e.previous & kChained) {
        // Chained under its first argument (a chained value is a simple
        // call with arguments).
        const auto* first = static_cast<const VarNode*>(OpCallOnVars(e.value)->args()[0].get());
        Chain* c = chains_.Find(first);
        c->latest = e.previous & ~kChained;
        --c->length;
      } else {
        uint32_t index = static_cast<uint32_t>(entries_.size());
        size_t i = Home(e.hash);
        while (slots_[i].index != index) i = (i + 1) & mask_;
        slots_[i] = Slot{};
        --indexed_;
      }
      entries_.pop_back();
    }
  }

  size_t Home(uint64_t hash) const { return (hash * 0x9e3779b97f4a7c15ull) >> shift_; }

  void Place(uint32_t index) {
    uint64_t hash = entries_[index - 1].hash;
    size_t i = Home(hash);
    while (slots_[i].index != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{index, static_cast<uint32_t>(hash)};
  }

  void Rehash(size_t cap) {  // cap: a power of two
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    shift_ = 64;
    for (size_t c = cap; c > 1; c >>= 1) --shift_;
    for (uint32_t i = 1; i <= entries_.size(); ++i)
      if (!(entries_[i - 1].previous & kChained)) Place(i);
  }

  std::vector<Entry> entries_;
  VarMap<Chain> chains_;
  std::vector<Slot> slots_;
  size_t indexed_ = 0;  // entries in slots_
  size_t mask_ = 0;
  int shift_ = 64;
  std::vector<Scope> scopes_;
  std::vector<Saved> saved_;
  uint32_t scope_id_ = 0;  // the innermost scope's, 0 outside any
  uint32_t ids_ = 0;
};

}  // namespace plir

#endif  // PLIR_IR_VALUE_TABLE_H_
