// Reference kernels of the neural-network ops: softmax, 2-D convolution in any layout.
#include "kernels/internal/elements.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

StatusOr<Tensor> Softmax(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.softmax", args, 1));
  const Tensor& a = args[0];
  if (!IsFloat(a.dtype)) return InvalidArgument("nn.softmax needs a float tensor");
  int64_t nd = static_cast<int64_t>(a.shape.size());
  int64_t axis = attrs.Get("axis") ? attrs.Get("axis")->as_int() : -1;
  if (axis < 0) axis += nd;
  if (axis < 0 || axis >= nd) return InvalidArgument("nn.softmax: axis out of range");
  int64_t len = a.shape[axis];
  int64_t inner = 1;
  for (int64_t i = axis + 1; i < nd; ++i) inner *= a.shape[i];
  std::vector<double> out(a.NumElements());
  for (int64_t base = 0; base < a.NumElements(); ++base) {
    if ((base / inner) % len != 0) continue;  // first element of its row
    double mx = -INFINITY;
    for (int64_t k = 0; k < len; ++k) mx = std::max(mx, a.GetDouble(base + k * inner));
    double sum = 0;
    for (int64_t k = 0; k < len; ++k) sum += std::exp(a.GetDouble(base + k * inner) - mx);
    for (int64_t k = 0; k < len; ++k) out[base + k * inner] = std::exp(a.GetDouble(base + k * inner) - mx) / sum;
  }
  return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return out[i]; });
}

StatusOr<Tensor> Conv2d(const std::vector<Tensor>& args, const Attrs& attrs) {
  PLIR_RETURN_IF_ERROR(CheckArgs("nn.conv2d", args, 2));
  const Tensor& d = args[0];
  const Tensor& w = args[1];
  if (d.dtype != w.dtype) return InvalidArgument("nn.conv2d: dtypes differ");
  if (d.shape.size() != 4 || w.shape.size() != 4) return InvalidArgument("nn.conv2d: 4-D tensors needed");
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
  if (groups <= 0 || O % groups != 0 || C != I * groups) return InvalidArgument("nn.conv2d: channel mismatch");
  int64_t OH = (H + pad[0] + pad[2] - dil[0] * (KH - 1) - 1) / st[0] + 1;
  int64_t OW = (W + pad[1] + pad[3] - dil[1] * (KW - 1) - 1) / st[1] + 1;
  if (OH < 0 || OW < 0) return InvalidArgument("nn.conv2d: window larger than the padded input");
  int64_t opg = O / groups;
  // Calls visit(data index, weight index) for each tap of output `flat`.
  auto taps = [&](int64_t flat, auto&& visit) {
    int64_t ow = flat % OW, oh = (flat / OW) % OH, o = (flat / (OW * OH)) % O, n = flat / (OW * OH * O);
    int64_t g = o / opg;
    for (int64_t ic = 0; ic < I; ++ic)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          int64_t ih = oh * st[0] - pad[0] + kh * dil[0];
          int64_t iw = ow * st[1] - pad[1] + kw * dil[1];
          if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
          int64_t c = g * I + ic;
          if (!visit(((n * C + c) * H + ih) * W + iw, ((o * I + ic) * KH + kh) * KW + kw)) return false;
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
    if (e.first.str() != "data_layout" && e.first.str() != "kernel_layout" && e.first.str() != "out_layout")
      rest.push_back(e);
  PLIR_ASSIGN_OR_RETURN(Tensor d, permute(args[0], da));
  PLIR_ASSIGN_OR_RETURN(Tensor w, permute(args[1], ka));
  PLIR_ASSIGN_OR_RETURN(Attrs plain, Attrs::Make(std::move(rest)));
  PLIR_ASSIGN_OR_RETURN(Tensor out, Conv2d({d, w}, plain));
  std::vector<int64_t> inverse(4);
  for (int64_t i = 0; i < 4; ++i) inverse[oa[i]] = i;
  return permute(out, inverse);
}

}  // namespace

void RegisterNnKernels(OpKernelTable& t) {
  Set(t, "nn.softmax", Softmax);
  Set(t, "nn.conv2d", Conv2dAnyLayout, [](const std::vector<Tensor>& args, int64_t out) {
    return args.size() == 2 && args[1].shape.size() == 4
               ? out * args[1].shape[1] * args[1].shape[2] * args[1].shape[3]
               : out;
  });
}

}  // namespace plir::internal
