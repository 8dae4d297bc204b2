// Proof by execution: FuseOps changes where values are computed, not what
// they are. A model of core ops and extern kernels (with kernels registered
// in the interpreter) runs before and after FuseOps on the same inputs; the
// outputs are bitwise equal, and the fused module calls Primitive functions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "interpreter/interpreter.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "testing/plugin_test_util.h"

namespace plir {
namespace {

constexpr char kModel[] = R"(
extern @exp(%a: Tensor[(4, 16), float32]) -> Tensor[(4, 16), float32] attrs {op_pattern = 0}
extern @scale_rows(%a: Tensor[(4, 16), float32], %s: Tensor[(4, 1), float32]) -> Tensor[(4, 16), float32] attrs {op_pattern = 1}
extern @left_half(%a: Tensor[(4, 16), float32]) -> Tensor[(4, 8), float32] attrs {op_pattern = 2}
extern @right_half(%a: Tensor[(4, 16), float32]) -> Tensor[(4, 8), float32] attrs {op_pattern = 2}

def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(1, 4, 1, 1), float32], %m: Tensor[(36, 16), float32], %s: Tensor[(4, 1), float32]) -> (Tensor[(16, 4), float32], Tensor[(1, 4, 6, 6), float32], Tensor[(4, 8), float32]) attrs {global_symbol = "main"} {
  dataflow {
    %c = nn.conv2d(%x, %w, padding=[0, 0, 0, 0]);
    %cb = add(%c, %b);
    %r = nn.relu(%cb);
    %rs = reshape(%r, shape=[4, 36]);
    %mm = matmul(%rs, %m);
    %e = call_tir(@exp, (%mm,), sinfo_args=[Tensor[(4, 16), float32]]);
    %sc = call_tir(@scale_rows, (%e, %s), sinfo_args=[Tensor[(4, 16), float32]]);
    %d1 = add(%sc, const<Tensor[(), float32]>[1]);
    %d2 = subtract(%sc, const<Tensor[(), float32]>[0.5]);
    %j = multiply(%d1, %d2);
    %h0 = call_tir(@left_half, (%j,), sinfo_args=[Tensor[(4, 8), float32]]);
    %h1 = call_tir(@right_half, (%j,), sinfo_args=[Tensor[(4, 8), float32]]);
    %hs = add(%h0, %h1);
    %t = permute_dims(%j);
    %u = nn.softmax(%t, axis=1);
    output %u, %r, %hs;
  }
  %out = (%u, %r, %hs);
  %out
}
)";

// A float32 output of `shape` filled by fn(float* out).
template <typename Fn>
Tensor Make(std::vector<int64_t> shape, Fn&& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::shared_ptr<WritableTensorBytes> buf = AllocateTensorBuffer(static_cast<size_t>(n) * 4);
  fn(reinterpret_cast<float*>(buf->mutable_data()));
  Tensor t;
  t.dtype = DataType::kFloat32;
  t.shape = std::move(shape);
  t.data = std::move(buf);
  return t;
}
const float* F(const Tensor& t) { return reinterpret_cast<const float*>(t.data->data()); }

void RegisterKernels(Interpreter& in) {
  in.RegisterKernel("exp", [](const std::vector<Tensor>& a, const Type&) -> StatusOr<Tensor> {
    return Make(a[0].shape, [&](float* o) {
      for (int64_t i = 0; i < a[0].NumElements(); ++i) o[i] = std::exp(F(a[0])[i] * 0.01f);
    });
  });
  in.RegisterKernel("scale_rows",
                    [](const std::vector<Tensor>& a, const Type&) -> StatusOr<Tensor> {
                      return Make(a[0].shape, [&](float* o) {
                        for (int64_t r = 0; r < 4; ++r)
                          for (int64_t c = 0; c < 16; ++c)
                            o[r * 16 + c] = F(a[0])[r * 16 + c] * F(a[1])[r];
                      });
                    });
  for (int half = 0; half < 2; ++half)
    in.RegisterKernel(half ? "right_half" : "left_half",
                      [half](const std::vector<Tensor>& a, const Type&) -> StatusOr<Tensor> {
                        return Make({4, 8}, [&](float* o) {
                          for (int64_t r = 0; r < 4; ++r)
                            for (int64_t c = 0; c < 8; ++c)
                              o[r * 8 + c] = F(a[0])[r * 16 + half * 8 + c];
                        });
                      });
}

Module RunFuseOps(const Module& m) {
  testing::LoadPluginOrFail("plugins/fuse_ops/libplir_fuse_ops.so");
  return testing::RunPassesOrFail(m, {"FuseOps"});
}

std::vector<ValueRef> RandomInputs(const Function& f, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<ValueRef> args;
  for (const Var& p : f->params()) {
    auto* t = As<TensorTypeNode>(p->type());
    std::vector<int64_t> shape;
    for (const Dim& d : t->shape()) shape.push_back(d.value);
    args.push_back(
        Value::OfTensor(MakeTensor(t->dtype(), shape, [&](int64_t) { return dist(rng); })));
  }
  return args;
}

int CountPrimitive(const Module& m) {
  int n = 0;
  for (const Item& it : m.items())
    if (it->kind() == NodeKind::kFunction && it->attrs().Get("Primitive")) ++n;
  return n;
}

TEST(FuseOpsExecutionTest, FusedAndUnfusedComputeTheSameValues) {
  auto parsed = ParseModule(kModel);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  Module fused = RunFuseOps(*parsed);
  ASSERT_TRUE(Verify(fused).ok());
  // conv2d+add+relu, matmul+exp+scale+adds (the halves are injective after a
  // broadcast anchor group: they stay or join by the rules); at least two.
  EXPECT_GE(CountPrimitive(fused), 2) << PrintModule(fused);
  // main now calls module functions.
  std::string printed = PrintItem(fused.LookupFunction("main"));
  EXPECT_NE(printed.find("@fused_nn_conv2d_add_nn_relu("), std::string::npos) << printed;
  EXPECT_EQ(printed.find("nn.conv2d("), std::string::npos) << printed;

  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<ValueRef> args = RandomInputs(parsed->LookupFunction("main"), seed);
    Interpreter before(*parsed), after(fused);
    RegisterKernels(before);
    RegisterKernels(after);
    auto a = before.Call("main", args);
    auto b = after.Call("main", args);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    ASSERT_EQ((*a)->fields.size(), 3u);
    EXPECT_TRUE(ValuesBitwiseEqual(*a, *b)) << "seed " << seed;
  }
}

TEST(FuseOpsExecutionTest, DetectsADifference) {
  // The comparison can fail: a module whose fused form is edited (one
  // constant changed) computes a different value.
  auto parsed = ParseModule(kModel);
  ASSERT_TRUE(parsed.ok());
  std::string text = PrintModule(RunFuseOps(*parsed));
  size_t at = text.find("const<Tensor[(), float32]>[0.5]");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 31, "const<Tensor[(), float32]>[0.25]");
  auto edited = ParseModule(text);
  ASSERT_TRUE(edited.ok()) << edited.status().message();
  std::vector<ValueRef> args = RandomInputs(parsed->LookupFunction("main"), 1);
  Interpreter before(*parsed), after(*edited);
  RegisterKernels(before);
  RegisterKernels(after);
  auto a = before.Call("main", args);
  auto b = after.Call("main", args);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(ValuesBitwiseEqual(*a, *b));
}

TEST(FuseOpsTest, PrimitiveFunctionsAreLeftAloneAndEqualGroupsShareAFunction) {
  // Two equal add/relu chains share one function; running FuseOps again
  // changes nothing (the fused functions are Primitive; main has no group
  // of two left).
  Module m = testing::ParseOrFail(R"(
def @main(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) -> (Tensor[(4,), float32], Tensor[(4,), float32]) attrs {global_symbol = "main"} {
  dataflow {
    %a = add(%x, %y);
    %b = nn.relu(%a);
    %c = add(%y, %x);
    %d = nn.relu(%c);
    output %b, %d;
  }
  %r = (%b, %d);
  %r
}
)");
  Module once = RunFuseOps(m);
  EXPECT_TRUE(testing::ModulesEqual(once, R"(
def @fused_add_nn_relu(%p: Tensor[(4,), float32], %q: Tensor[(4,), float32]) -> Tensor[(4,), float32] attrs {Primitive = true} {
  dataflow {
    %a = add(%p, %q);
    %b = nn.relu(%a);
    output %b;
  }
  %b
}
def @main(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) -> (Tensor[(4,), float32], Tensor[(4,), float32]) attrs {global_symbol = "main"} {
  dataflow {
    %b = @fused_add_nn_relu(%x, %y);
    %d = @fused_add_nn_relu(%y, %x);
    output %b, %d;
  }
  %r = (%b, %d);
  %r
}
)"));
  Module twice = RunFuseOps(once);
  EXPECT_TRUE(testing::ModulesEqual(twice, once));
}

TEST(FuseOpsTest, LongChainsSplitAtMaxDepthAndEqualPiecesShareAFunction) {
  // 1024 relus in a row: groups of at most 256 bindings (max_depth); the
  // equal pieces share one function. Also a scale check: FuseOps is linear
  // in the block here, not quadratic.
  std::string text =
      "def @main(%x: Tensor[(8,), float32]) -> Tensor[(8,), float32] {\n  dataflow {\n";
  std::string prev = "%x";
  for (int i = 0; i < 1024; ++i) {
    std::string v = "%r" + std::to_string(i);
    text += "    " + v + " = nn.relu(" + prev + ");\n";
    prev = v;
  }
  text += "    output " + prev + ";\n  }\n  " + prev + "\n}\n";
  Module m = testing::ParseOrFail(text);
  Module out = RunFuseOps(m);
  int functions = 0;
  size_t largest = 0;
  for (const Item& it : out.items()) {
    if (!it->attrs().Get("Primitive")) continue;
    ++functions;
    largest = std::max(largest, Downcast<FunctionNode>(it)->body()->blocks()[0]->bindings().size());
  }
  EXPECT_LE(largest, 256u);
  EXPECT_GE(largest, 200u);
  EXPECT_LE(functions, 2);  // equal pieces deduplicated (and one shorter remainder)
  auto main_blocks = out.LookupFunction("main")->body()->blocks();
  EXPECT_LE(main_blocks[0]->bindings().size(), 6u);  // a handful of calls
  EXPECT_GE(main_blocks[0]->bindings().size(), 4u);
}

}  // namespace
}  // namespace plir
