// Pooling: max and average pooling in 1, 2 and 3 dimensions (strides,
// padding, dilation, ceil_mode, count_include_pad) and adaptive average and
// max pooling (global pooling: output_size 1).
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

// The position of N, C and the spatial axes in `layout` (NCW, NCHW, NCDHW,
// or channels last: NWC, NHWC, NDHWC).
std::optional<std::vector<int>> PoolLayout(const std::string& layout, int nd) {
  static const char* first[] = {"NCW", "NCHW", "NCDHW"};
  static const char* last[] = {"NWC", "NHWC", "NDHWC"};
  std::vector<int> axes;  // N, C, spatial...
  if (layout == first[nd - 1]) {
    for (int i = 0; i < nd + 2; ++i) axes.push_back(i);
  } else if (layout == last[nd - 1]) {
    axes.push_back(0);
    axes.push_back(nd + 1);
    for (int i = 0; i < nd; ++i) axes.push_back(i + 1);
  } else {
    return std::nullopt;
  }
  return axes;
}

TypeInferFn InferPool(std::string op, int nd) {
  return [op, nd](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
    PLIR_RETURN_IF_ERROR(CheckDType(op, x, DTypeClass::kNumeric));
    std::string layout = StringAttr(attrs, "layout", nd == 1 ? "NCW" : nd == 2 ? "NCHW" : "NCDHW");
    auto pos = PoolLayout(layout, nd);
    if (!pos) return InvalidArgument(op + ": unsupported layout \"" + layout + "\"");
    if (StringAttr(attrs, "out_layout", layout) != layout)
      return InvalidArgument(op + ": out_layout must equal layout");
    PLIR_ASSIGN_OR_RETURN(auto k, SpatialAttr(op, attrs, "pool_size", nd, 1, false));
    PLIR_ASSIGN_OR_RETURN(auto s, SpatialAttr(op, attrs, "strides", nd, 1, false));
    PLIR_ASSIGN_OR_RETURN(auto d, SpatialAttr(op, attrs, "dilation", nd, 1, false));
    PLIR_ASSIGN_OR_RETURN(auto p, SpatialAttr(op, attrs, "padding", nd, 0, true));
    for (int i = 0; i < nd; ++i) {
      if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0)
        return InvalidArgument(op + ": pool_size, strides and dilation must be positive");
      if (p[i] < 0 || p[i + nd] < 0) return InvalidArgument(op + ": padding must be non-negative");
      if (k[i] > (int64_t{1} << 31) || s[i] > (int64_t{1} << 31) || d[i] > (int64_t{1} << 31) ||
          p[i] > (int64_t{1} << 40) || p[i + nd] > (int64_t{1} << 40))
        return InvalidArgument(op + ": pool_size, strides, dilation or padding too large");
    }
    bool ceil = BoolAttr(attrs, "ceil_mode", false);
    if (!x) return TensorTypeNode::MakeRank(nd + 2, DataType::kUnknown);
    if (x->ndim() >= 0 && x->ndim() != nd + 2)
      return InvalidArgument(op + " expects " + std::to_string(nd + 2) + "-D data (" + layout +
                             "), got " + ShapeStr(x));
    if (!x->has_shape()) return TensorTypeNode::MakeRank(nd + 2, x->dtype());
    std::vector<Dim> out = x->shape();
    for (int i = 0; i < nd; ++i) {
      const Dim& in = x->shape()[(*pos)[2 + i]];
      if (!in.is_const()) return TensorTypeNode::MakeRank(nd + 2, x->dtype());
      int64_t eff = d[i] * (k[i] - 1) + 1;
      int64_t padded = in.value + p[i] + p[i + nd];
      if (padded < eff)
        return InvalidArgument(op + ": the window (" + std::to_string(eff) +
                               ") is larger than the padded input (" + std::to_string(padded) +
                               ") in " + ShapeStr(x));
      int64_t o = ceil ? (padded - eff + s[i] - 1) / s[i] + 1 : (padded - eff) / s[i] + 1;
      if (ceil && (o - 1) * s[i] >= in.value + p[i]) --o;  // the last window must start inside
      out[(*pos)[2 + i]] = Dim::Const(o);
    }
    return TensorTypeNode::Make(std::move(out), x->dtype());
  };
}

TypeInferFn InferAdaptivePool(std::string op, int nd) {
  return [op, nd](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
    PLIR_RETURN_IF_ERROR(CheckDType(op, x, DTypeClass::kNumeric));
    std::string layout = StringAttr(attrs, "layout", nd == 1 ? "NCW" : nd == 2 ? "NCHW" : "NCDHW");
    auto pos = PoolLayout(layout, nd);
    if (!pos) return InvalidArgument(op + ": unsupported layout \"" + layout + "\"");
    if (StringAttr(attrs, "out_layout", layout) != layout)
      return InvalidArgument(op + ": out_layout must equal layout");
    std::optional<std::vector<int64_t>> size;
    if (attrs.Get("output_size")) {
      PLIR_ASSIGN_OR_RETURN(size, SpatialAttr(op, attrs, "output_size", nd, 1, false));
      for (int64_t v : *size)
        if (v <= 0) return InvalidArgument(op + ": output_size must be positive");
    }
    if (!x) return TensorTypeNode::MakeRank(nd + 2, DataType::kUnknown);
    if (x->ndim() >= 0 && x->ndim() != nd + 2)
      return InvalidArgument(op + " expects " + std::to_string(nd + 2) + "-D data (" + layout +
                             "), got " + ShapeStr(x));
    if (!x->has_shape()) return TensorTypeNode::MakeRank(nd + 2, x->dtype());
    if (!size) return Type(x);  // output_size absent: the input's size
    std::vector<Dim> out = x->shape();
    for (int i = 0; i < nd; ++i) out[(*pos)[2 + i]] = Dim::Const((*size)[i]);
    return TensorTypeNode::Make(std::move(out), x->dtype());
  };
}

}  // namespace

void RegisterPoolingOps(OpRegistry& r) {
  const char* layouts[] = {"NCW", "NCHW", "NCDHW"};
  for (int nd = 1; nd <= 3; ++nd) {
    auto ones = [&](int n) {
      std::vector<AttrValue> v(n, AttrValue::Int(1));
      return AttrValue::List(v);
    };
    std::vector<AttrValue> zeros(2 * nd, AttrValue::Int(0));
    std::vector<AttrSpec> attrs = {
        {"pool_size", AttrKind::kIntList, false, ones(nd)},
        {"strides", AttrKind::kIntList, false, ones(nd)},
        {"padding", AttrKind::kIntList, false, AttrValue::List(zeros)},
        {"dilation", AttrKind::kIntList, false, ones(nd)},
        {"ceil_mode", AttrKind::kBool, false, AttrValue::Bool(false)},
        {"count_include_pad", AttrKind::kBool, false, AttrValue::Bool(false)},
        {"layout", AttrKind::kString, false, AttrValue::String(layouts[nd - 1])},
        {"out_layout", AttrKind::kString, false, std::nullopt}};
    std::string d = std::to_string(nd) + "d";
    std::string dims = std::to_string(nd) + "-D";
    std::string pads = "padding: " + std::to_string(nd) + " or " + std::to_string(2 * nd) +
                       " values (all begins, then all ends)";
    Add(r,
        Def("nn.max_pool" + d,
            Onnx(dims + " max pooling over windows of pool_size (" + pads + "; padding never wins)",
                 nd == 2 ? "MaxPool, GlobalMaxPool" : "MaxPool"),
            1, 1, InferPool("nn.max_pool" + d, nd), attrs, true, OpPattern::kOutEWiseFusable));
    Add(r, Def("nn.avg_pool" + d,
               Onnx(dims + " average pooling over windows of pool_size (" + pads +
                        "); count_include_pad divides by the window size within the padded input",
                    "AveragePool"),
               1, 1, InferPool("nn.avg_pool" + d, nd), attrs, true, OpPattern::kOutEWiseFusable));
    std::vector<AttrSpec> adaptive = {
        {"output_size", AttrKind::kIntList, false, std::nullopt},
        {"layout", AttrKind::kString, false, AttrValue::String(layouts[nd - 1])},
        {"out_layout", AttrKind::kString, false, std::nullopt}};
    Add(r, Def("nn.adaptive_avg_pool" + d,
               Onnx(dims + " adaptive average pooling to output_size (default: the input's size; "
                           "1: global "
                           "pooling); window i covers [floor(i*in/out), ceil((i+1)*in/out))",
                    "GlobalAveragePool"),
               1, 1, InferAdaptivePool("nn.adaptive_avg_pool" + d, nd), adaptive, true,
               OpPattern::kOutEWiseFusable));
    Add(r, Def("nn.adaptive_max_pool" + d,
               Onnx(dims + " adaptive max pooling to output_size (windows as adaptive_avg_pool)",
                    "GlobalMaxPool"),
               1, 1, InferAdaptivePool("nn.adaptive_max_pool" + d, nd), adaptive, true,
               OpPattern::kOutEWiseFusable));
  }
}

}  // namespace plir::internal
