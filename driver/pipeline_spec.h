// The first step of reading a YAML pipeline: what the files say, checked for
// shape, with `include:` and `extend:` expanded and every position kept.
// Nothing is loaded here and no name is looked up; plugins, pass names and
// option types are the second step's (ResolvePipeline in driver/pipeline.h).
// So a tool, a test or a binding can read a pipeline without a plugin
// loader, and every error of this step is a syntax or shape error.
//
// Errors are Status values naming file:line:column.
#ifndef PLIR_DRIVER_PIPELINE_SPEC_H_
#define PLIR_DRIVER_PIPELINE_SPEC_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/status.h"
#include "passes/pass_manager.h"  // PipelineStep::Kind, SourceLoc

namespace plir {

// One place a plugin comes from, in the order the files name them.
struct PluginSourceSpec {
  enum class Kind {
    kSearchDir,     // a plugin_path entry (absolute)
    kFallbackDirs,  // here the tool's own plugin directories are searched
    kPlugin,        // a plugins: entry
  };
  Kind kind = Kind::kPlugin;
  std::string value;                  // the directory, or the plugin's name or path
  bool is_path = false;               // kPlugin: `value` is a file (resolved against its YAML file)
  std::optional<std::string> sha256;  // kPlugin: {name: N, sha256: HEX}
  bool listed = false;                // kPlugin: printed in the canonical pipeline's `plugins:`
  SourceLoc loc;
};

// A name with the position it was written at (a pass in `required:`, ...).
struct NameSpec {
  std::string name;
  SourceLoc loc;
};

// An option of a pass step, as written: its value is untyped until the
// pass's option specs are known.
struct WrittenOption {
  std::string key;
  SourceLoc key_loc;
  AttrValue value;
  SourceLoc value_loc;
};

struct StepSpec {
  PipelineStep::Kind kind = PipelineStep::Kind::kPass;
  SourceLoc loc;  // the step (for the pass manager's messages)
  SourceLoc at;   // the step, clamped to line 1 (for errors about it)
  // kPass
  NameSpec pass;
  std::vector<WrittenOption> options;
  std::optional<int> min_opt_level;
  std::optional<std::string> functions;  // an RE2 that compiles
  // kRepeat
  int max_iterations = 10;
  bool until_fixpoint = false;
  std::vector<StepSpec> steps;
  // kExtensionPoint
  std::string point;
};

enum class VerifyMode {
  kEnd,   // the result only (the default)
  kEach,  // after every pass
  kNone,  // never
};
const char* VerifyModeName(VerifyMode m);

struct InstrumentSpec {
  bool timing = false;
  VerifyMode verify = VerifyMode::kEnd;
  std::vector<NameSpec> print_before, print_after;  // pass names, or "all"
  bool print_changed = false;
  bool check_input_unchanged = false;
};

struct PipelineSpec {
  std::string file;
  std::string name;
  std::vector<PluginSourceSpec> plugin_sources;
  std::vector<std::string> plugin_path;  // this file's and its base's (absolute)
  // `python: [passes.py]`: files (absolute) whose Python passes register
  // before pass names resolve (docs/python.md).
  std::vector<NameSpec> python;
  std::optional<int> opt_level;
  std::vector<NameSpec> required, disabled;
  std::map<std::string, AttrValue> config;
  std::vector<StepSpec> steps;
  InstrumentSpec instruments;
  std::optional<double> pass_timeout_s;
  std::optional<int64_t> memory_limit_mb;
};

// An extension fragment (see ApplyExtension in driver/pipeline.h).
struct ExtensionSpec {
  std::string file;
  std::vector<PluginSourceSpec> plugin_sources;
  std::string point;
  SourceLoc point_loc;
  std::vector<StepSpec> steps;
};

StatusOr<PipelineSpec> ParsePipelineFile(const std::string& file);
// `name` stands for the file in messages; relative paths resolve against its
// directory.
StatusOr<PipelineSpec> ParsePipelineText(const std::string& name, const std::string& text);
StatusOr<ExtensionSpec> ParseExtensionFile(const std::string& file);

// "FILE:LINE:COL: message", the form of every pipeline error.
Status ErrorAt(const SourceLoc& loc, const std::string& message);

}  // namespace plir

#endif  // PLIR_DRIVER_PIPELINE_SPEC_H_
