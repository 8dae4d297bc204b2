// The plugin ABI: one extern "C" entry point returning a plain struct.
//
// A plugin is a shared library exporting
//   const PlirPluginInfo* plir_plugin_entry(void);
// The loader reads the struct with C linkage only and checks the API version
// and the build fingerprint before it calls any C++ code of the plugin (the
// registration function). See docs/plugin-abi.md for the compatibility
// policy: what changes PLIR_PLUGIN_API_VERSION and the fingerprint.
#ifndef PLIR_PASSES_PLUGIN_ABI_H_
#define PLIR_PASSES_PLUGIN_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include "ir/expr.h"
#include "ir/module.h"
#include "ir/op.h"
#include "ir/support/fnv.h"
#include "kernels/extern_kernels.h"
#endif

// Bumped on any change to PlirPluginInfo or to the meaning of its fields.
#define PLIR_PLUGIN_API_VERSION 5u
#define PLIR_PLUGIN_ENTRY_SYMBOL "plir_plugin_entry"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct PlirBuildFingerprint {
  const char* compiler;       // compiler id and version, e.g. "gcc 12.2.0"
  uint32_t stdlib_version;    // __GLIBCXX__ (libstdc++ release date), 0 if unknown
  uint32_t stdlib_cxx11_abi;  // _GLIBCXX_USE_CXX11_ABI
  uint64_t
      ir_layout_hash;  // PlirBoundaryLayoutHash() (passes/plugin.h) of the headers built against
} PlirBuildFingerprint;

typedef struct PlirPluginInfo {
  uint32_t api_version;  // PLIR_PLUGIN_API_VERSION at build time
  PlirBuildFingerprint fingerprint;
  const char* name;     // "dead_code_elimination"
  const char* version;  // the plugin's own version, free-form
  // Registers the plugin's passes and ops with `host` (a plir::PluginHost*).
  // Returns 0 on success; otherwise writes a NUL-terminated message into
  // `error` (at most `error_size` bytes) and returns non-zero. Never throws.
  int (*register_fn)(void* host, char* error, size_t error_size);
} PlirPluginInfo;

typedef const PlirPluginInfo* (*PlirPluginEntryFn)(void);

#ifdef __cplusplus
}  // extern "C"

#if defined(__clang__)
#define PLIR_COMPILER_ID "clang " __clang_version__
#elif defined(__GNUC__)
#define PLIR_COMPILER_ID "gcc " __VERSION__
#else
#define PLIR_COMPILER_ID "unknown"
#endif

#ifdef __GLIBCXX__
#define PLIR_STDLIB_VERSION __GLIBCXX__
#else
#define PLIR_STDLIB_VERSION 0
#endif
#ifdef _GLIBCXX_USE_CXX11_ABI
#define PLIR_STDLIB_CXX11_ABI _GLIBCXX_USE_CXX11_ABI
#else
#define PLIR_STDLIB_CXX11_ABI 0
#endif

// A hash of the sizes and alignments of the IR's node classes, as seen by
// the code that includes this header: a plugin built against headers whose
// node layouts differ from the host's gets a different hash.
constexpr uint64_t PlirIrLayoutHash() {
  uint64_t h = plir::kFnv64OffsetBasis;
  auto mix = [&h](uint64_t v) { h = plir::Fnv1aMix(h, v); };
  mix(PLIR_PLUGIN_API_VERSION);
  mix(static_cast<uint64_t>(plir::NodeKind::kExternFunc));
  mix(sizeof(plir::Node));
  mix(alignof(plir::Node));
  mix(sizeof(plir::TensorTypeNode));
  mix(sizeof(plir::TupleTypeNode));
  mix(sizeof(plir::PrimTypeNode));
  mix(sizeof(plir::ShapeTypeNode));
  mix(sizeof(plir::Dim));
  mix(sizeof(plir::AttrValue));
  mix(sizeof(plir::Attrs));
  mix(sizeof(plir::VarNode));
  mix(sizeof(plir::GlobalVarNode));
  mix(sizeof(plir::OpNode));
  mix(sizeof(plir::TupleNode));
  mix(sizeof(plir::TupleGetItemNode));
  mix(sizeof(plir::PrimValueNode));
  mix(sizeof(plir::StringImmNode));
  mix(sizeof(plir::ConstantNode));
  mix(sizeof(plir::CallNode));
  mix(sizeof(plir::IfNode));
  mix(sizeof(plir::SeqExprNode));
  mix(sizeof(plir::VarBindingNode));
  mix(sizeof(plir::BindingBlockNode));
  mix(sizeof(plir::FunctionNode));
  mix(sizeof(plir::ExternFuncNode));
  mix(sizeof(plir::Module));
  mix(sizeof(plir::OpDef));
  mix(sizeof(plir::Tensor));
  mix(sizeof(plir::ExternKernelDef));
  // Expression kinds added after the first set (shape values, symbolic values).
  mix(static_cast<uint64_t>(plir::NodeKind::kPrimExpr));
  mix(sizeof(plir::ShapeExprNode));
  mix(sizeof(plir::PrimExprNode));
  // Function values: kinds added after kExternFunc, and their classes.
  mix(static_cast<uint64_t>(plir::NodeKind::kFuncType));
  mix(static_cast<uint64_t>(plir::NodeKind::kLocalFn));
  mix(sizeof(plir::FuncTypeNode));
  mix(sizeof(plir::LocalFnNode));
  return h;
}

#define PLIR_BUILD_FINGERPRINT \
  { PLIR_COMPILER_ID, PLIR_STDLIB_VERSION, PLIR_STDLIB_CXX11_ABI, PlirIrLayoutHash() }

#endif  // __cplusplus

#endif  // PLIR_PASSES_PLUGIN_ABI_H_
