#include "testing/random_module.h"

#include <random>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/visitor.h"

namespace plir::testing {
namespace {

Type TA() {
  return TensorTypeNode::Make({Dim::Sym(Symbol("n")), Dim::Const(4)}, DataType::kFloat32);
}
Type TW() { return TensorTypeNode::Make({Dim::Const(4), Dim::Const(4)}, DataType::kFloat32); }
Type TI() {
  return TensorTypeNode::Make({Dim::Const(1), Dim::Const(2), Dim::Const(6), Dim::Const(6)},
                              DataType::kFloat32);
}
Type TK() {
  return TensorTypeNode::Make({Dim::Const(2), Dim::Const(2), Dim::Const(3), Dim::Const(3)},
                              DataType::kFloat32);
}
Type TB() { return TensorTypeNode::Make({}, DataType::kBool); }

Expr Must(StatusOr<Expr> e) {
  if (!e.ok()) {
    std::fprintf(stderr, "random_module: %s\n", e.status().message().c_str());
    std::abort();
  }
  return *e;
}

Attrs A(std::vector<Attrs::Entry> e) { return *Attrs::Make(std::move(e)); }
AttrValue IntList(std::vector<int64_t> v) {
  std::vector<AttrValue> l;
  for (int64_t x : v) l.push_back(AttrValue::Int(x));
  return AttrValue::List(std::move(l));
}

class Generator {
 public:
  explicit Generator(const RandomModuleOptions& o) : opts_(o), rng_(o.seed) {}

  Module Run() {
    std::vector<Item> items;
    ext_ = ExternFuncNode::Make("ext_kernel", {VarNode::Make("p", TA())}, TA());
    items.push_back(ext_);
    {
      Var p = VarNode::Make("p", TA());
      Expr body = Must(MakeOpCall("nn.relu", {p}));
      helper_ = FunctionNode::Make("helper", {p}, TA(), SeqExprNode::Make({}, body));
      items.push_back(helper_);
    }
    size_t fn = 0;
    while (emitted_ < opts_.num_bindings || fn == 0) {
      size_t budget = std::min(opts_.bindings_per_function,
                               opts_.num_bindings - std::min(emitted_, opts_.num_bindings));
      if (budget == 0) budget = 1;
      items.push_back(MakeFunction(fn == 0 ? "main" : "main_" + std::to_string(fn), budget));
      ++fn;
    }
    return *Module::Make(std::move(items));
  }

 private:
  struct Pools {
    std::vector<Expr> a, w, i, obj, tup, flag, fn;
  };
  // Pool sizes: values are only appended within a scope, so a scope is
  // closed by truncating back to the sizes at its start (no copies).
  struct Mark {
    size_t a, w, i, obj, tup, fn;
  };
  Mark Save() const {
    return {pools_.a.size(),   pools_.w.size(),   pools_.i.size(),
            pools_.obj.size(), pools_.tup.size(), pools_.fn.size()};
  }
  void Restore(const Mark& m) {
    pools_.a.resize(m.a);
    pools_.w.resize(m.w);
    pools_.i.resize(m.i);
    pools_.obj.resize(m.obj);
    pools_.tup.resize(m.tup);
    pools_.fn.resize(m.fn);
  }

  size_t Rand(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool Coin(int percent) { return Rand(100) < static_cast<size_t>(percent); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Rand(v.size())];
  }

  std::string Hint() {
    static const char* kHints[] = {"lv", "lv1", "x", "gv", "", "a", "lv1_1", "t"};
    return kHints[Rand(8)];
  }

  Function MakeFunction(const std::string& name, size_t budget) {
    Var x = VarNode::Make("x", TA());
    Var w = VarNode::Make("w", TW());
    Var img = VarNode::Make("img", TI());
    Var k = VarNode::Make("k", TK());
    Var flag = VarNode::Make("flag", TB());
    pools_ = Pools();
    pools_.a = {x};
    pools_.w = {w};
    pools_.i = {img};
    pools_.flag = {flag};
    k_ = k;
    std::vector<Block> blocks;
    size_t start = emitted_;
    while (emitted_ - start < budget) {
      size_t n = 1 + Rand(std::min<size_t>(20, budget - (emitted_ - start)));
      blocks.push_back(MakeBlock(n, Coin(50), opts_.max_if_depth));
    }
    Expr result = pools_.a.back();
    Attrs attrs;
    if (Coin(50)) attrs = A({{Symbol("num_input"), AttrValue::Int(1)}});
    if (name == "main") attrs = attrs.With(Symbol("global_symbol"), AttrValue::String("main"));
    return FunctionNode::Make(name, {x, w, img, k, flag}, nullptr,
                              SeqExprNode::Make(std::move(blocks), result), attrs);
  }

  Block MakeBlock(size_t n, bool dataflow, int if_depth) {
    Mark saved = Save();
    std::vector<Binding> bindings;
    std::vector<std::pair<Var, int>> added;  // var and its pool category
    for (size_t j = 0; j < n; ++j) {
      int cat = 0;
      Expr value = MakeValue(&cat, if_depth, dataflow);
      bool output = !dataflow || j + 1 == n || Coin(30);
      Var v = VarNode::Make(Hint(), value->type(), dataflow && !output);
      bindings.push_back(VarBindingNode::Make(v, value));
      ++emitted_;
      AddToPool(v, cat);
      added.emplace_back(v, cat);
    }
    if (dataflow) {
      // Dataflow variables go out of scope; outputs stay.
      Restore(saved);
      for (auto& [v, cat] : added)
        if (!v->is_dataflow()) AddToPool(v, cat);
    }
    return BindingBlockNode::Make(std::move(bindings), dataflow);
  }

  void AddToPool(const Expr& v, int cat) {
    switch (cat) {
      case 0:
        pools_.a.push_back(v);
        break;
      case 1:
        pools_.w.push_back(v);
        break;
      case 2:
        pools_.i.push_back(v);
        break;
      case 3:
        pools_.obj.push_back(v);
        break;
      case 4:
        pools_.tup.push_back(v);
        break;
      case 6:
        pools_.fn.push_back(v);
        break;
      default:
        break;  // not reused
    }
  }

  Expr ConstOf(DataType dt, std::vector<Dim> shape, size_t n) {
    std::string bytes(n * DataTypeSize(dt), '\0');
    for (size_t b = 0; b < bytes.size(); ++b) bytes[b] = static_cast<char>(Rand(256));
    if (dt == DataType::kBool)
      for (char& c : bytes) c &= 1;
    if (IsFloat(dt)) {
      // Finite values only in the inline form; keep the exponent bits sane.
      int sz = DataTypeSize(dt);
      for (size_t e = 0; e < n; ++e) {
        char* p = &bytes[e * sz + sz - 1];
        *p = static_cast<char>(*p & 0x3f);  // clears sign and top exponent bit
      }
    }
    auto c = ConstantNode::Make(TensorTypeNode::Make(std::move(shape), dt),
                                std::make_shared<const TensorBytes>(std::move(bytes)));
    return *c;
  }

  Expr VecConst() { return ConstOf(DataType::kFloat32, {Dim::Const(4)}, 4); }

  SeqExpr MakeBranch(int if_depth) {
    Mark saved = Save();
    std::vector<Block> blocks;
    size_t n = Rand(3);
    if (n) blocks.push_back(MakeBlock(n, false, if_depth - 1));
    Expr result = pools_.a.back();
    Restore(saved);
    return SeqExprNode::Make(std::move(blocks), result);
  }

  // A local function of one TA parameter whose body uses it and the values
  // in scope (a closure), or a call of one already bound.
  Expr MakeLocalFunctionValue(int* cat, int if_depth) {
    if (!pools_.fn.empty() && Coin(60)) {
      Expr call = Must(MakeValueCall(Pick(pools_.fn), {Pick(pools_.a)}));
      *cat = TypeEqual(call->type(), TA()) ? 0 : 5;
      return call;
    }
    Mark saved = Save();
    Var p = VarNode::Make(Coin(50) ? "p" : "x", TA());
    pools_.a.push_back(p);
    std::vector<Block> blocks;
    size_t n = 1 + Rand(4);
    blocks.push_back(MakeBlock(n, Coin(40), if_depth > 0 ? if_depth - 1 : 0));
    Expr result = pools_.a.back();
    Restore(saved);
    *cat = 6;
    return LocalFnNode::Make({p}, Coin(50) ? TA() : Type(),
                             SeqExprNode::Make(std::move(blocks), result));
  }

  // Makes a value and sets *cat to its pool category.
  Expr MakeValue(int* cat, int if_depth, bool /*in_dataflow*/) {
    if (opts_.local_functions && if_depth > 0 && Coin(8))
      return MakeLocalFunctionValue(cat, if_depth);
    size_t choice = Rand(24);
    *cat = 0;
    auto a = [&]() { return Pick(pools_.a); };
    switch (choice) {
      case 0:
        return Must(MakeOpCall("add", {a(), a()}));
      case 1:
        return Must(MakeOpCall("multiply", {a(), a()}));
      case 2:
        return Must(MakeOpCall("subtract", {a(), a()}));
      case 3:
        return Must(MakeOpCall("nn.relu", {a()}));
      case 4:
        return Must(MakeOpCall("nn.softmax", {a()},
                               A({{Symbol("axis"), AttrValue::Int(Coin(50) ? 1 : -1)}})));
      case 5:
        return Must(MakeOpCall("matmul", {a(), Pick(pools_.w)}));
      case 6:
        return Must(MakeOpCall("add", {a(), VecConst()}));
      case 7:
        return Must(MakeOpCall("call_tir",
                               {GlobalVarNode::Make("ext_kernel"), TupleNode::Make({a()})}, Attrs(),
                               {TA()}));
      case 8:
        return MakeGlobalCall(GlobalVarNode::Make("helper"), {a()}, TA());
      case 9: {  // nested call, not in normal form
        Expr inner = Must(MakeOpCall("multiply", {a(), a()}));
        return Must(MakeOpCall("add", {inner, a()}));
      }
      case 10:
        if (!pools_.tup.empty()) return Must(TupleGetItemNode::Make(Pick(pools_.tup), 0));
        return Must(MakeOpCall("divide", {a(), a()}));
      case 11:
        if (if_depth > 0) {
          return Must(IfNode::Make(Pick(pools_.flag), MakeBranch(if_depth), MakeBranch(if_depth)));
        }
        return Must(MakeOpCall("nn.relu", {a()}));
      case 12:
        *cat = 1;
        return Must(
            MakeOpCall("permute_dims", {Pick(pools_.w)}, A({{Symbol("axes"), IntList({1, 0})}})));
      case 13: {
        *cat = 1;
        Expr r =
            Must(MakeOpCall("reshape", {Pick(pools_.w)}, A({{Symbol("shape"), IntList({2, 8})}})));
        return Must(MakeOpCall("reshape", {r}, A({{Symbol("shape"), IntList({4, -1})}})));
      }
      case 14:
        *cat = 1;
        if (!pools_.tup.empty()) return Must(TupleGetItemNode::Make(Pick(pools_.tup), 1));
        return ConstOf(DataType::kFloat32, {Dim::Const(4), Dim::Const(4)}, 16);
      case 15: {
        *cat = 2;
        Expr k = Coin(50)
                     ? Expr(k_)
                     : ConstOf(DataType::kFloat32,
                               {Dim::Const(2), Dim::Const(2), Dim::Const(3), Dim::Const(3)}, 36);
        return Must(MakeOpCall("nn.conv2d", {Pick(pools_.i), k},
                               A({{Symbol("padding"), IntList({1, 1, 1, 1})},
                                  {Symbol("channels"), AttrValue::Int(2)},
                                  {Symbol("kernel_size"), IntList({3, 3})}})));
      }
      case 16:
        *cat = 2;
        return Must(MakeOpCall("nn.relu", {Pick(pools_.i)}));
      case 17:
        *cat = 3;
        return Must(MakeOpCall("call_packed",
                               {StringImmNode::Make(Coin(50) ? "rt.func" : "say \"hi\"\n\t\\"), a(),
                                PrimValueNode::Int(static_cast<int64_t>(Rand(1000)) - 500),
                                PrimValueNode::Float(static_cast<double>(Rand(1000)) / 7.0),
                                PrimValueNode::Bool(Coin(50))},
                               Attrs(), {ObjectTypeNode::Get()}));
      case 18:
        *cat = 5;
        if (!pools_.obj.empty()) return Must(MakeOpCall("vm.kill_object", {Pick(pools_.obj)}));
        return PrimValueNode::Int(static_cast<int64_t>(Rand(100000)));
      case 19:
        *cat = 4;
        return TupleNode::Make({a(), Pick(pools_.w)});
      case 20: {
        *cat = 5;
        static const DataType kTypes[] = {
            DataType::kInt8,    DataType::kUInt16,  DataType::kInt32,
            DataType::kInt64,   DataType::kFloat16, DataType::kBFloat16,
            DataType::kFloat64, DataType::kBool,    DataType::kUInt64};
        DataType dt = kTypes[Rand(9)];
        size_t n = Coin(20) ? 100 : 1 + Rand(6);  // 100 elements print as hex
        return ConstOf(dt, {Dim::Const(static_cast<int64_t>(n))}, n);
      }
      case 21:
        *cat = 5;
        return Coin(50) ? Expr(PrimValueNode::Float(-2e-3 * static_cast<double>(Rand(100))))
                        : Expr(StringImmNode::Make("s" + std::to_string(Rand(10))));
      case 22:
        *cat = 5;
        return TupleNode::Make(Coin(50) ? std::vector<Expr>{} : std::vector<Expr>{a()});
      default:
        *cat = 5;
        return ConstOf(DataType::kFloat32, {}, 1);  // scalar tensor
    }
  }

  RandomModuleOptions opts_;
  std::mt19937_64 rng_;
  size_t emitted_ = 0;
  Pools pools_;
  Var k_;
  ExternFunc ext_;
  Function helper_;
};

// Changes the k-th eligible node of the module.
class SingleChange : public ExprMutator {
 public:
  explicit SingleChange(size_t target) : target_(target) {}
  size_t seen() const { return seen_; }

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    if (auto* c = As<CallNode>(n)) {
      auto* op = As<OpNode>(c->callee());
      if (op && (op->name() == "add" || op->name() == "multiply") && seen_++ == target_) {
        return Must(MakeOpCall(op->name() == "add" ? "multiply" : "add", c->args()));
      }
      if (op && op->name() == "nn.softmax" && seen_++ == target_) {
        int64_t axis = c->attrs().Get("axis")->as_int();
        return Must(MakeOpCall("nn.softmax", c->args(),
                               A({{Symbol("axis"), AttrValue::Int(axis == 1 ? -1 : 1)}})));
      }
    }
    if (auto* p = As<PrimValueNode>(n)) {
      if (p->dtype() == DataType::kInt64 && seen_++ == target_)
        return PrimValueNode::Int(p->int_value() + 1);
    }
    if (auto* c = As<ConstantNode>(n)) {
      if (!c->data().empty() && seen_++ == target_) {
        std::string bytes(c->data().view());
        bytes[0] = static_cast<char>(bytes[0] ^ 1);
        return *ConstantNode::Make(c->type(),
                                   std::make_shared<const TensorBytes>(std::move(bytes)));
      }
    }
    return n;
  }

 private:
  size_t target_;
  size_t seen_ = 0;
};

}  // namespace

Module GenerateRandomModule(const RandomModuleOptions& options) { return Generator(options).Run(); }

Module ApplySingleChange(const Module& m, uint64_t seed) {
  SingleChange count(static_cast<size_t>(-1));
  count.MutateModule(m);
  if (count.seen() == 0) return m;
  SingleChange change(seed % count.seen());
  return change.MutateModule(m);
}

}  // namespace plir::testing
