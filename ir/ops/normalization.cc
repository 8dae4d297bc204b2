// Softmax and normalization: softmax, log_softmax, layer_norm, group_norm,
// instance_norm, rms_norm, batch_norm (inference form).
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

TypeInferFn InferSoftmax(std::string op) {
  return [op](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    if (!a) return UnknownTensor();
    PLIR_RETURN_IF_ERROR(CheckDType(op, a, DTypeClass::kFloat));
    if (a->ndim() >= 0)
      PLIR_RETURN_IF_ERROR(NormalizeAxis(op, IntAttr(attrs, "axis", -1), a->ndim()).status());
    return Type(a);
  };
}

// Checks that parameter `i` (gamma, beta, ...) is a tensor of x's dtype
// whose shape is x's dimensions at `axes` (when both are known).
Status CheckParam(const std::string& op, const Args& args, size_t i, const char* what,
                  const TensorTypeNode* x, const std::vector<int64_t>& axes) {
  PLIR_ASSIGN_OR_RETURN(auto p, TensorArg(op, args, i));
  if (!p) return Status::Ok();
  if (x) PLIR_RETURN_IF_ERROR(SameDType(op, x, p).status());
  if (p->ndim() >= 0 && p->ndim() != static_cast<int>(axes.size()))
    return InvalidArgument(op + ": " + what + " must have rank " + std::to_string(axes.size()) +
                           ", got " + ShapeStr(p));
  if (x && x->has_shape() && p->has_shape())
    for (size_t k = 0; k < axes.size(); ++k) {
      const Dim& a = x->shape()[axes[k]];
      const Dim& b = p->shape()[k];
      if (a.is_const() && b.is_const() && a.value != b.value)
        return InvalidArgument(op + ": " + what + " " + ShapeStr(p) + " does not match the data " +
                               ShapeStr(x) + " at the normalized axes");
    }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> AxesOf(const std::string& op, const Attrs& attrs, const char* key,
                                      int ndim, std::vector<int64_t> def) {
  std::vector<int64_t> axes = IntListAttr(attrs, key).value_or(def);
  std::vector<bool> seen(ndim, false);
  for (int64_t& a : axes) {
    PLIR_ASSIGN_OR_RETURN(a, NormalizeAxis(op, a, ndim));
    if (seen[a]) return InvalidArgument(op + ": axis " + std::to_string(a) + " given twice");
    seen[a] = true;
  }
  return axes;
}

// layer_norm(x, gamma, beta, axes=[...]) and rms_norm(x, weight, axes=[...]).
TypeInferFn InferLayerNorm(std::string op, int params) {
  return [op, params](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
    PLIR_RETURN_IF_ERROR(CheckDType(op, x, DTypeClass::kFloat));
    if (!x) return UnknownTensor();
    if (x->ndim() < 0) return Type(x);
    PLIR_ASSIGN_OR_RETURN(auto axes, AxesOf(op, attrs, "axes", x->ndim(), {-1}));
    const char* names[] = {"gamma", "beta"};
    for (int i = 0; i < params; ++i)
      PLIR_RETURN_IF_ERROR(CheckParam(op, args, 1 + i, params == 1 ? "weight" : names[i], x, axes));
    return Type(x);
  };
}

// group_norm(x, gamma, beta, num_groups=g, channel_axis=c, axes=[...]) and
// instance_norm (groups = channels): gamma and beta have x's channel count.
TypeInferFn InferGroupNorm(std::string op, bool instance) {
  return [op, instance](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
    PLIR_RETURN_IF_ERROR(CheckDType(op, x, DTypeClass::kFloat));
    if (!x) return UnknownTensor();
    if (x->ndim() < 0) return Type(x);
    if (x->ndim() < 2)
      return InvalidArgument(op + " expects data of rank >= 2, got " + ShapeStr(x));
    PLIR_ASSIGN_OR_RETURN(int64_t c,
                          NormalizeAxis(op, IntAttr(attrs, "channel_axis", 1), x->ndim()));
    std::vector<int64_t> def;
    for (int i = 0; i < x->ndim(); ++i)
      if (i != c && i != 0) def.push_back(i);
    PLIR_ASSIGN_OR_RETURN(auto axes, AxesOf(op, attrs, "axes", x->ndim(), def));
    for (int64_t a : axes)
      if (a == c) return InvalidArgument(op + ": axes must not include the channel axis");
    if (!instance) {
      int64_t g = IntAttr(attrs, "num_groups", 0);
      if (g <= 0) return InvalidArgument(op + ": num_groups must be positive");
      if (x->has_shape() && x->shape()[c].is_const() && x->shape()[c].value % g != 0)
        return InvalidArgument(op + ": " + std::to_string(x->shape()[c].value) +
                               " channels are not divisible by num_groups=" + std::to_string(g));
    }
    PLIR_RETURN_IF_ERROR(CheckParam(op, args, 1, "gamma", x, {c}));
    PLIR_RETURN_IF_ERROR(CheckParam(op, args, 2, "beta", x, {c}));
    return Type(x);
  };
}

// batch_norm(x, gamma, beta, moving_mean, moving_var, axis=1): the four
// parameters have x's channel count.
StatusOr<Type> InferBatchNorm(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "nn.batch_norm";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  PLIR_RETURN_IF_ERROR(CheckDType(op, x, DTypeClass::kFloat));
  if (!x) return UnknownTensor();
  if (x->ndim() < 0) return Type(x);
  PLIR_ASSIGN_OR_RETURN(int64_t c, NormalizeAxis(op, IntAttr(attrs, "axis", 1), x->ndim()));
  const char* names[] = {"gamma", "beta", "moving_mean", "moving_var"};
  for (int i = 0; i < 4; ++i) PLIR_RETURN_IF_ERROR(CheckParam(op, args, 1 + i, names[i], x, {c}));
  return Type(x);
}

}  // namespace

void RegisterNormalizationOps(OpRegistry& r) {
  AttrSpec axis{"axis", AttrKind::kInt, false, AttrValue::Int(-1)};
  Add(r, Def("nn.softmax", Onnx("softmax along `axis`", "Softmax (opset 13)"), 1, 1,
             InferSoftmax("nn.softmax"), {axis}, true, OpPattern::kOpaque));
  Add(r, Def("nn.log_softmax", Onnx("log of softmax along `axis`", "LogSoftmax (opset 13)"), 1, 1,
             InferSoftmax("nn.log_softmax"), {axis}, true, OpPattern::kOpaque));
  AttrSpec eps{"epsilon", AttrKind::kFloat, false, AttrValue::Float(1e-5)};
  AttrSpec center{"center", AttrKind::kBool, false, AttrValue::Bool(true)};
  AttrSpec scale{"scale", AttrKind::kBool, false, AttrValue::Bool(true)};
  Add(r, Def("nn.layer_norm",
             Onnx("(x - mean) / sqrt(var + epsilon) * gamma + beta, statistics over `axes`: "
                  "layer_norm(x, gamma, beta), gamma and beta shaped as x at axes",
                  "LayerNormalization"),
             3, 3, InferLayerNorm("nn.layer_norm", 2),
             {{"axes", AttrKind::kIntList, true, std::nullopt}, eps, center, scale}, true,
             OpPattern::kOpaque));
  Add(r, Def("nn.rms_norm",
             Onnx("x / sqrt(mean(x^2) + epsilon) * weight, over `axes`: rms_norm(x, weight)",
                  "RMSNormalization"),
             2, 2, InferLayerNorm("nn.rms_norm", 1),
             {{"axes", AttrKind::kIntList, false, AttrValue::List({AttrValue::Int(-1)})}, eps},
             true, OpPattern::kOpaque));
  AttrSpec chan{"channel_axis", AttrKind::kInt, false, AttrValue::Int(1)};
  AttrSpec gaxes{"axes", AttrKind::kIntList, false, std::nullopt};
  Add(r, Def("nn.group_norm",
             Onnx("layer norm over each group of num_groups channels and `axes` (default: every "
                  "axis but 0 and "
                  "the channel axis): group_norm(x, gamma, beta), gamma and beta per channel",
                  "GroupNormalization"),
             3, 3, InferGroupNorm("nn.group_norm", false),
             {{"num_groups", AttrKind::kInt, true, std::nullopt}, chan, gaxes, eps, center, scale},
             true, OpPattern::kOpaque));
  Add(r, Def("nn.instance_norm",
             Onnx("group_norm with one group per channel: instance_norm(x, gamma, beta)",
                  "InstanceNormalization"),
             3, 3, InferGroupNorm("nn.instance_norm", true), {chan, gaxes, eps, center, scale},
             true, OpPattern::kOpaque));
  Add(r,
      Def("nn.batch_norm",
          Onnx("inference batch norm: (x - moving_mean) / sqrt(moving_var + epsilon) * gamma + "
               "beta per "
               "channel `axis`: batch_norm(x, gamma, beta, moving_mean, moving_var). Unlike "
               "Relax's, whose "
               "result is (y, mean, var), the result is y alone (momentum is accepted and unused)",
               "BatchNormalization (inference)"),
          5, 5, InferBatchNorm,
          {{"axis", AttrKind::kInt, false, AttrValue::Int(1)},
           eps,
           center,
           scale,
           {"momentum", AttrKind::kFloat, false, AttrValue::Float(0.1)}},
          true, OpPattern::kOpaque));
}

}  // namespace plir::internal
