// Parallel parsing and printing give exactly the serial result, and
// ParallelFor runs every index once.
#include "ir/parallel.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "testing/random_module.h"

namespace plir {
namespace {

// Runs ParallelFor(n, threads, ...) `calls` times. True iff every index ran
// once per call; *max_worker is the highest worker id seen.
bool EveryIndexOncePerCall(size_t n, int threads, int calls, size_t* max_worker) {
  std::vector<std::atomic<int>> hits(n);
  std::atomic<size_t> highest{0};
  for (int call = 0; call < calls; ++call)
    ParallelFor(n, threads, [&](size_t i, size_t w) {
      hits[i].fetch_add(1);
      size_t m = highest.load();
      while (w > m && !highest.compare_exchange_weak(m, w)) {
      }
    });
  *max_worker = highest.load();
  for (auto& h : hits)
    if (h.load() != calls) return false;
  return true;
}

// Runs body() in a forked child, whose exit status is what body returns;
// expects the child to exit with 0.
void ExpectChildSucceeds(const std::function<int()>& body) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(body());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ParallelForTest, RunsEveryIndexOnceWithValidWorkerIds) {
  for (int threads : {1, 2, 7}) {
    size_t max_worker = 0;
    EXPECT_TRUE(EveryIndexOncePerCall(1000, threads, 1, &max_worker)) << threads;
    EXPECT_LT(max_worker, ParallelThreads(1000, threads));
  }
}

// Threads that cannot be created (here: an address-space limit leaves no
// room for their stacks, as a pids cgroup or RLIMIT_NPROC would) mean fewer
// workers, not std::terminate: every index still runs once. In a child
// process, so the limit stays there.
TEST(ParallelForTest, FallsBackToFewerThreadsWhenThreadsCannotBeCreated) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than the limit leaves";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than the limit leaves";
#endif
#endif
  ExpectChildSucceeds([] {
    long pages = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr || std::fscanf(f, "%ld", &pages) != 1) return 3;
    std::fclose(f);
    // Room for a few 8 MiB thread stacks at most, not for 256.
    rlim_t limit = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + (48u << 20);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_AS, &rl) != 0) return 4;
    size_t max_worker = 0;
    if (!EveryIndexOncePerCall(10000, 256, 1, &max_worker)) return 5;
    // Fewer than the 256 asked for were created: the fallback did run.
    return max_worker < 255 ? 0 : 6;
  });
}

// The helpers are kept between calls: 200 calls on 3 threads run on a few
// kernel threads (the caller and the pool's helpers, of which earlier tests
// may have started more: any of them may take a call), not a new pair per
// call (kernel thread ids are not reused that soon).
TEST(ParallelForTest, HelpersAreKeptBetweenCalls) {
  std::mutex mu;
  std::set<long> tids;
  for (int call = 0; call < 200; ++call)
    ParallelFor(64, 3, [&](size_t, size_t) {
      long tid = syscall(SYS_gettid);
      std::lock_guard<std::mutex> lock(mu);
      tids.insert(tid);
    });
  EXPECT_LE(tids.size(), 16u);
  EXPECT_GE(tids.size(), 1u);
}

// A ParallelFor from inside fn (nested), and calls from two threads at once
// (one of them gets the pool, the other starts its own threads), each run
// every index once with worker ids in range.
TEST(ParallelForTest, NestedAndConcurrentCallsRunEveryIndexOnce) {
  auto check = [](int threads) {
    std::vector<std::atomic<int>> hits(200 * 50);
    std::atomic<bool> bad_worker{false};
    ParallelFor(200, threads, [&](size_t i, size_t w) {
      if (w >= ParallelThreads(200, threads)) bad_worker = true;
      ParallelFor(50, threads, [&](size_t j, size_t w2) {
        if (w2 >= ParallelThreads(50, threads)) bad_worker = true;
        hits[i * 50 + j].fetch_add(1);
      });
    });
    int wrong = 0;
    for (auto& h : hits) wrong += h.load() != 1;
    return wrong == 0 && !bad_worker;
  };
  std::atomic<int> ok{0};
  std::thread a([&] { ok += check(2); });
  std::thread b([&] { ok += check(3); });
  a.join();
  b.join();
  EXPECT_EQ(ok.load(), 2);
}

// A forked child (which has none of the parent's helpers) still runs
// ParallelFor on several threads, and every index once.
TEST(ParallelForTest, WorksInAForkedChild) {
  ParallelFor(100, 2, [](size_t, size_t) {});  // the parent has a pool
  ExpectChildSucceeds([] {
    size_t max_worker = 0;
    if (!EveryIndexOncePerCall(1000, 2, 20, &max_worker)) return 5;
    return max_worker < 2 ? 0 : 6;
  });
}

TEST(ParallelForTest, DefaultThreadsCanBeSetAndRestored) {
  SetDefaultThreads(3);
  EXPECT_EQ(DefaultThreads(), 3);
  EXPECT_EQ(ParallelThreads(100, 0), 3u);
  EXPECT_EQ(ParallelThreads(2, 0), 2u);
  SetDefaultThreads(0);
  EXPECT_GE(DefaultThreads(), 1);
}

// A module of several hundred functions, large enough (several MB of text)
// that the parser and printer do use threads.
Module ManyFunctions() {
  testing::RandomModuleOptions o;
  o.seed = 7;
  o.num_bindings = 60000;
  o.bindings_per_function = 150;
  return testing::GenerateRandomModule(o);
}

TEST(ParallelTextTest, PrintingIsByteIdenticalToSerial) {
  Module m = ManyFunctions();
  ASSERT_GT(m.items().size(), 100u);
  PrintOptions serial, parallel;
  serial.threads = 1;
  parallel.threads = 4;
  std::string a = PrintModule(m, serial);
  ASSERT_GT(a.size(), 1u << 20);
  EXPECT_EQ(a, PrintModule(m, parallel));
}

// PrintModuleTo hands over PrintModule's text in order, in pieces (a large
// function in pieces of about a megabyte), serially and in windows of
// items printed in parallel; a failing sink stops it with its error.
TEST(ParallelTextTest, PrintModuleToStreamsTheSameText) {
  Module many = ManyFunctions();
  testing::RandomModuleOptions big;
  big.seed = 3;
  big.num_bindings = 40000;
  big.bindings_per_function = 40000;  // one function of several MB
  Module one = testing::GenerateRandomModule(big);
  for (const Module* m : {&many, &one})
    for (int threads : {1, 4}) {
      PrintOptions po;
      po.threads = threads;
      std::string joined;
      size_t pieces = 0, largest = 0;
      Status s = PrintModuleTo(
          *m,
          [&](std::string_view piece) {
            joined.append(piece);
            ++pieces;
            largest = std::max(largest, piece.size());
            return Status::Ok();
          },
          po);
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_EQ(joined, PrintModule(*m, po));
      EXPECT_GT(pieces, 2u);
      // Serially, a large function comes in pieces; in parallel windows,
      // each function whole.
      if (threads == 1) EXPECT_LT(largest, 2u << 20) << "a piece of " << largest << " bytes";
    }
  size_t calls = 0;
  Status s = PrintModuleTo(one, [&](std::string_view) {
    ++calls;
    return calls == 2 ? InvalidArgument("disk full") : Status::Ok();
  });
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "disk full");
  EXPECT_EQ(calls, 2u);  // nothing more after the error
}

// ParseOptions::done_with hands over ranges of the text behind the parser,
// disjoint and in order within a function, that together cover the bodies;
// the module is the one parsed without it.
TEST(ParallelTextTest, DoneWithCoversTheBodiesWithoutChangingTheParse) {
  testing::RandomModuleOptions big;
  big.seed = 3;
  big.num_bindings = 60000;
  big.bindings_per_function = 60000;
  PrintOptions po;
  po.threads = 1;
  std::string text = PrintModule(testing::GenerateRandomModule(big), po);
  std::mutex mu;
  std::vector<std::pair<size_t, size_t>> ranges;
  ParseOptions with;
  with.threads = 1;
  with.done_with = [&](size_t b, size_t e) {
    std::lock_guard<std::mutex> lock(mu);
    ranges.emplace_back(b, e);
  };
  StatusOr<Module> a = ParseModule(text, with);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(PrintModule(*a, po), text);
  ASSERT_GT(ranges.size(), 2u);  // within the large function, not only at its end
  std::sort(ranges.begin(), ranges.end());
  size_t covered = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_LT(ranges[i].first, ranges[i].second);
    EXPECT_LE(ranges[i].second, text.size());
    if (i) EXPECT_GE(ranges[i].first, ranges[i - 1].second);  // disjoint
    covered += ranges[i].second - ranges[i].first;
  }
  EXPECT_GT(covered, text.size() * 9 / 10);
}

TEST(ParallelTextTest, ParsingGivesTheSerialModule) {
  PrintOptions po;
  po.threads = 1;
  std::string text = PrintModule(ManyFunctions(), po);
  ParseOptions serial, parallel;
  serial.threads = 1;
  parallel.threads = 4;
  StatusOr<Module> a = ParseModule(text, serial);
  StatusOr<Module> b = ParseModule(text, parallel);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_TRUE(StructuralEqual(*a, *b));
  EXPECT_EQ(PrintModule(*a, po), PrintModule(*b, po));
  EXPECT_EQ(PrintModule(*b, po), text);
}

TEST(ParallelTextTest, TheReportedErrorDoesNotDependOnThreads) {
  PrintOptions po;
  po.threads = 1;
  std::string text = PrintModule(ManyFunctions(), po);
  // Break two function bodies far apart: the earlier one must be reported.
  size_t first = text.find(" = ", text.size() / 4);
  size_t second = text.find(" = ", 3 * text.size() / 4);
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  text.replace(second, 3, " ? ");
  text.replace(first, 3, " ! ");
  ParseOptions serial, parallel;
  serial.threads = 1;
  parallel.threads = 4;
  StatusOr<Module> a = ParseModule(text, serial);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("'!'"), std::string::npos) << a.status().message();
  for (int i = 0; i < 5; ++i) {
    StatusOr<Module> b = ParseModule(text, parallel);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(a.status().message(), b.status().message());
  }
}

}  // namespace
}  // namespace plir
