// The second step of reading a pipeline (the first is driver/pipeline_spec):
// plugins loaded in the order the files name them, pass names resolved
// through the one resolver (driver/pass_resolver), options typed by each
// pass's specs, and the properties checked (passes/properties).
#include "driver/pipeline.h"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "driver/pass_resolver.h"
#include "passes/instruments.h"

namespace plir {
namespace {

class Resolver {
 public:
  Resolver(PluginLoader& plugins, const PassRegistry& registry, const PipelineLoadOptions& options)
      : plugins_(plugins), registry_(registry), options_(options) {}

  // Adds the search directories and loads the plugins, in order; the names
  // of the `listed` ones go to `loaded`.
  Status Plugins(const std::vector<PluginSourceSpec>& sources, std::vector<std::string>* loaded) {
    for (const PluginSourceSpec& s : sources) {
      switch (s.kind) {
        case PluginSourceSpec::Kind::kSearchDir:
          plugins_.AddSearchDir(s.value);
          break;
        case PluginSourceSpec::Kind::kFallbackDirs:
          for (const std::string& d : options_.fallback_plugin_dirs) {
            bool bundled =
                std::find(options_.bundled_plugin_dirs.begin(), options_.bundled_plugin_dirs.end(),
                          d) != options_.bundled_plugin_dirs.end();
            if (bundled)
              plugins_.AddBundledDir(d);
            else
              plugins_.AddSearchDir(d);
          }
          break;
        case PluginSourceSpec::Kind::kPlugin: {
          if (s.sha256) plugins_.Pin(s.value, *s.sha256);
          StatusOr<LoadedPlugin> r =
              s.is_path ? plugins_.LoadPath(s.value) : plugins_.LoadByName(s.value);
          if (!r.ok()) return ErrorAt(s.loc, r.status().message());
          if (s.listed && std::find(loaded->begin(), loaded->end(), r->name) == loaded->end())
            loaded->push_back(r->name);
          break;
        }
      }
    }
    return Status::Ok();
  }

  StatusOr<std::string> KnownPass(const NameSpec& n) {
    auto r = ResolvePassName(n.name, plugins_, registry_);
    if (!r.ok()) return ErrorAt(n.loc, r.status().message());
    return *r;
  }

  StatusOr<std::vector<std::string>> KnownPasses(const std::vector<NameSpec>& names,
                                                 bool allow_all = false) {
    std::vector<std::string> out;
    for (const NameSpec& n : names) {
      if (allow_all && n.name == "all") {
        out.push_back(n.name);
        continue;
      }
      PLIR_ASSIGN_OR_RETURN(std::string name, KnownPass(n));
      out.push_back(std::move(name));
    }
    return out;
  }

  StatusOr<std::vector<PipelineStep>> Steps(const std::vector<StepSpec>& specs) {
    std::vector<PipelineStep> steps;
    for (const StepSpec& spec : specs) {
      PipelineStep s;
      s.kind = spec.kind;
      s.loc = spec.loc;
      switch (spec.kind) {
        case PipelineStep::Kind::kRepeat: {
          s.max_iterations = spec.max_iterations;
          s.until_fixpoint = spec.until_fixpoint;
          PLIR_ASSIGN_OR_RETURN(s.steps, Steps(spec.steps));
          break;
        }
        case PipelineStep::Kind::kExtensionPoint:
          s.point = spec.point;
          break;
        case PipelineStep::Kind::kPass:
          PLIR_RETURN_IF_ERROR(Pass(spec, &s));
          break;
      }
      steps.push_back(std::move(s));
    }
    return steps;
  }

 private:
  Status Pass(const StepSpec& spec, PipelineStep* s) {
    PLIR_ASSIGN_OR_RETURN(s->pass, KnownPass(spec.pass));
    const PassInfo& info = registry_.Lookup(s->pass)->info;
    for (const WrittenOption& o : spec.options) {
      const OptionSpec* option = info.FindOption(o.key);
      if (!option) {
        auto r = info.ResolveOptions({{o.key, AttrValue::Int(0)}});
        return ErrorAt(o.key_loc, r.status().message());
      }
      if (s->given_options.count(o.key))
        return ErrorAt(o.key_loc, "option '" + o.key + "' given twice");
      // A single scalar where a list is expected is a one-element list.
      AttrValue v = o.value;
      bool list_type =
          option->type == OptionType::kIntList || option->type == OptionType::kFloatList ||
          option->type == OptionType::kBoolList || option->type == OptionType::kStringList;
      if (list_type && v.kind() != AttrValue::Kind::kList) v = AttrValue::List({v});
      // Strings are what YAML gives for bare words: accept them for string options.
      auto r = info.ResolveOptions({{option->name, v}});
      if (!r.ok()) return ErrorAt(o.value_loc, r.status().message());
      s->given_options[o.key] = std::move(v);
    }
    auto resolved = info.ResolveOptions(s->given_options);
    if (!resolved.ok()) return ErrorAt(spec.at, resolved.status().message());
    s->options = *resolved;
    s->min_opt_level = spec.min_opt_level;
    s->functions = spec.functions;
    return Status::Ok();
  }

  PluginLoader& plugins_;
  const PassRegistry& registry_;
  const PipelineLoadOptions& options_;
};

// Inserts `steps` after every extension point named `point`; returns the count.
int InsertAtPoint(std::vector<PipelineStep>& list, const std::string& point,
                  const std::vector<PipelineStep>& steps, std::vector<std::string>* seen) {
  int n = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].kind == PipelineStep::Kind::kRepeat) {
      n += InsertAtPoint(list[i].steps, point, steps, seen);
    } else if (list[i].kind == PipelineStep::Kind::kExtensionPoint) {
      seen->push_back(list[i].point);
      if (list[i].point == point) {
        list.insert(list.begin() + i + 1, steps.begin(), steps.end());
        i += steps.size();
        ++n;
      }
    }
  }
  return n;
}
// The default PythonFileRunner: the python_passes plugin's entry point.
Status RunWithPythonPlugin(const std::string& file, PluginLoader& loader) {
  PluginLoadResult r = loader.LoadByName("python_passes");
  if (!r.ok())
    return Status(r.status().code(),
                  "python: needs the python_passes plugin (bazel build "
                  "//plugins/python_passes): " +
                      r.status().message());
  void* handle = dlopen(r->path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  using LoadFn = int (*)(const char*, char*, size_t);
  auto load = handle ? reinterpret_cast<LoadFn>(dlsym(handle, "plir_python_passes_load")) : nullptr;
  if (!load) return InvalidArgument(r->path + ": no plir_python_passes_load entry point");
  char error[4096] = "";
  if (load(file.c_str(), error, sizeof error) != 0) return InvalidArgument(error);
  return Status::Ok();
}

std::mutex python_mu;
PythonFileRunner& Runner() {
  static auto* runner = new PythonFileRunner(RunWithPythonPlugin);
  return *runner;
}
std::set<std::string>& PythonFilesRun() {
  static auto* files = new std::set<std::string>();
  return *files;
}

}  // namespace

void SetPythonFileRunner(PythonFileRunner runner) {
  std::lock_guard<std::mutex> l(python_mu);
  Runner() = runner ? std::move(runner) : PythonFileRunner(RunWithPythonPlugin);
}

StatusOr<Pipeline> ResolvePipeline(const PipelineSpec& spec, PluginLoader& loader,
                                   const PassRegistry& registry,
                                   const PipelineLoadOptions& options) {
  Resolver r(loader, registry, options);
  Pipeline p;
  p.file = spec.file;
  p.name = spec.name;
  p.plugin_path = spec.plugin_path;
  PLIR_RETURN_IF_ERROR(r.Plugins(spec.plugin_sources, &p.plugins));
  for (const NameSpec& f : spec.python) {
    // A Python file is the user's code: a loader that trusts only the
    // bundled plugins (plir-opt's child that writes its own output) runs none.
    if (loader.bundled_only())
      return ErrorAt(f.loc, "python: " + f.name +
                                ": this run trusts only PLIR's bundled plugins; --check-result "
                                "lifts that");
    PythonFileRunner run;
    {
      std::lock_guard<std::mutex> l(python_mu);
      if (!PythonFilesRun().insert(f.name).second)
        run = nullptr;
      else
        run = Runner();
    }
    if (run) {
      Status s = run(f.name, loader);
      if (!s.ok()) {
        std::lock_guard<std::mutex> l(python_mu);
        PythonFilesRun().erase(f.name);
        return ErrorAt(f.loc, s.message());
      }
    }
    p.python.push_back(f.name);
  }
  p.opt_level = spec.opt_level;
  PLIR_ASSIGN_OR_RETURN(p.steps, r.Steps(spec.steps));
  PLIR_ASSIGN_OR_RETURN(p.required, r.KnownPasses(spec.required));
  PLIR_ASSIGN_OR_RETURN(p.disabled, r.KnownPasses(spec.disabled));
  p.config = spec.config;
  const InstrumentSpec& i = spec.instruments;
  p.instruments.timing = i.timing;
  p.instruments.verify = i.verify;
  PLIR_ASSIGN_OR_RETURN(p.instruments.print_before, r.KnownPasses(i.print_before, true));
  PLIR_ASSIGN_OR_RETURN(p.instruments.print_after, r.KnownPasses(i.print_after, true));
  p.instruments.print_changed = i.print_changed;
  p.instruments.check_input_unchanged = i.check_input_unchanged;
  p.pass_timeout_s = spec.pass_timeout_s;
  p.memory_limit_mb = spec.memory_limit_mb;
  PLIR_RETURN_IF_ERROR(CheckProperties(p.steps, registry));
  return p;
}

StatusOr<Pipeline> LoadPipeline(const std::string& file, PluginLoader& loader,
                                const PassRegistry& registry, const PipelineLoadOptions& options) {
  PLIR_ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineFile(file));
  return ResolvePipeline(spec, loader, registry, options);
}

StatusOr<Pipeline> LoadPipelineText(const std::string& name, const std::string& text,
                                    PluginLoader& loader, const PassRegistry& registry,
                                    const PipelineLoadOptions& options) {
  PLIR_ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineText(name, text));
  return ResolvePipeline(spec, loader, registry, options);
}

Status ApplyExtension(Pipeline& p, const std::string& fragment_file, PluginLoader& loader,
                      const PassRegistry& registry) {
  PLIR_ASSIGN_OR_RETURN(ExtensionSpec ext, ParseExtensionFile(fragment_file));
  PipelineLoadOptions options;
  Resolver r(loader, registry, options);
  std::vector<std::string> unlisted;
  PLIR_RETURN_IF_ERROR(r.Plugins(ext.plugin_sources, &unlisted));
  PLIR_ASSIGN_OR_RETURN(std::vector<PipelineStep> steps, r.Steps(ext.steps));
  std::vector<std::string> seen;
  if (InsertAtPoint(p.steps, ext.point, steps, &seen) == 0) {
    std::string known;
    for (const std::string& s : seen) known += (known.empty() ? "" : ", ") + s;
    return ErrorAt(ext.point_loc, "pipeline " + (p.name.empty() ? p.file : p.name) +
                                      " has no extension point '" + ext.point +
                                      "' (it has: " + (known.empty() ? "none" : known) + ")");
  }
  return CheckProperties(p.steps, registry);
}

void AddInstruments(const InstrumentOptions& o, std::ostream* out, PassContext& ctx) {
  if (o.check_input_unchanged)
    ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
  if (o.verify == VerifyMode::kEach)
    ctx.instruments.push_back(std::make_shared<VerifyInstrument>());
  auto has_all = [](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), "all") != v.end();
  };
  if (!o.print_before.empty() || !o.print_after.empty())
    ctx.instruments.push_back(std::make_shared<PrintIRInstrument>(
        out, std::set<std::string>(o.print_before.begin(), o.print_before.end()),
        std::set<std::string>(o.print_after.begin(), o.print_after.end()), has_all(o.print_before),
        has_all(o.print_after)));
  if (o.print_changed) ctx.instruments.push_back(std::make_shared<PrintChangedInstrument>(out));
  if (o.timing) ctx.instruments.push_back(std::make_shared<TimingInstrument>(out));
}

}  // namespace plir
