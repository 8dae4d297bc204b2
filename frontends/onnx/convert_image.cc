// Image ops: Resize and Upsample. Each resized axis is one static linear
// map computed at import from ONNX's reference definition (the n nearest
// source indices of x_original, edge-clamped, weighted by the mode's
// coefficients): nearest is a take with constant indices (exact, any
// dtype), linear and cubic a matmul with a constant [in, out] matrix.
// Axes apply innermost first, as the reference's recursion does, so the
// tf_crop_and_resize extrapolation value composes the same way.
#include <algorithm>
#include <cmath>

#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

struct ResizeSpec {
  std::string mode = "nearest";    // nearest | linear | cubic
  std::string ctm = "half_pixel";  // coordinate_transformation_mode
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

std::vector<double> Coeffs(const ResizeSpec& r, double ratio) {
  if (r.mode == "nearest") {
    if (ratio == 1.0)
      return {0.0, 1.0};  // x_original is an integer: that index, whatever the rounding
    if (r.nearest_mode == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (r.nearest_mode == "floor") return {1.0, 0.0};
    if (r.nearest_mode == "ceil") return {0.0, 1.0};
    return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  }
  if (r.mode == "linear") return {1 - ratio, ratio};
  double a = r.cubic_a, p = ratio + 1, q = 1 - ratio, t = 2 - ratio;
  return {((a * p - 5 * a) * p + 8 * a) * p - 4 * a,
          ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1, ((a + 2) * q - (a + 3)) * q * q + 1,
          ((a * t - 5 * a) * t + 8 * a) * t - 4 * a};
}

// Row o of the map: weight per source index (size in), and whether the row
// is the extrapolation value instead.
struct Row {
  std::vector<double> w;
  bool extrapolate = false;
};

std::vector<Row> AxisMap(const ResizeSpec& r, int64_t in, int64_t out, double scale, double roi_lo,
                         double roi_hi) {
  std::vector<Row> rows(static_cast<size_t>(out));
  double out_w = scale * static_cast<double>(in);
  for (int64_t o = 0; o < out; ++o) {
    Row& row = rows[o];
    row.w.assign(static_cast<size_t>(in), 0.0);
    double x = static_cast<double>(o), xo = 0;
    if (r.ctm == "align_corners")
      xo = out_w == 1 ? 0 : x * (in - 1) / (out_w - 1);
    else if (r.ctm == "asymmetric")
      xo = x / scale;
    else if (r.ctm == "tf_crop_and_resize") {
      xo = out_w == 1 ? (roi_hi - roi_lo) * (in - 1) / 2
                      : x * (roi_hi - roi_lo) * (in - 1) / (out_w - 1);
      xo += roi_lo * (in - 1);
      if (xo < 0 || xo > in - 1) {
        row.extrapolate = true;
        continue;
      }
    } else if (r.ctm == "pytorch_half_pixel")
      xo = out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    else if (r.ctm == "tf_half_pixel_for_nn")
      xo = (x + 0.5) / scale;
    else
      xo = (x + 0.5) / scale - 0.5;  // half_pixel
    double fl = std::floor(xo);
    double ratio = xo == fl ? 1.0 : xo - fl;
    std::vector<double> c = Coeffs(r, ratio);
    int64_t n = static_cast<int64_t>(c.size());
    // The n indices nearest xo (ties to the smaller), in order.
    std::vector<int64_t> idx;
    int64_t lo = static_cast<int64_t>(fl) - n, hi = static_cast<int64_t>(fl) + n;
    std::vector<int64_t> cand;
    for (int64_t i = lo; i <= hi; ++i) cand.push_back(i);
    std::stable_sort(cand.begin(), cand.end(), [&](int64_t a, int64_t b) {
      double da = std::fabs(xo - a), db = std::fabs(xo - b);
      return da != db ? da < db : a < b;
    });
    idx.assign(cand.begin(), cand.begin() + n);
    std::sort(idx.begin(), idx.end());
    if (r.exclude_outside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (idx[i] < 0 || idx[i] >= in) c[i] = 0;
        sum += c[i];
      }
      if (sum != 0)
        for (double& v : c) v /= sum;
    }
    for (int64_t i = 0; i < n; ++i) row.w[std::clamp<int64_t>(idx[i], 0, in - 1)] += c[i];
  }
  return rows;
}

StatusOr<Expr> ApplyAxis(ConvertContext& c, Expr x, int64_t axis, int64_t rank, const ResizeSpec& r,
                         const std::vector<Row>& rows, int64_t in) {
  int64_t out = static_cast<int64_t>(rows.size());
  DataType dt = As<TensorTypeNode>(x->type())->dtype();
  bool one_hot = true, identity = out == in;
  for (int64_t o = 0; o < out; ++o) {
    int ones = 0;
    for (int64_t i = 0; i < in; ++i) {
      double w = rows[o].w[i];
      if (w == 1.0)
        ++ones;
      else if (w != 0.0)
        one_hot = false;
      if (identity && w != (i == o ? 1.0 : 0.0)) identity = false;
    }
    if (ones != 1 || rows[o].extrapolate) one_hot = false;
    if (rows[o].extrapolate) identity = false;
  }
  if (identity) return x;
  if (one_hot) {  // a take: exact for every dtype
    std::vector<int64_t> idx;
    for (const Row& row : rows)
      idx.push_back(std::find(row.w.begin(), row.w.end(), 1.0) - row.w.begin());
    PLIR_ASSIGN_OR_RETURN(Expr ie, c.Int64s(idx));
    return c.Call("take", {x, ie}, MakeAttrs({{Symbol("axis"), AttrValue::Int(axis)}}));
  }
  if (!IsFloat(dt))
    return Unimplemented("Resize " + r.mode + " of " + std::string(DataTypeName(dt)) + " data");
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  bool moved = axis != rank - 1;
  if (moved) {
    PLIR_ASSIGN_OR_RETURN(
        x, c.Call("permute_dims", {x}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
  }
  PLIR_ASSIGN_OR_RETURN(
      Expr m,
      c.Const(MakeTensor(dt, {in, out}, [&](int64_t k) { return rows[k % out].w[k / out]; })));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("matmul", {x, m}));
  bool any_extra =
      std::any_of(rows.begin(), rows.end(), [](const Row& row) { return row.extrapolate; });
  if (any_extra) {
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Const(MakeTensor(dt, {out}, [&](int64_t o) {
      return rows[o].extrapolate ? r.extrapolation : 0.0;
    })));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, b}));
  }
  if (moved) {
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
    PLIR_ASSIGN_OR_RETURN(y,
                          c.Call("permute_dims", {y}, MakeAttrs({{Symbol("axes"), IntList(inv)}})));
  }
  return y;
}

// scales (or sizes) and roi known at import.
StatusOr<Outputs> ResizeImpl(ConvertContext& c, const ResizeSpec& r, std::vector<double> scales,
                             std::vector<int64_t> sizes, std::vector<double> roi) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t rank = static_cast<int64_t>(s.size());
  if (!sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != rank)
      return c.Error("sizes needs one entry per axis");
    scales.clear();
    for (int64_t i = 0; i < rank; ++i)
      scales.push_back(static_cast<double>(sizes[i]) / static_cast<double>(s[i]));
  } else {
    if (static_cast<int64_t>(scales.size()) != rank)
      return c.Error("scales needs one entry per axis");
    for (int64_t i = 0; i < rank; ++i) {
      double v = scales[i] * static_cast<double>(s[i]);
      if (!(v >= 0 && v < static_cast<double>(ConvertContext::kMaxImportElements)))
        return c.Error("scale " + std::to_string(scales[i]) + " gives an output size out of range");
      sizes.push_back(static_cast<int64_t>(v));
    }
  }
  if (roi.size() != static_cast<size_t>(2 * rank)) {
    roi.assign(static_cast<size_t>(2 * rank), 0.0);
    for (int64_t i = 0; i < rank; ++i) roi[rank + i] = 1.0;
  }
  for (int64_t a = rank - 1; a >= 0; --a) {
    if (s[a] == 0 || sizes[a] <= 0 || !(scales[a] > 0))
      return c.Error("cannot resize an empty axis or by a scale that is not positive");
    PLIR_RETURN_IF_ERROR(c.Limit({s[a], sizes[a]}, "the resize matrix"));
    std::vector<Row> rows = AxisMap(r, s[a], sizes[a], scales[a], roi[a], roi[rank + a]);
    PLIR_ASSIGN_OR_RETURN(x, ApplyAxis(c, x, a, rank, r, rows, s[a]));
  }
  return Outputs{x};
}

std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.push_back(t.GetDouble(i));
  return v;
}

ResizeSpec SpecOf(ConvertContext& c) {
  ResizeSpec r;
  r.mode = c.AttrString("mode", "nearest");
  r.ctm = c.AttrString("coordinate_transformation_mode", "half_pixel");
  r.nearest_mode = c.AttrString("nearest_mode", "round_prefer_floor");
  r.cubic_a = c.AttrFloat("cubic_coeff_a", -0.75f);
  r.exclude_outside = c.AttrInt("exclude_outside", 0) != 0;
  r.extrapolation = c.AttrFloat("extrapolation_value", 0.0f);
  return r;
}

StatusOr<Outputs> Resize11(ConvertContext& c) {
  ResizeSpec r = SpecOf(c);
  std::vector<double> roi, scales;
  std::vector<int64_t> sizes;
  if (r.ctm == "tf_crop_and_resize" && c.HasInput(1)) {
    PLIR_ASSIGN_OR_RETURN(Tensor t, c.RequireStatic(1, "roi"));
    roi = Doubles(t);
  }
  if (c.HasInput(3)) {
    PLIR_ASSIGN_OR_RETURN(sizes, c.RequireInts(3, "sizes"));
  }
  if (sizes.empty() && c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(Tensor t, c.RequireStatic(2, "scales"));
    scales = Doubles(t);
  }
  if (sizes.empty() && scales.empty()) return c.Error("Resize needs scales or sizes");
  return ResizeImpl(c, r, scales, sizes, roi);
}

// Resize-10 and Upsample: scales, asymmetric coordinates.
StatusOr<Outputs> Resize10(ConvertContext& c, int scales_input) {
  ResizeSpec r;
  r.mode = c.AttrString("mode", "nearest");
  if (r.mode == "bilinear") r.mode = "linear";
  r.ctm = "asymmetric";
  r.nearest_mode = "floor";  // opset 10's nearest (Upsample's repeat)
  std::vector<double> scales;
  if (scales_input >= 0) {
    PLIR_ASSIGN_OR_RETURN(Tensor t, c.RequireStatic(scales_input, "scales"));
    scales = Doubles(t);
  } else {
    std::vector<float> f = c.AttrFloats("scales");
    scales.assign(f.begin(), f.end());
  }
  return ResizeImpl(c, r, scales, {}, {});
}

}  // namespace

void RegisterImageConverters(ConverterTable& t) {
  const std::vector<std::string> needs = {"take", "matmul", "permute_dims", "add"};
  t.Add("Resize", 10, needs, [](ConvertContext& c) { return Resize10(c, 1); });
  t.Add("Resize", 11, needs, Resize11);
  t.Add("Upsample", 7, needs, [](ConvertContext& c) { return Resize10(c, -1); });
  t.Add("Upsample", 9, needs, [](ConvertContext& c) { return Resize10(c, 1); });
}

}  // namespace plir::onnx_import
