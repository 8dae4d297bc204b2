// plir-opt: runs pass pipelines on PLIR modules.
//
//   plir-opt INPUT [-o OUT] [--pipeline FILE.yaml | --passes A,B]
//            [--plugin PATH]... [--plugin-path DIR]... [--opt-level N]
//            [--time-passes] [--print-before-all] [--print-after-all]
//            [--print-after P]... [--print-changed] [--verify-each]
//            [--check-input-unchanged] [--list-passes] [--emit-pipeline]
//            [--check-execution[=INPUTS.safetensors] [--params W.safetensors]
//             [--check-tolerance RTOL[,ATOL]] [--entry F] [--check-seed N]]
//            [--dump-ir-dir DIR] [--bisect-limit N]
//
// INPUT may be '-' (standard input), in text, JSON or binary form (detected
// by magic); --emit text|json|binary picks the output form. Plugins are searched along
// --plugin-path, then $PLIR_PLUGIN_PATH, then the pipeline's plugin_path,
// then the in-tree plugins next to this executable. Output is written
// atomically; on any error nothing is written. Exit status: 0 success,
// 1 input or pipeline error, 2 usage error.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "driver/child_result.h"
#include "driver/execution_check.h"
#include "driver/file_util.h"
#include "driver/pass_debug.h"
#include "driver/pass_resolver.h"
#include "driver/pipeline.h"
#include "driver/plugin_loader.h"
#include "driver/reproducer.h"
#include "driver/sandbox.h"
#include "driver/supervised_child.h"
#include "driver/supervisor.h"
#include "driver/tool_options.h"
#include "ir/parallel.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"

namespace plir {
namespace {

struct Flags {
  std::string input;
  std::string output;
  std::string pipeline;
  std::string passes;
  std::vector<std::string> plugins;
  std::vector<std::string> plugin_dirs;
  int opt_level = -1;
  bool time_passes = false;
  bool print_before_all = false;
  bool print_after_all = false;
  std::vector<std::string> print_after;
  bool print_changed = false;
  bool verify_each = false;
  bool check_input_unchanged = false;
  bool list_passes = false;
  bool list_ops = false;
  bool verbose = false;
  bool emit_pipeline = false;
  std::string emit;  // text | json | binary; default from -o's extension
  std::vector<std::string> extends;
  int threads = 0;  // 0: the hardware's
  // Robustness.
  bool no_isolate = false;
  double pass_timeout_s = 0;   // 0: none (or the pipeline's)
  double timeout_s = 0;        // the whole run (the supervisor's own); 0: none
  double load_timeout_s = 30;  // one plugin load; 0: none
  uint64_t max_pass_runs = PassRunBudget::kDefaultMaxRuns;   // the whole pipeline's
  int64_t memory_limit_mb = 0;                               // 0: none (or the pipeline's)
  std::string reproduce;                                     // --reproduce DIR
  std::string reproducer_dir;                                // where bundles go (default $TMPDIR)
  uint64_t reproducer_max_input_bytes = uint64_t{64} << 20;  // copied up to this
  bool no_reproducer = false;
  bool allow_insecure_plugins = false;
  bool allow_changed_plugins = false;
  // --reproduce: the bundle's plugins by path, with the sha256 they had.
  std::vector<std::pair<std::string, std::string>> pinned_plugins;
  bool hermetic_plugins = false;          // only --plugin and --plugin-path (build actions)
  std::string sandbox = "auto";           // --sandbox=require|auto|off
  std::vector<std::string> sandbox_read;  // --sandbox-read PATH
  uint64_t max_input_bytes = ModuleFile::kDefaultMaxBytes;
  std::vector<std::string> argv;
  std::vector<std::string> skip_plugins;  // crashed while loading during a scan
  // Debugging a pipeline.
  bool check_execution = false;
  std::string check_inputs;     // --check-execution=FILE; empty: random inputs
  std::string check_params;     // --params
  std::string check_tolerance;  // --check-tolerance RTOL[,ATOL]
  std::string entry = "main";
  uint64_t check_seed = 0;
  std::string dump_ir_dir;
  int64_t bisect_limit = -1;  // -1: off
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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

// What the child's program produced: the module to write, or the text of
// --list-passes, --list-ops or --emit-pipeline; and the ops that plugins
// registered (the supervisor gives them stand-ins to load the module).
struct ProgramResult {
  std::optional<Module> module;
  std::string text;
  std::vector<std::string> plugin_ops;
};

// The child's program (or the whole program with --no-isolate): load the
// plugins and the pipeline, the input, run; the result goes to `program`.
// Everything it does is recorded in `state`.
int RunPipeline(const Flags& f, const std::string& input_path, const std::string& input_name,
                RunState* state, ProgramResult* program) {
  PluginLoader loader;
  loader.set_allow_insecure(f.allow_insecure_plugins);
  if (!f.no_isolate && f.sandbox != "off")
    loader.set_permission_hint(
        "the plugin sandbox lets plugins read only the files plir-opt knows they need; "
        "--sandbox-read PATH adds one");
  for (const std::string& p : f.skip_plugins) loader.Skip(p);
  for (const auto& [path, sha] : f.pinned_plugins) loader.PinPath(path, sha);
  // The bundled plugins own their names from the start: no --plugin may
  // take one.
  std::vector<std::string> defaults;
  if (!f.hermetic_plugins) defaults = DefaultPluginDirs();
  for (const std::string& d : defaults) loader.DeclareBundledDir(d);
  loader.SetLoadObserver([state](const std::string& path, bool scanning) {
    state->Enter(scanning ? RunPhase::kScanningPlugin : RunPhase::kLoadingPlugin, path);
  });
  loader.SetKernelHook([state](const std::string* what) {
    if (what)
      state->EnterKernel(*what);
    else
      state->LeaveKernel();
  });
  auto print_loader_warnings = [&] {
    for (const std::string& w : loader.TakeWarnings())
      std::cerr << "warning: " << Printable(w) << "\n";
  };
  for (const std::string& d : f.plugin_dirs) loader.AddSearchDir(d);
  if (const char* env = std::getenv("PLIR_PLUGIN_PATH"); env && !f.hermetic_plugins)
    for (const std::string& d : SplitList(env, ':')) loader.AddSearchDir(d);
  for (const std::string& p : f.plugins) {
    auto r = loader.LoadPath(p);
    if (!r.ok()) return Error("plir-opt: " + Printable(r.status().message()));
  }

  Pipeline pipeline;
  if (!f.pipeline.empty()) {
    PipelineLoadOptions options;
    options.fallback_plugin_dirs = defaults;
    options.bundled_plugin_dirs = defaults;
    auto p = LoadPipeline(f.pipeline, loader, PassRegistry::Global(), options);
    if (!p.ok()) return Error(Printable(p.status().message()));
    pipeline = std::move(p).value();
  } else {
    for (const std::string& d : defaults) loader.AddBundledDir(d);
  }
  // Extension fragments apply only when asked for (--extend): a fragment
  // shipped beside a plugin is never applied silently.
  if (!f.extends.empty() && f.pipeline.empty()) return Error("plir-opt: --extend needs --pipeline");
  for (const std::string& frag : f.extends)
    if (Status s = ApplyExtension(pipeline, frag, loader); !s.ok())
      return Error(Printable(s.message()));
  if (f.list_passes || f.list_ops) {
    if (Status s = loader.LoadAll(); !s.ok())
      std::cerr << "warning: some plugins on the search path did not load:\n"
                << Printable(s.message()) << "\n";
    print_loader_warnings();
    std::ostringstream text;
    if (f.list_passes) ListPasses(f, text);
    if (f.list_ops) ListOps(text);
    program->text = text.str();
    return 0;
  }
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
          return Error("plir-opt: " + Printable(known.status().message()));
        return Error("plir-opt: --passes: " + Printable(known.status().message()));
      }
      auto step = MakePassStep(PassRegistry::Global(), name);
      if (!step.ok()) return Error("plir-opt: --passes: " + Printable(step.status().message()));
      pipeline.steps.push_back(std::move(step).value());
    }
    if (Status s = CheckProperties(pipeline.steps, PassRegistry::Global()); !s.ok())
      return Error("plir-opt: --passes: " + s.message());
  }
  print_loader_warnings();
  // --print-after names are checked like the pipeline's.
  for (const std::string& p : f.print_after) {
    if (p == "all") continue;
    auto known = ResolvePassName(p, loader, PassRegistry::Global());
    if (!known.ok())
      return Error("plir-opt: --print-after: " + Printable(known.status().message()));
  }
  if (f.emit_pipeline) {
    program->text = PipelineToYaml(pipeline);
    return 0;
  }

  // Limits from the pipeline apply unless the command line set them.
  if (f.pass_timeout_s <= 0 && pipeline.pass_timeout_s)
    state->pass_timeout_ns.store(static_cast<int64_t>(*pipeline.pass_timeout_s * 1e9));
  if (f.memory_limit_mb <= 0 && pipeline.memory_limit_mb) {
    state->memory_limit_mb.store(*pipeline.memory_limit_mb);
    if (!f.no_isolate) ApplyMemoryLimit(*pipeline.memory_limit_mb);
  }

  // Reproducer material: the plugins, and the pipeline up to each step.
  {
    std::string lines;
    std::map<std::string, std::string> plugin_of;
    for (const LoadedPlugin& p : loader.loaded()) {
      for (const std::string& op : p.ops) program->plugin_ops.push_back(op);
      // Hashed here: the supervisor never opens a path it reads in the page.
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
      prefix.steps.assign(pipeline.steps.begin(),
                          pipeline.steps.begin() + static_cast<long>(i) + 1);
      std::string yaml = PipelineToYaml(prefix);
      if (bytes + yaml.size() > RunState::kPrefixBytes) break;
      bytes += yaml.size();
      prefixes.push_back(std::move(yaml));
    }
    state->SetPrefixes(prefixes);
    if (prefixes.size() < pipeline.steps.size())
      std::cerr << "warning: the pipeline is too large for a crash reproducer after step "
                << prefixes.size() << "\n";
    auto inst = std::make_shared<PhaseInstrument>(state, std::move(plugin_of));
    state->Enter(RunPhase::kLoadingInput, input_name);

    StatusOr<ModuleFile> text = ModuleFile::Open(input_path);  // mapped when a regular file
    if (!text.ok()) return Error("plir-opt: " + Printable(text.status().message()));
    // The format comes from the magic bytes or a leading '{' (LoadModule);
    // a .plirb or .json extension must agree with it.
    ModuleFormat format = DetectFormat(*text);
    if ((EndsWith(f.input, ".plirb") && format != ModuleFormat::kBinary) ||
        (EndsWith(f.input, ".json") && format != ModuleFormat::kJson))
      return Error(Printable(input_name) + ": the file's contents do not match its extension");
    StatusOr<Module> module = LoadModule(*text, input_name);
    if (!module.ok()) return Error(Printable(module.status().message()));
    KeepUntilExit(*module);
    // The module holds no reference to the input bytes: release them before
    // the passes and the printer allocate (a lower peak RSS on large inputs).
    text->Close();
    if (Status s = Verify(*module); !s.ok())
      return Error(Printable(input_name) + ": " + Printable(s.message()));

    // --bisect-limit: the gate is the first instrument, and the passes run
    // through a registry of gated copies.
    std::shared_ptr<BisectGate> gate;
    std::unique_ptr<PassRegistry> gated_registry;
    if (f.bisect_limit >= 0) {
      gate = std::make_shared<BisectGate>(f.bisect_limit, &std::cerr);
      auto r = gate->GatedRegistry(PassRegistry::Global());
      if (!r.ok()) return Error("plir-opt: --bisect-limit: " + Printable(r.status().message()));
      gated_registry = std::move(r).value();
    }

    PassContext ctx;
    if (gate) ctx.instruments.push_back(gate);
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
    ctx.instruments.push_back(inst);
    AddInstruments(opts, &std::cerr, ctx);
    if (!f.dump_ir_dir.empty()) {
      auto dump = IrDumpInstrument::Create(f.dump_ir_dir, *module, gate.get());
      if (!dump.ok()) return Error("plir-opt: " + Printable(dump.status().message()));
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
        if (!t.ok()) return Error("plir-opt: " + Printable(t.status().message()));
        check.tolerance = *t;
      }
      auto checker = ExecutionChecker::Create(*module, check);
      if (!checker.ok()) return Error("plir-opt: " + Printable(checker.status().message()));
      std::cerr << "note: --check-execution: @" << f.entry << " runs on "
                << (*checker)->inputs_description() << "; its outputs are compared after every "
                << "pass (rtol " << check.tolerance.rtol << ", atol " << check.tolerance.atol
                << ")\n";
      ctx.instruments.push_back(*checker);
    }

    auto fail_pass = [&](std::string message) {
      if (state->Phase() == RunPhase::kRunningPass)
        message +=
            "\nplir-opt: in pass " + state->SubjectText() + " of plugin " + state->PluginText();
      state->pass_failed.store(1);
      std::strncpy(state->failure, message.c_str(), sizeof state->failure - 1);
      return Error(Printable(message));
    };
    StatusOr<Module> result = PassManager(gated_registry ? *gated_registry : PassRegistry::Global())
                                  .Run(pipeline.steps, *module, ctx, [&](size_t i) {
                                    state->top_step.store(static_cast<int32_t>(i));
                                  });
    for (const std::string& w : ctx.TakeWarnings())
      std::cerr << "warning: " << Printable(w) << "\n";
    if (!result.ok()) return fail_pass("plir-opt: " + result.status().message());
    KeepUntilExit(*result);
    // verify: none means none; "end" (and the default) checks the result.
    if (opts.verify == VerifyMode::kEnd) {
      if (Status s = Verify(*result); !s.ok())
        return fail_pass("plir-opt: the pipeline produced an ill-formed module: " + s.message());
    }

    program->module = *result;
  }
  return 0;
}

using Input = ChildInput;

void WriteBundle(const Flags& f, const Input& in, const RunState& state,
                 const std::string& failure) {
  if (f.no_reproducer || !f.reproduce.empty()) return;
  // Everything read from the page is bounded (RunState's readers); the
  // plugins are recorded as the child hashed them.
  const int step = state.top_step.load();
  std::string prefix = state.Prefix(step);
  if (prefix.empty()) return;  // not in a pass (or the page is not consistent)
  Reproducer r;
  r.plugins = PluginsFromLines(state.PluginsText());
  r.opt_level = f.opt_level;
  r.threads = f.threads;
  r.pass_timeout_s = f.pass_timeout_s > 0 ? f.pass_timeout_s : state.PassTimeoutSeconds();
  r.memory_limit_mb = f.memory_limit_mb > 0 ? f.memory_limit_mb : state.MemoryLimitMb();
  r.command = f.argv;
  r.failure = failure;
  r.max_input_copy_bytes = f.reproducer_max_input_bytes;
  if (f.check_execution) {
    auto abs = [](const std::string& p) {
      return p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string();
    };
    r.check.enabled = true;
    r.check.entry = f.entry;
    r.check.inputs = abs(f.check_inputs);
    r.check.params = abs(f.check_params);
    r.check.tolerance = f.check_tolerance;
    r.check.seed = f.check_seed;
  }
  auto dir = WriteReproducer(f.reproducer_dir, in.path, in.ext, prefix, std::move(r));
  if (!dir.ok()) {
    std::cerr << "plir-opt: could not write a crash reproducer: "
              << Printable(dir.status().message()) << "\n";
    return;
  }
  std::cerr << "plir-opt: reproducer written to " << *dir << "\n"
            << "plir-opt: replay it with: plir-opt --reproduce " << *dir << "\n";
}

// The output as the parent owns it: a temporary file beside -o, renamed
// into place only when the run succeeded; else standard output, written
// only once the result is checked. The child never holds either.
struct Output {
  std::optional<AtomicOutput> file;
};

StatusOr<Output> PrepareOutput(const Flags& f) {
  Output out;
  if (!f.output.empty() && f.output != "-") {
    PLIR_ASSIGN_OR_RETURN(AtomicOutput file, AtomicOutput::Create(f.output));
    out.file.emplace(std::move(file));
  }
  return out;
}

Status WriteOutput(Output& out, std::span<const std::string> parts) {
  if (out.file) {
    for (const std::string& part : parts)
      if (Status s = out.file->Write(part); !s.ok()) {
        out.file->Abort();
        return Internal("error writing the output: " + s.message());
      }
    return out.file->Commit();
  }
  std::cout.flush();
  std::fflush(stdout);
  for (const std::string& part : parts)
    PLIR_RETURN_IF_ERROR(WriteAllToFd(1, part, "standard output"));
  return Status::Ok();
}

// Prints `m` as -o's extension or --emit says and writes it.
Status WriteModule(const Flags& f, const Module& m, Output& out) {
  std::string emit = f.emit;
  if (emit.empty())
    emit = EndsWith(f.output, ".plirb") ? "binary" : EndsWith(f.output, ".json") ? "json" : "text";
  // Text is written in per-item pieces, without a concatenated copy.
  std::vector<std::string> printed;
  if (emit == "binary")
    printed.push_back(SaveBinary(m));
  else if (emit == "json")
    printed.push_back(SaveJson(m));
  else
    printed = PrintModuleParts(m);
  return WriteOutput(out, printed);
}

// Writes what the program produced: the module, or its text.
Status CommitResult(const Flags& f, const ProgramResult& r, Output& out) {
  if (r.module) return WriteModule(f, *r.module, out);
  std::string text = r.text;
  return WriteOutput(out, std::span<const std::string>(&text, 1));
}

// In the parent: the child's result, checked by the parent's own code. A
// module is loaded and verified; text (pass and op lists, a pipeline) gets
// its control bytes escaped, as any text from a plugin does.
StatusOr<ProgramResult> TakeChildResult(const Flags& f, int result_fd) {
  PLIR_ASSIGN_OR_RETURN(ChildResult r, ReadChildResult(result_fd, f.max_input_bytes));
  ProgramResult out;
  const bool wants_text = f.list_passes || f.list_ops || f.emit_pipeline;
  if (wants_text != (r.kind() == ChildResultKind::kText))
    return FailedPrecondition("the child handed over a result of the wrong kind");
  if (wants_text) {
    out.text = Printable(r.payload());
    return out;
  }
  PLIR_ASSIGN_OR_RETURN(Module m, LoadResultModule(r));
  KeepUntilExit(m);
  out.module = std::move(m);
  return out;
}

// What the child may read and write, for the sandbox (driver/sandbox.h):
// the system's files, and every file the command line and the pipeline
// name.
SandboxPolicy BuildSandboxPolicy(const Flags& f, const Input& in) {
  SandboxPolicy p = NewSandboxPolicy();
  auto add = [&](const std::string& path) {
    if (!path.empty() && path != "-") AddReadPath(path, &p);
  };
  if (in.fd < 0) add(in.path);
  for (const std::string& plugin : f.plugins) AddPluginReadPath(plugin, &p);
  for (const std::string& d : f.plugin_dirs) add(d);
  if (const char* env = std::getenv("PLIR_PLUGIN_PATH"); env && !f.hermetic_plugins)
    for (const std::string& d : SplitList(env, ':')) add(d);
  if (!f.pipeline.empty()) AddYamlReferencedPaths(f.pipeline, &p);
  for (const std::string& e : f.extends) AddYamlReferencedPaths(e, &p);
  add(f.check_inputs);
  add(f.check_params);
  add(f.reproduce);
  for (const std::string& r : f.sandbox_read) add(r);
  if (!f.dump_ir_dir.empty()) p.write.push_back(f.dump_ir_dir);
  return p;
}

int Main(Flags f) {
  if (f.threads > 0) SetDefaultThreads(f.threads);
  ModuleFile::SetMaxBytes(f.max_input_bytes);
  const bool needs_input = !(f.list_passes || f.list_ops || f.emit_pipeline);
  if (needs_input && f.input.empty())
    return Error("plir-opt: an input file is required (or --list-passes)");
  Input in;
  if (needs_input) {
    StatusOr<Input> i = PrepareChildInput(f.input, f.max_input_bytes);
    if (!i.ok()) return Error("plir-opt: " + Printable(i.status().message()));
    in = *i;
  }
  StatusOr<Output> prepared = PrepareOutput(f);
  if (!prepared.ok()) return Error("plir-opt: " + Printable(prepared.status().message()));
  Output out = std::move(prepared).value();

  if (f.no_isolate) {
    if (f.sandbox == "require")
      return Error("plir-opt: --sandbox=require needs the supervised child (not --no-isolate)");
    RunState* state = NewRunState(false);
    if (f.pass_timeout_s > 0 || f.timeout_s > 0)
      std::cerr << "warning: --pass-timeout and --timeout need isolation; ignored with "
                   "--no-isolate\n";
    ProgramResult result;
    int rc = RunPipeline(f, in.path, in.name, state, &result);
    if (rc != 0 && state->pass_failed.load()) WriteBundle(f, in, *state, state->FailureText());
    if (rc == 0)
      if (Status s = CommitResult(f, result, out); !s.ok())
        return Error("plir-opt: " + Printable(s.message()));
    return rc;
  }

  // The sandbox: probed once, here; entered by every child.
  const SandboxMode sandbox_mode = *ParseSandboxMode(f.sandbox);
  StatusOr<SandboxSupport> support = ProbeSandboxFor(sandbox_mode, "plir-opt");
  if (!support.ok()) return Error(support.status().message());
  if (!f.dump_ir_dir.empty()) {  // the child may write there, but not create it
    std::error_code ec;
    std::filesystem::create_directories(f.dump_ir_dir, ec);
    if (ec)
      return Error("plir-opt: --dump-ir-dir: cannot create " + Printable(f.dump_ir_dir) + ": " +
                   ec.message());
  }
  ChildSetup setup;
  setup.tool = "plir-opt";
  setup.sandbox_mode = sandbox_mode;
  setup.sandbox_support = *support;
  setup.sandbox_policy = BuildSandboxPolicy(f, in);
  setup.memory_limit_mb = f.memory_limit_mb;

  RunState* state = NewRunState(true);
  if (!state) return Error("plir-opt: cannot allocate shared memory for the supervisor");
  StatusOr<int> result_fd = CreateResultFile();
  if (!result_fd.ok()) return Error("plir-opt: " + result_fd.status().message());
  // The supervisor's own limits: one deadline for the whole run (every
  // attempt), whatever the child says in the page.
  setup.limits = SupervisorLimits(f.timeout_s, f.load_timeout_s);
  setup.fds = {*result_fd};
  if (in.fd >= 0) setup.fds.push_back(in.fd);
  // Plugins that crash while loading during a scan (--list-passes, a pass
  // looked for on the path) are skipped, named, and the run starts over.
  for (int attempt = 0;; ++attempt) {
    new (state) RunState();
    if (f.pass_timeout_s > 0)
      state->pass_timeout_ns.store(static_cast<int64_t>(f.pass_timeout_s * 1e9));
    if (f.memory_limit_mb > 0) state->memory_limit_mb.store(f.memory_limit_mb);
    if (ftruncate(*result_fd, 0) != 0) return Error("plir-opt: cannot reset the result file");
    StatusOr<ChildEnd> end = RunInSupervisedChild(setup, state, [&](const std::vector<int>& fds) {
      const int child_result_fd = fds[0];
      std::string input_path = in.fd >= 0 ? "/proc/self/fd/" + std::to_string(fds[1]) : in.path;
      ProgramResult result;
      int rc = RunPipeline(f, input_path, in.name, state, &result);
      if (rc == 0) {
        state->Enter(RunPhase::kWritingOutput, f.output);
        Status s = result.module
                       ? WriteChildResult(child_result_fd, ChildResultKind::kModule,
                                          result.plugin_ops, SaveBinary(*result.module))
                       : WriteChildResult(child_result_fd, ChildResultKind::kText, {}, result.text);
        if (!s.ok()) rc = Error("plir-opt: " + s.message());
      }
      return rc;
    });
    if (!end.ok()) return Error("plir-opt: " + end.status().message());
    const ChildOutcome& o = end->outcome;
    const std::string& why = end->abnormal;
    if (why.empty()) {
      // The child finished its program.
      if (o.exit_code != 0) {
        if (state->pass_failed.load()) WriteBundle(f, in, *state, state->FailureText());
        return 1;
      }
      StatusOr<ProgramResult> result = TakeChildResult(f, *result_fd);
      if (!result.ok()) return Error("plir-opt: " + Printable(result.status().message()));
      if (Status s = CommitResult(f, *result, out); !s.ok())
        return Error("plir-opt: " + Printable(s.message()));
      return 0;
    }
    std::string crashed;
    if (DiedWhileScanning(*state, &crashed) && attempt < 64) {
      std::cerr << "warning: " << why.substr(std::strlen("plir-opt: "))
                << "; skipping that plugin\n";
      f.skip_plugins.push_back(crashed);
      continue;
    }
    std::cerr << why << "\n";
    if (state->Phase() == RunPhase::kRunningPass) WriteBundle(f, in, *state, why);
    return 1;
  }
}

// Fills `f` from a reproducer bundle.
Status LoadReproduceFlags(Flags& f) {
  PLIR_ASSIGN_OR_RETURN(Reproducer r, ReadReproducer(f.reproduce));
  f.input = r.input_file;
  f.pipeline = r.pipeline_file;
  if (!r.input_sha256.empty()) {  // a large input the bundle names
    StatusOr<std::string> sha = Sha256File(r.input_file);
    if (!sha.ok())
      return FailedPrecondition("the reproducer's input " + r.input_file +
                                " is gone: " + sha.status().message());
    if (*sha != r.input_sha256)
      return FailedPrecondition("the reproducer's input " + r.input_file +
                                " changed since the reproducer was written (sha256 " + *sha +
                                ", was " + r.input_sha256 + ")");
  }
  for (const ReproducerPlugin& p : r.plugins) {
    StatusOr<std::string> sha = Sha256File(p.path);
    if (!sha.ok())
      return FailedPrecondition("the reproducer's plugin " + p.path +
                                " is gone: " + sha.status().message());
    if (!p.sha256.empty() && *sha != p.sha256) {
      std::string what = "plugin " + p.path + " changed since the reproducer was written (sha256 " +
                         *sha + ", was " + p.sha256 + ")";
      if (!f.allow_changed_plugins)
        return FailedPrecondition(what + "; --allow-changed-plugins replays it anyway");
      std::cerr << "warning: " << what << "\n";
    } else if (!p.sha256.empty()) {
      // Checked again right before the child opens it.
      f.pinned_plugins.emplace_back(p.path, p.sha256);
    }
    f.plugins.push_back(p.path);
  }
  if (r.opt_level >= 0 && f.opt_level < 0) f.opt_level = r.opt_level;
  if (r.threads > 0 && f.threads == 0) f.threads = r.threads;
  if (r.pass_timeout_s > 0 && f.pass_timeout_s <= 0) f.pass_timeout_s = r.pass_timeout_s;
  if (r.memory_limit_mb > 0 && f.memory_limit_mb <= 0) f.memory_limit_mb = r.memory_limit_mb;
  if (r.check.enabled && !f.check_execution) {
    f.check_execution = true;
    f.entry = r.check.entry.empty() ? "main" : r.check.entry;
    f.check_inputs = r.check.inputs;
    f.check_params = r.check.params;
    f.check_tolerance = r.check.tolerance;
    f.check_seed = r.check.seed;
  }
  if (f.output.empty()) f.output = "/dev/null";
  std::cerr << "plir-opt: replaying " << f.reproduce
            << " (failure recorded: " << Printable(r.failure) << ")\n";
  return Status::Ok();
}

int ParseAndRun(int argc, char** argv) {
  EnterBuildWorkingDirectory("plir-opt");
  CLI::App app{"plir-opt: run PLIR pass pipelines on modules"};
  Flags f;
  for (int i = 0; i < argc; ++i) f.argv.push_back(argv[i]);
  // --check-execution takes its optional inputs file only attached
  // (--check-execution=FILE): a bare one never swallows the next argument.
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& a : args)
    if (a.rfind("--check-execution=", 0) == 0) {
      f.check_inputs = a.substr(std::strlen("--check-execution="));
      if (f.check_inputs.empty()) {
        std::cerr << "plir-opt: --check-execution=: give a file after '=', or no '='\n";
        return 2;
      }
      a = "--check-execution";
    }
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  AddToolOptions(app, {&f.input, &f.output, &f.pipeline, &f.passes, &f.plugins, &f.plugin_dirs},
                 {.input = "input module (.plir), or - for standard input",
                  .output = "write the result to this file (atomically)",
                  .pipeline = "YAML pipeline to run",
                  .passes = "comma-separated passes to run",
                  .plugin = "load the plugin at this path (repeatable)",
                  .plugin_dir = "search this directory for plugins (repeatable)"});
  app.add_option("--opt-level", f.opt_level, "optimization level 0-3")->check(CLI::Range(0, 3));
  app.add_flag("--time-passes", f.time_passes, "print a pass timing report to stderr");
  app.add_flag("--print-before-all", f.print_before_all, "print the IR before every pass");
  app.add_flag("--print-after-all", f.print_after_all, "print the IR after every pass");
  app.add_option("--print-after", f.print_after, "print the IR after this pass (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--print-changed", f.print_changed,
               "print a diff of the IR for each pass that changed it");
  app.add_flag("--verify-each", f.verify_each, "run the verifier after every pass");
  app.add_flag("--check-input-unchanged", f.check_input_unchanged,
               "prove that no pass modified its input module");
  app.add_flag("--list-passes", f.list_passes,
               "list registered passes (with --verbose: options, paths)");
  app.add_flag("--list-ops", f.list_ops, "list registered ops with arity and attributes");
  app.add_flag("-v,--verbose", f.verbose, "more detail in --list-passes and --list-ops");
  app.add_flag("--emit-pipeline", f.emit_pipeline, "print the loaded pipeline as canonical YAML");
  app.add_option("--extend", f.extends, "apply an extension fragment to the pipeline (repeatable)")
      ->allow_extra_args(false);
  app.add_option(
         "--threads", f.threads,
         "threads for parsing, printing and parallel function passes (default: the hardware's)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--emit", f.emit,
                 "output format (default: by -o's extension .plirb/.json, else text)")
      ->check(CLI::IsMember({"text", "json", "binary"}));
  app.add_flag("--no-isolate", f.no_isolate,
               "run plugins in this process (for debuggers): no crash report, no --pass-timeout");
  app.add_option("--pass-timeout", f.pass_timeout_s,
                 "end the run if one pass (or plugin load) takes longer (seconds)")
      ->check(Seconds(0.001, 1e6));
  AddSupervisorOptions(
      app, {&f.timeout_s, &f.load_timeout_s, &f.memory_limit_mb, &f.sandbox, &f.sandbox_read},
      "end the run if it takes longer, all passes and repeats together (seconds; "
      "kept by the supervisor, beyond a plugin's reach)");
  app.add_option("--max-pass-runs", f.max_pass_runs,
                 "end the run when the pipeline has run this many passes, repeats and nested "
                 "repeats included (default 1000000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--reproduce", f.reproduce, "replay a crash reproducer directory")
      ->check(CLI::ExistingDirectory);
  app.add_option("--reproducer-dir", f.reproducer_dir,
                 "where crash reproducers go (default: $TMPDIR or /tmp)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--no-reproducer", f.no_reproducer, "do not write a reproducer when a pass fails");
  app.add_option("--reproducer-max-input-bytes", f.reproducer_max_input_bytes,
                 "a reproducer copies an input up to this size; a larger file is named by path "
                 "and sha256 (default 64 MiB)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 50));
  app.add_flag("--allow-insecure-plugins", f.allow_insecure_plugins,
               "load plugins even from files or directories that another user owns or that "
               "group or others may write");
  app.add_flag("--allow-changed-plugins", f.allow_changed_plugins,
               "--reproduce: load the bundle's plugins even if their sha256 changed");
  app.add_flag("--hermetic-plugins", f.hermetic_plugins,
               "load plugins only from --plugin and --plugin-path (and the pipeline's "
               "plugin_path): not $PLIR_PLUGIN_PATH, not next to the executable");
  app.add_option("--max-input-bytes", f.max_input_bytes,
                 "refuse inputs larger than this (default 16 GiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  auto* check = app.add_flag("--check-execution", f.check_execution,
                             "run the entry function before the pipeline and after every "
                             "pass, and stop at the first pass that changes its outputs; "
                             "=INPUTS.safetensors gives the inputs (default: random, seeded)");
  auto* params = app.add_option("--params", f.check_params,
                                "--check-execution: a weights file (safetensors) for the entry's "
                                "parameters after the inputs");
  auto* tolerance = app.add_option("--check-tolerance", f.check_tolerance,
                                   "--check-execution: RTOL[,ATOL] (default 1e-5,1e-8)");
  auto* entry = app.add_option("--entry", f.entry, "--check-execution: the function run (main)");
  auto* seed = app.add_option("--check-seed", f.check_seed,
                              "--check-execution: the seed of the random inputs (default 0)");
  app.add_option("--dump-ir-dir", f.dump_ir_dir,
                 "write the module before the pipeline and after each pass application to "
                 "numbered files in this directory (created)");
  app.add_option("--bisect-limit", f.bisect_limit,
                 "run only the first N pass applications (BISECT lines on stderr)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  f.check_execution = check->count() > 0;
  for (auto* o : {params, tolerance, entry, seed})
    if (o->count() > 0 && !f.check_execution) {
      std::cerr << "plir-opt: " << o->get_name() << " needs --check-execution\n";
      return 2;
    }
  if (!f.check_tolerance.empty())
    if (auto t = ParseTolerance(f.check_tolerance); !t.ok()) {
      std::cerr << "plir-opt: " << t.status().message() << "\n";
      return 2;
    }
  if (!f.reproduce.empty()) {
    if (!f.input.empty() || !f.pipeline.empty() || !f.passes.empty()) {
      std::cerr << "plir-opt: --reproduce takes its input and pipeline from the bundle\n";
      return 2;
    }
    if (Status s = LoadReproduceFlags(f); !s.ok()) return Error("plir-opt: " + s.message());
  }
  if (f.input.empty() && !f.list_passes && !f.list_ops && !f.emit_pipeline) {
    std::cerr << "plir-opt: an input file is required\n" << app.help();
    return 2;
  }
  return Main(std::move(f));
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  plir::GuardStandardFds();
  // Nothing escapes main(): whatever is thrown ends in a message and exit 1.
  try {
    return plir::FinishStdout("plir-opt", plir::ParseAndRun(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "plir-opt: internal error: " << plir::Printable(e.what()) << "\n";
  } catch (...) {
    std::cerr << "plir-opt: internal error\n";
  }
  return 1;
}
