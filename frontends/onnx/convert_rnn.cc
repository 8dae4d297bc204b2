// Recurrent ONNX ops: RNN, GRU, LSTM, unrolled over the (static) sequence
// length into matmuls and elementwise ops, one chain per direction
// (forward, reverse, or both for bidirectional).
//
// Each gate g of direction d uses W[d, g*H:(g+1)*H, :] and R[d, g*H:(g+1)*H,
// :] (transposed) and the biases Wb[d, g*H:..], Rb[d, g*H:..] of
// B = [Wb, Rb]; the input projections X * W_g^T + Wb_g are computed for
// every step at once. Gate orders are ONNX's: GRU z, r, h; LSTM i, o, f, c.
// Outputs: Y [seq, num_directions, batch, H] (layout 1: [batch, seq,
// num_directions, H]), Y_h (and LSTM's Y_c) [num_directions, batch, H]
// (layout 1: [batch, num_directions, H]).
#include <string>
#include <vector>

#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

enum class Cell { kRnn, kGru, kLstm };

Attrs ShapeOf(const std::vector<int64_t>& s) { return MakeAttrs({{Symbol("shape"), IntList(s)}}); }
Attrs Axes(const std::vector<int64_t>& a) { return MakeAttrs({{Symbol("axes"), IntList(a)}}); }
Attrs Axis(int64_t a) { return MakeAttrs({{Symbol("axis"), AttrValue::Int(a)}}); }

StatusOr<Expr> SliceAxis(ConvertContext& c, Expr x, int64_t axis, int64_t begin, int64_t end) {
  return c.Call("strided_slice",
                {x, ConvertContext::IntTuple({axis}), ConvertContext::IntTuple({begin}),
                 ConvertContext::IntTuple({end}), ConvertContext::IntTuple({1})});
}

// One activation by its ONNX name (the ones PLIR has an op for).
StatusOr<Expr> Activate(ConvertContext& c, const std::string& name, Expr x) {
  if (name == "Sigmoid") return c.Call("sigmoid", {x});
  if (name == "Tanh") return c.Call("tanh", {x});
  if (name == "Relu") return c.Call("nn.relu", {x});
  return Unimplemented("activation " + name + " (Sigmoid, Tanh and Relu are supported)");
}

struct Dir {
  std::vector<Expr> xw;  // per gate: X * W_g^T + Wb_g, [seq, batch, H]
  std::vector<Expr> rt;  // per gate: R_g^T, [H, H]
  std::vector<Expr> rb;  // per gate: Rb_g, [H] (null without B)
  Expr p[3];             // LSTM peepholes i, o, f, [H] (null without P)
  Expr h0, c0;           // [batch, H]
  std::vector<std::string> acts;
};

StatusOr<Outputs> Recurrent(ConvertContext& c, Cell cell) {
  const int gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr w, c.Input(1));
  PLIR_ASSIGN_OR_RETURN(Expr r, c.Input(2));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> xs, c.InputShape(0));
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> ws, c.InputShape(1));
  DataType dt = c.InputDtype(0);
  if (!IsFloat(dt)) return c.Error("X must be floating point");
  if (xs.size() != 3) return c.Error("X must be 3-D");
  if (ws.size() != 3) return c.Error("W must be 3-D");
  int64_t layout = c.AttrInt("layout", 0);
  if (layout != 0 && layout != 1) return c.Error("layout must be 0 or 1");
  if (layout == 1) {
    PLIR_ASSIGN_OR_RETURN(x, c.Call("permute_dims", {x}, Axes({1, 0, 2})));
    std::swap(xs[0], xs[1]);
  }
  int64_t seq = xs[0], batch = xs[1], in = xs[2];
  std::string direction = c.AttrString("direction", "forward");
  int64_t nd = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return c.Error("direction must be forward, reverse or bidirectional, got '" + direction + "'");
  int64_t hidden = c.AttrInt("hidden_size", ws[1] / gates);
  if (hidden <= 0 || ws[0] != nd || ws[1] != gates * hidden || ws[2] != in)
    return c.Error("W must be [" + std::to_string(nd) + ", " + std::to_string(gates * hidden) +
                   ", " + std::to_string(in) + "]");
  if (seq <= 0) return c.Error("the sequence must not be empty");
  if (seq * nd > 4096) return Unimplemented("sequences longer than 4096 steps (unrolled here)");
  if (c.HasInput(4)) {
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> lens, c.RequireInts(4, "sequence_lens"));
    for (int64_t l : lens)
      if (l != seq)
        return Unimplemented("sequence_lens other than the full length " + std::to_string(seq));
  }
  if (cell == Cell::kLstm && c.AttrInt("input_forget", 0) != 0)
    return Unimplemented("LSTM with input_forget = 1");
  if (c.HasAttr("activation_alpha") || c.HasAttr("activation_beta"))
    return Unimplemented("activation_alpha / activation_beta");
  bool lbr = cell == Cell::kGru && c.AttrInt("linear_before_reset", 0) != 0;
  std::optional<Expr> lo, hi;
  if (c.HasAttr("clip")) {
    float clip = c.AttrFloat("clip", 0);
    if (!(clip > 0)) return c.Error("clip must be positive");
    PLIR_ASSIGN_OR_RETURN(Expr l, c.Scalar(-clip, dt));
    PLIR_ASSIGN_OR_RETURN(Expr h, c.Scalar(clip, dt));
    lo = l;
    hi = h;
  }
  auto clipped = [&](Expr v) -> StatusOr<Expr> {
    if (!lo) return v;
    PLIR_ASSIGN_OR_RETURN(v, c.Call("maximum", {v, *lo}));
    return c.Call("minimum", {v, *hi});
  };

  // Activations: per direction, f (and g, h); ONNX's defaults.
  std::vector<std::string> defaults = cell == Cell::kRnn ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::kGru
                                          ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<std::string> acts;
  if (const onnx::AttributeProto* a = c.Attr("activations"))
    for (const auto& s : a->strings()) acts.push_back(s);
  size_t per = defaults.size();
  if (acts.empty())
    for (int64_t d = 0; d < nd; ++d) acts.insert(acts.end(), defaults.begin(), defaults.end());
  if (acts.size() != per * nd)
    return c.Error("activations needs " + std::to_string(per * nd) + " names");

  std::vector<Dir> dirs(nd);
  for (int64_t d = 0; d < nd; ++d) {
    Dir& D = dirs[d];
    D.acts.assign(acts.begin() + d * per, acts.begin() + (d + 1) * per);
    PLIR_ASSIGN_OR_RETURN(Expr wd, SliceAxis(c, w, 0, d, d + 1));
    PLIR_ASSIGN_OR_RETURN(Expr rd, SliceAxis(c, r, 0, d, d + 1));
    std::optional<Expr> bd;
    if (c.HasInput(3)) {
      PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(3));
      PLIR_ASSIGN_OR_RETURN(Expr s, SliceAxis(c, b, 0, d, d + 1));
      PLIR_ASSIGN_OR_RETURN(s, c.Call("reshape", {s}, ShapeOf({2 * gates * hidden})));
      bd = s;
    }
    for (int g = 0; g < gates; ++g) {
      PLIR_ASSIGN_OR_RETURN(Expr wg, SliceAxis(c, wd, 1, g * hidden, (g + 1) * hidden));
      PLIR_ASSIGN_OR_RETURN(wg, c.Call("reshape", {wg}, ShapeOf({hidden, in})));
      PLIR_ASSIGN_OR_RETURN(wg, c.Call("permute_dims", {wg}, Axes({1, 0})));
      PLIR_ASSIGN_OR_RETURN(Expr xw, c.Call("matmul", {x, wg}));
      PLIR_ASSIGN_OR_RETURN(Expr rg, SliceAxis(c, rd, 1, g * hidden, (g + 1) * hidden));
      PLIR_ASSIGN_OR_RETURN(rg, c.Call("reshape", {rg}, ShapeOf({hidden, hidden})));
      PLIR_ASSIGN_OR_RETURN(rg, c.Call("permute_dims", {rg}, Axes({1, 0})));
      Expr rb;
      if (bd) {
        PLIR_ASSIGN_OR_RETURN(Expr wb, SliceAxis(c, *bd, 0, g * hidden, (g + 1) * hidden));
        PLIR_ASSIGN_OR_RETURN(xw, c.Call("add", {xw, wb}));
        PLIR_ASSIGN_OR_RETURN(rb,
                              SliceAxis(c, *bd, 0, (gates + g) * hidden, (gates + g + 1) * hidden));
      }
      D.xw.push_back(xw);
      D.rt.push_back(rg);
      D.rb.push_back(rb);
    }
    auto initial = [&](int input) -> StatusOr<Expr> {
      if (!c.HasInput(input))
        return c.Const(MakeTensor(dt, {batch, hidden}, [](int64_t) { return 0.0; }));
      PLIR_ASSIGN_OR_RETURN(Expr v, c.Input(input));
      if (layout == 1) {
        PLIR_ASSIGN_OR_RETURN(v, c.Call("permute_dims", {v}, Axes({1, 0, 2})));
      }
      PLIR_ASSIGN_OR_RETURN(v, SliceAxis(c, v, 0, d, d + 1));
      return c.Call("reshape", {v}, ShapeOf({batch, hidden}));
    };
    PLIR_ASSIGN_OR_RETURN(D.h0, initial(5));
    if (cell == Cell::kLstm) {
      PLIR_ASSIGN_OR_RETURN(D.c0, initial(6));
      if (c.HasInput(7)) {
        PLIR_ASSIGN_OR_RETURN(Expr p, c.Input(7));
        PLIR_ASSIGN_OR_RETURN(Expr pd, SliceAxis(c, p, 0, d, d + 1));
        PLIR_ASSIGN_OR_RETURN(pd, c.Call("reshape", {pd}, ShapeOf({3 * hidden})));
        for (int k = 0; k < 3; ++k) {
          PLIR_ASSIGN_OR_RETURN(D.p[k], SliceAxis(c, pd, 0, k * hidden, (k + 1) * hidden));
        }
      }
    }
  }

  PLIR_ASSIGN_OR_RETURN(Expr one, c.Scalar(1.0, dt));
  std::vector<Expr> y_dirs, h_last, c_last;
  for (int64_t d = 0; d < nd; ++d) {
    Dir& D = dirs[d];
    bool reverse = direction == "reverse" || d == 1;
    std::vector<Expr> ys(seq);
    Expr h = D.h0, cs = D.c0;
    // x_g + h * R_g^T (+ Rb_g) at step t, before the activation.
    auto pre = [&](int g, int64_t t, Expr hv, bool with_x = true) -> StatusOr<Expr> {
      PLIR_ASSIGN_OR_RETURN(Expr v, c.Call("matmul", {hv, D.rt[g]}));
      if (D.rb[g]) {
        PLIR_ASSIGN_OR_RETURN(v, c.Call("add", {v, D.rb[g]}));
      }
      if (!with_x) return v;
      PLIR_ASSIGN_OR_RETURN(Expr xt, SliceAxis(c, D.xw[g], 0, t, t + 1));
      PLIR_ASSIGN_OR_RETURN(xt, c.Call("reshape", {xt}, ShapeOf({batch, hidden})));
      return c.Call("add", {xt, v});
    };
    for (int64_t k = 0; k < seq; ++k) {
      int64_t t = reverse ? seq - 1 - k : k;
      if (cell == Cell::kRnn) {
        PLIR_ASSIGN_OR_RETURN(Expr a, pre(0, t, h));
        PLIR_ASSIGN_OR_RETURN(a, clipped(a));
        PLIR_ASSIGN_OR_RETURN(h, Activate(c, D.acts[0], a));
      } else if (cell == Cell::kGru) {
        PLIR_ASSIGN_OR_RETURN(Expr z, pre(0, t, h));
        PLIR_ASSIGN_OR_RETURN(z, clipped(z));
        PLIR_ASSIGN_OR_RETURN(z, Activate(c, D.acts[0], z));
        PLIR_ASSIGN_OR_RETURN(Expr rr, pre(1, t, h));
        PLIR_ASSIGN_OR_RETURN(rr, clipped(rr));
        PLIR_ASSIGN_OR_RETURN(rr, Activate(c, D.acts[0], rr));
        PLIR_ASSIGN_OR_RETURN(Expr xt, SliceAxis(c, D.xw[2], 0, t, t + 1));
        PLIR_ASSIGN_OR_RETURN(xt, c.Call("reshape", {xt}, ShapeOf({batch, hidden})));
        Expr hr;
        if (lbr) {  // r * (h * Rh^T + Rbh)
          PLIR_ASSIGN_OR_RETURN(Expr v, pre(2, t, h, false));
          PLIR_ASSIGN_OR_RETURN(hr, c.Call("multiply", {rr, v}));
        } else {  // (r * h) * Rh^T + Rbh
          PLIR_ASSIGN_OR_RETURN(Expr rh, c.Call("multiply", {rr, h}));
          PLIR_ASSIGN_OR_RETURN(hr, pre(2, t, rh, false));
        }
        PLIR_ASSIGN_OR_RETURN(Expr n, c.Call("add", {xt, hr}));
        PLIR_ASSIGN_OR_RETURN(n, clipped(n));
        PLIR_ASSIGN_OR_RETURN(n, Activate(c, D.acts[1], n));
        // h = (1 - z) * n + z * h
        PLIR_ASSIGN_OR_RETURN(Expr omz, c.Call("subtract", {one, z}));
        PLIR_ASSIGN_OR_RETURN(Expr a, c.Call("multiply", {omz, n}));
        PLIR_ASSIGN_OR_RETURN(Expr b, c.Call("multiply", {z, h}));
        PLIR_ASSIGN_OR_RETURN(h, c.Call("add", {a, b}));
      } else {
        auto peep = [&](Expr v, int k2, Expr cv) -> StatusOr<Expr> {
          if (!D.p[k2]) return v;
          PLIR_ASSIGN_OR_RETURN(Expr pc, c.Call("multiply", {D.p[k2], cv}));
          return c.Call("add", {v, pc});
        };
        PLIR_ASSIGN_OR_RETURN(Expr i, pre(0, t, h));
        PLIR_ASSIGN_OR_RETURN(i, peep(i, 0, cs));
        PLIR_ASSIGN_OR_RETURN(i, clipped(i));
        PLIR_ASSIGN_OR_RETURN(i, Activate(c, D.acts[0], i));
        PLIR_ASSIGN_OR_RETURN(Expr f, pre(2, t, h));
        PLIR_ASSIGN_OR_RETURN(f, peep(f, 2, cs));
        PLIR_ASSIGN_OR_RETURN(f, clipped(f));
        PLIR_ASSIGN_OR_RETURN(f, Activate(c, D.acts[0], f));
        PLIR_ASSIGN_OR_RETURN(Expr g, pre(3, t, h));
        PLIR_ASSIGN_OR_RETURN(g, clipped(g));
        PLIR_ASSIGN_OR_RETURN(g, Activate(c, D.acts[1], g));
        PLIR_ASSIGN_OR_RETURN(Expr fc, c.Call("multiply", {f, cs}));
        PLIR_ASSIGN_OR_RETURN(Expr ig, c.Call("multiply", {i, g}));
        PLIR_ASSIGN_OR_RETURN(cs, c.Call("add", {fc, ig}));
        PLIR_ASSIGN_OR_RETURN(Expr o, pre(1, t, h));
        PLIR_ASSIGN_OR_RETURN(o, peep(o, 1, cs));
        PLIR_ASSIGN_OR_RETURN(o, clipped(o));
        PLIR_ASSIGN_OR_RETURN(o, Activate(c, D.acts[0], o));
        PLIR_ASSIGN_OR_RETURN(Expr hc, Activate(c, D.acts[2], cs));
        PLIR_ASSIGN_OR_RETURN(h, c.Call("multiply", {o, hc}));
      }
      PLIR_ASSIGN_OR_RETURN(ys[t], c.Call("reshape", {h}, ShapeOf({1, 1, batch, hidden})));
    }
    PLIR_ASSIGN_OR_RETURN(Expr yd, seq == 1 ? StatusOr<Expr>(ys[0])
                                            : c.Call("concat", {TupleNode::Make(ys)}, Axis(0)));
    y_dirs.push_back(yd);
    PLIR_ASSIGN_OR_RETURN(Expr hl, c.Call("reshape", {h}, ShapeOf({1, batch, hidden})));
    h_last.push_back(hl);
    if (cell == Cell::kLstm) {
      PLIR_ASSIGN_OR_RETURN(Expr cl, c.Call("reshape", {cs}, ShapeOf({1, batch, hidden})));
      c_last.push_back(cl);
    }
  }
  auto join = [&](const std::vector<Expr>& parts, int64_t axis) -> StatusOr<Expr> {
    if (parts.size() == 1) return parts[0];
    return c.Call("concat", {TupleNode::Make(parts)}, Axis(axis));
  };
  PLIR_ASSIGN_OR_RETURN(Expr y, join(y_dirs, 1));
  PLIR_ASSIGN_OR_RETURN(Expr yh, join(h_last, 0));
  Expr yc;
  if (cell == Cell::kLstm) {
    PLIR_ASSIGN_OR_RETURN(yc, join(c_last, 0));
  }
  if (layout == 1) {
    PLIR_ASSIGN_OR_RETURN(y, c.Call("permute_dims", {y}, Axes({2, 0, 1, 3})));
    PLIR_ASSIGN_OR_RETURN(yh, c.Call("permute_dims", {yh}, Axes({1, 0, 2})));
    if (yc) {
      PLIR_ASSIGN_OR_RETURN(yc, c.Call("permute_dims", {yc}, Axes({1, 0, 2})));
    }
  }
  Outputs outs = {y, yh};
  if (cell == Cell::kLstm) outs.push_back(yc);
  return outs;
}

}  // namespace

void RegisterRnnConverters(ConverterTable& t) {
  const std::vector<std::string> ops = {"strided_slice", "reshape",  "permute_dims", "matmul",
                                        "add",           "multiply", "subtract",     "concat",
                                        "sigmoid",       "tanh",     "maximum",      "minimum"};
  t.Add("RNN", 7, ops, [](ConvertContext& c) { return Recurrent(c, Cell::kRnn); });
  t.Add("GRU", 7, ops, [](ConvertContext& c) { return Recurrent(c, Cell::kGru); });
  t.Add("LSTM", 7, ops, [](ConvertContext& c) { return Recurrent(c, Cell::kLstm); });
}

}  // namespace plir::onnx_import
