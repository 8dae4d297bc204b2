// Data movement: reshape, permute_dims, take, expand_dims, concat, strided_slice,
// broadcast_to, squeeze, flatten, tile, repeat, flip, tril/triu, gather and
// scatter, one_hot, nn.pad, split.
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

// reshape(x, s) with a shape value `s` (Relax's form): the tensor of shape
// `s`'s values (its rank when only that is known).
StatusOr<Type> InferReshapeToValue(const TensorTypeNode* a, const Type& s) {
  DataType dt = a ? a->dtype() : DataType::kUnknown;
  if (s->kind() == NodeKind::kObjectType) return UnknownTensor(dt);
  auto* st = As<ShapeTypeNode>(s);
  if (!st)
    return InvalidArgument("reshape: the new shape must be a shape value, got " + TypeToString(s));
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
    if (attrs.Get("shape"))
      return InvalidArgument(
          "reshape: give the shape as an argument or as attribute shape, not both");
    return InferReshapeToValue(a, args[1]->type());
  }
  if (!attrs.Get("shape"))
    return InvalidArgument(
        "reshape requires attribute 'shape' or a shape value argument: reshape(x, s)");
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
      if (!k)
        return InvalidArgument("reshape: the new shape's element count does not fit in 64 bits");
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
    return i->has_shape() ? TensorTypeNode::Make(i->shape(), dt)
                          : TensorTypeNode::MakeRank(i->ndim(), dt);
  }
  if (!x || x->ndim() < 0 || !i || i->ndim() < 0) return UnknownTensor(dt);
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis("take", axis_attr->as_int(), x->ndim()));
  if (!x->has_shape() || !i->has_shape())
    return TensorTypeNode::MakeRank(x->ndim() - 1 + i->ndim(), dt);
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
      if (f->kind() == NodeKind::kObjectType) {
        shapes = false;
        continue;
      }
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
        return InvalidArgument("concat: the tensors differ in dimension " + std::to_string(k) +
                               " (" + TypeToString(t) + ")");
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
      if (auto* p = As<PrimValueNode>(f); p && p->dtype() == DataType::kInt64)
        out.push_back(Dim::Const(p->int_value()));
      else if (auto* x = As<PrimExprNode>(f))
        out.push_back(x->value());
      else if (auto* pt = As<PrimTypeNode>(f->type()); pt && pt->has_value())
        out.push_back(pt->value());
      else
        return std::nullopt;
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
                             " (axes, begin, end, strides) must be a tuple of int64 values, got " +
                             TypeToString(t));
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
    return InvalidArgument(
        "strided_slice: axes, begin, end (and strides) must have the same length");
  if (!axes || !x->has_shape()) return TensorTypeNode::MakeRank(x->ndim(), dt);
  bool inbound = attrs.Get("assume_inbound") && attrs.Get("assume_inbound")->as_int() != 0;
  std::vector<Dim> out = x->shape();
  std::vector<bool> seen(out.size(), false);
  for (size_t i = 0; i < axes->size(); ++i) {
    if (!(*axes)[i].is_const()) return TensorTypeNode::MakeRank(x->ndim(), dt);
    PLIR_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis("strided_slice", (*axes)[i].value, x->ndim()));
    if (seen[ax])
      return InvalidArgument("strided_slice: axis " + std::to_string(ax) + " given twice");
    seen[ax] = true;
    if (!begin || !end || (args.size() == 5 && !strides))
      return TensorTypeNode::MakeRank(x->ndim(), dt);
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
      int64_t size = st > 0 ? (hi > lo ? (hi - lo + st - 1) / st : 0)
                            : (lo > hi ? (lo - hi - st - 1) / -st : 0);
      out[ax] = Dim::Const(size);
    } else if (inbound && s.is_const() && s.value == 1 && !DimTooLarge(DimSub(e, b))) {
      out[ax] = DimSub(e, b);
    } else {
      return TensorTypeNode::MakeRank(x->ndim(), dt);
    }
  }
  return TensorTypeNode::Make(std::move(out), dt);
}

// broadcast_to(x, s): x broadcast to the shape value s (NumPy rules, s wins).
StatusOr<Type> InferBroadcastTo(const Args& args, const Attrs&, TypeSpan) {
  const std::string op = "broadcast_to";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  const Type& s = args[1]->type();
  if (s->kind() == NodeKind::kObjectType) return UnknownTensor(dt);
  auto* st = As<ShapeTypeNode>(s);
  if (!st)
    return InvalidArgument("broadcast_to: the target shape must be a shape value, got " +
                           TypeToString(s));
  if (x && x->ndim() >= 0 && st->ndim() >= 0 && x->ndim() > st->ndim())
    return InvalidArgument("broadcast_to: " + ShapeStr(x) +
                           " has more dimensions than the target shape " + TypeToString(s));
  if (!st->has_values()) return TensorTypeNode::MakeRank(st->ndim(), dt);
  if (x && x->has_shape()) {
    size_t off = st->values().size() - x->shape().size();
    for (size_t i = 0; i < x->shape().size(); ++i) {
      const Dim& a = x->shape()[i];
      const Dim& b = st->values()[off + i];
      if (a.is_const() && b.is_const() && a.value != 1 && a.value != b.value)
        return InvalidArgument("broadcast_to: " + ShapeStr(x) + " does not broadcast to " +
                               TypeToString(s));
    }
  }
  return TensorTypeNode::Make(st->values(), dt);
}

// squeeze(x, axis=[...]): drops the given size-1 dimensions (all of them
// without axis).
StatusOr<Type> InferSqueeze(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "squeeze";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  if (!x || x->ndim() < 0) return UnknownTensor(dt);
  auto given = IntListAttr(attrs, "axis");
  std::vector<bool> drop(x->ndim(), false);
  if (given) {
    for (int64_t a : *given) {
      PLIR_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(op, a, x->ndim()));
      if (x->has_shape() && x->shape()[k].is_const() && x->shape()[k].value != 1)
        return InvalidArgument("squeeze: dimension " + std::to_string(k) + " of " + ShapeStr(x) +
                               " is not 1");
      drop[k] = true;
    }
  } else {
    if (!x->has_shape()) return UnknownTensor(dt);
    for (int i = 0; i < x->ndim(); ++i) {
      if (!x->shape()[i].is_const()) return UnknownTensor(dt);  // a symbolic dim might be 1
      drop[i] = x->shape()[i].value == 1;
    }
  }
  int rank = 0;
  for (bool d : drop) rank += !d;
  if (!x->has_shape()) return TensorTypeNode::MakeRank(rank, dt);
  std::vector<Dim> out;
  for (int i = 0; i < x->ndim(); ++i)
    if (!drop[i]) out.push_back(x->shape()[i]);
  return TensorTypeNode::Make(std::move(out), dt);
}

// flatten(x): 1-D.
StatusOr<Type> InferFlatten(const Args& args, const Attrs&, TypeSpan) {
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg("flatten", args, 0));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  if (x && x->IsStatic()) return TensorTypeNode::Make({Dim::Const(x->NumElements())}, dt);
  if (x && x->has_shape() && x->ndim() == 1) return Type(x);
  return TensorTypeNode::MakeRank(1, dt);
}

// A static dimension times k, or nullopt (symbolic or overflow).
std::optional<Dim> Times(const Dim& d, int64_t k) {
  if (!d.is_const()) return std::nullopt;
  auto v = CheckedMul(d.value, k);
  if (!v) return std::nullopt;
  return Dim::Const(*v);
}

// tile(x, repeats=[...]): NumPy tile.
StatusOr<Type> InferTile(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "tile";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  std::vector<int64_t> reps = IntListAttr(attrs, "repeats").value_or(std::vector<int64_t>{});
  for (int64_t r : reps)
    if (r < 0) return InvalidArgument("tile: repeats must be non-negative");
  if (!x || x->ndim() < 0) return UnknownTensor(dt);
  int rank = std::max<int>(x->ndim(), static_cast<int>(reps.size()));
  if (!x->has_shape()) return TensorTypeNode::MakeRank(rank, dt);
  std::vector<Dim> in(rank - x->ndim(), Dim::Const(1));
  in.insert(in.end(), x->shape().begin(), x->shape().end());
  reps.insert(reps.begin(), rank - reps.size(), 1);
  std::vector<Dim> out;
  for (int i = 0; i < rank; ++i) {
    if (reps[i] == 1) {
      out.push_back(in[i]);
      continue;
    }
    auto d = Times(in[i], reps[i]);
    if (!d) return TensorTypeNode::MakeRank(rank, dt);
    out.push_back(*d);
  }
  return TensorTypeNode::Make(std::move(out), dt);
}

// repeat(x, repeats=r, axis=a): NumPy repeat with one count (no axis: of
// the flattened x).
StatusOr<Type> InferRepeat(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "repeat";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  int64_t r = IntAttr(attrs, "repeats", 1);
  if (r < 0) return InvalidArgument("repeat: repeats must be non-negative");
  if (!attrs.Get("axis")) {
    if (x && x->IsStatic()) {
      auto n = CheckedMul(x->NumElements(), r);
      if (n) return TensorTypeNode::Make({Dim::Const(*n)}, dt);
    }
    return TensorTypeNode::MakeRank(1, dt);
  }
  if (!x || x->ndim() < 0) return UnknownTensor(dt);
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, attrs.Get("axis")->as_int(), x->ndim()));
  if (!x->has_shape()) return Type(x);
  std::vector<Dim> out = x->shape();
  auto d = Times(out[axis], r);
  if (!d) return TensorTypeNode::MakeRank(x->ndim(), dt);
  out[axis] = *d;
  return TensorTypeNode::Make(std::move(out), dt);
}

// flip(x, axis=a), tril / triu(x, k=...): x's type (the axis checked).
TypeInferFn InferSameWithAxis(std::string op, bool matrix) {
  return [op, matrix](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
    if (!x) return UnknownTensor();
    if (x->ndim() < 0) return Type(x);
    if (matrix && x->ndim() < 2)
      return InvalidArgument(op + " expects a tensor of rank >= 2, got " + ShapeStr(x));
    if (!matrix)
      PLIR_RETURN_IF_ERROR(NormalizeAxis(op, IntAttr(attrs, "axis", 0), x->ndim()).status());
    return Type(x);
  };
}

// gather_elements(data, indices, axis=a): indices' shape, data's dtype.
StatusOr<Type> InferGatherElements(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "gather_elements";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  PLIR_ASSIGN_OR_RETURN(auto i, TensorArg(op, args, 1));
  PLIR_RETURN_IF_ERROR(CheckDType(op, i, DTypeClass::kInt));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  if (x && i && x->ndim() >= 0 && i->ndim() >= 0 && x->ndim() != i->ndim())
    return InvalidArgument(op + ": data " + ShapeStr(x) + " and indices " + ShapeStr(i) +
                           " differ in rank");
  if (x && x->ndim() >= 0)
    PLIR_RETURN_IF_ERROR(NormalizeAxis(op, IntAttr(attrs, "axis", 0), x->ndim()).status());
  if (!i) return UnknownTensor(dt);
  return WithDType(i, dt);
}

// gather_nd(data, indices, batch_dims=b): indices[..., :-1] then data's
// dimensions after b + indices.shape[-1].
StatusOr<Type> InferGatherNd(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "gather_nd";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  PLIR_ASSIGN_OR_RETURN(auto i, TensorArg(op, args, 1));
  PLIR_RETURN_IF_ERROR(CheckDType(op, i, DTypeClass::kInt));
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  int64_t b = IntAttr(attrs, "batch_dims", 0);
  if (b < 0) return InvalidArgument(op + ": batch_dims must be non-negative");
  if (!x || !i || !x->has_shape() || !i->has_shape()) return UnknownTensor(dt);
  if (i->ndim() < 1) return InvalidArgument(op + ": indices must have rank >= 1");
  const Dim& last = i->shape().back();
  if (!last.is_const()) return UnknownTensor(dt);
  int64_t m = last.value;
  if (b >= i->ndim() || b + m > x->ndim())
    return InvalidArgument(op + ": indices " + ShapeStr(i) + " do not fit data " + ShapeStr(x) +
                           " with batch_dims=" + std::to_string(b));
  std::vector<Dim> out(i->shape().begin(), i->shape().end() - 1);
  out.insert(out.end(), x->shape().begin() + b + m, x->shape().end());
  return TensorTypeNode::Make(std::move(out), dt);
}

// scatter_elements / scatter_nd(data, indices, updates): data's type.
TypeInferFn InferScatter(std::string op) {
  return [op](const Args& args, const Attrs& attrs, TypeSpan) -> StatusOr<Type> {
    PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
    PLIR_ASSIGN_OR_RETURN(auto i, TensorArg(op, args, 1));
    PLIR_ASSIGN_OR_RETURN(auto u, TensorArg(op, args, 2));
    PLIR_RETURN_IF_ERROR(CheckDType(op, i, DTypeClass::kInt));
    if (x && u) PLIR_RETURN_IF_ERROR(SameDType(op, x, u).status());
    std::string red = StringAttr(attrs, "reduction", "update");
    if (red != "update" && red != "add" && red != "mul" && red != "min" && red != "max" &&
        !(red == "mean" && op == "scatter_elements"))
      return InvalidArgument(op + ": unknown reduction \"" + red + "\"");
    if (op == "scatter_elements") {
      if (i && u && i->has_shape() && u->has_shape() && i->shape() != u->shape() && i->IsStatic() &&
          u->IsStatic())
        return InvalidArgument(op + ": indices " + ShapeStr(i) + " and updates " + ShapeStr(u) +
                               " differ in shape");
      if (x && x->ndim() >= 0)
        PLIR_RETURN_IF_ERROR(NormalizeAxis(op, IntAttr(attrs, "axis", 0), x->ndim()).status());
    }
    if (!x) return UnknownTensor(u ? u->dtype() : DataType::kUnknown);
    return Type(x);
  };
}

// one_hot(indices, on_value, off_value, depth=d, axis=a): a new dimension
// of size depth at axis; the dtype of on_value.
StatusOr<Type> InferOneHot(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "one_hot";
  PLIR_ASSIGN_OR_RETURN(auto i, TensorArg(op, args, 0));
  PLIR_ASSIGN_OR_RETURN(auto on, TensorArg(op, args, 1));
  PLIR_ASSIGN_OR_RETURN(auto off, TensorArg(op, args, 2));
  PLIR_RETURN_IF_ERROR(CheckDType(op, i, DTypeClass::kInt));
  if (on && off) PLIR_RETURN_IF_ERROR(SameDType(op, on, off).status());
  for (auto* v : {on, off})
    if (v && v->ndim() > 0)
      return InvalidArgument(op + ": on_value and off_value must be 0-d tensors");
  DataType dt = on ? on->dtype() : off ? off->dtype() : DataType::kUnknown;
  int64_t depth = IntAttr(attrs, "depth", -1);
  if (depth < 0) return InvalidArgument(op + ": depth must be non-negative");
  if (!i || i->ndim() < 0) return UnknownTensor(dt);
  int rank = i->ndim() + 1;
  int64_t axis = IntAttr(attrs, "axis", -1);
  PLIR_ASSIGN_OR_RETURN(axis, NormalizeAxis(op, axis, rank));
  if (!i->has_shape()) return TensorTypeNode::MakeRank(rank, dt);
  std::vector<Dim> out = i->shape();
  out.insert(out.begin() + axis, Dim::Const(depth));
  return TensorTypeNode::Make(std::move(out), dt);
}

// nn.pad(x[, pad_value], pad_width=[b0, a0, b1, a1, ...], pad_mode=m).
StatusOr<Type> InferPad(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "nn.pad";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  if (args.size() == 2) {
    PLIR_ASSIGN_OR_RETURN(auto v, TensorArg(op, args, 1));
    if (v && v->ndim() > 0)
      return InvalidArgument(op + ": pad_value must be a 0-d tensor, got " + ShapeStr(v));
    if (x && v) PLIR_RETURN_IF_ERROR(SameDType(op, x, v).status());
  }
  std::string mode = StringAttr(attrs, "pad_mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return InvalidArgument(op + ": unknown pad_mode \"" + mode + "\" (constant, edge or reflect)");
  std::vector<int64_t> pw = IntListAttr(attrs, "pad_width").value_or(std::vector<int64_t>{});
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  if (!x || x->ndim() < 0) return UnknownTensor(dt);
  if (pw.size() != 2 * static_cast<size_t>(x->ndim()))
    return InvalidArgument(op + ": pad_width has " + std::to_string(pw.size()) +
                           " values, expected " + std::to_string(2 * x->ndim()) + " for " +
                           ShapeStr(x));
  if (!x->has_shape()) return Type(x);
  std::vector<Dim> out = x->shape();
  for (int i = 0; i < x->ndim(); ++i) {
    if (pw[2 * i] == 0 && pw[2 * i + 1] == 0) continue;
    if (!out[i].is_const()) return TensorTypeNode::MakeRank(x->ndim(), dt);
    auto n = CheckedAdd(out[i].value, pw[2 * i]);
    if (n) n = CheckedAdd(*n, pw[2 * i + 1]);
    if (!n || *n < 0)
      return InvalidArgument(op + ": padded dimension " + std::to_string(i) + " is out of range");
    if (mode == "reflect" && (pw[2 * i] >= out[i].value || pw[2 * i + 1] >= out[i].value))
      return InvalidArgument(op + ": reflect padding must be smaller than the dimension");
    if (mode != "constant" && out[i].value == 0)
      return InvalidArgument(op + ": " + mode + " padding of an empty dimension");
    out[i] = Dim::Const(*n);
  }
  return TensorTypeNode::Make(std::move(out), dt);
}

// split(x, indices_or_sections=..., axis=a): a tuple. An int: that many
// equal parts (the last smaller, as TVM); a list: the split points.
StatusOr<Type> InferSplit(const Args& args, const Attrs& attrs, TypeSpan) {
  const std::string op = "split";
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 0));
  const AttrValue* ios = attrs.Get("indices_or_sections");
  if (!ios) return InvalidArgument(op + " requires attribute indices_or_sections");
  DataType dt = x ? x->dtype() : DataType::kUnknown;
  std::vector<int64_t> points;
  int64_t sections = -1;
  if (ios->kind() == AttrValue::Kind::kInt) {
    sections = ios->as_int();
    if (sections <= 0 || sections > 65536)
      return InvalidArgument(op + ": sections must be in [1, 65536]");
  } else if (!ios->GetIntList(&points) || points.size() > 65535) {
    return InvalidArgument(op +
                           ": indices_or_sections must be an int or a list of at most 65535 ints");
  }
  size_t parts = sections > 0 ? static_cast<size_t>(sections) : points.size() + 1;
  if (!x || x->ndim() < 0) return TupleTypeNode::Make(std::vector<Type>(parts, UnknownTensor(dt)));
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, IntAttr(attrs, "axis", 0), x->ndim()));
  Type rank_only = TensorTypeNode::MakeRank(x->ndim(), dt);
  if (!x->has_shape() || !x->shape()[axis].is_const())
    return TupleTypeNode::Make(std::vector<Type>(parts, rank_only));
  int64_t len = x->shape()[axis].value;
  std::vector<int64_t> bounds{0};
  if (sections > 0) {
    int64_t each = (len + sections - 1) / sections;
    for (int64_t k = 1; k < sections; ++k) bounds.push_back(std::min(len, k * each));
  } else {
    for (int64_t p : points) {
      int64_t q = std::clamp<int64_t>(p < 0 ? p + len : p, 0, len);
      bounds.push_back(std::max(q, bounds.back()));
    }
  }
  bounds.push_back(len);
  std::vector<Type> fields;
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    std::vector<Dim> s = x->shape();
    s[axis] = Dim::Const(bounds[k + 1] - bounds[k]);
    fields.push_back(TensorTypeNode::Make(std::move(s), dt));
  }
  return TupleTypeNode::Make(std::move(fields));
}

}  // namespace

void RegisterDataMovementOps(OpRegistry& r) {
  Add(r, Def("reshape",
             "reshape to attribute `shape` (one dim may be -1), or to a shape value: reshape(x, s)",
             1, 2, InferReshape, {{"shape", AttrKind::kIntList, false, std::nullopt}}, true,
             OpPattern::kInjective));
  Add(r,
      Def("permute_dims", "permute dimensions by `axes` (default: reverse)", 1, 1, InferPermuteDims,
          {{"axes", AttrKind::kIntList, false, std::nullopt}}, true, OpPattern::kInjective));
  Add(r, Def("take", "NumPy take: elements of x at `indices` along `axis` (default: flattened x)",
             2, 2, InferTake, {{"axis", AttrKind::kInt, false, std::nullopt}}, true,
             OpPattern::kInjective));
  Add(r, Def("expand_dims", "inserts size-1 dimensions at the positions `axis` of the result", 1, 1,
             InferExpandDims, {{"axis", AttrKind::kIntList, true, std::nullopt}}, true,
             OpPattern::kInjective));
  Add(r, Def("concat", "joins the tensors of a tuple along `axis`: concat((a, b), axis=0)", 1, 1,
             InferConcat, {{"axis", AttrKind::kInt, false, AttrValue::Int(0)}}, true,
             OpPattern::kInjective));
  Add(r, Def("strided_slice",
             "NumPy slicing: strided_slice(x, (axes...), (begin...), (end...)[, (strides...)]), "
             "tuples of int64 values (prim[...] for symbolic ones)",
             4, 5, InferStridedSlice,
             {{"assume_inbound", AttrKind::kBool, false, AttrValue::Bool(false)}}, true,
             OpPattern::kInjective));
  Add(r, Def("broadcast_to",
             Onnx("x broadcast to the shape value s: broadcast_to(x, s), s the result shape",
                  "Expand (s: both shapes broadcast)"),
             2, 2, InferBroadcastTo, {}, true, OpPattern::kBroadcast));
  Add(r, Def("squeeze", Onnx("drops the size-1 dimensions `axis` (default: all)", "Squeeze"), 1, 1,
             InferSqueeze, {{"axis", AttrKind::kIntList, false, std::nullopt}}, true,
             OpPattern::kInjective));
  Add(r, Def("flatten", Onnx("x as a 1-D tensor", "-"), 1, 1, InferFlatten, {}, true,
             OpPattern::kInjective));
  Add(r, Def("tile", Onnx("NumPy tile: x repeated `repeats` times along each axis", "Tile"), 1, 1,
             InferTile, {{"repeats", AttrKind::kIntList, true, std::nullopt}}, true,
             OpPattern::kInjective));
  Add(r,
      Def("repeat",
          Onnx("NumPy repeat: each element `repeats` times along `axis` (default: flattened)", "-"),
          1, 1, InferRepeat,
          {{"repeats", AttrKind::kInt, true, std::nullopt},
           {"axis", AttrKind::kInt, false, std::nullopt}},
          true, OpPattern::kInjective));
  Add(r, Def("flip", Onnx("x reversed along `axis`", "-"), 1, 1, InferSameWithAxis("flip", false),
             {{"axis", AttrKind::kInt, false, AttrValue::Int(0)}}, true, OpPattern::kInjective));
  Add(r, Def("tril",
             Onnx("the lower triangle of the last two axes (j <= i + k), zeros elsewhere",
                  "Trilu (upper=0)"),
             1, 1, InferSameWithAxis("tril", true),
             {{"k", AttrKind::kInt, false, AttrValue::Int(0)}}, true, OpPattern::kInjective));
  Add(r, Def("triu",
             Onnx("the upper triangle of the last two axes (j >= i + k), zeros elsewhere",
                  "Trilu (upper=1)"),
             1, 1, InferSameWithAxis("triu", true),
             {{"k", AttrKind::kInt, false, AttrValue::Int(0)}}, true, OpPattern::kInjective));
  Add(r, Def("gather_elements",
             Onnx("out[i][j] = data[indices[i][j]][j] along `axis` (negative indices count from "
                  "the end)",
                  "GatherElements"),
             2, 2, InferGatherElements, {{"axis", AttrKind::kInt, false, AttrValue::Int(0)}}, true,
             OpPattern::kInjective));
  Add(r, Def("gather_nd",
             Onnx("slices of data at the index tuples of indices' last axis, after batch_dims",
                  "GatherND"),
             2, 2, InferGatherNd, {{"batch_dims", AttrKind::kInt, false, AttrValue::Int(0)}}, true,
             OpPattern::kInjective));
  Add(r, Def("scatter_elements",
             Onnx("data with updates written at indices along `axis`; reduction update, add, mul, "
                  "mean, min or max",
                  "ScatterElements, Scatter"),
             3, 3, InferScatter("scatter_elements"),
             {{"axis", AttrKind::kInt, false, AttrValue::Int(0)},
              {"reduction", AttrKind::kString, false, AttrValue::String("update")}},
             true, OpPattern::kOpaque));
  Add(r, Def("scatter_nd",
             Onnx("data with updates written at the index tuples of indices; reduction update, "
                  "add, mul, min or max",
                  "ScatterND"),
             3, 3, InferScatter("scatter_nd"),
             {{"reduction", AttrKind::kString, false, AttrValue::String("update")}}, true,
             OpPattern::kOpaque));
  Add(r, Def("one_hot",
             Onnx("one_hot(indices, on_value, off_value, depth=d, axis=-1): on_value where the new "
                  "axis equals "
                  "the index (negative indices count from depth), off_value elsewhere",
                  "OneHot"),
             3, 3, InferOneHot,
             {{"depth", AttrKind::kInt, true, std::nullopt},
              {"axis", AttrKind::kInt, false, AttrValue::Int(-1)}},
             true, OpPattern::kInjective));
  Add(r, Def("nn.pad",
             Onnx("pads x by pad_width (before and after for each axis): nn.pad(x[, pad_value]); "
                  "pad_mode constant "
                  "(pad_value, default 0), edge or reflect; negative widths crop",
                  "Pad"),
             1, 2, InferPad,
             {{"pad_width", AttrKind::kIntList, true, std::nullopt},
              {"pad_mode", AttrKind::kString, false, AttrValue::String("constant")}},
             true, OpPattern::kInjective));
  Add(r,
      Def("split",
          Onnx("a tuple of parts of x along `axis`: indices_or_sections an int (that many parts of "
               "ceil(len/n), the last smaller) or a list of split points",
               "Split"),
          1, 1, InferSplit,
          {{"indices_or_sections", AttrKind::kAny, true, std::nullopt},
           {"axis", AttrKind::kInt, false, AttrValue::Int(0)}},
          true, OpPattern::kOpaque));  // a tuple result: not fused
}

}  // namespace plir::internal
