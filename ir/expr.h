// Expressions, bindings, blocks and module items of the PLIR IR.
//
// Every node is immutable and reference-counted; construct nodes with the
// static Make functions. Every expression carries its type (struct info),
// computed when the node is made. Variables have identity: two VarNodes with
// the same name hint are different variables.
#ifndef PLIR_IR_EXPR_H_
#define PLIR_IR_EXPR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attrs.h"
#include "ir/node.h"
#include "ir/status.h"
#include "ir/symbol.h"
#include "ir/tensor_bytes.h"
#include "ir/type.h"

namespace plir {

class ExprNode : public Node {
 public:
  // The type (struct info) of the value this expression produces.
  const Type& type() const { return type_; }

 protected:
  ExprNode(NodeKind kind, Type type) : Node(kind), type_(std::move(type)) {}
  Type type_;
};
using Expr = Ref<ExprNode>;
// Operand lists are stored inline with their node and read as spans.
using ExprSpan = std::span<const Expr>;
using TypeSpan = std::span<const Type>;

// Copies a span (an inline operand list) into a vector, to build a variant.
template <typename T>
std::vector<T> ToVector(std::span<const T> s) {
  return std::vector<T>(s.begin(), s.end());
}

// A variable's name hint, stored without a string of its own: an interned
// prefix and an optional decimal suffix ("lv12" is "lv" and 12; "x" is "x"
// and none), since most names are generated and share a few prefixes. The
// split is exact: str() gives back the string it was made from.
class NameHint {
 public:
  static constexpr uint32_t kNoNumber = UINT32_MAX;
  NameHint() = default;
  explicit NameHint(std::string_view s);
  // The hint whose string is prefix + number (kNoNumber: prefix alone), as
  // stored by the binary format; canonical whatever the parts.
  static NameHint FromParts(Symbol prefix, uint32_t number);

  std::string str() const;
  void AppendTo(std::string* out) const;
  Symbol prefix() const { return prefix_; }
  uint32_t number() const { return number_; }  // kNoNumber if none
  bool empty() const { return prefix_.empty() && number_ == kNoNumber; }
  friend bool operator==(const NameHint& a, const NameHint& b) {
    return a.prefix_ == b.prefix_ && a.number_ == b.number_;
  }

 private:
  friend class VarNode;  // stores the parts itself (a word smaller)
  NameHint(Symbol prefix, uint32_t number) : prefix_(prefix), number_(number) {}
  Symbol prefix_;
  uint32_t number_ = kNoNumber;
};

// A local variable: `%name` (ordinary) or a dataflow variable (bound in a
// dataflow block and not listed in its `output` line).
//
// index() is the variable's position in the definition order of the function
// that defines it, when whoever built that function numbered its variables
// (the text parser and the loaders do); analyses use it to index arrays
// instead of probing hash maps, and check it (a variable reused by a pass in
// another function may carry a stale or kNoIndex number, and then takes a
// slower path, never a wrong one).
namespace text_internal {
class TextParser;
}  // namespace text_internal

class VarNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kVar;
  static constexpr uint32_t kNoIndex = UINT32_MAX;
  static Ref<VarNode> Make(std::string_view name_hint, Type type, bool is_dataflow = false);
  static Ref<VarNode> Make(NameHint name, Type type, bool is_dataflow = false,
                           uint32_t index = kNoIndex);

  // The name hint as a string (built on each call; see hint()).
  std::string name_hint() const { return hint().str(); }
  NameHint hint() const { return NameHint(prefix_, number_); }
  bool is_dataflow() const { return spare() & 1; }
  uint32_t index() const { return index_.load(std::memory_order_relaxed); }

 private:
  friend class FunctionNode;  // numbers variables that have no index yet
  // The text parser makes a dataflow block's variables before it reads the
  // output line, which says which of them leave the block: it clears their
  // flag then, while it is still the only holder of the nodes (reading that
  // line ahead was a serial pass over the whole block).
  friend class text_internal::TextParser;
  void ClearDataflowWhileUnshared() const { spare() = 0; }
  // Sets the index hint if there is none yet (first writer wins; a hint,
  // never part of the IR's meaning: structural equality and hashing ignore
  // it, and every use of it is checked).
  void AssignIndexIfNone(uint32_t i) const {
    uint32_t none = kNoIndex;
    index_.compare_exchange_strong(none, i, std::memory_order_relaxed);
  }
  VarNode(NameHint name, Type type, bool df, uint32_t index)
      : ExprNode(kKind, std::move(type)),
        prefix_(name.prefix()),
        number_(name.number()),
        index_(index) {
    spare() = df ? 1 : 0;
  }
  // The name hint's parts, laid out with the index in one 16-byte run.
  Symbol prefix_;
  uint32_t number_;
  mutable std::atomic<uint32_t> index_;
};
static_assert(sizeof(VarNode) == 32, "a variable is four words");
static_assert(sizeof(NameHint) == 16);
using Var = Ref<VarNode>;

// A reference to a module item by name: `@name`. Compared by name.
class GlobalVarNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kGlobalVar;
  static Ref<GlobalVarNode> Make(std::string name);
  const std::string& name() const { return name_; }

 private:
  explicit GlobalVarNode(std::string name);
  std::string name_;
};
using GlobalVar = Ref<GlobalVarNode>;

// `(a, b)`.
class TupleNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTuple;
  static Ref<TupleNode> Make(std::vector<Expr> fields);
  ExprSpan fields() const { return {Fields::Data(this), n_}; }

  // Internal: the bytes this node occupies with its inline fields.
  size_t AllocSize() const { return sizeof(TupleNode) + n_ * sizeof(Expr); }
  ~TupleNode() { Fields::Destroy(Fields::Data(this), n_); }

 private:
  using Fields = internal::InlineArray<Expr, TupleNode>;
  TupleNode(std::vector<Expr>& f, Type t)
      : ExprNode(kKind, std::move(t)), n_(static_cast<uint32_t>(f.size())) {
    Fields::Init(Fields::Data(this), f);
  }
  uint32_t n_;
};

// `t.index`.
class TupleGetItemNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTupleGetItem;
  // Fails if `tuple`'s type is known and is not a tuple, or `index` is out of range.
  static StatusOr<Expr> Make(Expr tuple, int64_t index);
  // Low level: builds the node with an already-computed `type`.
  static Expr MakeUnchecked(Expr tuple, int64_t index, Type type);
  const Expr& tuple() const { return tuple_; }
  int64_t index() const { return index_; }

 private:
  TupleGetItemNode(Expr t, int64_t i, Type ty)
      : ExprNode(kKind, std::move(ty)), tuple_(std::move(t)), index_(i) {}
  Expr tuple_;
  int64_t index_;
};

// A scalar literal: `42` (int64), `1.5` (float64), `true` (bool).
class PrimValueNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPrimValue;
  static Ref<PrimValueNode> Int(int64_t v);
  static Ref<PrimValueNode> Float(double v);
  static Ref<PrimValueNode> Bool(bool v);
  DataType dtype() const { return dtype_; }
  int64_t int_value() const { return i_; }  // also bool (0/1)
  double float_value() const { return f_; }

 private:
  PrimValueNode(DataType dt, int64_t i, double f);
  DataType dtype_;
  int64_t i_;
  double f_;
};

// A shape value: `shape[(2, n)]` (Relax's `R.shape([2, n])`, a ShapeExpr),
// of type `Shape[(2, n)]`. Its dimensions are constants or symbolic
// dimensions bound in scope.
class ShapeExprNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kShapeExpr;
  static Ref<ShapeExprNode> Make(std::vector<Dim> values);
  const std::vector<Dim>& values() const { return values_; }
  // True iff every dimension is a constant.
  bool IsStatic() const;

 private:
  ShapeExprNode(std::vector<Dim> v, Type t)
      : ExprNode(kKind, std::move(t)), values_(std::move(v)) {}
  std::vector<Dim> values_;
};
using ShapeExpr = Ref<ShapeExprNode>;

// A symbolic int64 value: `prim[n + 1]` (Relax's R.prim_value(n + 1), a
// PrimValue whose value is an expression), of type `Prim[int64, value=n + 1]`.
// Its names must be bound in scope. A constant value is the literal instead.
class PrimExprNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPrimExpr;
  // The literal `PrimValueNode::Int` when `value` is a constant.
  static Expr Make(Dim value);
  const Dim& value() const { return value_; }

 private:
  PrimExprNode(Dim v, Type t) : ExprNode(kKind, std::move(t)), value_(v) {}
  Dim value_;
};

// `"text"`.
class StringImmNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kStringImm;
  static Ref<StringImmNode> Make(std::string value);
  const std::string& value() const { return value_; }

 private:
  explicit StringImmNode(std::string v);
  std::string value_;
};

// A constant tensor: `const<Tensor[(2, 2), float32]>[1, 2, 3, 4]`. The data
// is little-endian, row-major, and shared between copies of the node; PLIR
// owns it or borrows it (ir/tensor_bytes.h), and never writes it.
class ConstantNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kConstant;
  // Fails unless `type` is a tensor type with a static shape and known dtype
  // and `data` holds exactly NumElements() * DataTypeSize(dtype) bytes.
  static StatusOr<Ref<ConstantNode>> Make(Type type, std::shared_ptr<const TensorBytes> data);
  const TensorTypeNode& tensor_type() const { return *As<TensorTypeNode>(type_); }
  const TensorBytes& data() const { return *data_; }
  const std::shared_ptr<const TensorBytes>& data_ptr() const { return data_; }
  // The hash of data() that structural hashing mixes in
  // (std::hash<std::string_view> of the bytes), computed on the first call
  // and kept in the node: a bound weight is hashed once, not once per
  // structural hash of every module that shares it (TVM users saw 40 s
  // instead of 1 s hashing modules with their weights, apache/tvm#14675).
  // Safe to call from several threads.
  uint64_t DataHash() const {
    uint64_t h = data_hash_.load(std::memory_order_relaxed);
    return h != 0 ? h : ComputeDataHash();
  }

 private:
  ConstantNode(Type t, std::shared_ptr<const TensorBytes> d)
      : ExprNode(kKind, std::move(t)), data_(std::move(d)) {}
  uint64_t ComputeDataHash() const;
  std::shared_ptr<const TensorBytes> data_;
  // 0: not computed yet (a hash that is 0 is recomputed on every call).
  mutable std::atomic<uint64_t> data_hash_{0};
};

class OpNode;

// A call of an op, of a module function (`@f(...)`). Make it through
// MakeOpCall / MakeGlobalCall in op.h, which infer its type.
class CallNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kCall;
  // Low level: builds the node with an already-computed `type`.
  static Ref<CallNode> MakeUnchecked(Expr callee, std::vector<Expr> args, Attrs attrs,
                                     std::vector<Type> sinfo_args, Type type);
  // The same, moving the elements out of `args` and `sinfo_args` and leaving
  // both empty with their capacity, for a caller that reuses them (the text
  // parser builds a million calls through one pair of vectors).
  static Ref<CallNode> MakeUncheckedFrom(Expr callee, std::vector<Expr>& args, Attrs attrs,
                                         std::vector<Type>& sinfo_args, Type type);
  const Expr& callee() const { return callee_; }
  ExprSpan args() const { return {Args::Data(this), nargs_}; }
  const Attrs& attrs() const { return attrs_; }
  TypeSpan sinfo_args() const { return {Sinfo::Data(this, nargs_), nsinfo_}; }
  // Whether this op call's type is the one its op's inference gave when it
  // was made (MakeOpCall and MakeOpCallFrom, which the parser and the
  // rewriting SDK build every op call with, mark it): the node and its
  // operands never change, so the verifier need not infer it again. Calls
  // made with MakeUnchecked (a loader's recorded types, a plugin's own
  // choice) are not marked, and the verifier checks them.
  bool type_inferred() const { return spare() & 1; }

  // Internal: the bytes this node occupies with its inline operands.
  size_t AllocSize() const {
    return sizeof(CallNode) + nargs_ * sizeof(Expr) + nsinfo_ * sizeof(Type);
  }
  ~CallNode() {
    Args::Destroy(Args::Data(this), nargs_);
    Sinfo::Destroy(Sinfo::Data(this, nargs_), nsinfo_);
  }

 private:
  // Arguments, then sinfo_args, right after the object (both one pointer each).
  using Args = internal::InlineArray<Expr, CallNode>;
  using Sinfo = internal::InlineArray<Type, CallNode>;
  static_assert(sizeof(Expr) == sizeof(Type));
  CallNode(Expr c, std::vector<Expr>& a, Attrs at, std::vector<Type>& s, Type t)
      : ExprNode(kKind, std::move(t)),
        callee_(std::move(c)),
        attrs_(std::move(at)),
        nargs_(static_cast<uint32_t>(a.size())),
        nsinfo_(static_cast<uint32_t>(s.size())) {
    Args::Init(Args::Data(this), a);
    Sinfo::Init(Sinfo::Data(this, nargs_), s);
  }
  // Marks type_inferred(), on a node no one else holds yet.
  friend StatusOr<Expr> MakeOpCallFrom(const Ref<OpNode>& op, std::vector<Expr>& args, Attrs attrs,
                                       std::vector<Type>& sinfo_args);
  Expr callee_;
  Attrs attrs_;
  uint32_t nargs_;
  uint32_t nsinfo_;
};
static_assert(sizeof(CallNode) == 40, "a call is five words plus its operands");

class SeqExprNode;
using SeqExpr = Ref<SeqExprNode>;

// `if (cond) { ... } else { ... }`.
class IfNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kIf;
  // Fails if `cond`'s type is known not to be a boolean scalar.
  static StatusOr<Expr> Make(Expr cond, SeqExpr then_body, SeqExpr else_body);
  // Low level: builds the node with an already-computed `type`.
  static Expr MakeUnchecked(Expr cond, SeqExpr then_body, SeqExpr else_body, Type type);
  const Expr& cond() const { return cond_; }
  const SeqExpr& then_body() const { return then_; }
  const SeqExpr& else_body() const { return else_; }

 private:
  IfNode(Expr c, SeqExpr t, SeqExpr e, Type ty);
  Expr cond_;
  SeqExpr then_;
  SeqExpr else_;
};

// `%var = value;`.
class VarBindingNode final : public Node {
 public:
  static constexpr NodeKind kKind = NodeKind::kVarBinding;
  static Ref<VarBindingNode> Make(Var var, Expr value);
  const Var& var() const { return var_; }
  const Expr& value() const { return value_; }

 private:
  VarBindingNode(Var v, Expr e) : Node(kKind), var_(std::move(v)), value_(std::move(e)) {}
  Var var_;
  Expr value_;
};
using Binding = Ref<VarBindingNode>;
static_assert(sizeof(VarBindingNode) == 24, "a binding is three words");

// An ordinary or dataflow block of bindings. In a dataflow block, the
// bindings whose variable is not a dataflow variable are its outputs.
class BindingBlockNode final : public Node {
 public:
  static constexpr NodeKind kKind = NodeKind::kBindingBlock;
  static Ref<BindingBlockNode> Make(std::vector<Binding> bindings, bool is_dataflow);
  std::span<const Binding> bindings() const { return {Bindings::Data(this), n_}; }
  bool is_dataflow() const { return spare() & 1; }

  // Internal: the bytes this node occupies with its inline bindings.
  size_t AllocSize() const { return sizeof(BindingBlockNode) + n_ * sizeof(Binding); }
  ~BindingBlockNode() { Bindings::Destroy(Bindings::Data(this), n_); }

 private:
  using Bindings = internal::InlineArray<Ref<VarBindingNode>, BindingBlockNode>;
  BindingBlockNode(std::vector<Ref<VarBindingNode>>& b, bool df)
      : Node(kKind), n_(static_cast<uint64_t>(b.size())) {
    spare() = df ? 1 : 0;
    Bindings::Init(Bindings::Data(this), b);
  }
  uint64_t n_;
};
using Block = Ref<BindingBlockNode>;

// A body: blocks of bindings, then a result expression.
class SeqExprNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kSeqExpr;
  // Normalizes so that text round trips: empty ordinary blocks are dropped
  // and adjacent ordinary blocks are merged (the text cannot tell them apart).
  static SeqExpr Make(std::vector<Block> blocks, Expr result);
  const std::vector<Block>& blocks() const { return blocks_; }
  const Expr& result() const { return result_; }

 private:
  SeqExprNode(std::vector<Block> b, Expr r)
      : ExprNode(kKind, r->type()), blocks_(std::move(b)), result_(std::move(r)) {}
  std::vector<Block> blocks_;
  Expr result_;
};

// `fn(%x: T, ...) -> R { body }`: a local function (Relax's nested
// relax.Function), a value of type Callable[(T, ...), R]. Its body may use
// the variables of the enclosing scopes (a closure). The type is pure iff
// the body has no side effect (calls of module functions count as one).
class LocalFnNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kLocalFn;
  // `ret_type` may be null: the body's type is used.
  static Ref<LocalFnNode> Make(std::vector<Var> params, Type ret_type, SeqExpr body);
  const std::vector<Var>& params() const { return params_; }
  const Type& ret_type() const { return ret_type_; }
  const SeqExpr& body() const { return body_; }
  const FuncTypeNode& func_type() const { return *static_cast<const FuncTypeNode*>(type_.get()); }

 private:
  LocalFnNode(std::vector<Var> p, Type r, SeqExpr b, Type t)
      : ExprNode(kKind, std::move(t)),
        params_(std::move(p)),
        ret_type_(std::move(r)),
        body_(std::move(b)) {}
  std::vector<Var> params_;
  Type ret_type_;
  SeqExpr body_;
};
using LocalFn = Ref<LocalFnNode>;

// Common base of module items: `def` functions and `extern` kernels.
class ItemNode : public Node {
 public:
  const std::string& name() const { return name_; }
  const std::vector<Var>& params() const { return params_; }
  const Type& ret_type() const { return ret_type_; }
  const Attrs& attrs() const { return attrs_; }

 protected:
  ItemNode(NodeKind k, std::string name, std::vector<Var> params, Type ret, Attrs attrs)
      : Node(k),
        name_(std::move(name)),
        params_(std::move(params)),
        ret_type_(std::move(ret)),
        attrs_(std::move(attrs)) {}
  std::string name_;
  std::vector<Var> params_;
  Type ret_type_;
  Attrs attrs_;
};
using Item = Ref<ItemNode>;

// `def @name(params) -> ret attrs {...} { body }`.
class FunctionNode final : public ItemNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kFunction;
  // `ret_type` may be null: the body's type is used.
  static Ref<FunctionNode> Make(std::string name, std::vector<Var> params, Type ret_type,
                                SeqExpr body, Attrs attrs = Attrs());
  const SeqExpr& body() const { return body_; }

 private:
  static void NumberNewVariables(const FunctionNode& f);
  FunctionNode(std::string n, std::vector<Var> p, Type r, SeqExpr b, Attrs a)
      : ItemNode(kKind, std::move(n), std::move(p), std::move(r), std::move(a)),
        body_(std::move(b)) {}
  SeqExpr body_;
};
using Function = Ref<FunctionNode>;

// `extern @name(params) -> ret`: an opaque kernel, callable through call_tir.
class ExternFuncNode final : public ItemNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kExternFunc;
  static Ref<ExternFuncNode> Make(std::string name, std::vector<Var> params, Type ret_type,
                                  Attrs attrs = Attrs());

 private:
  using ItemNode::ItemNode;
};
using ExternFunc = Ref<ExternFuncNode>;

// Returns true iff `e` is a leaf that normal form allows as an operand:
// a variable, global, literal, constant or op.
bool IsAtomic(const Expr& e);

}  // namespace plir

#endif  // PLIR_IR_EXPR_H_
