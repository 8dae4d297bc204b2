// Process isolation for plir-opt and plir-run.
//
// The tool forks before it loads any plugin: the child loads plugins and
// runs the pipeline (plir-run: the entry function); the parent (the
// supervisor) owns the input and the output and waits. The child records
// what it is doing (loading which plugin, running which pass of which
// plugin, or which plugin's kernel) in a page of memory shared with the
// parent, so that when the child dies (a signal, an exit() from a plugin, a
// memory or time limit) the parent can say what was running and what
// killed it. driver/supervised_child.h runs a program so.
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
  kRunning,  // plir-run runs the entry function (subject "@main"; a plugin kernel: KernelText)
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
  // A pass, an instrument or the verifier reported an error:
  // kPassFailedBundle (a bug or a limit: a reproducer is written) or
  // kPassFailedNoBundle (InvalidArgument: a bad option or input, which a
  // reproducer would only repeat). 0: none.
  static constexpr int32_t kPassFailedBundle = 1;
  static constexpr int32_t kPassFailedNoBundle = 2;
  std::atomic<int32_t> pass_failed{0};
  bool PassFailureWantsReproducer() const { return pass_failed.load() == kPassFailedBundle; }
  std::atomic<int32_t> finished{0};  // the child reached the end of its program
  // exit() was called in the child (by plugin code: the child's own end is
  // _exit) and its exit handlers began: the status exit() was given. Set by
  // the handler WatchExitPhase arms; the supervisor then allows
  // SuperviseLimits::exit_grace_ns for the rest of the exit.
  std::atomic<int32_t> exiting{0};
  std::atomic<int32_t> exit_status{0};
  // Limits in force (the command line's, or the pipeline's once loaded).
  std::atomic<int64_t> pass_timeout_ns{0};
  std::atomic<int64_t> memory_limit_mb{0};
  char subject[1024] = {};  // plugin path being loaded, the pass name, or "@main"
  // The running pass's plugin: "NAME VERSION (PATH)"; in kRunning, the
  // plugins loaded, comma-separated.
  char plugin[2048] = {};
  char failure[4096] = {};  // the error message when pass_failed
  // The plugin-defined kernel running, if any (an op's evaluation or an
  // extern's kernel, inside FoldConstant for example, or in plir-run's
  // run): "op NAME of plugin NAME VERSION (PATH)". kernel_depth counts the kernels running (several
  // threads may run one); the text is the latest one's.
  std::atomic<int32_t> kernel_depth{0};
  char kernel[2048] = {};
  // Reproducer material, written once the pipeline is loaded: the loaded
  // plugins ("PATH\tNAME\tVERSION\n" lines) and, for each top-level step i,
  // the canonical YAML of the pipeline's steps 0..i.
  char plugins[16384] = {};
  static constexpr int kMaxPrefixes = 512;
  int32_t num_prefixes = 0;
  uint32_t prefix_offset[kMaxPrefixes + 1] = {};
  static constexpr size_t kPrefixBytes = 4 << 20;
  // Left uninitialized (RunState is made with `new (p) RunState`, without
  // the parentheses that would zero it): only what prefix_offset bounds is
  // read, and a fresh mapping reads as zeros anyway. Zeroing it faulted in
  // all of the mapping's 1,000 pages before the child could start (20-30 ms
  // of every plir-opt run on this VM, bench/RESULTS.md).
  char prefixes[kPrefixBytes];

  // Records a phase change (also resets the timer the pass timeout uses).
  void Enter(RunPhase p, std::string_view subject_text, std::string_view plugin_text = {});
  // Around a plugin-defined kernel (PluginLoader::SetKernelHook).
  void EnterKernel(std::string_view what);
  void LeaveKernel();
  // Stores the pipeline prefixes; false if they do not fit.
  bool SetPrefixes(const std::vector<std::string>& yaml_prefixes);

  // What the supervisor reads. The child may have written anything into
  // the page (no terminating NUL, any bytes, any numbers, any offsets):
  // every read is bounded by the field's size, numbers by their range.
  // The texts are raw bytes; Printable() them before they go into a message.
  std::string SubjectText() const;
  std::string PluginText() const;
  std::string FailureText() const;
  // The running plugin kernel's text; empty when none runs.
  std::string KernelText() const;
  std::string PluginsText() const;
  // kStartup for a number that names no phase.
  RunPhase Phase() const;
  // The YAML of pipeline steps 0..top_step; empty unless the count and the
  // offsets up to that step are consistent and inside the page.
  std::string Prefix(int top_step) const;
  // True iff Prefix(top_step) would be non-empty for the step recorded.
  bool HasPrefixForTopStep() const;
  // The limits as recorded, clamped to what the command line accepts
  // (0: none).
  double PassTimeoutSeconds() const;
  int64_t MemoryLimitMb() const;
};

// A RunState in memory shared with children forked after this call (never
// freed). With `shared` false, ordinary memory (for --no-isolate).
RunState* NewRunState(bool shared);

// In the child: SIGSEGV/SIGBUS handlers that tell a stack overflow apart
// (recorded in `state`), and a new-handler that records running out of
// memory and ends the process ("TOOL: out of memory").
void InstallCrashHandlers(RunState* state, const char* tool = "plir-opt");
// In the child, before any plugin loads: marks `state->exiting` when exit()
// is called. exit() runs the handlers registered with atexit/on_exit and
// the static destructors (__cxa_atexit) in the reverse order of their
// registration, then the shared libraries' destructors (_dl_fini): so the
// handler is registered again when a pass (or plir-run's run, or the
// output) begins after a plugin loaded, and before each of the first
// kMaxExitWatchArms such phases (RunState::Enter), to run before the
// static destructors of every plugin loaded so far. A destructor
// registered later (a function-local static first reached in the pass that
// calls exit()) runs before the mark: then only --pass-timeout or
// --timeout bounds it.
void WatchExitPhase(RunState* state);
inline constexpr int kMaxExitWatchArms = 1024;
// In the child: caps the address space at `mb` megabytes (RLIMIT_AS).
bool ApplyMemoryLimit(int64_t mb);

struct ChildOutcome {
  bool exited = false;  // normal exit (status in exit_code)
  int exit_code = 0;
  int signal = 0;  // the signal that ended the child, if any
  bool timed_out = false;
  int stopped_by = 0;  // the child was stopped by this signal, and then killed
  // The child did not end within the exit grace after it called exit()
  // (exit_status: what it gave exit(), as its page says) or after it
  // handed over its result (exit_after_result), and was killed.
  bool exit_hung = false;
  bool exit_after_result = false;
  int exit_status = 0;
  double exit_grace_s = 0;
  // A limit of the supervisor's own that ended the child ("--timeout 5 s").
  std::string limit;
};

// How long a child may take to finish exiting once it called exit() (its
// exit handlers and static destructors) or handed over its result: a
// plugin's destructor that never returns must not hang the run when no
// --pass-timeout or --timeout is given.
inline constexpr double kExitGraceSeconds = 5;

// The supervisor's own limits, which nothing in the child's page can lift.
struct SuperviseLimits {
  int64_t deadline_ns = 0;      // CLOCK_MONOTONIC; 0: none (--timeout)
  double run_timeout_s = 0;     // for the message
  int64_t load_timeout_ns = 0;  // one plugin load (--load-timeout); 0: none
  // From when the supervisor first sees the child's page say "exiting" or
  // "finished" (its own clock: the page's times may be forged); 0: none.
  int64_t exit_grace_ns = static_cast<int64_t>(kExitGraceSeconds * 1e9);
};

// CLOCK_MONOTONIC, in nanoseconds.
int64_t MonotonicNowNs();

// In the supervisor, before the first fork: makes it the reaper of every
// orphan below it (PR_SET_CHILD_SUBREAPER), so that no process a plugin
// starts can leave the tree, and closes its memory to its children
// (PR_SET_DUMPABLE 0: no /proc/PID/mem, no ptrace by a same-uid process).
void BecomeSupervisor();

// In the child, right after the fork and before any plugin code: dies with
// the supervisor (PR_SET_PDEATHSIG; false if the supervisor is already
// gone), leads its own process group (so that the supervisor can kill all of
// it at once, and no signal to its group reaches the supervisor's), ignores
// the terminal's stop signals (SIGTTOU, SIGTTIN: it is a background group
// now), reads /dev/null as standard input, writes standard output to
// standard error (a plugin's printf never reaches the user's output), and
// closes every other descriptor except those in `keep`, which are moved to
// 3, 4, ... in order (`keep` is updated to the new numbers). With
// `stderr_fd` >= 0, standard error (and so output) becomes that descriptor:
// the write end of the supervisor's relay (see Supervise).
bool IsolateChild(pid_t supervisor, std::vector<int>* keep, int stderr_fd = -1);

// Arms the supervisor's SIGINT, SIGTERM and SIGHUP handlers: they kill the
// child `pid` (its process group and every descendant), remove the
// temporary outputs not yet committed, and then die of the signal. 0
// disarms the killing (the temporary files are still removed).
void KillOnTerminatingSignal(pid_t pid);

// Kills every process below this one (the child's process group
// `child_pgid`, then every child left, as often as killing one makes its
// own children ours) and reaps them. Returns the number of processes killed.
int KillDescendants(pid_t child_pgid);

// Waits for `pid`. While state.pass_timeout_ns is set, kills the child when
// one plugin load or one pass has run longer than that. A child that called
// exit() (state.exiting) or handed over its result (state.finished) and
// has not ended limits.exit_grace_ns later is killed (exit_hung). A child that is
// stopped (SIGSTOP, or a stop signal it raised itself) is killed: nothing
// would ever continue it. With `relay_fd` >= 0 (the read end of the pipe
// that is the child's standard error), what the child writes there is
// copied to this process's standard error meanwhile, control bytes escaped
// (Printable): the child never holds the user's terminal or log file.
//
// `limits` are the supervisor's own: the whole run ends at the deadline,
// and a plugin load at the load timeout (as the child reports its phases: a
// plugin can evade the per-pass and per-load limits by forging the page,
// never the deadline).
ChildOutcome Supervise(pid_t pid, const RunState& state, int relay_fd = -1,
                       const SuperviseLimits& limits = {});

// Copies what is left in the relay pipe to standard error, until every
// writer is gone (call after KillDescendants), and closes it.
void DrainRelay(int relay_fd);

// "SIGSEGV (segmentation fault)".
std::string SignalName(int sig);

// Explains how the child ended, naming the pass, plugin or plugin kernel
// that was running ("TOOL: killed by ... in pass P of plugin ..."); empty
// when the child finished its program normally.
std::string DescribeAbnormalEnd(const RunState& state, const ChildOutcome& o,
                                std::string_view tool = "plir-opt");

// The plugin path whose load the child was in when it died, if it was
// scanning the search path (so that a retry can skip it).
bool DiedWhileScanning(const RunState& state, std::string* path);

// Escapes control bytes and invalid UTF-8 in text from untrusted sources
// (file names, plugin strings) before it goes into a message.
std::string Printable(std::string_view s);

}  // namespace plir

#endif  // PLIR_DRIVER_SUPERVISOR_H_
