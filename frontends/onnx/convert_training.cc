// The optimizers of domain ai.onnx.preview.training (opset 1): Adagrad,
// Momentum (standard and Nesterov), Adam. Each updates n tensors at once:
// inputs R (learning rate, scalar), T (update count, int64 scalar), then n
// of each per-tensor input (X, G, and the optimizer's state); outputs the n
// new X and then the n of each new state. Elementwise ops only; the
// formulas and attribute defaults (epsilon 1e-6) are the operator
// schema's. (Node test test_adam_multiple fails: its expected outputs were
// computed with epsilon 1e-2, which its node does not set.)
#include <string>
#include <vector>

#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

constexpr char kDomain[] = "ai.onnx.preview.training.";

// The number of tensors updated: (inputs - 2) / groups, checked.
StatusOr<int> Count(const ConvertContext& c, int groups) {
  int rest = c.num_inputs() - 2;
  if (rest <= 0 || rest % groups != 0)
    return c.Error("needs R, T and " + std::to_string(groups) + " inputs per updated tensor");
  int n = rest / groups;
  if (c.node().output_size() > n * (groups - 1))
    return c.Error("has more outputs than " + std::to_string(n * (groups - 1)));
  for (int i = 0; i < c.num_inputs(); ++i)
    if (!c.HasInput(i)) return c.Error("input " + std::to_string(i) + " is missing");
  return n;
}

// T as R's dtype, and the boolean T > 0.
struct Step {
  Expr t, positive;
};
StatusOr<Step> StepOf(ConvertContext& c, DataType dt) {
  PLIR_ASSIGN_OR_RETURN(Expr t, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(Expr zero, c.Scalar(0, c.InputDtype(1)));
  PLIR_ASSIGN_OR_RETURN(Expr positive, c.Call("greater", {t, zero}));
  PLIR_ASSIGN_OR_RETURN(t, c.Cast(t, dt));
  return Step{t, positive};
}

// norm_coefficient * x + g.
StatusOr<Expr> Regularized(ConvertContext& c, Expr x, Expr g, DataType dt) {
  PLIR_ASSIGN_OR_RETURN(Expr k, c.Scalar(c.AttrFloat("norm_coefficient", 0), dt));
  PLIR_ASSIGN_OR_RETURN(Expr kx, c.Call("multiply", {k, x}));
  return c.Call("add", {kx, g});
}

// r' = R / (1 + T * decay_factor); g' = regularized g; H' = H + g'^2;
// X' = X - r' * g' / (sqrt(H') + epsilon).
StatusOr<Outputs> Adagrad(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(int n, Count(c, 3));
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr r, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Step s, StepOf(c, dt));
  PLIR_ASSIGN_OR_RETURN(Expr decay, c.Scalar(c.AttrFloat("decay_factor", 0), dt));
  PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, dt));
  PLIR_ASSIGN_OR_RETURN(Expr eps, c.Scalar(c.AttrFloat("epsilon", 1e-6f), dt));
  PLIR_ASSIGN_OR_RETURN(Expr td, c.Call("multiply", {s.t, decay}));
  PLIR_ASSIGN_OR_RETURN(td, c.Call("add", {one, td}));
  PLIR_ASSIGN_OR_RETURN(Expr rate, c.Call("divide", {r, td}));
  Outputs xs, hs;
  for (int i = 0; i < n; ++i) {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(2 + i));
    PLIR_ASSIGN_OR_RETURN(Expr g, c.Input(2 + n + i));
    PLIR_ASSIGN_OR_RETURN(Expr h, c.Input(2 + 2 * n + i));
    PLIR_ASSIGN_OR_RETURN(g, Regularized(c, x, g, dt));
    PLIR_ASSIGN_OR_RETURN(Expr gg, c.Call("multiply", {g, g}));
    PLIR_ASSIGN_OR_RETURN(h, c.Call("add", {h, gg}));
    PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("sqrt", {h}));
    PLIR_ASSIGN_OR_RETURN(d, c.Call("add", {d, eps}));
    PLIR_ASSIGN_OR_RETURN(Expr step, c.Call("multiply", {rate, g}));
    PLIR_ASSIGN_OR_RETURN(step, c.Call("divide", {step, d}));
    PLIR_ASSIGN_OR_RETURN(x, c.Call("subtract", {x, step}));
    xs.push_back(x);
    hs.push_back(h);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// g' = regularized g; V' = alpha * V + (T > 0 ? beta : 1) * g';
// standard: X' = X - R * V'; nesterov: X' = X - R * (g' + alpha * V').
StatusOr<Outputs> Momentum(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(int n, Count(c, 3));
  std::string mode = c.AttrString("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return c.Error("mode must be standard or nesterov, got '" + mode + "'");
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr r, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Step s, StepOf(c, dt));
  PLIR_ASSIGN_OR_RETURN(Expr alpha, c.Scalar(c.AttrFloat("alpha", 0), dt));
  PLIR_ASSIGN_OR_RETURN(Expr beta, c.Scalar(c.AttrFloat("beta", 0), dt));
  PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, dt));
  PLIR_ASSIGN_OR_RETURN(Expr beta_t, c.Call("where", {s.positive, beta, one}));
  Outputs xs, vs;
  for (int i = 0; i < n; ++i) {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(2 + i));
    PLIR_ASSIGN_OR_RETURN(Expr g, c.Input(2 + n + i));
    PLIR_ASSIGN_OR_RETURN(Expr v, c.Input(2 + 2 * n + i));
    PLIR_ASSIGN_OR_RETURN(g, Regularized(c, x, g, dt));
    PLIR_ASSIGN_OR_RETURN(Expr av, c.Call("multiply", {alpha, v}));
    PLIR_ASSIGN_OR_RETURN(Expr bg, c.Call("multiply", {beta_t, g}));
    PLIR_ASSIGN_OR_RETURN(v, c.Call("add", {av, bg}));
    Expr dir = v;
    if (mode == "nesterov") {
      PLIR_ASSIGN_OR_RETURN(Expr anv, c.Call("multiply", {alpha, v}));
      PLIR_ASSIGN_OR_RETURN(dir, c.Call("add", {g, anv}));
    }
    PLIR_ASSIGN_OR_RETURN(Expr step, c.Call("multiply", {r, dir}));
    PLIR_ASSIGN_OR_RETURN(x, c.Call("subtract", {x, step}));
    xs.push_back(x);
    vs.push_back(v);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

// g' = regularized g; V' = alpha * V + (1 - alpha) * g';
// H' = beta * H + (1 - beta) * g'^2; r' = T > 0 ? R * sqrt(1 - beta^T) /
// (1 - alpha^T) : R; X' = (1 - norm_coefficient_post) * (X - r' * V' /
// (sqrt(H') + epsilon)).
StatusOr<Outputs> Adam(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(int n, Count(c, 4));
  DataType dt = c.InputDtype(0);
  PLIR_ASSIGN_OR_RETURN(Expr r, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Step s, StepOf(c, dt));
  double a = c.AttrFloat("alpha", 0.9f), b = c.AttrFloat("beta", 0.999f);
  PLIR_ASSIGN_OR_RETURN(Expr alpha, c.Scalar(a, dt));
  PLIR_ASSIGN_OR_RETURN(Expr beta, c.Scalar(b, dt));
  PLIR_ASSIGN_OR_RETURN(Expr one_a, c.Scalar(1 - a, dt));
  PLIR_ASSIGN_OR_RETURN(Expr one_b, c.Scalar(1 - b, dt));
  PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1, dt));
  PLIR_ASSIGN_OR_RETURN(Expr eps, c.Scalar(c.AttrFloat("epsilon", 1e-6f), dt));
  PLIR_ASSIGN_OR_RETURN(Expr post, c.Scalar(1 - c.AttrFloat("norm_coefficient_post", 0), dt));
  // The bias-corrected rate (computed for T = 0 too, where it divides by
  // zero, and then not selected).
  PLIR_ASSIGN_OR_RETURN(Expr bt, c.Call("power", {beta, s.t}));
  PLIR_ASSIGN_OR_RETURN(bt, c.Call("subtract", {one, bt}));
  PLIR_ASSIGN_OR_RETURN(bt, c.Call("sqrt", {bt}));
  PLIR_ASSIGN_OR_RETURN(Expr at, c.Call("power", {alpha, s.t}));
  PLIR_ASSIGN_OR_RETURN(at, c.Call("subtract", {one, at}));
  PLIR_ASSIGN_OR_RETURN(Expr corrected, c.Call("multiply", {r, bt}));
  PLIR_ASSIGN_OR_RETURN(corrected, c.Call("divide", {corrected, at}));
  PLIR_ASSIGN_OR_RETURN(Expr rate, c.Call("where", {s.positive, corrected, r}));
  Outputs xs, vs, hs;
  for (int i = 0; i < n; ++i) {
    PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(2 + i));
    PLIR_ASSIGN_OR_RETURN(Expr g, c.Input(2 + n + i));
    PLIR_ASSIGN_OR_RETURN(Expr v, c.Input(2 + 2 * n + i));
    PLIR_ASSIGN_OR_RETURN(Expr h, c.Input(2 + 3 * n + i));
    PLIR_ASSIGN_OR_RETURN(g, Regularized(c, x, g, dt));
    PLIR_ASSIGN_OR_RETURN(Expr av, c.Call("multiply", {alpha, v}));
    PLIR_ASSIGN_OR_RETURN(Expr ag, c.Call("multiply", {one_a, g}));
    PLIR_ASSIGN_OR_RETURN(v, c.Call("add", {av, ag}));
    PLIR_ASSIGN_OR_RETURN(Expr gg, c.Call("multiply", {g, g}));
    PLIR_ASSIGN_OR_RETURN(Expr bh, c.Call("multiply", {beta, h}));
    PLIR_ASSIGN_OR_RETURN(Expr bgg, c.Call("multiply", {one_b, gg}));
    PLIR_ASSIGN_OR_RETURN(h, c.Call("add", {bh, bgg}));
    PLIR_ASSIGN_OR_RETURN(Expr d, c.Call("sqrt", {h}));
    PLIR_ASSIGN_OR_RETURN(d, c.Call("add", {d, eps}));
    PLIR_ASSIGN_OR_RETURN(Expr q, c.Call("divide", {v, d}));
    PLIR_ASSIGN_OR_RETURN(Expr step, c.Call("multiply", {rate, q}));
    PLIR_ASSIGN_OR_RETURN(x, c.Call("subtract", {x, step}));
    PLIR_ASSIGN_OR_RETURN(x, c.Call("multiply", {post, x}));
    xs.push_back(x);
    vs.push_back(v);
    hs.push_back(h);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

}  // namespace

void RegisterTrainingConverters(ConverterTable& t) {
  const std::vector<std::string> ops = {"add",   "subtract", "multiply", "divide", "sqrt",
                                        "power", "greater",  "where",    "astype"};
  t.Add(std::string(kDomain) + "Adagrad", 1, ops, Adagrad);
  t.Add(std::string(kDomain) + "Momentum", 1, ops, Momentum);
  t.Add(std::string(kDomain) + "Adam", 1, ops, Adam);
}

}  // namespace plir::onnx_import
