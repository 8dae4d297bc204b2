// Reference kernels of the elementwise ops: arithmetic with broadcasting, relu, astype.
#include "kernels/internal/elements.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

enum class BinOp { kAdd, kSub, kMul, kDiv };

OpEvalFn BinaryKernel(std::string op, BinOp kind) {
  return [op, kind](const std::vector<Tensor>& args, const Attrs&) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 2));
    const Tensor& a = args[0];
    const Tensor& b = args[1];
    if (a.dtype != b.dtype) return InvalidArgument(op + ": dtypes differ");
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShape(a.shape, b.shape));
    auto sa = Strides(a.shape), sb = Strides(b.shape);
    if (IsInteger(a.dtype)) {
      int size = DataTypeSize(a.dtype);
      const char* pa = a.data->data();
      const char* pb = b.data->data();
      for (int64_t i = 0; kind == BinOp::kDiv && i < b.NumElements(); ++i)
        if (LoadInt(b.dtype, pb + i * size) == 0) return InvalidArgument(op + ": integer division by zero");
      return IntTensor(op, a.dtype, shape, [&](int64_t i, i128* r) {
        i128 x = LoadInt(a.dtype, pa + BroadcastIndex(i, shape, a.shape, sa) * size);
        i128 y = LoadInt(b.dtype, pb + BroadcastIndex(i, shape, b.shape, sb) * size);
        switch (kind) {
          case BinOp::kAdd: return !__builtin_add_overflow(x, y, r);
          case BinOp::kSub: return !__builtin_sub_overflow(x, y, r);
          case BinOp::kMul: return !__builtin_mul_overflow(x, y, r);
          case BinOp::kDiv: *r = x / y; return true;  // truncates toward zero
        }
        return false;
      });
    }
    bool is_bool = a.dtype == DataType::kBool;
    return MakeTensor(a.dtype, shape, [&](int64_t i) {
      double x = a.GetDouble(BroadcastIndex(i, shape, a.shape, sa));
      double y = b.GetDouble(BroadcastIndex(i, shape, b.shape, sb));
      switch (kind) {
        case BinOp::kAdd: return x + y;
        case BinOp::kSub: return x - y;
        case BinOp::kMul: return x * y;
        case BinOp::kDiv: return is_bool ? (y == 0 ? 0.0 : x / y) : x / y;
      }
      return 0.0;
    });
  };
}

StatusOr<Tensor> Relu(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.relu", args, 1));
  const Tensor& a = args[0];
  if (IsInteger(a.dtype)) {
    int size = DataTypeSize(a.dtype);
    return IntTensor("nn.relu", a.dtype, a.shape, [&](int64_t i, i128* r) {
      i128 x = LoadInt(a.dtype, a.data->data() + i * size);
      *r = x > 0 ? x : 0;
      return true;
    });
  }
  return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return std::max(a.GetDouble(i), 0.0); });
}

StatusOr<Tensor> Astype(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("astype", args, 1));
  const Tensor& a = args[0];
  PLIR_ASSIGN_OR_RETURN(DataType dt, DtypeAttr("astype", attrs, DataType::kUnknown));
  if (dt == DataType::kUnknown) return InvalidArgument("astype: dtype needed");
  if (IsInteger(dt) && !IsFloat(a.dtype)) {  // integer to integer: exact, checked
    int size = DataTypeSize(a.dtype);
    return IntTensor("astype", dt, a.shape, [&](int64_t i, i128* r) {
      *r = LoadInt(a.dtype, a.data->data() + i * size);
      return true;
    });
  }
  return MakeTensor(dt, a.shape, [&](int64_t i) { return a.GetDouble(i); });
}

}  // namespace

void RegisterElementwiseKernels(OpKernelTable& t) {
  Set(t, "add", BinaryKernel("add", BinOp::kAdd));
  Set(t, "subtract", BinaryKernel("subtract", BinOp::kSub));
  Set(t, "multiply", BinaryKernel("multiply", BinOp::kMul));
  Set(t, "divide", BinaryKernel("divide", BinOp::kDiv));
  Set(t, "nn.relu", Relu);
  Set(t, "astype", Astype);
}

}  // namespace plir::internal
