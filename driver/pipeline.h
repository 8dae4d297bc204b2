// YAML pipelines: load, validate, print back in canonical form.
//
//   version: 1
//   name: cleanup
//   plugins: [dead_code_elimination, {name: my_pass, sha256: 9f86d0...}]
//   plugin_path: [../build/plugins]      # relative to this file
//   python: [passes/my_passes.py]        # Python passes (relative; docs/python.md)
//   opt_level: 2
//   required: [DeadCodeElimination]
//   disabled: []
//   config: {key: value}
//   passes:
//     - CanonicalizeBindings
//     - name: DeadCodeElimination
//       options: {entry_functions: [main]}
//       min_opt_level: 1
//       functions: "main|sub.*"          # only on these functions (TVM's ApplyPassToFunction)
//     - repeat: {max_iterations: 4, until: fixpoint}
//       passes: [FoldConstant, DeadCodeElimination]
//     - include: common/cleanup.yaml     # relative to this file
//     - extension_point: after-simplify
//   instruments: {timing: true, verify: each, print_after: [DeadCodeElimination],
//                 print_changed: false, check_input_unchanged: true}
//   limits: {pass_timeout: 60, memory_limit: 4096}   # seconds, megabytes
//
// Every error names file:line:column. Reading is two steps: the YAML is
// parsed into a PipelineSpec (driver/pipeline_spec.h: syntax and shape, no
// loading), then ResolvePipeline loads the plugins the files name through
// the given PluginLoader, in order, and resolves pass names and options; a
// pass named but not yet registered is looked for as the plugin of its
// snake_case name. The canonical YAML writer is driver/pipeline_writer.cc.
#ifndef PLIR_DRIVER_PIPELINE_H_
#define PLIR_DRIVER_PIPELINE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/pipeline_spec.h"
#include "driver/plugin_loader.h"
#include "passes/pass_manager.h"
#include "passes/properties.h"  // CheckProperties

namespace plir {

struct InstrumentOptions {
  bool timing = false;
  VerifyMode verify = VerifyMode::kEnd;
  std::vector<std::string> print_before, print_after;  // pass names, or "all"
  bool print_changed = false;
  bool check_input_unchanged = false;
};

struct Pipeline {
  std::string file;
  std::string name;
  std::vector<std::string> plugins;      // as loaded (names)
  std::vector<std::string> plugin_path;  // absolute
  std::vector<std::string> python;       // `python:` files (absolute), already run
  std::optional<int> opt_level;
  std::vector<std::string> required, disabled;
  std::map<std::string, AttrValue> config;
  std::vector<PipelineStep> steps;
  InstrumentOptions instruments;
  // limits: {pass_timeout: SECONDS, memory_limit: MB} (plir-opt's
  // --pass-timeout and --memory-limit override them).
  std::optional<double> pass_timeout_s;
  std::optional<int64_t> memory_limit_mb;
};

struct PipelineLoadOptions {
  // Searched after the pipeline's own plugin_path (in-tree plugins).
  std::vector<std::string> fallback_plugin_dirs;
  // Of those, the ones holding the plugins shipped with PLIR (see
  // PluginLoader::AddBundledDir).
  std::vector<std::string> bundled_plugin_dirs;
};

// The second step: loads the plugins `spec` names and resolves it.
StatusOr<Pipeline> ResolvePipeline(const PipelineSpec& spec, PluginLoader& loader,
                                   const PassRegistry& registry = PassRegistry::Global(),
                                   const PipelineLoadOptions& options = {});

// Runs a pipeline's `python:` file (an absolute path), registering the
// passes it defines; ResolvePipeline calls it for each file, after loading
// the plugins and before resolving pass names, once per file and process.
// The default runs it in the embedded interpreter of the python_passes
// plugin, found through `loader` (plugins/python_passes); the plir Python
// package installs one that runs it in the calling interpreter.
using PythonFileRunner = std::function<Status(const std::string& file, PluginLoader& loader)>;
void SetPythonFileRunner(PythonFileRunner runner);

// Both steps: ParsePipelineFile, then ResolvePipeline.
StatusOr<Pipeline> LoadPipeline(const std::string& file, PluginLoader& loader,
                                const PassRegistry& registry = PassRegistry::Global(),
                                const PipelineLoadOptions& options = {});

// Loads a pipeline from YAML text; `name` stands for the file in messages
// and relative paths resolve against its directory.
StatusOr<Pipeline> LoadPipelineText(const std::string& name, const std::string& text,
                                    PluginLoader& loader,
                                    const PassRegistry& registry = PassRegistry::Global(),
                                    const PipelineLoadOptions& options = {});

// Applies an extension fragment to `p`:
//
//   version: 1
//   plugins: [my_plugin]          # optional: loaded through `loader`
//   extend:
//     point: after-simplify
//     passes: [MyPass, {name: Other, options: {...}}]
//
// The passes are inserted right after every `extension_point` step of that
// name (repeat groups included). Errors name the fragment's file:line:col;
// an unknown point lists the pipeline's points.
Status ApplyExtension(Pipeline& p, const std::string& fragment_file, PluginLoader& loader,
                      const PassRegistry& registry = PassRegistry::Global());

// Canonical YAML: keys in a fixed order, includes expanded, options sorted.
std::string PipelineToYaml(const Pipeline& p);

// Adds the instruments `opts` asks for to `ctx` (output to `out`).
void AddInstruments(const InstrumentOptions& opts, std::ostream* out, PassContext& ctx);

}  // namespace plir

#endif  // PLIR_DRIVER_PIPELINE_H_
