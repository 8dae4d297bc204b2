#include "interpreter/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "testing/ir_test_util.h"

namespace plir {
namespace {

ValueRef IntValue(int64_t n) {
  auto v = std::make_shared<Value>();
  v->kind = Value::Kind::kInt;
  v->i = n;
  return v;
}

Tensor Vec(std::vector<double> v) {
  return MakeTensor(DataType::kFloat32, {static_cast<int64_t>(v.size())},
                    [&](int64_t i) { return v[i]; });
}

TEST(InterpreterTest, RunsOpsCallsIfsAndTuples) {
  Module m = testing::ParseOrFail(R"(
extern @double_it(%a: Tensor[(3,), float32]) -> Tensor[(3,), float32]
def @helper(%a: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
  nn.relu(%a)
}
def @main(%x: Tensor[(3,), float32], %c: Tensor[(), bool]) -> (Tensor[(3,), float32], Tensor[(3,), float32]) {
  %a = add(%x, const<Tensor[(3,), float32]>[1, 1, 1]);
  %b = @helper(subtract(%a, const<Tensor[(), float32]>[3]));
  %k = call_tir(@double_it, (%b,), sinfo_args=[Tensor[(3,), float32]]);
  %r = if (%c) { multiply(%k, %k) } else { %k };
  (%r, %b)
}
)");
  Interpreter in(m);
  in.RegisterKernel("double_it", [](const std::vector<Tensor>& t, const Type&) -> StatusOr<Tensor> {
    return MakeTensor(t[0].dtype, t[0].shape, [&](int64_t i) { return 2 * t[0].GetDouble(i); });
  });
  Tensor cond = MakeTensor(DataType::kBool, {}, [](int64_t) { return 1; });
  auto r = in.Call("main", {Value::OfTensor(Vec({1, 2, 5})), Value::OfTensor(cond)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tensor& out = (*r)->fields[0]->tensor;
  // a = [2, 3, 6]; b = relu([-1, 0, 3]) = [0, 0, 3]; k = [0, 0, 6]; r = k*k
  EXPECT_EQ(out.GetDouble(0), 0);
  EXPECT_EQ(out.GetDouble(2), 36);
  EXPECT_EQ((*r)->fields[1]->tensor.GetDouble(2), 3);
}

// Local functions are closures: they capture the values of the enclosing
// variables they use when they are defined, and run where they are called.
// A Callable parameter takes a host function.
TEST(InterpreterTest, ClosuresAndCallableParameters) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(3,), float32], %cb: Callable[(Prim[int64], Object), (), pure=false]) -> Tensor[(3,), float32] {
  %k = add(%x, %x);
  %scale = fn(%y: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
    %t = multiply(%y, %k);
    %t
  };
  %a = %scale(%x);
  %b = %scale(%a);
  %u = %cb(7, %b);
  %b
}
)");
  Interpreter in(m);
  std::vector<std::pair<int64_t, double>> seen;
  ValueRef cb = Value::OfHostFunction([&](const std::vector<ValueRef>& args) -> StatusOr<ValueRef> {
    seen.emplace_back(args[0]->i, args[1]->tensor.GetDouble(2));
    return Value::OfTuple({});
  });
  auto r = in.Call("main", {Value::OfTensor(Vec({1, 2, 3})), cb});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // k = 2x; a = x * k = 2x^2; b = a * k = 4x^3.
  EXPECT_EQ((*r)->tensor.GetDouble(0), 4);
  EXPECT_EQ((*r)->tensor.GetDouble(2), 108);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, 7);
  EXPECT_EQ(seen[0].second, 108);
  // A callback that fails: the error names the call.
  ValueRef bad = Value::OfHostFunction([](const std::vector<ValueRef>&) -> StatusOr<ValueRef> {
    return InvalidArgument("sink full");
  });
  auto e = in.Call("main", {Value::OfTensor(Vec({1, 2, 3})), bad});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "in @main: binding %u: in the call of %cb: sink full");
}

TEST(InterpreterTest, ErrorsNameTheFunctionAndBinding) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(2,), int32]) -> Tensor[(2,), int32] {
  %z = divide(%x, const<Tensor[(2,), int32]>[0, 1]);
  %z
}
)");
  Interpreter in(m);
  auto r = in.Call("main",
                   {Value::OfTensor(MakeTensor(DataType::kInt32, {2}, [](int64_t) { return 1; }))});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "in @main: binding %z: divide: integer division by zero");
}

TEST(InterpreterTest, ReleasesValuesAfterTheirLastUse) {
  // Three 4 KiB temporaries in sequence: at most two are live at once.
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(1024,), float32]) -> Tensor[(1024,), float32] {
  %a = nn.relu(%x);
  %b = nn.relu(%a);
  %c = nn.relu(%b);
  %c
}
)");
  Interpreter in(m);
  Tensor x = in.Track(Vec(std::vector<double>(1024, 1.0)));
  auto r = in.Call("main", {Value::OfTensor(x)});
  ASSERT_TRUE(r.ok());
  // x (held by the caller) + one temporary: %b and %c are computed in the
  // buffer of the operand that dies there (ScopedDonation).
  EXPECT_EQ(in.memory().peak(), 2u * 4096);
  // With an observer, which is shown every value, nothing is overwritten:
  // x + two temporaries.
  Interpreter seen(m);
  std::vector<ValueRef> values;
  seen.SetBindingObserver(
      [&](const std::string&, const VarNode&, const ValueRef& v) { values.push_back(v); });
  Tensor x2 = seen.Track(Vec(std::vector<double>(1024, 1.0)));
  ASSERT_TRUE(seen.Call("main", {Value::OfTensor(x2)}).ok());
  EXPECT_EQ(seen.memory().peak(), 4u * 4096);  // the observer keeps all three
  ASSERT_EQ(values.size(), 3u);
  EXPECT_NE(values[0]->tensor.data.get(), values[1]->tensor.data.get());
}

// An elementwise kernel writes into the buffer of its first operand when
// that operand's variable dies at the call and nothing else holds it; an
// operand still used later, one held by the caller, a broadcast first
// operand or a mapped (borrowed) buffer is never written. Values are the
// same as the kernels' on fresh buffers.
TEST(InterpreterTest, ElementwiseKernelsReuseADeadOperandsBuffer) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(1024,), float32], %s: Tensor[(1,), float32]) -> (Tensor[(1024,), float32], Tensor[(1024,), float32]) {
  %a = add(%x, %x);
  %b = exp(%a);
  %c = add(%a, %b);
  %d = clip(%c, const<Tensor[(), float32]>[0], const<Tensor[(), float32]>[6]);
  %e = multiply(%d, %s);
  %f = add(%s, %e);
  (%f, %x)
}
)");
  Interpreter in(m);
  std::vector<double> xs(1024);
  for (int i = 0; i < 1024; ++i) xs[i] = (i % 7 - 3) * 0.25;
  Tensor x = in.Track(Vec(xs));
  Tensor s = in.Track(Vec({0.5}));
  const Tensor x_before = x;
  auto r = in.Call("main", {Value::OfTensor(x), Value::OfTensor(s)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tensor& f = (*r)->fields[0]->tensor;
  for (int i = 0; i < 1024; ++i) {
    float a = static_cast<float>(xs[i]) + static_cast<float>(xs[i]);
    float b = static_cast<float>(std::exp(static_cast<double>(a)));
    float c = a + b;
    float d = c < 0 ? 0 : c > 6 ? 6 : c;
    float e = d * 0.5f;
    ASSERT_EQ(static_cast<float>(f.GetDouble(i)), 0.5f + e) << i;
    ASSERT_EQ((*r)->fields[1]->tensor.GetDouble(i), xs[i]) << "x was written";
  }
  EXPECT_EQ(x.data.get(), x_before.data.get());
  // Live at the peak: x, s and two temporaries (%a and %b, as %a is used
  // by %c; later %e and %f, as %f's first operand is the broadcast %s).
  // %c, %d and %e reuse a dying operand's buffer; without that, %a, %b and
  // %c would be live at once.
  EXPECT_EQ(in.memory().peak(), 4096u + 4 + 2 * 4096);
}

// matmul(x, permute_dims(w)) with the transpose used once: the product
// reads w transposed (MatmulOfTransposed) and no transposed copy is live;
// the same value as the two kernels. With an observer (shown every
// binding) or a second use, the transpose is computed.
TEST(InterpreterTest, MatmulOfATransposeUsedOnceMakesNoCopy) {
  const char* once = R"(
def @main(%x: Tensor[(3, 32), float32], %w: Tensor[(16, 32), float32]) -> Tensor[(3, 16), float32] {
  %t = permute_dims(%w, axes=[1, 0]);
  %y = matmul(%x, %t);
  %y
}
)";
  const char* twice = R"(
def @main(%x: Tensor[(3, 32), float32], %w: Tensor[(16, 32), float32]) -> Tensor[(3, 16), float32] {
  %t = permute_dims(%w, axes=[1, 0]);
  %y = matmul(%x, %t);
  %s = sum(%t, axis=[0, 1]);
  %z = add(%y, %s);
  %z
}
)";
  Tensor x = MakeTensor(DataType::kFloat32, {3, 32}, [](int64_t i) { return (i % 7) - 3.0; });
  Tensor w = MakeTensor(DataType::kFloat32, {16, 32}, [](int64_t i) { return (i % 5) * 0.5; });
  auto wt = EvalOp("permute_dims", {w}, Attrs());
  ASSERT_TRUE(wt.ok());
  auto expected = EvalOp("matmul", {x, *wt}, Attrs());
  ASSERT_TRUE(expected.ok());
  const size_t inputs = (3 * 32 + 16 * 32) * 4, y = 3 * 16 * 4, copy = 16 * 32 * 4;
  for (bool observed : {false, true}) {
    Interpreter in(testing::ParseOrFail(once));
    if (observed) in.SetBindingObserver([](const std::string&, const VarNode&, const ValueRef&) {});
    auto r = in.Call("main", {Value::OfTensor(in.Track(x)), Value::OfTensor(in.Track(w))});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ((*r)->tensor.shape, expected->shape);
    for (int64_t i = 0; i < expected->NumElements(); ++i)
      EXPECT_EQ((*r)->tensor.GetDouble(i), expected->GetDouble(i)) << i;
    EXPECT_EQ(in.memory().peak(), inputs + y + (observed ? copy : 0)) << observed;
  }
  Interpreter in(testing::ParseOrFail(twice));
  auto r = in.Call("main", {Value::OfTensor(in.Track(x)), Value::OfTensor(in.Track(w))});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GE(in.memory().peak(), inputs + y + copy);
}

TEST(InterpreterTest, LazyProtocol) {
  Module m = testing::ParseOrFail(R"(
def @transform_params() -> (Object,) {
  dataflow {
    %w: Object = call_packed("get_item", 0, sinfo_args=[Object]);
    %r: Tensor[(2,), float32] = nn.relu(%w);
    %s: Object = call_packed("set_item", 0, %r, sinfo_args=[Object]);
    %k: () = vm.kill_object(%w);
    %out: (Object,) = (%s,);
    output %out;
  }
  %out
}
)");
  Interpreter in(m);
  in.SetParamSource({Vec({-1, 2})});
  auto r = in.Call("transform_params", {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(in.outputs().size(), 1u);
  EXPECT_EQ(in.outputs().at(0).GetDouble(0), 0);
  EXPECT_EQ(in.outputs().at(0).GetDouble(1), 2);
  EXPECT_EQ(in.memory().live(), 0u);  // everything was handed out or freed
}

// The ops added for TVM's tests.
TEST(InterpreterTest, CreationCastAndShapeOps) {
  Module m = testing::ParseOrFail(R"(
def @main(%s: Shape[(2, 3)]) {
  %z = zeros(shape=[2], dtype="float32");
  %o = ones(shape=[2], dtype="int32");
  %f = full(const<Tensor[(), float32]>[2.5], shape=[2]);
  %a = astype(%f, dtype="int32");
  %r = arange(start=1, end=7, step=2, dtype="float32");
  %t = shape_to_tensor(%s);
  (%z, %o, %f, %a, %r, %t)
}
)");
  Interpreter in(m);
  auto r = in.Call("main", {Value::OfTuple({})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto field = [&](int i) -> const Tensor& { return (*r)->fields[i]->tensor; };
  EXPECT_EQ(field(0).GetDouble(1), 0);
  EXPECT_EQ(field(1).dtype, DataType::kInt32);
  EXPECT_EQ(field(1).GetDouble(0), 1);
  EXPECT_EQ(field(2).GetDouble(1), 2.5);
  EXPECT_EQ(field(3).GetDouble(0), 2);  // truncated, as a C cast
  EXPECT_EQ(field(4).shape, std::vector<int64_t>{3});
  EXPECT_EQ(field(4).GetDouble(2), 5);
  EXPECT_EQ(field(5).GetDouble(0), 2);
  EXPECT_EQ(field(5).GetDouble(1), 3);
}

// Shape values are tuples of ints at run time; their symbolic dimensions
// take the sizes the parameters' types (and match_cast) bind.
TEST(InterpreterTest, ShapeValuesAndShapeOps) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(n, 2), float32]) {
  %s = shape_of(%x);
  %t = shape_to_tensor(%s);
  %u = shape_to_tensor(shape[(n, 7)]);
  %b = tensor_to_shape(%u);
  %y = reshape(%x, shape[(2, n)]);
  %i = take(%u, const<Tensor[(1,), int64]>[1], axis=0);
  %e = expand_dims(%i, axis=[0]);
  %c = concat((%e, %e), axis=1);
  %z = match_cast(%x, sinfo_args=[Tensor[(n, k), float32]]);
  %k = shape[(k, n)];
  (%s, %t, %b, %y, %c, %k)
}
)");
  Interpreter in(m);
  Tensor x =
      MakeTensor(DataType::kFloat32, {3, 2}, [](int64_t i) { return static_cast<double>(i); });
  auto r = in.Call("main", {Value::OfTensor(x)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto ints = [](const ValueRef& v) {
    std::vector<int64_t> out;
    for (const ValueRef& f : v->fields) out.push_back(f->i);
    return out;
  };
  const auto& f = (*r)->fields;
  EXPECT_EQ(ints(f[0]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(f[1]->tensor.GetInt(0), 3);
  EXPECT_EQ(f[1]->tensor.GetInt(1), 2);
  EXPECT_EQ(ints(f[2]), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(f[3]->tensor.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f[3]->tensor.GetDouble(5), 5);
  EXPECT_EQ(f[4]->tensor.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f[4]->tensor.GetInt(0), 7);
  EXPECT_EQ(f[4]->tensor.GetInt(1), 7);
  EXPECT_EQ(ints(f[5]), (std::vector<int64_t>{2, 3}));  // k bound by the match_cast

  // A wrong size for the shape is an error, not a crash.
  Module bad = testing::ParseOrFail(R"(
def @main(%x: Tensor[(n,), int64]) {
  %b = tensor_to_shape(%x);
  %y = reshape(const<Tensor[(4,), float32]>[1, 2, 3, 4], %b);
  %y
}
)");
  Interpreter in2(bad);
  auto r2 = in2.Call(
      "main", {Value::OfTensor(*MakeIntTensor(DataType::kInt64, {2}, [](int64_t) { return 3; }))});
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("element count"), std::string::npos)
      << r2.status().message();
}

// prim[...] values and Prim value types: names take the sizes bound.
TEST(InterpreterTest, SymbolicValuesAndStridedSlice) {
  Module m = testing::ParseOrFail(R"(
def @main(%r: Prim[int64, value=r], %x: Tensor[(4, 3), float32]) {
  %a = strided_slice(%x, (0,), (prim[r],), (prim[r + 2],), assume_inbound=true);
  %b = strided_slice(%x, (0, 1), (3, 2), (0, -4), (-2, -1));
  (%a, %b, prim[r * 10 + 1])
}
)");
  Interpreter in(m);
  Tensor x =
      MakeTensor(DataType::kFloat32, {4, 3}, [](int64_t i) { return static_cast<double>(i); });
  auto one = std::make_shared<Value>();
  one->kind = Value::Kind::kInt;
  one->i = 1;
  auto r = in.Call("main", {one, Value::OfTensor(x)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& f = (*r)->fields;
  EXPECT_EQ(f[0]->tensor.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f[0]->tensor.GetDouble(0), 3);  // row 1
  EXPECT_EQ(f[1]->tensor.shape, (std::vector<int64_t>{2, 3}));
  // rows 3, 1; columns 2, 1, 0
  EXPECT_EQ(f[1]->tensor.GetDouble(0), 11);
  EXPECT_EQ(f[1]->tensor.GetDouble(3), 5);
  EXPECT_EQ(f[2]->i, 11);
}

// A local function's parameters bind their dimensions for its body.
TEST(InterpreterTest, LocalFunctionShapeValues) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(3,), float32]) {
  %f = fn(%y: Tensor[(k,), float32]) -> Shape[(k, 2)] {
    shape[(k, 2)]
  };
  %s = %f(%x);
  %s
}
)");
  Interpreter in(m);
  Tensor x = MakeTensor(DataType::kFloat32, {3}, [](int64_t) { return 0.0; });
  auto r = in.Call("main", {Value::OfTensor(x)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->fields.size(), 2u);
  EXPECT_EQ((*r)->fields[0]->i, 3);
  EXPECT_EQ((*r)->fields[1]->i, 2);
}

TEST(InterpreterTest, Conv2dLayoutsAgreeWithNchw) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 3, 3), float32]) {
  %ref = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %xn = permute_dims(%x, axes=[0, 2, 3, 1]);
  %wn = permute_dims(%w, axes=[0, 2, 3, 1]);
  %c = nn.conv2d(%xn, %wn, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OHWI", out_layout="NCHW");
  (%ref, %c)
}
)");
  Interpreter in(m);
  auto x = MakeTensor(DataType::kFloat32, {1, 2, 4, 4}, [](int64_t i) { return (i * 7) % 5 - 2; });
  auto w = MakeTensor(DataType::kFloat32, {3, 2, 3, 3}, [](int64_t i) { return (i * 3) % 4 - 1; });
  auto r = in.Call("main", {Value::OfTensor(x), Value::OfTensor(w)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(ValuesBitwiseEqual((*r)->fields[0], (*r)->fields[1]));
}

TEST(InterpreterTest, MatchCastChecksTheValue) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[ndim=2, float32]) {
  %y = match_cast(%x, sinfo_args=[Tensor[(n, n), float32]]);
  %z = builtin.stop_lift_params(%y);
  %z
}
)");
  Interpreter in(m);
  auto square = MakeTensor(DataType::kFloat32, {2, 2}, [](int64_t i) { return i; });
  auto r = in.Call("main", {Value::OfTensor(square)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->tensor.GetDouble(3), 3);
  auto wide = MakeTensor(DataType::kFloat32, {2, 3}, [](int64_t i) { return i; });
  r = in.Call("main", {Value::OfTensor(wide)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.status().message().find("match_cast: the value does not match Tensor[(n, n), float32]"),
      std::string::npos)
      << r.status().message();
}

TEST(InterpreterTest, LazyLoaderAndSinkHoldOneWeightAtATime) {
  // Two 4 KiB weights loaded on demand and sent to a sink: the interpreter
  // holds at most a weight and its result, and keeps no output itself.
  Module m = testing::ParseOrFail(R"(
def @transform_params() -> (Object, Object) {
  dataflow {
    %a: Object = call_packed("get_item", 0, sinfo_args=[Object]);
    %ra: Tensor[(1024,), float32] = nn.relu(%a);
    %sa: Object = call_packed("set_item", 0, %ra, sinfo_args=[Object]);
    %ka: () = vm.kill_object(%a);
    %b: Object = call_packed("get_item", 1, sinfo_args=[Object]);
    %rb: Tensor[(1024,), float32] = nn.relu(%b);
    %sb: Object = call_packed("set_item", 1, %rb, sinfo_args=[Object]);
    %kb: () = vm.kill_object(%b);
    %out: (Object, Object) = (%sa, %sb);
    output %out;
  }
  %out
}
)");
  Interpreter in(m);
  std::vector<int64_t> loaded;
  in.SetParamLoader([&](int64_t i) -> StatusOr<Tensor> {
    loaded.push_back(i);
    // Allocated inside the interpreter: counted as its memory.
    return MakeTensor(DataType::kFloat32, {1024}, [i](int64_t k) { return i == 0 ? -1.0 : k; });
  });
  std::map<int64_t, double> received;
  in.SetOutputSink([&](int64_t j, const Tensor& t) -> Status {
    received[j] = t.GetDouble(5);
    EXPECT_EQ(loaded.size(),
              static_cast<size_t>(j + 1));  // output j arrives before weight j+1 is read
    return Status::Ok();
  });
  auto r = in.Call("transform_params", {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(loaded, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(received, (std::map<int64_t, double>{{0, 0.0}, {1, 5.0}}));
  EXPECT_TRUE(in.outputs().empty());
  EXPECT_EQ(in.memory().peak(), 2u * 4096);
  EXPECT_EQ(in.memory().live(), 0u);

  // Errors from the loader and the sink stop the run and name the binding.
  in.SetParamLoader([](int64_t i) -> StatusOr<Tensor> {
    return InvalidArgument("no weight " + std::to_string(i));
  });
  r = in.Call("transform_params", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "in @transform_params: binding %a: no weight 0");
  in.SetParamLoader(
      [](int64_t) -> StatusOr<Tensor> { return Vec(std::vector<double>(1024, 1.0)); });
  in.SetOutputSink([](int64_t, const Tensor&) -> Status { return Internal("disk full"); });
  r = in.Call("transform_params", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "in @transform_params: binding %sa: disk full");
}

// call_tir's tir_vars (a shape value) reach the kernel after its tensors,
// as a 1-D int64 tensor, with the symbolic sizes of this call.
TEST(InterpreterTest, CallTirPassesTirVars) {
  Module m = testing::ParseOrFail(R"(
extern @row(%a: Tensor[(3, 2), float32], %i: Prim[int64]) -> Tensor[(2,), float32]
def @main(%x: Tensor[(3, 2), float32], %s: Shape[(i,)]) -> Tensor[(2,), float32] {
  call_tir(@row, (%x,), shape[(i,)], sinfo_args=[Tensor[(2,), float32]])
}
)");
  Interpreter in(m);
  in.RegisterKernel("row", [](const std::vector<Tensor>& args, const Type&) -> StatusOr<Tensor> {
    if (args.size() != 2 || args[1].shape != std::vector<int64_t>{1})
      return InvalidArgument("want x and tir_vars");
    int64_t i = args[1].GetInt(0);
    return MakeTensor(DataType::kFloat32, {2},
                      [&](int64_t j) { return args[0].GetDouble(i * 2 + j); });
  });
  Tensor x =
      MakeTensor(DataType::kFloat32, {3, 2}, [](int64_t k) { return static_cast<double>(k); });
  auto r = in.Call("main", {Value::OfTensor(x), Value::OfTuple({IntValue(2)})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->tensor.GetDouble(0), 4);
  EXPECT_EQ((*r)->tensor.GetDouble(1), 5);

  // A primitive argument (prim[i]) reaches the kernel as a 0-d int64 tensor.
  Module m2 = testing::ParseOrFail(R"(
extern @row2(%a: Tensor[(3, 2), float32], %i: Prim[int64]) -> Tensor[(2,), float32]
def @main(%x: Tensor[(3, 2), float32], %s: Shape[(i,)]) -> Tensor[(2,), float32] {
  call_tir(@row2, (%x, prim[i * 2 - 2]), sinfo_args=[Tensor[(2,), float32]])
}
)");
  Interpreter in2(m2);
  in2.RegisterKernel("row2", [](const std::vector<Tensor>& args, const Type&) -> StatusOr<Tensor> {
    if (args.size() != 2 || !args[1].shape.empty())
      return InvalidArgument("want x and a 0-d index");
    int64_t i = args[1].GetInt(0);
    return MakeTensor(DataType::kFloat32, {2},
                      [&](int64_t j) { return args[0].GetDouble(i * 2 + j); });
  });
  auto r2 = in2.Call("main", {Value::OfTensor(x), Value::OfTuple({IntValue(2)})});
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ((*r2)->tensor.GetDouble(0), 4);  // row i * 2 - 2 = 2
}

TEST(InterpreterTest, ExternKernelsComeFromTheRegistry) {
  Module m = testing::ParseOrFail(R"(
extern @transpose(%a: Tensor[(2, 3), float32]) -> Tensor[(3, 2), float32]
extern @unknown_kernel(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(3, 2), float32] {
  call_tir(@transpose, (%x,), sinfo_args=[Tensor[(3, 2), float32]])
}
def @other(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  call_tir(@unknown_kernel, (%x,), sinfo_args=[Tensor[(2, 3), float32]])
}
)");
  Interpreter in(m);
  Tensor x = MakeTensor(DataType::kFloat32, {2, 3}, [](int64_t i) { return i; });
  auto r = in.Call("main", {Value::OfTensor(x)});  // built-in kernel of the SDK
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->tensor.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*r)->tensor.GetDouble(1), 3);
  r = in.Call("other", {Value::OfTensor(x)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no kernel registered for extern @unknown_kernel"),
            std::string::npos);
  // A kernel given to this interpreter wins over the registry's.
  in.RegisterKernel("transpose", [](const std::vector<Tensor>& t, const Type&) -> StatusOr<Tensor> {
    return t[0];
  });
  r = in.Call("main", {Value::OfTensor(x)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->tensor.shape, (std::vector<int64_t>{2, 3}));
}

TEST(InterpreterTest, TupleResultKernels) {
  // A kernel with a tuple function gives a tuple-typed call_tir its tuple;
  // a tensor-typed call of it (it has no tensor function) is an error, as
  // is a tuple of the wrong arity.
  ExternKernelDef d;
  d.name = "interpreter_test_halves";
  d.origin = "interpreter_test";
  d.tuple_fn = [](const std::vector<Tensor>& in, const Type&) -> StatusOr<std::vector<Tensor>> {
    const Tensor& a = in.at(0);
    int64_t h = a.shape[0] / 2;
    return std::vector<Tensor>{
        MakeTensor(a.dtype, {h}, [&](int64_t i) { return a.GetDouble(i); }),
        MakeTensor(a.dtype, {h}, [&](int64_t i) { return a.GetDouble(h + i); })};
  };
  ASSERT_TRUE(KernelRegistry::Global().Register(d).ok());
  Module m = testing::ParseOrFail(R"(
extern @interpreter_test_halves(%a: Tensor[(4,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32])
def @main(%x: Tensor[(4,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) {
  call_tir(@interpreter_test_halves, (%x,), sinfo_args=[Tensor[(2,), float32], Tensor[(2,), float32]])
}
def @one(%x: Tensor[(4,), float32]) -> Tensor[(2,), float32] {
  call_tir(@interpreter_test_halves, (%x,), sinfo_args=[Tensor[(2,), float32]])
}
def @three(%x: Tensor[(4,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32], Tensor[(2,), float32]) {
  call_tir(@interpreter_test_halves, (%x,), sinfo_args=[Tensor[(2,), float32], Tensor[(2,), float32], Tensor[(2,), float32]])
}
)");
  Interpreter in(m);
  auto r = in.Call("main", {Value::OfTensor(Vec({1, 2, 3, 4}))});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->fields.size(), 2u);
  EXPECT_EQ((*r)->fields[0]->tensor.GetDouble(1), 2);
  EXPECT_EQ((*r)->fields[1]->tensor.GetDouble(0), 3);
  r = in.Call("one", {Value::OfTensor(Vec({1, 2, 3, 4}))});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("has only a tuple result"), std::string::npos)
      << r.status().message();
  r = in.Call("three", {Value::OfTensor(Vec({1, 2, 3, 4}))});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("returned 2 tensors for a 3-tuple"), std::string::npos)
      << r.status().message();
}

TEST(InterpreterTest, IntegerOpsAreExact) {
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(1,), int64]) -> Tensor[(1,), int64] {
  add(%x, const<Tensor[(1,), int64]>[1])
}
)");
  Interpreter in(m);
  const int64_t big = (int64_t{1} << 60) + 1;
  auto r = in.Call(
      "main",
      {Value::OfTensor(*MakeIntTensor(DataType::kInt64, {1}, [&](int64_t) { return big; }))});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->tensor.GetInt(0), big + 1);
  r = in.Call("main", {Value::OfTensor(*MakeIntTensor(DataType::kInt64, {1}, [](int64_t) {
                return std::numeric_limits<int64_t>::max();
              }))});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("add: int64 overflow"), std::string::npos)
      << r.status().message();
}

// A freed buffer is reused, zeroed, by the next allocation of its size; the
// kept bytes never take live + kept above the peak; a buffer may outlive
// the tracker.
TEST(MemoryTrackerTest, CountsBorrowedBytesUntilTheLastReferenceGoes) {
  auto keepalive = std::make_shared<std::string>(5000, 'x');
  std::weak_ptr<std::string> watch = keepalive;
  MemoryTracker m;
  auto held = m.Allocate(1000);
  auto counted = m.Count(std::make_shared<const TensorBytes>(keepalive->data(), keepalive->size(),
                                                             std::move(keepalive)));
  EXPECT_EQ(m.live(), 6000u);
  EXPECT_EQ(m.peak(), 6000u);
  EXPECT_TRUE(counted->borrowed());
  EXPECT_EQ(counted->size(), 5000u);
  auto copy = counted;
  counted.reset();
  EXPECT_EQ(m.live(), 6000u);  // a copy still holds it
  EXPECT_FALSE(watch.expired());
  copy.reset();
  EXPECT_EQ(m.live(), 1000u);
  EXPECT_TRUE(watch.expired());  // the borrowed memory is released with it
  EXPECT_EQ(m.kept(), 0u);       // and never pooled
  EXPECT_EQ(m.peak(), 6000u);
}

TEST(MemoryTrackerTest, ReusesFreedBuffersWithinThePeak) {
  constexpr size_t kBig = 1 << 20;
  std::shared_ptr<WritableTensorBytes> survivor;
  {
    MemoryTracker m;
    auto a = m.Allocate(kBig);
    const char* where = a->data();
    std::memset(a->mutable_data(), 0x5a, kBig);
    a.reset();
    EXPECT_EQ(m.live(), 0u);
    EXPECT_EQ(m.kept(), kBig);
    auto b = m.Allocate(kBig);
    EXPECT_EQ(b->data(), where);  // the same memory, handed out again
    EXPECT_EQ(m.kept(), 0u);
    EXPECT_EQ(b->view().find_first_not_of('\0'), std::string::npos);  // zeroed
    EXPECT_EQ(m.peak(), kBig);
    // Two live buffers of another size: the peak is 3 MiB.
    auto c = m.Allocate(kBig), d = m.Allocate(kBig);
    EXPECT_EQ(m.peak(), 3 * kBig);
    b.reset();
    c.reset();
    d.reset();
    EXPECT_EQ(m.live(), 0u);
    EXPECT_LE(m.live() + m.kept(), m.peak());
    EXPECT_EQ(m.kept(), 3 * kBig);
    // A small buffer is never kept, but it is new memory: with the peak
    // reached, one kept buffer goes to make room for it.
    m.Allocate(100).reset();
    EXPECT_EQ(m.kept(), 2 * kBig);
    // New memory of another size evicts kept buffers: live + kept <= peak.
    auto e = m.Allocate(2 * kBig);
    EXPECT_EQ(m.kept(), kBig);
    EXPECT_EQ(m.peak(), 3 * kBig);
    EXPECT_LE(m.live() + m.kept(), m.peak());
    e.reset();
    // ReleaseKept frees what is kept and leaves the peak as it was.
    EXPECT_EQ(m.kept(), 3 * kBig);
    m.ReleaseKept();
    EXPECT_EQ(m.kept(), 0u);
    EXPECT_EQ(m.peak(), 3 * kBig);
    auto f = m.Allocate(kBig);  // new memory again, and kept again once freed
    f.reset();
    EXPECT_EQ(m.kept(), kBig);
    // ResetPeak makes live the peak: nothing may be kept then.
    m.ResetPeak();
    EXPECT_EQ(m.kept(), 0u);
    survivor = m.Allocate(kBig);
  }
  survivor.reset();  // its tracker is gone: the release must not touch freed memory (ASan)
}

}  // namespace
}  // namespace plir
