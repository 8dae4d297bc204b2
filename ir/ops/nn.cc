// Neural-network ops: softmax and 2-D convolution.
#include "ir/ops/infer_util.h"
#include "ir/ops/families.h"

namespace plir::internal {
namespace {

StatusOr<Type> InferSoftmax(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("nn.softmax", args, 0));
  if (!a) return UnknownTensor();
  if (a->ndim() >= 0) {
    int64_t axis = attrs.Get("axis") ? attrs.Get("axis")->as_int() : -1;
    PLIR_RETURN_IF_ERROR(NormalizeAxis("nn.softmax", axis, a->ndim()).status());
  }
  return Type(a);
}

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
    if (inverse) out[axes[i]] = t->shape()[i];
    else out[i] = t->shape()[axes[i]];
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
  if (!da) return InvalidArgument("nn.conv2d: unsupported data_layout \"" + dl + "\" (NCHW or NHWC)");
  if (!ka)
    return InvalidArgument("nn.conv2d: unsupported kernel_layout \"" + kl + "\" (OIHW, OHWI or HWIO)");
  if (!oa) return InvalidArgument("nn.conv2d: unsupported out_layout \"" + ol + "\" (NCHW or NHWC)");
  Type dc = d ? Permute4(d, *da, false) : Type();
  Type wc = w ? Permute4(w, *ka, false) : Type();
  PLIR_ASSIGN_OR_RETURN(Type out, InferConv2dCanonical(d ? As<TensorTypeNode>(dc) : nullptr,
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
  for (int64_t s : strides) if (s <= 0) return InvalidArgument("nn.conv2d: strides must be positive");
  for (int64_t s : dilation) if (s <= 0) return InvalidArgument("nn.conv2d: dilation must be positive");
  for (int64_t s : padding) if (s < 0) return InvalidArgument("nn.conv2d: padding must be non-negative");
  int64_t groups = attrs.Get("groups") ? attrs.Get("groups")->as_int() : 1;
  if (groups <= 0) return InvalidArgument("nn.conv2d: groups must be positive");
  if (!d || !w) return TensorTypeNode::MakeRank(4, d ? d->dtype() : w ? w->dtype() : DataType::kUnknown);
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
    return InvalidArgument("nn.conv2d: " + std::to_string(ws[0].value) +
                           " output channels are not divisible by groups=" + std::to_string(groups));
  if (ds[1].is_const() && ws[1].is_const() && ds[1].value != ws[1].value * groups)
    return InvalidArgument("nn.conv2d: data has " + std::to_string(ds[1].value) +
                           " input channels, weight expects " +
                           std::to_string(ws[1].value * groups) + " (groups=" +
                           std::to_string(groups) + ")");
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
      return InvalidArgument("nn.conv2d: kernel larger than padded input in " +
                             ShapeStr(d) + " with weight " + ShapeStr(w));
    out[2 + i] = Dim::Const((padded - eff) / strides[i] + 1);
  }
  return TensorTypeNode::Make(std::move(out), dt);
}

}  // namespace

void RegisterNnOps(OpRegistry& r) {
  Add(r, Def("nn.softmax", "softmax along `axis`", 1, 1, InferSoftmax,
             {{"axis", AttrKind::kInt, false, AttrValue::Int(-1)}}, true, OpPattern::kOpaque));
  Add(r, Def("nn.conv2d", "2-D convolution, data NCHW (or data_layout), weight OIHW (or kernel_layout)", 2, 2, InferConv2d,
             {{"strides", AttrKind::kIntList, false, AttrValue::List({AttrValue::Int(1), AttrValue::Int(1)})},
              {"padding", AttrKind::kIntList, false,
               AttrValue::List({AttrValue::Int(0), AttrValue::Int(0), AttrValue::Int(0), AttrValue::Int(0)})},
              {"dilation", AttrKind::kIntList, false, AttrValue::List({AttrValue::Int(1), AttrValue::Int(1)})},
              {"groups", AttrKind::kInt, false, AttrValue::Int(1)},
              {"channels", AttrKind::kInt, false, std::nullopt},
              {"kernel_size", AttrKind::kIntList, false, std::nullopt},
              {"data_layout", AttrKind::kString, false, AttrValue::String("NCHW")},
              {"kernel_layout", AttrKind::kString, false, AttrValue::String("OIHW")},
              {"out_layout", AttrKind::kString, false, std::nullopt}},
             true, OpPattern::kOutEWiseFusable));
}

}  // namespace plir::internal
