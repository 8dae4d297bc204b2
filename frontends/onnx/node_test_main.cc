// The conformance runner over ONNX's backend node tests (Debian's
// libonnx-testdata): data/node, pytorch-converted, pytorch-operator, simple.
//
//   node_test_main --check frontends/onnx/node_test_status.txt   (bazel test
//   //frontends/onnx:node_tests) node_test_main --update WORKSPACE_DIR   (bazel run
//   //frontends/onnx:update_node_test_status) node_test_main --doc-check STATUS DOC   (docs/onnx.md
//   is what the status file renders to) node_test_main --only node/test_abs     (one test, its
//   reason printed)
//
// Each test runs in a child process with a time limit (--timeout, seconds)
// and a memory limit (the interpreter's max tensor bytes and an address
// space limit), --jobs at a time. --check fails when a test the status file
// lists as passing does not pass, and when the test data is missing or
// empty; it reports tests that pass newly, so the file can be regenerated.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/onnx/converter.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/node_tests.h"
#include "kernels/tensor.h"
#include "onnx/defs/schema.h"

namespace fs = std::filesystem;
using plir::onnx_import::NodeTestResult;

namespace {

const char* kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
const char kStatusPath[] = "frontends/onnx/node_test_status.txt";
const char kDocPath[] = "docs/onnx.md";

struct Record {
  std::string name;    // suite/test
  std::string status;  // pass | fail
  std::string ops;     // comma-separated op types
  std::string reason;
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else
      cur.push_back(c);
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> ListTests(const std::string& data) {
  std::vector<std::string> out;
  for (const char* suite : kSuites) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(data + "/" + suite, ec))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names) out.push_back(std::string(suite) + "/" + n);
  }
  return out;
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// Runs the tests, `jobs` children at a time.
std::vector<Record> RunAll(const std::string& data, const std::vector<std::string>& tests, int jobs,
                           int timeout, bool verbose) {
  std::vector<Record> out(tests.size());
  struct Running {
    size_t index;
    int fd;
  };
  std::map<pid_t, Running> running;
  size_t next = 0, done = 0;
  while (done < tests.size()) {
    while (next < tests.size() && static_cast<int>(running.size()) < jobs) {
      int p[2];
      if (pipe(p) != 0) {
        std::perror("pipe");
        std::exit(2);
      }
      std::fflush(stdout);
      std::fflush(stderr);
      pid_t pid = fork();
      if (pid == 0) {
        close(p[0]);
        alarm(static_cast<unsigned>(timeout));
#if !defined(__SANITIZE_ADDRESS__)
        struct rlimit lim = {size_t{6} << 30, size_t{6} << 30};
        setrlimit(RLIMIT_AS, &lim);
#endif
        plir::SetMaxTensorBytes(int64_t{1} << 30);
        NodeTestResult r = plir::onnx_import::RunNodeTest(data + "/" + tests[next]);
        std::string line = std::string(r.pass ? "pass" : "fail") + "\t" + Join(r.ops, ",") + "\t" +
                           r.reason + "\n";
        ssize_t w = write(p[1], line.data(), line.size());
        (void)w;
        _exit(0);
      }
      close(p[1]);
      running[pid] = {next, p[0]};
      ++next;
    }
    int st = 0;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0) {
      std::perror("waitpid");
      std::exit(2);
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(it->second.fd, buf, sizeof buf)) > 0;) text.append(buf, n);
    close(it->second.fd);
    Record& rec = out[it->second.index];
    rec.name = tests[it->second.index];
    std::vector<std::string> f = Split(text.empty() ? "" : text.substr(0, text.size() - 1), '\t');
    if (WIFSIGNALED(st) || f.size() < 3) {
      rec.status = "fail";
      int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
      rec.reason = sig == SIGALRM ? "timeout: more than " + std::to_string(timeout) + " s"
                                  : "crash: " + std::string(sig ? strsignal(sig) : "no result");
    } else {
      rec.status = f[0];
      rec.ops = f[1];
      rec.reason = f[2];
    }
    if (verbose)
      std::printf("%s\t%s\t%s\n", rec.name.c_str(), rec.status.c_str(), rec.reason.c_str());
    running.erase(it);
    ++done;
  }
  return out;
}

std::string StatusText(const std::vector<Record>& recs) {
  std::string s =
      "# GENERATED by `bazel run //frontends/onnx:update_node_test_status`; do not edit by hand.\n"
      "# ONNX backend node tests (libonnx-testdata) through plir-import-onnx and the interpreter.\n"
      "# test<TAB>pass|fail<TAB>ONNX ops of the graph<TAB>reason\n";
  for (const Record& r : recs)
    s += r.name + "\t" + r.status + "\t" + r.ops + "\t" + r.reason + "\n";
  return s;
}

std::vector<Record> ReadStatus(const std::string& path, bool* ok) {
  std::ifstream in(path);
  *ok = static_cast<bool>(in);
  std::vector<Record> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = Split(line, '\t');
    if (f.size() < 4) continue;
    out.push_back({f[0], f[1], f[2], f[3]});
  }
  return out;
}

std::string Lower(std::string s) {
  std::string out;
  for (char c : s)
    if (c != '_') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

// ONNX's op names (default domain), lowercase without '_' -> name, plus the
// test families named otherwise (test_sce_*, test_nllloss_*, ...).
const std::map<std::string, std::string>& OpKeys() {
  static const std::map<std::string, std::string>* keys = [] {
    auto* m = new std::map<std::string, std::string>;
    for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas())
      if (schema.domain().empty() || schema.domain() == "ai.onnx")
        (*m)[Lower(schema.Name())] = schema.Name();
    const std::pair<const char*, const char*> aliases[] = {
        {"sce", "SoftmaxCrossEntropyLoss"},
        {"nllloss", "NegativeLogLikelihoodLoss"},
        {"mvn", "MeanVarianceNormalization"},
        {"batchnorm", "BatchNormalization"},
        {"instancenorm", "InstanceNormalization"},
        {"strnorm", "StringNormalizer"},
        {"trainingdropout", "Dropout"},
        {"basicconvinteger", "ConvInteger"},
        {"logsoftmax", "LogSoftmax"},
        {"reducelogsumexp", "ReduceLogSumExp"}};
    for (const auto& [k, v] : aliases) (*m)[k] = v;
    return m;
  }();
  return *keys;
}

// The op a node test tests: the graph's only op, else the ONNX op whose
// name starts the test's name (test_layer_normalization_* and its
// _expanded function form -> LayerNormalization; the longest match), else
// every op of the graph.
std::vector<std::string> TestedOps(const Record& r) {
  std::vector<std::string> ops = r.ops.empty() ? std::vector<std::string>{} : Split(r.ops, ',');
  if (ops.size() <= 1) return ops;
  std::string key = Lower(r.name.substr(r.name.find('/') + 1));
  if (key.rfind("test", 0) == 0) key = key.substr(4);
  std::string best, best_key;
  for (const auto& [k, op] : OpKeys())
    if (key.rfind(k, 0) == 0 && k.size() > best_key.size()) {
      best = op;
      best_key = k;
    }
  if (!best.empty()) return {best};
  return ops;
}

// A reason as the doc shows it: without the file name, spaces collapsed,
// at most 160 characters, no '|'.
std::string DocReason(std::string why) {
  for (size_t p; (p = why.find("model.onnx: ")) != std::string::npos;) why.erase(p, 12);
  std::string out;
  for (char ch : why) {
    if (ch == '|') ch = '/';
    if (ch == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(ch);
  }
  if (out.size() > 160) out = out.substr(0, 157) + "...";
  return out;
}

std::string Kind(const Record& r) {
  if (r.status == "pass") return "pass";
  if (r.reason.rfind("unsupported:", 0) == 0) return "unsupported";
  return "fail";
}

std::string DocText(const std::vector<Record>& recs) {
  int node_total = 0, node_pass = 0, model_total = 0, model_pass = 0;
  struct Row {
    int pass = 0, fail = 0, unsupported = 0;
    std::string why;
  };
  std::map<std::string, Row> rows;
  for (const Record& r : recs) {
    bool node = r.name.rfind("node/", 0) == 0;
    (node ? node_total : model_total)++;
    if (r.status == "pass") (node ? node_pass : model_pass)++;
    if (!node) continue;
    for (const std::string& op : TestedOps(r)) {
      Row& row = rows[op];
      std::string k = Kind(r);
      if (k == "pass")
        row.pass++;
      else if (k == "unsupported")
        row.unsupported++;
      else
        row.fail++;
      if (k != "pass" && row.why.empty()) {
        row.why = "`" + r.name.substr(5) + "`: " + DocReason(r.reason);
      }
    }
  }
  const auto& table = plir::onnx_import::Converters();
  std::string s =
      "# ONNX import: node-test conformance\n\n"
      "<!-- GENERATED by `bazel run //frontends/onnx:update_node_test_status`; do not edit. -->\n\n"
      "ONNX's backend tests from Debian's `libonnx-testdata` (onnx 1.12), imported with "
      "plir-import-onnx and run in\n"
      "PLIR's interpreter; outputs compared as ONNX does (`|got-exp| <= 1e-7 + 1e-3*|exp|`, NaN "
      "equals NaN, exact\n"
      "dtype and shape). `bazel test //frontends/onnx:node_tests` fails when a test listed as "
      "passing in\n"
      "`frontends/onnx/node_test_status.txt` does not pass. See docs/onnx-import.md for the "
      "importer.\n\n";
  s += "- `data/node`: **" + std::to_string(node_pass) + " of " + std::to_string(node_total) +
       "** pass\n";
  s += "- `pytorch-converted`, `pytorch-operator`, `simple`: **" + std::to_string(model_pass) +
       " of " + std::to_string(model_total) + "** pass\n\n";
  s += "## By ONNX op (data/node)\n\n"
       "A test counts for the op it is named after (the graph's only op, or the op its name starts "
       "with).\n"
       "`unsupported`: the importer has no converter at the test's opset, or the PLIR op it needs "
       "is missing.\n\n"
       "| ONNX op | converter (opsets from) | passed | failed | unsupported | why (first test that "
       "does not pass) |\n"
       "|---|---|---|---|---|---|\n";
  for (const auto& [op, row] : rows) {
    std::vector<int> v = table.Versions(op);
    std::string conv = "-";
    if (!v.empty()) {
      conv.clear();
      for (size_t i = 0; i < v.size(); ++i) conv += (i ? ", " : "") + std::to_string(v[i]);
    }
    s += "| " + op + " | " + conv + " | " + std::to_string(row.pass) + " | " +
         std::to_string(row.fail) + " | " + std::to_string(row.unsupported) + " | " + row.why +
         " |\n";
  }
  s += "\n## Model tests (pytorch-converted, pytorch-operator, simple)\n\n| test | result | why "
       "|\n|---|---|---|\n";
  for (const Record& r : recs) {
    if (r.name.rfind("node/", 0) == 0) continue;
    s += "| " + r.name + " | " + Kind(r) + " | " + DocReason(r.reason) + " |\n";
  }
  return s;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

void Summary(const std::vector<Record>& recs) {
  int np = 0, nt = 0, mp = 0, mt = 0;
  for (const Record& r : recs) {
    bool node = r.name.rfind("node/", 0) == 0;
    (node ? nt : mt)++;
    if (r.status == "pass") (node ? np : mp)++;
  }
  std::printf(
      "node tests: data/node %d of %d pass; pytorch-converted+pytorch-operator+simple %d of %d "
      "pass\n",
      np, nt, mp, mt);
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = "/usr/lib/python3/dist-packages/onnx/backend/test/data";
  std::string mode, status_path = kStatusPath, doc_path = kDocPath, workspace, only, filter;
  int jobs = 2, timeout = 60;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const std::string& flag) -> std::string {
      if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
      if (i + 1 < argc) return argv[++i];
      std::fprintf(stderr, "%s needs a value\n", flag.c_str());
      std::exit(2);
    };
    if (a.rfind("--data", 0) == 0)
      data = val("--data");
    else if (a.rfind("--jobs", 0) == 0)
      jobs = std::max(1, std::stoi(val("--jobs")));
    else if (a.rfind("--timeout", 0) == 0)
      timeout = std::stoi(val("--timeout"));
    else if (a.rfind("--filter", 0) == 0)
      filter = val("--filter");
    else if (a == "--verbose")
      verbose = true;
    else if (a.rfind("--check", 0) == 0) {
      mode = "check";
      status_path = val("--check");
    } else if (a.rfind("--update", 0) == 0) {
      mode = "update";
      workspace = val("--update");
    } else if (a.rfind("--only", 0) == 0) {
      mode = "only";
      only = val("--only");
    } else if (a == "--doc-check" && i + 2 < argc) {
      mode = "doc-check";
      status_path = argv[++i];
      doc_path = argv[++i];
    } else {
      std::fprintf(stderr, "node_test_main: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
      ws && mode == "update" && workspace.empty())
    workspace = ws;

  if (mode == "doc-check") {
    bool ok = false;
    std::vector<Record> recs = ReadStatus(status_path, &ok);
    if (!ok || recs.empty()) {
      std::fprintf(stderr, "cannot read %s\n", status_path.c_str());
      return 1;
    }
    std::string doc;
    if (!ReadFile(doc_path, &doc)) {
      std::fprintf(stderr, "cannot read %s\n", doc_path.c_str());
      return 1;
    }
    if (doc != DocText(recs)) {
      std::fprintf(stderr,
                   "%s is out of date: run `bazel run //frontends/onnx:update_node_test_status`\n",
                   doc_path.c_str());
      return 1;
    }
    std::printf("%s is up to date\n", doc_path.c_str());
    return 0;
  }
  if (mode == "only") {
    NodeTestResult r = plir::onnx_import::RunNodeTest(data + "/" + only);
    std::printf("%s\t%s\t%s\t%s\n", only.c_str(), r.pass ? "pass" : "fail",
                Join(r.ops, ",").c_str(), r.reason.c_str());
    return r.pass ? 0 : 1;
  }

  std::vector<std::string> tests = ListTests(data);
  if (tests.empty()) {
    std::fprintf(stderr,
                 "node_test_main: no tests under %s (install libonnx-testdata: tools/setup.sh)\n",
                 data.c_str());
    return 1;
  }
  if (!filter.empty()) {
    std::vector<std::string> kept;
    for (const auto& t : tests)
      if (t.find(filter) != std::string::npos) kept.push_back(t);
    tests = kept;
  }
  std::vector<Record> recs = RunAll(data, tests, jobs, timeout, verbose);
  Summary(recs);

  if (mode == "update") {
    if (workspace.empty()) {
      std::fprintf(stderr, "--update needs the workspace folder\n");
      return 2;
    }
    if (!filter.empty()) {
      std::fprintf(stderr, "--update runs every test (no --filter)\n");
      return 2;
    }
    if (!WriteFile(workspace + "/" + kStatusPath, StatusText(recs)) ||
        !WriteFile(workspace + "/" + kDocPath, DocText(recs))) {
      std::fprintf(stderr, "cannot write the status file or the doc under %s\n", workspace.c_str());
      return 1;
    }
    std::printf("wrote %s and %s\n", kStatusPath, kDocPath);
    return 0;
  }
  if (mode != "check") {
    for (const Record& r : recs)
      std::printf("%s\t%s\t%s\n", r.name.c_str(), r.status.c_str(), r.reason.c_str());
    return 0;
  }
  bool ok = false;
  std::vector<Record> expected = ReadStatus(status_path, &ok);
  if (!ok) {
    std::fprintf(stderr, "cannot read %s\n", status_path.c_str());
    return 1;
  }
  std::map<std::string, const Record*> exp;
  for (const Record& r : expected) exp[r.name] = &r;
  int regressions = 0, newly = 0;
  std::set<std::string> seen;
  for (const Record& r : recs) {
    seen.insert(r.name);
    auto it = exp.find(r.name);
    if (it == exp.end()) {
      std::printf("NEW TEST (not in the status file): %s: %s %s\n", r.name.c_str(),
                  r.status.c_str(), r.reason.c_str());
      continue;
    }
    if (it->second->status == "pass" && r.status != "pass") {
      std::printf("REGRESSION: %s was passing, now: %s\n", r.name.c_str(), r.reason.c_str());
      ++regressions;
    } else if (it->second->status != "pass" && r.status == "pass") {
      std::printf("NEWLY PASSING: %s (was: %s)\n", r.name.c_str(), it->second->reason.c_str());
      ++newly;
    }
  }
  if (filter.empty())
    for (const Record& r : expected)
      if (!seen.count(r.name))
        std::printf("MISSING: %s is in the status file but not in the test data\n", r.name.c_str());
  if (newly)
    std::printf(
        "%d tests pass newly: regenerate with `bazel run "
        "//frontends/onnx:update_node_test_status`\n",
        newly);
  if (regressions) {
    std::printf("%d regressions\n", regressions);
    return 1;
  }
  return 0;
}
