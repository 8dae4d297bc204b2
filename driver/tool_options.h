// Command-line options that the tools share: the input, -o, and what runs
// (--pipeline or --passes, --plugin, --plugin-path: plir-opt and
// plir-reduce), and the supervisor's limits and sandbox (plir-opt and
// plir-run), set up in one place so that the tools spell and check them
// alike.
#ifndef PLIR_DRIVER_TOOL_OPTIONS_H_
#define PLIR_DRIVER_TOOL_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/tool_flags.h"

namespace plir {

// The help texts that differ by tool.
struct ToolOptionHelp {
  std::string input, output, pipeline, passes, plugin, plugin_dir;
};

// Adds `input` (positional), -o/--output, --pipeline, --passes (excludes
// --pipeline), --plugin and --plugin-path (repeatable, one value each).
// Returns the `input` option (plir-reduce requires it).
CLI::Option* AddToolOptions(CLI::App& app, ToolFlags* to, const ToolOptionHelp& help);

// A number of seconds in [lo, hi] (with `or_zero`, also exactly 0, "no
// limit"): CLI11's Range lets NaN through, and a limit of NaN seconds would
// mean none.
CLI::Validator Seconds(double lo, double hi, bool or_zero = false);

// The supervised child's flags (driver/supervised_child.h).
struct SupervisorOptionTargets {
  double* timeout_s;                       // --timeout (0: none)
  double* load_timeout_s;                  // --load-timeout (0: none)
  int64_t* memory_limit_mb;                // --memory-limit (0: none)
  std::string* sandbox;                    // --sandbox=require|auto|off
  std::vector<std::string>* sandbox_read;  // --sandbox-read PATH (repeatable)
};
// Adds --timeout (its help: `timeout_help`), --load-timeout, --memory-limit,
// --sandbox and --sandbox-read, every number range-checked (NaN and
// infinities are usage errors).
void AddSupervisorOptions(CLI::App& app, const SupervisorOptionTargets& to,
                          const std::string& timeout_help);

// Under `bazel run`, relative paths resolve against the user's directory
// ($BUILD_WORKING_DIRECTORY); `tool` names the program in a failure.
void EnterBuildWorkingDirectory(const char* tool);

}  // namespace plir

#endif  // PLIR_DRIVER_TOOL_OPTIONS_H_
