// Process isolation for plir-opt.
//
// plir-opt forks before it loads any plugin: the child loads plugins and
// runs the pipeline; the parent (the supervisor) owns the input and the
// output and waits. The child records what it is doing (loading which
// plugin, running which pass of which plugin) in a page of memory shared
// with the parent, so that when the child dies (a signal, an exit() from a
// plugin, a memory or time limit) the parent can say what was running and
// what killed it.
#ifndef PLIR_DRIVER_SUPERVISOR_H_
#define PLIR_DRIVER_SUPERVISOR_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plir {

enum class RunPhase : int32_t {
  kStartup = 0,
  kLoadingPlugin,   // an explicitly requested plugin (--plugin, a pipeline's plugins)
  kScanningPlugin,  // a plugin found while scanning the search path
  kLoadingInput,
  kRunningPass,
  kWritingOutput,
};

// The state the child shares with the supervisor. Fixed-size, no pointers:
// it lives in a MAP_SHARED mapping.
struct RunState {
  std::atomic<int32_t> phase{0};
  std::atomic<int64_t> phase_start_ns{0};  // CLOCK_MONOTONIC
  std::atomic<uint32_t> phase_seq{0};      // bumped on every phase change
  std::atomic<int32_t> top_step{-1};       // index of the running top-level pipeline step
  std::atomic<int32_t> out_of_memory{0};
  std::atomic<int32_t> stack_overflow{0};
  std::atomic<int32_t> pass_failed{0};  // a pass or the verifier reported an error
  std::atomic<int32_t> finished{0};     // the child reached the end of its program
  // Limits in force (the command line's, or the pipeline's once loaded).
  std::atomic<int64_t> pass_timeout_ns{0};
  std::atomic<int64_t> memory_limit_mb{0};
  char subject[1024] = {};  // plugin path being loaded, or the pass name
  char plugin[2048] = {};   // the running pass's plugin: "NAME VERSION (PATH)"
  char failure[4096] = {};  // the error message when pass_failed
  // Reproducer material, written once the pipeline is loaded: the loaded
  // plugins ("PATH\tNAME\tVERSION\n" lines) and, for each top-level step i,
  // the canonical YAML of the pipeline's steps 0..i.
  char plugins[16384] = {};
  static constexpr int kMaxPrefixes = 512;
  int32_t num_prefixes = 0;
  uint32_t prefix_offset[kMaxPrefixes + 1] = {};
  static constexpr size_t kPrefixBytes = 4 << 20;
  char prefixes[kPrefixBytes] = {};

  // Records a phase change (also resets the timer the pass timeout uses).
  void Enter(RunPhase p, std::string_view subject_text, std::string_view plugin_text = {});
  // Stores the pipeline prefixes; false if they do not fit.
  bool SetPrefixes(const std::vector<std::string>& yaml_prefixes);
  std::string Prefix(int top_step) const;
};

// A RunState in memory shared with children forked after this call (never
// freed). With `shared` false, ordinary memory (for --no-isolate).
RunState* NewRunState(bool shared);

// In the child: SIGSEGV/SIGBUS handlers that tell a stack overflow apart
// (recorded in `state`), and a new-handler that records running out of
// memory and ends the process.
void InstallCrashHandlers(RunState* state);
// In the child: caps the address space at `mb` megabytes (RLIMIT_AS).
bool ApplyMemoryLimit(int64_t mb);

struct ChildOutcome {
  bool exited = false;  // normal exit (status in exit_code)
  int exit_code = 0;
  int signal = 0;  // the signal that ended the child, if any
  bool timed_out = false;
};

// Waits for `pid`. While state.pass_timeout_ns is set, kills the child when
// one plugin load or one pass has run longer than that.
ChildOutcome Supervise(pid_t pid, const RunState& state);

// "SIGSEGV (segmentation fault)".
std::string SignalName(int sig);

// Explains how the child ended, naming the pass or plugin that was running;
// empty when the child finished its program normally.
std::string DescribeAbnormalEnd(const RunState& state, const ChildOutcome& o);

// The plugin path whose load the child was in when it died, if it was
// scanning the search path (so that a retry can skip it).
bool DiedWhileScanning(const RunState& state, std::string* path);

// Escapes control bytes and invalid UTF-8 in text from untrusted sources
// (file names, plugin strings) before it goes into a message.
std::string Printable(std::string_view s);

}  // namespace plir

#endif  // PLIR_DRIVER_SUPERVISOR_H_
