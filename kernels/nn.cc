// Kernels of the convolutions: 2-D convolution in any layout, 1-D / 3-D and
// the transposed ones. float32 / float64 conv1d and conv2d (channels first)
// take a fast path: im2col and one GEMM per image and group (OpenBLAS), or
// a direct loop when each group has one input channel (depthwise), which
// beats im2col there (with an AVX2 + FMA clone for float32, chosen at run
// time). The rest is the reference loops.
#include <climits>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/internal/elements.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

// The geometry of a channels-first 2-D convolution (1-D: H = KH = OH = 1).
struct ConvGeom {
  int64_t N, C, H, W, O, Ig, KH, KW, sh, sw, ph, pw, dh, dw, groups, OH, OW;
};

// The output positions ow in [lo, hi) whose input column ow * s + off lies
// in [0, w).
inline void ValidRange(int64_t off, int64_t s, int64_t w, int64_t ow_n, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = w - 1 - off < 0 ? 0 : std::min(ow_n, (w - 1 - off) / s + 1);
  *lo = std::min(*lo, *hi);
}

// Depthwise convolution (each group has one input channel; og = O / groups
// output channels per input channel, the channel multiplier). Each input
// plane is first copied into a zero-padded buffer that holds every row and
// column the outputs read, its columns split by the column stride S into S
// phases (phase p holds padded columns p, p + S, p + 2S, ...). Tap (kh, kw)
// of output (oh, ow) then reads padded row oh * sh + kh * dh, phase
// (kw * dw) % S, index ow + (kw * dw) / S: unit-stride loads for any
// stride, and no edge tests in the loops. Planes are split over threads.
struct DwLayout {
  int64_t S, PH, PWs, pitch;  // phases, padded rows, phase length, row pitch
  explicit DwLayout(const ConvGeom& g)
      : S(g.sw),
        PH((g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1),
        // The vector loops read whole vectors of 8 (stores are masked).
        PWs((g.OW + 7) / 8 * 8 + (g.KW - 1) * g.dw / g.sw),
        pitch(S * PWs) {}
  // The buffer offset of tap column kw for output column 0.
  int64_t TapOffset(const ConvGeom& g, int64_t kw) const {
    int64_t k = kw * g.dw;
    return (k % S) * PWs + k / S;
  }
};

// Fills `buf` (PH x pitch) from plane `xp` (H x W); `row` is scratch of
// `pitch` elements (used when S > 1).
template <typename T>
void DwFillPlane(const ConvGeom& g, const DwLayout& L, const T* xp, T* buf, T* row) {
  int64_t copy = std::max<int64_t>(0, std::min(g.W, L.pitch - g.pw));  // input columns read
  for (int64_t r = 0; r < L.PH; ++r) {
    int64_t ir = r - g.ph;
    T* dst = buf + r * L.pitch;
    if (ir < 0 || ir >= g.H || copy == 0) {
      std::fill(dst, dst + L.pitch, T(0));
      continue;
    }
    T* line = L.S == 1 ? dst : row;
    int64_t lead = std::min(g.pw, L.pitch);
    std::fill(line, line + lead, T(0));
    std::memcpy(line + lead, xp + ir * g.W, copy * sizeof(T));
    std::fill(line + lead + copy, line + L.pitch, T(0));
    if (L.S == 1) continue;
    for (int64_t p = 0; p < L.S; ++p) {
      T* ph = dst + p * L.PWs;
      const T* src = row + p;
      int64_t s = L.S;
#pragma omp simd
      for (int64_t i = 0; i < L.PWs; ++i) ph[i] = src[i * s];
    }
  }
}

// Output plane `yp` (OH x OW) from the filled buffer and the plane's taps
// `wp` (KH x KW): one pass over each output row per tap, vectorized by the
// compiler (baseline x86-64 and float64).
template <typename T>
void DwPlane(const ConvGeom& g, const DwLayout& L, const T* buf, const T* wp, T* yp) {
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    T* yr = yp + oh * g.OW;
    std::fill(yr, yr + g.OW, T(0));
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const T* xr = buf + (oh * g.sh + kh * g.dh) * L.pitch;
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        const T* xs = xr + L.TapOffset(g, kw);
        T wv = wp[kh * g.KW + kw];
#pragma omp simd
        for (int64_t ow = 0; ow < g.OW; ++ow) yr[ow] += wv * xs[ow];
      }
    }
  }
}

#if defined(__x86_64__)
#define PLIR_AVX2 __attribute__((target("avx2,fma")))

// Lanes [0, n) set (n in [1, 8]).
PLIR_AVX2 inline __m256i Mask8(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// R output rows from oh, V vectors of 8 columns from ow, the last vector
// holding `last` columns (1..8): R * V accumulators, one FMA per tap and
// vector, each tap's weight broadcast once for all of them.
template <int R, int V>
PLIR_AVX2 inline void DwBlockAvx2(const ConvGeom& g, const DwLayout& L, const float* buf,
                                  const float* wp, const int64_t* tap_off, float* yp, int64_t oh,
                                  int64_t ow, int64_t last) {
  __m256 acc[R][V];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  const float* base = buf + oh * g.sh * L.pitch + ow;
  int64_t rs = g.sh * L.pitch;  // next output row
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    const float* xr = base + kh * g.dh * L.pitch;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      __m256 wv = _mm256_broadcast_ss(wp + kh * g.KW + kw);
      const float* xs = xr + tap_off[kw];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v)
          acc[r][v] = _mm256_fmadd_ps(_mm256_loadu_ps(xs + r * rs + 8 * v), wv, acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    float* yr = yp + (oh + r) * g.OW + ow;
#pragma GCC unroll 2
    for (int v = 0; v + 1 < V; ++v) _mm256_storeu_ps(yr + 8 * v, acc[r][v]);
    if (last == 8)
      _mm256_storeu_ps(yr + 8 * (V - 1), acc[r][V - 1]);
    else
      _mm256_maskstore_ps(yr + 8 * (V - 1), Mask8(last), acc[r][V - 1]);
  }
}

template <int R>
PLIR_AVX2 inline void DwRowsAvx2(const ConvGeom& g, const DwLayout& L, const float* buf,
                                 const float* wp, const int64_t* tap_off, float* yp, int64_t oh) {
  int64_t ow = 0;
  for (; ow + 16 <= g.OW; ow += 16) DwBlockAvx2<R, 2>(g, L, buf, wp, tap_off, yp, oh, ow, 8);
  for (; ow < g.OW; ow += 8)
    DwBlockAvx2<R, 1>(g, L, buf, wp, tap_off, yp, oh, ow, std::min<int64_t>(8, g.OW - ow));
}

// DwPlane for float32 with 32-byte vectors: blocks of 4 output rows x 16
// columns (8 independent accumulators), masked stores at the right edge.
PLIR_AVX2 void DwPlaneAvx2(const ConvGeom& g, const DwLayout& L, const float* buf, const float* wp,
                           float* yp) {
  int64_t small[16];
  std::vector<int64_t> large(g.KW > 16 ? g.KW : 0);
  int64_t* tap_off = g.KW > 16 ? large.data() : small;
  for (int64_t kw = 0; kw < g.KW; ++kw) tap_off[kw] = L.TapOffset(g, kw);
  int64_t oh = 0;
  for (; oh + 4 <= g.OH; oh += 4) DwRowsAvx2<4>(g, L, buf, wp, tap_off, yp, oh);
  for (; oh < g.OH; ++oh) DwRowsAvx2<1>(g, L, buf, wp, tap_off, yp, oh);
}

// DwFillPlane for float32, S == 2: the split into phases with shuffles.
PLIR_AVX2 void DwFillPlaneAvx2S2(const ConvGeom& g, const DwLayout& L, const float* xp, float* buf,
                                 float* row) {
  int64_t copy = std::max<int64_t>(0, std::min(g.W, L.pitch - g.pw));
  for (int64_t r = 0; r < L.PH; ++r) {
    int64_t ir = r - g.ph;
    float* dst = buf + r * L.pitch;
    if (ir < 0 || ir >= g.H || copy == 0) {
      std::fill(dst, dst + L.pitch, 0.0f);
      continue;
    }
    int64_t lead = std::min(g.pw, L.pitch);
    std::fill(row, row + lead, 0.0f);
    std::memcpy(row + lead, xp + ir * g.W, copy * sizeof(float));
    std::fill(row + lead + copy, row + L.pitch, 0.0f);
    float* even = dst;
    float* odd = dst + L.PWs;
    int64_t i = 0;
    for (; i + 8 <= L.PWs; i += 8) {
      __m256 a = _mm256_loadu_ps(row + 2 * i), b = _mm256_loadu_ps(row + 2 * i + 8);
      // Per 128-bit lane: a0 a2 b0 b2 | a4 a6 b4 b6, then 64-bit units 0 2 1 3.
      __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
      __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
      _mm256_storeu_ps(even + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e),
                                                                        _MM_SHUFFLE(3, 1, 2, 0))));
      _mm256_storeu_ps(odd + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o),
                                                                       _MM_SHUFFLE(3, 1, 2, 0))));
    }
    for (; i < L.PWs; ++i) {
      even[i] = row[2 * i];
      odd[i] = row[2 * i + 1];
    }
  }
}
#undef PLIR_AVX2
#endif

template <typename T>
void DepthwiseConv(const ConvGeom& g, const T* x, const T* w, T* y) {
  DwLayout L(g);
  int64_t og = g.O / g.groups, planes = g.N * g.C, taps = g.KH * g.KW;
  bool avx2 = false;
#if defined(__x86_64__)
  avx2 = std::is_same_v<T, float> && CpuHasAvx2Fma();
#endif
  // Each range of input planes: at least ~64K multiply-adds.
  int64_t per_plane = std::max<int64_t>(1, og * g.OH * g.OW * taps);
  ParallelRange(planes, std::max<int64_t>(1, 65536 / per_plane), [&](int64_t begin, int64_t end) {
    // Scratch, not zeroed: the fills write all of it.
    std::unique_ptr<T[]> buf_owner(new T[static_cast<size_t>(L.PH * L.pitch)]);
    std::unique_ptr<T[]> row_owner(new T[static_cast<size_t>(L.pitch)]);
    T* buf = buf_owner.get();
    T* row = row_owner.get();
    for (int64_t p = begin; p < end; ++p) {
      int64_t n = p / g.C, c = p % g.C;
      const T* xp = x + p * g.H * g.W;
#if defined(__x86_64__)
      if constexpr (std::is_same_v<T, float>) {
        if (avx2 && L.S == 2)
          DwFillPlaneAvx2S2(g, L, xp, buf, row);
        else
          DwFillPlane(g, L, xp, buf, row);
      } else {
        DwFillPlane(g, L, xp, buf, row);
      }
#else
      DwFillPlane(g, L, xp, buf, row);
#endif
      for (int64_t m = 0; m < og; ++m) {
        int64_t o = c * og + m;
        const T* wp = w + o * taps;
        T* yp = y + (n * g.O + o) * g.OH * g.OW;
#if defined(__x86_64__)
        if constexpr (std::is_same_v<T, float>) {
          if (avx2) {
            DwPlaneAvx2(g, L, buf, wp, yp);
            continue;
          }
        }
#endif
        DwPlane(g, L, buf, wp, yp);
      }
    }
  });
}

// Rows [r0, r1) of the im2col matrix of image plane group `xg` (Ig
// channels) for output rows [oh0, oh1): row (c, kh, kw), column (oh, ow).
template <typename T>
void Im2col(const ConvGeom& g, const T* xg, int64_t oh0, int64_t oh1, int64_t r0, int64_t r1,
            T* col) {
  int64_t cols = (oh1 - oh0) * g.OW;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t c = r / (g.KH * g.KW), kh = (r / g.KW) % g.KH, kw = r % g.KW;
    const T* xp = xg + c * g.H * g.W;
    int64_t off = kw * g.dw - g.pw, lo, hi;
    ValidRange(off, g.sw, g.W, g.OW, &lo, &hi);
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      T* dst = col + r * cols + (oh - oh0) * g.OW;
      int64_t ih = oh * g.sh - g.ph + kh * g.dh;
      if (ih < 0 || ih >= g.H) {
        std::fill(dst, dst + g.OW, T(0));
        continue;
      }
      const T* src = xp + ih * g.W + off;
      std::fill(dst, dst + lo, T(0));
      if (g.sw == 1) {
        std::memcpy(dst + lo, src + lo, (hi - lo) * sizeof(T));
      } else {
        int64_t s = g.sw;
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * s];
      }
      std::fill(dst + hi, dst + g.OW, T(0));
    }
  }
}

// y (N, O, OH, OW) from x (N, C, H, W) and w (O, Ig, KH, KW).
template <typename T>
void FastConv(const ConvGeom& g, const T* x, const T* w, T* y) {
  if (g.Ig == 1 && g.groups > 1) return DepthwiseConv(g, x, w, y);
  int64_t og = g.O / g.groups, K = g.Ig * g.KH * g.KW, P = g.OH * g.OW;
  bool direct = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
                g.OH == g.H && g.OW == g.W;  // the input is its own im2col matrix
  // Bands of output rows keep the im2col buffer under ~64 MiB.
  int64_t band =
      std::max<int64_t>(1, std::min(g.OH, (int64_t{16} << 20) / std::max<int64_t>(1, K * g.OW)));
  // Not zeroed first: Im2col writes every element it reads back (a zeroed
  // vector cost a memset and fresh pages per call, megabytes for ResNet's
  // 3x3s).
  std::unique_ptr<T[]> col(direct ? nullptr : new T[static_cast<size_t>(K * band * g.OW)]);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const T* xg = x + (n * g.C + gi * g.Ig) * g.H * g.W;
      const T* wg = w + gi * og * K;
      T* yg = y + (n * g.O + gi * og) * P;
      if (direct) {
        Gemm(false, false, og, P, K, T(1), wg, K, xg, P, T(0), yg, P);
        continue;
      }
      for (int64_t oh0 = 0; oh0 < g.OH; oh0 += band) {
        int64_t oh1 = std::min(g.OH, oh0 + band), cols = (oh1 - oh0) * g.OW;
        ParallelRange(K, std::max<int64_t>(1, 65536 / cols),
                      [&](int64_t r0, int64_t r1) { Im2col(g, xg, oh0, oh1, r0, r1, col.get()); });
        Gemm(false, false, og, cols, K, T(1), wg, K, col.get(), cols, T(0), yg + oh0 * g.OW, P);
      }
    }
}

// Whether the fast path takes this convolution: float32 / float64, nonempty,
// positive strides and dilations, padding >= 0, and GEMM dimensions that fit
// OpenBLAS's 32-bit integers.
bool FastConvApplies(const Tensor& x, const Tensor& w, const ConvGeom& g) {
  if (!FastKernelsEnabled() || !FastFloat(x) || w.dtype != x.dtype) return false;
  for (int64_t v : {g.N, g.C, g.H, g.W, g.O, g.Ig, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw, g.OH, g.OW})
    if (v <= 0) return false;
  if (g.ph < 0 || g.pw < 0) return false;
  auto k = CheckedMul(g.Ig, g.KH * g.KW);
  auto p = CheckedMul(g.OH, g.OW);
  return k && p && *k < INT_MAX && *p < INT_MAX && g.O < INT_MAX;
}

Tensor RunFastConv(const Tensor& x, const Tensor& w, const ConvGeom& g,
                   std::vector<int64_t> shape) {
  NoteFastPath();
  Tensor out = NewTensorForOverwrite(x.dtype, std::move(shape));  // FastConv writes it all
  if (x.dtype == DataType::kFloat32)
    FastConv(g, DataOf<float>(x), DataOf<float>(w), MutableDataOf<float>(out));
  else
    FastConv(g, DataOf<double>(x), DataOf<double>(w), MutableDataOf<double>(out));
  return out;
}

StatusOr<Tensor> Conv2d(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.conv2d", args, 2));
  const Tensor& d = args[0];
  const Tensor& w = args[1];
  if (d.dtype != w.dtype) return InvalidArgument("nn.conv2d: dtypes differ");
  if (d.shape.size() != 4 || w.shape.size() != 4)
    return InvalidArgument("nn.conv2d: 4-D tensors needed");
  auto expand = [](std::vector<int64_t> v, size_t n) {
    if (v.size() == 1) v.assign(n, v[0]);
    if (n == 4 && v.size() == 2) v = {v[0], v[1], v[0], v[1]};
    return v;
  };
  std::vector<int64_t> st = expand(IntList(attrs, "strides", {1, 1}), 2);
  std::vector<int64_t> pad = expand(IntList(attrs, "padding", {0, 0, 0, 0}), 4);
  std::vector<int64_t> dil = expand(IntList(attrs, "dilation", {1, 1}), 2);
  if (st.size() != 2 || pad.size() != 4 || dil.size() != 2 || st[0] <= 0 || st[1] <= 0)
    return InvalidArgument("nn.conv2d: bad strides, padding or dilation");
  int64_t groups = attrs.Get("groups") ? attrs.Get("groups")->as_int() : 1;
  int64_t N = d.shape[0], C = d.shape[1], H = d.shape[2], W = d.shape[3];
  int64_t O = w.shape[0], I = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  if (groups <= 0 || O % groups != 0 || C != I * groups)
    return InvalidArgument("nn.conv2d: channel mismatch");
  int64_t OH = (H + pad[0] + pad[2] - dil[0] * (KH - 1) - 1) / st[0] + 1;
  int64_t OW = (W + pad[1] + pad[3] - dil[1] * (KW - 1) - 1) / st[1] + 1;
  if (OH < 0 || OW < 0) return InvalidArgument("nn.conv2d: window larger than the padded input");
  ConvGeom geom{N,     C,      H,      W,      O,      I,      KH, KW, st[0],
                st[1], pad[0], pad[1], dil[0], dil[1], groups, OH, OW};
  if (FastConvApplies(d, w, geom)) return RunFastConv(d, w, geom, {N, O, OH, OW});
  int64_t opg = O / groups;
  // Calls visit(data index, weight index) for each tap of output `flat`.
  auto taps = [&](int64_t flat, auto&& visit) {
    int64_t ow = flat % OW, oh = (flat / OW) % OH, o = (flat / (OW * OH)) % O,
            n = flat / (OW * OH * O);
    int64_t g = o / opg;
    for (int64_t ic = 0; ic < I; ++ic)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          int64_t ih = oh * st[0] - pad[0] + kh * dil[0];
          int64_t iw = ow * st[1] - pad[1] + kw * dil[1];
          if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
          int64_t c = g * I + ic;
          if (!visit(((n * C + c) * H + ih) * W + iw, ((o * I + ic) * KH + kh) * KW + kw))
            return false;
        }
    return true;
  };
  if (IsInteger(d.dtype)) {
    int size = DataTypeSize(d.dtype);
    return IntTensor("nn.conv2d", d.dtype, {N, O, OH, OW}, [&](int64_t flat, i128* s) {
      *s = 0;
      return taps(flat, [&](int64_t di, int64_t wi) {
        i128 p;
        return !__builtin_mul_overflow(LoadInt(d.dtype, d.data->data() + di * size),
                                       LoadInt(w.dtype, w.data->data() + wi * size), &p) &&
               !__builtin_add_overflow(*s, p, s);
      });
    });
  }
  return MakeTensor(d.dtype, {N, O, OH, OW}, [&](int64_t flat) {
    double s = 0;
    taps(flat, [&](int64_t di, int64_t wi) {
      s += d.GetDouble(di) * w.GetDouble(wi);
      return true;
    });
    return s;
  });
}

// nn.conv2d in other layouts: transpose to NCHW / OIHW, convolve, transpose
// back.
StatusOr<Tensor> Conv2dAnyLayout(const std::vector<Tensor>& args, const Attrs& attrs) {
  if (!attrs.Get("data_layout") && !attrs.Get("kernel_layout") && !attrs.Get("out_layout"))
    return Conv2d(args, attrs);
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.conv2d", args, 2));
  auto layout = [&](const char* key, const std::string& def) {
    const AttrValue* v = attrs.Get(key);
    return v ? v->as_string() : def;
  };
  std::string dl = layout("data_layout", "NCHW"), kl = layout("kernel_layout", "OIHW");
  std::string ol = layout("out_layout", dl);
  auto axes = [](const std::string& l) -> std::vector<int64_t> {
    if (l == "NCHW" || l == "OIHW") return {0, 1, 2, 3};
    if (l == "NHWC" || l == "OHWI") return {0, 3, 1, 2};
    if (l == "HWIO") return {3, 2, 0, 1};
    return {};
  };
  auto da = axes(dl), ka = axes(kl), oa = axes(ol);
  if (da.empty() || ka.empty() || oa.empty() || ol == "OIHW" || ol == "OHWI" || ol == "HWIO")
    return InvalidArgument("nn.conv2d: unsupported layouts " + dl + "/" + kl + "/" + ol);
  if (args[0].shape.size() != 4 || args[1].shape.size() != 4)
    return InvalidArgument("nn.conv2d: 4-D tensors needed");
  auto permute = [&](const Tensor& t, const std::vector<int64_t>& a) -> StatusOr<Tensor> {
    std::vector<AttrValue> l;
    for (int64_t x : a) l.push_back(AttrValue::Int(x));
    PLIR_ASSIGN_OR_RETURN(Attrs pa, Attrs::Make({{Symbol("axes"), AttrValue::List(l)}}));
    return EvalOp("permute_dims", {t}, pa);  // kernels/data_movement.cc
  };
  std::vector<Attrs::Entry> rest;
  for (const auto& e : attrs.entries())
    if (e.first.str() != "data_layout" && e.first.str() != "kernel_layout" &&
        e.first.str() != "out_layout")
      rest.push_back(e);
  PLIR_ASSIGN_OR_RETURN(Tensor d, permute(args[0], da));
  PLIR_ASSIGN_OR_RETURN(Tensor w, permute(args[1], ka));
  PLIR_ASSIGN_OR_RETURN(Attrs plain, Attrs::Make(std::move(rest)));
  PLIR_ASSIGN_OR_RETURN(Tensor out, Conv2d({d, w}, plain));
  std::vector<int64_t> inverse(4);
  for (int64_t i = 0; i < 4; ++i) inverse[oa[i]] = i;
  return permute(out, inverse);
}

// nn.conv1d / nn.conv3d and the transposed convolutions, channels first:
// data (N, C, in...), weight (O, C/groups, k...) or, transposed,
// (C, O/groups, k...). Floats accumulate in double; integers are exact
// (overflow is an error).
OpEvalFn ConvNd(std::string op, int nd, bool transpose) {
  return [op, nd, transpose](const std::vector<Tensor>& args,
                             const Attrs& attrs) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 2));
    const Tensor& x = args[0];
    const Tensor& w = args[1];
    if (x.dtype != w.dtype) return InvalidArgument(op + ": dtypes differ");
    if (x.dtype == DataType::kBool) return InvalidArgument(op + " does not take bool");
    if (static_cast<int>(x.shape.size()) != nd + 2 || static_cast<int>(w.shape.size()) != nd + 2)
      return InvalidArgument(op + ": " + std::to_string(nd + 2) + "-D data and weight needed");
    static const char* dl[] = {"NCW", "NCHW", "NCDHW"};
    static const char* kl[] = {"OIW", "OIHW", "OIDHW"};
    static const char* tl[] = {"IOW", "IOHW", "IODHW"};
    if (StringAttrOr(attrs, "data_layout", dl[nd - 1]) != dl[nd - 1] ||
        StringAttrOr(attrs, "out_layout", dl[nd - 1]) != dl[nd - 1] ||
        StringAttrOr(attrs, "kernel_layout", transpose ? tl[nd - 1] : kl[nd - 1]) !=
            (transpose ? tl[nd - 1] : kl[nd - 1]))
      return InvalidArgument(op + ": unsupported layout");
    PLIR_ASSIGN_OR_RETURN(auto st, SpatialAttr(op, attrs, "strides", nd, 1, false));
    PLIR_ASSIGN_OR_RETURN(auto dil, SpatialAttr(op, attrs, "dilation", nd, 1, false));
    PLIR_ASSIGN_OR_RETURN(auto pad, SpatialAttr(op, attrs, "padding", nd, 0, true));
    std::vector<int64_t> opad(nd, 0);
    if (transpose) {
      PLIR_ASSIGN_OR_RETURN(opad, SpatialAttr(op, attrs, "output_padding", nd, 0, false));
    }
    int64_t groups = IntAttrOr(attrs, "groups", 1);
    for (int i = 0; i < nd; ++i)
      if (st[i] <= 0 || dil[i] <= 0 || pad[i] < 0 || pad[i + nd] < 0 || opad[i] < 0 ||
          st[i] > (int64_t{1} << 31) || dil[i] > (int64_t{1} << 31) ||
          pad[i] > (int64_t{1} << 40) || pad[i + nd] > (int64_t{1} << 40) ||
          opad[i] > (int64_t{1} << 31))
        return InvalidArgument(op + ": bad strides, dilation or padding");
    int64_t N = x.shape[0], C = x.shape[1];
    if (groups <= 0 || C % groups != 0) return InvalidArgument(op + ": channel mismatch");
    int64_t O, Ig;  // output channels; input channels per group
    if (!transpose) {
      O = w.shape[0];
      Ig = w.shape[1];
      if (O % groups != 0 || Ig * groups != C) return InvalidArgument(op + ": channel mismatch");
    } else {
      if (w.shape[0] != C) return InvalidArgument(op + ": channel mismatch");
      auto o = CheckedMul(w.shape[1], groups);
      if (!o) return InvalidArgument(op + ": channel mismatch");
      O = *o;
      Ig = C / groups;
    }
    int64_t Og = O / groups;
    std::vector<int64_t> shape{N, O}, in(nd), k(nd);
    for (int i = 0; i < nd; ++i) {
      in[i] = x.shape[2 + i];
      k[i] = w.shape[2 + i];
      i128 eff = static_cast<i128>(dil[i]) * (k[i] - 1) + 1, o;
      if (!transpose) {
        i128 padded = static_cast<i128>(in[i]) + pad[i] + pad[i + nd];
        if (padded < eff) return InvalidArgument(op + ": kernel larger than the padded input");
        o = (padded - eff) / st[i] + 1;
      } else {
        o = in[i] == 0
                ? 0
                : static_cast<i128>(in[i] - 1) * st[i] - pad[i] - pad[i + nd] + eff + opad[i];
        if (o < 0) return InvalidArgument(op + ": the padding is larger than the output");
      }
      if (o > (static_cast<i128>(1) << 62))
        return InvalidArgument(op + ": the output is too large");
      shape.push_back(static_cast<int64_t>(o));
    }
    PLIR_RETURN_IF_ERROR(CheckResult(op, x.dtype, shape));
    if (nd == 1 && !transpose) {
      ConvGeom geom{N,     C, 1,      in[0], O,      Ig,     1, k[0],    1,
                    st[0], 0, pad[0], 1,     dil[0], groups, 1, shape[2]};
      if (FastConvApplies(x, w, geom)) return RunFastConv(x, w, geom, shape);
    }
    auto xs = Strides(x.shape), ws = Strides(w.shape), os = Strides(shape);
    int64_t taps = 1;
    for (int i = 0; i < nd; ++i) taps *= k[i];
    int64_t total = Product(shape);
    bool exact = IsInteger(x.dtype);
    std::vector<double> fo(exact ? 0 : total, 0.0);
    std::vector<i128> io(exact ? total : 0, 0);
    bool overflow = false;
    auto acc = [&](int64_t oi, int64_t xi, int64_t wi) {
      if (exact) {
        i128 p;
        if (__builtin_mul_overflow(LoadInt(x.dtype, ElemPtr(x, xi)),
                                   LoadInt(w.dtype, ElemPtr(w, wi)), &p) ||
            __builtin_add_overflow(io[oi], p, &io[oi]))
          overflow = true;
      } else {
        fo[oi] += x.GetDouble(xi) * w.GetDouble(wi);
      }
    };
    std::vector<int64_t> kc(nd), pos(nd);
    // Tap t's kernel coordinates.
    auto tap = [&](int64_t t) {
      for (int i = nd - 1; i >= 0; --i) {
        kc[i] = t % k[i];
        t /= k[i];
      }
    };
    if (!transpose) {
      std::vector<int64_t> oc(nd);
      for (int64_t oi = 0; oi < total && !overflow; ++oi) {
        int64_t n = oi / os[0], o = (oi / os[1]) % O, g = o / Og;
        for (int i = 0; i < nd; ++i) oc[i] = (oi / os[2 + i]) % shape[2 + i];
        for (int64_t t = 0; t < taps; ++t) {
          tap(t);
          bool inside = true;
          int64_t xo = n * xs[0], wo = o * ws[0];
          for (int i = 0; i < nd && inside; ++i) {
            int64_t p = oc[i] * st[i] - pad[i] + kc[i] * dil[i];
            inside = p >= 0 && p < in[i];
            xo += p * xs[2 + i];
            wo += kc[i] * ws[2 + i];
          }
          if (!inside) continue;
          for (int64_t ic = 0; ic < Ig; ++ic) acc(oi, xo + (g * Ig + ic) * xs[1], wo + ic * ws[1]);
        }
      }
    } else {
      // Each input element spreads over the outputs it reaches.
      std::vector<int64_t> xc(nd);
      int64_t xt = x.NumElements();
      for (int64_t xi = 0; xi < xt && !overflow; ++xi) {
        int64_t n = xi / xs[0], c = (xi / xs[1]) % C, g = c / Ig;
        for (int i = 0; i < nd; ++i) xc[i] = (xi / xs[2 + i]) % in[i];
        for (int64_t t = 0; t < taps; ++t) {
          tap(t);
          bool inside = true;
          int64_t oo = n * os[0], wo = c * ws[0];
          for (int i = 0; i < nd && inside; ++i) {
            int64_t p = xc[i] * st[i] - pad[i] + kc[i] * dil[i];
            inside = p >= 0 && p < shape[2 + i];
            oo += p * os[2 + i];
            wo += kc[i] * ws[2 + i];
          }
          if (!inside) continue;
          for (int64_t j = 0; j < Og; ++j) acc(oo + (g * Og + j) * os[1], xi, wo + j * ws[1]);
        }
      }
    }
    if (overflow)
      return InvalidArgument(op + ": " + std::string(DataTypeName(x.dtype)) + " overflow");
    if (exact)
      return IntTensor(op, x.dtype, shape, [&](int64_t i, i128* r) {
        *r = io[i];
        return true;
      });
    return MakeTensor(x.dtype, shape, [&](int64_t i) { return fo[i]; });
  };
}

int64_t ConvWork(const std::vector<Tensor>& args, int64_t out) {
  if (args.size() != 2 || args[1].shape.size() < 3) return out;
  int64_t per = 1;
  for (size_t i = 1; i < args[1].shape.size(); ++i) per *= std::max<int64_t>(1, args[1].shape[i]);
  return out * per;
}

}  // namespace

void RegisterNnKernels(OpKernelTable& t) {
  for (int nd = 1; nd <= 3; ++nd)
    for (bool transpose : {false, true}) {
      if (nd == 2 && !transpose) continue;
      std::string name = "nn.conv" + std::to_string(nd) + "d" + (transpose ? "_transpose" : "");
      Set(t, name.c_str(), ConvNd(name, nd, transpose), ConvWork);
    }
  Set(t, "nn.conv2d", Conv2dAnyLayout, [](const std::vector<Tensor>& args, int64_t out) {
    return args.size() == 2 && args[1].shape.size() == 4
               ? out * args[1].shape[1] * args[1].shape[2] * args[1].shape[3]
               : out;
  });
}

}  // namespace plir::internal
