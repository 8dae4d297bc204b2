#include "cli/opt_program.h"

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "driver/execution_check.h"
#include "driver/file_util.h"
#include "driver/pass_debug.h"
#include "driver/pass_resolver.h"
#include "driver/pipeline.h"
#include "driver/plugin_loader.h"
#include "driver/supervised_child.h"
#include "ir/op.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"
#include "ir/verifier.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"

namespace plir::opt {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string EmitFormat(const Flags& f) {
  if (!f.emit.empty()) return f.emit;
  return EndsWith(f.output, ".plirb") ? "binary" : EndsWith(f.output, ".json") ? "json" : "text";
}

// A command-line run does not free the modules it drops at exit: a handle to
// each is parked in a holder that is never destroyed (reachable, so leak
// checkers stay quiet), the way clang's -disable-free skips its AST
// teardown. Freeing a 1M-binding module node by node cost a third of a text
// round trip (bench/RESULTS.md, "Teardown").
void KeepUntilExit(const Module& m) {
  static auto* kept = new std::vector<Module>();
  kept->push_back(m);
}

int Error(const std::string& message) {
  std::cerr << message << "\n";
  return 1;
}

std::vector<std::string> SplitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

namespace {

// "plugin foo (/abs/path/libplir_foo.so)" -> "plugin foo" unless verbose.
std::string ShortOrigin(const std::string& origin, bool verbose) {
  if (verbose) return origin;
  size_t paren = origin.find(" (");
  return paren == std::string::npos ? origin : origin.substr(0, paren);
}

void ListPasses(const Flags& f, std::ostream& out) {
  PassRegistry& reg = PassRegistry::Global();
  for (const std::string& name : reg.Names()) {
    const PassInfo& info = reg.Lookup(name)->info;
    out << name << "  [" << ShortOrigin(info.origin, f.verbose) << "]"
        << (info.kind == PassKind::kFunction ? " (function pass)" : "") << "\n    "
        << info.description << "\n";
    if (!f.verbose) continue;
    if (info.min_opt_level > 0) out << "    min_opt_level: " << info.min_opt_level << "\n";
    if (!info.requires_properties.empty()) {
      out << "    requires:";
      for (auto& r : info.requires_properties) out << " " << r;
      out << "\n";
    }
    if (!info.provides_properties.empty()) {
      out << "    provides:";
      for (auto& r : info.provides_properties) out << " " << r;
      out << "\n";
    }
    for (const OptionSpec& o : info.options) {
      std::string dflt;
      o.default_value.AppendTo(&dflt);
      out << "    --" << o.name << " (" << OptionTypeName(o.type) << ", default " << dflt
          << "): " << o.description << "\n";
    }
  }
}

void ListOps(std::ostream& out) { out << RenderOpDocs(OpRegistry::Global(), OpDocFormat::kText); }

// Records, for the supervisor, which pass of which plugin is running.
class PhaseInstrument : public Instrument {
 public:
  PhaseInstrument(RunState* state, std::map<std::string, std::string> plugin_of)
      : state_(state), plugin_of_(std::move(plugin_of)) {}
  void BeforePass(const PassInfo& pass, const Module&) override {
    auto it = plugin_of_.find(pass.name);
    state_->Enter(RunPhase::kRunningPass, pass.name,
                  it != plugin_of_.end() ? it->second : pass.origin);
  }

 private:
  RunState* state_;
  std::map<std::string, std::string> plugin_of_;
};

// The child's program, step by step. Each step's error is the complete
// message plir-opt prints.

Status Reword(const Status& s, std::string message) { return Status(s.code(), std::move(message)); }

// The loader as the flags configure it: trust, pins, the bundled
// directories (returned: they own their names from the start, so no
// --plugin may take one), the observers that record every plugin load and
// kernel in `state`, and the search path.
std::vector<std::string> ConfigureLoader(const Flags& f, RunState* state, PluginLoader& loader) {
  loader.set_allow_insecure(f.allow_insecure_plugins);
  loader.set_bundled_only(f.child_writes_output);
  if (!f.no_isolate && f.sandbox != "off")
    loader.set_permission_hint(
        "the plugin sandbox lets plugins read only the files plir-opt knows they need; "
        "--sandbox-read PATH adds one");
  for (const std::string& p : f.skip_plugins) loader.Skip(p);
  for (const auto& [path, sha] : f.pinned_plugins) loader.PinPath(path, sha);
  std::vector<std::string> defaults;
  if (!f.hermetic_plugins) defaults = DefaultPluginDirs();
  for (const std::string& d : defaults) loader.DeclareBundledDir(d);
  RecordPluginActivity(loader, state);
  for (const std::string& d : f.plugin_dirs) loader.AddSearchDir(d);
  if (const char* env = std::getenv("PLIR_PLUGIN_PATH"); env && !f.hermetic_plugins)
    for (const std::string& d : SplitList(env, ':')) loader.AddSearchDir(d);
  return defaults;
}

void PrintLoaderWarnings(PluginLoader& loader) {
  for (const std::string& w : loader.TakeWarnings())
    std::cerr << "warning: " << Printable(w) << "\n";
}

// --plugin PATH, in order.
Status LoadCommandLinePlugins(const Flags& f, PluginLoader& loader) {
  for (const std::string& p : f.plugins) {
    auto r = loader.LoadPath(p);
    if (!r.ok()) return Reword(r.status(), "plir-opt: " + Printable(r.status().message()));
  }
  return Status::Ok();
}

// The --pipeline file (its plugins loaded, its names resolved) with the
// --extend fragments applied; an empty pipeline without --pipeline.
StatusOr<Pipeline> LoadPipelineFlags(const Flags& f, PluginLoader& loader,
                                     const std::vector<std::string>& defaults) {
  Pipeline pipeline;
  if (!f.pipeline.empty()) {
    PipelineLoadOptions options;
    options.fallback_plugin_dirs = defaults;
    options.bundled_plugin_dirs = defaults;
    auto p = LoadPipeline(f.pipeline, loader, PassRegistry::Global(), options);
    if (!p.ok()) return Reword(p.status(), Printable(p.status().message()));
    pipeline = std::move(p).value();
  } else {
    for (const std::string& d : defaults) loader.AddBundledDir(d);
  }
  // Extension fragments apply only when asked for (--extend): a fragment
  // shipped beside a plugin is never applied silently.
  if (!f.extends.empty() && f.pipeline.empty())
    return InvalidArgument("plir-opt: --extend needs --pipeline");
  for (const std::string& frag : f.extends)
    if (Status s = ApplyExtension(pipeline, frag, loader); !s.ok())
      return Reword(s, Printable(s.message()));
  return pipeline;
}

// --list-passes, --list-ops: every plugin on the search path loaded.
std::string ListRegistered(const Flags& f, PluginLoader& loader) {
  if (Status s = loader.LoadAll(); !s.ok())
    std::cerr << "warning: some plugins on the search path did not load:\n"
              << Printable(s.message()) << "\n";
  PrintLoaderWarnings(loader);
  std::ostringstream text;
  if (f.list_passes) ListPasses(f, text);
  if (f.list_ops) ListOps(text);
  return text.str();
}

// --passes A,B,C appended to the pipeline, each name resolved (plugins on
// the search path loaded as needed) and the properties checked; then the
// --print-after names, checked like the pipeline's.
Status AddCommandLinePasses(const Flags& f, PluginLoader& loader, Pipeline& pipeline) {
  if (!f.passes.empty()) {
    for (const std::string& name : SplitList(f.passes, ',')) {
      std::string warning;
      auto known = ResolvePassName(name, loader, PassRegistry::Global(), {.load_all_plugins = true},
                                   &warning);
      if (!warning.empty())
        std::cerr << "warning: some plugins on the search path did not load:\n"
                  << Printable(warning) << "\n";
      if (!known.ok()) {
        if (known.status().code() != StatusCode::kNotFound)
          return Reword(known.status(), "plir-opt: " + Printable(known.status().message()));
        return Reword(known.status(), "plir-opt: --passes: " + Printable(known.status().message()));
      }
      auto step = MakePassStep(PassRegistry::Global(), name);
      if (!step.ok())
        return Reword(step.status(), "plir-opt: --passes: " + Printable(step.status().message()));
      pipeline.steps.push_back(std::move(step).value());
    }
    if (Status s = CheckProperties(pipeline.steps, PassRegistry::Global()); !s.ok())
      return Reword(s, "plir-opt: --passes: " + s.message());
  }
  PrintLoaderWarnings(loader);
  for (const std::string& p : f.print_after) {
    if (p == "all") continue;
    auto known = ResolvePassName(p, loader, PassRegistry::Global());
    if (!known.ok())
      return Reword(known.status(),
                    "plir-opt: --print-after: " + Printable(known.status().message()));
  }
  return Status::Ok();
}

// Limits from the pipeline apply unless the command line set them.
void ApplyPipelineLimits(const Flags& f, const Pipeline& pipeline, RunState* state) {
  if (f.pass_timeout_s <= 0 && pipeline.pass_timeout_s)
    state->pass_timeout_ns.store(static_cast<int64_t>(*pipeline.pass_timeout_s * 1e9));
  if (f.memory_limit_mb <= 0 && pipeline.memory_limit_mb) {
    state->memory_limit_mb.store(*pipeline.memory_limit_mb);
    if (!f.no_isolate) ApplyMemoryLimit(*pipeline.memory_limit_mb);
  }
}

// Reproducer material in the shared page: the loaded plugins (hashed here:
// the supervisor never opens a path it reads in the page) and the pipeline
// up to each top-level step. Returns the instrument that records which
// pass of which plugin runs.
std::shared_ptr<PhaseInstrument> RecordRunMaterial(const Flags& f, const PluginLoader& loader,
                                                   const Pipeline& pipeline, RunState* state,
                                                   ProgramResult* program) {
  std::string lines;
  std::map<std::string, std::string> plugin_of;
  for (const LoadedPlugin& p : loader.loaded()) {
    for (const std::string& op : p.ops) program->plugin_ops.push_back(op);
    StatusOr<std::string> sha = Sha256File(p.path);
    lines += p.path + "\t" + p.name + "\t" + p.version + "\t" + (sha.ok() ? *sha : "") + "\n";
    for (const std::string& pass : p.passes)
      plugin_of[pass] = p.name + " " + p.version + " (" + p.path + ")";
  }
  std::strncpy(state->plugins, lines.c_str(), sizeof state->plugins - 1);
  std::vector<std::string> prefixes;
  Pipeline prefix = pipeline;
  prefix.file.clear();
  prefix.plugin_path.clear();  // plugins are given by path in the manifest
  prefix.plugins.clear();
  if (f.opt_level >= 0) prefix.opt_level = f.opt_level;
  // At most RunState::kMaxPrefixes prefixes of at most kPrefixBytes in
  // all: the work is bounded whatever the pipeline's length (10,000 steps
  // cost 10,000^2 step printings before), and a failure past them gets no
  // reproducer.
  size_t bytes = 0;
  for (size_t i = 0; i < pipeline.steps.size() && i < RunState::kMaxPrefixes; ++i) {
    prefix.steps.assign(pipeline.steps.begin(), pipeline.steps.begin() + static_cast<long>(i) + 1);
    std::string yaml = PipelineToYaml(prefix);
    if (bytes + yaml.size() > RunState::kPrefixBytes) break;
    bytes += yaml.size();
    prefixes.push_back(std::move(yaml));
  }
  state->SetPrefixes(prefixes);
  if (prefixes.size() < pipeline.steps.size())
    std::cerr << "warning: the pipeline is too large for a crash reproducer after step "
              << prefixes.size() << "\n";
  return std::make_shared<PhaseInstrument>(state, std::move(plugin_of));
}

// How an input module is verified: the format it came in and what its
// loader proved.
struct InputCheck {
  ModuleFormat format = ModuleFormat::kText;
  LoadFacts facts;
};

// Verifies an input module. Text is fresh from the parser, which rules out
// a variable bound in two items (VerifyParsed). JSON and binary can hold
// one: they get the check across items (Verify) unless the binary loader
// proved that none is (LoadFacts; at 1M ops in 1,000 functions the check
// was 57 of the binary round trip's 243 ms). An ill-formed module is then
// verified in full, so that its errors read exactly as Verify words them.
Status VerifyInput(const Module& module, const InputCheck& check, const std::string& input_name) {
  Status s;
  if (check.format == ModuleFormat::kText) {
    s = VerifyParsed(module);
  } else if (check.facts.bindings_unshared) {
    s = VerifyParsed(module);
    if (!s.ok()) s = Verify(module);
  } else {
    s = Verify(module);
  }
  if (s.ok()) return s;
  return Reword(s, Printable(input_name) + ": " + Printable(s.message()));
}

// The input module, in any format, verified; or, when `defer_check` is set
// and the module will be written as it is loaded, not yet verified, with
// *deferred set to how to check it (the caller runs VerifyInput). That is a text
// input (the printer needs no more of a parsed module than the parser
// ensures: every name resolves to a variable defined before it, in its
// item), or any input written as binary (the binary writer takes any
// module, as SaveBinary does: a variable bound twice or in two items, any
// name).
StatusOr<Module> LoadInput(const Flags& f, const std::string& input_path,
                           const std::string& input_name, RunState* state, bool defer_check,
                           std::optional<InputCheck>* deferred) {
  state->Enter(RunPhase::kLoadingInput, input_name);
  StatusOr<ModuleFile> text = ModuleFile::Open(input_path);  // mapped when a regular file
  if (!text.ok()) return Reword(text.status(), "plir-opt: " + Printable(text.status().message()));
  // The format comes from the magic bytes or a leading '{' (LoadModule);
  // a .plirb or .json extension must agree with it.
  ModuleFormat format = DetectFormat(*text);
  if ((EndsWith(f.input, ".plirb") && format != ModuleFormat::kBinary) ||
      (EndsWith(f.input, ".json") && format != ModuleFormat::kJson))
    return InvalidArgument(Printable(input_name) +
                           ": the file's contents do not match its extension");
  if (f.verify_tensor_data && format == ModuleFormat::kBinary) {
    if (Status s = VerifyBinaryTensorData(*text); !s.ok())
      return Reword(s, Printable(input_name) + ": " + Printable(s.message()));
  }
  InputCheck check{format, {}};
  StatusOr<Module> module = LoadModule(*text, input_name, &check.facts);
  if (!module.ok()) return Reword(module.status(), Printable(module.status().message()));
  KeepUntilExit(*module);
  // Release the input before the passes and the printer allocate (a lower
  // peak RSS on large inputs). Only a binary version 3 module's constants
  // still view the mapping, which then lives as long as they do.
  text->Close();
  if (defer_check && (format == ModuleFormat::kText || EmitFormat(f) == "binary")) {
    *deferred = check;
    return module;
  }
  if (Status s = VerifyInput(*module, check, input_name); !s.ok()) return s;
  return module;
}

// Frees the modules the passes replaced on a thread of its own, beside the
// passes that follow and the printing. Freed on the pipeline's thread, the
// module the last pass replaced held the other core idle (cleanup pipeline
// on 1M ops in 1,000 functions: 0.03 s, 4% of the wall time;
// bench/RESULTS.md). A pass's input is handed over when the next pass
// starts or the pipeline ends, after the pass manager has dropped its own
// handle, so that the last handle, the one that frees it, is this
// thread's. The thread is joined when the object goes (after the output is
// written: ProgramResult::frees).
class ModuleReaper : public Instrument {
 public:
  ~ModuleReaper() override {
    HandOver();
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }
  void BeforePass(const PassInfo&, const Module&) override { HandOver(); }
  Status AfterPass(const PassInfo&, const Module& input, const Module& output) override {
    HandOver();
    if (!output.same_as(input)) held_ = input;
    return Status::Ok();
  }
  void Finish() override { HandOver(); }

 private:
  void HandOver() {
    if (!held_) return;
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(*held_));
    held_.reset();
    if (!thread_.joinable()) {
      try {
        thread_ = std::thread([this] { Loop(); });
      } catch (const std::system_error&) {  // no thread: freed here, as before
        queue_.clear();
        return;
      }
    }
    cv_.notify_one();
  }
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return done_ || !queue_.empty(); });
      if (queue_.empty()) return;
      Module m = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      m = Module();  // the free, outside the lock
      lock.lock();
    }
  }

  std::optional<Module> held_;  // the input of the pass that just ran
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Module> queue_;
  bool done_ = false;
  std::thread thread_;
};

// What the passes run under: the context with its instruments, and with
// --bisect-limit the gate and the registry of gated copies.
struct PassSetup {
  PassContext ctx;
  std::shared_ptr<BisectGate> gate;
  std::unique_ptr<PassRegistry> gated_registry;
  // Verify the result at the end (unless it is the verified input).
  bool verify_result = true;
};

Status BuildPassContext(const Flags& f, const Pipeline& pipeline, const Module& module,
                        std::shared_ptr<PhaseInstrument> phases, PassSetup* setup) {
  // --bisect-limit: the gate is the first instrument, and the passes run
  // through a registry of gated copies.
  if (f.bisect_limit >= 0) {
    setup->gate = std::make_shared<BisectGate>(f.bisect_limit, &std::cerr);
    auto r = setup->gate->GatedRegistry(PassRegistry::Global());
    if (!r.ok())
      return Reword(r.status(), "plir-opt: --bisect-limit: " + Printable(r.status().message()));
    setup->gated_registry = std::move(r).value();
  }
  PassContext& ctx = setup->ctx;
  if (setup->gate) ctx.instruments.push_back(setup->gate);
  ctx.instruments.push_back(std::make_shared<PassRunBudget>(f.max_pass_runs));
  ctx.opt_level = f.opt_level >= 0 ? f.opt_level : pipeline.opt_level.value_or(2);
  ctx.required.insert(pipeline.required.begin(), pipeline.required.end());
  ctx.disabled.insert(pipeline.disabled.begin(), pipeline.disabled.end());
  ctx.config = pipeline.config;
  InstrumentOptions opts = pipeline.instruments;
  opts.timing |= f.time_passes;
  if (f.verify_each) opts.verify = VerifyMode::kEach;
  opts.print_changed |= f.print_changed;
  opts.check_input_unchanged |= f.check_input_unchanged;
  if (f.print_before_all) opts.print_before.push_back("all");
  if (f.print_after_all) opts.print_after.push_back("all");
  for (const std::string& p : f.print_after) opts.print_after.push_back(p);
  // verify: none means none, except in a child that writes the output
  // itself: no parent checks its result, so it does (as the parent would).
  setup->verify_result = opts.verify == VerifyMode::kEnd ||
                         (opts.verify == VerifyMode::kNone && f.child_writes_output);
  ctx.instruments.push_back(std::move(phases));
  AddInstruments(opts, &std::cerr, ctx);
  if (!f.dump_ir_dir.empty()) {
    auto dump = IrDumpInstrument::Create(f.dump_ir_dir, module, setup->gate.get());
    if (!dump.ok()) return Reword(dump.status(), "plir-opt: " + Printable(dump.status().message()));
    ctx.instruments.push_back(*dump);
  }
  if (f.check_execution) {
    ExecutionCheckOptions check;
    check.entry = f.entry;
    check.inputs.inputs_file = f.check_inputs;
    check.inputs.params_file = f.check_params;
    check.inputs.seed = f.check_seed;
    if (!f.check_tolerance.empty()) {
      auto t = ParseTolerance(f.check_tolerance);
      if (!t.ok()) return Reword(t.status(), "plir-opt: " + Printable(t.status().message()));
      check.tolerance = *t;
    }
    auto checker = ExecutionChecker::Create(module, check);
    if (!checker.ok())
      return Reword(checker.status(), "plir-opt: " + Printable(checker.status().message()));
    std::cerr << "note: --check-execution: @" << f.entry << " runs on "
              << (*checker)->inputs_description() << "; its outputs are compared after every "
              << "pass (rtol " << check.tolerance.rtol << ", atol " << check.tolerance.atol
              << ")\n";
    ctx.instruments.push_back(*checker);
  }
  return Status::Ok();
}

// Records a failure of the pipeline in the page (for the reproducer),
// naming the running pass's plugin, prints it and returns 1. A reproducer
// is written for crashes and limits, not for option errors: a pass's
// InvalidArgument (a refused option value or input) gets none; anything
// else (Internal, ResourceExhausted, FailedPrecondition from the verifier
// and the checks) does.
int FailPass(RunState* state, std::string message, StatusCode code) {
  if (state->Phase() == RunPhase::kRunningPass)
    message += "\nplir-opt: in pass " + state->SubjectText() + " of plugin " + state->PluginText();
  state->pass_failed.store(code == StatusCode::kInvalidArgument ? RunState::kPassFailedNoBundle
                                                                : RunState::kPassFailedBundle);
  std::strncpy(state->failure, message.c_str(), sizeof state->failure - 1);
  return Error(Printable(message));
}

// Runs the pipeline; a failure is recorded (FailPass).
int RunPasses(const Pipeline& pipeline, const Module& module, PassSetup& setup, RunState* state,
              ProgramResult* program) {
  const PassRegistry& registry =
      setup.gated_registry ? *setup.gated_registry : PassRegistry::Global();
  StatusOr<Module> result =
      PassManager(registry).Run(pipeline.steps, module, setup.ctx,
                                [&](size_t i) { state->top_step.store(static_cast<int32_t>(i)); });
  for (const std::string& w : setup.ctx.TakeWarnings())
    std::cerr << "warning: " << Printable(w) << "\n";
  if (!result.ok())
    return FailPass(state, "plir-opt: " + result.status().message(), result.status().code());
  KeepUntilExit(*result);
  // "end" (and the default) checks the result, unless it is the input
  // itself (no pass changed it), which LoadInput verified.
  program->verified = setup.verify_result || result->same_as(module);
  if (setup.verify_result && !result->same_as(module)) {
    if (program->defer_result_check) {
      program->deferred_check = [r = *result, state] { return CheckResult(r, state); };
    } else if (int rc = CheckResult(*result, state); rc != 0) {
      return rc;
    }
  }
  program->module = *result;
  return 0;
}

}  // namespace

int CheckResult(const Module& result, RunState* state) {
  Status s = Verify(result);
  if (s.ok()) return 0;
  return FailPass(state, "plir-opt: the pipeline produced an ill-formed module: " + s.message(),
                  StatusCode::kInternal);
}

// The child's program (or the whole program with --no-isolate): load the
// plugins and the pipeline, the input, run; the result goes to `program`.
// Everything it does is recorded in `state`.
int RunPipeline(const Flags& f, const std::string& input_path, const std::string& input_name,
                RunState* state, ProgramResult* program) {
  PluginLoader loader;
  const std::vector<std::string> defaults = ConfigureLoader(f, state, loader);
  if (Status s = LoadCommandLinePlugins(f, loader); !s.ok()) return Error(s.message());
  StatusOr<Pipeline> pipeline = LoadPipelineFlags(f, loader, defaults);
  if (!pipeline.ok()) return Error(pipeline.status().message());
  if (f.list_passes || f.list_ops) {
    program->text = ListRegistered(f, loader);
    return 0;
  }
  if (Status s = AddCommandLinePasses(f, loader, *pipeline); !s.ok()) return Error(s.message());
  if (f.emit_pipeline) {
    program->text = PipelineToYaml(*pipeline);
    return 0;
  }
  ApplyPipelineLimits(f, *pipeline, state);
  std::shared_ptr<PhaseInstrument> phases = RecordRunMaterial(f, loader, *pipeline, state, program);
  // Without passes, the input's verification (of text, or of any input
  // written as binary: LoadInput) is left to the caller as the result's is
  // (defer_result_check): it runs beside the writing of the module, whose
  // file is kept only if it passes.
  std::optional<InputCheck> deferred;
  StatusOr<Module> module =
      LoadInput(f, input_path, input_name, state,
                program->defer_result_check && pipeline->steps.empty(), &deferred);
  if (!module.ok()) return Error(module.status().message());
  if (deferred) {
    program->deferred_check = [m = *module, check = *deferred, input_name] {
      Status s = VerifyInput(m, check, input_name);
      return s.ok() ? 0 : Error(s.message());
    };
  }
  PassSetup setup;
  if (Status s = BuildPassContext(f, *pipeline, *module, std::move(phases), &setup); !s.ok())
    return Error(s.message());
  auto reaper = std::make_shared<ModuleReaper>();
  setup.ctx.instruments.push_back(reaper);
  program->frees = reaper;
  return RunPasses(*pipeline, *module, setup, state, program);
}

}  // namespace plir::opt
