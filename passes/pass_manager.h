// The pass manager: runs a tree of pipeline steps (passes and repeat groups)
// over a module under a PassContext, calling its instruments around every
// pass. Anything a pass throws is caught and turned into an error naming
// the pass; nothing propagates further.
#ifndef PLIR_PASSES_PASS_MANAGER_H_
#define PLIR_PASSES_PASS_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "passes/pass.h"
#include "passes/registry.h"

namespace plir {

struct SourceLoc {
  std::string file;
  int64_t line = 0;  // 1-based; 0 if unknown
  int64_t col = 0;
  std::string ToString() const {
    return file + ":" + std::to_string(line) + ":" + std::to_string(col);
  }
};

struct PipelineStep {
  enum class Kind { kPass, kRepeat, kExtensionPoint };
  Kind kind = Kind::kPass;
  // kPass
  std::string pass;
  std::map<std::string, AttrValue> given_options;  // as written
  PassOptions options;                             // resolved with defaults
  std::optional<int> min_opt_level;                // overrides the pass's own
  // If set, the pass runs on the functions whose names match this regular
  // expression (RE2 syntax, the whole name) only, as TVM's
  // ApplyPassToFunction: see PassManager::RunPassOnFunctions.
  std::optional<std::string> functions;
  // kRepeat
  int max_iterations = 1;
  bool until_fixpoint = false;
  std::vector<PipelineStep> steps;
  // kExtensionPoint: a named place where plugins may add steps.
  std::string point;
  SourceLoc loc;
};

// A convenience for code and tests: a pass step with resolved options.
StatusOr<PipelineStep> MakePassStep(const PassRegistry& registry, const std::string& pass,
                                    const std::map<std::string, AttrValue>& options = {});

class PassManager {
 public:
  explicit PassManager(const PassRegistry& registry = PassRegistry::Global())
      : registry_(registry) {}

  // Runs `steps` on `module`. The input is never modified; the result
  // shares every part no pass changed. Calls every instrument's Finish.
  // `on_top_level_step`, if given, is called with i before top-level step i
  // (plir-opt records it for crash reproducers).
  StatusOr<Module> Run(const std::vector<PipelineStep>& steps, const Module& module,
                       PassContext& context,
                       const std::function<void(size_t)>& on_top_level_step = nullptr) const;

  // Runs one pass (with instruments), ignoring opt-level rules.
  StatusOr<Module> RunPass(const PassDef& pass, const PassOptions& options, const Module& module,
                           PassContext& context) const;

  // Runs one pass on part of `module`, as TVM's ApplyPassToFunction: the
  // pass sees a module holding the functions whose names match the regular
  // expression `functions` (a matched function without `global_symbol` gets
  // one for the run, so that the pass treats it as externally visible, and
  // loses it after), every other function replaced by an extern of its
  // signature, and every extern. Afterwards, the matched functions (and any
  // item the pass added) replace or join those of `module`; no other item
  // changes, and none is removed. A regular expression that matches no
  // function leaves the module as it is (with a warning). Instruments see
  // the whole module before and after. An invalid expression is an error.
  StatusOr<Module> RunPassOnFunctions(const PassDef& pass, const PassOptions& options,
                                      const std::string& functions, const Module& module,
                                      PassContext& context) const;

 private:
  StatusOr<Module> RunSteps(const std::vector<PipelineStep>& steps, const Module& module,
                            PassContext& context) const;
  StatusOr<Module> RunPassBody(const PassDef& pass, const PassOptions& options,
                               const Module& module, PassContext& context) const;
  StatusOr<Module> RunFunctionPass(const PassDef& pass, const PassOptions& options,
                                   const Module& module, PassContext& context) const;
  const PassRegistry& registry_;
};

}  // namespace plir

#endif  // PLIR_PASSES_PASS_MANAGER_H_
