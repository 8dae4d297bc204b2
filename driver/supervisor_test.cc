#include "driver/supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "driver/reproducer.h"

namespace plir {
namespace {

// What a hostile child may leave in the page: the supervisor's readers stay
// inside it.
TEST(RunStateTest, ReadersAreBoundedWhateverTheChildWrote) {
  auto st = std::make_unique<RunState>();
  std::memset(st->subject, 'A', sizeof st->subject);  // no terminator
  std::memset(st->plugin, 'B', sizeof st->plugin);
  std::memset(st->failure, 'C', sizeof st->failure);
  std::memset(st->plugins, 'D', sizeof st->plugins);
  EXPECT_EQ(st->SubjectText().size(), sizeof st->subject);
  EXPECT_EQ(st->PluginText().size(), sizeof st->plugin);
  EXPECT_EQ(st->FailureText().size(), sizeof st->failure);
  EXPECT_EQ(st->PluginsText().size(), sizeof st->plugins);
  st->phase.store(12345);
  EXPECT_EQ(st->Phase(), RunPhase::kStartup);
  st->phase.store(-7);
  EXPECT_EQ(st->Phase(), RunPhase::kStartup);
  st->pass_timeout_ns.store(-1);
  st->memory_limit_mb.store(int64_t{1} << 62);
  EXPECT_EQ(st->PassTimeoutSeconds(), 0);
  EXPECT_EQ(st->MemoryLimitMb(), 0);
  ChildOutcome o;
  o.signal = 11;
  std::string why = DescribeAbnormalEnd(*st, o);
  EXPECT_NE(why.find("killed by SIGSEGV"), std::string::npos);
  EXPECT_LT(why.size(), 1000u);
}

// plir-run: a crash in a plugin's kernel names the op and its plugin;
// between kernels, the run and the plugins loaded.
TEST(RunStateTest, PlirRunNamesTheKernelOrTheRun) {
  auto st = std::make_unique<RunState>();
  st->Enter(RunPhase::kRunning, "@main", "a 1 (/p/liba.so), b 2 (/p/libb.so)");
  st->EnterKernel(
      "op test.crash_kernel of plugin test_crashers 1.2.3 (/p/libplir_test_crashers.so)");
  ChildOutcome o;
  o.signal = 11;
  EXPECT_EQ(DescribeAbnormalEnd(*st, o, "plir-run"),
            "plir-run: killed by SIGSEGV (Segmentation fault) in the kernel of op "
            "test.crash_kernel of plugin test_crashers 1.2.3 (/p/libplir_test_crashers.so)");
  st->LeaveKernel();
  o = ChildOutcome();
  o.exited = true;
  o.exit_code = 3;
  EXPECT_EQ(DescribeAbnormalEnd(*st, o, "plir-run"),
            "plir-run: the process exited with status 3 (exit() called from plugin code?) while "
            "running @main (plugins loaded: a 1 (/p/liba.so), b 2 (/p/libb.so))");
  // A text the child forged is escaped.
  st->EnterKernel("op \x1b[2J");
  EXPECT_NE(DescribeAbnormalEnd(*st, o, "plir-run").find("in the kernel of op \\x1b[2J"),
            std::string::npos);
}

TEST(RunStateTest, PrefixesOutOfRangeReadAsNone) {
  auto st = std::make_unique<RunState>();
  ASSERT_TRUE(st->SetPrefixes({"a: 1\n", "a: 1\nb: 2\n"}));
  EXPECT_EQ(st->Prefix(1), "a: 1\nb: 2\n");
  EXPECT_EQ(st->Prefix(2), "");
  EXPECT_EQ(st->Prefix(-1), "");
  st->num_prefixes = 1 << 30;
  EXPECT_EQ(st->Prefix(1), "");
  st->num_prefixes = 2;
  st->prefix_offset[2] = 0xfff00000u;
  EXPECT_EQ(st->Prefix(1), "");
  st->prefix_offset[2] = 2;  // before its start
  EXPECT_EQ(st->Prefix(1), "");
  st->top_step.store(1 << 20);
  EXPECT_FALSE(st->HasPrefixForTopStep());
}

TEST(RunStateTest, DiedWhileScanningNeedsAPath) {
  auto st = std::make_unique<RunState>();
  st->phase.store(static_cast<int32_t>(RunPhase::kScanningPlugin));
  std::string path;
  EXPECT_FALSE(DiedWhileScanning(*st, &path));
  st->Enter(RunPhase::kScanningPlugin, "/plugins/libplir_x.so");
  EXPECT_TRUE(DiedWhileScanning(*st, &path));
  EXPECT_EQ(path, "/plugins/libplir_x.so");
}

TEST(RunStateTest, ThePluginListIsNeverOpened) {
  // The child hashes; the parent only parses, whatever the lines name.
  auto plugins = PluginsFromLines("/dev/zero\tevil\t1\n/no/such\tx\t2\tabc\nonly-a-path\n");
  ASSERT_EQ(plugins.size(), 3u);
  EXPECT_EQ(plugins[0].path, "/dev/zero");
  EXPECT_EQ(plugins[0].sha256, "");
  EXPECT_EQ(plugins[1].sha256, "abc");
  EXPECT_EQ(plugins[2].name, "");
}

// Bytes that are not UTF-8 are escaped like control bytes; whole sequences
// stay (hostile round F5).
TEST(PrintableTest, EscapesInvalidUtf8AndControlBytes) {
  EXPECT_EQ(Printable("plain\ttext\n"), "plain\ttext\n");
  EXPECT_EQ(Printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(Printable("a\xff"
                      "b"),
            "a\\xffb");
  EXPECT_EQ(Printable("\xef\xbb\xbf"), "\xef\xbb\xbf");     // a BOM is valid UTF-8
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(Printable("\xe2\x82"), "\\xe2\\x82");           // truncated
  EXPECT_EQ(Printable("\x80x"), "\\x80x");                  // a stray continuation
  EXPECT_EQ(Printable(std::string("\x1b[2J\x00\x7f", 6)), "\\x1b[2J\\x00\\x7f");
}

// The exit phase: a child that called exit() and does not finish exiting
// is named with the status and what ran.
TEST(RunStateTest, AnExitThatNeverEndsIsNamed) {
  auto st = std::make_unique<RunState>();
  st->Enter(RunPhase::kRunningPass, "Hostile", "test_hostile 6.6.6 (/p.so)");
  ChildOutcome o;
  o.signal = SIGKILL;
  o.exit_hung = true;
  o.exit_status = 3;
  o.exit_grace_s = 5;
  EXPECT_EQ(DescribeAbnormalEnd(*st, o),
            "plir-opt: the process called exit(3) and did not finish exiting within 5 s (a "
            "plugin's static destructor or exit handler that never returns?) in pass Hostile of "
            "plugin test_hostile 6.6.6 (/p.so)");
  o.exit_after_result = true;
  EXPECT_NE(DescribeAbnormalEnd(*st, o, "plir-run")
                .find("plir-run: the process did not exit within 5 s after it handed over its "
                      "result"),
            std::string::npos);
}

// What glibc does, and what the supervisor makes of it: a handler
// registered before WatchExitPhase (as a plugin's static destructors are,
// when it loads) runs after the watch's, so the page says "exiting" with
// the status while that handler spins, and the supervisor ends the child
// after the grace.
void SpinForever() {
  for (;;) pause();
}

// Forks a child that watches its exit phase, enters a pass and calls
// exit(status); with `spin`, an exit handler registered before the watch
// (as a plugin's static destructor is) never returns.
pid_t ForkExitingChild(RunState* st, int status, bool spin) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (spin) std::atexit(SpinForever);  // registered first, so it runs last
  WatchExitPhase(st);
  st->Enter(RunPhase::kRunningPass, "Hostile", "p 1 (/p.so)");
  std::exit(status);
}

TEST(SuperviseTest, BoundsTheExitPhase) {
  RunState* st = NewRunState(true);
  ASSERT_NE(st, nullptr);
  pid_t pid = ForkExitingChild(st, 3, /*spin=*/true);
  ASSERT_GT(pid, 0);
  SuperviseLimits limits;
  limits.exit_grace_ns = 300 * 1000000LL;
  const int64_t start = MonotonicNowNs();
  ChildOutcome o = Supervise(pid, *st, -1, limits);
  const double seconds = (MonotonicNowNs() - start) / 1e9;
  EXPECT_TRUE(o.exit_hung);
  EXPECT_FALSE(o.exit_after_result);
  EXPECT_EQ(o.exit_status, 3);
  EXPECT_EQ(st->exiting.load(), 1);
  EXPECT_LT(seconds, 10);
  EXPECT_NE(DescribeAbnormalEnd(*st, o).find("called exit(3) and did not finish exiting within "
                                             "0.3 s"),
            std::string::npos);
}

// A child that exits promptly is not touched by the exit grace.
TEST(SuperviseTest, AQuickExitIsAnExit) {
  RunState* st = NewRunState(true);
  ASSERT_NE(st, nullptr);
  pid_t pid = ForkExitingChild(st, 4, /*spin=*/false);
  ASSERT_GT(pid, 0);
  ChildOutcome o = Supervise(pid, *st);
  EXPECT_FALSE(o.exit_hung);
  EXPECT_TRUE(o.exited);
  EXPECT_EQ(o.exit_code, 4);
  EXPECT_EQ(st->exit_status.load(), 4);
}

}  // namespace
}  // namespace plir
