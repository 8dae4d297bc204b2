// plir-run's options and its program (cli/run_program.cc): what the tool
// does once cli/plir_run.cc has parsed its command line.
#ifndef PLIR_CLI_RUN_PROGRAM_H_
#define PLIR_CLI_RUN_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/serialize/module_file.h"

namespace plir::run {

struct Options {
  std::string file, entry = "main", lazy_types, lazy_spec = "random", params, save_outputs,
                    inputs_file;
  std::vector<std::string> inputs, plugins;
  // The supervised child (with a plugin, or a limit).
  bool no_isolate = false;
  double timeout_s = 0;         // 0: none
  double load_timeout_s = 30;   // one plugin load; 0: none
  int64_t memory_limit_mb = 0;  // 0: none
  std::string sandbox = "auto";
  std::vector<std::string> sandbox_read;
  uint64_t max_input_bytes = ModuleFile::kDefaultMaxBytes;
  uint64_t max_output_bytes = uint64_t{16} << 30;
};

// Runs the tool with `o`: in this process, or in the supervised child when
// a plugin or a limit needs it. Returns the exit status.
int RunMain(const Options& o);

}  // namespace plir::run

#endif  // PLIR_CLI_RUN_PROGRAM_H_
