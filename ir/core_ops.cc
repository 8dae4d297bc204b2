// The core ops of the spec and their type inference.
//
// Tensor ops accept Object-typed (or unknown-rank) operands and then infer a
// less specific tensor type instead of failing: a loaded parameter in the lazy
// protocol is an Object until it is used.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>

#include "ir/checked_math.h"
#include "ir/op.h"

namespace plir::internal {
namespace {

using Args = ExprSpan;

// Returns the tensor type of args[i]; nullptr if the argument is an Object
// (type unknown). Fails if the argument is known not to be a tensor.
StatusOr<const TensorTypeNode*> TensorArg(const std::string& op, const Args& args, size_t i) {
  const Type& t = args[i]->type();
  if (t->kind() == NodeKind::kObjectType) return static_cast<const TensorTypeNode*>(nullptr);
  if (auto* tt = As<TensorTypeNode>(t)) return tt;
  return InvalidArgument(op + " expects a tensor as argument " + std::to_string(i) +
                         ", got " + TypeToString(t));
}

Type UnknownTensor(DataType dt = DataType::kUnknown) { return TensorTypeNode::MakeRank(-1, dt); }

std::string ShapeStr(const TensorTypeNode* t) { return TypeToString(Type(t)); }

// NumPy broadcasting of two known shapes. Returns nullopt when the result
// cannot be determined statically (different symbolic dims): rank is known.
StatusOr<std::optional<std::vector<Dim>>> Broadcast(const std::string& op,
                                                    const TensorTypeNode* a,
                                                    const TensorTypeNode* b) {
  const auto& x = a->shape();
  const auto& y = b->shape();
  size_t n = std::max(x.size(), y.size());
  std::vector<Dim> out(n);
  bool known = true;
  for (size_t i = 0; i < n; ++i) {
    const Dim* dx = i < n - x.size() ? nullptr : &x[i - (n - x.size())];
    const Dim* dy = i < n - y.size() ? nullptr : &y[i - (n - y.size())];
    if (!dx) { out[i] = *dy; continue; }
    if (!dy) { out[i] = *dx; continue; }
    if (*dx == *dy) { out[i] = *dx; continue; }
    if (dx->is_const() && dx->value == 1) { out[i] = *dy; continue; }
    if (dy->is_const() && dy->value == 1) { out[i] = *dx; continue; }
    if (dx->is_const() && dy->is_const())
      return InvalidArgument(op + ": shapes " + ShapeStr(a) + " and " + ShapeStr(b) +
                             " do not broadcast (dimension " + std::to_string(i) + ": " +
                             std::to_string(dx->value) + " vs " + std::to_string(dy->value) + ")");
    known = false;
  }
  if (!known) return std::optional<std::vector<Dim>>();
  return std::optional<std::vector<Dim>>(std::move(out));
}

StatusOr<DataType> SameDType(const std::string& op, const TensorTypeNode* a,
                             const TensorTypeNode* b) {
  DataType x = a->dtype(), y = b->dtype();
  if (x != DataType::kUnknown && y != DataType::kUnknown && x != y)
    return InvalidArgument(op + ": operand dtypes differ: " + std::string(DataTypeName(x)) +
                           " vs " + std::string(DataTypeName(y)));
  return x != DataType::kUnknown ? x : y;
}

TypeInferFn Elementwise(std::string op) {
  return [op](const Args& args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
    PLIR_ASSIGN_OR_RETURN(auto b, TensorArg(op, args, 1));
    if (!a || !b) {
      DataType dt = a ? a->dtype() : b ? b->dtype() : DataType::kUnknown;
      return UnknownTensor(dt);
    }
    PLIR_ASSIGN_OR_RETURN(DataType dt, SameDType(op, a, b));
    // Same type on both sides (the common case): share the operand's node.
    if (a == b || (a->dtype() == b->dtype() && a->has_shape() && b->has_shape() &&
                   a->shape() == b->shape()))
      return Type(a);
    if (a->has_shape() && b->has_shape()) {
      PLIR_ASSIGN_OR_RETURN(auto shape, Broadcast(op, a, b));
      if (shape && *shape == a->shape() && dt == a->dtype()) return Type(a);
      if (shape && *shape == b->shape() && dt == b->dtype()) return Type(b);
      if (shape) return TensorTypeNode::Make(std::move(*shape), dt);
      return TensorTypeNode::MakeRank(std::max(a->ndim(), b->ndim()), dt);
    }
    if (a->ndim() >= 0 && b->ndim() >= 0)
      return TensorTypeNode::MakeRank(std::max(a->ndim(), b->ndim()), dt);
    return UnknownTensor(dt);
  };
}

StatusOr<Type> InferUnarySame(const std::string& op, const Args& args) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
  if (!a) return UnknownTensor();
  return Type(a);
}

// Normalizes `axis` against `ndim`; fails if out of range.
StatusOr<int64_t> NormalizeAxis(const std::string& op, int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    return InvalidArgument(op + ": axis " + std::to_string(axis) + " out of range for rank " +
                           std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

StatusOr<Type> InferSoftmax(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("nn.softmax", args, 0));
  if (!a) return UnknownTensor();
  if (a->ndim() >= 0) {
    int64_t axis = attrs.Get("axis") ? attrs.Get("axis")->as_int() : -1;
    PLIR_RETURN_IF_ERROR(NormalizeAxis("nn.softmax", axis, a->ndim()).status());
  }
  return Type(a);
}

StatusOr<Type> InferMatmul(const Args& args, const Attrs&, TypeSpan) {
  const std::string op = "matmul";
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg(op, args, 0));
  PLIR_ASSIGN_OR_RETURN(auto b, TensorArg(op, args, 1));
  if (!a || !b) return UnknownTensor(a ? a->dtype() : b ? b->dtype() : DataType::kUnknown);
  PLIR_ASSIGN_OR_RETURN(DataType dt, SameDType(op, a, b));
  if (a->ndim() == 0 || b->ndim() == 0)
    return InvalidArgument("matmul: operands must have rank at least 1");
  if (!a->has_shape() || !b->has_shape()) {
    if (a->ndim() < 0 || b->ndim() < 0) return UnknownTensor(dt);
    int nd = std::max(a->ndim(), b->ndim());
    if (a->ndim() == 1) --nd;
    if (b->ndim() == 1) --nd;
    return TensorTypeNode::MakeRank(std::max(nd, 0), dt);
  }
  std::vector<Dim> x = a->shape(), y = b->shape();
  bool a_vec = x.size() == 1, b_vec = y.size() == 1;
  if (a_vec) x.insert(x.begin(), Dim::Const(1));
  if (b_vec) y.push_back(Dim::Const(1));
  const Dim& k1 = x.back();
  const Dim& k2 = y[y.size() - 2];
  if (k1.is_const() && k2.is_const() && k1.value != k2.value)
    return InvalidArgument("matmul: contraction dimensions differ: " + ShapeStr(a) + " @ " +
                           ShapeStr(b));
  // Broadcast the batch dimensions.
  std::vector<Dim> bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
  auto tx = TensorTypeNode::Make(bx, dt);
  auto ty = TensorTypeNode::Make(by, dt);
  PLIR_ASSIGN_OR_RETURN(auto batch, Broadcast(op, As<TensorTypeNode>(tx), As<TensorTypeNode>(ty)));
  int out_rank = static_cast<int>(std::max(bx.size(), by.size())) + 2 - a_vec - b_vec;
  if (!batch) return TensorTypeNode::MakeRank(out_rank, dt);
  std::vector<Dim> out = std::move(*batch);
  if (!a_vec) out.push_back(x[x.size() - 2]);
  if (!b_vec) out.push_back(y.back());
  return TensorTypeNode::Make(std::move(out), dt);
}

// reshape(x, s) with a shape value `s` (Relax's form): the tensor of shape
// `s`'s values (its rank when only that is known).
StatusOr<Type> InferReshapeToValue(const TensorTypeNode* a, const Type& s) {
  DataType dt = a ? a->dtype() : DataType::kUnknown;
  if (s->kind() == NodeKind::kObjectType) return UnknownTensor(dt);
  auto* st = As<ShapeTypeNode>(s);
  if (!st) return InvalidArgument("reshape: the new shape must be a shape value, got " + TypeToString(s));
  if (!st->has_values()) return TensorTypeNode::MakeRank(st->ndim(), dt);
  Type out = TensorTypeNode::Make(st->values(), dt);
  auto* ot = As<TensorTypeNode>(out);
  if (a && a->IsStatic() && ot->IsStatic() && a->NumElements() != ot->NumElements())
    return InvalidArgument("reshape: " + ShapeStr(a) + " has " + std::to_string(a->NumElements()) +
                           " elements, the new shape has " + std::to_string(ot->NumElements()));
  return out;
}

StatusOr<Type> InferReshape(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("reshape", args, 0));
  if (args.size() == 2) {
    if (attrs.Get("shape")) return InvalidArgument("reshape: give the shape as an argument or as attribute shape, not both");
    return InferReshapeToValue(a, args[1]->type());
  }
  if (!attrs.Get("shape")) return InvalidArgument("reshape requires attribute 'shape' or a shape value argument: reshape(x, s)");
  std::vector<int64_t> shape;
  attrs.Get("shape")->GetIntList(&shape);
  int minus_one = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (minus_one >= 0) return InvalidArgument("reshape: more than one -1 in shape");
      minus_one = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return InvalidArgument("reshape: negative dimension " + std::to_string(shape[i]));
    } else {
      auto k = CheckedMul(known, shape[i]);
      if (!k) return InvalidArgument("reshape: the new shape's element count does not fit in 64 bits");
      known = *k;
    }
  }
  DataType dt = a ? a->dtype() : DataType::kUnknown;
  if (a && a->IsStatic()) {
    int64_t total = a->NumElements();
    if (minus_one >= 0) {
      if (known == 0 || total % known != 0)
        return InvalidArgument("reshape: cannot reshape " + ShapeStr(a) + " with a -1 dimension");
      shape[minus_one] = total / known;
    } else if (known != total) {
      return InvalidArgument("reshape: " + ShapeStr(a) + " has " + std::to_string(total) +
                             " elements, the new shape has " + std::to_string(known));
    }
  } else if (minus_one >= 0) {
    return TensorTypeNode::MakeRank(static_cast<int>(shape.size()), dt);
  }
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::Const(d));
  return TensorTypeNode::Make(std::move(dims), dt);
}

StatusOr<Type> InferPermuteDims(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("permute_dims", args, 0));
  if (!a) return UnknownTensor();
  if (a->ndim() < 0) return Type(a);
  int nd = a->ndim();
  std::vector<int64_t> axes;
  if (const AttrValue* v = attrs.Get("axes")) {
    v->GetIntList(&axes);
  } else {
    for (int i = nd - 1; i >= 0; --i) axes.push_back(i);
  }
  if (static_cast<int>(axes.size()) != nd)
    return InvalidArgument("permute_dims: " + std::to_string(axes.size()) +
                           " axes for a tensor of rank " + std::to_string(nd));
  std::vector<bool> seen(nd, false);
  for (int64_t& ax : axes) {
    PLIR_ASSIGN_OR_RETURN(ax, NormalizeAxis("permute_dims", ax, nd));
    if (seen[ax]) return InvalidArgument("permute_dims: axis " + std::to_string(ax) + " repeated");
    seen[ax] = true;
  }
  if (!a->has_shape()) return Type(a);
  std::vector<Dim> out;
  for (int64_t ax : axes) out.push_back(a->shape()[ax]);
  return TensorTypeNode::Make(std::move(out), a->dtype());
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

Type SinfoResult(TypeSpan sinfo) {
  if (sinfo.empty()) return ObjectTypeNode::Get();
  if (sinfo.size() == 1) return sinfo[0];
  return TupleTypeNode::Make(ToVector(sinfo));
}

StatusOr<Type> InferCallTir(const Args& args, const Attrs&, TypeSpan sinfo) {
  if (args[0]->kind() != NodeKind::kGlobalVar)
    return InvalidArgument("call_tir: the first argument must be a global extern kernel (@name)");
  if (args[1]->kind() != NodeKind::kTuple && args[1]->type()->kind() != NodeKind::kTupleType &&
      args[1]->type()->kind() != NodeKind::kObjectType)
    return InvalidArgument("call_tir: the second argument must be a tuple of arguments");
  if (args.size() == 3 && args[2]->type()->kind() != NodeKind::kShapeType &&
      args[2]->type()->kind() != NodeKind::kObjectType)
    return InvalidArgument("call_tir: the third argument (tir_vars) must be a shape value, got " +
                           TypeToString(args[2]->type()));
  if (sinfo.empty()) return InvalidArgument("call_tir requires sinfo_args (the result type)");
  return SinfoResult(sinfo);
}

StatusOr<Type> InferCallPacked(const Args& args, const Attrs&, TypeSpan sinfo) {
  if (args[0]->kind() != NodeKind::kStringImm)
    return InvalidArgument("call_packed: the first argument must be the function name string");
  return SinfoResult(sinfo);
}

// match_cast(value, sinfo_args=[T]): the value, checked at run time to have
// type T; the symbolic dimensions of T not bound before are bound here (by
// the value's shape), as Relax's MatchCast binding does.
StatusOr<Type> InferMatchCast(const Args& args, const Attrs&, TypeSpan sinfo) {
  if (sinfo.size() != 1)
    return InvalidArgument("match_cast requires exactly one type in sinfo_args (the type to match)");
  if (!TypeCompatible(args[0]->type(), sinfo[0]))
    return InvalidArgument("match_cast: a value of type " + TypeToString(args[0]->type()) +
                           " can never match " + TypeToString(sinfo[0]));
  return sinfo[0];
}

StatusOr<DataType> DTypeAttr(const std::string& op, const Attrs& attrs, DataType def) {
  const AttrValue* v = attrs.Get("dtype");
  if (!v) {
    if (def == DataType::kUnknown) return InvalidArgument(op + " requires attribute dtype");
    return def;
  }
  std::optional<DataType> dt = ParseDataType(v->as_string());
  if (!dt) return InvalidArgument(op + ": unknown dtype \"" + v->as_string() + "\"");
  return *dt;
}

// zeros / ones (shape=[...], dtype=...): a tensor of that shape; full(v, ...)
// the same filled with the scalar v (dtype default: v's).
TypeInferFn InferCreation(std::string op, bool has_fill) {
  return [op](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    std::vector<int64_t> shape;
    attrs.Get("shape")->GetIntList(&shape);
    std::vector<Dim> dims;
    for (int64_t v : shape) {
      if (v < 0) return InvalidArgument(op + ": negative dimension " + std::to_string(v));
      dims.push_back(Dim::Const(v));
    }
    DataType def = DataType::kUnknown;
    if (!args.empty()) {
      PLIR_ASSIGN_OR_RETURN(auto fill, TensorArg(op, args, 0));
      if (fill && fill->ndim() > 0)
        return InvalidArgument(op + ": the fill value must be a scalar (0-d) tensor, got " +
                               ShapeStr(fill));
      if (fill) def = fill->dtype();
    }
    PLIR_ASSIGN_OR_RETURN(DataType dt, DTypeAttr(op, attrs, def));
    return TensorTypeNode::Make(std::move(dims), dt);
  };
}

StatusOr<Type> InferAstype(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg("astype", args, 0));
  PLIR_ASSIGN_OR_RETURN(DataType dt, DTypeAttr("astype", attrs, DataType::kUnknown));
  if (!x) return UnknownTensor(dt);
  if (!x->has_shape()) return TensorTypeNode::MakeRank(x->ndim(), dt);
  return TensorTypeNode::Make(x->shape(), dt);
}

// arange(start=, end=, step=, dtype=): [start, end) by step, as NumPy.
StatusOr<Type> InferArange(const Args&, const Attrs& attrs, TypeSpan) {
  auto num = [&](const char* k, double def) {
    const AttrValue* v = attrs.Get(k);
    if (!v) return def;
    return v->kind() == AttrValue::Kind::kInt ? static_cast<double>(v->as_int()) : v->as_float();
  };
  double start = num("start", 0), end = num("end", 0), step = num("step", 1);
  if (step == 0) return InvalidArgument("arange: step must not be 0");
  double n = std::ceil((end - start) / step);
  if (n < 0) n = 0;
  PLIR_ASSIGN_OR_RETURN(DataType dt, DTypeAttr("arange", attrs, DataType::kInt64));
  return TensorTypeNode::Make({Dim::Const(static_cast<int64_t>(n))}, dt);
}

// shape_to_tensor(s): the shape value s as a 1-D int64 tensor.
StatusOr<Type> InferShapeToTensor(const Args& args, const Attrs&, TypeSpan) {
  const Type& t = args[0]->type();
  if (t->kind() == NodeKind::kObjectType) return TensorTypeNode::MakeRank(1, DataType::kInt64);
  auto* st = As<ShapeTypeNode>(t);
  if (!st) return InvalidArgument("shape_to_tensor expects a shape value, got " + TypeToString(t));
  if (st->ndim() < 0) return TensorTypeNode::MakeRank(1, DataType::kInt64);
  return TensorTypeNode::Make({Dim::Const(st->ndim())}, DataType::kInt64);
}

bool IsIntDType(DataType dt) {
  return dt != DataType::kUnknown && dt != DataType::kBool && !IsFloat(dt);
}

// shape_of(x): the shape of tensor x as a shape value.
StatusOr<Type> InferShapeOf(const Args& args, const Attrs&, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("shape_of", args, 0));
  if (!a) return ShapeTypeNode::MakeRank(-1);
  if (a->has_shape()) return ShapeTypeNode::Make(a->shape());
  return ShapeTypeNode::MakeRank(a->ndim());
}

// tensor_to_shape(t): a 1-D integer tensor's values as a shape value (its
// rank is t's length when that is a constant).
StatusOr<Type> InferTensorToShape(const Args& args, const Attrs&, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto a, TensorArg("tensor_to_shape", args, 0));
  if (!a) return ShapeTypeNode::MakeRank(-1);
  if (a->ndim() >= 0 && a->ndim() != 1)
    return InvalidArgument("tensor_to_shape expects a 1-D tensor, got " + ShapeStr(a));
  if (a->dtype() != DataType::kUnknown && !IsIntDType(a->dtype()))
    return InvalidArgument("tensor_to_shape expects an integer tensor, got " + ShapeStr(a));
  if (a->has_shape() && a->shape()[0].is_const())
    return ShapeTypeNode::MakeRank(static_cast<int>(a->shape()[0].value));
  return ShapeTypeNode::MakeRank(-1);
}

// take(x, indices, axis=a): NumPy take; without axis, of the flattened x.
StatusOr<Type> InferTake(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg("take", args, 0));
  PLIR_ASSIGN_OR_RETURN(auto i, TensorArg("take", args, 1));
  if (i && i->dtype() != DataType::kUnknown && !IsIntDType(i->dtype()))
    return InvalidArgument("take: indices must be integers, got " + ShapeStr(i));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  const AttrValue* axis_attr = attrs.Get("axis");
  if (!axis_attr) {
    if (!i) return UnknownTensor(dt);
    return i->has_shape() ? TensorTypeNode::Make(i->shape(), dt) : TensorTypeNode::MakeRank(i->ndim(), dt);
  }
  if (!x || x->ndim() < 0 || !i || i->ndim() < 0) return UnknownTensor(dt);
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis("take", axis_attr->as_int(), x->ndim()));
  if (!x->has_shape() || !i->has_shape()) return TensorTypeNode::MakeRank(x->ndim() - 1 + i->ndim(), dt);
  std::vector<Dim> out(x->shape().begin(), x->shape().begin() + axis);
  out.insert(out.end(), i->shape().begin(), i->shape().end());
  out.insert(out.end(), x->shape().begin() + axis + 1, x->shape().end());
  return TensorTypeNode::Make(std::move(out), dt);
}

// expand_dims(x, axis=[...]): size-1 dimensions inserted at those positions
// of the result.
StatusOr<Type> InferExpandDims(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg("expand_dims", args, 0));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  std::vector<int64_t> axes;
  attrs.Get("axis")->GetIntList(&axes);
  if (!x || x->ndim() < 0) return UnknownTensor(dt);
  int rank = x->ndim() + static_cast<int>(axes.size());
  std::vector<bool> unit(rank, false);
  for (int64_t a : axes) {
    PLIR_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis("expand_dims", a, rank));
    if (unit[k]) return InvalidArgument("expand_dims: axis " + std::to_string(a) + " given twice");
    unit[k] = true;
  }
  if (!x->has_shape()) return TensorTypeNode::MakeRank(rank, dt);
  std::vector<Dim> out;
  size_t j = 0;
  for (int k = 0; k < rank; ++k) out.push_back(unit[k] ? Dim::Const(1) : x->shape()[j++]);
  return TensorTypeNode::Make(std::move(out), dt);
}

// concat((t1, t2, ...), axis=a): the tensors joined along `axis`.
StatusOr<Type> InferConcat(const Args& args, const Attrs& attrs, TypeSpan) {
  const Type& t = args[0]->type();
  if (t->kind() == NodeKind::kObjectType) return UnknownTensor();
  auto* tup = As<TupleTypeNode>(t);
  if (!tup) return InvalidArgument("concat expects a tuple of tensors, got " + TypeToString(t));
  if (tup->fields().empty()) return InvalidArgument("concat: the tuple is empty");
  int64_t axis_in = attrs.Get("axis") ? attrs.Get("axis")->as_int() : 0;
  std::vector<const TensorTypeNode*> parts;
  DataType dt = DataType::kUnknown;
  int ndim = -1;
  bool shapes = true;
  for (const Type& f : tup->fields()) {
    auto* ft = As<TensorTypeNode>(f);
    if (!ft) {
      if (f->kind() == NodeKind::kObjectType) { shapes = false; continue; }
      return InvalidArgument("concat expects a tuple of tensors, got " + TypeToString(t));
    }
    if (ft->dtype() != DataType::kUnknown) {
      if (dt != DataType::kUnknown && dt != ft->dtype())
        return InvalidArgument("concat: the tensors' dtypes differ (" + TypeToString(t) + ")");
      dt = ft->dtype();
    }
    if (ft->ndim() >= 0) {
      if (ndim >= 0 && ndim != ft->ndim())
        return InvalidArgument("concat: the tensors' ranks differ (" + TypeToString(t) + ")");
      ndim = ft->ndim();
    }
    shapes = shapes && ft->has_shape();
    parts.push_back(ft);
  }
  if (ndim < 0) return UnknownTensor(dt);
  if (ndim == 0) return InvalidArgument("concat: 0-d tensors cannot be joined");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis("concat", axis_in, ndim));
  if (!shapes) return TensorTypeNode::MakeRank(ndim, dt);
  std::vector<Dim> out = parts[0]->shape();
  Dim sum = Dim::Const(0);
  for (const TensorTypeNode* p : parts) {
    for (int k = 0; k < ndim; ++k) {
      if (k == axis) continue;
      const Dim& a = out[k];
      const Dim& b = p->shape()[k];
      if (a.is_const() && b.is_const() && a.value != b.value)
        return InvalidArgument("concat: the tensors differ in dimension " + std::to_string(k) + " (" +
                               TypeToString(t) + ")");
    }
    const Dim& d = p->shape()[axis];
    if (sum.is_const() && sum.value == 0) {
      sum = d;
      continue;
    }
    if (sum.is_const() && d.is_const() && !CheckedAdd(sum.value, d.value))
      return InvalidArgument("concat: the joined dimension does not fit in 64 bits");
    sum = DimAdd(sum, d);  // symbolic parts: their sum, as TVM writes it (N1 + N2)
  }
  if (DimTooLarge(sum)) return TensorTypeNode::MakeRank(ndim, dt);
  out[axis] = sum;
  return TensorTypeNode::Make(std::move(out), dt);
}

// The values of an argument that is a tuple of int64 scalars (a literal, a
// symbolic `prim[...]`, or a variable whose tuple type knows the values);
// nullopt where one is unknown.
std::optional<std::vector<Dim>> PrimTupleValues(const Expr& e) {
  std::vector<Dim> out;
  if (auto* t = As<TupleNode>(e)) {
    for (const Expr& f : t->fields()) {
      if (auto* p = As<PrimValueNode>(f); p && p->dtype() == DataType::kInt64) out.push_back(Dim::Const(p->int_value()));
      else if (auto* x = As<PrimExprNode>(f)) out.push_back(x->value());
      else if (auto* pt = As<PrimTypeNode>(f->type()); pt && pt->has_value()) out.push_back(pt->value());
      else return std::nullopt;
    }
    return out;
  }
  auto* tt = As<TupleTypeNode>(e->type());
  if (!tt) return std::nullopt;
  for (const Type& f : tt->fields()) {
    auto* pt = As<PrimTypeNode>(f);
    if (!pt || !pt->has_value()) return std::nullopt;
    out.push_back(pt->value());
  }
  return out;
}

// strided_slice(x, axes, begin, end[, strides], assume_inbound=b): Relax's
// op; axes, begin, end and strides are tuples of int64 values. A sliced
// dimension is exact when everything is a constant (NumPy's clamping), and
// `end - begin` when assume_inbound with stride 1; otherwise only the rank
// is known.
StatusOr<Type> InferStridedSlice(const Args& args, const Attrs& attrs, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg("strided_slice", args, 0));
  for (size_t i = 1; i < args.size(); ++i) {
    const Type& t = args[i]->type();
    if (t->kind() != NodeKind::kTupleType && t->kind() != NodeKind::kObjectType)
      return InvalidArgument("strided_slice: argument " + std::to_string(i) +
                             " (axes, begin, end, strides) must be a tuple of int64 values, got " + TypeToString(t));
  }
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  if (!x || x->ndim() < 0) return UnknownTensor(dt);
  auto axes = PrimTupleValues(args[1]);
  auto begin = PrimTupleValues(args[2]);
  auto end = PrimTupleValues(args[3]);
  std::optional<std::vector<Dim>> strides;
  if (args.size() == 5) strides = PrimTupleValues(args[4]);
  auto count = [&](size_t i) -> int64_t {
    auto* tt = As<TupleTypeNode>(args[i]->type());
    return tt ? static_cast<int64_t>(tt->fields().size()) : -1;
  };
  int64_t n = count(1);
  if (n >= 0 && (count(2) != n || count(3) != n || (args.size() == 5 && count(4) != n)))
    return InvalidArgument("strided_slice: axes, begin, end (and strides) must have the same length");
  if (!axes || !x->has_shape()) return TensorTypeNode::MakeRank(x->ndim(), dt);
  bool inbound = attrs.Get("assume_inbound") && attrs.Get("assume_inbound")->as_int() != 0;
  std::vector<Dim> out = x->shape();
  std::vector<bool> seen(out.size(), false);
  for (size_t i = 0; i < axes->size(); ++i) {
    if (!(*axes)[i].is_const()) return TensorTypeNode::MakeRank(x->ndim(), dt);
    PLIR_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis("strided_slice", (*axes)[i].value, x->ndim()));
    if (seen[ax]) return InvalidArgument("strided_slice: axis " + std::to_string(ax) + " given twice");
    seen[ax] = true;
    if (!begin || !end || (args.size() == 5 && !strides)) return TensorTypeNode::MakeRank(x->ndim(), dt);
    Dim b = (*begin)[i], e = (*end)[i], d = out[ax];
    Dim s = strides ? (*strides)[i] : Dim::Const(1);
    if (s.is_const() && s.value == 0) return InvalidArgument("strided_slice: stride 0");
    if (b.is_const() && e.is_const() && d.is_const() && s.is_const()) {
      // NumPy: negative indices count from the end; clamped to the range.
      int64_t len = d.value, st = s.value;
      auto clamp = [&](int64_t v) {
        if (v < 0) v += len;
        if (st > 0) return std::clamp<int64_t>(v, 0, len);
        return std::clamp<int64_t>(v, -1, len - 1);
      };
      int64_t lo = clamp(b.value), hi = clamp(e.value);
      int64_t size = st > 0 ? (hi > lo ? (hi - lo + st - 1) / st : 0) : (lo > hi ? (lo - hi - st - 1) / -st : 0);
      out[ax] = Dim::Const(size);
    } else if (inbound && s.is_const() && s.value == 1 && !DimTooLarge(DimSub(e, b))) {
      out[ax] = DimSub(e, b);
    } else {
      return TensorTypeNode::MakeRank(x->ndim(), dt);
    }
  }
  return TensorTypeNode::Make(std::move(out), dt);
}

void Add(OpRegistry& r, OpDef def) {
  Status s = r.Register(std::move(def));
  (void)s;  // core names are distinct; a failure here is a programming error
}

OpDef Def(std::string name, std::string desc, int min_args, int max_args, TypeInferFn infer,
          std::vector<AttrSpec> attrs = {}, bool pure = true,
          OpPattern pattern = OpPattern::kOpaque) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(desc);
  d.min_args = min_args;
  d.max_args = max_args;
  d.infer = std::move(infer);
  d.attrs = std::move(attrs);
  d.pure = pure;
  d.pattern = pattern;
  return d;
}

}  // namespace

void RegisterCoreOps(OpRegistry& r) {
  for (const char* name : {"add", "subtract", "multiply", "divide"})
    Add(r, Def(name, std::string("elementwise ") + name + " with NumPy broadcasting", 2, 2,
               Elementwise(name), {}, true, OpPattern::kBroadcast));
  Add(r, Def("nn.relu", "max(x, 0) elementwise", 1, 1,
             [](const Args& a, const Attrs&, TypeSpan) {
               return InferUnarySame("nn.relu", a);
             },
             {}, true, OpPattern::kElemWise));
  Add(r, Def("nn.softmax", "softmax along `axis`", 1, 1, InferSoftmax,
             {{"axis", AttrKind::kInt, false, AttrValue::Int(-1)}}, true, OpPattern::kOpaque));
  Add(r, Def("matmul", "NumPy matmul", 2, 2, InferMatmul, {}, true, OpPattern::kOutEWiseFusable));
  Add(r, Def("reshape",
             "reshape to attribute `shape` (one dim may be -1), or to a shape value: reshape(x, s)",
             1, 2, InferReshape, {{"shape", AttrKind::kIntList, false, std::nullopt}}, true,
             OpPattern::kInjective));
  Add(r, Def("permute_dims", "permute dimensions by `axes` (default: reverse)", 1, 1,
             InferPermuteDims, {{"axes", AttrKind::kIntList, false, std::nullopt}}, true,
             OpPattern::kInjective));
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
  {
    // Creation ops and astype are elementwise, arange injective (Relay's
    // TOpPattern for them).
    AttrSpec shape{"shape", AttrKind::kIntList, true, std::nullopt};
    AttrSpec dtype_req{"dtype", AttrKind::kString, true, std::nullopt};
    AttrSpec dtype_opt{"dtype", AttrKind::kString, false, std::nullopt};
    Add(r, Def("zeros", "a tensor of zeros: zeros(shape=[...], dtype=...)", 0, 0,
               InferCreation("zeros", false), {shape, dtype_req}, true, OpPattern::kElemWise));
    Add(r, Def("ones", "a tensor of ones: ones(shape=[...], dtype=...)", 0, 0,
               InferCreation("ones", false), {shape, dtype_req}, true, OpPattern::kElemWise));
    Add(r, Def("full", "a tensor filled with a scalar: full(v, shape=[...], dtype=...)", 1, 1,
               InferCreation("full", true), {shape, dtype_opt}, true, OpPattern::kElemWise));
    Add(r, Def("astype", "elementwise conversion to `dtype`", 1, 1, InferAstype, {dtype_req}, true,
               OpPattern::kElemWise));
    Add(r, Def("arange", "[start, end) by step (NumPy arange)", 0, 0, InferArange,
               {{"start", AttrKind::kFloat, false, AttrValue::Float(0)},
                {"end", AttrKind::kFloat, true, std::nullopt},
                {"step", AttrKind::kFloat, false, AttrValue::Float(1)},
                {"dtype", AttrKind::kString, false, std::nullopt}},
               true, OpPattern::kInjective));
    Add(r, Def("shape_to_tensor", "a shape value as a 1-D int64 tensor", 1, 1, InferShapeToTensor));
    // Shape values at run time (and in kernels: a 1-D int64 tensor).
    Add(r, Def("shape_of", "the shape of a tensor as a shape value", 1, 1, InferShapeOf));
    Add(r, Def("tensor_to_shape", "a 1-D integer tensor's values as a shape value", 1, 1,
               InferTensorToShape));
    Add(r, Def("take", "NumPy take: elements of x at `indices` along `axis` (default: flattened x)", 2, 2,
               InferTake, {{"axis", AttrKind::kInt, false, std::nullopt}}, true, OpPattern::kInjective));
    Add(r, Def("expand_dims", "inserts size-1 dimensions at the positions `axis` of the result", 1, 1,
               InferExpandDims, {{"axis", AttrKind::kIntList, true, std::nullopt}}, true,
               OpPattern::kInjective));
    Add(r, Def("concat", "joins the tensors of a tuple along `axis`: concat((a, b), axis=0)", 1, 1,
               InferConcat, {{"axis", AttrKind::kInt, false, AttrValue::Int(0)}}, true,
               OpPattern::kInjective));
    Add(r, Def("strided_slice",
               "NumPy slicing: strided_slice(x, (axes...), (begin...), (end...)[, (strides...)]), "
               "tuples of int64 values (prim[...] for symbolic ones)",
               4, 5, InferStridedSlice, {{"assume_inbound", AttrKind::kBool, false, AttrValue::Bool(false)}},
               true, OpPattern::kInjective));
  }
  // call_tir's own pattern is opaque: FuseOps reads the kernel's `op_pattern`.
  Add(r, Def("call_tir",
             "call of an extern kernel: call_tir(@k, (args...), sinfo_args=[T]); an optional third "
             "argument, a shape value, gives the kernel symbolic values (Relax's tir_vars)",
             2, 3,
             InferCallTir, {}, true, OpPattern::kOpaque));
  Add(r, Def("call_packed", "call of a runtime function by name", 1, -1, InferCallPacked, {},
             /*pure=*/false));
  Add(r, Def("match_cast", "the value, checked to have the type sinfo_args[0], which binds its new "
                           "symbolic dimensions", 1, 1, InferMatchCast));
  Add(r, Def("builtin.stop_lift_params",
             "the value itself; LiftTransformParams lifts nothing past it (Relax's "
             "R.builtin.stop_lift_params)",
             1, 1, [](const Args& a, const Attrs&, TypeSpan) -> StatusOr<Type> { return a[0]->type(); }));
  Add(r, Def("vm.kill_object", "frees a value", 1, 1,
             [](const Args&, const Attrs&, TypeSpan) -> StatusOr<Type> {
               return TupleTypeNode::Make({});
             },
             {}, /*pure=*/false));
}

}  // namespace plir::internal
