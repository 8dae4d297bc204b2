// Running a tool's program in the supervised, sandboxed child: what
// plir-opt (its pipeline) and plir-run (its run, when it loads a plugin)
// share.
//
// The parent, the supervisor, forks; the child isolates itself (its own
// process group; no descriptor of the parent's but those it is given;
// standard output and error a pipe the parent relays to standard error,
// driver/supervisor.h), enters the sandbox (driver/sandbox.h), installs the
// crash handlers and the memory limit, and only then runs the program,
// which may load plugins. The child hands its result to the parent in
// anonymous files the parent created (driver/child_result.h); it never
// holds the user's output. The parent waits under its own limits, then
// kills every process the child left, and only then says how it ended.
#ifndef PLIR_DRIVER_SUPERVISED_CHILD_H_
#define PLIR_DRIVER_SUPERVISED_CHILD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/plugin_loader.h"
#include "driver/sandbox.h"
#include "driver/supervisor.h"
#include "ir/status.h"

namespace plir {

// What the child gets, and the limits it runs under.
struct ChildSetup {
  const char* tool = "plir-opt";  // the prefix of messages
  SandboxMode sandbox_mode = SandboxMode::kAuto;
  SandboxSupport sandbox_support;
  SandboxPolicy sandbox_policy;
  int64_t memory_limit_mb = 0;  // the child's RLIMIT_AS; 0: none
  SuperviseLimits limits;
  // The descriptors the child keeps (result files, an input copy), in
  // order; the program sees them under their new numbers.
  std::vector<int> fds;
};

// How the child ended.
struct ChildEnd {
  ChildOutcome outcome;
  // Empty when the child finished its program (then outcome.exit_code is
  // the program's status); else the one-line message naming what ran
  // (DescribeAbnormalEnd, with "TOOL: " in front).
  std::string abnormal;
};

// The program: its kept descriptors (setup.fds renumbered, in order) to
// the exit status of the child. What it throws is reported ("TOOL: internal
// error: ...") and is status 1.
using ChildProgram = std::function<int(const std::vector<int>& fds)>;

// Forks and runs `program` in the supervised, sandboxed child; `state` is
// the shared page (NewRunState(true)), which the caller resets between
// runs. In the parent: supervises under setup.limits, kills every process
// the child left (and, until then, on SIGINT/SIGTERM/SIGHUP, the child's
// tree with the temporary outputs), relays what the child wrote to
// standard error. Fails only if it cannot start the child (pipe, fork).
StatusOr<ChildEnd> RunInSupervisedChild(const ChildSetup& setup, RunState* state,
                                        const ChildProgram& program);

// Records in `state` every plugin load (kLoadingPlugin, or kScanningPlugin
// while the search path is scanned) and every plugin-defined kernel while it
// runs (RunState::EnterKernel/LeaveKernel), through the loader's observers:
// what the supervisor names when the child dies.
void RecordPluginActivity(PluginLoader& loader, RunState* state);

// The supervisor's own limits: --timeout (a deadline from now) and
// --load-timeout, in seconds (0: none).
SuperviseLimits SupervisorLimits(double timeout_s, double load_timeout_s);

// The sandbox mode of a --sandbox value (already checked by the command
// line), probed once: prints the warning of kAuto on a kernel that offers
// less, and fails (the message "TOOL: --sandbox=require: ...") where
// kRequire cannot hold.
StatusOr<SandboxSupport> ProbeSandboxFor(SandboxMode mode, const char* tool);

// An input file as the child reads it: a regular file by path; anything
// else (standard input "-", a pipe, a /proc file) read by the parent, up to
// `max_bytes`, into an anonymous file, sealed, that the child reads instead
// (and a reproducer copies).
struct ChildInput {
  std::string path;  // what the child opens (in the parent: the copy's /proc/self/fd/N)
  std::string name;  // what messages say ("<stdin>" for "-")
  std::string ext;   // ".plir", ".plirb" or ".json", from the name or the contents
  int fd = -1;       // the anonymous copy (sealed), if any
};
StatusOr<ChildInput> PrepareChildInput(const std::string& path, uint64_t max_bytes);

}  // namespace plir

#endif  // PLIR_DRIVER_SUPERVISED_CHILD_H_
