#include "driver/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

namespace plir {
namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void CopyTo(char* dst, size_t cap, std::string_view s) {
  size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
  if (n > 0) std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

RunState* g_state = nullptr;

void OnOutOfMemory() {
  // operator new failed (under --memory-limit, the address-space cap): say
  // so and end here; unwinding through a plugin that cannot cope is worse.
  if (g_state) g_state->out_of_memory.store(1);
  static const char kMsg[] = "plir-opt: out of memory\n";
  ssize_t ignored = write(2, kMsg, sizeof kMsg - 1);
  (void)ignored;
  _exit(3);
}

void OnFault(int sig, siginfo_t* info, void* context) {
  if (g_state && info) {
    // A fault just below the stack pointer is the stack running into its
    // guard page.
    auto* uc = static_cast<ucontext_t*>(context);
    uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
#if defined(__x86_64__)
    uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
    uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.sp);
#else
    uintptr_t sp = 0;
    (void)uc;
#endif
    if (sp != 0 && addr + (256 << 10) >= sp && addr <= sp + (64 << 10))
      g_state->stack_overflow.store(1);
  }
  // Die of the same signal, so the supervisor sees it.
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void RunState::Enter(RunPhase p, std::string_view subject_text, std::string_view plugin_text) {
  CopyTo(subject, sizeof subject, subject_text);
  CopyTo(plugin, sizeof plugin, plugin_text);
  phase_start_ns.store(NowNs());
  phase.store(static_cast<int32_t>(p));
  phase_seq.fetch_add(1);
}

bool RunState::SetPrefixes(const std::vector<std::string>& yaml_prefixes) {
  size_t used = 0;
  num_prefixes = 0;
  prefix_offset[0] = 0;
  for (const std::string& y : yaml_prefixes) {
    if (num_prefixes >= kMaxPrefixes || used + y.size() > kPrefixBytes) return false;
    std::memcpy(prefixes + used, y.data(), y.size());
    used += y.size();
    prefix_offset[++num_prefixes] = static_cast<uint32_t>(used);
  }
  return true;
}

std::string RunState::Prefix(int i) const {
  if (i < 0 || i >= num_prefixes) return "";
  return std::string(prefixes + prefix_offset[i], prefix_offset[i + 1] - prefix_offset[i]);
}

RunState* NewRunState(bool shared) {
  if (!shared) {
    // Lives until exit (reachable: leak checkers stay quiet).
    static RunState* local = new RunState();
    return local;
  }
  void* p =
      mmap(nullptr, sizeof(RunState), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return new (p) RunState();
}

void InstallCrashHandlers(RunState* state) {
  g_state = state;
  std::set_new_handler(OnOutOfMemory);
  // The handler runs on its own stack: the thread's own may be exhausted.
  static char* alt = new char[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = 1 << 16;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = OnFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
}

bool ApplyMemoryLimit(int64_t mb) {
  if (mb <= 0) return true;
  rlimit rl{};
  rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(mb) << 20;
  return setrlimit(RLIMIT_AS, &rl) == 0;
}

ChildOutcome Supervise(pid_t pid, const RunState& state) {
  ChildOutcome out;
  int status = 0;
#ifdef SYS_pidfd_open
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  int pidfd = -1;
#endif
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    const int64_t limit_ns = state.pass_timeout_ns.load();
    RunPhase ph = static_cast<RunPhase>(state.phase.load());
    bool timed = limit_ns > 0 && (ph == RunPhase::kRunningPass || ph == RunPhase::kLoadingPlugin ||
                                  ph == RunPhase::kScanningPlugin);
    int64_t elapsed = NowNs() - state.phase_start_ns.load();
    if (timed && elapsed > limit_ns) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      out.timed_out = true;
      break;
    }
    // Wake when the child ends (the pidfd), or in time to check the limit.
    int wait_ms = 100;
    if (timed) {
      int64_t left_ms = (limit_ns - elapsed) / 1000000 + 1;
      if (left_ms < wait_ms) wait_ms = static_cast<int>(left_ms);
    }
    if (pidfd >= 0) {
      pollfd pfd{pidfd, POLLIN, 0};
      poll(&pfd, 1, wait_ms);
    } else {
      usleep(static_cast<useconds_t>(wait_ms < 5 ? wait_ms : 5) * 1000);
    }
  }
  if (pidfd >= 0) close(pidfd);
  if (WIFEXITED(status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  }
  return out;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (desc) s += std::string(" (") + desc + ")";
  return s;
}

std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 && c != '\t' && c != '\n') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0x7f) {
      out += "\\x7f";
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

bool DiedWhileScanning(const RunState& state, std::string* path) {
  if (static_cast<RunPhase>(state.phase.load()) != RunPhase::kScanningPlugin) return false;
  *path = state.subject;
  return true;
}

std::string DescribeAbnormalEnd(const RunState& st, const ChildOutcome& o) {
  if (o.exited && st.finished.load()) return "";
  std::string what;
  RunPhase ph = static_cast<RunPhase>(st.phase.load());
  std::string subject = Printable(st.subject);
  switch (ph) {
    case RunPhase::kLoadingPlugin:
    case RunPhase::kScanningPlugin:
      what = "while loading plugin " + subject;
      break;
    case RunPhase::kRunningPass:
      what = "in pass " + subject + " of plugin " + Printable(st.plugin);
      break;
    case RunPhase::kLoadingInput:
      what = "while loading the input";
      break;
    case RunPhase::kWritingOutput:
      what = "while writing the output";
      break;
    default:
      what = "while starting";
  }
  std::string why;
  if (o.timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", st.pass_timeout_ns.load() / 1e9);
    why = std::string("time limit exceeded (--pass-timeout ") + buf + " s)";
  } else if (st.out_of_memory.load()) {
    int64_t mb = st.memory_limit_mb.load();
    why = "out of memory" +
          (mb > 0 ? " (--memory-limit " + std::to_string(mb) + " MB)" : std::string());
  } else if (o.signal != 0) {
    why = "killed by " + SignalName(o.signal);
    if (st.stack_overflow.load()) why += ": stack overflow";
    if (o.signal == SIGKILL) why += "; out of memory (the kernel's OOM killer)?";
  } else if (o.exited) {
    why = "the process exited with status " + std::to_string(o.exit_code) +
          " (exit() called from plugin code?)";
  } else {
    why = "the process ended abnormally";
  }
  return "plir-opt: " + why + " " + what;
}

}  // namespace plir
