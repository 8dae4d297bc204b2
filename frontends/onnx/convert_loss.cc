// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as takes
// from the flattened input (the class axis moved last) with constant
// lookup tables for ignore_index, and sums as matmuls with ones.
#include <algorithm>

#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

Attrs AxesAttr(const std::vector<int64_t>& a) { return MakeAttrs({{Symbol("axes"), IntList(a)}}); }
Attrs Axis0() { return MakeAttrs({{Symbol("axis"), AttrValue::Int(0)}}); }

// The loss of log-probabilities `logp` [N, C, d...] (static shape) at the
// targets (input `target_input`), weighted by input `weight_input` if
// present. Returns (loss, log-probabilities) per ONNX's outputs.
StatusOr<Expr> NllLoss(ConvertContext& c, Expr logp, int target_input, int weight_input) {
  const auto* lt = As<TensorTypeNode>(logp->type());
  if (!lt || !lt->IsStatic()) return c.Error("the scores need a static shape");
  std::vector<int64_t> s;
  for (const Dim& d : lt->shape()) s.push_back(d.value);
  if (s.size() < 2) return c.Error("the scores need at least 2 axes [N, C, ...]");
  DataType dt = lt->dtype();
  int64_t r = static_cast<int64_t>(s.size()), C = s[1];
  PLIR_ASSIGN_OR_RETURN(Expr t, c.Input(target_input));
  PLIR_ASSIGN_OR_RETURN(t, c.Cast(t, DataType::kInt64));
  bool has_ignore = c.HasAttr("ignore_index");
  int64_t ii = c.AttrInt("ignore_index", 0);
  int64_t lo = has_ignore ? std::min<int64_t>(0, ii) : 0,
          hi = has_ignore ? std::max<int64_t>(C, ii + 1) : C;
  PLIR_RETURN_IF_ERROR(c.Limit({hi - lo}, "the ignore_index table"));
  // Target -> class to read (ignored: class 0), and -> weight slot (ignored: C, a zero).
  std::vector<int64_t> cls, slot;
  for (int64_t v = lo; v < hi; ++v) {
    bool ignored = (has_ignore && v == ii) || v < 0 || v >= C;
    cls.push_back(ignored ? 0 : v);
    slot.push_back(ignored ? C : v);
  }
  PLIR_ASSIGN_OR_RETURN(Expr shift, c.Scalar(static_cast<double>(-lo), DataType::kInt64));
  PLIR_ASSIGN_OR_RETURN(Expr ts, c.Call("add", {t, shift}));
  PLIR_ASSIGN_OR_RETURN(Expr cls_tab, c.Int64s(cls));
  PLIR_ASSIGN_OR_RETURN(Expr slot_tab, c.Int64s(slot));
  PLIR_ASSIGN_OR_RETURN(Expr tc, c.Call("take", {cls_tab, ts}, Axis0()));
  PLIR_ASSIGN_OR_RETURN(Expr tw, c.Call("take", {slot_tab, ts}, Axis0()));
  // Weights with a zero appended for ignored targets.
  Expr w;
  if (weight_input >= 0 && c.HasInput(weight_input)) {
    PLIR_ASSIGN_OR_RETURN(Expr wi, c.Input(weight_input));
    PLIR_ASSIGN_OR_RETURN(Expr zero, c.Const(MakeTensor(dt, {1}, [](int64_t) { return 0.0; })));
    PLIR_ASSIGN_OR_RETURN(w, c.Call("concat", {TupleNode::Make({wi, zero})}, Axis0()));
  } else {
    PLIR_ASSIGN_OR_RETURN(
        w, c.Const(MakeTensor(dt, {C + 1}, [&](int64_t i) { return i < C ? 1.0 : 0.0; })));
  }
  PLIR_ASSIGN_OR_RETURN(Expr wt, c.Call("take", {w, tw}, Axis0()));
  // logp[n, t, d...]: class axis last, flattened, one take.
  std::vector<int64_t> perm = {0};
  for (int64_t i = 2; i < r; ++i) perm.push_back(i);
  perm.push_back(1);
  Expr lp = logp;
  if (r > 2) {
    PLIR_ASSIGN_OR_RETURN(lp, c.Call("permute_dims", {lp}, AxesAttr(perm)));
  }
  std::vector<int64_t> ts_shape = {s[0]};
  for (int64_t i = 2; i < r; ++i) ts_shape.push_back(s[i]);
  PLIR_ASSIGN_OR_RETURN(
      Tensor base, MakeIntTensor(DataType::kInt64, ts_shape, [&](int64_t e) { return e * C; }));
  PLIR_ASSIGN_OR_RETURN(Expr be, c.Const(base));
  PLIR_ASSIGN_OR_RETURN(Expr flat, c.Call("add", {tc, be}));
  PLIR_ASSIGN_OR_RETURN(Expr picked, c.Call("take", {lp, flat}));
  PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, dt));
  PLIR_ASSIGN_OR_RETURN(Expr neg, c.Call("subtract", {zero, picked}));
  PLIR_ASSIGN_OR_RETURN(Expr loss, c.Call("multiply", {neg, wt}));
  std::string reduction = c.AttrString("reduction", "mean");
  if (reduction == "none") return loss;
  std::vector<bool> all(ts_shape.size(), true);
  PLIR_ASSIGN_OR_RETURN(Expr total, ReduceSumOf(c, loss, all, false, false));
  if (reduction == "sum") return total;
  if (reduction != "mean") return c.Error("reduction '" + reduction + "' is not supported");
  PLIR_ASSIGN_OR_RETURN(Expr wsum, ReduceSumOf(c, wt, all, false, false));
  return c.Call("divide", {total, wsum});
}

StatusOr<Outputs> Nll(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr loss, NllLoss(c, x, 1, 2));
  return Outputs{loss};
}

StatusOr<Outputs> SoftmaxCrossEntropy(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  Expr logp;
  if (OpRegistry::Global().Lookup("nn.log_softmax")) {
    PLIR_ASSIGN_OR_RETURN(
        logp, c.Call("nn.log_softmax", {x}, MakeAttrs({{Symbol("axis"), AttrValue::Int(1)}})));
  } else {
    PLIR_ASSIGN_OR_RETURN(
        Expr sm, c.Call("nn.softmax", {x}, MakeAttrs({{Symbol("axis"), AttrValue::Int(1)}})));
    PLIR_ASSIGN_OR_RETURN(logp, c.Call("log", {sm}));
  }
  PLIR_ASSIGN_OR_RETURN(Expr loss, NllLoss(c, logp, 1, 2));
  return Outputs{loss, logp};
}

}  // namespace

void RegisterLossConverters(ConverterTable& t) {
  const std::vector<std::string> base = {"take",   "add",    "subtract",     "multiply", "divide",
                                         "concat", "astype", "permute_dims", "matmul",   "reshape"};
  t.Add("NegativeLogLikelihoodLoss", 12, base, Nll);
  std::vector<std::string> sce = base;
  sce.push_back("nn.softmax");
  sce.push_back("log");
  t.Add("SoftmaxCrossEntropyLoss", 12, sce, SoftmaxCrossEntropy);
}

}  // namespace plir::onnx_import
