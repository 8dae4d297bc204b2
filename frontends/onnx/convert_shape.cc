// Data movement and shape chains: Reshape, Transpose, Concat, Gather,
// Slice, Shape, ConstantOfShape, Constant, Cast, Expand, Tile, Pad, ...
// Values known at import (shape chains) fold through Call.
#include <cmath>
#include <numeric>

#include "frontends/onnx/converter.h"
#include "frontends/onnx/tensor_proto.h"

namespace plir::onnx_import {
namespace {

Attrs Shape(const std::vector<int64_t>& s) { return MakeAttrs({{Symbol("shape"), IntList(s)}}); }
Attrs Axis(int64_t a) { return MakeAttrs({{Symbol("axis"), AttrValue::Int(a)}}); }

StatusOr<Expr> Reshape(ConvertContext& c, Expr x, const std::vector<int64_t>& s) {
  return c.Call("reshape", {x}, Shape(s));
}

// full(v, shape) in dtype `dt`.
StatusOr<Expr> Full(ConvertContext& c, double v, DataType dt, const std::vector<int64_t>& shape) {
  PLIR_ASSIGN_OR_RETURN(Expr fill, c.Scalar(v, dt));
  return c.Call("full", {fill}, MakeAttrs({{Symbol("shape"), IntList(shape)}}));
}

StatusOr<Expr> Slice(ConvertContext& c, Expr x, const std::vector<int64_t>& axes,
                     const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                     const std::vector<int64_t>& steps) {
  return c.Call("strided_slice",
                {x, ConvertContext::IntTuple(axes), ConvertContext::IntTuple(begin),
                 ConvertContext::IntTuple(end), ConvertContext::IntTuple(steps)});
}

// The broadcast of two static shapes (NumPy rules).
StatusOr<std::vector<int64_t>> Broadcast(const ConvertContext& c, std::vector<int64_t> a,
                                         std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  b.insert(b.begin(), a.size() - b.size(), 1);
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || b[i] == 1) continue;
    if (a[i] == 1) {
      a[i] = b[i];
      continue;
    }
    return c.Error("shapes do not broadcast");
  }
  return a;
}

// Unsqueeze's positions in the output, sorted.
StatusOr<Outputs> Unsqueeze(ConvertContext& c, std::vector<int64_t> axes) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  int64_t rank = c.InputRank(0);
  if (rank < 0) return c.Error("input 0 needs a known rank");
  for (int64_t& a : axes) {
    PLIR_ASSIGN_OR_RETURN(a, NormAxis(c, a, rank + static_cast<int64_t>(axes.size())));
  }
  return c.One("expand_dims", {x}, MakeAttrs({{Symbol("axis"), IntList(axes)}}));
}

StatusOr<Outputs> Squeeze(ConvertContext& c, std::vector<int64_t> axes, bool given) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t rank = static_cast<int64_t>(s.size());
  std::vector<bool> drop(s.size(), false);
  if (!given) {
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  } else {
    for (int64_t a : axes) {
      PLIR_ASSIGN_OR_RETURN(int64_t k, NormAxis(c, a, rank));
      if (s[k] != 1)
        return c.Error("cannot squeeze axis " + std::to_string(a) + " of size " +
                       std::to_string(s[k]));
      drop[k] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  PLIR_ASSIGN_OR_RETURN(Expr r, Reshape(c, x, out));
  return Outputs{r};
}

StatusOr<Outputs> SliceImpl(ConvertContext& c, std::vector<int64_t> starts,
                            std::vector<int64_t> ends, std::vector<int64_t> axes,
                            std::vector<int64_t> steps) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  int64_t rank = c.InputRank(0);
  if (rank < 0) return c.Error("input 0 needs a known rank");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return c.Error("starts, ends, axes and steps differ in length");
  for (int64_t& a : axes) {
    PLIR_ASSIGN_OR_RETURN(a, NormAxis(c, a, rank));
  }
  PLIR_ASSIGN_OR_RETURN(Expr r, Slice(c, x, axes, starts, ends, steps));
  return Outputs{r};
}

StatusOr<Outputs> SplitImpl(ConvertContext& c, std::vector<int64_t> split) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(int64_t axis,
                        NormAxis(c, c.AttrInt("axis", 0), static_cast<int64_t>(s.size())));
  int n = c.node().output_size();
  if (split.empty()) {
    int64_t parts = n, len = s[axis];
    int64_t each = (len + parts - 1) / parts;
    for (int i = 0; i < n; ++i)
      split.push_back(std::max<int64_t>(0, std::min(each, len - each * i)));
  }
  if (static_cast<int>(split.size()) != n)
    return c.Error("split has " + std::to_string(split.size()) + " sizes for " + std::to_string(n) +
                   " outputs");
  Outputs outs;
  int64_t at = 0;
  for (int64_t k : split) {
    PLIR_ASSIGN_OR_RETURN(Expr p, Slice(c, x, {axis}, {at}, {at + k}, {1}));
    outs.push_back(p);
    at += k;
  }
  return outs;
}

StatusOr<Outputs> ReshapeImpl(ConvertContext& c, bool allowzero) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.RequireInts(1, "the shape"));
  const TensorTypeNode* t = c.InputType(0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 0 || allowzero) continue;
    if (!t || !t->has_shape() || i >= t->shape().size() || !t->shape()[i].is_const())
      return c.Error("shape entry 0 (copy the input's dimension) needs the input's static shape");
    shape[i] = t->shape()[i].value;
  }
  PLIR_ASSIGN_OR_RETURN(Expr r, Reshape(c, x, shape));
  return Outputs{r};
}

StatusOr<Outputs> ShapeImpl(ConvertContext& c, int64_t start, std::optional<int64_t> end) {
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  int64_t r = static_cast<int64_t>(s.size());
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t b = clamp(start), e = end ? clamp(*end) : r;
  std::vector<int64_t> out;
  for (int64_t i = b; i < e; ++i) out.push_back(s[i]);
  PLIR_ASSIGN_OR_RETURN(Expr k, c.Int64s(out));
  return Outputs{k};
}

// Pads by taking indices (edge, reflect) or joining fills (constant).
StatusOr<Outputs> PadImpl(ConvertContext& c, std::vector<int64_t> pads, const std::string& mode,
                          double value, std::optional<Expr> value_expr) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  size_t r = s.size();
  if (pads.size() != 2 * r)
    return c.Error("pads has " + std::to_string(pads.size()) + " entries for rank " +
                   std::to_string(r));
  DataType dt = c.InputDtype(0);
  for (size_t ax = 0; ax < r; ++ax) {
    int64_t before = pads[ax], after = pads[ax + r];
    if (before == 0 && after == 0) continue;
    // Negative pads crop first.
    if (before < 0 || after < 0) {
      int64_t b = before < 0 ? -before : 0, e = s[ax] - (after < 0 ? -after : 0);
      PLIR_ASSIGN_OR_RETURN(x, Slice(c, x, {static_cast<int64_t>(ax)}, {b}, {e}, {1}));
      s[ax] = std::max<int64_t>(0, e - b);
      before = std::max<int64_t>(before, 0);
      after = std::max<int64_t>(after, 0);
      if (before == 0 && after == 0) continue;
    }
    int64_t n = s[ax];
    PLIR_RETURN_IF_ERROR(c.Limit({before, after, 1}, "the padding"));
    PLIR_RETURN_IF_ERROR(c.Limit({n + before + after}, "the padded axis"));
    if (mode == "constant") {
      std::vector<Expr> parts;
      auto fill = [&](int64_t k) -> StatusOr<Expr> {
        std::vector<int64_t> fs = s;
        fs[ax] = k;
        if (value_expr)
          return c.Call("full", {*value_expr}, MakeAttrs({{Symbol("shape"), IntList(fs)}}));
        return Full(c, value, dt, fs);
      };
      if (before > 0) {
        PLIR_ASSIGN_OR_RETURN(Expr f, fill(before));
        parts.push_back(f);
      }
      parts.push_back(x);
      if (after > 0) {
        PLIR_ASSIGN_OR_RETURN(Expr f, fill(after));
        parts.push_back(f);
      }
      PLIR_ASSIGN_OR_RETURN(
          x, c.Call("concat", {TupleNode::Make(parts)}, Axis(static_cast<int64_t>(ax))));
    } else {
      if (n == 0) return c.Error("cannot " + mode + "-pad an empty axis");
      std::vector<int64_t> idx;
      for (int64_t i = -before; i < n + after; ++i) {
        int64_t k = i;
        if (mode == "edge") {
          k = std::clamp<int64_t>(i, 0, n - 1);
        } else if (mode == "reflect") {
          if (n == 1)
            k = 0;
          else {
            int64_t period = 2 * (n - 1);
            k = ((i % period) + period) % period;
            if (k >= n) k = period - k;
          }
        } else {
          return Unimplemented("Pad mode '" + mode + "'");
        }
        idx.push_back(k);
      }
      PLIR_ASSIGN_OR_RETURN(Expr ie, c.Int64s(idx));
      PLIR_ASSIGN_OR_RETURN(x, c.Call("take", {x, ie}, Axis(static_cast<int64_t>(ax))));
    }
    s[ax] = n + before + after;
  }
  return Outputs{x};
}

// GatherElements: one take from the flattened data with the indices made
// flat (a constant base per position plus the index, negatives normalized by
// a lookup table), the axis moved last in both.
StatusOr<Outputs> GatherElements(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr idx, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> is, c.InputShape(1));
  int64_t r = static_cast<int64_t>(xs.size());
  if (static_cast<int64_t>(is.size()) != r) return c.Error("data and indices differ in rank");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", 0), r));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  bool moved = axis != r - 1;
  Attrs pa = MakeAttrs({{Symbol("axes"), IntList(perm)}});
  std::vector<int64_t> xp, ip;
  for (int64_t p : perm) {
    xp.push_back(xs[p]);
    ip.push_back(is[p]);
  }
  if (moved) {
    PLIR_ASSIGN_OR_RETURN(x, c.Call("permute_dims", {x}, pa));
    PLIR_ASSIGN_OR_RETURN(idx, c.Call("permute_dims", {idx}, pa));
  }
  int64_t n = xp.back();
  PLIR_ASSIGN_OR_RETURN(idx, c.Cast(idx, DataType::kInt64));
  // Normalize negatives: table[i + n] = i mod n for i in [-n, n).
  std::vector<int64_t> table;
  for (int64_t i = -n; i < n; ++i) table.push_back(i < 0 ? i + n : i);
  PLIR_ASSIGN_OR_RETURN(Expr tab, c.Int64s(table));
  PLIR_ASSIGN_OR_RETURN(Expr nn, c.Scalar(static_cast<double>(n), DataType::kInt64));
  PLIR_ASSIGN_OR_RETURN(Expr shifted, c.Call("add", {idx, nn}));
  PLIR_ASSIGN_OR_RETURN(
      idx, c.Call("take", {tab, shifted}, MakeAttrs({{Symbol("axis"), AttrValue::Int(0)}})));
  // base[p] = the flat offset of position p's row in the (permuted) data.
  std::vector<int64_t> xstride(xp.size(), 1);
  for (int64_t i = r - 2; i >= 0; --i) xstride[i] = xstride[i + 1] * xp[i + 1];
  int64_t total = 1;
  for (int64_t d : ip) total *= d;
  PLIR_ASSIGN_OR_RETURN(Tensor base, MakeIntTensor(DataType::kInt64, ip, [&](int64_t e) {
                          int64_t off = 0;
                          int64_t rem = e / ip.back();
                          for (int64_t i = r - 2; i >= 0; --i) {
                            off += (rem % ip[i]) * xstride[i];
                            rem /= ip[i];
                          }
                          return off;
                        }));
  (void)total;
  PLIR_ASSIGN_OR_RETURN(Expr be, c.Const(base));
  PLIR_ASSIGN_OR_RETURN(Expr flat, c.Call("add", {idx, be}));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("take", {x, flat}));
  if (moved) {
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
    PLIR_ASSIGN_OR_RETURN(y,
                          c.Call("permute_dims", {y}, MakeAttrs({{Symbol("axes"), IntList(inv)}})));
  }
  return Outputs{y};
}

// OneHot: rows of a constant [depth, depth] table of off/on values taken by
// the indices (negative ones count from the end), the new axis moved.
StatusOr<Outputs> OneHot(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr idx, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Tensor depth_t, c.RequireStatic(1, "depth"));
  PLIR_ASSIGN_OR_RETURN(Tensor values, c.RequireStatic(2, "values"));
  if (values.NumElements() != 2) return c.Error("values must hold [off, on]");
  int64_t depth = static_cast<int64_t>(depth_t.GetDouble(0));
  if (depth <= 0) return c.Error("depth must be positive");
  int64_t r = c.InputRank(0);
  if (r < 0) return c.Error("indices need a known rank");
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", -1), r + 1));
  PLIR_RETURN_IF_ERROR(c.Limit({depth, depth}, "the one-hot table"));
  double off = values.GetDouble(0), on = values.GetDouble(1);
  Tensor eye = MakeTensor(values.dtype, {depth, depth},
                          [&](int64_t e) { return e / depth == e % depth ? on : off; });
  PLIR_ASSIGN_OR_RETURN(Expr table, c.Const(eye));
  PLIR_ASSIGN_OR_RETURN(idx, c.Cast(idx, DataType::kInt64));
  PLIR_ASSIGN_OR_RETURN(
      Expr y, c.Call("take", {table, idx}, MakeAttrs({{Symbol("axis"), AttrValue::Int(0)}})));
  if (axis != r) {
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < r; ++i) {
      if (i == axis) perm.push_back(r);
      perm.push_back(i);
    }
    PLIR_ASSIGN_OR_RETURN(
        y, c.Call("permute_dims", {y}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
  }
  return Outputs{y};
}

StatusOr<Outputs> Compress(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Tensor cond, c.RequireStatic(1, "the condition"));
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < cond.NumElements(); ++i)
    if (cond.GetInt(i) != 0) idx.push_back(i);
  PLIR_ASSIGN_OR_RETURN(Expr ie, c.Int64s(idx));
  if (!c.HasAttr("axis")) return c.One("take", {x, ie});
  int64_t r = c.InputRank(0);
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", 0), r));
  return c.One("take", {x, ie}, Axis(axis));
}

std::vector<int64_t> Strides(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

StatusOr<Expr> Flatten(ConvertContext& c, Expr x, const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return c.Call("reshape", {x}, Shape({n}));
}

// Scatter with indices known at import: target[j] is the flat position
// update j writes. reduction none: one take from data ++ updates (the last
// write wins); add: data plus a matmul with the 0/1 scatter matrix.
StatusOr<Outputs> ScatterFlat(ConvertContext& c, const std::vector<int64_t>& ds,
                              const std::vector<int64_t>& target, const std::string& reduction) {
  PLIR_ASSIGN_OR_RETURN(Expr data, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr upd, c.Input(2));
  int64_t n = 1, u = static_cast<int64_t>(target.size());
  for (int64_t d : ds) n *= d;
  PLIR_ASSIGN_OR_RETURN(Expr df, Flatten(c, data, ds));
  PLIR_ASSIGN_OR_RETURN(Expr uf, c.Call("reshape", {upd}, Shape({u})));
  for (int64_t t : target)
    if (t < 0 || t >= n) return c.Error("an index is out of range");
  if (reduction == "none") {
    std::vector<int64_t> map(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) map[k] = k;
    for (int64_t j = 0; j < u; ++j) map[target[j]] = n + j;
    PLIR_ASSIGN_OR_RETURN(Expr all, c.Call("concat", {TupleNode::Make({df, uf})}, Axis(0)));
    PLIR_ASSIGN_OR_RETURN(Expr m, c.Int64s(map));
    PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("take", {all, m}, Axis(0)));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape(ds)));
    return Outputs{y};
  }
  if (reduction != "add") return Unimplemented("scatter with reduction '" + reduction + "'");
  PLIR_RETURN_IF_ERROR(c.Limit({u, n}, "the scatter matrix"));
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr mat, c.Const(MakeTensor(dt, {u, n}, [&](int64_t e) {
    return target[e / n] == e % n ? 1.0 : 0.0;
  })));
  PLIR_ASSIGN_OR_RETURN(Expr row, c.Call("reshape", {uf}, Shape({1, u})));
  PLIR_ASSIGN_OR_RETURN(Expr add, c.Call("matmul", {row, mat}));
  PLIR_ASSIGN_OR_RETURN(add, c.Call("reshape", {add}, Shape(ds)));
  return c.One("add", {data, add});
}

StatusOr<Outputs> ScatterElements(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ds, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> is, c.InputShape(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, c.RequireInts(1, "the indices"));
  int64_t r = static_cast<int64_t>(ds.size());
  PLIR_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, c.AttrInt("axis", 0), r));
  std::vector<int64_t> dst = Strides(ds), ist = Strides(is), target;
  for (size_t j = 0; j < idx.size(); ++j) {
    int64_t off = 0, rem = static_cast<int64_t>(j);
    for (int64_t a = 0; a < r; ++a) {
      int64_t coord = rem / ist[a];
      rem %= ist[a];
      if (a == axis) {
        coord = idx[j] < 0 ? idx[j] + ds[a] : idx[j];
        if (coord < 0 || coord >= ds[a])
          return c.Error("index " + std::to_string(idx[j]) + " is out of range");
      }
      off += coord * dst[a];
    }
    target.push_back(off);
  }
  return ScatterFlat(c, ds, target, c.AttrString("reduction", "none"));
}

// ScatterND with reduction mul, min or max: the PLIR op scatter_nd, which
// has them.
StatusOr<Outputs> ScatterNDReduce(ConvertContext& c, const std::string& reduction) {
  if (!OpRegistry::Global().Lookup("scatter_nd"))
    return Unimplemented("scatter with reduction '" + reduction + "' needs the PLIR op scatter_nd");
  PLIR_ASSIGN_OR_RETURN(Expr data, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr idx, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(Expr upd, c.Input(2));
  PLIR_ASSIGN_OR_RETURN(idx, c.Cast(idx, DataType::kInt64));
  return c.One("scatter_nd", {data, idx, upd},
               MakeAttrs({{Symbol("reduction"), AttrValue::String(reduction)}}));
}

StatusOr<Outputs> ScatterND(ConvertContext& c) {
  std::string reduction = c.AttrString("reduction", "none");
  if (reduction == "mul" || reduction == "min" || reduction == "max")
    return ScatterNDReduce(c, reduction);
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ds, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> is, c.InputShape(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, c.RequireInts(1, "the indices"));
  if (is.empty()) return c.Error("indices must have a last axis");
  int64_t k = is.back();
  if (k > static_cast<int64_t>(ds.size()))
    return c.Error("index tuples are longer than the data's rank");
  std::vector<int64_t> dst = Strides(ds), target;
  int64_t slice = 1;
  for (size_t a = static_cast<size_t>(k); a < ds.size(); ++a) slice *= ds[a];
  for (size_t q = 0; q + k <= idx.size() && k > 0; q += static_cast<size_t>(k)) {
    int64_t base = 0;
    for (int64_t a = 0; a < k; ++a) {
      int64_t v = idx[q + a] < 0 ? idx[q + a] + ds[a] : idx[q + a];
      if (v < 0 || v >= ds[a])
        return c.Error("index " + std::to_string(idx[q + a]) + " is out of range");
      base += v * dst[a];
    }
    for (int64_t e = 0; e < slice; ++e) target.push_back(base + e);
  }
  return ScatterFlat(c, ds, target, c.AttrString("reduction", "none"));
}

// GatherND with indices known at import: one take from the flattened data.
StatusOr<Outputs> GatherND(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ds, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> is, c.InputShape(1));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, c.RequireInts(1, "the indices"));
  int64_t b = c.AttrInt("batch_dims", 0);
  if (is.empty()) return c.Error("indices must have a last axis");
  int64_t k = is.back(), r = static_cast<int64_t>(ds.size());
  if (b + k > r) return c.Error("index tuples are too long");
  std::vector<int64_t> dst = Strides(ds);
  int64_t slice = 1;
  for (int64_t a = b + k; a < r; ++a) slice *= ds[a];
  std::vector<int64_t> out_shape(is.begin(), is.end() - 1);
  for (int64_t a = b + k; a < r; ++a) out_shape.push_back(ds[a]);
  std::vector<int64_t> qshape(is.begin(), is.end() - 1), qst = Strides(qshape), map;
  int64_t nq = 1;
  for (int64_t d : qshape) nq *= d;
  for (int64_t q = 0; q < nq; ++q) {
    int64_t base = 0, rem = q;
    for (int64_t a = 0; a < b; ++a) {  // batch coordinates
      base += (rem / qst[a]) * dst[a];
      rem %= qst[a];
    }
    for (int64_t a = 0; a < k; ++a) {
      int64_t v = idx[q * k + a];
      int64_t dim = ds[b + a];
      if (v < 0) v += dim;
      if (v < 0 || v >= dim)
        return c.Error("index " + std::to_string(idx[q * k + a]) + " is out of range");
      base += v * dst[b + a];
    }
    for (int64_t e = 0; e < slice; ++e) map.push_back(base + e);
  }
  PLIR_ASSIGN_OR_RETURN(Expr xf, Flatten(c, x, ds));
  PLIR_ASSIGN_OR_RETURN(Expr m, c.Int64s(map));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("take", {xf, m}, Axis(0)));
  PLIR_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, Shape(out_shape)));
  return Outputs{y};
}

// out.flat[k] = src.flat[map[k]], src = x flattened with a zero appended
// (map[k] = size(x) reads the zero).
StatusOr<Expr> GatherFlat(ConvertContext& c, Expr x, const std::vector<int64_t>& xs,
                          const std::vector<int64_t>& map, const std::vector<int64_t>& out_shape) {
  PLIR_ASSIGN_OR_RETURN(Expr xf, Flatten(c, x, xs));
  PLIR_ASSIGN_OR_RETURN(Expr zero, c.Const(MakeTensor(As<TensorTypeNode>(x->type())->dtype(), {1},
                                                      [](int64_t) { return 0.0; })));
  PLIR_ASSIGN_OR_RETURN(Expr src, c.Call("concat", {TupleNode::Make({xf, zero})}, Axis(0)));
  PLIR_ASSIGN_OR_RETURN(Expr m, c.Int64s(map));
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("take", {src, m}, Axis(0)));
  return c.Call("reshape", {y}, Shape(out_shape));
}

StatusOr<Outputs> ReverseSequence(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> lens, c.RequireInts(1, "sequence_lens"));
  int64_t r = static_cast<int64_t>(s.size());
  if (r < 2) return c.Error("input must be at least 2-D");
  PLIR_ASSIGN_OR_RETURN(int64_t ba, NormAxis(c, c.AttrInt("batch_axis", 1), r));
  PLIR_ASSIGN_OR_RETURN(int64_t ta, NormAxis(c, c.AttrInt("time_axis", 0), r));
  if (static_cast<int64_t>(lens.size()) != s[ba])
    return c.Error("sequence_lens needs one length per batch entry");
  PLIR_RETURN_IF_ERROR(c.Limit(s, "the reverse map"));
  std::vector<int64_t> st = Strides(s), map;
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  for (int64_t e = 0; e < n; ++e) {
    int64_t b = (e / st[ba]) % s[ba], t = (e / st[ta]) % s[ta], len = lens[b];
    if (len < 0 || len > s[ta]) return c.Error("a sequence length is out of range");
    map.push_back(t < len ? e + (len - 1 - 2 * t) * st[ta] : e);
  }
  PLIR_ASSIGN_OR_RETURN(Expr y, GatherFlat(c, x, s, map, s));
  return Outputs{y};
}

// MaxUnpool: each value to the flat position its index names, zeros elsewhere.
StatusOr<Outputs> MaxUnpool(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, c.RequireInts(1, "the indices"));
  size_t n = xs.size() - 2;
  // The indices are flat positions in the default unpooled shape; an
  // explicit output_shape places those coordinates in a larger tensor.
  std::vector<int64_t> k = c.AttrInts("kernel_shape"),
                       st = c.AttrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = c.AttrInts("pads", std::vector<int64_t>(2 * n, 0));
  if (k.size() != n || st.size() != n || pads.size() != 2 * n)
    return c.Error("attribute lengths do not match the spatial rank");
  std::vector<int64_t> def = {xs[0], xs[1]};
  for (size_t i = 0; i < n; ++i)
    def.push_back((xs[i + 2] - 1) * st[i] + k[i] - pads[i] - pads[i + n]);
  PLIR_RETURN_IF_ERROR(c.Limit(def, "the unpooled output"));
  std::vector<int64_t> out = def;
  if (c.HasInput(2)) {
    PLIR_ASSIGN_OR_RETURN(out, c.RequireInts(2, "output_shape"));
    if (out.size() != def.size()) return c.Error("output_shape has the wrong rank");
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i] < def[i]) return c.Error("output_shape is smaller than the unpooled shape");
  }
  std::vector<int64_t> dst = Strides(def), ost = Strides(out);
  int64_t def_total = 1;
  for (int64_t d : def) def_total *= d;
  for (int64_t& v : idx) {
    if (v < 0 || v >= def_total) return c.Error("index " + std::to_string(v) + " is out of range");
    int64_t off = 0;
    for (size_t a = 0; a < def.size(); ++a) off += ((v / dst[a]) % def[a]) * ost[a];
    v = off;
  }
  PLIR_RETURN_IF_ERROR(c.Limit(out, "the unpooled output"));
  int64_t total = 1, in = 1;
  for (int64_t d : out) total *= d;
  for (int64_t d : xs) in *= d;
  if (static_cast<int64_t>(idx.size()) != in) return c.Error("indices and data differ in size");
  std::vector<int64_t> map(static_cast<size_t>(total), in);
  for (int64_t j = 0; j < in; ++j) {
    if (idx[j] < 0 || idx[j] >= total)
      return c.Error("index " + std::to_string(idx[j]) + " is out of range");
    map[idx[j]] = j;
  }
  PLIR_ASSIGN_OR_RETURN(Expr y, GatherFlat(c, x, xs, map, out));
  return Outputs{y};
}

}  // namespace

void RegisterShapeConverters(ConverterTable& t) {
  // If with a condition known at import: the taken branch, inlined.
  t.Add("If", 1, {}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Tensor cond, c.RequireStatic(0, "the condition"));
    if (cond.NumElements() != 1) return c.Error("the condition must hold one value");
    bool taken = IsFloat(cond.dtype) ? cond.GetDouble(0) != 0 : cond.GetInt(0) != 0;
    return c.Subgraph(taken ? "then_branch" : "else_branch");
  });
  t.Add("Identity", 1, {}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    return Outputs{x};
  });
  t.Add("Reshape", 5, {"reshape"}, [](ConvertContext& c) { return ReshapeImpl(c, false); });
  t.Add("Reshape", 14, {"reshape"},
        [](ConvertContext& c) { return ReshapeImpl(c, c.AttrInt("allowzero", 0) != 0); });
  t.Add("Flatten", 1, {"reshape"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
    int64_t r = static_cast<int64_t>(s.size());
    int64_t axis = c.AttrInt("axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) return c.Error("axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= s[i];
    PLIR_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, {a, b}));
    return Outputs{y};
  });
  t.Add("Transpose", 1, {"permute_dims"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    int64_t r = c.InputRank(0);
    if (r < 0) return c.Error("input 0 needs a known rank");
    std::vector<int64_t> perm = c.AttrInts("perm");
    if (perm.empty())
      for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
    return c.One("permute_dims", {x}, MakeAttrs({{Symbol("axes"), IntList(perm)}}));
  });
  t.Add("Unsqueeze", 1, {"expand_dims"},
        [](ConvertContext& c) { return Unsqueeze(c, c.AttrInts("axes")); });
  t.Add("Unsqueeze", 13, {"expand_dims"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, c.RequireInts(1, "the axes"));
    return Unsqueeze(c, axes);
  });
  t.Add("Squeeze", 1, {"reshape"},
        [](ConvertContext& c) { return Squeeze(c, c.AttrInts("axes"), c.HasAttr("axes")); });
  t.Add("Squeeze", 13, {"reshape"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    if (!c.HasInput(1)) return Squeeze(c, {}, false);
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, c.RequireInts(1, "the axes"));
    return Squeeze(c, axes, true);
  });
  t.Add("Concat", 4, {"concat"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    std::vector<Expr> xs;
    for (int i = 0; i < c.num_inputs(); ++i) {
      PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(i));
      xs.push_back(x);
    }
    int64_t rank = c.InputRank(0);
    int64_t axis = c.AttrInt("axis", 0);
    if (rank >= 0) {
      PLIR_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, rank));
    }
    return c.One("concat", {TupleNode::Make(xs)}, Axis(axis));
  });
  t.Add("Gather", 1, {"take"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr i, c.Input(1));
    int64_t rank = c.InputRank(0);
    int64_t axis = c.AttrInt("axis", 0);
    if (rank >= 0) {
      PLIR_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, rank));
    }
    return c.One("take", {x, i}, Axis(axis));
  });
  t.Add("GatherElements", 11, {"take", "add", "permute_dims", "astype"}, GatherElements);
  t.Add("OneHot", 9, {"take", "permute_dims", "astype"}, OneHot);
  t.Add("Compress", 9, {"take"}, Compress);
  const std::vector<std::string> scatter = {"take", "concat", "reshape", "matmul", "add"};
  t.Add("ScatterElements", 11, scatter, ScatterElements);
  t.Add("Scatter", 9, scatter, ScatterElements);
  t.Add("ScatterND", 11, scatter, ScatterND);
  t.Add("ReverseSequence", 10, {"take", "concat", "reshape"}, ReverseSequence);
  t.Add("MaxUnpool", 9, {"take", "concat", "reshape"}, MaxUnpool);
  t.Add("GatherND", 11, {"take", "reshape"}, GatherND);
  // NonZero: its output's shape depends on the values, so they must be known.
  t.Add("NonZero", 9, {}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Tensor x,
                          c.RequireStatic(0, "the data (the output's shape depends on it)"));
    std::vector<int64_t> st = Strides(x.shape), hits;
    for (int64_t e = 0; e < x.NumElements(); ++e)
      if (IsFloat(x.dtype) ? x.GetDouble(e) != 0 : x.GetInt(e) != 0) hits.push_back(e);
    int64_t r = static_cast<int64_t>(x.shape.size()), n = static_cast<int64_t>(hits.size());
    PLIR_ASSIGN_OR_RETURN(Tensor out, MakeIntTensor(DataType::kInt64, {r, n}, [&](int64_t e) {
                            int64_t a = e / n, h = hits[e % n];
                            return (h / st[a]) % x.shape[a];
                          }));
    PLIR_ASSIGN_OR_RETURN(Expr k, c.Const(out));
    return Outputs{k};
  });
  t.Add("Slice", 1, {"strided_slice"}, [](ConvertContext& c) {
    return SliceImpl(c, c.AttrInts("starts"), c.AttrInts("ends"), c.AttrInts("axes"), {});
  });
  t.Add("Slice", 10, {"strided_slice"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> starts, c.RequireInts(1, "starts"));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ends, c.RequireInts(2, "ends"));
    std::vector<int64_t> axes, steps;
    if (c.HasInput(3)) {
      PLIR_ASSIGN_OR_RETURN(axes, c.RequireInts(3, "axes"));
    }
    if (c.HasInput(4)) {
      PLIR_ASSIGN_OR_RETURN(steps, c.RequireInts(4, "steps"));
    }
    return SliceImpl(c, starts, ends, axes, steps);
  });
  t.Add("Split", 2, {"strided_slice"},
        [](ConvertContext& c) { return SplitImpl(c, c.AttrInts("split")); });
  t.Add("Split", 13, {"strided_slice"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    std::vector<int64_t> split;
    if (c.HasInput(1)) {
      PLIR_ASSIGN_OR_RETURN(split, c.RequireInts(1, "split"));
    }
    return SplitImpl(c, split);
  });
  t.Add("Shape", 1, {}, [](ConvertContext& c) { return ShapeImpl(c, 0, std::nullopt); });
  t.Add("Shape", 15, {}, [](ConvertContext& c) {
    std::optional<int64_t> end;
    if (c.HasAttr("end")) end = c.AttrInt("end", 0);
    return ShapeImpl(c, c.AttrInt("start", 0), end);
  });
  t.Add("Size", 1, {}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    PLIR_ASSIGN_OR_RETURN(Expr k, c.Scalar(static_cast<double>(n), DataType::kInt64));
    return Outputs{k};
  });
  t.Add("Constant", 1, {}, [](ConvertContext& c) -> StatusOr<Outputs> {
    if (c.HasAttr("value")) {
      PLIR_ASSIGN_OR_RETURN(Tensor v, c.AttrTensor("value"));
      PLIR_ASSIGN_OR_RETURN(Expr e, c.Const(v));
      return Outputs{e};
    }
    if (c.HasAttr("value_float")) {
      PLIR_ASSIGN_OR_RETURN(Expr e, c.Scalar(c.AttrFloat("value_float", 0), DataType::kFloat32));
      return Outputs{e};
    }
    if (c.HasAttr("value_int")) {
      PLIR_ASSIGN_OR_RETURN(
          Expr e, c.Scalar(static_cast<double>(c.AttrInt("value_int", 0)), DataType::kInt64));
      return Outputs{e};
    }
    if (c.HasAttr("value_ints")) {
      PLIR_ASSIGN_OR_RETURN(Expr e, c.Int64s(c.AttrInts("value_ints")));
      return Outputs{e};
    }
    if (c.HasAttr("value_floats")) {
      std::vector<float> f = c.AttrFloats("value_floats");
      PLIR_ASSIGN_OR_RETURN(Expr e,
                            c.Const(MakeTensor(DataType::kFloat32, {static_cast<int64_t>(f.size())},
                                               [&](int64_t i) { return f[i]; })));
      return Outputs{e};
    }
    return Unimplemented("Constant with a string or sparse value");
  });
  t.Add("ConstantOfShape", 9, {"full"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.RequireInts(0, "the shape"));
    Tensor v = MakeTensor(DataType::kFloat32, {}, [](int64_t) { return 0.0; });
    if (c.HasAttr("value")) {
      PLIR_ASSIGN_OR_RETURN(v, c.AttrTensor("value"));
      if (v.NumElements() != 1) return c.Error("value must hold one element");
      v.shape = {};
    }
    PLIR_ASSIGN_OR_RETURN(Expr fill, c.Const(v));
    return c.One("full", {fill}, MakeAttrs({{Symbol("shape"), IntList(shape)}}));
  });
  t.Add("Cast", 6, {"astype"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    int64_t to = c.AttrInt("to", 0);
    DataType dt = DataTypeFromOnnx(static_cast<int32_t>(to));
    if (dt == DataType::kUnknown || c.InputDtype(0) == DataType::kUnknown)
      return Unimplemented("Cast to or from element type " +
                           OnnxTypeName(static_cast<int32_t>(to)));
    PLIR_ASSIGN_OR_RETURN(Expr y, c.Cast(x, dt));
    return Outputs{y};
  });
  t.Add("CastLike", 15, {"astype"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    DataType dt = c.InputDtype(1);
    if (dt == DataType::kUnknown) return Unimplemented("CastLike to an unknown element type");
    PLIR_ASSIGN_OR_RETURN(Expr y, c.Cast(x, dt));
    return Outputs{y};
  });
  t.Add("Expand", 8, {"add", "zeros", "astype"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> target, c.RequireInts(1, "the shape"));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> out, Broadcast(c, s, target));
    DataType dt = c.InputDtype(0);
    bool is_bool = dt == DataType::kBool;
    if (is_bool) {
      PLIR_ASSIGN_OR_RETURN(x, c.Cast(x, DataType::kUInt8));
    }
    PLIR_ASSIGN_OR_RETURN(
        Expr z, c.Call("zeros", {},
                       MakeAttrs({{Symbol("shape"), IntList(out)},
                                  {Symbol("dtype"), AttrValue::String(std::string(DataTypeName(
                                                        is_bool ? DataType::kUInt8 : dt)))}})));
    PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("add", {x, z}));
    if (is_bool) {
      PLIR_ASSIGN_OR_RETURN(y, c.Cast(y, DataType::kBool));
    }
    return Outputs{y};
  });
  t.Add("Tile", 6, {"concat"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> reps, c.RequireInts(1, "the repeats"));
    if (static_cast<int64_t>(reps.size()) != c.InputRank(0))
      return c.Error("repeats must have one entry per axis");
    for (size_t ax = 0; ax < reps.size(); ++ax) {
      if (reps[ax] == 1) continue;
      if (reps[ax] == 0) {
        PLIR_ASSIGN_OR_RETURN(x, Slice(c, x, {static_cast<int64_t>(ax)}, {0}, {0}, {1}));
        continue;
      }
      if (reps[ax] < 0) return c.Error("repeats must not be negative");
      std::vector<int64_t> grown = c.InputShape(0).ok() ? *c.InputShape(0) : std::vector<int64_t>{};
      PLIR_RETURN_IF_ERROR(c.Limit({reps[ax], grown.empty() ? 1 : grown[ax]}, "the tiled axis"));
      std::vector<Expr> parts(static_cast<size_t>(reps[ax]), x);
      PLIR_ASSIGN_OR_RETURN(
          x, c.Call("concat", {TupleNode::Make(parts)}, Axis(static_cast<int64_t>(ax))));
    }
    return Outputs{x};
  });
  t.Add("Range", 11, {"arange"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Tensor a, c.RequireStatic(0, "start"));
    PLIR_ASSIGN_OR_RETURN(Tensor b, c.RequireStatic(1, "limit"));
    PLIR_ASSIGN_OR_RETURN(Tensor d, c.RequireStatic(2, "delta"));
    double start = a.GetDouble(0), limit = b.GetDouble(0), delta = d.GetDouble(0);
    if (delta == 0) return c.Error("delta is 0");
    double count = std::ceil((limit - start) / delta);
    if (!(count < static_cast<double>(ConvertContext::kMaxImportElements)))
      count = static_cast<double>(ConvertContext::kMaxImportElements) + 1;
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    PLIR_RETURN_IF_ERROR(c.Limit({n}, "the range"));
    DataType dt = c.InputDtype(0);
    // start + i * delta in the input dtype (what the reference computes).
    Tensor out =
        MakeTensor(dt, {n}, [&](int64_t i) { return start + static_cast<double>(i) * delta; });
    PLIR_ASSIGN_OR_RETURN(Expr e, c.Const(out));
    return Outputs{e};
  });
  t.Add("Dropout", 7, {}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    if (c.HasInput(2)) {
      PLIR_ASSIGN_OR_RETURN(Tensor tm, c.RequireStatic(2, "training_mode"));
      if (tm.NumElements() == 1 && tm.GetInt(0) != 0) {
        double ratio = 0.5;
        if (c.HasInput(1)) {
          PLIR_ASSIGN_OR_RETURN(Tensor r, c.RequireStatic(1, "ratio"));
          ratio = r.GetDouble(0);
        }
        if (ratio != 0)
          return Unimplemented(
              "Dropout with training_mode = 1 and ratio > 0 draws a random mask (ONNX's expected "
              "outputs come from NumPy's generator: not reproducible here)");
      }
    }
    Outputs outs{x};
    if (c.node().output_size() > 1 && !c.node().output(1).empty()) {
      PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
      PLIR_ASSIGN_OR_RETURN(Expr m, Full(c, 1, DataType::kBool, s));
      outs.push_back(m);
    }
    return outs;
  });
  t.Add("Pad", 2, {"concat", "full", "take", "strided_slice"}, [](ConvertContext& c) {
    return PadImpl(c, c.AttrInts("pads"), c.AttrString("mode", "constant"), c.AttrFloat("value", 0),
                   std::nullopt);
  });
  t.Add("Pad", 11, {"concat", "full", "take", "strided_slice"},
        [](ConvertContext& c) -> StatusOr<Outputs> {
          PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, c.RequireInts(1, "the pads"));
          std::optional<Expr> v;
          if (c.HasInput(2)) {
            PLIR_ASSIGN_OR_RETURN(Expr e, c.Input(2));
            const TensorTypeNode* t = c.InputType(2);
            if (t && t->ndim() != 0) {
              PLIR_ASSIGN_OR_RETURN(e, c.Call("reshape", {e}, Shape({})));
            }
            v = e;
          }
          return PadImpl(c, pads, c.AttrString("mode", "constant"), 0, v);
        });
  t.Add("DepthToSpace", 1, {"reshape", "permute_dims"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
    if (s.size() != 4) return c.Error("input must be 4-D");
    int64_t b = c.AttrInt("blocksize", 1), n = s[0], ch = s[1], h = s[2], w = s[3];
    PLIR_RETURN_IF_ERROR(c.Positive({b}, "blocksize"));
    bool crd = c.AttrString("mode", "DCR") == "CRD";
    std::vector<int64_t> s1 = crd ? std::vector<int64_t>{n, ch / (b * b), b, b, h, w}
                                  : std::vector<int64_t>{n, b, b, ch / (b * b), h, w};
    std::vector<int64_t> perm =
        crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
    PLIR_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, s1));
    PLIR_ASSIGN_OR_RETURN(
        y, c.Call("permute_dims", {y}, MakeAttrs({{Symbol("axes"), IntList(perm)}})));
    PLIR_ASSIGN_OR_RETURN(y, Reshape(c, y, {n, ch / (b * b), h * b, w * b}));
    return Outputs{y};
  });
  t.Add("SpaceToDepth", 1, {"reshape", "permute_dims"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
    if (s.size() != 4) return c.Error("input must be 4-D");
    int64_t b = c.AttrInt("blocksize", 1), n = s[0], ch = s[1], h = s[2], w = s[3];
    PLIR_RETURN_IF_ERROR(c.Positive({b}, "blocksize"));
    PLIR_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, {n, ch, h / b, b, w / b, b}));
    PLIR_ASSIGN_OR_RETURN(
        y, c.Call("permute_dims", {y}, MakeAttrs({{Symbol("axes"), IntList({0, 3, 5, 1, 2, 4})}})));
    PLIR_ASSIGN_OR_RETURN(y, Reshape(c, y, {n, ch * b * b, h / b, w / b}));
    return Outputs{y};
  });
  // Trilu: x times a 0/1 mask known at import.
  t.Add("Trilu", 14, {"multiply"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
    if (s.size() < 2) return c.Error("input must be at least 2-D");
    int64_t k = 0;
    if (c.HasInput(1)) {
      PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> kv, c.RequireInts(1, "k"));
      k = kv.empty() ? 0 : kv[0];
    }
    bool upper = c.AttrInt("upper", 1) != 0;
    int64_t rows = s[s.size() - 2], cols = s.back();
    PLIR_RETURN_IF_ERROR(c.Limit({rows, cols}, "the triangle mask"));
    DataType dt = c.InputDtype(0);
    bool is_bool = dt == DataType::kBool;
    DataType mdt = is_bool ? DataType::kUInt8 : dt;
    Tensor mask = MakeTensor(mdt, {rows, cols}, [&](int64_t i) -> double {
      int64_t r = i / cols, col = i % cols;
      return (upper ? (col - r >= k) : (col - r <= k)) ? 1.0 : 0.0;
    });
    PLIR_ASSIGN_OR_RETURN(Expr m, c.Const(mask));
    if (is_bool) {
      PLIR_ASSIGN_OR_RETURN(x, c.Cast(x, mdt));
    }
    PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("multiply", {x, m}));
    if (is_bool) {
      PLIR_ASSIGN_OR_RETURN(y, c.Cast(y, DataType::kBool));
    }
    return Outputs{y};
  });
  t.Add("EyeLike", 9, {}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.InputShape(0));
    if (s.size() != 2) return c.Error("input must be 2-D");
    DataType dt = c.HasAttr("dtype") ? DataTypeFromOnnx(static_cast<int32_t>(c.AttrInt("dtype", 1)))
                                     : c.InputDtype(0);
    if (dt == DataType::kUnknown) return Unimplemented("EyeLike to this element type");
    int64_t k = c.AttrInt("k", 0), cols = s[1];
    PLIR_RETURN_IF_ERROR(c.Limit(s, "the eye-like constant"));
    Tensor e =
        MakeTensor(dt, s, [&](int64_t i) { return (i % cols) - (i / cols) == k ? 1.0 : 0.0; });
    PLIR_ASSIGN_OR_RETURN(Expr out, c.Const(e));
    return Outputs{out};
  });
}

}  // namespace plir::onnx_import
