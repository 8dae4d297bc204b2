// Pass manager rules with in-process passes in a private registry.
#include "passes/pass_manager.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "ir/op.h"
#include "ir/structural.h"
#include "ir/text/printer.h"
#include "ir/visitor.h"
#include "passes/instruments.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

// Replaces the first `add` it finds by `multiply`; a counter shows how many
// times it ran.
class AddToMultiply : public ExprMutator {
 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* c = As<CallNode>(n);
    auto* op = c ? As<OpNode>(c->callee()) : nullptr;
    if (!done_ && op && op->name() == "add") {
      done_ = true;
      return *MakeOpCall("multiply", c->args());
    }
    return n;
  }
  bool done_ = false;
};

class PassManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Add("Once", 0, [this](const Module& m, const PassCallContext&) -> StatusOr<Module> {
      ++runs_["Once"];
      return AddToMultiply().MutateModule(m);
    });
    Add("Noop", 0, [this](const Module& m, const PassCallContext&) -> StatusOr<Module> {
      ++runs_["Noop"];
      return m;
    });
    Add("Level3", 3, [this](const Module& m, const PassCallContext&) -> StatusOr<Module> {
      ++runs_["Level3"];
      return m;
    });
    Add("Fails", 0, [](const Module&, const PassCallContext&) -> StatusOr<Module> {
      return InvalidArgument("no can do");
    });
    PassDef fn;
    fn.info.name = "FnAddToMultiply";
    fn.info.description = "function pass";
    fn.info.kind = PassKind::kFunction;
    fn.function_fn = [this](const Function& f, const PassCallContext&) -> StatusOr<Function> {
      ++fn_calls_;
      std::this_thread::yield();
      return AddToMultiply().MutateFunction(f);
    };
    ASSERT_TRUE(registry_.Register(std::move(fn)).ok());
  }

  void Add(const std::string& name, int level, ModulePassFn fn) {
    PassDef d;
    d.info.name = name;
    d.info.description = name;
    d.info.min_opt_level = level;
    d.module_fn = std::move(fn);
    ASSERT_TRUE(registry_.Register(std::move(d)).ok());
  }
  PipelineStep Step(const std::string& name) { return *MakePassStep(registry_, name); }
  PipelineStep Repeat(std::vector<PipelineStep> steps, int max, bool fixpoint) {
    PipelineStep s;
    s.kind = PipelineStep::Kind::kRepeat;
    s.steps = std::move(steps);
    s.max_iterations = max;
    s.until_fixpoint = fixpoint;
    return s;
  }

  Module Chain(int n) {
    std::string text = "def @f(%x: Tensor[(2,), float32]) {\n";
    for (int i = 0; i < n; ++i) text += "  %a" + std::to_string(i) + " = add(%x, %x);\n";
    text += "  %x\n}\n";
    return testing::ParseOrFail(text);
  }

  PassRegistry registry_;
  std::map<std::string, int> runs_;
  std::atomic<int> fn_calls_{0};
};

TEST_F(PassManagerTest, DuplicateRegistrationNamesBothOrigins) {
  PassDef d;
  d.info.name = "Noop";
  d.info.origin = "plugin second";
  d.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> { return m; };
  Status s = registry_.Register(d);
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "pass Noop from plugin second is already registered by core");
}

TEST_F(PassManagerTest, OptLevelRequiredAndDisabled) {
  PassContext ctx;
  ctx.opt_level = 2;
  ASSERT_TRUE(PassManager(registry_).Run({Step("Level3"), Step("Noop")}, Chain(1), ctx).ok());
  EXPECT_EQ(runs_["Level3"], 0);  // min level 3 > 2
  EXPECT_EQ(runs_["Noop"], 1);
  ctx.required = {"Level3"};
  ctx.disabled = {"Noop", "Level3"};  // required wins over disabled
  ASSERT_TRUE(PassManager(registry_).Run({Step("Level3"), Step("Noop")}, Chain(1), ctx).ok());
  EXPECT_EQ(runs_["Level3"], 1);
  EXPECT_EQ(runs_["Noop"], 1);  // disabled
  // A step's own min_opt_level overrides the pass's.
  PassContext low;
  low.opt_level = 0;
  PipelineStep s = Step("Noop");
  s.min_opt_level = 1;
  ASSERT_TRUE(PassManager(registry_).Run({s}, Chain(1), low).ok());
  EXPECT_EQ(runs_["Noop"], 1);
}

TEST_F(PassManagerTest, RepeatStopsAtFixpoint) {
  PassContext ctx;
  auto r = PassManager(registry_).Run({Repeat({Step("Once")}, 100, true)}, Chain(3), ctx);
  ASSERT_TRUE(r.ok());
  // Three adds take three changing iterations, then one that changes nothing.
  EXPECT_EQ(runs_["Once"], 4);
  EXPECT_EQ(PrintModule(*r).find("add("), std::string::npos);
}

TEST_F(PassManagerTest, RepeatStopsAtIterationCap) {
  PassContext ctx;
  auto r = PassManager(registry_).Run({Repeat({Step("Once")}, 2, true)}, Chain(5), ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(runs_["Once"], 2);
  runs_.clear();
  ASSERT_TRUE(PassManager(registry_).Run({Repeat({Step("Noop")}, 7, false)}, Chain(1), ctx).ok());
  EXPECT_EQ(runs_["Noop"], 7);  // no fixpoint test: always the cap
}

TEST_F(PassManagerTest, ErrorsNameThePass) {
  PassContext ctx;
  auto r = PassManager(registry_).Run({Step("Noop"), Step("Fails")}, Chain(1), ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "pass Fails: no can do");
}

// The step option `functions` (TVM's ApplyPassToFunction).
TEST_F(PassManagerTest, FunctionsRestrictAPassToMatchingFunctions) {
  // A module pass that records what it sees, rewrites every function (add ->
  // multiply), removes @gone and adds @added.
  std::string seen;
  Add("Inspect", 0, [&seen](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    seen.clear();
    for (const Item& it : m.items()) {
      const AttrValue* g = it->attrs().Get("global_symbol");
      seen += (it->kind() == NodeKind::kFunction ? "def @" : "extern @") + it->name() +
              (g ? "(public) " : " ");
    }
    Module out = m;
    for (const Item& it : m.items())
      if (it->kind() == NodeKind::kFunction)
        out = out.WithItem(AddToMultiply().MutateFunction(Downcast<FunctionNode>(it)));
    out = out.Without("gone");
    return out.WithItem(
        testing::ParseOrFail("def @added(%x: Tensor[(2,), float32]) { %x }").items()[0]);
  });
  Module m = testing::ParseOrFail(R"(
extern @k(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32]
def @main(%x: Tensor[(2,), float32]) attrs {global_symbol = "main"} {
  %a = add(%x, %x);
  %b = @helper(%a);
  %b
}
def @helper(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %x);
  %a
}
def @gone(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %x);
  %a
}
def @other(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %x);
  %a
}
)");
  PipelineStep step = Step("Inspect");
  step.functions = "main|helper|gone";
  PassContext ctx;
  auto r = PassManager(registry_).Run({step}, m, ctx);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Matched private functions are public for the run; others are externs.
  EXPECT_EQ(seen,
            "extern @k def @main(public) def @helper(public) def @gone(public) extern @other ");
  std::string out = PrintModule(*r);
  // main and helper changed; helper is private again; @other unchanged,
  // @gone not removed (as TVM), @added joined at the end.
  Module want = testing::ParseOrFail(R"(
extern @k(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32]
def @main(%x: Tensor[(2,), float32]) attrs {global_symbol = "main"} {
  %a = multiply(%x, %x);
  %b = @helper(%a);
  %b
}
def @helper(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = multiply(%x, %x);
  %a
}
def @gone(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %x);
  %a
}
def @other(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  %a = add(%x, %x);
  %a
}
def @added(%x: Tensor[(2,), float32]) { %x }
)");
  EXPECT_TRUE(StructuralEqual(*r, want)) << out;
  EXPECT_EQ(r->Lookup("other").get(), m.Lookup("other").get());  // shared, not rebuilt

  // A function pass too; the regular expression matches whole names only.
  step = Step("FnAddToMultiply");
  step.functions = "oth";
  r = PassManager(registry_).Run({step}, m, ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->same_as(m));
  std::vector<std::string> warnings = ctx.TakeWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "FnAddToMultiply: functions: 'oth' matches no function; the module is left as it is");
  step.functions = "oth.*";
  r = PassManager(registry_).Run({step}, m, ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->Lookup("other").get(), m.Lookup("other").get());
  EXPECT_EQ(r->Lookup("main").get(), m.Lookup("main").get());

  // A pass that changes nothing returns the module itself.
  step = Step("Noop");
  step.functions = ".*";
  r = PassManager(registry_).Run({step}, m, ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->same_as(m));

  // An invalid expression (the YAML loader reports it first) and a failing
  // pass are errors naming the pass.
  step.functions = "(";
  r = PassManager(registry_).Run({step}, m, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("pass Noop: functions: invalid regular expression '('"),
            std::string::npos)
      << r.status().message();
  step = Step("Fails");
  step.functions = "main";
  r = PassManager(registry_).Run({step}, m, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "pass Fails (on functions 'main'): no can do");

  // Names of any length match in linear time and constant stack (std::regex
  // overflowed the stack on `.*` against a 100k-character name).
  std::string long_name(200000, 'f');
  Module big = testing::ParseOrFail("def @" + long_name +
                                    "(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n"
                                    "  %a = add(%x, %x);\n  %a\n}\n");
  step = Step("FnAddToMultiply");
  step.functions = "f*(f|g)*";
  r = PassManager(registry_).Run({step}, big, ctx);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->same_as(big));
}

TEST_F(PassManagerTest, ParallelFunctionPassEqualsSerial) {
  std::string text;
  for (int f = 0; f < 64; ++f) {
    text += "def @f" + std::to_string(f) + "(%x: Tensor[(2,), float32]) {\n";
    for (int i = 0; i <= f % 5; ++i) text += "  %a" + std::to_string(i) + " = add(%x, %x);\n";
    text += "  %x\n}\n";
  }
  text += "def @untouched(%x: Tensor[(2,), float32]) { %x }\n";
  Module m = testing::ParseOrFail(text);
  PassContext serial, parallel;
  serial.num_threads = 1;
  parallel.num_threads = 8;
  auto a = PassManager(registry_).Run({Step("FnAddToMultiply")}, m, serial);
  auto b = PassManager(registry_).Run({Step("FnAddToMultiply")}, m, parallel);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(fn_calls_, 2 * 65);
  EXPECT_TRUE(StructuralEqual(*a, *b));
  EXPECT_EQ(PrintModule(*a), PrintModule(*b));
  // Functions the pass left alone are shared, not copied.
  EXPECT_EQ(b->Lookup("untouched").get(), m.Lookup("untouched").get());
  // The input is unchanged.
  EXPECT_TRUE(StructuralEqual(m, testing::ParseOrFail(text)));
}

TEST_F(PassManagerTest, ParallelWarningsComeOutInFunctionOrder) {
  PassDef warn;
  warn.info.name = "WarnEach";
  warn.info.description = "warns once per function, early functions slowest";
  warn.info.kind = PassKind::kFunction;
  warn.function_fn = [](const Function& f, const PassCallContext& call) -> StatusOr<Function> {
    int index = std::stoi(f->name().substr(1));
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (32 - index)));
    call.context.Warn("WarnEach", f->name());
    return f;
  };
  ASSERT_TRUE(registry_.Register(std::move(warn)).ok());
  std::string text;
  for (int f = 0; f < 32; ++f)
    text += "def @f" + std::to_string(f) + "(%x: Tensor[(2,), float32]) { %x }\n";
  Module m = testing::ParseOrFail(text);
  PassContext ctx;
  ctx.num_threads = 8;
  ASSERT_TRUE(PassManager(registry_).Run({Step("WarnEach")}, m, ctx).ok());
  std::vector<std::string> warnings = ctx.TakeWarnings();
  ASSERT_EQ(warnings.size(), 32u);
  for (int f = 0; f < 32; ++f) EXPECT_EQ(warnings[f], "WarnEach: f" + std::to_string(f));
}

TEST_F(PassManagerTest, TimingAndPrintChangedInstruments) {
  std::ostringstream out;
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<PrintChangedInstrument>(&out));
  ctx.instruments.push_back(std::make_shared<TimingInstrument>(&out));
  ASSERT_TRUE(PassManager(registry_).Run({Step("Noop"), Step("Once")}, Chain(2), ctx).ok());
  std::string s = out.str();
  EXPECT_NE(s.find("--- before Once\n+++ after Once\n"), std::string::npos) << s;
  EXPECT_NE(s.find("-  %a0: Tensor[(2,), float32] = add(%x, %x);"), std::string::npos) << s;
  EXPECT_NE(s.find("+  %a0: Tensor[(2,), float32] = multiply(%x, %x);"), std::string::npos) << s;
  EXPECT_EQ(s.find("before Noop"), std::string::npos);  // Noop changed nothing
  EXPECT_NE(s.find("Pass execution timing report"), std::string::npos);
  EXPECT_NE(s.find("Once"), std::string::npos);
}

TEST_F(PassManagerTest, PrintIRInstrument) {
  std::ostringstream out;
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<PrintIRInstrument>(
      &out, std::set<std::string>{}, std::set<std::string>{"Once"}, false, false));
  ASSERT_TRUE(PassManager(registry_).Run({Step("Noop"), Step("Once")}, Chain(1), ctx).ok());
  EXPECT_EQ(out.str().find("IR after Noop"), std::string::npos);
  EXPECT_NE(out.str().find("// ----- IR after Once -----\n#[version = \"1\"]\ndef @f"),
            std::string::npos);
}

TEST(PassOptionsTest, ResolveChecksNamesAndTypesAndFillsDefaults) {
  PassInfo info;
  info.name = "P";
  info.options = {{"count", OptionType::kInt, AttrValue::Int(3), ""},
                  {"ratio", OptionType::kFloat, AttrValue::Float(0.5), ""},
                  {"names", OptionType::kStringList, AttrValue::List({}), ""}};
  auto r = info.ResolveOptions({{"ratio", AttrValue::Int(2)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->GetInt("count"), 3);
  EXPECT_EQ(r->GetFloat("ratio"), 2.0);  // ints widen to floats
  EXPECT_TRUE(r->GetStringList("names").empty());
  auto bad_name = info.ResolveOptions({{"cuont", AttrValue::Int(1)}});
  EXPECT_EQ(bad_name.status().message(), "pass P has no option 'cuont'; did you mean 'count'?");
  auto bad_type = info.ResolveOptions({{"count", AttrValue::String("many")}});
  EXPECT_EQ(bad_type.status().message(), "option 'count' of P must be int, got \"many\"");
  auto bad_list = info.ResolveOptions({{"names", AttrValue::List({AttrValue::Int(1)})}});
  EXPECT_FALSE(bad_list.ok());
}

TEST(PassOptionsTest, BoundsAreCheckedWhenResolving) {
  PassInfo info;
  info.name = "P";
  info.options = {{"depth", OptionType::kInt, AttrValue::Int(8), "", 1, 64},
                  {"floor", OptionType::kInt, AttrValue::Int(0), "", 0, std::nullopt},
                  {"sizes", OptionType::kIntList, AttrValue::List({}), "", std::nullopt, 10}};
  EXPECT_TRUE(info.ResolveOptions({{"depth", AttrValue::Int(64)}}).ok());
  EXPECT_EQ(info.ResolveOptions({{"depth", AttrValue::Int(0)}}).status().message(),
            "option 'depth' of P must be from 1 to 64, got 0");
  EXPECT_EQ(info.ResolveOptions({{"depth", AttrValue::Int(INT64_MAX)}}).status().message(),
            "option 'depth' of P must be from 1 to 64, got 9223372036854775807");
  EXPECT_EQ(info.ResolveOptions({{"floor", AttrValue::Int(-1)}}).status().message(),
            "option 'floor' of P must be at least 0, got -1");
  auto list =
      info.ResolveOptions({{"sizes", AttrValue::List({AttrValue::Int(3), AttrValue::Int(11)})}});
  EXPECT_EQ(list.status().message(), "option 'sizes' of P must be at most 10, got 11");
  EXPECT_EQ(list.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace plir
