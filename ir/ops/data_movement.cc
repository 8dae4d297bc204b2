// Data movement: reshape, permute_dims, take, expand_dims, concat, strided_slice.
#include "ir/ops/infer_util.h"
#include "ir/ops/families.h"

namespace plir::internal {
namespace {

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

}  // namespace

void RegisterDataMovementOps(OpRegistry& r) {
  Add(r, Def("reshape",
             "reshape to attribute `shape` (one dim may be -1), or to a shape value: reshape(x, s)",
             1, 2, InferReshape, {{"shape", AttrKind::kIntList, false, std::nullopt}}, true,
             OpPattern::kInjective));
  Add(r, Def("permute_dims", "permute dimensions by `axes` (default: reverse)", 1, 1,
             InferPermuteDims, {{"axes", AttrKind::kIntList, false, std::nullopt}}, true,
             OpPattern::kInjective));
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

}  // namespace plir::internal
