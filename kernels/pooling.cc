// Reference kernels of pooling: max / average pooling in 1-3 dimensions and
// adaptive average / max pooling, channels first or last. Windows are
// clipped to the input before they are visited (a huge pool_size costs no
// more than the input), and the result's size is checked before allocation.
//
// float32 / float64 1-D and 2-D pooling, channels first, takes a fast path:
// the windows of each output row and column are computed once, then each
// channel plane is pooled with plain loops (the same double arithmetic and
// order as the reference, so the same results), planes split across threads.
#include "kernels/internal/elements.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

// The taps of one output position along one axis: first..last by step
// (none if last < first), and how many lie in the padded input.
struct Taps {
  int64_t first = 0, last = -1, step = 1, padded = 0;
  int64_t count() const { return last >= first ? (last - first) / step + 1 : 0; }
};

// Each output position's taps along an axis of `in` elements (the same
// arithmetic as the reference's window).
std::vector<Taps> AxisTaps(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pb,
                           int64_t pe, bool adaptive) {
  std::vector<Taps> t(out);
  for (int64_t c = 0; c < out; ++c) {
    Taps& w = t[c];
    if (adaptive) {
      w.first = static_cast<int64_t>(static_cast<i128>(c) * in / out);
      w.last = static_cast<int64_t>((static_cast<i128>(c + 1) * in + out - 1) / out) - 1;
      w.padded = w.last - w.first + 1;
      continue;
    }
    int64_t start = c * s - pb;
    int64_t jlo = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t jhi = std::min(k - 1, start > in - 1 ? -1 : (in - 1 - start) / d);
    w.step = d;
    if (jhi >= jlo) {
      w.first = start + jlo * d;
      w.last = start + jhi * d;
    }
    w.padded = std::max<int64_t>(0, std::min(k - 1, (in + pe - 1 - start) / d) + 1);
  }
  return t;
}

template <typename T>
void PoolPlanes(const T* x, T* y, int64_t planes, int64_t H, int64_t W, const std::vector<Taps>& th,
                const std::vector<Taps>& tw, bool is_max, bool count_padded) {
  int64_t OH = th.size(), OW = tw.size();
  ParallelRange(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, H * W)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t pl = lo; pl < hi; ++pl) {
                    const T* xp = x + pl * H * W;
                    T* yp = y + pl * OH * OW;
                    for (int64_t oh = 0; oh < OH; ++oh) {
                      const Taps& a = th[oh];
                      for (int64_t ow = 0; ow < OW; ++ow) {
                        const Taps& b = tw[ow];
                        double acc = is_max ? -INFINITY : 0;
                        bool nan = false;
                        for (int64_t ih = a.first; ih <= a.last; ih += a.step) {
                          const T* row = xp + ih * W;
                          for (int64_t iw = b.first; iw <= b.last; iw += b.step) {
                            double v = row[iw];
                            nan |= v != v;
                            acc = is_max ? std::max(acc, v) : acc + v;
                          }
                        }
                        int64_t n = count_padded ? a.padded * b.padded : a.count() * b.count();
                        double r = nan      ? static_cast<double>(NAN)
                                   : is_max ? acc
                                   : n > 0  ? acc / static_cast<double>(n)
                                            : 0.0;
                        yp[oh * OW + ow] = static_cast<T>(r);
                      }
                    }
                  }
                });
}

std::optional<std::vector<int>> Layout(const std::string& layout, int nd) {
  static const char* first[] = {"NCW", "NCHW", "NCDHW"};
  static const char* last[] = {"NWC", "NHWC", "NDHWC"};
  std::vector<int> axes;
  if (layout == first[nd - 1]) {
    for (int i = 0; i < nd + 2; ++i) axes.push_back(i);
  } else if (layout == last[nd - 1]) {
    axes = {0, nd + 1};
    for (int i = 0; i < nd; ++i) axes.push_back(i + 1);
  } else {
    return std::nullopt;
  }
  return axes;
}

enum class Pool { kMax, kAvg, kAdaptiveAvg, kAdaptiveMax };

OpEvalFn PoolKernel(std::string op, int nd, Pool kind) {
  return [op, nd, kind](const std::vector<Tensor>& args, const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 1));
    const Tensor& x = args[0];
    if (x.dtype == DataType::kBool) return InvalidArgument(op + " does not take bool");
    std::string layout = StringAttrOr(attrs, "layout",
                                      nd == 1   ? "NCW"
                                      : nd == 2 ? "NCHW"
                                                : "NCDHW");
    auto pos = Layout(layout, nd);
    if (!pos || StringAttrOr(attrs, "out_layout", layout) != layout)
      return InvalidArgument(op + ": unsupported layout " + layout);
    if (static_cast<int>(x.shape.size()) != nd + 2)
      return InvalidArgument(op + ": " + std::to_string(nd + 2) + "-D data needed");
    bool adaptive = kind == Pool::kAdaptiveAvg || kind == Pool::kAdaptiveMax;
    bool is_max = kind == Pool::kMax || kind == Pool::kAdaptiveMax;
    std::vector<int64_t> in(nd), k(nd, 1), s(nd, 1), d(nd, 1), p(2 * nd, 0), out_sp(nd);
    for (int i = 0; i < nd; ++i) in[i] = x.shape[(*pos)[2 + i]];
    if (adaptive) {
      std::vector<int64_t> size = in;
      if (attrs.Get("output_size")) {
        PLIR_ASSIGN_OR_RETURN(size, SpatialAttr(op, attrs, "output_size", nd, 1, false));
      }
      for (int i = 0; i < nd; ++i) {
        if (size[i] <= 0) return InvalidArgument(op + ": output_size must be positive");
        out_sp[i] = size[i];
      }
    } else {
      PLIR_ASSIGN_OR_RETURN(k, SpatialAttr(op, attrs, "pool_size", nd, 1, false));
      PLIR_ASSIGN_OR_RETURN(s, SpatialAttr(op, attrs, "strides", nd, 1, false));
      PLIR_ASSIGN_OR_RETURN(d, SpatialAttr(op, attrs, "dilation", nd, 1, false));
      PLIR_ASSIGN_OR_RETURN(p, SpatialAttr(op, attrs, "padding", nd, 0, true));
      bool ceil = BoolAttrOr(attrs, "ceil_mode", false);
      for (int i = 0; i < nd; ++i) {
        if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || p[i] < 0 || p[i + nd] < 0 ||
            k[i] > (int64_t{1} << 31) || s[i] > (int64_t{1} << 31) || d[i] > (int64_t{1} << 31) ||
            p[i] > (int64_t{1} << 40) || p[i + nd] > (int64_t{1} << 40))
          return InvalidArgument(op + ": bad pool_size, strides, dilation or padding");
        int64_t eff = d[i] * (k[i] - 1) + 1, padded = in[i] + p[i] + p[i + nd];
        if (padded < eff)
          return InvalidArgument(op + ": the window is larger than the padded input");
        int64_t o = ceil ? (padded - eff + s[i] - 1) / s[i] + 1 : (padded - eff) / s[i] + 1;
        if (ceil && (o - 1) * s[i] >= in[i] + p[i]) --o;
        out_sp[i] = o;
      }
    }
    std::vector<int64_t> shape = x.shape;
    for (int i = 0; i < nd; ++i) shape[(*pos)[2 + i]] = out_sp[i];
    PLIR_RETURN_IF_ERROR(CheckResult(op, x.dtype, shape));
    bool include_pad = BoolAttrOr(attrs, "count_include_pad", false);
    if (FastKernelsEnabled() && FastFloat(x) && nd <= 2 && (*pos)[1] == 1 && x.NumElements() > 0 &&
        Product(shape) > 0) {
      NoteFastPath();
      // 1-D pools as 2-D with one row.
      int64_t H = nd == 2 ? in[0] : 1, W = in[nd - 1];
      std::vector<Taps> th =
          nd == 2 ? AxisTaps(in[0], out_sp[0], k[0], s[0], d[0], p[0], p[nd], adaptive)
                  : AxisTaps(1, 1, 1, 1, 1, 0, 0, adaptive);
      std::vector<Taps> tw = AxisTaps(in[nd - 1], out_sp[nd - 1], k[nd - 1], s[nd - 1], d[nd - 1],
                                      p[nd - 1], p[2 * nd - 1], adaptive);
      Tensor out = NewTensor(x.dtype, shape);
      int64_t planes = x.shape[0] * x.shape[1];
      bool count_padded = include_pad && !adaptive;
      if (x.dtype == DataType::kFloat32)
        PoolPlanes(DataOf<float>(x), MutableDataOf<float>(out), planes, H, W, th, tw, is_max,
                   count_padded);
      else
        PoolPlanes(DataOf<double>(x), MutableDataOf<double>(out), planes, H, W, th, tw, is_max,
                   count_padded);
      return out;
    }
    auto in_strides = Strides(x.shape);
    auto out_strides = Strides(shape);
    bool exact = IsInteger(x.dtype) && is_max;
    i128 lo, hi;
    if (exact) IntRange(x.dtype, &lo, &hi);
    // Visits the taps of output element `flat`: f(input flat index); returns
    // the divisor of the average.
    auto window = [&](int64_t flat, auto&& f) -> int64_t {
      int64_t base = 0;
      std::vector<int64_t> first(nd), last(nd), step(nd);  // tap positions in the input
      int64_t padded_taps = 1;
      for (size_t a = 0; a < shape.size(); ++a) {
        int64_t c = (flat / out_strides[a]) % shape[a];
        bool spatial = false;
        for (int i = 0; i < nd; ++i)
          if ((*pos)[2 + i] == static_cast<int>(a)) {
            spatial = true;
            if (adaptive) {
              first[i] = static_cast<int64_t>(static_cast<i128>(c) * in[i] / out_sp[i]);
              last[i] = static_cast<int64_t>((static_cast<i128>(c + 1) * in[i] + out_sp[i] - 1) /
                                             out_sp[i]) -
                        1;
              step[i] = 1;
              padded_taps *= last[i] - first[i] + 1;
            } else {
              int64_t start = c * s[i] - p[i];
              // Taps j = 0..k-1 at start + j*d; keep those inside [0, in).
              int64_t jlo = start >= 0 ? 0 : (-start + d[i] - 1) / d[i];
              int64_t jhi = std::min(k[i] - 1, start > in[i] - 1 ? -1 : (in[i] - 1 - start) / d[i]);
              first[i] = start + jlo * d[i];
              last[i] = start + jhi * d[i];
              step[i] = d[i];
              if (jhi < jlo) {
                first[i] = 0;
                last[i] = -1;
              }
              // Taps inside the padded input [-pb, in + pe).
              int64_t plo = 0;
              int64_t phi = std::min(k[i] - 1, (in[i] + p[i + nd] - 1 - start) / d[i]);
              padded_taps *= std::max<int64_t>(0, phi - plo + 1);
            }
          }
        if (!spatial) base += c * in_strides[a];
      }
      int64_t count = 1;
      for (int i = 0; i < nd; ++i)
        count *= last[i] >= first[i] ? (last[i] - first[i]) / step[i] + 1 : 0;
      if (count > 0) {
        std::vector<int64_t> cur(first);
        while (true) {
          int64_t off = base;
          for (int i = 0; i < nd; ++i) off += cur[i] * in_strides[(*pos)[2 + i]];
          f(off);
          int i = nd - 1;
          for (; i >= 0; --i) {
            cur[i] += step[i];
            if (cur[i] <= last[i]) break;
            cur[i] = first[i];
          }
          if (i < 0) break;
        }
      }
      return include_pad && !adaptive ? padded_taps : count;
    };
    if (exact) {
      return IntTensor(op, x.dtype, shape, [&](int64_t flat, i128* r) {
        i128 best = lo;
        window(flat,
               [&](int64_t off) { best = std::max(best, LoadInt(x.dtype, ElemPtr(x, off))); });
        *r = best;
        return true;
      });
    }
    return MakeTensor(x.dtype, shape, [&](int64_t flat) {
      double acc = is_max ? -INFINITY : 0;
      bool nan = false;
      int64_t n = window(flat, [&](int64_t off) {
        double v = x.GetDouble(off);
        if (std::isnan(v)) nan = true;
        acc = is_max ? std::max(acc, v) : acc + v;
      });
      if (nan) return static_cast<double>(NAN);
      if (is_max) return acc;
      return n > 0 ? acc / static_cast<double>(n) : 0.0;
    });
  };
}

int64_t PoolWork(const std::vector<Tensor>& args, int64_t out) {
  if (args.size() != 1 || args[0].shape.size() < 3) return out;
  int64_t spatial = 1;
  for (size_t i = 2; i < args[0].shape.size(); ++i)
    spatial *= std::max<int64_t>(1, args[0].shape[i]);
  return out * spatial;  // at most every input position per output
}

}  // namespace

void RegisterPoolingKernels(OpKernelTable& t) {
  for (int nd = 1; nd <= 3; ++nd) {
    std::string d = std::to_string(nd) + "d";
    Set(t, ("nn.max_pool" + d).c_str(), PoolKernel("nn.max_pool" + d, nd, Pool::kMax), PoolWork);
    Set(t, ("nn.avg_pool" + d).c_str(), PoolKernel("nn.avg_pool" + d, nd, Pool::kAvg), PoolWork);
    Set(t, ("nn.adaptive_avg_pool" + d).c_str(),
        PoolKernel("nn.adaptive_avg_pool" + d, nd, Pool::kAdaptiveAvg), PoolWork);
    Set(t, ("nn.adaptive_max_pool" + d).c_str(),
        PoolKernel("nn.adaptive_max_pool" + d, nd, Pool::kAdaptiveMax), PoolWork);
  }
}

}  // namespace plir::internal
