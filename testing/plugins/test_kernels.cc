// A test plugin that brings its own kernels: the op `test.square` (x * x
// elementwise, with an evaluation kernel, so FoldConstant folds it and
// plir-run executes it) and a kernel for the extern `@test_negate` (what
// `call_tir(@test_negate, ...)` runs).
#include <cstdint>
#include <limits>

#include "kernels/op_kernels.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

StatusOr<Tensor> Square(const std::vector<Tensor>& args, const Attrs&) {
  if (args.size() != 1 || !args[0].data) return InvalidArgument("test.square takes one tensor");
  const Tensor& a = args[0];
  if (IsFloat(a.dtype))
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return a.GetDouble(i) * a.GetDouble(i); });
  // Integers: exact, and an error rather than a wrapped result on overflow.
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    int64_t x = a.GetInt(i), r;
    if (__builtin_mul_overflow(x, x, &r)) return InvalidArgument("test.square: overflow");
  }
  return MakeIntTensor(a.dtype, a.shape, [&](int64_t i) { return a.GetInt(i) * a.GetInt(i); });
}

Status Register(PluginHost& host) {
  OpDef sq;
  sq.name = "test.square";
  sq.description = "x * x elementwise (test plugin, with a kernel)";
  sq.min_args = sq.max_args = 1;
  sq.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    return args[0]->type();
  };
  sq.eval = Square;
  PLIR_RETURN_IF_ERROR(host.RegisterOp(std::move(sq)));

  ExternKernelDef neg;
  neg.name = "test_negate";
  neg.description = "-x elementwise (test plugin)";
  neg.fn = [](const std::vector<Tensor>& in, const Type&) -> StatusOr<Tensor> {
    if (in.size() != 1) return InvalidArgument("@test_negate takes one tensor");
    const Tensor& a = in[0];
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return -a.GetDouble(i); });
  };
  return host.RegisterExternKernel(std::move(neg));
}

}  // namespace

PLIR_PLUGIN("test_kernels", "1.0", Register)
