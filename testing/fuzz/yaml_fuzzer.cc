// libFuzzer target for the YAML pipeline loader: any bytes give a pipeline
// or a clean error (file:line:col), never a crash, a hang, or unbounded
// memory (alias bombs, deep nesting, huge integers). A loaded pipeline
// prints as canonical YAML that loads again to the same canonical YAML.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "driver/pipeline.h"
#include "driver/plugin_loader.h"
#include "passes/registry.h"

namespace {

plir::PassRegistry& Registry() {
  static plir::PassRegistry* registry = [] {
    auto* r = new plir::PassRegistry();
    for (const char* name : {"DeadCodeElimination", "FoldConstant", "CanonicalizeBindings"}) {
      plir::PassDef d;
      d.info.name = name;
      d.info.description = "fuzz stand-in";
      d.info.options.push_back(
          {"entry_functions", plir::OptionType::kStringList, plir::AttrValue::List({}), "entries"});
      d.info.options.push_back(
          {"max_iterations", plir::OptionType::kInt, plir::AttrValue::Int(4), "n"});
      d.module_fn = [](const plir::Module& m,
                       const plir::PassCallContext&) -> plir::StatusOr<plir::Module> { return m; };
      if (!r->Register(std::move(d)).ok()) std::abort();
    }
    return r;
  }();
  return *registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  plir::PluginLoader loader(Registry());  // empty search path: plugins fail to load, cleanly
  auto p = plir::LoadPipelineText("/nonexistent/fuzz.yaml", text, loader, Registry());
  if (!p.ok()) {
    if (p.status().message().empty()) std::abort();
    return 0;
  }
  std::string canonical = plir::PipelineToYaml(*p);
  plir::PluginLoader loader2(Registry());
  auto again = plir::LoadPipelineText("/nonexistent/fuzz.yaml", canonical, loader2, Registry());
  if (!again.ok() || plir::PipelineToYaml(*again) != canonical) {
    std::fprintf(
        stderr, "canonical YAML does not load back to itself:\n%s\n%s\n", canonical.c_str(),
        again.ok() ? plir::PipelineToYaml(*again).c_str() : again.status().message().c_str());
    std::abort();
  }
  return 0;
}
