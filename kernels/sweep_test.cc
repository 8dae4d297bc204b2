// Every core op with a reference kernel, called on every dtype, on shapes
// from 0-d to 4-D (empty ones too) and with hostile attributes: each call
// returns a value or an error, never crashes, hangs or reads out of bounds
// (run under --config=asan in CI). And every pure core op that computes
// tensors has a kernel.
#include <chrono>
#include <limits>
#include <set>

#include "kernels/internal/kernel_test_util.h"

namespace plir {
namespace {
using namespace testing_kernels;

const DataType kDtypes[] = {DataType::kBool,    DataType::kInt8,     DataType::kInt16,
                            DataType::kInt32,   DataType::kInt64,    DataType::kUInt8,
                            DataType::kUInt16,  DataType::kUInt32,   DataType::kUInt64,
                            DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                            DataType::kFloat64};

// Ops without a kernel on purpose: calls, casts of types, markers, and
// split (a tuple result: kernels return one tensor).
const std::set<std::string> kNoKernel = {
    "call_tir", "call_packed", "match_cast", "vm.kill_object", "builtin.stop_lift_params", "split"};

TEST(KernelSweepTest, EveryComputingCoreOpHasAKernel) {
  int with_kernel = 0;
  for (const std::string& name : OpRegistry::Global().Names()) {
    Op op = OpRegistry::Global().Lookup(name);
    if (op->def().origin != "core" || kNoKernel.count(name)) continue;
    EXPECT_TRUE(OpKernelTable::Global().Lookup(name)) << name << " has no reference kernel";
    EXPECT_FALSE(op->def().eval) << name;  // kernels live in kernels/, not in the definition
    ++with_kernel;
  }
  EXPECT_GE(with_kernel, 125);
}

Tensor Filled(DataType dt, std::vector<int64_t> shape) {
  return MakeTensor(dt, shape, [](int64_t i) { return static_cast<double>(i % 5) - 2; });
}

std::vector<Attrs> HostileAttrs() {
  const int64_t huge = int64_t{1} << 40, min = std::numeric_limits<int64_t>::min();
  std::vector<Attrs> v = {Attrs()};
  auto add = [&](auto... kv) { v.push_back(A(kv...)); };
  add("axis", huge);
  add("axis", L({-7}));
  add("axis", L({0, 0}));
  add("axis", min);
  add("keepdims", true, "axis", L({1}));
  add("pool_size", L({huge}));
  add("pool_size", L({3, 3}), "strides", L({0, 0}));
  add("pool_size", L({2}), "padding", L({-1}));
  add("pool_size", L({2}), "dilation", L({huge}));
  add("pool_size", L({2, 2}), "ceil_mode", true, "count_include_pad", true, "padding", L({1}));
  add("output_size", L({huge}));
  add("output_size", L({0}));
  add("repeats", L({-1}));
  add("repeats", huge);
  add("repeats", L({huge, huge}));
  add("depth", huge);
  add("depth", int64_t{-1});
  add("pad_width", L({huge, huge}));
  add("pad_width", L({-huge, 0}));
  add("pad_width", L({2, 2, 2, 2}), "pad_mode", "reflect");
  add("groups", int64_t{0});
  add("groups", int64_t{3});
  add("k", min);
  add("num_groups", int64_t{0});
  add("num_groups", int64_t{2});
  add("axes", L({5}));
  add("batch_dims", huge);
  add("subscripts", "ij,jk->ik");
  add("subscripts", "...,...->...");
  add("reduction", "mul");
  add("dtype", "int8");
  add("exclusive", true, "reverse", true, "axis", int64_t{0});
  add("strides", L({huge}), "padding", L({huge}));
  add("output_padding", L({5}));
  add("layout", "NHWC");
  add("shape", L({-1}));
  return v;
}

TEST(KernelSweepTest, NoKernelCrashesOnAnyDtypeShapeOrAttribute) {
  int64_t saved = MaxTensorBytes();
  SetMaxTensorBytes(int64_t{1} << 26);  // hostile sizes fail fast, and small
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {3}, {2, 3}, {1, 2, 3}, {1, 2, 2, 3}, {2, 0, 2}, {1, 1, 2, 2, 2}};
  std::vector<Attrs> attrs = HostileAttrs();
  auto start = std::chrono::steady_clock::now();
  int64_t calls = 0, ok = 0;
  for (const std::string& name : OpRegistry::Global().Names()) {
    Op op = OpRegistry::Global().Lookup(name);
    const OpKernel* k = OpKernelTable::Global().Lookup(name);
    if (!k) continue;
    int lo = std::max(op->def().min_args, 0), hi = op->def().max_args < 0 ? 4 : op->def().max_args;
    for (int n = lo; n <= hi; ++n)
      for (DataType dt : kDtypes)
        for (const auto& shape : shapes)
          for (const Attrs& a : attrs) {
            std::vector<Tensor> args;
            for (int i = 0; i < n; ++i) {
              // Later operands: the same dtype, or int64 (indices), or 0-d.
              DataType adt = i > 0 && (calls + i) % 3 == 0 ? DataType::kInt64 : dt;
              args.push_back(
                  Filled(adt, i > 0 && (calls + i) % 4 == 0 ? std::vector<int64_t>{} : shape));
            }
            ++calls;
            StatusOr<Tensor> r = k->eval(args, a);
            if (r.ok()) {
              ++ok;
              // A result is a well-formed tensor.
              ASSERT_TRUE(r->data) << name;
              ASSERT_EQ(r->NumBytes(),
                        static_cast<size_t>(r->NumElements()) * DataTypeSize(r->dtype))
                  << name;
            }
          }
  }
  SetMaxTensorBytes(saved);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(calls, 10000);
  EXPECT_GT(ok, 1000);
  EXPECT_LT(secs, 120) << "the sweep is slow: " << calls << " calls";
}

}  // namespace
}  // namespace plir
