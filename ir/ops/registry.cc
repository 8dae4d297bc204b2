// The process-wide op registry: every family of ir/ops registered once, on
// first use, explicitly (no static initializers). The registry mechanism
// itself is in the IR core (ir/op.cc); this target supplies its contents.
#include "ir/op.h"
#include "ir/ops/families.h"

namespace plir {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    internal::RegisterElementwiseOps(*r);
    internal::RegisterNnOps(*r);
    internal::RegisterLinalgOps(*r);
    internal::RegisterDataMovementOps(*r);
    internal::RegisterCreationOps(*r);
    internal::RegisterShapeOps(*r);
    internal::RegisterBuiltinOps(*r);
    return r;
  }();
  return *registry;
}

StatusOr<Expr> MakeOpCall(std::string_view op_name, std::vector<Expr> args, Attrs attrs,
                          std::vector<Type> sinfo_args) {
  Op op = OpRegistry::Global().Lookup(op_name);
  if (!op) return NotFound("unknown op '" + std::string(op_name) + "'");
  return MakeOpCall(op, std::move(args), std::move(attrs), std::move(sinfo_args));
}

StatusOr<Expr> MakeOpCall(std::string_view op_name, ExprSpan args, Attrs attrs,
                          TypeSpan sinfo_args) {
  return MakeOpCall(op_name, ToVector(args), std::move(attrs), ToVector(sinfo_args));
}

}  // namespace plir
