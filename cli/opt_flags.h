// plir-opt's command line, as its main parses it (cli/plir_opt.cc) and the
// child's program reads it (cli/opt_program.h).
#ifndef PLIR_CLI_OPT_FLAGS_H_
#define PLIR_CLI_OPT_FLAGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "driver/tool_flags.h"
#include "ir/serialize/module_file.h"
#include "passes/instruments.h"

namespace plir::opt {

struct Flags : ToolFlags {  // input, -o, --pipeline, --passes, --plugin, --plugin-path
  int opt_level = -1;
  bool time_passes = false;
  bool print_before_all = false;
  bool print_after_all = false;
  std::vector<std::string> print_after;
  bool print_changed = false;
  bool verify_each = false;
  bool check_input_unchanged = false;
  bool list_passes = false;
  bool list_ops = false;
  bool verbose = false;
  bool emit_pipeline = false;
  std::string emit;                 // text | json | binary; default from -o's extension
  int binary_version = 4;           // --binary-version: what --emit binary writes
  bool verify_tensor_data = false;  // --verify-tensor-data: a binary input's data checksum too
  std::vector<std::string> extends;
  int threads = 0;  // 0: the hardware's
  // Robustness.
  bool no_isolate = false;
  double pass_timeout_s = 0;   // 0: none (or the pipeline's)
  double timeout_s = 0;        // the whole run (the supervisor's own); 0: none
  double load_timeout_s = 30;  // one plugin load; 0: none
  uint64_t max_pass_runs = PassRunBudget::kDefaultMaxRuns;   // the whole pipeline's
  int64_t memory_limit_mb = 0;                               // 0: none (or the pipeline's)
  std::string reproduce;                                     // --reproduce DIR
  std::string reproducer_dir;                                // where bundles go (default $TMPDIR)
  uint64_t reproducer_max_input_bytes = uint64_t{64} << 20;  // copied up to this
  bool no_reproducer = false;
  bool allow_insecure_plugins = false;
  bool allow_changed_plugins = false;
  // --reproduce: the bundle's plugins by path, with the sha256 they had.
  std::vector<std::pair<std::string, std::string>> pinned_plugins;
  bool hermetic_plugins = false;  // only --plugin and --plugin-path (build actions)
  // --check-result: the parent loads and verifies the child's result even
  // when only bundled plugins can run (see ChildWritesOutput).
  bool check_result = false;
  // Set by the supervisor before the fork: only PLIR's own code can run in
  // the child, which writes the output itself (its loader then refuses any
  // plugin but the bundled ones, and it verifies the result).
  bool child_writes_output = false;
  std::string sandbox = "auto";           // --sandbox=require|auto|off
  std::vector<std::string> sandbox_read;  // --sandbox-read PATH
  uint64_t max_input_bytes = ModuleFile::kDefaultMaxBytes;
  std::vector<std::string> argv;
  std::vector<std::string> skip_plugins;  // crashed while loading during a scan
  // Debugging a pipeline.
  bool check_execution = false;
  std::string check_inputs;     // --check-execution=FILE; empty: random inputs
  std::string check_params;     // --params
  std::string check_tolerance;  // --check-tolerance RTOL[,ATOL]
  std::string entry = "main";
  uint64_t check_seed = 0;
  std::string dump_ir_dir;
  int64_t bisect_limit = -1;  // -1: off
};

}  // namespace plir::opt

#endif  // PLIR_CLI_OPT_FLAGS_H_
