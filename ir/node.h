// Node: the base of every IR object, and Ref<T>, its intrusive shared handle.
//
// Nodes are immutable once constructed and reference-counted; sharing a node
// between many parents (and many modules) is the normal case. Copying a Ref
// costs one atomic increment. Destruction is iterative: dropping the last
// reference to a 100,000-deep expression does not recurse.
#ifndef PLIR_IR_NODE_H_
#define PLIR_IR_NODE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace plir {

// Every concrete node class has exactly one kind.
enum class NodeKind : uint8_t {
  // Types (struct info).
  kTensorType,
  kTupleType,
  kObjectType,
  kPrimType,
  kShapeType,
  // Expressions.
  kVar,
  kGlobalVar,
  kOp,
  kTuple,
  kTupleGetItem,
  kPrimValue,
  kStringImm,
  kConstant,
  kCall,
  kIf,
  kSeqExpr,
  // Structure.
  kVarBinding,
  kBindingBlock,
  kFunction,
  kExternFunc,
  // Added later, numbered explicitly (the binary format stores kinds, and
  // other additions may take the numbers right after kExternFunc):
  // `shape[(...)]` shape values and `prim[...]` symbolic values (20, 21),
  // `Callable[...]` function types and `fn(...) {...}` local functions.
  kShapeExpr = 20,
  kPrimExpr = 21,
  kFuncType = 40,
  kLocalFn = 41,
};

const char* NodeKindName(NodeKind kind);
// True iff `k` is the number of a NodeKind (readers of stored kinds).
inline bool IsKnownNodeKind(uint32_t k) {
  return k <= static_cast<uint32_t>(NodeKind::kPrimExpr) ||
         k == static_cast<uint32_t>(NodeKind::kFuncType) ||
         k == static_cast<uint32_t>(NodeKind::kLocalFn);
}

inline bool IsTypeKind(NodeKind k) { return k <= NodeKind::kShapeType || k == NodeKind::kFuncType; }
inline bool IsExprKind(NodeKind k) {
  return (k >= NodeKind::kVar && k <= NodeKind::kSeqExpr) || k == NodeKind::kShapeExpr ||
         k == NodeKind::kPrimExpr || k == NodeKind::kLocalFn;
}

namespace internal {
// Node memory (ir/internal/node_alloc.cc): per-thread slabs of fixed-size
// cells, 8-byte size classes up to 256 bytes, so building a node is a free-
// list pop, not a malloc. Larger requests go to operator new. Memory freed
// by one thread is reused by that thread; it is not returned to the system.
void* AllocNodeMemory(size_t size);
void FreeNodeMemory(void* p, size_t size);
// Memory for one node of type T: `new (internal::NodeMemory<T>()) T(...)`;
// `extra` bytes follow the object (a node's inline operand array).
template <typename T>
void* NodeMemory(size_t extra = 0) {
  return AllocNodeMemory(sizeof(T) + extra);
}

// An operand array stored right after its node's object (operands inline
// with their node: no separate allocation, one cache line further).
// `Owner` must be a multiple of alignof(T) in size.
template <typename T, typename Owner>
struct InlineArray {
  static T* Data(const Owner* o, size_t offset = 0) {
    return reinterpret_cast<T*>(const_cast<Owner*>(o) + 1) + offset;
  }
  // Moves `from` into the array at `at`.
  static void Init(T* at, std::vector<T>& from) {
    for (size_t i = 0; i < from.size(); ++i) new (at + i) T(std::move(from[i]));
  }
  static void Destroy(T* at, size_t n) {
    for (size_t i = 0; i < n; ++i) at[i].~T();
  }
};
}  // namespace internal

// The base of every IR object: an 8-byte header (reference count, kind,
// flags) and no virtual table; destruction dispatches on the kind.
class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeKind kind() const { return kind_; }

  // Reference counting; use Ref<T> rather than calling these directly.
  // Immortal nodes (interned types, ops) are never counted or freed.
  void IncRef() const {
    if (!(flags_ & kImmortal)) refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void DecRef() const {
    if (flags_ & kImmortal) return;
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy();
  }
  // Returns the current reference count (for tests and diagnostics only);
  // immortal nodes report UINT32_MAX.
  uint32_t use_count() const {
    return (flags_ & kImmortal) ? UINT32_MAX : refs_.load(std::memory_order_relaxed);
  }
  bool is_immortal() const { return flags_ & kImmortal; }

 protected:
  explicit Node(NodeKind kind) : kind_(kind) {}
  ~Node() = default;  // not virtual: DestroyNode dispatches on kind()

  static constexpr uint8_t kImmortal = 1;
  // Marks this node as never freed (call before it is shared).
  void MakeImmortal() { flags_ |= kImmortal; }

  // A spare header byte for a subclass's flags (a variable's or a block's
  // dataflow bit), so that they cost no extra word.
  uint8_t& spare() const { return spare_; }

 private:
  void Destroy() const;  // frees this node and, iteratively, what it held last
  mutable std::atomic<uint32_t> refs_{0};
  NodeKind kind_;
  uint8_t flags_ = 0;
  mutable uint8_t spare_ = 0;
};
static_assert(sizeof(Node) == 8, "the node header is one word");

// An intrusive shared handle to a node of type T (const access only: nodes
// are immutable). A default-constructed Ref is null.
template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}  // NOLINT: implicit
  explicit Ref(const T* p) : p_(p) {
    if (p_) p_->IncRef();
  }
  Ref(const Ref& o) : p_(o.p_) {
    if (p_) p_->IncRef();
  }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U>
  Ref(const Ref<U>& o) : p_(o.get()) {
    if (p_) p_->IncRef();
  }  // NOLINT
  template <typename U>
  Ref(Ref<U>&& o) noexcept : p_(o.release()) {}  // NOLINT
  ~Ref() {
    if (p_) p_->DecRef();
  }

  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  const T* get() const { return p_; }
  const T* operator->() const { return p_; }
  const T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool same_as(const Ref& o) const { return p_ == o.p_; }

  // Gives up ownership without decrementing (for move-conversion).
  const T* release() {
    const T* p = p_;
    p_ = nullptr;
    return p;
  }
  // The inverse of release(): takes over a reference that the caller holds
  // (counted already) without counting another.
  static Ref Adopt(const T* p) {
    Ref r;
    r.p_ = p;
    return r;
  }

  friend bool operator==(const Ref& a, const Ref& b) { return a.p_ == b.p_; }
  friend bool operator!=(const Ref& a, const Ref& b) { return a.p_ != b.p_; }

 private:
  const T* p_ = nullptr;
};

// Allocates a node of fixed size from the node slabs and returns the first
// reference to it.
template <typename T, typename... Args>
Ref<T> MakeNode(Args&&... args) {
  return Ref<T>(new (internal::AllocNodeMemory(sizeof(T))) T(std::forward<Args>(args)...));
}

// Returns `n` viewed as a T if it has T's kind, else nullptr.
template <typename T>
const T* As(const Node* n) {
  return (n && n->kind() == T::kKind) ? static_cast<const T*>(n) : nullptr;
}
template <typename T, typename U>
const T* As(const Ref<U>& n) {
  return As<T>(static_cast<const Node*>(n.get()));
}

// Unchecked downcast of a Ref whose kind the caller has checked.
template <typename T, typename U>
Ref<T> Downcast(const Ref<U>& n) {
  return Ref<T>(static_cast<const T*>(static_cast<const Node*>(n.get())));
}

}  // namespace plir

#endif  // PLIR_IR_NODE_H_
