#include "driver/supervisor.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace plir
