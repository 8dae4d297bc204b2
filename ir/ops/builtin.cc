// Builtins: call_tir, call_packed, match_cast, stop_lift_params, vm.kill_object.
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

Type SinfoResult(TypeSpan sinfo) {
  if (sinfo.empty()) return ObjectTypeNode::Get();
  if (sinfo.size() == 1) return sinfo[0];
  return TupleTypeNode::Make(ToVector(sinfo));
}

StatusOr<Type> InferCallTir(const Args& args, const Attrs&, TypeSpan sinfo) {
  if (args[0]->kind() != NodeKind::kGlobalVar)
    return InvalidArgument("call_tir: the first argument must be a global extern kernel (@name)");
  if (args[1]->kind() != NodeKind::kTuple && args[1]->type()->kind() != NodeKind::kTupleType &&
      args[1]->type()->kind() != NodeKind::kObjectType)
    return InvalidArgument("call_tir: the second argument must be a tuple of arguments");
  if (args.size() == 3 && args[2]->type()->kind() != NodeKind::kShapeType &&
      args[2]->type()->kind() != NodeKind::kObjectType)
    return InvalidArgument("call_tir: the third argument (tir_vars) must be a shape value, got " +
                           TypeToString(args[2]->type()));
  if (sinfo.empty()) return InvalidArgument("call_tir requires sinfo_args (the result type)");
  return SinfoResult(sinfo);
}

StatusOr<Type> InferCallPacked(const Args& args, const Attrs&, TypeSpan sinfo) {
  if (args[0]->kind() != NodeKind::kStringImm)
    return InvalidArgument("call_packed: the first argument must be the function name string");
  return SinfoResult(sinfo);
}

// match_cast(value, sinfo_args=[T]): the value, checked at run time to have
// type T; the symbolic dimensions of T not bound before are bound here (by
// the value's shape), as Relax's MatchCast binding does.
StatusOr<Type> InferMatchCast(const Args& args, const Attrs&, TypeSpan sinfo) {
  if (sinfo.size() != 1)
    return InvalidArgument(
        "match_cast requires exactly one type in sinfo_args (the type to match)");
  if (!TypeCompatible(args[0]->type(), sinfo[0]))
    return InvalidArgument("match_cast: a value of type " + TypeToString(args[0]->type()) +
                           " can never match " + TypeToString(sinfo[0]));
  return sinfo[0];
}

}  // namespace

void RegisterBuiltinOps(OpRegistry& r) {
  // call_tir's own pattern is opaque: FuseOps reads the kernel's `op_pattern`.
  Add(r, Def("call_tir",
             "call of an extern kernel: call_tir(@k, (args...), sinfo_args=[T]); an optional third "
             "argument, a shape value, gives the kernel symbolic values (Relax's tir_vars)",
             2, 3, InferCallTir, {}, true, OpPattern::kOpaque));
  Add(r, Def("call_packed", "call of a runtime function by name", 1, -1, InferCallPacked, {},
             /*pure=*/false));
  Add(r, Def("match_cast",
             "the value, checked to have the type sinfo_args[0], which binds its new "
             "symbolic dimensions",
             1, 1, InferMatchCast));
  Add(r, Def("builtin.stop_lift_params",
             "the value itself; LiftTransformParams lifts nothing past it (Relax's "
             "R.builtin.stop_lift_params)",
             1, 1,
             [](const Args& a, const Attrs&, TypeSpan) -> StatusOr<Type> { return a[0]->type(); }));
  Add(r, Def(
             "vm.kill_object", "frees a value", 1, 1,
             [](const Args&, const Attrs&, TypeSpan) -> StatusOr<Type> {
               return TupleTypeNode::Make({});
             },
             {}, /*pure=*/false));
}

}  // namespace plir::internal
