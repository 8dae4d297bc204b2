// Writing a plugin: define a registration function and expand PLIR_PLUGIN.
//
//   plir::Status Register(plir::PluginHost& host) {
//     plir::PassDef def;
//     def.info.name = "MyPass";
//     def.info.description = "does something useful";
//     def.module_fn = [](const plir::Module& m, const plir::PassCallContext& c)
//         -> plir::StatusOr<plir::Module> { return m; };
//     return host.RegisterPass(std::move(def));
//   }
//   PLIR_PLUGIN("my_plugin", "0.1", Register)
//
// Registration may also stage ops (with their evaluation kernels, OpDef::eval)
// and kernels for extern functions (RegisterExternKernel). It is staged: if
// it fails, nothing it registered stays registered.
#ifndef PLIR_PASSES_PLUGIN_H_
#define PLIR_PASSES_PLUGIN_H_

#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/op.h"
#include "kernels/extern_kernels.h"
#include "passes/pass.h"
#include "passes/plugin_abi.h"
#include "passes/version.h"

namespace plir {

// What a plugin's registration function receives.
class PluginHost {
 public:
  explicit PluginHost(std::string origin) : origin_(std::move(origin)) {}
  // Stages a pass; its origin is set to this plugin.
  Status RegisterPass(PassDef def) {
    def.info.origin = origin_;
    passes_.push_back(std::move(def));
    return Status::Ok();
  }
  // Stages an op; its origin is set to this plugin.
  Status RegisterOp(OpDef def) {
    def.origin = origin_;
    ops_.push_back(std::move(def));
    return Status::Ok();
  }
  // Stages a kernel for extern functions named `def.name` (what
  // `call_tir(@name, ...)` runs in plir-run); its origin is set to this
  // plugin. An op's own kernel goes in its OpDef (`eval`).
  Status RegisterExternKernel(ExternKernelDef def) {
    def.origin = origin_;
    kernels_.push_back(std::move(def));
    return Status::Ok();
  }
  const std::string& origin() const { return origin_; }
  std::vector<PassDef>& staged_passes() { return passes_; }
  std::vector<OpDef>& staged_ops() { return ops_; }
  std::vector<ExternKernelDef>& staged_kernels() { return kernels_; }

 private:
  std::string origin_;
  std::vector<PassDef> passes_;
  std::vector<OpDef> ops_;
  std::vector<ExternKernelDef> kernels_;
};

// The layout hash a plugin and the host must agree on: the IR's node
// classes (PlirIrLayoutHash) and every type that crosses the plugin
// boundary by value or by reference (pass and op definitions, contexts,
// options, Status, the registration host) and the library types they are
// made of. A plugin built against headers that differ in any of these
// layouts has a different hash and is refused before its code runs.
constexpr uint64_t PlirBoundaryLayoutHash() {
  uint64_t h = PlirIrLayoutHash();
  auto mix = [&h](uint64_t v) { h = plir::Fnv1aMix(h, v); };
#define PLIR_MIX_TYPE(...)  \
  mix(sizeof(__VA_ARGS__)); \
  mix(alignof(__VA_ARGS__))
  PLIR_MIX_TYPE(plir::PassDef);
  PLIR_MIX_TYPE(plir::PassInfo);
  PLIR_MIX_TYPE(plir::PassKind);
  PLIR_MIX_TYPE(plir::OptionSpec);
  PLIR_MIX_TYPE(plir::OptionType);
  PLIR_MIX_TYPE(plir::PassOptions);
  PLIR_MIX_TYPE(plir::PassCallContext);
  PLIR_MIX_TYPE(plir::PassContext);
  PLIR_MIX_TYPE(plir::Instrument);
  PLIR_MIX_TYPE(plir::ModulePassFn);
  PLIR_MIX_TYPE(plir::FunctionPassFn);
  PLIR_MIX_TYPE(plir::OpDef);
  PLIR_MIX_TYPE(plir::AttrSpec);
  PLIR_MIX_TYPE(plir::AttrKind);
  PLIR_MIX_TYPE(plir::TypeInferFn);
  PLIR_MIX_TYPE(plir::Status);
  PLIR_MIX_TYPE(plir::StatusCode);
  PLIR_MIX_TYPE(plir::StatusOr<plir::Module>);
  PLIR_MIX_TYPE(plir::StatusOr<plir::Function>);
  PLIR_MIX_TYPE(plir::StatusOr<plir::Type>);
  PLIR_MIX_TYPE(plir::StatusOr<plir::Expr>);
  PLIR_MIX_TYPE(plir::PluginHost);
  PLIR_MIX_TYPE(plir::Symbol);
  PLIR_MIX_TYPE(plir::NameHint);
  PLIR_MIX_TYPE(plir::ItemNode);
  PLIR_MIX_TYPE(plir::ExprSpan);
  PLIR_MIX_TYPE(plir::TypeSpan);
  PLIR_MIX_TYPE(plir::DataType);
  // Tensor storage (ConstantNode::data_ptr(), Tensor::data), owned or borrowed.
  PLIR_MIX_TYPE(plir::TensorBytes);
  PLIR_MIX_TYPE(plir::WritableTensorBytes);
  PLIR_MIX_TYPE(std::shared_ptr<const plir::TensorBytes>);
  PLIR_MIX_TYPE(std::string);
  PLIR_MIX_TYPE(std::vector<int>);
  PLIR_MIX_TYPE(std::function<void()>);
  PLIR_MIX_TYPE(std::shared_ptr<int>);
  PLIR_MIX_TYPE(std::map<std::string, int>);
  PLIR_MIX_TYPE(std::set<std::string>);
  PLIR_MIX_TYPE(std::optional<int64_t>);
  PLIR_MIX_TYPE(std::mutex);
#undef PLIR_MIX_TYPE
  return h;
}

#define PLIR_BOUNDARY_FINGERPRINT \
  { PLIR_COMPILER_ID, PLIR_STDLIB_VERSION, PLIR_STDLIB_CXX11_ABI, ::plir::PlirBoundaryLayoutHash() }

namespace internal {
// Calls `fn` for a plugin, turning errors and exceptions into the C protocol.
inline int CallRegister(Status (*fn)(PluginHost&), void* host, char* error, size_t error_size) {
  std::string message;
  try {
    Status s = fn(*static_cast<PluginHost*>(host));
    if (s.ok()) return 0;
    message = s.message();
  } catch (const std::exception& e) {
    message = std::string("registration threw: ") + e.what();
  } catch (...) {
    message = "registration threw an exception of unknown type";
  }
  if (error_size > 0) {
    std::strncpy(error, message.c_str(), error_size - 1);
    error[error_size - 1] = '\0';
  }
  return 1;
}
}  // namespace internal

}  // namespace plir

#define PLIR_PLUGIN(NAME, VERSION, REGISTER_FN)                                                   \
  static int plir_plugin_register_(void* host, char* error, size_t error_size) {                  \
    return ::plir::internal::CallRegister(&REGISTER_FN, host, error, error_size);                 \
  }                                                                                               \
  extern "C" __attribute__((visibility("default"))) const PlirPluginInfo* plir_plugin_entry(      \
      void) {                                                                                     \
    static const PlirPluginInfo info = {PLIR_PLUGIN_API_VERSION, PLIR_BOUNDARY_FINGERPRINT, NAME, \
                                        VERSION, &plir_plugin_register_};                         \
    return &info;                                                                                 \
  }

#endif  // PLIR_PASSES_PLUGIN_H_
