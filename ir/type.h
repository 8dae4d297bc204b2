// Types (Relax's "struct info"): what is statically known about a value.
//
//   Tensor[(16, n), float32]   TensorTypeNode with a shape (dims may be symbolic)
//   Tensor[ndim=2, float32]    known rank, unknown shape
//   Tensor[float32], Tensor    unknown rank (and dtype)
//   (T1, T2)                   TupleTypeNode
//   Object                     ObjectTypeNode: any value
//   Prim[int64]                PrimTypeNode: a scalar primitive value
//   Prim[int64, value=n]       ... known to equal n (a dimension)
//   Shape[(1, n)], Shape[ndim=2]  ShapeTypeNode
//   Callable[(T1, T2), R]      FuncTypeNode: a function value (Relax's
//                              FuncStructInfo); `, pure=false` if calling it
//                              may have a side effect
#ifndef PLIR_IR_TYPE_H_
#define PLIR_IR_TYPE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dim.h"
#include "ir/dtype.h"
#include "ir/node.h"
#include "ir/status.h"
#include "ir/symbol.h"

namespace plir {

// Which names TypeDimNames reports: every name, also those inside
// dimension expressions (`m * n` names m and n: uses), or only dimensions
// that are a bare name (those a parameter's or a match_cast's type binds).
enum class DimNameKind { kAll, kBindable };

// Every type node is interned when made (equal types are one node) and
// immortal: it lives until the process ends and is never reference-counted.
class TypeNode : public Node {
 protected:
  explicit TypeNode(NodeKind kind) : Node(kind) { MakeImmortal(); }
};
using Type = Ref<TypeNode>;

class TensorTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTensorType;
  // Tensor with a known shape (its rank is shape.size()).
  static Type Make(std::vector<Dim> shape, DataType dtype);
  // Tensor with known rank `ndim` (or -1: unknown) and unknown shape.
  static Type MakeRank(int ndim, DataType dtype);

  DataType dtype() const { return dtype_; }
  int ndim() const { return ndim_; }  // -1 if unknown
  bool has_shape() const { return has_shape_; }
  const std::vector<Dim>& shape() const { return shape_; }
  // True iff the shape is known and every dim is a constant.
  bool IsStatic() const;
  // Number of elements; precondition: IsStatic().
  int64_t NumElements() const;

 private:
  TensorTypeNode(DataType dtype, int ndim, bool has_shape, std::vector<Dim> shape)
      : TypeNode(kKind),
        dtype_(dtype),
        ndim_(ndim),
        has_shape_(has_shape),
        shape_(std::move(shape)) {}
  DataType dtype_;
  int ndim_;
  bool has_shape_;
  std::vector<Dim> shape_;
};

class TupleTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTupleType;
  static Type Make(std::vector<Type> fields);
  const std::vector<Type>& fields() const { return fields_; }

 private:
  explicit TupleTypeNode(std::vector<Type> f) : TypeNode(kKind), fields_(std::move(f)) {}
  std::vector<Type> fields_;
};

class ObjectTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kObjectType;
  static Type Get();  // a shared instance

 private:
  ObjectTypeNode() : TypeNode(kKind) {}
};

class PrimTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPrimType;
  static Type Make(DataType dtype);
  // A primitive value known to equal `value` (Relax's R.Prim(value=...)):
  // `Prim[int64, value=n]`. A parameter of this type binds the name n.
  static Type MakeValue(DataType dtype, Dim value);
  DataType dtype() const { return dtype_; }
  bool has_value() const { return has_value_; }
  const Dim& value() const { return value_; }

 private:
  explicit PrimTypeNode(DataType d) : TypeNode(kKind), dtype_(d) {}
  PrimTypeNode(DataType d, Dim v) : TypeNode(kKind), dtype_(d), has_value_(true), value_(v) {}
  DataType dtype_;
  bool has_value_ = false;
  Dim value_;
};

class ShapeTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kShapeType;
  static Type Make(std::vector<Dim> values);
  static Type MakeRank(int ndim);  // -1: unknown rank
  int ndim() const { return ndim_; }
  bool has_values() const { return has_values_; }
  const std::vector<Dim>& values() const { return values_; }

 private:
  ShapeTypeNode(int ndim, bool has, std::vector<Dim> v)
      : TypeNode(kKind), ndim_(ndim), has_values_(has), values_(std::move(v)) {}
  int ndim_;
  bool has_values_;
  std::vector<Dim> values_;
};

// The type of a function value: parameter types, return type, purity
// (Relax's FuncStructInfo with params; `R.Callable([...], R, purity)`).
class FuncTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kFuncType;
  static Type Make(std::vector<Type> params, Type ret, bool pure = true);
  std::span<const Type> params() const { return {fields_.data(), fields_.size() - 1}; }
  const Type& ret() const { return fields_.back(); }
  bool pure() const { return pure_; }
  // Internal: the parameters, then the return type.
  const std::vector<Type>& fields() const { return fields_; }

 private:
  FuncTypeNode(std::vector<Type> f, bool pure)
      : TypeNode(kKind), fields_(std::move(f)), pure_(pure) {}
  std::vector<Type> fields_;
  bool pure_;
};

// The symbolic dimension names `t` mentions (tensor shapes, shape values, a
// Prim type's value, tuple fields), in order of first mention, each once.
// A Callable type's dimensions are its own (its parameters bind them) and
// are not reported. Iterative; any nesting depth.
std::vector<Symbol> TypeDimNames(const Type& t, DimNameKind which = DimNameKind::kAll);

// Returns the text-format spelling of `t` (iterative; any nesting depth).
std::string TypeToString(const Type& t);
void AppendType(const Type& t, std::string* out);

// Returns true iff `a` and `b` may describe the same value: they do not
// contradict each other (dtype, rank, constant dims, tuple arity, kind).
// `Object` and unknown parts are compatible with anything. Symbolic dims are
// compatible with any dim. Iterative.
bool TypeCompatible(const Type& a, const Type& b);

// Returns the most specific type that covers both `a` and `b` (the type of
// an `if` whose branches have these types).
Type JoinTypes(const Type& a, const Type& b);

// Returns true iff two types are structurally identical: since types are
// interned, iff they are the same node. O(1).
bool TypeEqual(const Type& a, const Type& b);

}  // namespace plir

#endif  // PLIR_IR_TYPE_H_
