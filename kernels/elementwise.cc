// Reference kernels of the elementwise unary ops: activations, math
// functions, rounding, predicates, clip, astype. Floats compute in double and
// round once; integers are exact (an overflow, e.g. abs of INT_MIN, is an
// error).
//
// float32 / float64 tensors take fast loops over their contiguous data:
// vectorized for relu and the ops of FastUnaryLoop, a direct call of the
// op's function per element for the others; both compute in double and
// round once, as the reference does, so the results are the same.
#include "kernels/internal/elements.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

// y = f(x) over a float tensor, split across threads; f computes in double.
template <typename T, typename F>
void MapLoop(const Tensor& a, Tensor& out, F f) {
  const T* x = DataOf<T>(a);
  T* y = MutableDataOf<T>(out);
  ParallelRange(a.NumElements(), 1 << 16, [&](int64_t lo, int64_t hi) {
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) y[i] = static_cast<T>(f(static_cast<double>(x[i])));
  });
}

template <typename F>
Tensor FastMap(const Tensor& a, F f) {
  NoteFastPath();
  Tensor out = OutputForOverwrite(a, a.dtype, a.shape);  // in place if donated
  if (a.dtype == DataType::kFloat32)
    MapLoop<float>(a, out, f);
  else
    MapLoop<double>(a, out, f);
  return out;
}

// A float tensor's output, `range(x, y, n)` called on its parts split
// across threads (`grain` elements at least), x and y typed as the data.
template <typename F>
Tensor FastRanges(const Tensor& a, int64_t grain, F range) {
  NoteFastPath();
  Tensor out = OutputForOverwrite(a, a.dtype, a.shape);  // in place if donated
  ForFloat(a, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* x = DataOf<T>(a);
    T* y = MutableDataOf<T>(out);
    ParallelRange(a.NumElements(), grain,
                  [&](int64_t lo, int64_t hi) { range(x + lo, y + lo, hi - lo); });
  });
  return out;
}

// y = f(x) through libmvec (VecMath), split across threads.
Tensor FastVecMath(const Tensor& a, VecFn f) {
  return FastRanges(a, 1 << 14, [f](auto* x, auto* y, int64_t n) { VecMath(f, x, y, n); });
}

// The unary ops whose function vectorizes (no scalar libm call), by name;
// false if `op` is not one of them.
bool FastUnaryLoop(const std::string& op, const Tensor& a, Tensor* out) {
  if (op == "exp") {
    *out = FastVecMath(a, VecFn::kExp);
  } else if (op == "erf") {
    *out = FastVecMath(a, VecFn::kErf);
  } else if (op == "tanh") {
    *out = FastVecMath(a, VecFn::kTanh);
  } else if (op == "abs") {
    *out = FastMap(a, [](double x) { return std::fabs(x); });
  } else if (op == "negative") {
    *out = FastMap(a, [](double x) { return -x; });
  } else if (op == "square") {
    *out = FastMap(a, [](double x) { return x * x; });
  } else if (op == "sqrt") {
    *out = FastMap(a, [](double x) { return std::sqrt(x); });
  } else if (op == "rsqrt") {
    *out = FastMap(a, [](double x) { return 1 / std::sqrt(x); });
  } else if (op == "ceil") {
    *out = FastMap(a, [](double x) { return std::ceil(x); });
  } else if (op == "floor") {
    *out = FastMap(a, [](double x) { return std::floor(x); });
  } else if (op == "trunc") {
    *out = FastMap(a, [](double x) { return std::trunc(x); });
  } else {
    return false;
  }
  return true;
}

using FloatFn = double (*)(double);
// Integer version: false on overflow.
using IntFn = bool (*)(i128, DataType, i128*);

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
  if (FastKernelsEnabled() && FastFloat(a))  // NaN and -0 stay, as below
    return FastMap(a, [](double x) { return x < 0 ? 0.0 : x; });
  return MakeTensor(a.dtype, a.shape, [&](int64_t i) {
    double x = a.GetDouble(i);
    return std::isnan(x) ? x : std::max(x, 0.0);
  });
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
  if (IsInteger(dt)) {  // float to integer: truncated toward zero; NaN or out of range is an error
    i128 lo, hi;
    IntRange(dt, &lo, &hi);
    return IntTensor("astype", dt, a.shape, [&](int64_t i, i128* r) {
      double x = std::trunc(a.GetDouble(i));
      if (!(x >= static_cast<double>(lo) && x <= static_cast<double>(hi))) return false;
      *r = static_cast<i128>(x);
      return true;
    });
  }
  return MakeTensor(dt, a.shape, [&](int64_t i) { return a.GetDouble(i); });
}

double Sigmoid(double x) {
  if (x >= 0) return 1 / (1 + std::exp(-x));
  double e = std::exp(x);
  return e / (1 + e);
}
double Sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
double Gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  const double k = std::sqrt(2 / M_PI);
  return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// Applies `f` (floats) or `fi` (integers; null: floats only).
OpEvalFn Unary(std::string op, FloatFn f, IntFn fi) {
  return [op, f, fi](const std::vector<Tensor>& args, const Attrs&) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& a = args[0];
    if (FastKernelsEnabled() && FastFloat(a)) {
      Tensor out;
      if (FastUnaryLoop(op, a, &out)) return out;
      return FastMap(a, f);  // one call of f per element
    }
    if (IsFloat(a.dtype))
      return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return f(a.GetDouble(i)); });
    if (!fi || a.dtype == DataType::kBool)
      return InvalidArgument(op + " does not take " + std::string(DataTypeName(a.dtype)));
    return IntTensor(op, a.dtype, a.shape, [&](int64_t i, i128* r) {
      return fi(LoadInt(a.dtype, ElemPtr(a, i)), a.dtype, r);
    });
  };
}

bool IntIdentity(i128 x, DataType, i128* r) {
  *r = x;
  return true;
}
bool IntAbs(i128 x, DataType, i128* r) {
  *r = x < 0 ? -x : x;
  return true;
}
bool IntNeg(i128 x, DataType, i128* r) {
  *r = -x;
  return true;
}
bool IntSign(i128 x, DataType, i128* r) {
  *r = x > 0 ? 1 : x < 0 ? -1 : 0;
  return true;
}
bool IntSquare(i128 x, DataType, i128* r) { return !__builtin_mul_overflow(x, x, r); }

StatusOr<Tensor> BitwiseNot(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("bitwise_not", args, 1));
  const Tensor& a = args[0];
  if (IsFloat(a.dtype)) return InvalidArgument("bitwise_not needs an integer or bool tensor");
  i128 lo, hi;
  IntRange(a.dtype, &lo, &hi);
  return IntTensor("bitwise_not", a.dtype, a.shape, [&](int64_t i, i128* r) {
    i128 x = LoadInt(a.dtype, ElemPtr(a, i));
    *r = lo < 0 ? ~x : hi - x;  // unsigned and bool: the complement within the width
    return true;
  });
}

// A bool result from a predicate on each element (as double; integers are
// exact for these predicates).
OpEvalFn Predicate(std::string op, std::function<bool(double, const Attrs&)> p, bool numeric) {
  return [op, p, numeric](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& a = args[0];
    if (numeric && a.dtype == DataType::kBool) return InvalidArgument(op + " does not take bool");
    return MakeTensor(DataType::kBool, a.shape,
                      [&](int64_t i) { return p(a.GetDouble(i), attrs) ? 1.0 : 0.0; });
  };
}

OpEvalFn WithAttrs(std::string op, std::function<double(double, const Attrs&)> f) {
  return [op, f](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& a = args[0];
    PLIR_RETURN_IF_ERROR(NeedFloat(op, a));
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return f(a.GetDouble(i), attrs); });
  };
}

// y = clip(x) in the data's own type (the bounds are of that type, so
// exact), branch-free so that it vectorizes: NaN fails both comparisons
// and stays, as in the reference loop below.
template <typename T>
__attribute__((always_inline)) inline void ClipRange(const T* x, T* y, int64_t n, T lo, T hi) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    T v = x[i] < lo ? lo : x[i];
    y[i] = v > hi ? hi : v;
  }
}

#if defined(__x86_64__)
template <typename T>
__attribute__((target("avx2"))) void ClipRangeAvx2(const T* x, T* y, int64_t n, T lo, T hi) {
  ClipRange(x, y, n, lo, hi);
}
#endif

// One pass in place of the maximum and minimum it replaces (ReLU6 in
// mobilenet_v2).
Tensor FastClip(const Tensor& a, double lo, double hi) {
  bool avx2 = CpuHasAvx2Fma();
  return FastRanges(a, 1 << 16, [=](auto* x, auto* y, int64_t n) {
    using T = std::remove_pointer_t<decltype(y)>;
    T l = static_cast<T>(lo), h = static_cast<T>(hi);
#if defined(__x86_64__)
    if (avx2) return ClipRangeAvx2(x, y, n, l, h);
#endif
    ClipRange(x, y, n, l, h);
    (void)avx2;
  });
}

// clip(x, min, max) = min(max(x, lo), hi), as NumPy: hi wins when lo > hi.
StatusOr<Tensor> Clip(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("clip", args, 3));
  const Tensor& a = args[0];
  if (a.dtype == DataType::kBool) return InvalidArgument("clip does not take bool");
  for (int i = 1; i < 3; ++i)
    if (args[i].NumElements() != 1 || args[i].dtype != a.dtype)
      return InvalidArgument("clip: min and max must be scalars of the data's dtype");
  if (IsInteger(a.dtype)) {
    i128 lo = LoadInt(a.dtype, ElemPtr(args[1], 0)), hi = LoadInt(a.dtype, ElemPtr(args[2], 0));
    return IntTensor("clip", a.dtype, a.shape, [&](int64_t i, i128* r) {
      i128 x = LoadInt(a.dtype, ElemPtr(a, i));
      x = x < lo ? lo : x;
      *r = x > hi ? hi : x;
      return true;
    });
  }
  double lo = args[1].GetDouble(0), hi = args[2].GetDouble(0);
  if (FastKernelsEnabled() && FastFloat(a)) return FastClip(a, lo, hi);
  return MakeTensor(a.dtype, a.shape, [&](int64_t i) {
    double x = a.GetDouble(i);
    if (std::isnan(x)) return x;
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
  });
}

}  // namespace

void RegisterElementwiseKernels(OpKernelTable& t) {
  Set(t, "nn.relu", Relu);
  Set(t, "astype", Astype);
  struct U {
    const char* name;
    FloatFn f;
    IntFn fi;
  };
  const U unary[] = {
      {"abs", [](double x) { return std::fabs(x); }, IntAbs},
      {"negative", [](double x) { return -x; }, IntNeg},
      {"sign", Sign, IntSign},
      {"square", [](double x) { return x * x; }, IntSquare},
      {"ceil", [](double x) { return std::ceil(x); }, IntIdentity},
      {"floor", [](double x) { return std::floor(x); }, IntIdentity},
      {"round", [](double x) { return std::nearbyint(x); }, IntIdentity},  // halves to even
      {"trunc", [](double x) { return std::trunc(x); }, IntIdentity},
      {"exp", [](double x) { return std::exp(x); }, nullptr},
      {"log", [](double x) { return std::log(x); }, nullptr},
      {"sqrt", [](double x) { return std::sqrt(x); }, nullptr},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, nullptr},
      {"sin", [](double x) { return std::sin(x); }, nullptr},
      {"cos", [](double x) { return std::cos(x); }, nullptr},
      {"tan", [](double x) { return std::tan(x); }, nullptr},
      {"asin", [](double x) { return std::asin(x); }, nullptr},
      {"acos", [](double x) { return std::acos(x); }, nullptr},
      {"atan", [](double x) { return std::atan(x); }, nullptr},
      {"sinh", [](double x) { return std::sinh(x); }, nullptr},
      {"cosh", [](double x) { return std::cosh(x); }, nullptr},
      {"tanh", [](double x) { return std::tanh(x); }, nullptr},
      {"asinh", [](double x) { return std::asinh(x); }, nullptr},
      {"acosh", [](double x) { return std::acosh(x); }, nullptr},
      {"atanh", [](double x) { return std::atanh(x); }, nullptr},
      {"erf", [](double x) { return std::erf(x); }, nullptr},
      {"sigmoid", Sigmoid, nullptr},
      {"nn.gelu", Gelu, nullptr},
      {"nn.gelu_tanh", GeluTanh, nullptr},
      {"nn.silu", [](double x) { return x * Sigmoid(x); }, nullptr},
  };
  for (const U& u : unary) Set(t, u.name, Unary(u.name, u.f, u.fi));
  Set(t, "bitwise_not", BitwiseNot);
  Set(t, "logical_not",
      Predicate(
          "logical_not", [](double x, const Attrs&) { return x == 0; }, false));
  Set(t, "isnan",
      Predicate(
          "isnan", [](double x, const Attrs&) { return std::isnan(x); }, true));
  Set(t, "isfinite",
      Predicate(
          "isfinite", [](double x, const Attrs&) { return std::isfinite(x); }, true));
  Set(t, "isinf",
      Predicate(
          "isinf",
          [](double x, const Attrs& a) {
            return std::isinf(x) && ((x > 0 && BoolAttrOr(a, "detect_positive", true)) ||
                                     (x < 0 && BoolAttrOr(a, "detect_negative", true)));
          },
          true));
  Set(t, "nn.leakyrelu", WithAttrs("nn.leakyrelu", [](double x, const Attrs& a) {
        return x >= 0 || std::isnan(x) ? x : FloatAttrOr(a, "alpha", 0.01) * x;
      }));
  Set(t, "nn.softplus", WithAttrs("nn.softplus", [](double x, const Attrs& a) {
        double beta = FloatAttrOr(a, "beta", 1.0), th = FloatAttrOr(a, "threshold", 20.0);
        double bx = beta * x;
        if (bx > th) return x;
        return std::log1p(std::exp(bx)) / beta;
      }));
  Set(t, "nn.elu", WithAttrs("nn.elu", [](double x, const Attrs& a) {
        return x > 0 || std::isnan(x) ? x : FloatAttrOr(a, "alpha", 1.0) * std::expm1(x);
      }));
  Set(t, "nn.selu", WithAttrs("nn.selu", [](double x, const Attrs& a) {
        double alpha = FloatAttrOr(a, "alpha", 1.6732632423543772),
               gamma = FloatAttrOr(a, "gamma", 1.0507009873554805);
        return gamma * (x > 0 || std::isnan(x) ? x : alpha * std::expm1(x));
      }));
  Set(t, "nn.celu", WithAttrs("nn.celu", [](double x, const Attrs& a) {
        double alpha = FloatAttrOr(a, "alpha", 1.0);
        if (std::isnan(x)) return x;
        return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
      }));
  Set(t, "nn.hardsigmoid", WithAttrs("nn.hardsigmoid", [](double x, const Attrs& a) {
        if (std::isnan(x)) return x;
        return std::max(
            0.0, std::min(1.0, FloatAttrOr(a, "alpha", 0.2) * x + FloatAttrOr(a, "beta", 0.5)));
      }));
  Set(t, "nn.hardswish", WithAttrs("nn.hardswish", [](double x, const Attrs&) {
        if (std::isnan(x)) return x;
        return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
      }));
  Set(t, "nn.softsign",
      WithAttrs("nn.softsign", [](double x, const Attrs&) { return x / (1 + std::fabs(x)); }));
  Set(t, "nn.mish", WithAttrs("nn.mish", [](double x, const Attrs&) {
        double sp = x > 20 ? x : std::log1p(std::exp(x));
        return x * std::tanh(sp);
      }));
  Set(t, "nn.thresholded_relu", WithAttrs("nn.thresholded_relu", [](double x, const Attrs& a) {
        return x > FloatAttrOr(a, "alpha", 1.0) || std::isnan(x) ? x : 0.0;
      }));
  Set(t, "nn.relu6", WithAttrs("nn.relu6", [](double x, const Attrs&) {
        return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0);
      }));
  Set(t, "clip", Clip);
}

}  // namespace plir::internal
