// Convolution: nn.conv1d, nn.conv2d, nn.conv3d and their transposes.
#include <limits>

#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

using i128 = __int128;

// Reads an int-list attribute of length 1 or 2 into (h, w); or 1, 2 or 4 into
// padding (top, left, bottom, right).
StatusOr<std::vector<int64_t>> Expand(const Attrs& attrs, const char* key, size_t want,
                                      int64_t dflt) {
  const AttrValue* v = attrs.Get(key);
  if (!v) return std::vector<int64_t>(want, dflt);
  std::vector<int64_t> l;
  v->GetIntList(&l);
  if (l.size() == want) return l;
  if (l.size() == 1) return std::vector<int64_t>(want, l[0]);
  if (want == 4 && l.size() == 2) return std::vector<int64_t>{l[0], l[1], l[0], l[1]};
  return InvalidArgument(std::string("nn.conv2d: attribute '") + key + "' has " +
                         std::to_string(l.size()) + " values, expected " + std::to_string(want));
}

// Positions of N, C, H, W in a data layout, and of O, I, H, W in a kernel
// layout (the layouts Relax's conv2d tests use).
std::optional<std::array<int, 4>> LayoutAxes(const std::string& layout, bool kernel) {
  if (!kernel) {
    if (layout == "NCHW") return std::array<int, 4>{0, 1, 2, 3};
    if (layout == "NHWC") return std::array<int, 4>{0, 3, 1, 2};
  } else {
    if (layout == "OIHW") return std::array<int, 4>{0, 1, 2, 3};
    if (layout == "OHWI") return std::array<int, 4>{0, 3, 1, 2};
    if (layout == "HWIO") return std::array<int, 4>{3, 2, 0, 1};
  }
  return std::nullopt;
}

// A 4-D tensor type read in `axes` order (to NCHW / OIHW), or written back
// from that order (`inverse`).
Type Permute4(const TensorTypeNode* t, const std::array<int, 4>& axes, bool inverse) {
  if (!t->has_shape() || t->shape().size() != 4) return Type(t);
  std::vector<Dim> out(4);
  for (int i = 0; i < 4; ++i) {
    if (inverse)
      out[axes[i]] = t->shape()[i];
    else
      out[i] = t->shape()[axes[i]];
  }
  return TensorTypeNode::Make(std::move(out), t->dtype());
}

StatusOr<Type> InferConv2dCanonical(const TensorTypeNode* d, const TensorTypeNode* w,
                                    const Attrs& attrs);

// nn.conv2d with data_layout (NCHW, NHWC), kernel_layout (OIHW, OHWI, HWIO)
// and out_layout (default: data_layout): inferred in NCHW / OIHW.
StatusOr<Type> InferConv2d(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "nn.conv2d";
  PLIR_ASSIGN_OR_RETURN(auto d, TensorArg(op, args, 0));
  PLIR_ASSIGN_OR_RETURN(auto w, TensorArg(op, args, 1));
  auto layout = [&](const char* key, const char* def) {
    const AttrValue* v = attrs.Get(key);
    return v ? v->as_string() : std::string(def);
  };
  std::string dl = layout("data_layout", "NCHW"), kl = layout("kernel_layout", "OIHW");
  std::string ol = layout("out_layout", dl.c_str());
  auto da = LayoutAxes(dl, false), ka = LayoutAxes(kl, true), oa = LayoutAxes(ol, false);
  if (!da)
    return InvalidArgument("nn.conv2d: unsupported data_layout \"" + dl + "\" (NCHW or NHWC)");
  if (!ka)
    return InvalidArgument("nn.conv2d: unsupported kernel_layout \"" + kl +
                           "\" (OIHW, OHWI or HWIO)");
  if (!oa)
    return InvalidArgument("nn.conv2d: unsupported out_layout \"" + ol + "\" (NCHW or NHWC)");
  Type dc = d ? Permute4(d, *da, false) : Type();
  Type wc = w ? Permute4(w, *ka, false) : Type();
  PLIR_ASSIGN_OR_RETURN(Type out,
                        InferConv2dCanonical(d ? As<TensorTypeNode>(dc) : nullptr,
                                             w ? As<TensorTypeNode>(wc) : nullptr, attrs));
  auto* ot = As<TensorTypeNode>(out);
  return ot ? Permute4(ot, *oa, true) : out;
}

StatusOr<Type> InferConv2dCanonical(const TensorTypeNode* d, const TensorTypeNode* w,
                                    const Attrs& attrs) {
  const std::string op = "nn.conv2d";
  PLIR_ASSIGN_OR_RETURN(auto strides, Expand(attrs, "strides", 2, 1));
  PLIR_ASSIGN_OR_RETURN(auto padding, Expand(attrs, "padding", 4, 0));
  PLIR_ASSIGN_OR_RETURN(auto dilation, Expand(attrs, "dilation", 2, 1));
  for (int64_t s : strides)
    if (s <= 0) return InvalidArgument("nn.conv2d: strides must be positive");
  for (int64_t s : dilation)
    if (s <= 0) return InvalidArgument("nn.conv2d: dilation must be positive");
  for (int64_t s : padding)
    if (s < 0) return InvalidArgument("nn.conv2d: padding must be non-negative");
  int64_t groups = attrs.Get("groups") ? attrs.Get("groups")->as_int() : 1;
  if (groups <= 0) return InvalidArgument("nn.conv2d: groups must be positive");
  if (!d || !w)
    return TensorTypeNode::MakeRank(4, d ? d->dtype() : w ? w->dtype() : DataType::kUnknown);
  PLIR_ASSIGN_OR_RETURN(DataType dt, SameDType(op, d, w));
  if ((d->ndim() >= 0 && d->ndim() != 4) || (w->ndim() >= 0 && w->ndim() != 4))
    return InvalidArgument("nn.conv2d expects 4-D data (NCHW) and weight (OIHW), got " +
                           ShapeStr(d) + " and " + ShapeStr(w));
  if (!d->has_shape() || !w->has_shape()) return TensorTypeNode::MakeRank(4, dt);
  const auto& ds = d->shape();
  const auto& ws = w->shape();
  if (const AttrValue* ch = attrs.Get("channels")) {
    if (ws[0].is_const() && ws[0].value != ch->as_int())
      return InvalidArgument("nn.conv2d: channels=" + std::to_string(ch->as_int()) +
                             " but the weight has " + std::to_string(ws[0].value) +
                             " output channels");
  }
  if (const AttrValue* ks = attrs.Get("kernel_size")) {
    std::vector<int64_t> k;
    ks->GetIntList(&k);
    if (k.size() != 2 || (ws[2].is_const() && ws[2].value != k[0]) ||
        (ws[3].is_const() && ws[3].value != k[1]))
      return InvalidArgument("nn.conv2d: kernel_size does not match the weight shape " +
                             ShapeStr(w));
  }
  if (ws[1].is_const() && !CheckedMul(ws[1].value, groups))
    return InvalidArgument("nn.conv2d: weight channels times groups does not fit in 64 bits");
  if (ws[0].is_const() && ws[0].value % groups != 0)
    return InvalidArgument(
        "nn.conv2d: " + std::to_string(ws[0].value) +
        " output channels are not divisible by groups=" + std::to_string(groups));
  if (ds[1].is_const() && ws[1].is_const() && ds[1].value != ws[1].value * groups)
    return InvalidArgument(
        "nn.conv2d: data has " + std::to_string(ds[1].value) + " input channels, weight expects " +
        std::to_string(ws[1].value * groups) + " (groups=" + std::to_string(groups) + ")");
  std::vector<Dim> out{ds[0], ws[0], Dim(), Dim()};
  for (int i = 0; i < 2; ++i) {
    const Dim& in = ds[2 + i];
    const Dim& k = ws[2 + i];
    if (!in.is_const() || !k.is_const()) return TensorTypeNode::MakeRank(4, dt);
    auto eff_m = CheckedMul(dilation[i], k.value - 1);
    auto padded_m = CheckedAdd(in.value, padding[i]);
    if (padded_m) padded_m = CheckedAdd(*padded_m, padding[i + 2]);
    if (!eff_m || !CheckedAdd(*eff_m, 1) || !padded_m)
      return InvalidArgument("nn.conv2d: the output size computation overflows 64 bits");
    int64_t eff = *eff_m + 1;
    int64_t padded = *padded_m;
    if (padded < eff)
      return InvalidArgument("nn.conv2d: kernel larger than padded input in " + ShapeStr(d) +
                             " with weight " + ShapeStr(w));
    out[2 + i] = Dim::Const((padded - eff) / strides[i] + 1);
  }
  return TensorTypeNode::Make(std::move(out), dt);
}

// nn.conv1d / nn.conv3d and the transposed convolutions (1-D, 2-D, 3-D):
// channels-first data (NCW, NCHW, NCDHW), weight OI... (transposed: IO...).
// padding: 1, n or 2n values (all begins, then all ends): SpatialAttr.

const char* DataLayoutOf(int nd) { return nd == 1 ? "NCW" : nd == 2 ? "NCHW" : "NCDHW"; }
const char* KernelLayoutOf(int nd, bool transpose) {
  if (transpose) return nd == 1 ? "IOW" : nd == 2 ? "IOHW" : "IODHW";
  return nd == 1 ? "OIW" : nd == 2 ? "OIHW" : "OIDHW";
}

TypeInferFn InferConvNd(std::string op, int nd, bool transpose) {
  return [op, nd, transpose](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto d, TensorArg(op, args, 0));
    PLIR_ASSIGN_OR_RETURN(auto w, TensorArg(op, args, 1));
    PLIR_RETURN_IF_ERROR(CheckDType(op, d, DTypeClass::kNumeric));
    if (StringAttr(attrs, "data_layout", DataLayoutOf(nd)) != DataLayoutOf(nd) ||
        StringAttr(attrs, "kernel_layout", KernelLayoutOf(nd, transpose)) !=
            KernelLayoutOf(nd, transpose) ||
        StringAttr(attrs, "out_layout", DataLayoutOf(nd)) != DataLayoutOf(nd))
      return InvalidArgument(op + ": only data_layout " + DataLayoutOf(nd) + " and kernel_layout " +
                             KernelLayoutOf(nd, transpose) + " are supported");
    PLIR_ASSIGN_OR_RETURN(auto st, SpatialAttr(op, attrs, "strides", nd, 1, false));
    PLIR_ASSIGN_OR_RETURN(auto dil, SpatialAttr(op, attrs, "dilation", nd, 1, false));
    PLIR_ASSIGN_OR_RETURN(auto pad, SpatialAttr(op, attrs, "padding", nd, 0, true));
    std::vector<int64_t> opad(nd, 0);
    if (transpose) {
      PLIR_ASSIGN_OR_RETURN(opad, SpatialAttr(op, attrs, "output_padding", nd, 0, false));
    }
    for (int i = 0; i < nd; ++i) {
      if (st[i] <= 0 || dil[i] <= 0)
        return InvalidArgument(op + ": strides and dilation must be positive");
      if (pad[i] < 0 || pad[i + nd] < 0 || opad[i] < 0)
        return InvalidArgument(op + ": padding must be non-negative");
      if (st[i] > (int64_t{1} << 31) || dil[i] > (int64_t{1} << 31) ||
          pad[i] > (int64_t{1} << 40) || pad[i + nd] > (int64_t{1} << 40) ||
          opad[i] > (int64_t{1} << 31))
        return InvalidArgument(op + ": strides, dilation or padding too large");
      if (transpose && opad[i] >= std::max(st[i], dil[i]))
        return InvalidArgument(op +
                               ": output_padding must be smaller than the stride or the dilation");
    }
    int64_t groups = IntAttr(attrs, "groups", 1);
    if (groups <= 0) return InvalidArgument(op + ": groups must be positive");
    DataType dt = d ? d->dtype() : w ? w->dtype() : DataType::kUnknown;
    if (const AttrValue* od = attrs.Get("out_dtype"); od && !od->as_string().empty()) {
      auto p = ParseDataType(od->as_string());
      if (!p) return InvalidArgument(op + ": unknown out_dtype \"" + od->as_string() + "\"");
      if (d && d->dtype() != DataType::kUnknown && *p != d->dtype())
        return InvalidArgument(op + ": out_dtype other than the data's dtype is not supported");
    }
    if (!d || !w) return TensorTypeNode::MakeRank(nd + 2, dt);
    PLIR_ASSIGN_OR_RETURN(dt, SameDType(op, d, w));
    if ((d->ndim() >= 0 && d->ndim() != nd + 2) || (w->ndim() >= 0 && w->ndim() != nd + 2))
      return InvalidArgument(op + " expects " + std::to_string(nd + 2) +
                             "-D data and weight, got " + ShapeStr(d) + " and " + ShapeStr(w));
    if (!d->has_shape() || !w->has_shape()) return TensorTypeNode::MakeRank(nd + 2, dt);
    const auto& ds = d->shape();
    const auto& ws = w->shape();
    // Channels: plain weight (O, I/groups, k...); transposed (I, O/groups, k...).
    const Dim& in_c = ds[1];
    Dim out_c;
    if (!transpose) {
      if (ws[0].is_const() && ws[0].value % groups != 0)
        return InvalidArgument(
            op + ": " + std::to_string(ws[0].value) +
            " output channels are not divisible by groups=" + std::to_string(groups));
      if (in_c.is_const() && ws[1].is_const() &&
          (!CheckedMul(ws[1].value, groups) || in_c.value != ws[1].value * groups))
        return InvalidArgument(op + ": data has " + std::to_string(in_c.value) +
                               " input channels, weight " + ShapeStr(w) + " expects " +
                               std::to_string(ws[1].value) + " x groups=" + std::to_string(groups));
      out_c = ws[0];
    } else {
      if (in_c.is_const() && ws[0].is_const() && in_c.value != ws[0].value)
        return InvalidArgument(op + ": data has " + std::to_string(in_c.value) +
                               " input channels, weight " + ShapeStr(w) + " has " +
                               std::to_string(ws[0].value));
      if (ws[0].is_const() && ws[0].value % groups != 0)
        return InvalidArgument(
            op + ": input channels are not divisible by groups=" + std::to_string(groups));
      if (ws[1].is_const()) {
        auto oc = CheckedMul(ws[1].value, groups);
        if (!oc) return InvalidArgument(op + ": output channels overflow");
        out_c = Dim::Const(*oc);
      } else {
        return TensorTypeNode::MakeRank(nd + 2, dt);
      }
    }
    std::vector<Dim> out{ds[0], out_c};
    for (int i = 0; i < nd; ++i) {
      const Dim& in = ds[2 + i];
      const Dim& k = ws[2 + i];
      if (!in.is_const() || !k.is_const()) return TensorTypeNode::MakeRank(nd + 2, dt);
      i128 eff = static_cast<i128>(dil[i]) * (k.value - 1) + 1;
      i128 o;
      if (!transpose) {
        i128 padded = static_cast<i128>(in.value) + pad[i] + pad[i + nd];
        if (padded < eff)
          return InvalidArgument(op + ": kernel larger than the padded input in " + ShapeStr(d) +
                                 " with weight " + ShapeStr(w));
        o = (padded - eff) / st[i] + 1;
      } else {
        o = static_cast<i128>(in.value - 1) * st[i] - pad[i] - pad[i + nd] + eff + opad[i];
        if (in.value == 0) o = 0;
        if (o < 0) return InvalidArgument(op + ": the padding is larger than the output");
      }
      if (o > std::numeric_limits<int64_t>::max())
        return InvalidArgument(op + ": the output size overflows 64 bits");
      out.push_back(Dim::Const(static_cast<int64_t>(o)));
    }
    return TensorTypeNode::Make(std::move(out), dt);
  };
}

}  // namespace

void RegisterNnOps(OpRegistry& r) {
  Add(r, Def("nn.conv2d",
             Onnx("2-D convolution, data NCHW (or data_layout), weight OIHW (or kernel_layout)",
                  "Conv"),
             2, 2, InferConv2d,
             {{"strides", AttrKind::kIntList, false,
               AttrValue::List({AttrValue::Int(1), AttrValue::Int(1)})},
              {"padding", AttrKind::kIntList, false,
               AttrValue::List(
                   {AttrValue::Int(0), AttrValue::Int(0), AttrValue::Int(0), AttrValue::Int(0)})},
              {"dilation", AttrKind::kIntList, false,
               AttrValue::List({AttrValue::Int(1), AttrValue::Int(1)})},
              {"groups", AttrKind::kInt, false, AttrValue::Int(1)},
              {"channels", AttrKind::kInt, false, std::nullopt},
              {"kernel_size", AttrKind::kIntList, false, std::nullopt},
              {"data_layout", AttrKind::kString, false, AttrValue::String("NCHW")},
              {"kernel_layout", AttrKind::kString, false, AttrValue::String("OIHW")},
              {"out_layout", AttrKind::kString, false, std::nullopt}},
             true, OpPattern::kOutEWiseFusable));
  for (int nd = 1; nd <= 3; ++nd) {
    for (bool transpose : {false, true}) {
      if (nd == 2 && !transpose) continue;  // nn.conv2d above (with its layouts)
      std::string name = "nn.conv" + std::to_string(nd) + "d" + (transpose ? "_transpose" : "");
      std::vector<AttrValue> one(nd, AttrValue::Int(1)), zero(nd, AttrValue::Int(0)),
          zero2(2 * nd, AttrValue::Int(0));
      std::vector<AttrSpec> attrs = {
          {"strides", AttrKind::kIntList, false, AttrValue::List(one)},
          {"padding", AttrKind::kIntList, false, AttrValue::List(zero2)}};
      if (transpose)
        attrs.push_back({"output_padding", AttrKind::kIntList, false, AttrValue::List(zero)});
      attrs.push_back({"dilation", AttrKind::kIntList, false, AttrValue::List(one)});
      attrs.push_back({"groups", AttrKind::kInt, false, AttrValue::Int(1)});
      attrs.push_back(
          {"data_layout", AttrKind::kString, false, AttrValue::String(DataLayoutOf(nd))});
      attrs.push_back({"kernel_layout", AttrKind::kString, false,
                       AttrValue::String(KernelLayoutOf(nd, transpose))});
      attrs.push_back({"out_layout", AttrKind::kString, false, std::nullopt});
      attrs.push_back({"out_dtype", AttrKind::kString, false, std::nullopt});
      std::string dims = std::to_string(nd) + "-D";
      std::string desc = transpose
                             ? dims + " transposed convolution (the gradient of conv), data " +
                                   DataLayoutOf(nd) + ", weight " + KernelLayoutOf(nd, true) +
                                   " (in, out/groups, k...)"
                             : dims + " convolution, data " + std::string(DataLayoutOf(nd)) +
                                   ", weight " + KernelLayoutOf(nd, false);
      Add(r, Def(name,
                 Onnx(desc + "; padding 1, n or 2n values (all begins, then all ends)",
                      transpose ? "ConvTranspose" : "Conv"),
                 2, 2, InferConvNd(name, nd, transpose), attrs, true, OpPattern::kOutEWiseFusable));
    }
  }
}

}  // namespace plir::internal
