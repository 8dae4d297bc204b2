// GFLOP/s of the conv2d, matmul and some binary elementwise kernels, fast path (im2col + OpenBLAS
// sgemm) against the reference loops, on ResNet-50's shapes and square
// sgemms. Run by bench/kernels.sh, which adds PyTorch on the same shapes
// and the machine's peak; by hand:
//
//   bazel run -c opt //bench:kernels_bench -- --benchmark_filter=Fast
//
// A FLOP is half a multiply-add (2 * N * O * OH * OW * C/groups * KH * KW
// for a convolution, 2 * m * n * k for a matmul). Counters: GFLOP/s.
#include <benchmark/benchmark.h>

#include <random>

#include "ir/attrs.h"
#include "ir/parallel.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir {
namespace {

Tensor Random(std::vector<int64_t> shape) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  return MakeTensor(DataType::kFloat32, std::move(shape), [&](int64_t) { return u(rng); });
}

Attrs ConvAttrs(int64_t stride, int64_t pad, int64_t groups) {
  auto list = [](int64_t a, int64_t b) {
    return AttrValue::List({AttrValue::Int(a), AttrValue::Int(b)});
  };
  return *Attrs::Make({{Symbol("strides"), list(stride, stride)},
                       {Symbol("padding"), list(pad, pad)},
                       {Symbol("groups"), AttrValue::Int(groups)}});
}

void Run(benchmark::State& state, const std::string& op, const std::vector<Tensor>& args,
         const Attrs& attrs, double flops, bool fast) {
  internal::SetFastKernelsEnabled(fast);
  SetDefaultThreads(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = EvalOp(op, args, attrs);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->data);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  internal::SetFastKernelsEnabled(true);
  SetDefaultThreads(0);
}

// conv2d of (1, C, H, H) with (O, C/groups, K, K).
void Conv(benchmark::State& state, int64_t C, int64_t H, int64_t O, int64_t K, int64_t stride,
          int64_t pad, int64_t groups, bool fast) {
  int64_t OH = (H + 2 * pad - K) / stride + 1;
  double flops = 2.0 * O * OH * OH * (C / groups) * K * K;
  Run(state, "nn.conv2d", {Random({1, C, H, H}), Random({O, C / groups, K, K})},
      ConvAttrs(stride, pad, groups), flops, fast);
}

// An elementwise binary op on (1, C, H, H) and a scalar or a same-shape
// operand: one FLOP per element.
void Binary(benchmark::State& state, const char* op, int64_t C, int64_t H, bool scalar, bool fast) {
  Tensor x = Random({1, C, H, H});
  Tensor y = scalar ? MakeTensor(DataType::kFloat32, {}, [](int64_t) { return 0.0; })
                    : Random({1, C, H, H});
  Run(state, op, {x, y}, Attrs(), static_cast<double>(C) * H * H, fast);
}

void Sgemm(benchmark::State& state, int64_t m, int64_t k, int64_t n, bool fast) {
  Run(state, "matmul", {Random({m, k}), Random({k, n})}, Attrs(), 2.0 * m * n * k, fast);
}

// Threads: 1 and 2 (the machine's cores; plir-run --threads).
void Threads(benchmark::internal::Benchmark* b) { b->Arg(1)->Arg(2)->UseRealTime(); }
// The reference loops take seconds per call: one iteration, one thread.
void Once(benchmark::internal::Benchmark* b) { b->Arg(1)->Iterations(1)->UseRealTime(); }

// ResNet-50: the stem, a 3x3 of stage 1, a 1x1 expansion, a strided 3x3 of
// stage 3; a MobileNet depthwise 3x3.
BENCHMARK_CAPTURE(Conv, Fast / stem_7x7s2_3x224_64, 3, 224, 64, 7, 2, 3, 1, true)->Apply(Threads);
BENCHMARK_CAPTURE(Conv, Fast / 3x3_64x56_64, 64, 56, 64, 3, 1, 1, 1, true)->Apply(Threads);
BENCHMARK_CAPTURE(Conv, Fast / 1x1_64x56_256, 64, 56, 256, 1, 1, 0, 1, true)->Apply(Threads);
BENCHMARK_CAPTURE(Conv, Fast / 3x3s2_256x28_256, 256, 28, 256, 3, 2, 1, 1, true)->Apply(Threads);
BENCHMARK_CAPTURE(Conv, Fast / dw3x3_144x56, 144, 56, 144, 3, 1, 1, 144, true)->Apply(Threads);
// More of MobileNet v2's depthwise 3x3s (stride 2; the narrow late ones)
// and a channel multiplier of 2.
BENCHMARK_CAPTURE(Conv, Fast / dw3x3s2_96x112, 96, 112, 96, 3, 2, 1, 96, true)->Apply(Threads);
BENCHMARK_CAPTURE(Conv, Fast / dw3x3_960x7, 960, 7, 960, 3, 1, 1, 960, true)->Apply(Threads);
BENCHMARK_CAPTURE(Conv, Fast / dw3x3m2_32x56, 32, 56, 64, 3, 1, 1, 32, true)->Apply(Threads);
// ReLU6's maximum and minimum against a scalar, an add of two activations.
BENCHMARK_CAPTURE(Binary, Fast / max_scalar_144x56, "maximum", 144, 56, true, true)->Apply(Threads);
BENCHMARK_CAPTURE(Binary, Fast / min_scalar_144x56, "minimum", 144, 56, true, true)->Apply(Threads);
BENCHMARK_CAPTURE(Binary, Fast / add_144x56, "add", 144, 56, false, true)->Apply(Threads);
BENCHMARK_CAPTURE(Conv, Reference / 3x3_64x56_64, 64, 56, 64, 3, 1, 1, 1, false)->Apply(Once);
BENCHMARK_CAPTURE(Sgemm, Fast / 256, 256, 256, 256, true)->Apply(Threads);
BENCHMARK_CAPTURE(Sgemm, Fast / 1024, 1024, 1024, 1024, true)->Apply(Threads);
BENCHMARK_CAPTURE(Sgemm, Fast / fc_1x2048x1000, 1, 2048, 1000, true)->Apply(Threads);
BENCHMARK_CAPTURE(Sgemm, Reference / 256, 256, 256, 256, false)->Apply(Once);

}  // namespace
}  // namespace plir

BENCHMARK_MAIN();
