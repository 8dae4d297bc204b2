// Operators and the op registry.
//
// An op has a name (`add`, `nn.conv2d`), an arity, an attribute schema and a
// type-inference function. The registry holds the core ops of the spec from
// the first call of OpRegistry::Global(); plugins register more at run time.
// Registration is explicit (no static initializers).
#ifndef PLIR_IR_OP_H_
#define PLIR_IR_OP_H_

#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/status.h"
#include "ir/support/closest_names.h"  // ClosestNames, for op and attribute names
#include "ir/support/registry.h"

namespace plir {

// A CPU tensor (kernels/tensor.h): ops name it in their optional kernel
// signature; the IR core never computes with one.
struct Tensor;

enum class AttrKind {
  kInt,
  kFloat,
  kBool,
  kString,
  kIntList,
  kFloatList,
  kType,
  kAny,
  kStringList,
  kMap
};
const char* AttrKindName(AttrKind k);

struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::kAny;
  bool required = false;
  std::optional<AttrValue> default_value;  // documented default when absent
};

// Computes the result type of a call from its (already typed) arguments,
// attributes (validated against the schema) and sinfo_args.
// The operands are spans (calls store them inline).
using TypeInferFn =
    std::function<StatusOr<Type>(ExprSpan args, const Attrs& attrs, TypeSpan sinfo_args)>;
// Evaluates a call of the op on concrete tensors. A plugin's op may carry
// its kernel here; the core ops' reference kernels are in kernels/
// (kernels/op_kernels.h looks both up). Errors are values: shape errors, overflow, division by
// zero.
using OpEvalFn =
    std::function<StatusOr<Tensor>(const std::vector<Tensor>& args, const Attrs& attrs)>;
// Multiply-adds one call costs, from its arguments and output size (caps
// constant folding). Absent: the output's element count.
using OpWorkFn = std::function<int64_t(const std::vector<Tensor>& args, int64_t out_elements)>;

// How an op's output elements depend on its inputs, for fusion: TVM's
// TOpPattern, with TVM's numbering (the `op_pattern` integer attribute of an
// extern kernel uses the same values). Lower is simpler; FuseOps fuses by it.
enum class OpPattern : int {
  kElemWise = 0,    // out[i] depends on in[i] only (same shape)
  kBroadcast = 1,   // out[i] depends on in[broadcast(i)]
  kInjective = 2,   // each output element depends on one input element (reshape, transpose)
  kCommReduce = 3,  // a commutative reduction (sum, max)
  kOutEWiseFusable =
      4,        // a complex op whose output can take fused elementwise ops (conv2d, matmul)
  kTuple = 7,   // a tuple node (FuseOps internal)
  kOpaque = 8,  // not fusable
};
// "elemwise", "broadcast", "injective", "comm_reduce", "out_elemwise_fusable",
// "tuple", "opaque".
const char* OpPatternName(OpPattern p);
// The pattern for a TVM integer (0-4, 7, 8); anything else is kOpaque.
OpPattern OpPatternFromInt(int64_t v);

struct OpDef {
  std::string name;
  std::string description;
  int min_args = 0;
  int max_args = 0;  // -1: variadic
  std::vector<AttrSpec> attrs;
  TypeInferFn infer;
  bool pure = true;                        // false: the call has side effects (never removed)
  OpPattern pattern = OpPattern::kOpaque;  // fusion pattern kind (opaque: never fused)
  std::string origin = "core";             // who registered it (for duplicate errors)
  // Optional: how to compute the op (FoldConstant and plir-run use it; an op
  // without one is neither folded nor executable).
  OpEvalFn eval;
  OpWorkFn work;
};

class OpNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kOp;
  const std::string& name() const { return def_.name; }
  const OpDef& def() const { return def_; }
  bool pure() const { return def_.pure; }
  OpPattern pattern() const { return def_.pattern; }
  // Returns the spec of attribute `key`, or nullptr.
  const AttrSpec* FindAttr(std::string_view key) const;

 private:
  friend class OpRegistry;
  explicit OpNode(OpDef def);
  OpDef def_;
};
using Op = Ref<OpNode>;

class OpRegistry {
 public:
  // The process-wide registry, holding the core ops of every family. Defined
  // by the //ir/ops target (ir/ops/registry.cc), not by the IR core, which
  // holds only the mechanism: a program gets the core ops by linking them.
  static OpRegistry& Global();

  // Registers `def`. Fails (AlreadyExists, naming both origins) if the name is
  // taken, or (InvalidArgument) if the definition is malformed.
  Status Register(OpDef def);
  // The checks Register makes before the name lookup.
  static Status Validate(const OpDef& def);
  // Returns the op named `name`, or null.
  Op Lookup(std::string_view name) const;
  // Sorted names of all registered ops.
  std::vector<std::string> Names() const;

 private:
  OpRegistry() = default;
  Registry<Op> ops_;
};

// Builds a call of `op`, checking arity and attributes and inferring its type.
StatusOr<Expr> MakeOpCall(const Op& op, std::vector<Expr> args, Attrs attrs = Attrs(),
                          std::vector<Type> sinfo_args = {});
// The same, moving the elements out of `args` and `sinfo_args` and leaving
// both empty with their capacity (CallNode::MakeUncheckedFrom); on an error
// they are left as they were.
StatusOr<Expr> MakeOpCallFrom(const Op& op, std::vector<Expr>& args, Attrs attrs,
                              std::vector<Type>& sinfo_args);
// Checks a call of `op` as MakeOpCall does and returns its inferred type,
// without building the node (the verifier's re-check).
StatusOr<Type> InferOpCallType(const Op& op, ExprSpan args, const Attrs& attrs,
                               TypeSpan sinfo_args);
// Convenience: looks the op up by name in the global registry.
StatusOr<Expr> MakeOpCall(std::string_view op_name, std::vector<Expr> args, Attrs attrs = Attrs(),
                          std::vector<Type> sinfo_args = {});
// The same, from spans (the operands of an existing call).
StatusOr<Expr> MakeOpCall(const Op& op, ExprSpan args, Attrs attrs = Attrs(),
                          TypeSpan sinfo_args = {});
StatusOr<Expr> MakeOpCall(std::string_view op_name, ExprSpan args, Attrs attrs = Attrs(),
                          TypeSpan sinfo_args = {});
// Rebuilds `old` with a new callee and arguments, as ExprMutator does: a call
// of an op re-infers its type (when inference fails, the old type is kept
// and the verifier reports it); other calls keep their type. Attributes and
// sinfo_args are kept.
Expr RebuildCall(const CallNode& old, Expr callee, std::vector<Expr> args);
// Builds a call of a module function whose return type is `ret_type`.
Expr MakeGlobalCall(GlobalVar callee, std::vector<Expr> args, Type ret_type,
                    std::vector<Type> sinfo_args = {});

// Builds a call of a function value (a variable or local function of type
// Callable[(T...), R]): fails unless `callee`'s type is a Callable taking
// as many arguments as given, each compatible with its parameter type. The
// call's type is R.
StatusOr<Expr> MakeValueCall(Expr callee, std::vector<Expr> args);

// The registered ops as documentation: for each op (sorted by name) its
// signature (arity), attributes (kind, required or default), pattern kind,
// purity, origin and description. kMarkdown is docs/ops.md; kText is what
// `plir-opt --list-ops` prints (one op per line, then its attributes).
enum class OpDocFormat { kText, kMarkdown };
std::string RenderOpDocs(const OpRegistry& registry, OpDocFormat format);

}  // namespace plir

#endif  // PLIR_IR_OP_H_
