// plir-opt's program: what runs in the supervised child (or in the one
// process with --no-isolate). Named steps, in order: configure the plugin
// loader, load the --plugin files, load the pipeline and its fragments,
// list or add the --passes, apply the pipeline's limits, record the
// reproducer material, load the input, build the pass context, run. The
// supervisor side (fork, sandbox, result check, output) is in plir_opt.cc.
#ifndef PLIR_CLI_OPT_PROGRAM_H_
#define PLIR_CLI_OPT_PROGRAM_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/opt_flags.h"
#include "driver/supervisor.h"
#include "ir/module.h"

namespace plir::opt {

// What the child's program produced: the module to write, or the text of
// --list-passes, --list-ops or --emit-pipeline; and the ops that plugins
// registered (the supervisor gives them stand-ins to load the module).
struct ProgramResult {
  std::optional<Module> module;
  std::string text;
  std::vector<std::string> plugin_ops;
  // The thread that frees the modules the passes replaced: kept until the
  // output is written, and joined when dropped.
  std::shared_ptr<void> frees;
  // Set by the caller: the end check of the result is left to it (it runs
  // the check beside writing the output, whose file is kept only if the
  // check passes), instead of being run before RunPipeline returns.
  bool defer_result_check = false;
  // With defer_result_check: the check left to the caller, if one is due
  // (CheckResult of the passes' result; without passes, the verification
  // of a text input): 0, or 1 after its error is printed.
  std::function<int()> deferred_check;
  // `module` is the verified input, or the verifier checked the passes'
  // result (or does, in deferred_check) as a whole module; the parent sets
  // it for the child's result, which it verifies on loading. Not with
  // `verify: none`, nor with --verify-each alone (whose checks follow
  // each pass). The binary writer then skips its own check for an
  // ill-formed module (SaveVerifiedBinaryParts).
  bool verified = false;
};

// The end check of the pipeline's result (the verifier's): 0, or 1 after
// the error is printed and recorded in `state` (a reproducer is due).
int CheckResult(const Module& result, RunState* state);

// The child's program (or the whole program with --no-isolate): load the
// plugins and the pipeline, the input, run; the result goes to `program`.
// Everything it does is recorded in `state`. Returns the exit status
// (errors are printed).
int RunPipeline(const Flags& f, const std::string& input_path, const std::string& input_name,
                RunState* state, ProgramResult* program);

bool EndsWith(const std::string& s, const std::string& suffix);
// The output's format: --emit, else -o's extension (.plirb: "binary",
// .json: "json"), else "text".
std::string EmitFormat(const Flags& f);
// Parks a handle to `m` until exit (see the definition).
void KeepUntilExit(const Module& m);
// Prints `message` and a newline on standard error; returns 1.
int Error(const std::string& message);
// `s` split at `sep`, empty items dropped.
std::vector<std::string> SplitList(const std::string& s, char sep);

}  // namespace plir::opt

#endif  // PLIR_CLI_OPT_PROGRAM_H_
