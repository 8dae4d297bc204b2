// Passes that take the process down in every way a plugin can: a segfault,
// abort(), an endless loop, a stack overflow, exit(), unbounded memory, and
// a crash on one pattern only (for plir-reduce), and an op whose kernel
// segfaults (FoldConstant runs it). plir-opt must survive them all
// (cli/isolation_test.sh). And ops whose kernels abort, call exit(), loop
// or hog memory (test.abort_kernel, test.exit_kernel, test.loop_kernel,
// test.hog_kernel: one tensor in, the same type out), which plir-run must
// survive as well as test.crash_kernel (cli/plir_run_sandbox_test.sh).
// Never installed.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ir/op.h"
#include "ir/visitor.h"
#include "kernels/tensor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

int* volatile g_null = nullptr;

// A real segfault, also under UBSan (which would report the null store and
// exit instead).
__attribute__((noinline, no_sanitize("undefined"))) void WriteNull(int v) { *g_null = v; }

// Recurses until the stack runs out (the bound is never reached).
int Recurse(int depth, int bound) {
  volatile char pad[4096];
  pad[0] = static_cast<char>(depth);
  if (depth >= bound) return pad[0];
  return Recurse(depth + 1, bound) + pad[0];
}
int* volatile g_bound = nullptr;

// Finds a call subtract(x, x): the same variable twice.
class SelfSubtract : public IRVisitor {
 public:
  bool found = false;

 protected:
  bool Enter(const Node* n, bool) override {
    if (found) return false;
    if (auto* c = As<CallNode>(n); c && c->args().size() == 2) {
      auto* op = As<OpNode>(c->callee().get());
      if (op && op->name() == "subtract" && c->args()[0].get() == c->args()[1].get() &&
          c->args()[0]->kind() == NodeKind::kVar)
        found = true;
    }
    return !found;
  }
};

// An op of one tensor whose kernel misbehaves.
OpDef KernelOp(const char* name, const char* description, OpEvalFn eval) {
  OpDef d;
  d.name = name;
  d.description = description;
  d.min_args = d.max_args = 1;
  d.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> { return args[0]->type(); };
  d.eval = std::move(eval);
  return d;
}

PassDef Make(const char* name, const char* description, ModulePassFn fn) {
  PassDef d;
  d.info.name = name;
  d.info.description = description;
  d.module_fn = std::move(fn);
  return d;
}

Status Register(PluginHost& host) {
  PLIR_RETURN_IF_ERROR(
      host.RegisterPass(Make("TestSegfault", "writes through a null pointer",
                             [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
                               WriteNull(1);
                               return m;
                             })));
  PLIR_RETURN_IF_ERROR(
      host.RegisterPass(Make("TestAbort", "calls abort()",
                             [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
                               std::abort();
                               return m;
                             })));
  PLIR_RETURN_IF_ERROR(host.RegisterPass(Make(
      "TestLoop", "never returns", [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
        volatile unsigned spins = 0;
        while (true) spins = spins + 1u;
        return m;
      })));
  PLIR_RETURN_IF_ERROR(
      host.RegisterPass(Make("TestStackOverflow", "recurses without end",
                             [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
                               if (Recurse(0, g_bound ? *g_bound : 1 << 30) == 42) return m;
                               return m;
                             })));
  PLIR_RETURN_IF_ERROR(
      host.RegisterPass(Make("TestExit", "calls exit(0) in the middle of the run",
                             [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
                               std::exit(0);
                               return m;
                             })));
  PLIR_RETURN_IF_ERROR(
      host.RegisterPass(Make("TestHog", "allocates memory without bound",
                             [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
                               std::vector<std::vector<char>> hoard;
                               while (true) {
                                 hoard.emplace_back(64 << 20);
                                 std::memset(hoard.back().data(), 1, hoard.back().size());
                               }
                               return m;
                             })));
  PLIR_RETURN_IF_ERROR(host.RegisterPass(
      Make("TestCrashOnSelfSubtract",
           "crashes when the module has subtract(%x, %x) (a planted bug for plir-reduce)",
           [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
             SelfSubtract finder;
             finder.WalkModule(m);
             if (finder.found) WriteNull(2);
             return m;
           })));
  PLIR_RETURN_IF_ERROR(host.RegisterPass(
      Make("TestFailsOnSelfSubtract",
           "returns an internal error (a bug: a reproducer is written) when the module has "
           "subtract(%x, %x)",
           [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
             SelfSubtract finder;
             finder.WalkModule(m);
             if (finder.found) return Internal("found subtract(x, x)");
             return m;
           })));
  OpDef crash;
  crash.name = "test.crash_kernel";
  crash.description = "an op whose evaluation kernel writes through a null pointer";
  crash.min_args = crash.max_args = 1;
  crash.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    return args[0]->type();
  };
  crash.eval = [](const std::vector<Tensor>& args, const Attrs&) -> StatusOr<Tensor> {
    WriteNull(3);
    return args[0];
  };
  PLIR_RETURN_IF_ERROR(host.RegisterOp(std::move(crash)));
  using Args = const std::vector<Tensor>&;
  PLIR_RETURN_IF_ERROR(host.RegisterOp(KernelOp("test.abort_kernel", "its kernel calls abort()",
                                                [](Args args, const Attrs&) -> StatusOr<Tensor> {
                                                  std::abort();
                                                  return args[0];
                                                })));
  PLIR_RETURN_IF_ERROR(host.RegisterOp(KernelOp("test.exit_kernel", "its kernel calls exit(0)",
                                                [](Args args, const Attrs&) -> StatusOr<Tensor> {
                                                  std::exit(0);
                                                  return args[0];
                                                })));
  PLIR_RETURN_IF_ERROR(host.RegisterOp(KernelOp("test.loop_kernel", "its kernel never returns",
                                                [](Args args, const Attrs&) -> StatusOr<Tensor> {
                                                  volatile unsigned spins = 0;
                                                  while (true) spins = spins + 1u;
                                                  return args[0];
                                                })));
  PLIR_RETURN_IF_ERROR(
      host.RegisterOp(KernelOp("test.hog_kernel", "its kernel allocates memory without bound",
                               [](Args args, const Attrs&) -> StatusOr<Tensor> {
                                 std::vector<std::vector<char>> hoard;
                                 while (true) {
                                   hoard.emplace_back(64 << 20);
                                   std::memset(hoard.back().data(), 1, hoard.back().size());
                                 }
                                 return args[0];
                               })));
  return Status::Ok();
}

}  // namespace

PLIR_PLUGIN("test_crashers", "1.2.3", Register)
