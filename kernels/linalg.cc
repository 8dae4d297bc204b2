// Kernels of matmul and einsum. float32 / float64 matmul (batched, with
// broadcast batch dimensions) runs through OpenBLAS's GEMM; other dtypes
// and einsum use the reference loops.
#include <climits>

#include "ir/ops/einsum_subscripts.h"
#include "kernels/internal/elements.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

// out (batch..., n, m) = a (ba..., n, k) x b (bb..., k, m), batch the
// broadcast of ba and bb: one GEMM per batch element, or a single one when
// b has no batch (a's batch folds into the rows).
template <typename T>
void FastMatmul(const T* a, const T* b, T* out, int64_t n, int64_t k, int64_t m,
                const std::vector<int64_t>& batch, const std::vector<int64_t>& ba,
                const std::vector<int64_t>& bb) {
  int64_t nb = Product(batch);
  if (nb == 0 || n == 0 || m == 0) return;
  if (k == 0) {
    std::fill(out, out + nb * n * m, T(0));
    return;
  }
  if (Product(bb) == 1 && Product(ba) == nb) {
    Gemm(false, false, nb * n, m, k, T(1), a, k, b, m, T(0), out, m);
    return;
  }
  auto sa = Strides(ba), sb = Strides(bb);
  auto one = [&](int64_t bi, bool split) {
    int64_t oa = BroadcastIndex(bi, batch, ba, sa) * n * k;
    int64_t ob = BroadcastIndex(bi, batch, bb, sb) * k * m;
    if (split)
      Gemm(false, false, n, m, k, T(1), a + oa, k, b + ob, m, T(0), out + bi * n * m, m);
    else
      GemmOneThread(false, false, n, m, k, T(1), a + oa, k, b + ob, m, T(0), out + bi * n * m, m);
  };
  // Small products (attention's heads): the batch splits over the threads,
  // one single-threaded GEMM each; large ones split themselves.
  int64_t per = n * m * k;
  if (per >= (int64_t{1} << 22) || !BlasThreadsOwned()) {
    for (int64_t bi = 0; bi < nb; ++bi) one(bi, true);
    return;
  }
  ParallelRange(nb, std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(1, per)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t bi = lo; bi < hi; ++bi) one(bi, false);
                });
}

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
  std::vector<int64_t> ba(a.shape.begin(), a.shape.end() - 2),
      bb(b.shape.begin(), b.shape.end() - 2);
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastShape(ba, bb));
  auto sa = Strides(ba), sb = Strides(bb);
  std::vector<int64_t> shape = batch;
  shape.push_back(n);
  shape.push_back(m);
  auto rows = CheckedMul(Product(batch), n);
  if (FastKernelsEnabled() && FastFloat(a) && rows && *rows < INT_MAX && k < INT_MAX &&
      m < INT_MAX) {
    PLIR_RETURN_IF_ERROR(CheckResult("matmul", a.dtype, shape));
    NoteFastPath();
    // FastMatmul writes every element (sgemm with beta 0; zeros for k == 0).
    Tensor r = NewTensorForOverwrite(a.dtype, shape);
    if (a.dtype == DataType::kFloat32)
      FastMatmul(DataOf<float>(a), DataOf<float>(b), MutableDataOf<float>(r), n, k, m, batch, ba,
                 bb);
    else
      FastMatmul(DataOf<double>(a), DataOf<double>(b), MutableDataOf<double>(r), n, k, m, batch, ba,
                 bb);
    if (a_vec) r.shape.erase(r.shape.end() - 2);
    if (b_vec) r.shape.pop_back();
    return r;
  }
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
                                   LoadInt(b.dtype, b.data->data() + (ob + t * m + j) * size),
                                   &p) ||
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
      for (int64_t t = 0; t < k; ++t)
        s += a.GetDouble(oa + i * k + t) * b.GetDouble(ob + t * m + j);
      return s;
    });
  }
  if (a_vec) r.shape.erase(r.shape.end() - 2);
  if (b_vec) r.shape.pop_back();
  return r;
}

// einsum: the tuple's tensors arrive as the arguments. Every combination of
// the labels is visited once (a label repeated in an operand reads its
// diagonal: the strides add); at most 2^30 combinations.
StatusOr<Tensor> Einsum(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "einsum";
  if (args.empty()) return InvalidArgument("einsum: no operands");
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, args.size()));
  DataType dt = args[0].dtype;
  std::vector<int> ranks;
  for (const Tensor& t : args) {
    if (t.dtype != dt) return InvalidArgument("einsum: the operands' dtypes differ");
    ranks.push_back(static_cast<int>(t.shape.size()));
  }
  const AttrValue* sub = attrs.Get("subscripts");
  PLIR_ASSIGN_OR_RETURN(EinsumSpec spec, ParseEinsum(sub ? sub->as_string() : "", ranks));
  std::vector<int64_t> size(spec.num_labels, -1);
  for (size_t k = 0; k < args.size(); ++k)
    for (size_t i = 0; i < spec.inputs[k].size(); ++i) {
      int64_t d = args[k].shape[i];
      int64_t& s = size[spec.inputs[k][i]];
      if (s < 0 || s == 1)
        s = d;
      else if (d != 1 && d != s)
        return InvalidArgument("einsum: a label has sizes " + std::to_string(s) + " and " +
                               std::to_string(d));
    }
  std::vector<int> labels = spec.output;  // output labels, then the summed ones
  std::vector<bool> in_out(spec.num_labels, false);
  for (int l : spec.output) in_out[l] = true;
  for (int l = 0; l < spec.num_labels; ++l)
    if (size[l] >= 0 && !in_out[l]) labels.push_back(l);
  std::vector<int64_t> shape;
  for (int l : spec.output) shape.push_back(size[l]);
  PLIR_RETURN_IF_ERROR(CheckResult(op, dt, shape));
  i128 combos = 1;
  for (int l : labels) {
    combos *= size[l];
    if (combos > (i128{1} << 30))
      return ResourceExhausted("einsum: more than 2^30 products to sum");
  }
  // Each operand's stride per label (0 where broadcast).
  std::vector<std::vector<int64_t>> stride(args.size(), std::vector<int64_t>(labels.size(), 0));
  for (size_t k = 0; k < args.size(); ++k) {
    auto st = Strides(args[k].shape);
    for (size_t i = 0; i < spec.inputs[k].size(); ++i) {
      if (args[k].shape[i] == 1 && size[spec.inputs[k][i]] != 1) continue;
      size_t j = std::find(labels.begin(), labels.end(), spec.inputs[k][i]) - labels.begin();
      stride[k][j] += st[i];
    }
  }
  int64_t out_n = Product(shape);
  int64_t inner = 1;
  for (size_t j = spec.output.size(); j < labels.size(); ++j) inner *= size[labels[j]];
  bool exact = !IsFloat(dt);
  std::vector<int64_t> c(labels.size());
  auto offset = [&](size_t k) {
    int64_t o = 0;
    for (size_t j = 0; j < labels.size(); ++j) o += c[j] * stride[k][j];
    return o;
  };
  auto coords = [&](int64_t oi, int64_t r) {
    for (size_t j = spec.output.size(); j-- > 0;) {
      c[j] = oi % size[labels[j]];
      oi /= size[labels[j]];
    }
    for (size_t j = labels.size(); j-- > spec.output.size();) {
      c[j] = r % size[labels[j]];
      r /= size[labels[j]];
    }
  };
  if (exact) {
    return IntTensor(op, dt, shape, [&](int64_t oi, i128* sum) {
      *sum = 0;
      for (int64_t r = 0; r < inner; ++r) {
        coords(oi, r);
        i128 p = 1;
        for (size_t k = 0; k < args.size(); ++k)
          if (__builtin_mul_overflow(p, LoadInt(dt, ElemPtr(args[k], offset(k))), &p)) return false;
        if (__builtin_add_overflow(*sum, p, sum)) return false;
      }
      if (dt == DataType::kBool) *sum = *sum != 0;
      return true;
    });
  }
  (void)out_n;
  return MakeTensor(dt, shape, [&](int64_t oi) {
    double sum = 0;
    for (int64_t r = 0; r < inner; ++r) {
      coords(oi, r);
      double p = 1;
      for (size_t k = 0; k < args.size(); ++k) p *= args[k].GetDouble(offset(k));
      sum += p;
    }
    return sum;
  });
}

}  // namespace

// a (..., k) x w^T, w (m, k): one GEMM with w read transposed.
StatusOr<Tensor> MatmulTransposedB(const Tensor& a, const Tensor& w) {
  bool fast = FastKernelsEnabled() && FastFloat(a) && a.dtype == w.dtype && w.shape.size() == 2 &&
              !a.shape.empty() && a.shape.back() == w.shape[1] && w.shape[0] < INT_MAX &&
              w.shape[1] < INT_MAX;
  // a's leading dimensions (only when a has one: a 0-d a is matmul's error).
  std::vector<int64_t> shape(a.shape.begin(), fast ? a.shape.end() - 1 : a.shape.begin());
  auto rows = CheckedMul(Product(shape), 1);
  if (!fast || !rows || *rows >= INT_MAX) {
    PLIR_ASSIGN_OR_RETURN(Tensor wt, EvalOp("permute_dims", {w}, Attrs()));
    return Matmul({a, wt}, Attrs());
  }
  int64_t m = w.shape[0], k = w.shape[1];
  shape.push_back(m);
  PLIR_RETURN_IF_ERROR(CheckResult("matmul", a.dtype, shape));
  NoteFastPath();
  Tensor r = NewTensorForOverwrite(a.dtype, shape);
  if (*rows == 0 || m == 0) return r;
  ForFloat(a, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* out = MutableDataOf<T>(r);
    if (k == 0)  // every element is written
      std::fill(out, out + *rows * m, T(0));
    else
      Gemm(false, true, *rows, m, k, T(1), DataOf<T>(a), k, DataOf<T>(w), k, T(0), out, m);
  });
  return r;
}

void RegisterLinalgKernels(OpKernelTable& t) {
  Set(t, "einsum", Einsum);
  Set(t, "matmul", Matmul, [](const std::vector<Tensor>& args, int64_t out) {
    return args.size() == 2 && !args[0].shape.empty() ? out * args[0].shape.back() : out;
  });
}

}  // namespace plir::internal

namespace plir {
StatusOr<Tensor> MatmulOfTransposed(const Tensor& a, const Tensor& w) {
  return internal::MatmulTransposedB(a, w);
}
}  // namespace plir
