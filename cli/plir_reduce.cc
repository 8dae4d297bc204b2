// plir-reduce: shrinks a module while a failure persists.
//
//   plir-reduce INPUT -o OUT (--pipeline P.yaml | --passes A,B)
//               [--plugin PATH]... [--plugin-path DIR]... [--plir-opt PATH]
//   plir-reduce INPUT -o OUT --test 'CMD'
//
// With a pipeline, a candidate is "interesting" when plir-opt fails on it
// the same way it fails on INPUT: the same exit status and the same first
// "plir-opt: ..." line (a crash of the same pass, the same error). With
// --test, when `sh -c 'CMD "$1"' - CANDIDATE` exits 0 (the convention of
// creduce and llvm-reduce). Every candidate is a well-formed module (the
// verifier checks it before it is tried).
//
// The pipeline first (with --pipeline or --passes): its top-level steps
// (a repeat group is one step) are dropped by delta debugging while the
// module still fails, and the reduced pipeline is written as canonical YAML
// (--pipeline-output; default OUT.pipeline.yaml beside -o OUT, or standard
// error), or printed as a --passes list. --no-reduce-pipeline keeps it.
// --opt-arg ARG passes ARG to every plir-opt run (--check-execution, say).
//
// Then the module. Reductions, repeated until none applies: remove functions; remove
// bindings, a removed variable's later uses reading an operand of the same
// type (or a parameter of that type) instead; replace an `if` by one of its
// branches. Sets of candidates are tried in halving chunks (delta
// debugging), so a failure buried in a large module is found in
// O(k log n) tests.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "driver/file_util.h"
#include "driver/supervisor.h"
#include "driver/tool_options.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"

namespace plir {
namespace {

struct Flags : ToolFlags {  // input, -o, --pipeline, --passes, --plugin, --plugin-path
  std::string plir_opt;
  std::string test;
  int max_tests = 10000;
  uint64_t max_input_bytes = ModuleFile::kDefaultMaxBytes;
  double test_timeout_s = 60;  // one test (plir-opt or --test); 0: none
  double pass_timeout_s = 0;   // passed to plir-opt as --pass-timeout
  bool verbose = false;
  std::vector<std::string> opt_args;  // --opt-arg: more plir-opt arguments
  std::string pipeline_output;        // where the reduced pipeline goes
  bool no_reduce_pipeline = false;
};

std::string SelfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path().string();
}

// The test running now (its process group), and the work directory: what a
// SIGINT, SIGTERM or SIGHUP handler cleans up (async-signal-safe state).
std::atomic<pid_t> g_test_pgid{0};
char g_work_dir[4096];
std::atomic<bool> g_have_work_dir{false};
double g_test_timeout_s = 60;

// Removes the files of a flat directory, then the directory; raw system
// calls only (a signal handler calls it).
void RemoveFlatDir(const char* dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096];
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
        unsigned short reclen;
        std::memcpy(&reclen, buf + off + 16, sizeof reclen);
        const char* name = buf + off + 19;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) unlinkat(fd, name, 0);
        off += reclen;
      }
    }
    close(fd);
  }
  rmdir(dir);
}

void OnTerminatingSignal(int sig) {
  pid_t pgid = g_test_pgid.load();
  if (pgid > 0) kill(-pgid, SIGKILL);
  if (g_have_work_dir.load()) RemoveFlatDir(g_work_dir);
  RemoveTemporaryFilesNow();
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallSignalCleanup(const std::string& work) {
  if (work.size() >= sizeof g_work_dir) return;
  std::memcpy(g_work_dir, work.c_str(), work.size() + 1);
  g_have_work_dir.store(true);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = OnTerminatingSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

constexpr int kTimedOut = 124;  // as timeout(1) says

// Runs argv with stdout to `out_path` (default /dev/null) and stderr
// captured; returns the exit status (128 + signal if killed; 124 if it ran
// longer than --test-timeout, when it and everything it started are
// killed). The test runs in its own process group.
int RunCapture(const std::vector<std::string>& argv, const std::string& err_path,
               const std::string& out_path = "") {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    // Its own process group (killed whole on a timeout or a signal), and no
    // terminal to read: a background group reading it would stop.
    setpgid(0, 0);
    int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0) dup2(null_in, 0);
    int devnull = out_path.empty() ? open("/dev/null", O_WRONLY)
                                   : open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (devnull >= 0) dup2(devnull, 1);
    if (err >= 0) dup2(err, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  g_test_pgid.store(pid);
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  bool timed_out = false;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (g_test_timeout_s > 0 && elapsed > g_test_timeout_s) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      timed_out = true;
      break;
    }
    pollfd pfd{pidfd, POLLIN, 0};
    if (pidfd >= 0)
      poll(&pfd, 1, 50);
    else
      usleep(5000);
  }
  if (pidfd >= 0) close(pidfd);
  g_test_pgid.store(0);
  if (timed_out) return kTimedOut;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// What identifies a failure: the exit status and plir-opt's first message
// line (with the candidate's file name taken out).
struct Signature {
  int status = 0;
  std::string line;
  bool operator==(const Signature& o) const { return status == o.status && line == o.line; }
};

class Reducer {
 public:
  Reducer(const Flags& f, std::string work)
      : f_(f), work_(std::move(work)), pipeline_(f.pipeline), passes_(f.passes) {}

  // What plir-opt runs: a pipeline file, or a --passes list.
  void SetPipeline(std::string file, std::string passes) {
    pipeline_ = std::move(file);
    passes_ = std::move(passes);
  }
  const std::string& work() const { return work_; }

  StatusOr<Signature> Probe(const Module& m) {
    ++tests_;
    std::string file = work_ + "/candidate.plir";
    PLIR_RETURN_IF_ERROR(WriteFileAtomically(file, PrintModule(m)));
    std::string err = work_ + "/stderr";
    Signature sig;
    if (!f_.test.empty()) {
      sig.status =
          RunCapture({"/bin/sh", "-c", f_.test + " \"$1\"", "plir-reduce-test", file}, err);
      return sig;
    }
    std::vector<std::string> argv = {f_.plir_opt, file, "-o", "/dev/null", "--no-reproducer"};
    if (f_.pass_timeout_s > 0) {
      std::ostringstream t;
      t << f_.pass_timeout_s;
      argv.insert(argv.end(), {"--pass-timeout", t.str()});
    }
    if (!pipeline_.empty()) argv.insert(argv.end(), {"--pipeline", pipeline_});
    if (!passes_.empty()) argv.insert(argv.end(), {"--passes", passes_});
    for (const std::string& p : f_.plugins) argv.insert(argv.end(), {"--plugin", p});
    for (const std::string& d : f_.plugin_dirs) argv.insert(argv.end(), {"--plugin-path", d});
    argv.insert(argv.end(), f_.opt_args.begin(), f_.opt_args.end());
    sig.status = RunCapture(argv, err);
    StatusOr<std::string> text = ReadFileToString(err);
    if (text.ok()) {
      size_t pos = 0;
      while (pos < text->size()) {
        size_t nl = text->find('\n', pos);
        std::string line =
            text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text->size() : nl + 1;
        if (line.rfind("plir-opt: ", 0) != 0) continue;
        for (size_t at; (at = line.find(file)) != std::string::npos;)
          line.replace(at, file.size(), "INPUT");
        sig.line = line;
        break;
      }
    }
    return sig;
  }

  // Well-formed and failing like the original.
  bool Interesting(const Module& m) {
    if (tests_ >= f_.max_tests) return false;
    if (!Verify(m).ok()) return false;
    StatusOr<Signature> s = Probe(m);
    if (!s.ok()) return false;
    if (!f_.test.empty()) return s->status == 0;
    return *s == target_;
  }

  Status Init(const Module& m) {
    PLIR_ASSIGN_OR_RETURN(Signature s, Probe(m));
    if (!f_.test.empty()) {
      if (s.status != 0)
        return FailedPrecondition("the --test command does not find the input interesting (exit " +
                                  std::to_string(s.status) + "): nothing to reduce");
    } else if (s.status == 0) {
      return FailedPrecondition(
          "plir-opt does not fail on the input with this pipeline: nothing to reduce");
    }
    target_ = s;
    return Status::Ok();
  }

  // Delta debugging over `n` elements: tries dropping chunks of halving
  // size; `apply(drop)` builds the candidate without the elements marked.
  // Returns the best module found.
  Module Chunks(
      Module cur, size_t n,
      const std::function<std::optional<Module>(const Module&, const std::vector<bool>&)>& apply,
      const std::function<size_t(const Module&)>& count) {
    for (size_t g = std::max<size_t>(n / 2, 1); g >= 1; g /= 2) {
      for (size_t start = 0; start < n;) {
        if (tests_ >= f_.max_tests) return cur;  // no candidate is built past the budget
        std::vector<bool> drop(n, false);
        for (size_t i = start; i < std::min(n, start + g); ++i) drop[i] = true;
        std::optional<Module> cand = apply(cur, drop);
        if (cand && Interesting(*cand)) {
          cur = *cand;
          n = count(cur);
          continue;  // the same start now holds the next elements
        }
        start += g;
      }
      if (g == 1) break;
    }
    return cur;
  }

  int tests() const { return tests_; }
  bool budget_spent() const { return tests_ >= f_.max_tests; }

 private:
  const Flags& f_;
  std::string work_;
  std::string pipeline_, passes_;
  Signature target_;
  int tests_ = 0;
};

// Binding variables in module order (if branches included).
std::vector<const VarNode*> BindingVars(const Module& m) {
  std::vector<const VarNode*> out;
  for (const Item& it : m.items()) {
    auto* f = As<FunctionNode>(it.get());
    if (!f) continue;
    std::vector<const SeqExprNode*> stack{f->body().get()};
    while (!stack.empty()) {
      const SeqExprNode* s = stack.back();
      stack.pop_back();
      for (const Block& b : s->blocks())
        for (const Binding& bd : b->bindings()) {
          out.push_back(bd->var().get());
          if (auto* i = As<IfNode>(bd->value().get())) {
            stack.push_back(i->else_body().get());
            stack.push_back(i->then_body().get());
          }
        }
    }
  }
  return out;
}

size_t CountBindings(const Module& m) { return BindingVars(m).size(); }

// Removes the bindings of `drop`; each removed variable's later uses read a
// same-typed variable operand of its value, or else a same-typed parameter.
class BindingDropper : public ExprMutator {
 public:
  explicit BindingDropper(std::unordered_set<const VarNode*> drop) : drop_(std::move(drop)) {}
  std::vector<Var> params;

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* b = As<VarBindingNode>(n.get());
    if (!b || !drop_.count(b->var().get())) return n;
    const Type& t = b->var()->type();
    for (const VarNode* use : CollectVarUses(b->value().get())) {
      if (use != b->var().get() && use->type().get() == t.get()) {
        RemapVar(b->var().get(), Var(const_cast<VarNode*>(use)));
        return nullptr;
      }
    }
    for (const Var& p : params)
      if (p->type().get() == t.get()) {
        RemapVar(b->var().get(), p);
        return nullptr;
      }
    return nullptr;  // unused, or the verifier rejects the candidate
  }

 private:
  std::unordered_set<const VarNode*> drop_;
};

std::optional<Module> DropBindings(const Module& m, const std::vector<const VarNode*>& vars,
                                   const std::vector<bool>& drop) {
  std::unordered_set<const VarNode*> set;
  for (size_t i = 0; i < vars.size(); ++i)
    if (drop[i]) set.insert(vars[i]);
  std::vector<Item> items;
  for (const Item& it : m.items()) {
    Function f = it->kind() == NodeKind::kFunction ? Downcast<FunctionNode>(it) : Function();
    if (!f) {
      items.push_back(it);
      continue;
    }
    BindingDropper d(set);
    d.params = f->params();
    items.push_back(d.MutateFunction(f));
  }
  StatusOr<Module> r = Module::Make(std::move(items));
  if (!r.ok()) return std::nullopt;
  return *r;
}

// Replaces `v = if ...` (for v in `pick`) by the chosen branch's bindings
// and `v = branch result`.
class IfFlattener : public ExprMutator {
 public:
  IfFlattener(const VarNode* target, bool then_branch) : target_(target), then_(then_branch) {}

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* b = As<VarBindingNode>(n.get());
    if (!b || b->var().get() != target_) return n;
    auto* i = As<IfNode>(b->value().get());
    if (!i) return n;
    const SeqExpr& body = then_ ? i->then_body() : i->else_body();
    std::vector<Binding> out;
    for (const Block& blk : body->blocks())
      for (const Binding& bd : blk->bindings()) out.push_back(bd);
    out.push_back(VarBindingNode::Make(b->var(), body->result()));
    return BindingBlockNode::Make(std::move(out), false);
  }

 private:
  const VarNode* target_;
  bool then_;
};

// Delta debugging over the `n` steps of a pipeline: drops chunks of halving
// size, then single steps, while `interesting(kept)` holds; repeats until
// no step can go. Returns the indices kept (never none).
std::vector<size_t> ReduceSteps(
    size_t n, const std::function<bool(const std::vector<size_t>&)>& interesting) {
  std::vector<size_t> cur(n);
  for (size_t i = 0; i < n; ++i) cur[i] = i;
  for (bool changed = true; changed && cur.size() > 1;) {
    changed = false;
    for (size_t g = std::max<size_t>(cur.size() / 2, 1);; g /= 2) {
      for (size_t start = 0; start < cur.size() && cur.size() > 1;) {
        std::vector<size_t> cand;
        for (size_t i = 0; i < cur.size(); ++i)
          if (i < start || i >= start + g) cand.push_back(cur[i]);
        if (!cand.empty() && interesting(cand)) {
          cur = std::move(cand);
          changed = true;
          continue;  // the same start now holds the next steps
        }
        start += g;
      }
      if (g <= 1) break;
    }
  }
  return cur;
}

std::string JoinNames(const std::vector<std::string>& names, const std::vector<size_t>& keep) {
  std::string out;
  for (size_t i : keep) out += (out.empty() ? "" : ",") + names[i];
  return out;
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// A step's short description: its pass, or "repeat[...]", for messages.
std::string StepName(const YAML::Node& step) {
  if (step.IsScalar()) return step.as<std::string>();
  if (step.IsMap() && step["name"]) return step["name"].as<std::string>();
  if (step.IsMap() && step["repeat"]) {
    std::string inner;
    for (const YAML::Node& s : step["passes"]) inner += (inner.empty() ? "" : ",") + StepName(s);
    return "repeat[" + inner + "]";
  }
  if (step.IsMap() && step["extension_point"])
    return "extension_point " + step["extension_point"].as<std::string>();
  return "?";
}

// The pipeline reduction: on success the reducer runs the reduced pipeline
// from then on, and `report` says what was kept. `yaml_out` receives the
// reduced pipeline's YAML (empty for --passes).
Status ReducePipeline(const Flags& f, const Module& m, Reducer& r, std::string* report,
                      std::string* yaml_out) {
  if (!f.passes.empty()) {
    std::vector<std::string> names = SplitComma(f.passes);
    std::vector<size_t> keep = ReduceSteps(names.size(), [&](const std::vector<size_t>& k) {
      r.SetPipeline("", JoinNames(names, k));
      bool yes = r.Interesting(m);
      r.SetPipeline("", f.passes);
      return yes;
    });
    r.SetPipeline("", JoinNames(names, keep));
    *report = std::to_string(names.size()) + " -> " + std::to_string(keep.size()) +
              " passes: --passes " + JoinNames(names, keep);
    return Status::Ok();
  }
  // The canonical form, as plir-opt loads it: includes expanded, paths
  // absolute, so that a candidate works from the work directory.
  std::string canon = r.work() + "/pipeline.canonical.yaml", err = r.work() + "/emit.stderr";
  std::vector<std::string> argv = {f.plir_opt, "--pipeline", f.pipeline, "--emit-pipeline"};
  for (const std::string& p : f.plugins) argv.insert(argv.end(), {"--plugin", p});
  for (const std::string& d : f.plugin_dirs) argv.insert(argv.end(), {"--plugin-path", d});
  if (int rc = RunCapture(argv, err, canon); rc != 0) {
    StatusOr<std::string> why = ReadFileToString(err);
    return FailedPrecondition("plir-opt cannot load the pipeline " + f.pipeline + ": " +
                              (why.ok() ? *why : "exit " + std::to_string(rc)));
  }
  YAML::Node root;
  try {
    PLIR_ASSIGN_OR_RETURN(std::string text, ReadFileToString(canon));
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Internal("reading plir-opt's canonical pipeline: " + e.msg);
  }
  YAML::Node steps = root["passes"];
  if (!steps || !steps.IsSequence() || steps.size() == 0)
    return FailedPrecondition("the pipeline has no steps to reduce");
  std::vector<YAML::Node> all(steps.begin(), steps.end());
  auto yaml_of = [&](const std::vector<size_t>& keep) {
    YAML::Node copy = YAML::Clone(root);
    YAML::Node kept(YAML::NodeType::Sequence);
    for (size_t i : keep) kept.push_back(YAML::Clone(all[i]));
    copy["passes"] = kept;
    YAML::Emitter out;
    out << copy;
    return std::string(out.c_str()) + "\n";
  };
  std::string cand = r.work() + "/pipeline.candidate.yaml";
  std::vector<size_t> keep = ReduceSteps(all.size(), [&](const std::vector<size_t>& k) {
    if (!WriteFileAtomically(cand, yaml_of(k)).ok()) return false;
    r.SetPipeline(cand, "");
    bool yes = r.Interesting(m);
    r.SetPipeline(canon, "");
    return yes;
  });
  std::string reduced = r.work() + "/pipeline.reduced.yaml";
  *yaml_out = yaml_of(keep);
  PLIR_RETURN_IF_ERROR(WriteFileAtomically(reduced, *yaml_out));
  r.SetPipeline(reduced, "");
  std::string names;
  for (size_t i : keep) names += (names.empty() ? "" : ", ") + StepName(all[i]);
  *report =
      std::to_string(all.size()) + " -> " + std::to_string(keep.size()) + " steps (" + names + ")";
  return Status::Ok();
}

// plir-reduce's steps, in order: load the input, make the work directory,
// reduce the pipeline, reduce the module, write the results.

int Fail(const std::string& message) {
  std::cerr << "plir-reduce: " << message << "\n";
  return 1;
}

// The input module, in any format, verified.
StatusOr<Module> LoadInput(const Flags& f) {
  StatusOr<Module> loaded = LoadModuleFile(f.input);
  if (!loaded.ok()) return InvalidArgument(Printable(loaded.status().message()));
  if (Status s = Verify(*loaded); !s.ok())
    return InvalidArgument(Printable(f.input) + ": " + Printable(s.message()));
  return loaded;
}

// A fresh directory below $TMPDIR (else /tmp) for the candidates, removed
// on SIGINT, SIGTERM and SIGHUP.
StatusOr<std::string> MakeWorkDir() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string base = std::string(tmpdir ? tmpdir : "/tmp") + "/plir-reduce-XXXXXX";
  std::vector<char> dir(base.begin(), base.end());
  dir.push_back('\0');
  if (!mkdtemp(dir.data()))
    return Internal(std::string("cannot create a work directory: ") + std::strerror(errno));
  std::string work(dir.data());
  InstallSignalCleanup(work);
  return work;
}

// Shrinks `cur` in rounds (whole functions, then bindings, then if
// branches) while the failure persists, until a round changes nothing or
// the test budget is spent.
Module ReduceModule(const Flags& f, Reducer& r, Module cur) {
  for (int round = 0;; ++round) {
    const Module before = cur;
    // 1. Functions.
    cur = r.Chunks(
        cur, cur.size(),
        [](const Module& m, const std::vector<bool>& drop) -> std::optional<Module> {
          std::vector<Item> keep;
          for (size_t i = 0; i < m.size(); ++i)
            if (!drop[i]) keep.push_back(m.items()[i]);
          if (keep.empty()) return std::nullopt;
          StatusOr<Module> out = Module::Make(std::move(keep));
          if (!out.ok()) return std::nullopt;
          return *out;
        },
        [](const Module& m) { return m.size(); });
    // 2. Bindings.
    std::vector<const VarNode*> vars = BindingVars(cur);
    cur = r.Chunks(
        cur, vars.size(),
        [&vars](const Module& m, const std::vector<bool>& drop) {
          return DropBindings(m, vars, drop);
        },
        [&vars](const Module& m) {
          vars = BindingVars(m);
          return vars.size();
        });
    // 3. Branches.
    for (const VarNode* v : BindingVars(cur)) {
      if (r.budget_spent()) break;
      for (bool then_branch : {true, false}) {
        IfFlattener flat(v, then_branch);
        Module cand = flat.MutateModule(cur);
        if (!cand.same_as(cur) && r.Interesting(cand)) {
          cur = cand;
          break;
        }
      }
    }
    if (f.verbose)
      std::cerr << "plir-reduce: round " << round + 1 << ": " << cur.size() << " items, "
                << CountBindings(cur) << " bindings, " << r.tests() << " tests\n";
    if (cur.same_as(before) || r.tests() >= f.max_tests) break;
  }
  return cur;
}

// Writes the reduced pipeline (beside -o, or where --pipeline-output says,
// else on standard error) and the reduced module (-o, or standard output),
// and says what shrank.
int WriteResults(const Flags& f, const Module& original, const Module& cur, const Reducer& r,
                 const std::string& pipeline_report, const std::string& pipeline_yaml) {
  std::string text = PrintModule(cur);
  const bool to_stdout = f.output.empty() || f.output == "-";
  std::string pipeline_out = f.pipeline_output;
  if (pipeline_out.empty() && !pipeline_yaml.empty() && !to_stdout)
    pipeline_out = f.output + ".pipeline.yaml";
  if (!pipeline_out.empty() && !pipeline_yaml.empty()) {
    if (Status s = WriteFileAtomically(pipeline_out, pipeline_yaml); !s.ok())
      return Fail(s.message());
  } else if (!pipeline_yaml.empty()) {
    std::cerr << "plir-reduce: the reduced pipeline:\n" << pipeline_yaml;
  }
  if (!pipeline_report.empty())
    std::cerr << "plir-reduce: pipeline: " << pipeline_report
              << (pipeline_out.empty() || pipeline_yaml.empty() ? ""
                                                                : "; written to " + pipeline_out)
              << "\n";
  Status s = to_stdout ? Status::Ok() : WriteFileAtomically(f.output, text);
  if (!s.ok()) return Fail(s.message());
  if (to_stdout) std::cout << text;
  std::cerr << "plir-reduce: " << original.size() << " -> " << cur.size() << " items, "
            << CountBindings(original) << " -> " << CountBindings(cur) << " bindings, " << r.tests()
            << " tests" << (to_stdout ? "" : "; written to " + f.output) << "\n";
  return 0;
}

int Main(Flags f) {
  if (f.test.empty() && f.pipeline.empty() && f.passes.empty()) {
    std::cerr << "plir-reduce: give --pipeline or --passes (what fails), or --test CMD\n";
    return 2;
  }
  if (f.plir_opt.empty()) f.plir_opt = SelfDir() + "/plir-opt";
  ModuleFile::SetMaxBytes(f.max_input_bytes);
  g_test_timeout_s = f.test_timeout_s;
  StatusOr<Module> loaded = LoadInput(f);
  if (!loaded.ok()) return Fail(loaded.status().message());
  StatusOr<std::string> work = MakeWorkDir();
  if (!work.ok()) return Fail(work.status().message());
  Reducer r(f, *work);
  if (Status s = r.Init(*loaded); !s.ok()) {
    std::filesystem::remove_all(*work);
    return Fail(s.message());
  }
  // The pipeline first: the module reduction then runs the smaller one.
  std::string pipeline_report, pipeline_yaml;
  if (f.test.empty() && !f.no_reduce_pipeline) {
    if (Status s = ReducePipeline(f, *loaded, r, &pipeline_report, &pipeline_yaml); !s.ok()) {
      std::filesystem::remove_all(*work);
      return Fail(Printable(s.message()));
    }
    if (f.verbose) std::cerr << "plir-reduce: pipeline: " << pipeline_report << "\n";
  }
  Module reduced = ReduceModule(f, r, *loaded);
  std::filesystem::remove_all(*work);
  return WriteResults(f, *loaded, reduced, r, pipeline_report, pipeline_yaml);
}

int ParseAndRun(int argc, char** argv) {
  EnterBuildWorkingDirectory("plir-reduce");
  CLI::App app{"plir-reduce: shrink a module while a failure persists"};
  Flags f;
  AddToolOptions(app, &f,
                 {.input = "the module that fails",
                  .output = "write the smallest failing module here (default: stdout)",
                  .pipeline = "the YAML pipeline that fails",
                  .passes = "the passes that fail, comma-separated",
                  .plugin = "plugin for plir-opt (repeatable)",
                  .plugin_dir = "plugin directory for plir-opt (repeatable)"})
      ->required();
  app.add_option("--plir-opt", f.plir_opt,
                 "the plir-opt to run (default: the one beside plir-reduce)");
  app.add_option("--test", f.test,
                 "interestingness command: the candidate file is appended; exit 0 = interesting");
  app.add_option("--max-input-bytes", f.max_input_bytes,
                 "refuse an input module larger than this (default 16 GiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  app.add_option("--max-tests", f.max_tests, "stop after this many candidates")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--test-timeout", f.test_timeout_s,
                 "end one test (a plir-opt run or --test) after this many seconds, and count "
                 "it as exit 124 (default 60; 0: none)")
      ->check(Seconds(0.001, 1e6, /*or_zero=*/true));
  app.add_option("--pass-timeout", f.pass_timeout_s,
                 "passed to plir-opt: end a run whose pass takes longer (seconds)")
      ->check(Seconds(0.001, 1e6));
  app.add_flag("-v,--verbose", f.verbose, "report each round");
  app.add_option("--opt-arg", f.opt_args,
                 "pass this argument to every plir-opt run, e.g. --opt-arg=--check-execution "
                 "(repeatable)")
      ->allow_extra_args(false);
  app.add_option("--pipeline-output", f.pipeline_output,
                 "write the reduced pipeline here (default: OUT.pipeline.yaml)");
  app.add_flag("--no-reduce-pipeline", f.no_reduce_pipeline,
               "reduce the module only, with the whole pipeline");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return Main(std::move(f));
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  plir::GuardStandardFds();
  try {
    return plir::FinishStdout("plir-reduce", plir::ParseAndRun(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "plir-reduce: internal error: " << plir::Printable(e.what()) << "\n";
  } catch (...) {
    std::cerr << "plir-reduce: internal error\n";
  }
  return 1;
}
