#include "ir/structural.h"

#include <unordered_map>
#include <vector>

#include "ir/internal/children.h"
#include "ir/internal/pointer_map.h"

namespace plir {
namespace {

using internal::ChildAt;
using internal::ChildLabel;
using internal::NumChildren;
using internal::ShortDescription;

class EqualChecker {
 public:
  explicit EqualChecker(bool map_free_vars) : map_free_(map_free_vars) {}

  std::optional<StructuralMismatch> Check(const Node* a, const Node* b, std::string root) {
    root_ = std::move(root);
    frames_.clear();
    if (!Visit(a, b, false)) return Report(a, b, "");
    while (!frames_.empty()) {
      Frame& f = frames_.back();
      if (f.next == f.n) {
        frames_.pop_back();
        continue;
      }
      size_t i = f.next++;
      internal::Child ca = ChildAt(f.a, f.def, i);
      internal::Child cb = ChildAt(f.b, f.def, i);
      if (!Visit(ca.node, cb.node, ca.is_def)) {
        return Report(ca.node, cb.node, ChildLabel(frames_.back().a, i));
      }
    }
    return std::nullopt;
  }

 private:
  struct Frame {
    const Node* a;
    const Node* b;
    bool def;
    size_t next;
    size_t n;
  };

  // Compares a and b shallowly; pushes a frame if their children need
  // comparing. Returns false on a mismatch.
  bool Visit(const Node* a, const Node* b, bool def) {
    // A shared subtree is equal to itself while every mapping so far is the
    // identity. Not with map_free_vars: its free variables must be recorded.
    if (a == b && identity_ && !def && !map_free_) return true;
    if (!a || !b) return a == b;
    if (a->kind() != b->kind()) return false;
    if (a->kind() == NodeKind::kVar) {
      auto* va = static_cast<const VarNode*>(a);
      auto* vb = static_cast<const VarNode*>(b);
      if (const VarNode* const* mapped = l2r_.Find(va)) {
        if (*mapped != vb) return false;
        if (!def) return true;
      } else {
        if (r2l_.Find(vb)) return false;
        if (!def) {
          if (!map_free_) return va == vb;
          if (va->is_dataflow() != vb->is_dataflow() || !TypeEqual(va->type(), vb->type()))
            return false;
        }
        l2r_.Insert(va, vb);
        r2l_.Insert(vb, va);
        if (va != vb) identity_ = false;
        if (!def) return true;
      }
    }
    if (!internal::ShallowEqual(a, b)) return false;
    size_t n = NumChildren(a, def);
    if (n != NumChildren(b, def)) return false;
    if (n) frames_.push_back({a, b, def, 0, n});
    return true;
  }

  StructuralMismatch Report(const Node* a, const Node* b, const std::string& last) {
    StructuralMismatch m;
    m.path = root_;
    for (size_t k = 0; k + 1 < frames_.size(); ++k) {
      if (!m.path.empty()) m.path += ", ";
      m.path += ChildLabel(frames_[k].a, frames_[k].next - 1);
    }
    if (!last.empty()) {
      if (!m.path.empty()) m.path += ", ";
      m.path += last;
    }
    if (m.path.empty()) m.path = "root";
    m.lhs = ShortDescription(a);
    m.rhs = ShortDescription(b);
    if (m.lhs == m.rhs && a && b && a->kind() == NodeKind::kVar) {
      m.lhs += " (bound or mapped differently)";
    }
    return m;
  }

  bool map_free_;
  bool identity_ = true;
  std::string root_;
  std::vector<Frame> frames_;
  internal::PointerMap<const VarNode*> l2r_, r2l_;
};

class Hasher {
 public:
  explicit Hasher(bool map_free_vars) : map_free_(map_free_vars) {}

  uint64_t Hash(const Node* root) {
    uint64_t h = 0x2545f4914f6cdd1dull;
    stack_.push_back({root, false});
    while (!stack_.empty()) {
      auto [n, def] = stack_.back();
      stack_.pop_back();
      if (n == nullptr) {
        h = internal::HashMix(h, 0);
        continue;
      }
      if (n->kind() == NodeKind::kVar) {
        auto* v = static_cast<const VarNode*>(n);
        if (def) {
          h = internal::HashMix(h, 0xdef0000 + defs_.size());
          defs_.Insert(v, defs_.size());
        } else {
          if (const uint64_t* idx = defs_.Find(v)) {
            h = internal::HashMix(h, 0x05e0000 + *idx);
          } else if (map_free_) {
            free_.Insert(v, free_.size());
            h = internal::HashMix(h, 0xf4ee000 + *free_.Find(v));
            h = internal::HashMix(h, Hasher(false).Hash(v->type().get()));
          } else {
            h = internal::HashMix(h, reinterpret_cast<uintptr_t>(v));
          }
          h = internal::HashMix(h, v->is_dataflow());
          continue;
        }
      }
      h = internal::HashMix(h, internal::ShallowHash(n));
      size_t k = NumChildren(n, def);
      h = internal::HashMix(h, k);
      for (size_t i = k; i-- > 0;) {
        internal::Child c = ChildAt(n, def, i);
        stack_.push_back({c.node, c.is_def});
      }
    }
    return h;
  }

 private:
  struct Item {
    const Node* n;
    bool def;
  };
  bool map_free_;
  std::vector<Item> stack_;
  internal::PointerMap<uint64_t> defs_, free_;
};

}  // namespace

std::optional<StructuralMismatch> FindFirstMismatch(const Node* lhs, const Node* rhs,
                                                    bool map_free_vars) {
  return EqualChecker(map_free_vars).Check(lhs, rhs, "");
}

std::optional<StructuralMismatch> FindFirstMismatch(const Module& lhs, const Module& rhs,
                                                    bool map_free_vars) {
  if (lhs.same_as(rhs)) return std::nullopt;
  EqualChecker checker(map_free_vars);
  for (const Item& a : lhs.items()) {
    Item b = rhs.Lookup(a->name());
    if (!b) return StructuralMismatch{"@" + a->name(), ShortDescription(a.get()), "nothing"};
    if (auto m = checker.Check(a.get(), b.get(), "@" + a->name())) return m;
  }
  for (const Item& b : rhs.items())
    if (!lhs.Contains(b->name()))
      return StructuralMismatch{"@" + b->name(), "nothing", ShortDescription(b.get())};
  return std::nullopt;
}

uint64_t StructuralHash(const Node* n, bool map_free_vars) { return Hasher(map_free_vars).Hash(n); }

uint64_t StructuralHash(const Module& m, bool map_free_vars) {
  uint64_t sum = internal::HashMix(0, m.size());
  for (const Item& it : m.items()) sum += Hasher(map_free_vars).Hash(it.get());
  return sum;
}

}  // namespace plir
