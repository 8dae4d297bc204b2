// --bisect-limit's gate and --dump-ir-dir's file names.
#include "driver/pass_debug.h"

#include <gtest/gtest.h>

#include <sstream>

#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "passes/pass_manager.h"

namespace plir {
namespace {

TEST(IrDumpTest, FileNamesAreNumberedAndSafe) {
  EXPECT_EQ(IrDumpInstrument::FileName(0, "input"), "000_input.plir");
  EXPECT_EQ(IrDumpInstrument::FileName(7, "Normalize"), "007_Normalize.plir");
  EXPECT_EQ(IrDumpInstrument::FileName(1234, "a/b c"), "1234_a_b_c.plir");
  EXPECT_EQ(IrDumpInstrument::FileName(1, "../x"), "001__.._x.plir");
  EXPECT_EQ(IrDumpInstrument::FileName(1, ".."), "001__...plir");
  EXPECT_EQ(IrDumpInstrument::FileName(2, ""), "002__.plir");
}

// A registry with one module pass and one function pass, each of which
// renames what it sees, so that a run shows which applications happened.
PassRegistry& TestRegistry() {
  static PassRegistry* reg = [] {
    auto* r = new PassRegistry();
    PassDef mod;
    mod.info.name = "AddFunction";
    mod.info.description = "adds @extra_N";
    mod.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
      std::string name = "extra_" + std::to_string(m.size());
      return m.WithItem(
          FunctionNode::Make(name, {}, nullptr, SeqExprNode::Make({}, TupleNode::Make({}))));
    };
    EXPECT_TRUE(r->Register(std::move(mod)).ok());
    PassDef fn;
    fn.info.name = "MarkFunctions";
    fn.info.kind = PassKind::kFunction;
    fn.info.description = "sets attribute marked on every function";
    fn.function_fn = [](const Function& f, const PassCallContext&) -> StatusOr<Function> {
      return FunctionNode::Make(f->name(), f->params(), f->ret_type(), f->body(),
                                f->attrs().With(Symbol("marked"), AttrValue::Int(1)));
    };
    EXPECT_TRUE(r->Register(std::move(fn)).ok());
    return r;
  }();
  return *reg;
}

TEST(BisectGateTest, RunsTheFirstNApplicationsOverRepeatsAndFunctionPasses) {
  auto m = ParseModule("def @main() { () }\ndef @g() { () }\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  // [AddFunction, repeat 2 x [MarkFunctions, AddFunction]]: 5 applications.
  std::vector<PipelineStep> steps;
  steps.push_back(*MakePassStep(TestRegistry(), "AddFunction"));
  PipelineStep rep;
  rep.kind = PipelineStep::Kind::kRepeat;
  rep.max_iterations = 2;
  rep.steps.push_back(*MakePassStep(TestRegistry(), "MarkFunctions"));
  rep.steps.push_back(*MakePassStep(TestRegistry(), "AddFunction"));
  steps.push_back(rep);
  for (int limit : {0, 2, 3, 5, 9}) {
    std::ostringstream log;
    auto gate = std::make_shared<BisectGate>(limit, &log);
    auto gated = gate->GatedRegistry(TestRegistry());
    ASSERT_TRUE(gated.ok()) << gated.status().message();
    PassContext ctx;
    ctx.instruments.push_back(gate);
    auto out = PassManager(**gated).Run(steps, *m, ctx);
    ASSERT_TRUE(out.ok()) << out.status().message();
    // Applications 1, 3 and 5 add a function; 2 and 4 mark them.
    int added = (limit >= 1) + (limit >= 3) + (limit >= 5);
    EXPECT_EQ(out->size(), 2u + added) << "limit " << limit;
    bool marked = out->LookupFunction("main")->attrs().Get("marked") != nullptr;
    EXPECT_EQ(marked, limit >= 2) << "limit " << limit;
    if (limit == 0) EXPECT_TRUE(out->same_as(*m));
    EXPECT_EQ(gate->applications(), 5);
    std::string text = log.str();
    EXPECT_NE(text.find("BISECT: " + std::string(limit >= 2 ? "running" : "NOT running") +
                        " pass (2) MarkFunctions\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("BISECT: 5 pass applications in total, " +
                        std::to_string(std::min(limit, 5)) + " run"),
              std::string::npos)
        << text;
  }
}

}  // namespace
}  // namespace plir
