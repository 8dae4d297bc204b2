// Reference kernel of matmul.
#include "kernels/internal/elements.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

StatusOr<Tensor> Matmul(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("matmul", args, 2));
  Tensor a = args[0], b = args[1];
  if (a.dtype != b.dtype) return InvalidArgument("matmul: dtypes differ");
  if (a.shape.empty() || b.shape.empty()) return InvalidArgument("matmul: scalar operand");
  bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  if (a_vec) a.shape.insert(a.shape.begin(), 1);
  if (b_vec) b.shape.push_back(1);
  int64_t n = a.shape[a.shape.size() - 2], k = a.shape.back(), m = b.shape.back();
  if (b.shape[b.shape.size() - 2] != k) return InvalidArgument("matmul: contraction mismatch");
  std::vector<int64_t> ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastShape(ba, bb));
  auto sa = Strides(ba), sb = Strides(bb);
  std::vector<int64_t> shape = batch;
  shape.push_back(n);
  shape.push_back(m);
  auto offsets = [&](int64_t flat, int64_t* i, int64_t* j, int64_t* oa, int64_t* ob) {
    *j = flat % m;
    *i = (flat / m) % n;
    int64_t bi = flat / (m * n);
    *oa = BroadcastIndex(bi, batch, ba, sa) * n * k;
    *ob = BroadcastIndex(bi, batch, bb, sb) * k * m;
  };
  Tensor r;
  if (IsInteger(a.dtype)) {
    int size = DataTypeSize(a.dtype);
    StatusOr<Tensor> made = IntTensor("matmul", a.dtype, shape, [&](int64_t flat, i128* s) {
      int64_t i, j, oa, ob;
      offsets(flat, &i, &j, &oa, &ob);
      *s = 0;
      for (int64_t t = 0; t < k; ++t) {
        i128 p;
        if (__builtin_mul_overflow(LoadInt(a.dtype, a.data->data() + (oa + i * k + t) * size),
                                   LoadInt(b.dtype, b.data->data() + (ob + t * m + j) * size), &p) ||
            __builtin_add_overflow(*s, p, s))
          return false;
      }
      return true;
    });
    if (!made.ok()) return made.status();
    r = std::move(made).value();
  } else {
    r = MakeTensor(a.dtype, shape, [&](int64_t flat) {
      int64_t i, j, oa, ob;
      offsets(flat, &i, &j, &oa, &ob);
      double s = 0;
      for (int64_t t = 0; t < k; ++t) s += a.GetDouble(oa + i * k + t) * b.GetDouble(ob + t * m + j);
      return s;
    });
  }
  if (a_vec) r.shape.erase(r.shape.end() - 2);
  if (b_vec) r.shape.pop_back();
  return r;
}

}  // namespace

void RegisterLinalgKernels(OpKernelTable& t) {
  Set(t, "matmul", Matmul, [](const std::vector<Tensor>& args, int64_t out) {
    return args.size() == 2 && !args[0].shape.empty() ? out * args[0].shape.back() : out;
  });
}

}  // namespace plir::internal
