// plir-opt: runs pass pipelines on PLIR modules.
//
//   plir-opt INPUT [-o OUT] [--pipeline FILE.yaml | --passes A,B]
//            [--plugin PATH]... [--plugin-path DIR]... [--opt-level N]
//            [--time-passes] [--print-before-all] [--print-after-all]
//            [--print-after P]... [--print-changed] [--verify-each]
//            [--check-input-unchanged] [--list-passes] [--emit-pipeline]
//
// INPUT may be '-' (standard input), in text, JSON or binary form (detected
// by magic); --emit text|json|binary picks the output form. Plugins are searched along
// --plugin-path, then $PLIR_PLUGIN_PATH, then the pipeline's plugin_path,
// then the in-tree plugins next to this executable. Output is written
// atomically; on any error nothing is written. Exit status: 0 success,
// 1 input or pipeline error, 2 usage error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/parallel.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/serialize.h"
#include "ir/verifier.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"
#include "runtime/file_util.h"
#include "runtime/pipeline.h"
#include "runtime/plugin_loader.h"

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
  bool emit_pipeline = false;
  std::string emit;  // text | json | binary; default from -o's extension
  std::vector<std::string> extends;
  int threads = 0;  // 0: the hardware's
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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

void ListPasses(const PluginLoader& loader) {
  PassRegistry& reg = PassRegistry::Global();
  for (const std::string& name : reg.Names()) {
    const PassInfo& info = reg.Lookup(name)->info;
    std::cout << name << "  [" << info.origin << "]"
              << (info.kind == PassKind::kFunction ? " (function pass)" : "") << "\n    "
              << info.description << "\n";
    if (info.min_opt_level > 0) std::cout << "    min_opt_level: " << info.min_opt_level << "\n";
    if (!info.requires_properties.empty()) {
      std::cout << "    requires:";
      for (auto& r : info.requires_properties) std::cout << " " << r;
      std::cout << "\n";
    }
    if (!info.provides_properties.empty()) {
      std::cout << "    provides:";
      for (auto& r : info.provides_properties) std::cout << " " << r;
      std::cout << "\n";
    }
    for (const OptionSpec& o : info.options) {
      std::string dflt;
      o.default_value.AppendTo(&dflt);
      std::cout << "    --" << o.name << " (" << OptionTypeName(o.type) << ", default " << dflt
                << "): " << o.description << "\n";
    }
  }
}

int Run(const Flags& f) {
  PluginLoader loader;
  for (const std::string& d : f.plugin_dirs) loader.AddSearchDir(d);
  if (const char* env = std::getenv("PLIR_PLUGIN_PATH"))
    for (const std::string& d : SplitList(env, ':')) loader.AddSearchDir(d);
  for (const std::string& p : f.plugins) {
    auto r = loader.LoadPath(p);
    if (!r.ok()) return Error("plir-opt: " + r.status().message());
  }
  std::vector<std::string> defaults = DefaultPluginDirs();

  Pipeline pipeline;
  if (!f.pipeline.empty()) {
    PipelineLoadOptions options;
    options.fallback_plugin_dirs = defaults;
    auto p = LoadPipeline(f.pipeline, loader, PassRegistry::Global(), options);
    if (!p.ok()) return Error(p.status().message());
    pipeline = std::move(p).value();
  } else {
    for (const std::string& d : defaults) loader.AddSearchDir(d);
  }
  // Extension fragments: given with --extend, or shipped beside a plugin
  // loaded with --plugin (libplir_NAME.so -> libplir_NAME.extend.yaml).
  if (!f.extends.empty() && f.pipeline.empty()) return Error("plir-opt: --extend needs --pipeline");
  std::vector<std::string> fragments = f.extends;
  if (!f.pipeline.empty()) {
    for (const std::string& p : f.plugins) {
      std::string frag = EndsWith(p, ".so") ? p.substr(0, p.size() - 3) + ".extend.yaml" : "";
      if (!frag.empty() && access(frag.c_str(), R_OK) == 0) fragments.push_back(frag);
    }
  }
  for (const std::string& frag : fragments)
    if (Status s = ApplyExtension(pipeline, frag, loader); !s.ok()) return Error(s.message());
  if (f.list_passes) {
    if (Status s = loader.LoadAll(); !s.ok())
      std::cerr << "warning: some plugins on the search path did not load:\n" << s.message() << "\n";
    ListPasses(loader);
    return 0;
  }
  if (!f.passes.empty()) {
    for (const std::string& name : SplitList(f.passes, ',')) {
      if (!PassRegistry::Global().Lookup(name)) {
        // Load the conventional plugin, then everything on the path.
        std::string snake = PluginNameForPass(name);
        if (loader.Find(snake)) {
          auto r = loader.LoadByName(snake);
          if (!r.ok()) return Error("plir-opt: " + r.status().message());
        }
        if (!PassRegistry::Global().Lookup(name)) {
          Status s = loader.LoadAll();
          if (!s.ok() && !PassRegistry::Global().Lookup(name))
            std::cerr << "warning: some plugins on the search path did not load:\n" << s.message() << "\n";
        }
      }
      auto step = MakePassStep(PassRegistry::Global(), name);
      if (!step.ok()) {
        std::string msg = "plir-opt: --passes: unknown pass '" + name + "'";
        auto close = PassRegistry::Global().Suggest(name);
        if (!close.empty()) msg += "; did you mean '" + close[0] + "'?";
        return Error(msg);
      }
      pipeline.steps.push_back(std::move(step).value());
    }
    if (Status s = CheckProperties(pipeline.steps, PassRegistry::Global()); !s.ok())
      return Error("plir-opt: --passes: " + s.message());
  }
  if (f.emit_pipeline) {
    std::cout << PipelineToYaml(pipeline);
    return 0;
  }
  if (f.input.empty()) return Error("plir-opt: an input file is required (or --list-passes)");

  StatusOr<ModuleFile> text = ModuleFile::Open(f.input);  // mapped when a regular file
  if (!text.ok()) return Error("plir-opt: " + text.status().message());
  std::string input_name = f.input == "-" ? "<stdin>" : f.input;
  // The format comes from the magic bytes or a leading '{' (LoadModule);
  // a .plirb or .json extension must agree with it.
  ModuleFormat format = DetectFormat(*text);
  if ((EndsWith(f.input, ".plirb") && format != ModuleFormat::kBinary) ||
      (EndsWith(f.input, ".json") && format != ModuleFormat::kJson))
    return Error(input_name + ": the file's contents do not match its extension");
  StatusOr<Module> module = LoadModule(*text, input_name);
  if (!module.ok()) return Error(module.status().message());
  KeepUntilExit(*module);
  // The module holds no reference to the input bytes: release them before
  // the passes and the printer allocate (a lower peak RSS on large inputs).
  text->Close();
  if (Status s = Verify(*module); !s.ok()) return Error(input_name + ": " + s.message());

  PassContext ctx;
  ctx.opt_level = f.opt_level >= 0 ? f.opt_level : pipeline.opt_level.value_or(2);
  ctx.required.insert(pipeline.required.begin(), pipeline.required.end());
  ctx.disabled.insert(pipeline.disabled.begin(), pipeline.disabled.end());
  ctx.config = pipeline.config;
  InstrumentOptions inst = pipeline.instruments;
  inst.timing |= f.time_passes;
  if (f.verify_each) inst.verify = "each";
  inst.print_changed |= f.print_changed;
  inst.check_input_unchanged |= f.check_input_unchanged;
  if (f.print_before_all) inst.print_before.push_back("all");
  if (f.print_after_all) inst.print_after.push_back("all");
  for (const std::string& p : f.print_after) inst.print_after.push_back(p);
  AddInstruments(inst, &std::cerr, ctx);

  StatusOr<Module> result = PassManager().Run(pipeline.steps, *module, ctx);
  for (const std::string& w : ctx.TakeWarnings()) std::cerr << "warning: " << w << "\n";
  if (!result.ok()) return Error("plir-opt: " + result.status().message());
  KeepUntilExit(*result);
  if (inst.verify == "end" || inst.verify == "none") {
    if (Status s = Verify(*result); !s.ok())
      return Error("plir-opt: the pipeline produced an ill-formed module: " + s.message());
  }

  std::string emit = f.emit;
  if (emit.empty()) emit = EndsWith(f.output, ".plirb") ? "binary" : EndsWith(f.output, ".json") ? "json" : "text";
  // Text is written in per-item pieces, without a concatenated copy.
  std::vector<std::string> printed;
  if (emit == "binary") printed.push_back(SaveBinary(*result));
  else if (emit == "json") printed.push_back(SaveJson(*result));
  else printed = PrintModuleParts(*result);
  std::vector<std::string_view> parts(printed.begin(), printed.end());
  if (f.output.empty() || f.output == "-") {
    for (std::string_view p : parts) std::fwrite(p.data(), 1, p.size(), stdout);
    if (std::fflush(stdout) != 0) return Error("plir-opt: error writing to standard output");
    return 0;
  }
  if (Status s = WriteFileAtomically(f.output, parts); !s.ok())
    return Error("plir-opt: " + s.message());
  return 0;
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  // Under `bazel run`, resolve relative paths against the user's directory.
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("plir-opt: chdir to BUILD_WORKING_DIRECTORY");
  }
  CLI::App app{"plir-opt: run PLIR pass pipelines on modules"};
  plir::Flags f;
  app.add_option("input", f.input, "input module (.plir), or - for standard input");
  app.add_option("-o,--output", f.output, "write the result to this file (atomically)");
  auto* pipeline = app.add_option("--pipeline", f.pipeline, "YAML pipeline to run");
  app.add_option("--passes", f.passes, "comma-separated passes to run")->excludes(pipeline);
  app.add_option("--plugin", f.plugins, "load the plugin at this path (repeatable)")->allow_extra_args(false);
  app.add_option("--plugin-path", f.plugin_dirs, "search this directory for plugins (repeatable)")->allow_extra_args(false);
  app.add_option("--opt-level", f.opt_level, "optimization level 0-3")->check(CLI::Range(0, 3));
  app.add_flag("--time-passes", f.time_passes, "print a pass timing report to stderr");
  app.add_flag("--print-before-all", f.print_before_all, "print the IR before every pass");
  app.add_flag("--print-after-all", f.print_after_all, "print the IR after every pass");
  app.add_option("--print-after", f.print_after, "print the IR after this pass (repeatable)")->allow_extra_args(false);
  app.add_flag("--print-changed", f.print_changed, "print a diff of the IR for each pass that changed it");
  app.add_flag("--verify-each", f.verify_each, "run the verifier after every pass");
  app.add_flag("--check-input-unchanged", f.check_input_unchanged,
               "prove that no pass modified its input module");
  app.add_flag("--list-passes", f.list_passes, "list registered passes with plugin, description, options");
  app.add_flag("--emit-pipeline", f.emit_pipeline, "print the loaded pipeline as canonical YAML");
  app.add_option("--extend", f.extends, "apply an extension fragment to the pipeline (repeatable)")->allow_extra_args(false);
  app.add_option("--threads", f.threads,
                 "threads for parsing, printing and parallel function passes (default: the hardware's)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--emit", f.emit, "output format (default: by -o's extension .plirb/.json, else text)")
      ->check(CLI::IsMember({"text", "json", "binary"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (f.input.empty() && !f.list_passes && !f.emit_pipeline) {
    std::cerr << "plir-opt: an input file is required\n" << app.help();
    return 2;
  }
  if (f.threads > 0) plir::SetDefaultThreads(f.threads);
  return plir::Run(f);
}
