// Reference kernels of the creation ops: zeros, ones, full, arange.
#include "kernels/internal/elements.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

// zeros, ones, full.
OpEvalFn Creation(std::string op) {
  return [op](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    std::vector<int64_t> shape = IntList(attrs, "shape", {});
    for (int64_t d : shape)
      if (d < 0) return InvalidArgument(op + ": negative dimension");
    DataType dflt = op == "full" && !args.empty() ? args[0].dtype : DataType::kUnknown;
    PLIR_ASSIGN_OR_RETURN(DataType dt, DtypeAttr(op, attrs, dflt));
    if (dt == DataType::kUnknown) return InvalidArgument(op + ": dtype needed");
    if (op != "full")
      return MakeTensor(dt, shape, [&](int64_t) { return op == "ones" ? 1.0 : 0.0; });
    if (args.size() != 1 || !args[0].data || args[0].NumElements() != 1)
      return InvalidArgument("full: the fill value must be a scalar tensor");
    if (IsInteger(dt) && !IsFloat(args[0].dtype)) {  // exact
      i128 v = LoadInt(args[0].dtype, args[0].data->data());
      return IntTensor(op, dt, shape, [&](int64_t, i128* r) {
        *r = v;
        return true;
      });
    }
    double fill = args[0].GetDouble(0);
    return MakeTensor(dt, shape, [&](int64_t) { return fill; });
  };
}

StatusOr<Tensor> Arange(const std::vector<Tensor>&, const Attrs& attrs) {
  auto num = [&](const char* k, double def) {
    const AttrValue* v = attrs.Get(k);
    if (!v) return def;
    return v->kind() == AttrValue::Kind::kInt ? static_cast<double>(v->as_int()) : v->as_float();
  };
  double start = num("start", 0), end = num("end", 0), step = num("step", 1);
  if (step == 0) return InvalidArgument("arange: step must not be 0");
  double count = std::ceil((end - start) / step);
  if (!(count < 9.0e15)) return InvalidArgument("arange: too many elements");
  int64_t n = static_cast<int64_t>(std::max(0.0, count));
  PLIR_ASSIGN_OR_RETURN(DataType dt, DtypeAttr("arange", attrs, DataType::kInt64));
  return MakeTensor(dt, {n}, [&](int64_t i) { return start + step * static_cast<double>(i); });
}

}  // namespace

void RegisterCreationKernels(OpKernelTable& t) {
  Set(t, "zeros", Creation("zeros"));
  Set(t, "ones", Creation("ones"));
  Set(t, "full", Creation("full"));
  Set(t, "arange", Arange);
}

}  // namespace plir::internal
