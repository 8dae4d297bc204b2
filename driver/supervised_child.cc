#include "driver/supervised_child.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "ir/serialize/module_file.h"

namespace {
// LeakSanitizer's check at exit stops the world with ptrace, which the
// sandbox forbids: in the child it is off (the child ends with _exit, and
// with exit() only when a plugin calls it). Asked for by LeakSanitizer
// builds only; never called otherwise.
std::atomic<bool> g_child_skips_leak_check{false};
}  // namespace

extern "C" int __lsan_is_turned_off() { return g_child_skips_leak_check.load() ? 1 : 0; }

namespace plir {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The child's side: never returns.
[[noreturn]] void RunChild(const ChildSetup& setup, RunState* state, const ChildProgram& program,
                           pid_t parent, int relay_fd) {
  // Before any plugin code: the child holds no descriptor of the parent's
  // but the ones it is given.
  std::vector<int> keep = setup.fds;
  if (!IsolateChild(parent, &keep, relay_fd)) {
    state->finished.store(1);
    _exit(1);
  }
  g_child_skips_leak_check.store(true);
  if (Status s = EnterSandbox(setup.sandbox_policy, setup.sandbox_mode, setup.sandbox_support);
      !s.ok()) {
    std::cerr << setup.tool << ": " << Printable(s.message()) << "\n";
    state->finished.store(1);
    _exit(1);
  }
  InstallCrashHandlers(state, setup.tool);
  // An exit() from plugin code is marked in the page, so that the
  // supervisor bounds the exit phase (a static destructor that spins).
  WatchExitPhase(state);
  if (setup.memory_limit_mb > 0 && !ApplyMemoryLimit(setup.memory_limit_mb))
    std::cerr << "warning: cannot apply --memory-limit\n";
  int rc = 1;
  try {
    rc = program(keep);
  } catch (const std::exception& e) {
    std::cerr << setup.tool << ": internal error: " << Printable(e.what()) << "\n";
  } catch (...) {
    std::cerr << setup.tool << ": internal error\n";
  }
  state->finished.store(1);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(rc);
}

}  // namespace

StatusOr<ChildEnd> RunInSupervisedChild(const ChildSetup& setup, RunState* state,
                                        const ChildProgram& program) {
  BecomeSupervisor();
  // The child's standard error is a pipe the parent copies from.
  int relay[2];
  if (pipe2(relay, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(relay[0]);
    close(relay[1]);
    return Internal(std::string("fork failed: ") + std::strerror(err));
  }
  if (pid == 0) RunChild(setup, state, program, parent, relay[1]);
  close(relay[1]);
  setpgid(pid, pid);  // also here: the child may not have run yet
  KillOnTerminatingSignal(pid);
  ChildEnd end;
  end.outcome = Supervise(pid, *state, relay[0], setup.limits);
  // Nothing the child started may outlive it, or touch the result while
  // the parent reads it.
  KillDescendants(pid);
  KillOnTerminatingSignal(0);
  DrainRelay(relay[0]);
  end.abnormal = DescribeAbnormalEnd(*state, end.outcome, setup.tool);
  return end;
}

void RecordPluginActivity(PluginLoader& loader, RunState* state) {
  loader.SetLoadObserver([state](const std::string& path, bool scanning) {
    state->Enter(scanning ? RunPhase::kScanningPlugin : RunPhase::kLoadingPlugin, path);
  });
  loader.SetKernelHook([state](const std::string* what) {
    if (what)
      state->EnterKernel(*what);
    else
      state->LeaveKernel();
  });
}

SuperviseLimits SupervisorLimits(double timeout_s, double load_timeout_s) {
  SuperviseLimits limits;
  if (timeout_s > 0) {
    limits.deadline_ns = MonotonicNowNs() + static_cast<int64_t>(timeout_s * 1e9);
    limits.run_timeout_s = timeout_s;
  }
  if (load_timeout_s > 0) limits.load_timeout_ns = static_cast<int64_t>(load_timeout_s * 1e9);
  return limits;
}

StatusOr<SandboxSupport> ProbeSandboxFor(SandboxMode mode, const char* tool) {
  SandboxSupport support = ProbeSandbox();
  if (std::string shortfall = SandboxShortfall(mode, support, tool); !shortfall.empty()) {
    if (mode == SandboxMode::kRequire) return FailedPrecondition(shortfall);
    std::cerr << shortfall << "\n";
  }
  return support;
}

StatusOr<ChildInput> PrepareChildInput(const std::string& path, uint64_t max_bytes) {
  ChildInput in;
  in.name = path == "-" ? "<stdin>" : path;
  in.ext = EndsWith(path, ".plirb") ? ".plirb" : EndsWith(path, ".json") ? ".json" : ".plir";
  struct stat st {};
  if (path != "-" && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (static_cast<uint64_t>(st.st_size) > max_bytes)
      return ResourceExhausted(path + ": input larger than the limit of " +
                               std::to_string(max_bytes) + " bytes (--max-input-bytes)");
    in.path = path;
    return in;
  }
  PLIR_ASSIGN_OR_RETURN(ModuleFile file, ModuleFile::Open(path));  // checks kind and size
  int fd = memfd_create("plir-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Internal(std::string("memfd_create: ") + std::strerror(errno));
  std::string_view data = file.contents();
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return Internal(std::string("writing the input copy: ") + std::strerror(err));
    }
    off += static_cast<size_t>(n);
  }
  // Sealed: the child (and a plugin in it) reads the copy, and cannot
  // change what a reproducer copies.
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    int err = errno;
    close(fd);
    return Internal(std::string("sealing the input copy: ") + std::strerror(err));
  }
  in.fd = fd;
  in.path = "/proc/self/fd/" + std::to_string(fd);
  if (in.ext == ".plir") {
    ModuleFormat format = DetectFormat(data);
    in.ext = format == ModuleFormat::kBinary ? ".plirb"
             : format == ModuleFormat::kJson ? ".json"
                                             : ".plir";
  }
  return in;
}

}  // namespace plir
