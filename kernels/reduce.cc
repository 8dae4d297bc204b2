// Reference kernels of the reductions (sum, mean, max, min, prod, variance,
// std), arg-reductions (argmax, argmin), scans (cumsum, cumprod) and
// argsort.
// Integer sums and products are exact (overflow is an error); floats
// accumulate in double and round once.
//
// float32 / float64 sum, mean, max and min over a block of adjacent axes
// (the last ones, or e.g. H and W of NCHW) take a fast path: vectorized
// loops over contiguous rows, accumulating in double.
#include <algorithm>

#include "kernels/internal/elements.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

enum class Red { kSum, kMean, kMax, kMin, kProd, kVar, kStd };

// y[o, j] = reduction over r of x[o, r, j] (outer x red x inner), for the
// output positions o in [o0, o1) and j in [j0, j1).
template <typename T>
void ReduceBlock(Red kind, const T* x, T* y, int64_t red, int64_t inner, int64_t o0, int64_t o1,
                 int64_t j0, int64_t j1) {
  bool is_max = kind == Red::kMax, is_min = kind == Red::kMin;
  for (int64_t o = o0; o < o1; ++o) {
    if (inner == 1) {
      const T* p = x + o * red;
      double acc = 0;
      if (is_max || is_min) {
        int nan = 0;
        T m = p[0];
        if (is_max) {
#pragma omp simd reduction(max : m) reduction(| : nan)
          for (int64_t k = 0; k < red; ++k) {
            m = p[k] > m ? p[k] : m;
            nan |= p[k] != p[k];
          }
        } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
          for (int64_t k = 0; k < red; ++k) {
            m = p[k] < m ? p[k] : m;
            nan |= p[k] != p[k];
          }
        }
        y[o] = nan ? static_cast<T>(NAN) : m;
        continue;
      }
#pragma omp simd reduction(+ : acc)
      for (int64_t k = 0; k < red; ++k) acc += p[k];
      y[o] = static_cast<T>(kind == Red::kMean ? acc / static_cast<double>(red) : acc);
      continue;
    }
    int64_t w = j1 - j0;
    std::vector<double> acc(w, 0.0);
    double* a = acc.data();
    if (is_max || is_min) {
      const T* p = x + o * red * inner + j0;
      for (int64_t j = 0; j < w; ++j) a[j] = p[j];
    }
    for (int64_t r = 0; r < red; ++r) {
      const T* p = x + (o * red + r) * inner + j0;
      if (is_max) {  // NaN sticks: neither comparison replaces it
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) a[j] = (p[j] > a[j] || p[j] != p[j]) ? p[j] : a[j];
      } else if (is_min) {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) a[j] = (p[j] < a[j] || p[j] != p[j]) ? p[j] : a[j];
      } else {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) a[j] += p[j];
      }
    }
    double div = kind == Red::kMean ? static_cast<double>(red) : 1.0;
    T* q = y + o * inner + j0;
    for (int64_t j = 0; j < w; ++j) q[j] = static_cast<T>(a[j] / div);
  }
}

// The fast path: float data, a nonempty result and reduced block, the axes
// adjacent; false if it does not apply.
bool FastReduce(Red kind, const Tensor& a, const std::vector<int64_t>& axes,
                const std::vector<int64_t>& shape, Tensor* out) {
  if (!FastKernelsEnabled() || !FastFloat(a) || axes.empty()) return false;
  if (kind != Red::kSum && kind != Red::kMean && kind != Red::kMax && kind != Red::kMin)
    return false;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[0] + static_cast<int64_t>(i)) return false;
  int64_t outer = 1, red = 1, inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(a.shape.size()); ++i)
    (i < axes.front() ? outer : i > axes.back() ? inner : red) *= a.shape[i];
  if (outer == 0 || red == 0 || inner == 0) return false;
  NoteFastPath();
  *out = NewTensor(a.dtype, shape);
  auto run = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* x = DataOf<T>(a);
    T* y = MutableDataOf<T>(*out);
    int64_t grain = std::max<int64_t>(1, (1 << 16) / (red * inner));
    if (outer > 1 || inner == 1) {
      ParallelRange(outer, grain, [&](int64_t lo, int64_t hi) {
        ReduceBlock(kind, x, y, red, inner, lo, hi, 0, inner);
      });
    } else {
      ParallelRange(inner, std::max<int64_t>(1, (1 << 16) / red), [&](int64_t lo, int64_t hi) {
        ReduceBlock(kind, x, y, red, inner, 0, 1, lo, hi);
      });
    }
  };
  if (a.dtype == DataType::kFloat32)
    run(static_cast<float*>(nullptr));
  else
    run(static_cast<double*>(nullptr));
  return true;
}

std::vector<int64_t> ReducedShape(const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& axes, bool keep) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool red = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    if (!red)
      out.push_back(shape[i]);
    else if (keep)
      out.push_back(1);
  }
  return out;
}

OpEvalFn Reduce(std::string op, Red kind) {
  return [op, kind](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& a = args[0];
    PLIR_ASSIGN_OR_RETURN(auto axes, KernelAxes(op, attrs.Get("axis"), a.shape.size()));
    bool keep = BoolAttrOr(attrs, "keepdims", false);
    std::vector<int64_t> shape = ReducedShape(a.shape, axes, keep);
    PLIR_RETURN_IF_ERROR(CheckResult(op, a.dtype, shape));
    ReduceGeometry g(a.shape, axes);
    DataType dt = a.dtype;
    bool maxmin = kind == Red::kMax || kind == Red::kMin;
    if (dt == DataType::kBool && !maxmin) return InvalidArgument(op + " does not take bool");
    if ((kind == Red::kVar || kind == Red::kStd) && !IsFloat(dt)) return NeedFloat(op, a);
    if (Tensor out; FastReduce(kind, a, axes, shape, &out)) return out;
    if (!IsFloat(dt)) {
      i128 lo, hi;
      IntRange(dt, &lo, &hi);
      return IntTensor(op, dt, shape, [&](int64_t o, i128* r) {
        i128 acc = kind == Red::kProd ? 1 : kind == Red::kMax ? lo : kind == Red::kMin ? hi : 0;
        for (int64_t k = 0; k < g.inner; ++k) {
          i128 x = LoadInt(dt, ElemPtr(a, g.Flat(o, k)));
          switch (kind) {
            case Red::kMax:
              acc = std::max(acc, x);
              break;
            case Red::kMin:
              acc = std::min(acc, x);
              break;
            case Red::kProd:
              if (__builtin_mul_overflow(acc, x, &acc) || acc < lo || acc > hi) return false;
              break;
            default:
              if (__builtin_add_overflow(acc, x, &acc)) return false;
          }
        }
        if (kind == Red::kMean) acc = g.inner ? acc / g.inner : 0;
        *r = acc;
        return true;
      });
    }
    return MakeTensor(dt, shape, [&](int64_t o) {
      double acc = kind == Red::kProd  ? 1
                   : kind == Red::kMax ? -INFINITY
                   : kind == Red::kMin ? INFINITY
                                       : 0;
      bool nan = false;
      for (int64_t k = 0; k < g.inner; ++k) {
        double x = a.GetDouble(g.Flat(o, k));
        if (std::isnan(x)) nan = true;
        switch (kind) {
          case Red::kMax:
            acc = std::max(acc, x);
            break;
          case Red::kMin:
            acc = std::min(acc, x);
            break;
          case Red::kProd:
            acc *= x;
            break;
          default:
            acc += x;
        }
      }
      if (maxmin && nan) return static_cast<double>(NAN);
      if (kind == Red::kMean) return acc / static_cast<double>(g.inner);
      if (kind == Red::kVar || kind == Red::kStd) {
        double mean = acc / static_cast<double>(g.inner), ss = 0;
        for (int64_t k = 0; k < g.inner; ++k) {
          double d = a.GetDouble(g.Flat(o, k)) - mean;
          ss += d * d;
        }
        double var = ss / static_cast<double>(g.inner);
        return kind == Red::kStd ? std::sqrt(var) : var;
      }
      return acc;
    });
  };
}

// argmax / argmin: without axis, of the flattened tensor.
OpEvalFn ArgReduce(std::string op, bool is_max) {
  return [op, is_max](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& a = args[0];
    const AttrValue* axis = attrs.Get("axis");
    PLIR_ASSIGN_OR_RETURN(auto axes, KernelAxes(op, axis, a.shape.size()));
    bool keep = BoolAttrOr(attrs, "keepdims", false);
    bool last = BoolAttrOr(attrs, "select_last_index", false);
    std::vector<int64_t> shape = ReducedShape(a.shape, axes, keep);
    PLIR_RETURN_IF_ERROR(CheckResult(op, DataType::kInt64, shape));
    ReduceGeometry g(a.shape, axes);
    if (g.inner == 0) return InvalidArgument(op + ": the reduced axis is empty");
    bool exact = !IsFloat(a.dtype);
    return MakeIntTensor(DataType::kInt64, shape, [&](int64_t o) -> int64_t {
      int64_t best = 0;
      i128 bi = 0;
      double bd = 0;
      for (int64_t k = 0; k < g.inner; ++k) {
        int64_t flat = g.Flat(o, k);
        bool better;
        if (exact) {
          i128 x = LoadInt(a.dtype, ElemPtr(a, flat));
          better =
              k == 0 || (is_max ? (x > bi || (last && x == bi)) : (x < bi || (last && x == bi)));
          if (better) bi = x;
        } else {
          double x = a.GetDouble(flat);
          if (k > 0 && std::isnan(bd)) {
            better = last && std::isnan(x);
          } else {
            better = k == 0 || std::isnan(x) ||
                     (is_max ? (x > bd || (last && x == bd)) : (x < bd || (last && x == bd)));
          }
          if (better) bd = x;
        }
        if (better) best = k;
      }
      return best;
    });
  };
}

// cumsum / cumprod along `axis` (without axis: of the flattened tensor).
OpEvalFn Scan(std::string op, bool prod) {
  return [op, prod](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    Tensor a = args[0];
    if (a.dtype == DataType::kBool) return InvalidArgument(op + " does not take bool");
    PLIR_ASSIGN_OR_RETURN(DataType dt, DtypeAttr(op, attrs, a.dtype));
    if (dt == DataType::kUnknown || dt == DataType::kBool)
      return InvalidArgument(op + ": bad dtype");
    int64_t axis = 0;
    if (const AttrValue* v = attrs.Get("axis")) {
      if (a.shape.empty()) return InvalidArgument(op + ": axis given for a 0-d tensor");
      PLIR_ASSIGN_OR_RETURN(axis, KernelAxis(op, v->as_int(), a.shape.size()));
    } else {
      a.shape = {a.NumElements()};
    }
    bool exclusive = BoolAttrOr(attrs, "exclusive", false),
         reverse = BoolAttrOr(attrs, "reverse", false);
    int64_t len = a.shape[axis], inner = 1, outer = 1;
    for (size_t i = axis + 1; i < a.shape.size(); ++i) inner *= a.shape[i];
    for (int64_t i = 0; i < axis; ++i) outer *= a.shape[i];
    int64_t n = a.NumElements();
    // Visits each line along the axis in scan order: f(flat index, first?).
    auto lines = [&](auto&& f) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j)
          for (int64_t s = 0; s < len; ++s) {
            int64_t p = reverse ? len - 1 - s : s;
            if (!f((o * len + p) * inner + j, s == 0)) return false;
          }
      return true;
    };
    if (!IsFloat(dt) && !IsFloat(a.dtype)) {
      std::vector<i128> out(n);
      i128 lo, hi, run = 0;
      IntRange(dt, &lo, &hi);
      bool over = false;  // run left the dtype's range (a stored value would overflow)
      bool ok = lines([&](int64_t i, bool first) {
        if (first) {
          run = prod ? 1 : 0;
          over = false;
        }
        i128 x = LoadInt(a.dtype, ElemPtr(a, i));
        if (exclusive) {
          if (over) return false;
          out[i] = run;
        }
        if (!over &&
            (prod ? __builtin_mul_overflow(run, x, &run) : __builtin_add_overflow(run, x, &run)))
          over = true;
        if (run < lo || run > hi) over = true;
        if (!exclusive) {
          if (over) return false;
          out[i] = run;
        }
        return true;
      });
      if (!ok) return InvalidArgument(op + ": " + std::string(DataTypeName(dt)) + " overflow");
      return IntTensor(op, dt, a.shape, [&](int64_t i, i128* r) {
        *r = out[i];
        return true;
      });
    }
    std::vector<double> out(n);
    double run = 0;
    lines([&](int64_t i, bool first) {
      if (first) run = prod ? 1 : 0;
      double x = a.GetDouble(i);
      if (exclusive) out[i] = run;
      run = prod ? run * x : run + x;
      if (!exclusive) out[i] = run;
      return true;
    });
    return MakeTensor(dt, a.shape, [&](int64_t i) { return out[i]; });
  };
}

// argsort along `axis`: std::stable_sort of each line's indices, so equal
// elements keep their order (ONNX TopK: the lower index first); integers
// compare exactly, NaN sorts above every number.
StatusOr<Tensor> Argsort(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "argsort";
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
  const Tensor& a = args[0];
  if (a.dtype == DataType::kBool) return InvalidArgument(op + " does not take bool");
  if (a.shape.empty()) return InvalidArgument(op + ": x must have rank >= 1");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, KernelAxis(op, IntAttrOr(attrs, "axis", -1), a.shape.size()));
  bool descending = BoolAttrOr(attrs, "descending", false);
  PLIR_RETURN_IF_ERROR(CheckResult(op, DataType::kInt64, a.shape));
  int64_t len = a.shape[axis], inner = 1, outer = 1;
  for (size_t i = axis + 1; i < a.shape.size(); ++i) inner *= a.shape[i];
  for (int64_t i = 0; i < axis; ++i) outer *= a.shape[i];
  bool exact = !IsFloat(a.dtype);
  // less(p, q): element p sorts before element q in ascending order.
  auto less = [&](int64_t p, int64_t q) {
    if (exact) return LoadInt(a.dtype, ElemPtr(a, p)) < LoadInt(a.dtype, ElemPtr(a, q));
    double x = a.GetDouble(p), y = a.GetDouble(q);
    if (std::isnan(x)) return false;
    return std::isnan(y) || x < y;
  };
  std::vector<int64_t> out(a.NumElements());
  std::vector<int64_t> line(len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      auto flat = [&](int64_t k) { return (o * len + k) * inner + j; };
      for (int64_t k = 0; k < len; ++k) line[k] = k;
      std::stable_sort(line.begin(), line.end(), [&](int64_t p, int64_t q) {
        return descending ? less(flat(q), flat(p)) : less(flat(p), flat(q));
      });
      for (int64_t k = 0; k < len; ++k) out[flat(k)] = line[k];
    }
  return MakeIntTensor(DataType::kInt64, a.shape, [&](int64_t i) { return out[i]; });
}

}  // namespace

void RegisterReduceKernels(OpKernelTable& t) {
  Set(t, "sum", Reduce("sum", Red::kSum));
  Set(t, "mean", Reduce("mean", Red::kMean));
  Set(t, "max", Reduce("max", Red::kMax));
  Set(t, "min", Reduce("min", Red::kMin));
  Set(t, "prod", Reduce("prod", Red::kProd));
  Set(t, "variance", Reduce("variance", Red::kVar));
  Set(t, "std", Reduce("std", Red::kStd));
  Set(t, "argmax", ArgReduce("argmax", true));
  Set(t, "argmin", ArgReduce("argmin", false));
  Set(t, "cumsum", Scan("cumsum", false));
  Set(t, "cumprod", Scan("cumprod", true));
  Set(t, "argsort", Argsort);
}

}  // namespace plir::internal
