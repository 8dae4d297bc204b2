// Reference kernels of softmax and the normalizations: softmax, log_softmax,
// layer_norm, rms_norm, group_norm, instance_norm, batch_norm (inference).
// Statistics accumulate in double; the result rounds once.
//
// float32 / float64 softmax, log_softmax, layer_norm / rms_norm over the
// last axes (parameters of the normalized shape) and batch_norm take fast
// loops over contiguous rows or channel planes, split across threads; they
// do the reference's double arithmetic (sums vectorized, so reassociated).
#include "kernels/internal/elements.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

// softmax along an axis of length `len` whose elements are `inner` apart.
Tensor FastSoftmax(const Tensor& a, int64_t len, int64_t inner, bool log) {
  NoteFastPath();
  Tensor out = NewTensorForOverwrite(a.dtype, a.shape);  // every row written
  int64_t rows = a.NumElements() / (len * inner);
  ForFloat(a, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* x = DataOf<T>(a);
    T* y = MutableDataOf<T>(out);
    ParallelRange(rows * inner, std::max<int64_t>(1, 4096 / len), [&](int64_t lo, int64_t hi) {
      std::vector<double> e(len), ex(len);
      for (int64_t r = lo; r < hi; ++r) {
        const T* p = x + (r / inner) * len * inner + r % inner;
        T* q = y + (p - x);
        double mx = -INFINITY;
        for (int64_t k = 0; k < len; ++k) mx = std::max(mx, static_cast<double>(p[k * inner]));
        for (int64_t k = 0; k < len; ++k) e[k] = static_cast<double>(p[k * inner]) - mx;
        VecMath(VecFn::kExp, e.data(), ex.data(), len);  // once per element, vectorized
        double sum = 0;
        for (int64_t k = 0; k < len; ++k) sum += ex[k];
        if (log) {
          double ls = std::log(sum);
          for (int64_t k = 0; k < len; ++k) q[k * inner] = static_cast<T>(e[k] - ls);
        } else {
          for (int64_t k = 0; k < len; ++k) q[k * inner] = static_cast<T>(ex[k] / sum);
        }
      }
    });
  });
  return out;
}

OpEvalFn Softmax(std::string op, bool log) {
  return [op, log](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& a = args[0];
    if (!IsFloat(a.dtype)) return InvalidArgument(op + " needs a float tensor");
    PLIR_ASSIGN_OR_RETURN(int64_t axis,
                          KernelAxis(op, IntAttrOr(attrs, "axis", -1), a.shape.size()));
    int64_t len = a.shape[axis];
    int64_t inner = 1;
    for (size_t i = axis + 1; i < a.shape.size(); ++i) inner *= a.shape[i];
    if (FastKernelsEnabled() && FastFloat(a) && a.NumElements() > 0)
      return FastSoftmax(a, len, inner, log);
    std::vector<double> out(a.NumElements());
    for (int64_t base = 0; base < a.NumElements(); ++base) {
      if ((base / inner) % len != 0) continue;  // first element of its row
      double mx = -INFINITY;
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, a.GetDouble(base + k * inner));
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(a.GetDouble(base + k * inner) - mx);
      for (int64_t k = 0; k < len; ++k) {
        double x = a.GetDouble(base + k * inner) - mx;
        out[base + k * inner] = log ? x - std::log(sum) : std::exp(x) / sum;
      }
    }
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return out[i]; });
  };
}

// A parameter (gamma, beta, weight) read at index k of the normalized
// shape `ns`; it broadcasts to ns (ONNX allows that).
struct Param {
  const Tensor* t = nullptr;  // null: absent (gamma 1, beta 0)
  std::vector<int64_t> ns, strides;
  double def = 0;
  double At(int64_t k) const {
    return t ? t->GetDouble(BroadcastIndex(k, ns, t->shape, strides)) : def;
  }
};

StatusOr<Param> MakeParam(const std::string& op, const char* what, const Tensor* t,
                          const DataType dt, const std::vector<int64_t>& ns, double def) {
  Param p;
  p.def = def;
  p.ns = ns;
  if (!t) return p;
  if (t->dtype != dt) return InvalidArgument(op + ": " + what + " differs from the data in dtype");
  auto b = BroadcastShape(ns, t->shape);
  if (!b.ok() || *b != ns)
    return InvalidArgument(op + ": " + what + " does not match the normalized shape");
  p.t = t;
  p.strides = Strides(t->shape);
  return p;
}

// layer_norm (params 2: gamma, beta) and rms_norm (params 1: weight).
OpEvalFn LayerNorm(std::string op, bool rms) {
  return [op, rms](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, rms ? 2 : 3));
    const Tensor& x = args[0];
    PLIR_RETURN_IF_ERROR(NeedFloat(op, x));
    std::vector<int64_t> given = IntList(attrs, "axes", {-1});
    std::vector<int64_t> axes;
    for (int64_t a : given) {
      PLIR_ASSIGN_OR_RETURN(int64_t n, KernelAxis(op, a, x.shape.size()));
      if (!axes.empty() && n <= axes.back())
        return InvalidArgument(op + ": axes must be increasing");
      axes.push_back(n);
    }
    std::vector<int64_t> ns;
    for (int64_t a : axes) ns.push_back(x.shape[a]);
    double eps = FloatAttrOr(attrs, "epsilon", 1e-5);
    bool scale = rms || BoolAttrOr(attrs, "scale", true),
         center = !rms && BoolAttrOr(attrs, "center", true);
    PLIR_ASSIGN_OR_RETURN(Param gamma, MakeParam(op, rms ? "weight" : "gamma",
                                                 scale ? &args[1] : nullptr, x.dtype, ns, 1));
    PLIR_ASSIGN_OR_RETURN(Param beta,
                          MakeParam(op, "beta", center ? &args[2] : nullptr, x.dtype, ns, 0));
    ReduceGeometry g(x.shape, axes);
    bool suffix = axes.back() == static_cast<int64_t>(x.shape.size()) - 1 &&
                  axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
    auto full = [&](const Param& p) { return !p.t || p.t->shape == ns; };
    if (FastKernelsEnabled() && FastFloat(x) && suffix && full(gamma) && full(beta) &&
        g.inner > 0 && g.outer > 0) {
      NoteFastPath();
      Tensor out = NewTensor(x.dtype, x.shape);
      int64_t n = g.inner;
      ForFloat(x, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        const T* xs = DataOf<T>(x);
        const T* gs = gamma.t ? DataOf<T>(*gamma.t) : nullptr;
        const T* bs = beta.t ? DataOf<T>(*beta.t) : nullptr;
        T* ys = MutableDataOf<T>(out);
        ParallelRange(g.outer, std::max<int64_t>(1, 16384 / n), [&](int64_t lo, int64_t hi) {
          for (int64_t o = lo; o < hi; ++o) {
            const T* p = xs + o * n;
            T* q = ys + o * n;
            double mean = 0, ss = 0;
            if (!rms) {
#pragma omp simd reduction(+ : mean)
              for (int64_t k = 0; k < n; ++k) mean += p[k];
              mean /= static_cast<double>(n);
            }
#pragma omp simd reduction(+ : ss)
            for (int64_t k = 0; k < n; ++k) {
              double d = p[k] - mean;
              ss += d * d;
            }
            double inv = 1 / std::sqrt(ss / static_cast<double>(n) + eps);
#pragma omp simd
            for (int64_t k = 0; k < n; ++k)
              q[k] = static_cast<T>((p[k] - mean) * inv * (gs ? static_cast<double>(gs[k]) : 1.0) +
                                    (bs ? static_cast<double>(bs[k]) : 0.0));
          }
        });
      });
      return out;
    }
    std::vector<double> out(x.NumElements());
    for (int64_t o = 0; o < g.outer; ++o) {
      double mean = 0, ss = 0;
      for (int64_t k = 0; k < g.inner; ++k) mean += x.GetDouble(g.Flat(o, k));
      mean /= static_cast<double>(g.inner);
      for (int64_t k = 0; k < g.inner; ++k) {
        double d = x.GetDouble(g.Flat(o, k)) - (rms ? 0 : mean);
        ss += d * d;
      }
      double inv = 1 / std::sqrt(ss / static_cast<double>(g.inner) + eps);
      for (int64_t k = 0; k < g.inner; ++k) {
        int64_t f = g.Flat(o, k);
        out[f] = (x.GetDouble(f) - (rms ? 0 : mean)) * inv * gamma.At(k) + beta.At(k);
      }
    }
    return MakeTensor(x.dtype, x.shape, [&](int64_t i) { return out[i]; });
  };
}

// group_norm / instance_norm: statistics per (other axes, group of channels)
// over the group's channels and `axes`.
OpEvalFn GroupNorm(std::string op, bool instance) {
  return [op, instance](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 3));
    const Tensor& x = args[0];
    PLIR_RETURN_IF_ERROR(NeedFloat(op, x));
    if (x.shape.size() < 2) return InvalidArgument(op + ": data of rank >= 2 needed");
    PLIR_ASSIGN_OR_RETURN(int64_t c,
                          KernelAxis(op, IntAttrOr(attrs, "channel_axis", 1), x.shape.size()));
    std::vector<int64_t> axes;
    if (attrs.Get("axes")) {
      PLIR_ASSIGN_OR_RETURN(axes, KernelAxes(op, attrs.Get("axes"), x.shape.size()));
    } else {
      for (size_t i = 1; i < x.shape.size(); ++i)
        if (static_cast<int64_t>(i) != c) axes.push_back(static_cast<int64_t>(i));
    }
    for (int64_t a : axes)
      if (a == c) return InvalidArgument(op + ": axes must not include the channel axis");
    int64_t C = x.shape[c];
    int64_t G = instance ? C : IntAttrOr(attrs, "num_groups", 0);
    if (G <= 0 || (C > 0 && C % G != 0))
      return InvalidArgument(op + ": the channels are not divisible by num_groups");
    int64_t per = C > 0 ? C / G : 1;
    double eps = FloatAttrOr(attrs, "epsilon", 1e-5);
    bool scale = BoolAttrOr(attrs, "scale", true), center = BoolAttrOr(attrs, "center", true);
    for (int i = 1; i < 3; ++i)
      if (args[i].dtype != x.dtype || args[i].NumElements() != C)
        return InvalidArgument(
            op + ": gamma and beta must have one value per channel, of the data's dtype");
    std::vector<int64_t> red = axes;
    red.push_back(c);
    std::sort(red.begin(), red.end());
    ReduceGeometry g(x.shape, red);
    int64_t cstride = Strides(x.shape)[c];
    std::vector<double> out(x.NumElements()), sum(G), ss(G), cnt(G);
    for (int64_t o = 0; o < g.outer; ++o) {
      std::fill(sum.begin(), sum.end(), 0.0);
      std::fill(ss.begin(), ss.end(), 0.0);
      std::fill(cnt.begin(), cnt.end(), 0.0);
      for (int64_t k = 0; k < g.inner; ++k) {
        int64_t f = g.Flat(o, k);
        int64_t grp = (f / cstride) % C / per;
        sum[grp] += x.GetDouble(f);
        cnt[grp] += 1;
      }
      for (int64_t k = 0; k < g.inner; ++k) {
        int64_t f = g.Flat(o, k);
        int64_t grp = (f / cstride) % C / per;
        double d = x.GetDouble(f) - sum[grp] / cnt[grp];
        ss[grp] += d * d;
      }
      for (int64_t k = 0; k < g.inner; ++k) {
        int64_t f = g.Flat(o, k);
        int64_t ch = (f / cstride) % C, grp = ch / per;
        double y = (x.GetDouble(f) - sum[grp] / cnt[grp]) / std::sqrt(ss[grp] / cnt[grp] + eps);
        if (scale) y *= args[1].GetDouble(ch);
        if (center) y += args[2].GetDouble(ch);
        out[f] = y;
      }
    }
    return MakeTensor(x.dtype, x.shape, [&](int64_t i) { return out[i]; });
  };
}

StatusOr<Tensor> BatchNorm(const std::vector<Tensor>& args, const Attrs& attrs) {
  const std::string op = "nn.batch_norm";
  PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 5));
  const Tensor& x = args[0];
  PLIR_RETURN_IF_ERROR(NeedFloat(op, x));
  PLIR_ASSIGN_OR_RETURN(int64_t c, KernelAxis(op, IntAttrOr(attrs, "axis", 1), x.shape.size()));
  int64_t C = x.shape[c];
  for (int i = 1; i < 5; ++i)
    if (args[i].dtype != x.dtype || args[i].NumElements() != C)
      return InvalidArgument(
          op +
          ": gamma, beta, moving_mean and moving_var must have one value per channel, "
          "of the data's dtype");
  double eps = FloatAttrOr(attrs, "epsilon", 1e-5);
  bool scale = BoolAttrOr(attrs, "scale", true), center = BoolAttrOr(attrs, "center", true);
  int64_t cstride = Strides(x.shape)[c];
  if (FastKernelsEnabled() && FastFloat(x) && x.NumElements() > 0) {
    // Per channel plane: y = (x - mean) / sqrt(var + eps) * gamma + beta.
    NoteFastPath();
    Tensor out = NewTensor(x.dtype, x.shape);
    int64_t planes = x.NumElements() / cstride;
    ForFloat(x, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* xs = DataOf<T>(x);
      T* ys = MutableDataOf<T>(out);
      ParallelRange(planes, std::max<int64_t>(1, 32768 / cstride), [&](int64_t lo, int64_t hi) {
        for (int64_t pl = lo; pl < hi; ++pl) {
          int64_t ch = pl % C;
          double m = args[3].GetDouble(ch), sd = std::sqrt(args[4].GetDouble(ch) + eps);
          double gm = scale ? args[1].GetDouble(ch) : 1.0,
                 bt = center ? args[2].GetDouble(ch) : 0.0;
          const T* p = xs + pl * cstride;
          T* q = ys + pl * cstride;
#pragma omp simd
          for (int64_t k = 0; k < cstride; ++k) q[k] = static_cast<T>((p[k] - m) / sd * gm + bt);
        }
      });
    });
    return out;
  }
  return MakeTensor(x.dtype, x.shape, [&](int64_t i) {
    int64_t ch = (i / cstride) % C;
    double y = (x.GetDouble(i) - args[3].GetDouble(ch)) / std::sqrt(args[4].GetDouble(ch) + eps);
    if (scale) y *= args[1].GetDouble(ch);
    if (center) y += args[2].GetDouble(ch);
    return y;
  });
}

}  // namespace

void RegisterNormalizationKernels(OpKernelTable& t) {
  Set(t, "nn.softmax", Softmax("nn.softmax", false));
  Set(t, "nn.log_softmax", Softmax("nn.log_softmax", true));
  Set(t, "nn.layer_norm", LayerNorm("nn.layer_norm", false));
  Set(t, "nn.rms_norm", LayerNorm("nn.rms_norm", true));
  Set(t, "nn.group_norm", GroupNorm("nn.group_norm", false));
  Set(t, "nn.instance_norm", GroupNorm("nn.instance_norm", true));
  Set(t, "nn.batch_norm", BatchNorm);
}

}  // namespace plir::internal
