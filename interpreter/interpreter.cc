#include "interpreter/interpreter.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/analysis/free_vars.h"
#include "ir/op.h"
#include "ir/visitor.h"
#include "kernels/internal/uninitialized.h"

namespace plir {
namespace {

// Nesting beyond this is refused (normalize the module first); it keeps the
// evaluator's recursion bounded.
constexpr int kMaxDepth = 2000;

Tensor Untracked(const Tensor& t) {
  Tensor u = t;
  u.data = CopyTensorBytes(t.data->view());
  return u;
}

}  // namespace

ValueRef Value::OfTensor(Tensor t) {
  auto v = std::make_shared<Value>();
  v->kind = Kind::kTensor;
  v->tensor = std::move(t);
  return v;
}

ValueRef Value::OfTuple(std::vector<ValueRef> fields) {
  auto v = std::make_shared<Value>();
  v->kind = Kind::kTuple;
  v->fields = std::move(fields);
  return v;
}

ValueRef Value::Opaque() { return std::make_shared<Value>(); }

ValueRef Value::OfHostFunction(HostFn fn) {
  auto v = std::make_shared<Value>();
  v->kind = Kind::kFunction;
  v->host = std::move(fn);
  return v;
}

struct MemoryTracker::State {
  // Buffers under this size are not kept (malloc serves them from its
  // arenas without faults).
  static constexpr size_t kMinKept = 16 << 10;

  std::atomic<size_t> live{0};
  std::atomic<size_t> peak{0};
  std::mutex mu;

  // Counts `n` more live bytes, raising the peak; returns the live bytes.
  size_t AddLive(size_t n) {
    size_t now = live += n;
    size_t p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    return now;
  }
  // Kept buffers, oldest first; a few dozen at most, so a scan is cheap
  // next to the allocation it saves.
  std::vector<std::unique_ptr<WritableTensorBytes>> free;  // guarded by mu
  size_t kept = 0;                                         // guarded by mu

  void Release(WritableTensorBytes* s) {
    size_t n = s->size();
    size_t now = live -= n;
    if (n < kMinKept || n > peak.load()) {
      delete s;
      return;
    }
    std::vector<std::unique_ptr<WritableTensorBytes>> evicted;  // freed outside the lock
    std::lock_guard<std::mutex> lock(mu);
    free.emplace_back(s);
    kept += n;
    Trim(now, &evicted);
  }
  // Evicts the least recently freed buffers until live + kept fits the peak.
  void Trim(size_t now, std::vector<std::unique_ptr<WritableTensorBytes>>* evicted) {
    size_t drop = 0;
    while (now + kept > peak.load() && drop < free.size()) {
      kept -= free[drop]->size();
      evicted->push_back(std::move(free[drop]));
      ++drop;
    }
    free.erase(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  // A kept buffer of `n` bytes, or null; `now` is live with it counted.
  std::unique_ptr<WritableTensorBytes> Reuse(size_t n, size_t now) {
    std::vector<std::unique_ptr<WritableTensorBytes>> evicted;
    std::lock_guard<std::mutex> lock(mu);
    if (n >= kMinKept) {
      for (size_t i = free.size(); i-- > 0;) {  // the most recently freed first
        if (free[i]->size() != n) continue;
        std::unique_ptr<WritableTensorBytes> s = std::move(free[i]);
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(i));
        kept -= n;
        return s;
      }
    }
    Trim(now, &evicted);  // new memory comes: what is kept must still fit
    return nullptr;
  }
  void Drop() {
    std::vector<std::unique_ptr<WritableTensorBytes>> evicted;
    std::lock_guard<std::mutex> lock(mu);
    evicted.swap(free);
    kept = 0;
  }
};

MemoryTracker::MemoryTracker() : state_(std::make_shared<State>()) {}

size_t MemoryTracker::live() const { return state_->live; }
size_t MemoryTracker::peak() const { return state_->peak; }
size_t MemoryTracker::kept() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->kept;
}
void MemoryTracker::ResetPeak() {
  state_->Drop();
  state_->peak = state_->live.load();
}
void MemoryTracker::ReleaseKept() { state_->Drop(); }

std::shared_ptr<WritableTensorBytes> MemoryTracker::Allocate(size_t bytes, bool zero) {
  State& st = *state_;
  size_t now = st.AddLive(bytes);
  std::unique_ptr<WritableTensorBytes> s = st.Reuse(bytes, now);
  if (!s)
    s = std::make_unique<WritableTensorBytes>(internal::NewTensorString(bytes, zero));
  else if (zero)
    std::memset(s->mutable_data(), 0, bytes);
  // The deleter holds the state: a buffer may outlive its tracker.
  return std::shared_ptr<WritableTensorBytes>(
      s.release(), [state = state_](WritableTensorBytes* p) { state->Release(p); });
}

std::shared_ptr<const TensorBytes> MemoryTracker::Count(std::shared_ptr<const TensorBytes> bytes) {
  state_->AddLive(bytes->size());
  const TensorBytes* raw = bytes.get();
  struct Counted {
    Counted(std::shared_ptr<State> s, std::shared_ptr<const TensorBytes> b)
        : state(std::move(s)), bytes(std::move(b)) {}
    Counted(const Counted&) = delete;
    Counted& operator=(const Counted&) = delete;
    ~Counted() { state->live -= bytes->size(); }
    std::shared_ptr<State> state;
    std::shared_ptr<const TensorBytes> bytes;
  };
  auto holder = std::make_shared<Counted>(state_, std::move(bytes));
  return std::shared_ptr<const TensorBytes>(std::move(holder), raw);  // aliasing
}

struct Interpreter::Frame {
  std::unordered_map<const VarNode*, ValueRef> env;
  std::string function;
  // Values of the symbolic dimensions bound so far (by the parameters'
  // types and by match_cast), for shape values such as `shape[(n,)]`.
  std::unordered_map<Symbol, int64_t> dims;
  // Variables of a permute_dims the body left uncomputed (TransposePlan):
  // each holds the untransposed 2-D tensor, for its one use, matmul's right
  // operand.
  std::unordered_set<const VarNode*> transposed;
  // The binding being evaluated: its value's call, and the variables whose
  // last use it is (ReleasePlan). EvalCall releases them as soon as that
  // call's operands are evaluated, so that a kernel may write its output
  // into a dead operand's buffer (ScopedDonation).
  const CallNode* binding_call = nullptr;
  const std::vector<const VarNode*>* dying = nullptr;
};

namespace {
// Checks `v` against `t`, binding the symbolic dimensions of `t` in `dims`
// (a name already there must have the same size). Shape values are tuples of
// ints at run time.
Status MatchValue(const ValueRef& v, const Type& t, std::unordered_map<Symbol, int64_t>* dims);

// A shape value (a tuple of ints) as the 1-D int64 tensor kernels take.
Tensor ShapeToKernelTensor(const Value& v) {
  return MakeTensor(DataType::kInt64, {static_cast<int64_t>(v.fields.size())},
                    [&](int64_t i) { return static_cast<double>(v.fields[i]->i); });
}

ValueRef IntValue(int64_t i) {
  auto v = std::make_shared<Value>();
  v->kind = Value::Kind::kInt;
  v->i = i;
  return v;
}
}  // namespace

Interpreter::Interpreter(Module module) : module_(std::move(module)) {
  allocator_ = [this](size_t bytes, bool zero) { return memory_.Allocate(bytes, zero); };
}

void Interpreter::SetParamSource(std::vector<Tensor> params) {
  auto source = std::make_shared<std::vector<Tensor>>(std::move(params));
  loader_ = [this, source](int64_t i) -> StatusOr<Tensor> {
    if (i < 0 || i >= static_cast<int64_t>(source->size()))
      return InvalidArgument("get_item: no parameter " + std::to_string(i) + " (the source has " +
                             std::to_string(source->size()) + ")");
    return Track((*source)[i]);
  };
}

Tensor Interpreter::Track(const Tensor& t) {
  Tensor out = t;
  std::shared_ptr<WritableTensorBytes> buf = memory_.Allocate(t.NumBytes());
  if (t.data) std::copy(t.data->begin(), t.data->end(), buf->mutable_data());
  out.data = std::move(buf);
  return out;
}

StatusOr<ValueRef> Interpreter::Call(const std::string& name, const std::vector<ValueRef>& args) {
  Function f = module_.LookupFunction(name);
  if (!f) return NotFound("no function @" + name + " in the module");
  const TensorAllocator* prev = SetThreadTensorAllocator(&allocator_);
  StatusOr<ValueRef> r = CallFunction(*f, args, 0);
  SetThreadTensorAllocator(prev);
  return r;
}

StatusOr<ValueRef> Interpreter::CallFunction(const FunctionNode& f,
                                             const std::vector<ValueRef>& args, int depth) {
  if (depth > kMaxDepth)
    return ResourceExhausted("call depth exceeds " + std::to_string(kMaxDepth));
  if (args.size() != f.params().size())
    return InvalidArgument("@" + f.name() + " takes " + std::to_string(f.params().size()) +
                           " argument(s), got " + std::to_string(args.size()));
  Frame frame;
  frame.function = f.name();
  for (size_t i = 0; i < args.size(); ++i) {
    frame.env[f.params()[i].get()] = args[i];
    // Binds the parameters' symbolic dimensions (a mismatch is reported
    // where a shape value needs the name, not here: callers may pass less
    // specific values).
    (void)MatchValue(args[i], f.params()[i]->type(), &frame.dims);
  }
  auto r = EvalBody(*f.body(), frame, depth + 1);
  if (!r.ok()) return r.status().WithPrefix("in @" + f.name());
  return r;
}

// For each binding of `body`, the variables whose last use (by a top-level
// binding of this body, anything nested included) is that binding.
const std::vector<std::vector<const VarNode*>>& Interpreter::ReleasePlan(const SeqExprNode& body) {
  auto it = plans_.find(&body);
  if (it != plans_.end()) return it->second;
  std::vector<const VarBindingNode*> bindings;
  for (const Block& b : body.blocks())
    for (const Binding& x : b->bindings()) bindings.push_back(x.get());
  std::unordered_map<const VarNode*, size_t> last;
  for (size_t i = 0; i < bindings.size(); ++i) {
    for (const VarNode* v : CollectVarUses(bindings[i]->value().get())) last[v] = i;
    last.emplace(bindings[i]->var().get(), i);  // never used: released at once
  }
  for (const VarNode* v : CollectVarUses(body.result().get())) last.erase(v);  // lives to the end
  std::vector<std::vector<const VarNode*>> plan(bindings.size());
  for (const auto& [v, i] : last) plan[i].push_back(v);
  return plans_.emplace(&body, std::move(plan)).first->second;
}

namespace {
bool IsOpCall(const Expr& e, const char* op) {
  auto* c = As<CallNode>(e);
  auto* o = c ? As<OpNode>(c->callee()) : nullptr;
  return o && o->name() == op;
}
}  // namespace

// For each binding of `body`: 1 if it is a permute_dims swapping the two
// axes of a 2-D tensor whose variable has one use, as the right operand of
// a later matmul binding of this body (`y = matmul(x, permute_dims(w))`, a
// Linear layer as ONNX exports it). EvalBody then binds the variable to w
// untransposed and EvalCall computes the matmul with MatmulOfTransposed:
// no transposed copy of the weight is made.
const std::vector<char>& Interpreter::TransposePlan(const SeqExprNode& body) {
  auto it = transpose_plans_.find(&body);
  if (it != transpose_plans_.end()) return it->second;
  std::vector<const VarBindingNode*> bindings;
  for (const Block& b : body.blocks())
    for (const Binding& x : b->bindings()) bindings.push_back(x.get());
  std::unordered_map<const VarNode*, std::pair<int, size_t>> uses;  // count, last user
  for (size_t i = 0; i < bindings.size(); ++i)
    for (const VarNode* v : CollectVarUses(bindings[i]->value().get())) {
      auto& u = uses[v];
      ++u.first;
      u.second = i;
    }
  for (const VarNode* v : CollectVarUses(body.result().get())) uses[v].first += 2;
  std::vector<char> plan(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    const Expr& value = bindings[i]->value();
    if (!IsOpCall(value, "permute_dims")) continue;
    auto* c = As<CallNode>(value);
    auto* t = c->args().size() == 1 ? As<TensorTypeNode>(c->args()[0]->type()) : nullptr;
    std::vector<int64_t> axes;
    const AttrValue* a = c->attrs().Get("axes");
    if (!t || t->ndim() != 2 ||
        (a && (!a->GetIntList(&axes) || axes != std::vector<int64_t>{1, 0})))
      continue;
    const VarNode* v = bindings[i]->var().get();
    auto u = uses.find(v);
    if (u == uses.end() || u->second.first != 1) continue;
    const Expr& user = bindings[u->second.second]->value();
    plan[i] = IsOpCall(user, "matmul") && As<CallNode>(user)->args().size() == 2 &&
              As<CallNode>(user)->args()[1].get() == v;
  }
  return transpose_plans_.emplace(&body, std::move(plan)).first->second;
}

StatusOr<ValueRef> Interpreter::EvalBody(const SeqExprNode& body, Frame& frame, int depth) {
  const auto& plan = ReleasePlan(body);
  // Not with an observer, which is shown every binding's value.
  const std::vector<char>* transpose = observer_ ? nullptr : &TransposePlan(body);
  size_t k = 0;
  for (const Block& b : body.blocks()) {
    for (const Binding& x : b->bindings()) {
      if (transpose && (*transpose)[k]) {
        auto w = Eval(As<CallNode>(x->value())->args()[0], frame, depth + 1);
        if (w.ok() && (*w)->kind == Value::Kind::kTensor && (*w)->tensor.shape.size() == 2) {
          frame.env[x->var().get()] = *w;
          frame.transposed.insert(x->var().get());
          for (const VarNode* dead : plan[k]) frame.env.erase(dead);
          ++k;
          continue;
        }
      }
      // Not with an observer (it is shown values as they were computed).
      const CallNode* outer_call = frame.binding_call;
      const std::vector<const VarNode*>* outer_dying = frame.dying;
      frame.binding_call = observer_ ? nullptr : As<CallNode>(x->value());
      frame.dying = &plan[k];
      auto v = Eval(x->value(), frame, depth + 1);
      frame.binding_call = outer_call;
      frame.dying = outer_dying;
      if (!v.ok()) return v.status().WithPrefix("binding %" + x->var()->name_hint());
      frame.env[x->var().get()] = *v;
      if (observer_) observer_(frame.function, *x->var(), *v);
      for (const VarNode* dead : plan[k]) frame.env.erase(dead);
      ++k;
    }
  }
  return Eval(body.result(), frame, depth + 1);
}

StatusOr<ValueRef> Interpreter::Eval(const Expr& e, Frame& frame, int depth) {
  if (depth > kMaxDepth)
    return ResourceExhausted("expression nested deeper than " + std::to_string(kMaxDepth) +
                             " levels; normalize the module first (Normalize)");
  switch (e->kind()) {
    case NodeKind::kVar: {
      auto it = frame.env.find(As<VarNode>(e));
      if (it == frame.env.end())
        return FailedPrecondition("variable %" + As<VarNode>(e)->name_hint() + " has no value");
      return it->second;
    }
    case NodeKind::kConstant:
      return Value::OfTensor(Tensor::FromConstant(*As<ConstantNode>(e)));
    case NodeKind::kPrimValue: {
      auto* p = As<PrimValueNode>(e);
      auto v = std::make_shared<Value>();
      if (p->dtype() == DataType::kFloat64) {
        v->kind = Value::Kind::kFloat;
        v->f = p->float_value();
      } else if (p->dtype() == DataType::kBool) {
        v->kind = Value::Kind::kBool;
        v->i = p->int_value();
      } else {
        v->kind = Value::Kind::kInt;
        v->i = p->int_value();
      }
      return ValueRef(v);
    }
    case NodeKind::kPrimExpr: {
      const Dim& d = As<PrimExprNode>(e)->value();
      std::optional<int64_t> v = EvalDim(d, [&](Symbol s) -> std::optional<int64_t> {
        auto it = frame.dims.find(s);
        return it == frame.dims.end() ? std::nullopt : std::optional<int64_t>(it->second);
      });
      if (!v) return FailedPrecondition("prim[" + DimToString(d) + "] has no value here");
      return IntValue(*v);
    }
    case NodeKind::kShapeExpr: {
      std::vector<ValueRef> fields;
      for (const Dim& d : As<ShapeExprNode>(e)->values()) {
        std::optional<int64_t> v = EvalDim(d, [&](Symbol s) -> std::optional<int64_t> {
          auto it = frame.dims.find(s);
          return it == frame.dims.end() ? std::nullopt : std::optional<int64_t>(it->second);
        });
        if (!v) return FailedPrecondition("dimension " + DimToString(d) + " has no value here");
        fields.push_back(IntValue(*v));
      }
      return Value::OfTuple(std::move(fields));
    }
    case NodeKind::kStringImm: {
      auto v = std::make_shared<Value>();
      v->kind = Value::Kind::kString;
      v->str = As<StringImmNode>(e)->value();
      return ValueRef(v);
    }
    case NodeKind::kTuple: {
      std::vector<ValueRef> fields;
      for (const Expr& f : As<TupleNode>(e)->fields()) {
        PLIR_ASSIGN_OR_RETURN(ValueRef v, Eval(f, frame, depth + 1));
        fields.push_back(std::move(v));
      }
      return Value::OfTuple(std::move(fields));
    }
    case NodeKind::kTupleGetItem: {
      auto* t = As<TupleGetItemNode>(e);
      PLIR_ASSIGN_OR_RETURN(ValueRef tuple, Eval(t->tuple(), frame, depth + 1));
      if (tuple->kind != Value::Kind::kTuple || t->index() < 0 ||
          t->index() >= static_cast<int64_t>(tuple->fields.size()))
        return FailedPrecondition("element access on a value that is not a tuple of that size");
      return tuple->fields[t->index()];
    }
    case NodeKind::kIf: {
      auto* f = As<IfNode>(e);
      PLIR_ASSIGN_OR_RETURN(ValueRef c, Eval(f->cond(), frame, depth + 1));
      bool taken = c->kind == Value::Kind::kTensor ? c->tensor.GetDouble(0) != 0 : c->i != 0;
      return EvalBody(taken ? *f->then_body() : *f->else_body(), frame, depth + 1);
    }
    case NodeKind::kCall:
      return EvalCall(*As<CallNode>(e), frame, depth);
    case NodeKind::kSeqExpr:
      return EvalBody(*As<SeqExprNode>(e), frame, depth + 1);
    case NodeKind::kLocalFn: {
      // A closure: the function and the current values of its free variables.
      auto* fn = As<LocalFnNode>(e);
      auto it = captures_.find(fn);
      if (it == captures_.end()) it = captures_.emplace(fn, FreeVars(e)).first;
      auto env = std::make_shared<std::unordered_map<const VarNode*, ValueRef>>();
      for (const Var& v : it->second) {
        auto found = frame.env.find(v.get());
        if (found == frame.env.end())
          return FailedPrecondition("variable %" + v->name_hint() +
                                    " captured by a local function has no value");
        env->emplace(v.get(), found->second);
      }
      auto v = std::make_shared<Value>();
      v->kind = Value::Kind::kFunction;
      v->fn = Ref<LocalFnNode>(fn);
      v->captured = std::move(env);
      return ValueRef(v);
    }
    case NodeKind::kGlobalVar: {
      auto v = std::make_shared<Value>();  // a function reference
      v->str = As<GlobalVarNode>(e)->name();
      return ValueRef(v);
    }
    default:
      return Unimplemented(std::string("cannot evaluate a ") + NodeKindName(e->kind()));
  }
}

StatusOr<ValueRef> Interpreter::EvalCall(const CallNode& c, Frame& frame, int depth) {
  if (auto* g = As<GlobalVarNode>(c.callee())) {
    std::vector<ValueRef> args;
    for (const Expr& a : c.args()) {
      PLIR_ASSIGN_OR_RETURN(ValueRef v, Eval(a, frame, depth + 1));
      args.push_back(std::move(v));
    }
    Function f = module_.LookupFunction(g->name());
    if (!f) return NotFound("no function @" + g->name());
    return CallFunction(*f, args, depth + 1);
  }
  if (c.callee()->kind() == NodeKind::kVar) {  // a call of a function value
    PLIR_ASSIGN_OR_RETURN(ValueRef callee, Eval(c.callee(), frame, depth + 1));
    std::vector<ValueRef> args;
    for (const Expr& a : c.args()) {
      PLIR_ASSIGN_OR_RETURN(ValueRef v, Eval(a, frame, depth + 1));
      args.push_back(std::move(v));
    }
    auto r = CallValue(callee, args, depth + 1);
    if (!r.ok())
      return r.status().WithPrefix("in the call of %" + As<VarNode>(c.callee())->name_hint());
    return r;
  }
  auto* op = As<OpNode>(c.callee());
  if (!op) return Unimplemented("calls of computed callees");
  const std::string& name = op->name();
  if (name == "vm.kill_object") {
    if (auto* v = As<VarNode>(c.args()[0])) frame.env.erase(v);
    return Value::OfTuple({});
  }
  std::vector<ValueRef> args;
  for (const Expr& a : c.args()) {
    PLIR_ASSIGN_OR_RETURN(ValueRef v, Eval(a, frame, depth + 1));
    args.push_back(std::move(v));
  }
  // The binding's variables at their last use, released now: nothing else
  // of this binding reads them once its call's operands are evaluated.
  if (&c == frame.binding_call) {
    for (const VarNode* dead : *frame.dying) frame.env.erase(dead);
    frame.binding_call = nullptr;
  }
  if (name == "call_packed") {
    const std::string& fn = args[0]->str;
    std::vector<ValueRef> rest(args.begin() + 1, args.end());
    if (fn == "get_item") {
      if (rest.empty() || rest[0]->kind != Value::Kind::kInt)
        return InvalidArgument("get_item(i) needs an index");
      if (!loader_)
        return FailedPrecondition("get_item: no parameter source (plir-run: give --params)");
      PLIR_ASSIGN_OR_RETURN(Tensor t, loader_(rest[0]->i));
      return Value::OfTensor(std::move(t));
    }
    if (fn == "set_item") {
      if (rest.size() != 2 || rest[0]->kind != Value::Kind::kInt ||
          rest[1]->kind != Value::Kind::kTensor)
        return InvalidArgument("set_item(i, tensor) needs an index and a tensor");
      if (sink_) {
        PLIR_RETURN_IF_ERROR(sink_(rest[0]->i, rest[1]->tensor));
      } else {
        outputs_[rest[0]->i] = Untracked(rest[1]->tensor);  // handed out of our memory
      }
      return Value::Opaque();
    }
    auto it = packed_.find(fn);
    if (it == packed_.end()) return NotFound("no packed function '" + fn + "' is registered");
    return it->second(*this, rest);
  }
  if (name == "match_cast") {
    // The value, checked against the type: dtype, rank, constant dims, and
    // one size per symbolic name within the type.
    std::unordered_map<Symbol, int64_t> dims = frame.dims;
    PLIR_RETURN_IF_ERROR(CheckMatch(args[0], c.sinfo_args()[0]));
    PLIR_RETURN_IF_ERROR(MatchValue(args[0], c.sinfo_args()[0], &dims));
    frame.dims = std::move(dims);  // the names it binds
    return args[0];
  }
  if (name == "builtin.stop_lift_params") return args[0];
  if (name == "shape_to_tensor") {
    // A shape known from the argument's type, or a tuple of ints.
    std::vector<int64_t> dims;
    auto* st = As<ShapeTypeNode>(c.args()[0]->type());
    bool static_type = st && st->has_values();
    for (size_t i = 0; static_type && i < st->values().size(); ++i)
      static_type = st->values()[i].is_const();
    if (static_type) {
      for (const Dim& d : st->values()) dims.push_back(d.value);
    } else if (args[0]->kind == Value::Kind::kTuple) {
      for (const ValueRef& f : args[0]->fields) {
        if (f->kind != Value::Kind::kInt) return InvalidArgument("shape_to_tensor needs a shape");
        dims.push_back(f->i);
      }
    } else {
      return InvalidArgument("shape_to_tensor needs a shape");
    }
    return Value::OfTensor(MakeTensor(DataType::kInt64, {static_cast<int64_t>(dims.size())},
                                      [&](int64_t i) { return static_cast<double>(dims[i]); }));
  }
  // Declared sizes are checked before a kernel allocates its result.
  PLIR_RETURN_IF_ERROR(CheckTensorSize(c.type(), "the result of " + name));
  if (name == "call_tir") {
    auto* k = As<GlobalVarNode>(c.args()[0]);
    if (!k) return InvalidArgument("call_tir needs an extern function as its first argument");
    Kernel fn;
    ExternKernelTupleFn tuple_fn;
    if (auto it = kernels_.find(k->name()); it != kernels_.end()) {
      fn = it->second;
    } else if (auto def = KernelRegistry::Global().Lookup(k->name())) {
      fn = def->fn;
      tuple_fn = def->tuple_fn;
    } else {
      return NotFound("no kernel registered for extern @" + k->name() +
                      " (built-in or from a plugin: plir-run --plugin)");
    }
    std::vector<Tensor> in;
    for (const ValueRef& v : args[1]->fields) {
      if (v->kind == Value::Kind::kInt) {  // a primitive argument (prim[m]): a 0-d int64 tensor
        in.push_back(
            MakeTensor(DataType::kInt64, {}, [&](int64_t) { return static_cast<double>(v->i); }));
        continue;
      }
      if (v->kind != Value::Kind::kTensor)
        return InvalidArgument("call_tir arguments must be tensors or int64 values");
      in.push_back(v->tensor);
    }
    if (args.size() == 3) {  // tir_vars: the kernel's last input, a 1-D int64 tensor
      for (const ValueRef& f : args[2]->fields)
        if (f->kind != Value::Kind::kInt)
          return InvalidArgument("call_tir: tir_vars must be a shape value");
      in.push_back(ShapeToKernelTensor(*args[2]));
    }
    // A tuple-typed call runs the kernel's tuple function (one tensor per
    // element); a tensor-typed one its tensor function.
    if (auto* tt = As<TupleTypeNode>(c.type())) {
      if (!tuple_fn)
        return InvalidArgument("the kernel for extern @" + k->name() + " has no tuple result");
      PLIR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, tuple_fn(in, c.type()));
      if (outs.size() != tt->fields().size())
        return InvalidArgument("the kernel for extern @" + k->name() + " returned " +
                               std::to_string(outs.size()) + " tensors for a " +
                               std::to_string(tt->fields().size()) + "-tuple");
      std::vector<ValueRef> fields;
      for (Tensor& t : outs) fields.push_back(Value::OfTensor(std::move(t)));
      return Value::OfTuple(std::move(fields));
    }
    if (!fn)
      return InvalidArgument("the kernel for extern @" + k->name() + " has only a tuple result");
    PLIR_ASSIGN_OR_RETURN(Tensor out, fn(in, c.type()));
    return Value::OfTensor(std::move(out));
  }
  if (!frame.transposed.empty() && name == "matmul" && args.size() == 2 &&
      args[0]->kind == Value::Kind::kTensor)
    if (auto* v = As<VarNode>(c.args()[1]); v && frame.transposed.count(v)) {
      PLIR_ASSIGN_OR_RETURN(Tensor out, MatmulOfTransposed(args[0]->tensor, args[1]->tensor));
      return Value::OfTensor(std::move(out));
    }
  OpEvalFn eval = FindOpKernel(*op);
  if (!eval) return Unimplemented("op " + name + " has no evaluation kernel");
  // Kernels take tensors: a shape value goes as a 1-D int64 tensor, and a
  // tuple of tensors (concat's operand) as its tensors in order.
  std::vector<Tensor> in;
  for (size_t i = 0; i < args.size(); ++i) {
    const ValueRef& v = args[i];
    if (v->kind == Value::Kind::kTensor) {
      // A released operand that nothing else holds is moved, so that the
      // kernel sees its buffer's sole owner.
      if (v.use_count() == 1)
        in.push_back(std::move(const_cast<Value&>(*v).tensor));
      else
        in.push_back(v->tensor);
    } else if (v->kind == Value::Kind::kTuple &&
               c.args()[i]->type()->kind() == NodeKind::kShapeType) {
      for (const ValueRef& f : v->fields)
        if (f->kind != Value::Kind::kInt)
          return InvalidArgument(name + ": a shape value holds a non-integer");
      in.push_back(ShapeToKernelTensor(*v));
    } else if (v->kind == Value::Kind::kTuple && !v->fields.empty() &&
               std::all_of(v->fields.begin(), v->fields.end(),
                           [](const ValueRef& f) { return f->kind == Value::Kind::kInt; })) {
      in.push_back(ShapeToKernelTensor(*v));  // a tuple of ints (strided_slice's indices)
    } else if (v->kind == Value::Kind::kTuple) {
      for (const ValueRef& f : v->fields) {
        if (f->kind != Value::Kind::kTensor)
          return InvalidArgument(name + " needs tensor arguments");
        in.push_back(f->tensor);
      }
    } else {
      return InvalidArgument(name + " needs tensor arguments");
    }
  }
  // The first operand's buffer, lent to a core kernel (never a plugin's):
  // an elementwise one writes its output there when it is the buffer's sole
  // owner (a variable at its last use, moved above).
  PLIR_ASSIGN_OR_RETURN(Tensor out, [&]() -> StatusOr<Tensor> {
    ScopedDonation donate(!op->def().eval && !in.empty() ? &in[0] : nullptr);
    return eval(in, c.attrs());
  }());
  if (c.type()->kind() == NodeKind::kShapeType) {  // a shape value: a tuple of ints
    if (out.shape.size() != 1) return Internal(name + ": a shape result must be 1-D");
    std::vector<ValueRef> fields;
    for (int64_t i = 0; i < out.shape[0]; ++i) fields.push_back(IntValue(out.GetInt(i)));
    return Value::OfTuple(std::move(fields));
  }
  return Value::OfTensor(std::move(out));
}

namespace {
Status MatchValue(const ValueRef& v, const Type& t, std::unordered_map<Symbol, int64_t>* dims) {
  std::vector<std::pair<const Value*, const TypeNode*>> work = {{v.get(), t.get()}};
  auto match = [&](const Dim& d, int64_t size) {
    if (d.is_const()) return d.value == size;
    if (DimIsExpr(d)) {  // a use: checked when its names have values
      std::optional<int64_t> v = EvalDim(d, [&](Symbol s) -> std::optional<int64_t> {
        auto it = dims->find(s);
        return it == dims->end() ? std::nullopt : std::optional<int64_t>(it->second);
      });
      return !v || *v == size;
    }
    auto [it, inserted] = dims->emplace(d.sym, size);
    return inserted || it->second == size;
  };
  while (!work.empty()) {
    const Value* val = work.back().first;
    const TypeNode* type = work.back().second;
    work.pop_back();
    auto fail = [&] {
      return InvalidArgument("the value does not match " + TypeToString(Type(type)));
    };
    if (auto* tt = As<TensorTypeNode>(Type(type))) {
      if (val->kind != Value::Kind::kTensor) return fail();
      if (!tt->has_shape()) continue;
      if (val->tensor.shape.size() != tt->shape().size()) return fail();
      for (size_t i = 0; i < tt->shape().size(); ++i)
        if (!match(tt->shape()[i], val->tensor.shape[i])) return fail();
    } else if (auto* st = As<ShapeTypeNode>(Type(type))) {
      if (val->kind != Value::Kind::kTuple) return fail();
      if (!st->has_values()) continue;
      if (val->fields.size() != st->values().size()) return fail();
      for (size_t i = 0; i < st->values().size(); ++i)
        if (val->fields[i]->kind != Value::Kind::kInt || !match(st->values()[i], val->fields[i]->i))
          return fail();
    } else if (auto* pt = As<PrimTypeNode>(Type(type))) {
      if (pt->has_value() && val->kind == Value::Kind::kInt && !match(pt->value(), val->i))
        return fail();
    } else if (auto* tu = As<TupleTypeNode>(Type(type))) {
      if (val->kind != Value::Kind::kTuple || val->fields.size() != tu->fields().size())
        return fail();
      for (size_t i = 0; i < tu->fields().size(); ++i)
        work.push_back({val->fields[i].get(), tu->fields()[i].get()});
    }
  }
  return Status::Ok();
}
}  // namespace

StatusOr<ValueRef> Interpreter::CallValue(const ValueRef& callee, const std::vector<ValueRef>& args,
                                          int depth) {
  if (depth > kMaxDepth)
    return ResourceExhausted("call depth exceeds " + std::to_string(kMaxDepth));
  if (callee->kind != Value::Kind::kFunction)
    return InvalidArgument("the callee is not a function value");
  if (!callee->fn) {
    if (!callee->host) return InvalidArgument("the callee is an empty function value");
    return callee->host(args);
  }
  const LocalFnNode& fn = *callee->fn;
  if (args.size() != fn.params().size())
    return InvalidArgument("the local function takes " + std::to_string(fn.params().size()) +
                           " argument(s), got " + std::to_string(args.size()));
  Frame inner;
  inner.env = *callee->captured;
  for (size_t i = 0; i < args.size(); ++i) {
    inner.env[fn.params()[i].get()] = args[i];
    (void)MatchValue(args[i], fn.params()[i]->type(), &inner.dims);  // its parameters' dimensions
  }
  return EvalBody(*fn.body(), inner, depth + 1);
}

Status CheckMatch(const ValueRef& v, const Type& t) {
  std::unordered_map<Symbol, int64_t> sizes;
  std::vector<std::pair<const Value*, const TypeNode*>> work = {{v.get(), t.get()}};
  while (!work.empty()) {
    const Value* val = work.back().first;
    const TypeNode* type = work.back().second;
    work.pop_back();
    auto fail = [&] {
      return InvalidArgument("match_cast: the value does not match " + TypeToString(Type(type)));
    };
    if (type->kind() == NodeKind::kObjectType) continue;
    if (auto* tt = As<TensorTypeNode>(Type(type))) {
      if (val->kind != Value::Kind::kTensor) return fail();
      const Tensor& x = val->tensor;
      if (tt->dtype() != DataType::kUnknown && x.dtype != tt->dtype()) return fail();
      if (tt->ndim() >= 0 && static_cast<int>(x.shape.size()) != tt->ndim()) return fail();
      if (tt->has_shape())
        for (size_t i = 0; i < tt->shape().size(); ++i) {
          const Dim& d = tt->shape()[i];
          if (d.is_const() ? x.shape[i] != d.value
                           : !DimIsExpr(d) && !sizes.emplace(d.sym, x.shape[i]).second &&
                                 sizes[d.sym] != x.shape[i])  // expressions: MatchValue
            return fail();
        }
    } else if (auto* tu = As<TupleTypeNode>(Type(type))) {
      if (val->kind != Value::Kind::kTuple || val->fields.size() != tu->fields().size())
        return fail();
      for (size_t i = 0; i < tu->fields().size(); ++i)
        work.push_back({val->fields[i].get(), tu->fields()[i].get()});
    }
  }
  return Status::Ok();
}

bool ValuesBitwiseEqual(const ValueRef& a, const ValueRef& b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case Value::Kind::kTensor:
      return a->tensor.dtype == b->tensor.dtype && a->tensor.shape == b->tensor.shape &&
             *a->tensor.data == *b->tensor.data;
    case Value::Kind::kTuple:
      if (a->fields.size() != b->fields.size()) return false;
      for (size_t i = 0; i < a->fields.size(); ++i)
        if (!ValuesBitwiseEqual(a->fields[i], b->fields[i])) return false;
      return true;
    case Value::Kind::kString:
      return a->str == b->str;
    default:
      return a->i == b->i && a->f == b->f;
  }
}

}  // namespace plir
