#include "bench/workloads.h"

#include <string>
#include <vector>

#include "ir/op.h"

namespace plir::bench {
namespace {

Expr Call(const char* op, std::vector<Expr> args, Attrs attrs = Attrs()) {
  auto r = MakeOpCall(op, std::move(args), std::move(attrs));
  if (!r.ok()) {
    std::fprintf(stderr, "workload: %s\n", r.status().message().c_str());
    std::abort();
  }
  return *r;
}

AttrValue Ints(std::vector<int64_t> v) {
  std::vector<AttrValue> l;
  for (int64_t x : v) l.push_back(AttrValue::Int(x));
  return AttrValue::List(std::move(l));
}

// Splits `bindings` into functions of at most `per_function` bindings,
// each built by `body(n)`.
template <typename F>
Module Split(size_t bindings, size_t per_function, F body) {
  std::vector<Item> items;
  size_t done = 0;
  for (size_t f = 0; done < bindings || f == 0; ++f) {
    size_t n = std::min(per_function, bindings - std::min(done, bindings));
    if (n == 0) n = 1;
    items.push_back(body(f, n));
    done += n;
  }
  return *Module::Make(std::move(items));
}

std::string Name(size_t f) { return f == 0 ? "main" : "f" + std::to_string(f); }

}  // namespace

Module ChainModel(size_t bindings, size_t per_function) {
  Type scalar = TensorTypeNode::Make({}, DataType::kFloat32);
  return Split(bindings, per_function, [&](size_t f, size_t n) -> Item {
    Var x = VarNode::Make("x", scalar);
    Var c = VarNode::Make("c", scalar);
    std::vector<Binding> b;
    b.reserve(n);
    std::vector<Var> live{x};
    for (size_t i = 0; i < n; ++i) {
      Var prev = live.back();
      Expr value;
      if (i % 7 == 6) {
        value = Call("multiply", {prev, c});  // dead: never used
        b.push_back(VarBindingNode::Make(VarNode::Make("dead", scalar), value));
        continue;
      }
      if (i % 5 == 4 && live.size() >= 2) {
        value = Call("add", {live[live.size() - 2], c});  // duplicate of an earlier add
      } else {
        value = Call(i % 3 == 0 ? "add" : i % 3 == 1 ? "multiply" : "subtract", {prev, c});
      }
      Var v = VarNode::Make("v", scalar);
      b.push_back(VarBindingNode::Make(v, value));
      live.push_back(v);
    }
    Var result = live.back();
    Attrs attrs;
    if (f == 0) attrs = attrs.With(Symbol("global_symbol"), AttrValue::String("main"));
    return FunctionNode::Make(
        Name(f), {x, c}, nullptr,
        SeqExprNode::Make({BindingBlockNode::Make(std::move(b), true)}, result), attrs);
  });
}

Module ResNetModel(size_t bindings) {
  auto t = [](int64_t c, int64_t h) {
    return TensorTypeNode::Make({Dim::Const(1), Dim::Const(c), Dim::Const(h), Dim::Const(h)},
                                DataType::kFloat32);
  };
  return Split(bindings, 10000, [&](size_t f, size_t n) -> Item {
    Var data = VarNode::Make("data", t(64, 56));
    Var w = VarNode::Make(
        "w", TensorTypeNode::Make({Dim::Const(64), Dim::Const(64), Dim::Const(3), Dim::Const(3)},
                                  DataType::kFloat32));
    Attrs conv = *Attrs::Make({{Symbol("padding"), Ints({1, 1, 1, 1})},
                               {Symbol("channels"), AttrValue::Int(64)},
                               {Symbol("kernel_size"), Ints({3, 3})}});
    std::vector<Binding> b;
    Expr cur = data;
    for (size_t i = 0; i < n; i += 3) {
      Var c1 = VarNode::Make("conv", t(64, 56), true);
      b.push_back(VarBindingNode::Make(c1, Call("nn.conv2d", {cur, w}, conv)));
      if (i + 1 >= n) {
        cur = c1;
        break;
      }
      Var r = VarNode::Make("relu", t(64, 56), true);
      b.push_back(VarBindingNode::Make(r, Call("nn.relu", {c1})));
      if (i + 2 >= n) {
        cur = r;
        break;
      }
      Var s = VarNode::Make("res", t(64, 56), true);
      b.push_back(VarBindingNode::Make(s, Call("add", {r, cur})));
      cur = s;
    }
    Var out = VarNode::Make("out", t(64, 56));
    b.push_back(VarBindingNode::Make(out, Call("nn.relu", {cur})));
    return FunctionNode::Make(Name(f), {data, w}, nullptr,
                              SeqExprNode::Make({BindingBlockNode::Make(std::move(b), true)}, out));
  });
}

Module TransformerModel(size_t bindings) {
  return Split(bindings, 10000, [&](size_t f, size_t n) -> Item {
    Type x_t = TensorTypeNode::Make({Dim::Sym(Symbol("seq")), Dim::Const(512)}, DataType::kFloat32);
    Type w_t = TensorTypeNode::Make({Dim::Const(512), Dim::Const(512)}, DataType::kFloat32);
    Var x = VarNode::Make("x", x_t);
    Var wq = VarNode::Make("wq", w_t), wk = VarNode::Make("wk", w_t), wo = VarNode::Make("wo", w_t);
    std::vector<Binding> b;
    Expr cur = x;
    auto emit = [&](const char* hint, Expr v) {
      Var var = VarNode::Make(hint, v->type(), true);
      b.push_back(VarBindingNode::Make(var, v));
      return var;
    };
    while (b.size() < n) {
      Var q = emit("q", Call("matmul", {cur, wq}));
      Var k = emit("k", Call("matmul", {cur, wk}));
      Var kt =
          emit("kt", Call("permute_dims", {k}, *Attrs::Make({{Symbol("axes"), Ints({1, 0})}})));
      Var s = emit("scores", Call("matmul", {q, kt}));
      Var p = emit("probs",
                   Call("nn.softmax", {s}, *Attrs::Make({{Symbol("axis"), AttrValue::Int(-1)}})));
      Var a = emit("attn", Call("matmul", {p, cur}));
      Var o = emit("proj", Call("matmul", {a, wo}));
      Var r = emit("resid", Call("add", {o, cur}));
      Var h =
          emit("heads", Call("reshape", {r}, *Attrs::Make({{Symbol("shape"), Ints({-1, 8, 64})}})));
      cur =
          emit("merged", Call("reshape", {h}, *Attrs::Make({{Symbol("shape"), Ints({-1, 512})}})));
    }
    Var out = VarNode::Make("out", cur->type());
    b.push_back(VarBindingNode::Make(out, Call("nn.relu", {cur})));
    return FunctionNode::Make(Name(f), {x, wq, wk, wo}, nullptr,
                              SeqExprNode::Make({BindingBlockNode::Make(std::move(b), true)}, out));
  });
}

}  // namespace plir::bench
