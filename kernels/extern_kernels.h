// Kernels for extern functions: what a `call_tir(@name, ...)` runs.
//
// The registry is filled by the SDK (built-in kernels for the extern
// functions of the examples) and by plugins (PluginHost::RegisterExternKernel
// in passes/plugin.h), and read by the interpreter (plir-run). Kernels for
// ops are not here: an op carries its own (`OpDef::eval`, ir/op.h).
#ifndef PLIR_KERNELS_EXTERN_KERNELS_H_
#define PLIR_KERNELS_EXTERN_KERNELS_H_

#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/status.h"
#include "ir/support/registry.h"
#include "ir/type.h"
#include "kernels/tensor.h"

namespace plir {

// Computes an extern's output (of the call's type `out`, its sinfo_args)
// from its input tensors. Errors are values; a kernel never throws.
using ExternKernelFn =
    std::function<StatusOr<Tensor>(const std::vector<Tensor>& in, const Type& out)>;

// Computes the outputs of an extern with several (a call whose type `out` is
// a tuple of tensors, one per element, as a TIR PrimFunc with several output
// buffers), in order.
using ExternKernelTupleFn =
    std::function<StatusOr<std::vector<Tensor>>(const std::vector<Tensor>& in, const Type& out)>;

struct ExternKernelDef {
  std::string name;  // the extern function's name, without '@'
  std::string description;
  ExternKernelFn fn;             // for a tensor result
  std::string origin = "core";   // who registered it (for duplicate errors)
  ExternKernelTupleFn tuple_fn;  // for a tuple result; a kernel has fn, tuple_fn or both
};

class KernelRegistry {
 public:
  // The process-wide registry, holding the SDK's built-in kernels
  // (transform_layout_IOHW_to_OIHW, transpose).
  static KernelRegistry& Global();

  // Fails (InvalidArgument) without a name or without both functions, (AlreadyExists,
  // naming both origins) if the name is taken.
  Status Register(ExternKernelDef def);
  // The kernel for extern `name`, or null.
  std::shared_ptr<const ExternKernelDef> Lookup(const std::string& name) const;
  // Sorted names.
  std::vector<std::string> Names() const;

  KernelRegistry() = default;  // tests may use private registries

 private:
  Registry<std::shared_ptr<const ExternKernelDef>> kernels_;
};

}  // namespace plir

#endif  // PLIR_KERNELS_EXTERN_KERNELS_H_
