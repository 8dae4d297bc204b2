// YAML pipelines: every error with its position, includes, properties, and
// the canonical round trip.
#include "driver/pipeline.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ir/text/printer.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_ + "/common");
    // One plugin directory for all tests: the same files load only once.
    std::string plugins = std::string(std::getenv("TEST_TMPDIR")) + "/plugins";
    std::filesystem::create_directories(plugins);
    for (const char* f : {"libplir_test_good.so", "libplir_test_misbehaving.so"})
      std::filesystem::copy_file(std::string("testing/plugins/") + f, plugins + "/" + f,
                                 std::filesystem::copy_options::skip_existing);
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  StatusOr<Pipeline> Load(const std::string& path) { return LoadPipeline(path, loader_); }
  void ExpectError(const std::string& text, int line, int col, const std::string& needle,
                   const std::string& name = "p.yaml") {
    std::string path = Write(name, text);
    auto r = Load(path);
    ASSERT_FALSE(r.ok()) << "loaded:\n" << text;
    std::string prefix = path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
    EXPECT_EQ(r.status().message().compare(0, prefix.size(), prefix), 0)
        << "want " << prefix << "\ngot  " << r.status().message();
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  }
  std::string dir_;
  PluginLoader loader_;
};

const char* kHeader =
    "version: 1\nplugin_path: [../plugins]\nplugins: [test_good, test_misbehaving]\n";

TEST_F(PipelineTest, LoadsAFullPipeline) {
  Write("common/cleanup.yaml", "passes:\n  - TestBindResult\n");
  auto r = Load(Write("p.yaml", std::string(kHeader) + R"(name: full
opt_level: 1
required: [TestOptions]
disabled: [TestThrows]
config: {tile: 8, target: llvm, ratio: 0.5, flags: [1, 2]}
passes:
  - TestReluToSoftmax
  - name: TestOptions
    options: {count: 7, label: hello, entries: [main, other]}
    min_opt_level: 1
  - repeat: {max_iterations: 4, until: fixpoint}
    passes: [TestReluToSoftmax, TestBindResult]
  - include: common/cleanup.yaml
  - extension_point: after-simplify
instruments: {timing: true, verify: each, print_after: [TestOptions], print_changed: true, check_input_unchanged: true}
)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->name, "full");
  EXPECT_EQ(r->opt_level, 1);
  ASSERT_EQ(r->steps.size(), 5u);
  EXPECT_EQ(r->steps[1].options.GetInt("count"), 7);
  EXPECT_EQ(r->steps[1].options.GetStringList("entries"),
            (std::vector<std::string>{"main", "other"}));
  EXPECT_EQ(r->steps[1].options.GetFloat("ratio"), 0.5);  // default
  EXPECT_EQ(r->steps[2].kind, PipelineStep::Kind::kRepeat);
  EXPECT_EQ(r->steps[2].max_iterations, 4);
  EXPECT_EQ(r->steps[3].pass, "TestBindResult");  // from the include
  EXPECT_EQ(r->config.at("tile").as_int(), 8);
  EXPECT_EQ(r->config.at("target").as_string(), "llvm");
  EXPECT_TRUE(r->instruments.check_input_unchanged);
}

// Found by the YAML fuzzer: a name with carriage returns was written as a
// plain scalar and read back with one fewer.
TEST_F(PipelineTest, CanonicalYamlKeepsControlCharactersInNames) {
  auto a = Load(Write("cr.yaml", "name: \"a\\r\\r\\rb\\r\\r\"\npasses: []\n"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->name, "a\r\r\rb\r\r");
  std::string yaml = PipelineToYaml(*a);
  auto b = Load(Write("cr_canonical.yaml", yaml));
  ASSERT_TRUE(b.ok()) << b.status().message() << "\n" << yaml;
  EXPECT_EQ(b->name, a->name);
  EXPECT_EQ(PipelineToYaml(*b), yaml);
}

TEST_F(PipelineTest, CanonicalYamlRoundTrips) {
  Write("common/cleanup.yaml", "passes: [TestBindResult]\n");
  auto a = Load(Write("p.yaml", std::string(kHeader) + R"(passes:
  - {name: TestOptions, options: {label: "a b", count: 2}}
  - repeat: {max_iterations: 3, until: fixpoint}
    passes: [TestReluToSoftmax]
  - include: common/cleanup.yaml
instruments: {verify: each}
)"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  std::string yaml = PipelineToYaml(*a);
  auto b = Load(Write("canonical.yaml", yaml));
  ASSERT_TRUE(b.ok()) << b.status().message() << "\n" << yaml;
  EXPECT_EQ(PipelineToYaml(*b), yaml);
  ASSERT_EQ(b->steps.size(), a->steps.size());
  for (size_t i = 0; i < a->steps.size(); ++i) {
    EXPECT_EQ(a->steps[i].pass, b->steps[i].pass);
    EXPECT_TRUE(a->steps[i].options == b->steps[i].options);
  }
  EXPECT_NE(yaml.find("options: {count: 2, label: \"a b\"}"), std::string::npos) << yaml;
}

TEST_F(PipelineTest, UnknownTopLevelKey) {
  ExpectError(std::string(kHeader) + "pases: []\n", 4, 1,
              "unknown key 'pases' in pipeline; did you mean 'passes'?");
}
TEST_F(PipelineTest, YamlSyntaxError) {
  ExpectError("version: 1\npasses: [A, B\n", 3, 1, "YAML syntax error");
}
TEST_F(PipelineTest, WrongTypeForOptLevel) {
  ExpectError(std::string(kHeader) + "opt_level: high\n", 4, 12,
              "expected an integer for opt_level, got 'high'");
}
TEST_F(PipelineTest, UnsupportedVersion) {
  ExpectError("version: 7\npasses: []\n", 1, 10, "unsupported pipeline version");
}
TEST_F(PipelineTest, UnknownPassSuggestsClosest) {
  ExpectError(std::string(kHeader) + "passes:\n  - TestReluToSoftmx\n", 5, 5,
              "unknown pass 'TestReluToSoftmx'; did you mean 'TestReluToSoftmax'");
}
TEST_F(PipelineTest, UnknownOption) {
  ExpectError(std::string(kHeader) + "passes:\n  - name: TestOptions\n    options: {cuont: 1}\n", 6,
              15, "pass TestOptions has no option 'cuont'; did you mean 'count'?");
}
TEST_F(PipelineTest, BadOptionValue) {
  ExpectError(std::string(kHeader) + "passes:\n  - name: TestOptions\n    options: {count: many}\n",
              6, 22, "option 'count' of TestOptions must be int, got \"many\"");
}
TEST_F(PipelineTest, UnknownKeyInPassMap) {
  ExpectError(std::string(kHeader) + "passes:\n  - name: TestOptions\n    option: {}\n", 6, 5,
              "unknown key 'option' in pass; did you mean 'options'?");
}
TEST_F(PipelineTest, FunctionsOption) {
  auto r = Load(
      Write("p.yaml", std::string(kHeader) +
                          "passes:\n  - name: TestReluToSoftmax\n    functions: \"main|sub.*\"\n"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->steps[0].functions);
  EXPECT_EQ(*r->steps[0].functions, "main|sub.*");
  std::string yaml = PipelineToYaml(*r);
  EXPECT_NE(yaml.find("functions: \"main|sub.*\""), std::string::npos) << yaml;
  auto again = LoadPipelineText(dir_ + "/again.yaml", yaml, loader_);
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << yaml;
  EXPECT_EQ(*again->steps[0].functions, "main|sub.*");
}
TEST_F(PipelineTest, BadFunctionsOption) {
  ExpectError(
      std::string(kHeader) + "passes:\n  - name: TestReluToSoftmax\n    functions: \"ma(in\"\n", 6,
      16, "functions: invalid regular expression 'ma(in'");
  ExpectError(std::string(kHeader) + "passes:\n  - name: TestReluToSoftmax\n    functions: \"\"\n",
              6, 16, "functions must be a non-empty regular expression");
  ExpectError(
      std::string(kHeader) + "passes:\n  - name: TestReluToSoftmax\n    functions: [main]\n", 6, 16,
      "functions");
  ExpectError(std::string(kHeader) +
                  "passes:\n  - repeat: {max_iterations: 2}\n    functions: main\n    passes: "
                  "[TestReluToSoftmax]\n",
              6, 5, "unknown key 'functions'");
}
TEST_F(PipelineTest, IncludeCycle) {
  Write("common/a.yaml", "passes:\n  - include: b.yaml\n");
  Write("common/b.yaml", "passes:\n  - include: a.yaml\n");
  std::string path =
      Write("p.yaml", std::string(kHeader) + "passes:\n  - include: common/a.yaml\n");
  auto r = Load(path);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("common/b.yaml:2:14: include cycle: "), std::string::npos) << m;
  EXPECT_NE(m.find("a.yaml -> "), std::string::npos) << m;
}
TEST_F(PipelineTest, IncludeOfASymlinkLoop) {
  std::filesystem::create_symlink("selfloop.yaml", dir_ + "/selfloop.yaml");
  ExpectError(
      std::string(kHeader) + "passes:\n  - include: selfloop.yaml\n", 5, 14,
      "cannot open included file " + dir_ + "/selfloop.yaml: too many levels of symbolic links");
  ExpectError(std::string(kHeader) + "extend: selfloop.yaml\npasses: []\n", 4, 9,
              "too many levels of symbolic links");
}
TEST_F(PipelineTest, LimitsHaveTheCommandLinesRanges) {
  for (const char* v : {"1e-300", "0.0009", "nan", "inf", "1000001", "1e400"})
    ExpectError(std::string(kHeader) + "passes: []\nlimits: {pass_timeout: " + v + "}\n", 5, 24,
                "pass_timeout must be a number of seconds from 0.001 to 1000000, not '" +
                    std::string(v) + "'");
  ExpectError(std::string(kHeader) + "passes: []\nlimits: {memory_limit: 1099511627777}\n", 5, 24,
              "memory_limit must be from 16 to 1099511627776 (megabytes), not 1099511627777");
  ExpectError(std::string(kHeader) + "passes: []\nlimits: {memory_limit: 15}\n", 5, 24,
              "memory_limit must be from 16 to 1099511627776 (megabytes), not 15");
  auto r =
      Load(Write("p.yaml", std::string(kHeader) +
                               "passes: []\nlimits: {pass_timeout: 0.001, memory_limit: 16}\n"));
  ASSERT_TRUE(r.ok()) << r.status().message();
}
TEST_F(PipelineTest, IntegerOptionOutOfInt64) {
  ExpectError(std::string(kHeader) +
                  "passes:\n  - name: TestOptions\n    options: {count: 99999999999999999999999}\n",
              6, 22, "integer 99999999999999999999999 is out of the int64 range");
}
TEST_F(PipelineTest, MissingInclude) {
  ExpectError(std::string(kHeader) + "passes:\n  - include: nope.yaml\n", 5, 14,
              "cannot open included file");
}
TEST_F(PipelineTest, MissingPlugin) {
  ExpectError(
      "version: 1\nplugin_path: [../plugins]\nplugins: [test_good, no_such_plugin]\npasses: []\n",
      3, 22, "plugin 'no_such_plugin' not found");
}
TEST_F(PipelineTest, RequiredPropertyNotProvided) {
  std::string path =
      Write("p.yaml",
            std::string(kHeader) + "passes:\n  - TestReluToSoftmax\n  - TestNeedsResultBound\n");
  auto r = Load(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.status().message(),
      path +
          ":6:5: pass TestNeedsResultBound requires property 'result_bound', which no earlier "
          "pass provides (provided by: TestBindResult)");
  auto ok = Load(
      Write("q.yaml", std::string(kHeader) + "passes: [TestBindResult, TestNeedsResultBound]\n"));
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}
TEST_F(PipelineTest, BadRepeat) {
  ExpectError(std::string(kHeader) +
                  "passes:\n  - repeat: {max_iterations: 0}\n    passes: [TestBindResult]\n",
              5, 30, "max_iterations must be between 1 and 1000");
  ExpectError(std::string(kHeader) +
                  "passes:\n  - repeat: {until: forever}\n    passes: [TestBindResult]\n",
              5, 21, "until must be 'fixpoint'");
}
TEST_F(PipelineTest, BadInstrument) {
  ExpectError(std::string(kHeader) + "passes: []\ninstruments: {timming: true}\n", 5, 15,
              "unknown key 'timming' in instruments; did you mean 'timing'?");
  ExpectError(std::string(kHeader) + "passes: []\ninstruments: {verify: sometimes}\n", 5, 23,
              "verify must be 'each', 'end' or 'none'");
}
TEST_F(PipelineTest, UnknownPassInDisabled) {
  ExpectError(std::string(kHeader) + "passes: []\ndisabled: [TestThrow]\n", 5, 12,
              "unknown pass 'TestThrow'; did you mean 'TestThrows'");
}
TEST_F(PipelineTest, PassesMustBeAList) {
  ExpectError(std::string(kHeader) + "passes: TestBindResult\n", 4, 9, "'passes' must be a list");
}

TEST_F(PipelineTest, ExtensionFragmentAddsPassesAtItsPoint) {
  auto p = Load(Write("p.yaml", std::string(kHeader) + R"(passes:
  - TestBindResult
  - extension_point: after-bind
  - repeat: {max_iterations: 2}
    passes: [TestReluToSoftmax, {extension_point: in-loop}]
)"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  Status s = ApplyExtension(
      *p,
      Write("ext.yaml",
            "version: 1\nextend:\n  point: after-bind\n  passes: [TestNeedsResultBound]\n"),
      loader_);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(p->steps.size(), 4u);
  EXPECT_EQ(p->steps[2].pass, "TestNeedsResultBound");
  s = ApplyExtension(
      *p, Write("ext2.yaml", "version: 1\nextend: {point: in-loop, passes: [TestOptions]}\n"),
      loader_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(p->steps[3].steps.back().pass, "TestOptions");
}

TEST_F(PipelineTest, ExtensionErrors) {
  auto p =
      Load(Write("p.yaml", std::string(kHeader) + "passes:\n  - extension_point: after-bind\n"));
  ASSERT_TRUE(p.ok());
  std::string bad = Write(
      "ext.yaml", "version: 1\nextend:\n  point: after-simplify\n  passes: [TestBindResult]\n");
  Status s = ApplyExtension(*p, bad, loader_);
  EXPECT_EQ(s.message(),
            bad + ":3:10: pipeline " + dir_ +
                "/p.yaml has no extension point 'after-simplify' (it has: after-bind)");
  std::string bad2 =
      Write("ext2.yaml", "version: 1\nextend:\n  point: after-bind\n  passes: [TestBindResul]\n");
  s = ApplyExtension(*p, bad2, loader_);
  EXPECT_NE(s.message().find(bad2 + ":4:12: unknown pass 'TestBindResul'"), std::string::npos)
      << s.message();
  std::string needs = Write(
      "ext3.yaml", "version: 1\nextend:\n  point: after-bind\n  passes: [TestNeedsResultBound]\n");
  s = ApplyExtension(*p, needs, loader_);
  EXPECT_NE(s.message().find("requires property 'result_bound'"), std::string::npos) << s.message();
}

TEST_F(PipelineTest, RunsOnAModule) {
  auto p =
      Load(Write("p.yaml", std::string(kHeader) + "passes: [TestReluToSoftmax, TestBindResult]\n"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  Module m = testing::ParseOrFail("def @f(%x: Tensor[(2,), float32]) { nn.relu(%x) }");
  PassContext ctx;
  auto out = PassManager().Run(p->steps, m, ctx);
  ASSERT_TRUE(out.ok());
  std::string printed = PrintModule(*out);
  EXPECT_NE(printed.find("%result: Tensor[(2,), float32] = nn.softmax(%x)"), std::string::npos)
      << printed;
}

// "A base pipeline plus my pass" is one file: `extend: BASE.yaml` starts from
// the base (its passes, plugins and settings), appends this file's passes and
// lets its settings override.
TEST_F(PipelineTest, ExtendInheritsABasePipeline) {
  const std::string common_header =
      "version: 1\nplugin_path: [../../plugins]\nplugins: [test_good, test_misbehaving]\n";
  Write("common/base.yaml",
        common_header +
            "opt_level: 3\npasses:\n  - TestBindResult\n  - extension_point: end\n"
            "instruments: {verify: each, timing: true}\n");
  auto p = Load(Write("p.yaml",
                      "version: 1\nextend: common/base.yaml\nname: mine\n"
                      "passes: [TestNeedsResultBound]\n"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->steps.size(), 3u);
  EXPECT_EQ(p->steps[0].pass, "TestBindResult");
  EXPECT_EQ(p->steps[2].pass, "TestNeedsResultBound");  // its property comes from the base
  EXPECT_EQ(p->opt_level, 3);
  EXPECT_EQ(p->instruments.verify, VerifyMode::kEach);
  EXPECT_TRUE(p->instruments.timing);
  EXPECT_EQ(p->name, "mine");
  EXPECT_EQ(p->file, dir_ + "/p.yaml");
  // Its own settings win.
  auto q = Load(Write("q.yaml", "version: 1\nextend: common/base.yaml\nopt_level: 1\n"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->opt_level, 1);
  EXPECT_EQ(q->steps.size(), 2u);
}
TEST_F(PipelineTest, ExtendErrorsArePrecise) {
  ExpectError("version: 1\nextend: nope.yaml\n", 2, 9, "cannot open included file");
  Write("common/a.yaml", "version: 1\nextend: b.yaml\n");
  Write("common/b.yaml", "version: 1\nextend: a.yaml\n");
  auto r = Load(Write("p.yaml", "version: 1\nextend: common/a.yaml\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("common/b.yaml:2:9: extend cycle: "), std::string::npos)
      << r.status().message();
}
// A full pipeline file may be included: its passes (and plugins) run there.
TEST_F(PipelineTest, IncludesAFullPipeline) {
  Write("common/full.yaml",
        std::string(
            "version: 1\nplugin_path: [../../plugins]\nplugins: [test_good, test_misbehaving]\n") +
            "opt_level: 2\npasses: [TestBindResult]\ninstruments: {verify: each}\n");
  auto p = Load(Write(
      "p.yaml", "version: 1\npasses:\n  - include: common/full.yaml\n  - TestNeedsResultBound\n"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(p->steps[0].pass, "TestBindResult");
  EXPECT_FALSE(p->opt_level.has_value());  // settings stay the includer's
}

// Step one reads a pipeline without loading anything: a plugin that does
// not exist and a pass nobody registers are only names with positions, and
// the loader is untouched. Step two then fails at those positions.
TEST_F(PipelineTest, ParsingLoadsNoPlugin) {
  std::string path = Write("p.yaml", R"(version: 1
plugin_path: [../plugins]
plugins: [no_such_plugin]
passes:
  - NoSuchPass
  - name: AlsoUnknown
    options: {depth: [1, 2]}
instruments: {verify: none, print_after: [NoSuchPass]}
)");
  auto spec = ParsePipelineFile(path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_TRUE(loader_.loaded().empty());
  ASSERT_EQ(spec->plugin_sources.size(), 3u);  // the dir, the fallback dirs, the plugin
  EXPECT_EQ(spec->plugin_sources[0].kind, PluginSourceSpec::Kind::kSearchDir);
  EXPECT_EQ(spec->plugin_sources[0].value,
            std::filesystem::path(dir_).parent_path().string() + "/plugins");
  EXPECT_EQ(spec->plugin_sources[2].value, "no_such_plugin");
  EXPECT_EQ(spec->plugin_sources[2].loc.ToString(), path + ":3:11");
  ASSERT_EQ(spec->steps.size(), 2u);
  EXPECT_EQ(spec->steps[0].pass.name, "NoSuchPass");
  EXPECT_EQ(spec->steps[1].pass.loc.ToString(), path + ":6:11");
  ASSERT_EQ(spec->steps[1].options.size(), 1u);
  EXPECT_EQ(spec->steps[1].options[0].value.kind(), AttrValue::Kind::kList);
  EXPECT_EQ(spec->instruments.verify, VerifyMode::kNone);
  auto r = ResolvePipeline(*spec, loader_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind(path + ":3:11: ", 0), 0u) << r.status().message();
}

// A loader that trusts only the bundled plugins (plir-opt's child that
// writes its own output) runs no Python file: the runner is never called.
TEST_F(PipelineTest, BundledOnlyLoaderRunsNoPythonFile) {
  int calls = 0;
  SetPythonFileRunner([&](const std::string&, PluginLoader&) {
    ++calls;
    return Status::Ok();
  });
  const std::string path = dir_ + "/py.yaml";
  auto spec = ParsePipelineText(path, "version: 1\npython: [passes.py]\npasses: []\n");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  loader_.set_bundled_only(true);
  auto r = ResolvePipeline(*spec, loader_);
  loader_.set_bundled_only(false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("trusts only PLIR's bundled plugins"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().rfind(path + ":2:", 0), 0u) << r.status().message();
  EXPECT_EQ(calls, 0);
  // The same pipeline with an ordinary loader runs the file.
  EXPECT_TRUE(ResolvePipeline(*spec, loader_).ok());
  EXPECT_EQ(calls, 1);
  SetPythonFileRunner(nullptr);
}

TEST_F(PipelineTest, ParseErrorsAreStatusValuesWithPositions) {
  auto r =
      ParsePipelineText(dir_ + "/t.yaml", "version: 1\npasses: [A, {name: B, min_opt_level: 9}]\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), dir_ + "/t.yaml:2:38: min_opt_level must be 0, 1, 2 or 3");
  r = ParsePipelineText(dir_ + "/t.yaml", "version: 1\npasses: [A\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("t.yaml:3:1: YAML syntax error"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace plir
