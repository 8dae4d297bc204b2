// Google Benchmark suite of the IR core and the core plugin passes, on
// generated models at 1k, 10k, 100k and 1M bindings.
//
//   bazel run -c opt //bench:ir_bench -- --benchmark_format=json > out.json
//   bench/run.sh      # all of it, then RESULTS.md and the chart
//
// Counters: bindings/s ("items_per_second"), bytes/s where text or bytes
// are involved, and for loads the resident memory per binding of the loaded
// module (RSS before and after, divided by bindings).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "bench/workloads.h"
#include "driver/plugin_loader.h"
#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "passes/pass_manager.h"

namespace plir::bench {
namespace {

// Generated once per (model, size) and shared by the benchmarks.
const Module& Model(const std::string& kind, size_t n) {
  static std::mutex mu;
  static std::map<std::pair<std::string, size_t>, Module> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(kind, n);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  // "chain1": the chain model as ONE function of n bindings.
  Module m = kind == "resnet"        ? ResNetModel(n)
             : kind == "transformer" ? TransformerModel(n)
             : kind == "chain1"      ? ChainModel(n, n)
                                     : ChainModel(n);
  return cache.emplace(key, m).first->second;
}

const std::string& Text(const std::string& kind, size_t n) {
  static std::map<std::pair<std::string, size_t>, std::string> cache;
  auto key = std::make_pair(kind, n);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, PrintModule(Model(kind, n))).first;
  return it->second;
}

size_t RssBytes() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0, rss = 0;
  in >> pages >> rss;
  return rss * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Bytes of node storage a module holds: every distinct node once, at the size
// its allocation takes (inline operands included; 8-byte size classes),
// plus the vectors of functions and bodies. Types and ops are interned and
// shared by every module, so they are not counted. An exact figure, where
// an RSS delta inside a process that reuses freed node memory is not.
size_t NodeBytes(const Module& m) {
  class Sizer : public IRVisitor {
   public:
    Sizer() { visit_types_ = false; }
    size_t bytes = 0;
    std::unordered_set<const Node*> seen;

   protected:
    bool Enter(const Node* n, bool) override {
      if (!seen.insert(n).second) return false;
      size_t b = 0;
      switch (n->kind()) {
        case NodeKind::kCall:
          b = static_cast<const CallNode*>(n)->AllocSize();
          break;
        case NodeKind::kTuple:
          b = static_cast<const TupleNode*>(n)->AllocSize();
          break;
        case NodeKind::kBindingBlock:
          b = static_cast<const BindingBlockNode*>(n)->AllocSize();
          break;
        case NodeKind::kVar:
          b = sizeof(VarNode);
          break;
        case NodeKind::kVarBinding:
          b = sizeof(VarBindingNode);
          break;
        case NodeKind::kSeqExpr:
          b = sizeof(SeqExprNode) +
              static_cast<const SeqExprNode*>(n)->blocks().size() * sizeof(Block);
          break;
        case NodeKind::kFunction:
          b = sizeof(FunctionNode) +
              static_cast<const FunctionNode*>(n)->params().size() * sizeof(Var);
          break;
        case NodeKind::kOp:
          return false;  // interned
        default:
          b = 32;
          break;  // small leaves (globals, literals, ...)
      }
      bytes += (b + 7) / 8 * 8;
      return true;
    }
  } sizer;
  sizer.WalkModule(m);
  return sizer.bytes;
}

void Done(benchmark::State& state, size_t n, size_t bytes = 0) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  if (bytes) state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["bindings"] = static_cast<double>(n);
}

// Writes the module to a string per iteration; reports bytes/s.
template <typename F>
void SaveBench(benchmark::State& state, size_t n, const Module& m, F save) {
  size_t bytes = 0;
  for (auto _ : state) {
    std::string s = save(m);
    bytes = s.size();
    benchmark::DoNotOptimize(s);
  }
  Done(state, n, bytes);
}

#define MODEL_BENCH(NAME) void NAME(benchmark::State& state, const std::string& kind)

MODEL_BENCH(Parse) {
  size_t n = state.range(0);
  const std::string& text = Text(kind, n);
  for (auto _ : state) {
    auto m = ParseModule(text);
    if (!m.ok()) state.SkipWithError(m.status().message().c_str());
    benchmark::DoNotOptimize(m);
  }
  Done(state, n, text.size());
}

MODEL_BENCH(Print) {
  size_t n = state.range(0);
  SaveBench(state, n, Model(kind, n), [](const Module& m) { return PrintModule(m); });
}

MODEL_BENCH(TextRoundTrip) {  // parse + verify + print
  size_t n = state.range(0);
  const std::string& text = Text(kind, n);
  for (auto _ : state) {
    auto m = ParseModule(text);
    Status s = Verify(*m);
    std::string out = PrintModule(*m);
    benchmark::DoNotOptimize(out);
    if (!s.ok()) state.SkipWithError("verify failed");
  }
  Done(state, n, text.size());
}

MODEL_BENCH(JsonSave) {
  size_t n = state.range(0);
  SaveBench(state, n, Model(kind, n), [](const Module& m) { return SaveJson(m); });
}

// Loads `data` with `load` per iteration; reports bytes/s and the resident
// memory the loaded module takes per binding.
void LoadBench(benchmark::State& state, size_t n, const std::string& data,
               StatusOr<Module> (*load)(std::string_view)) {
  size_t rss_delta = 0;
  for (auto _ : state) {
    malloc_trim(0);
    size_t before = RssBytes();
    auto m = load(data);
    size_t after = RssBytes();
    rss_delta = after > before ? after - before : 0;
    if (!m.ok()) state.SkipWithError(m.status().message().c_str());
    benchmark::DoNotOptimize(m);
  }
  Done(state, n, data.size());
  state.counters["rss_per_binding"] = static_cast<double>(rss_delta) / n;
  if (auto m = load(data); m.ok())
    state.counters["node_bytes_per_binding"] = static_cast<double>(NodeBytes(*m)) / n;
}

MODEL_BENCH(JsonLoad) {
  size_t n = state.range(0);
  LoadBench(state, n, SaveJson(Model(kind, n)), &LoadJson);
}

MODEL_BENCH(BinarySave) {
  size_t n = state.range(0);
  SaveBench(state, n, Model(kind, n), [](const Module& m) { return SaveBinary(m); });
}

MODEL_BENCH(BinaryLoad) {
  size_t n = state.range(0);
  LoadBench(state, n, SaveBinary(Model(kind, n)), &LoadBinary);
}

MODEL_BENCH(BinaryRoundTrip) {
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  for (auto _ : state) {
    auto back = LoadBinary(SaveBinary(m));
    benchmark::DoNotOptimize(back);
  }
  Done(state, n);
}

MODEL_BENCH(Copy) {
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  for (auto _ : state) {
    Module copy = m;
    benchmark::DoNotOptimize(copy);
  }
  Done(state, n);
}

MODEL_BENCH(UpdateOneFunction) {  // copy, then replace one function
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  Item last = m.items().back();
  for (auto _ : state) {
    Module copy = m;
    Module updated = copy.WithItem(last);
    benchmark::DoNotOptimize(updated);
  }
  Done(state, n);
}

// Freeing a module node by node: the cost plir-opt no longer pays at exit
// (it parks its modules in a never-destroyed holder).
MODEL_BENCH(Teardown) {
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  for (auto _ : state) {
    state.PauseTiming();
    // Fresh nodes, owned only here (a unique_ptr rather than std::optional:
    // GCC 12 warns falsely about the optional's destructor at -O1).
    auto copy = std::make_unique<Module>(DeepCopy(m));
    state.ResumeTiming();
    copy.reset();
  }
  Done(state, n);
}

MODEL_BENCH(DeepCopyModule) {
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  for (auto _ : state) benchmark::DoNotOptimize(DeepCopy(m));
  Done(state, n);
}

MODEL_BENCH(Hash) {
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  for (auto _ : state) benchmark::DoNotOptimize(StructuralHash(m));
  Done(state, n);
}

MODEL_BENCH(Equal) {  // against a deep copy: every node is compared
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  Module other = DeepCopy(m);
  for (auto _ : state) {
    bool eq = StructuralEqual(m, other);
    if (!eq) state.SkipWithError("not equal");
  }
  Done(state, n);
}

MODEL_BENCH(VerifyModule) {
  size_t n = state.range(0);
  const Module& m = Model(kind, n);
  for (auto _ : state) benchmark::DoNotOptimize(Verify(m));
  Done(state, n);
}

// What plir-opt runs on a text input (VerifyInput): the module as the
// parser returns it, verified without the checks the parser ensured.
MODEL_BENCH(VerifyParsedModule) {
  size_t n = state.range(0);
  StatusOr<Module> m = ParseModule(Text(kind, n));
  if (!m.ok()) {
    state.SkipWithError(m.status().message().c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(VerifyParsed(*m));
  Done(state, n);
}

void Pass(benchmark::State& state, const std::string& plugin, const std::string& pass) {
  static PluginLoader* loader = [] {
    auto* l = new PluginLoader();
    for (const std::string& d : DefaultPluginDirs()) l->AddSearchDir(d);
    return l;
  }();
  if (!PassRegistry::Global().Lookup(pass)) {
    auto r = loader->LoadByName(plugin);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
  }
  size_t n = state.range(0);
  const Module& m = Model("chain", n);
  auto step = MakePassStep(PassRegistry::Global(), pass);
  for (auto _ : state) {
    PassContext ctx;
    ctx.num_threads = 1;
    auto out = PassManager().Run({*step}, m, ctx);
    if (!out.ok()) state.SkipWithError(out.status().message().c_str());
    benchmark::DoNotOptimize(out);
  }
  Done(state, n);
}

// Structural hash of a module holding one large constant (a bound weight,
// MiB given by the argument): the first hash reads its bytes, every later
// one (of this module, a copy, or any module sharing the node) takes the
// hash kept in the node (apache/tvm#14675: 40 s instead of 1 s).
void HashLargeConstant(benchmark::State& state, bool first) {
  size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  auto make = [&]() {
    auto c = ConstantNode::Make(
        TensorTypeNode::Make({Dim::Const(static_cast<int64_t>(bytes / 4))}, DataType::kFloat32),
        std::make_shared<const TensorBytes>(std::string(bytes, '\x01')));
    return *c;
  };
  Ref<ConstantNode> kept = make();
  if (!first) benchmark::DoNotOptimize(StructuralHash(kept.get()));  // the one that reads the bytes
  for (auto _ : state) {
    if (first) {
      state.PauseTiming();
      kept = make();  // a node whose hash was never computed
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(StructuralHash(kept.get()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK_CAPTURE(HashLargeConstant, first, true)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(HashLargeConstant, again, false)
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMicrosecond);

// plir-opt start-up: a process that loads plugins and reads an empty module.
void PlirOptStartup(benchmark::State& state) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return state.SkipWithError("no /proc/self/exe");
  buf[n] = '\0';
  std::string dir = std::string(buf).substr(0, std::string(buf).rfind('/'));
  std::string opt = dir + "/../cli/plir-opt";
  std::vector<std::string> plugins;
  for (const char* p : {"canonicalize_bindings", "common_subexpression_elimination",
                        "dead_code_elimination", "fold_constant", "lazy_transform_params",
                        "lift_transform_params", "normalize", "to_basic_block_normal_form"})
    plugins.push_back(dir + "/../plugins/" + p + "/libplir_" + p + ".so");
  for (const char* p : {"test_good", "test_misbehaving", "test_noop"})
    plugins.push_back(dir + "/../testing/plugins/libplir_" + std::string(p) + ".so");
  std::string empty = "/tmp/plir_bench_empty.plir";
  std::ofstream(empty) << "";
  std::string cmd = opt;
  for (const std::string& p : plugins) cmd += " --plugin " + p;
  cmd += " " + empty + " > /dev/null";
  for (auto _ : state) {
    if (std::system(cmd.c_str()) != 0) return state.SkipWithError(("failed: " + cmd).c_str());
  }
  state.counters["plugins"] = static_cast<double>(plugins.size());
}
BENCHMARK(PlirOptStartup)->Unit(benchmark::kMillisecond);

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1000, 10000, 100000, 1000000}) b->Arg(n);
  b->Unit(benchmark::kMillisecond);
  // Rates from wall time: parsing, printing and verifying use threads, and
  // CPU time counts only the calling thread.
  b->UseRealTime();
}

}  // namespace
}  // namespace plir::bench

using namespace plir::bench;

#define REG(F, KIND) BENCHMARK_CAPTURE(F, KIND, std::string(#KIND))->Apply(Sizes)
REG(Parse, chain);
REG(Print, chain);
REG(TextRoundTrip, chain);
REG(JsonSave, chain);
REG(JsonLoad, chain);
REG(BinarySave, chain);
REG(BinaryLoad, chain);
REG(BinaryRoundTrip, chain);
REG(Copy, chain);
REG(UpdateOneFunction, chain);
REG(DeepCopyModule, chain);
REG(Hash, chain);
REG(Equal, chain);
REG(VerifyModule, chain);
REG(VerifyParsedModule, chain);
REG(Teardown, chain);
// The single-large-function shape: per-binding cost must stay flat with size.
REG(Parse, chain1);
REG(Print, chain1);
REG(TextRoundTrip, chain1);
REG(VerifyModule, chain1);
REG(VerifyParsedModule, chain1);
REG(BinaryLoad, chain1);
REG(BinaryRoundTrip, chain1);
REG(UpdateOneFunction, chain1);
REG(Hash, chain1);
REG(Equal, chain1);
REG(Teardown, chain1);
REG(Parse, resnet);
REG(Print, resnet);
REG(BinaryLoad, resnet);
REG(Hash, resnet);
REG(Parse, transformer);
REG(Print, transformer);
REG(BinaryLoad, transformer);
REG(Hash, transformer);
BENCHMARK_CAPTURE(Pass, Normalize, "normalize", "Normalize")->Apply(Sizes);
BENCHMARK_CAPTURE(Pass, CanonicalizeBindings, "canonicalize_bindings", "CanonicalizeBindings")
    ->Apply(Sizes);
BENCHMARK_CAPTURE(Pass, DeadCodeElimination, "dead_code_elimination", "DeadCodeElimination")
    ->Apply(Sizes);
BENCHMARK_CAPTURE(Pass, CommonSubexpressionElimination, "common_subexpression_elimination",
                  "CommonSubexpressionElimination")
    ->Apply(Sizes);
BENCHMARK_CAPTURE(Pass, FoldConstant, "fold_constant", "FoldConstant")->Apply(Sizes);

BENCHMARK_MAIN();
