#include "driver/pipeline.h"

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <set>

#include "driver/file_util.h"
#include "driver/pass_resolver.h"
#include "driver/supervisor.h"
#include "driver/yaml_text.h"
#include "ir/op.h"
#include "passes/instruments.h"

namespace plir {
namespace {

namespace fs = std::filesystem;

// Thrown only inside this file; LoadPipeline turns it into a Status.
struct YamlFailure {
  std::string message;
};

constexpr int kMaxIncludeDepth = 32;

// YAML is UTF-8 text; yaml-cpp passes other bytes through, and would not
// read its own output of them back the same.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n;
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;  // control characters
      n = 0;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
    } else {
      return false;
    }
    if (n > s.size() - i - 1) return false;
    for (size_t k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += n + 1;
  }
  return true;
}
constexpr size_t kMaxSteps = 10000;

class Loader {
 public:
  Loader(PluginLoader& plugins, const PassRegistry& registry, const PipelineLoadOptions& options)
      : plugins_(plugins), registry_(registry), options_(options) {}

  Pipeline Load(const std::string& file) { return LoadRoot(file, LoadYaml(file)); }

  Pipeline LoadText(const std::string& name, const std::string& text) {
    YAML::Node root;
    try {
      root = YAML::Load(text);
      CheckTree(name, root);
    } catch (const YAML::ParserException& e) {
      throw YamlFailure{name + ":" + std::to_string(e.mark.line + 1) + ":" +
                        std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg};
    }
    return LoadRoot(name, root);
  }

  // Loads an extension fragment; returns the point and the steps.
  std::pair<std::string, std::vector<PipelineStep>> LoadExtension(const std::string& file,
                                                                  YAML::Node* point_node) {
    YAML::Node root = LoadYaml(file);
    files_.push_back(file);
    if (!root.IsMap()) Fail(file, root, "an extension fragment must be a map with 'extend'");
    CheckKeys(file, root, {"version", "name", "plugins", "plugin_path", "extend"},
              "extension fragment");
    CheckVersion(file, root);
    if (root["plugin_path"])
      for (const auto& [node, dir] : StringList(file, root["plugin_path"], "plugin_path"))
        plugins_.AddSearchDir(Resolve(file, dir));
    Pipeline dummy;
    LoadPlugins(file, root, &dummy);
    const YAML::Node& ext = root["extend"];
    if (!ext || !ext.IsMap())
      Fail(file, root, "an extension fragment needs 'extend: {point: NAME, passes: [...]}'");
    CheckKeys(file, ext, {"point", "passes"}, "extend");
    if (!ext["point"] || !ext["passes"]) Fail(file, ext, "'extend' needs 'point' and 'passes'");
    *point_node = ext["point"];
    std::string point = Scalar(file, ext["point"], "point");
    return {point, Steps(file, ext["passes"], 0)};
  }

  [[noreturn]] void FailAt(const std::string& file, const YAML::Node& node,
                           const std::string& msg) {
    Fail(file, node, msg);
  }

  // The keys of a pipeline file; an included file may have them all too.
  static inline const std::vector<std::string> kPipelineKeys = {
      "version",  "name",   "plugins", "plugin_path", "opt_level", "required",
      "disabled", "config", "passes",  "instruments", "limits",    "extend"};

  Pipeline LoadRoot(const std::string& file, const YAML::Node& root) {
    Pipeline p;
    p.file = file;
    files_.push_back(file);
    if (!root.IsMap())
      Fail(file, root, "a pipeline file must be a map of keys (version, passes, ...)");
    CheckKeys(file, root, kPipelineKeys, "pipeline");
    CheckVersion(file, root);
    if (root["extend"]) p = Base(file, root["extend"]);
    p.file = file;
    if (root["name"]) p.name = Scalar(file, root["name"], "the pipeline name");
    if (root["plugin_path"]) {
      for (const auto& [node, dir] : StringList(file, root["plugin_path"], "plugin_path")) {
        std::string abs = Resolve(file, dir);
        p.plugin_path.push_back(abs);
        plugins_.AddSearchDir(abs);
      }
    }
    for (const std::string& d : options_.fallback_plugin_dirs) {
      bool bundled =
          std::find(options_.bundled_plugin_dirs.begin(), options_.bundled_plugin_dirs.end(), d) !=
          options_.bundled_plugin_dirs.end();
      if (bundled)
        plugins_.AddBundledDir(d);
      else
        plugins_.AddSearchDir(d);
    }
    LoadPlugins(file, root, &p);
    if (root["opt_level"]) {
      int64_t level = Int(file, root["opt_level"], "opt_level");
      if (level < 0 || level > 3) Fail(file, root["opt_level"], "opt_level must be 0, 1, 2 or 3");
      p.opt_level = static_cast<int>(level);
    }
    if (root["passes"])  // after a base pipeline's steps (extend:)
      for (auto& step : Steps(file, root["passes"], 0)) p.steps.push_back(std::move(step));
    if (root["required"])
      for (const auto& [node, name] : StringList(file, root["required"], "required"))
        p.required.push_back(KnownPass(file, node, name));
    if (root["disabled"])
      for (const auto& [node, name] : StringList(file, root["disabled"], "disabled"))
        p.disabled.push_back(KnownPass(file, node, name));
    if (root["config"]) {
      if (!root["config"].IsMap()) Fail(file, root["config"], "config must be a map");
      for (auto it = root["config"].begin(); it != root["config"].end(); ++it)
        p.config[it->first.as<std::string>()] = Value(file, it->second);
    }
    if (root["instruments"]) p.instruments = Instruments(file, root["instruments"]);
    if (root["limits"]) {
      const YAML::Node& l = root["limits"];
      if (!l.IsMap())
        Fail(file, l, "limits must be a map: {pass_timeout: SECONDS, memory_limit: MB}");
      CheckKeys(file, l, {"pass_timeout", "memory_limit"}, "limits");
      if (l["pass_timeout"]) {
        std::string v = Scalar(file, l["pass_timeout"], "pass_timeout");
        double d = 0;
        auto r = std::from_chars(v.data(), v.data() + v.size(), d);
        if (r.ec != std::errc() || r.ptr != v.data() + v.size() || !(d > 0) || d > 1e6)
          Fail(file, l["pass_timeout"],
               "pass_timeout must be a number of seconds, above 0 and at most 1000000");
        p.pass_timeout_s = d;
      }
      if (l["memory_limit"]) {
        int64_t mb = Int(file, l["memory_limit"], "memory_limit");
        if (mb < 16 || mb > (int64_t{1} << 40))
          Fail(file, l["memory_limit"], "memory_limit must be at least 16 (megabytes)");
        p.memory_limit_mb = mb;
      }
    }
    Status props = CheckProperties(p.steps, registry_);
    if (!props.ok()) throw YamlFailure{props.message()};
    return p;
  }

 private:
  [[noreturn]] void Fail(const std::string& file, const YAML::Node& node, const std::string& msg) {
    YAML::Mark m = node.Mark();
    // A null node (an empty file) has no position: report line 1.
    throw YamlFailure{file + ":" + std::to_string(std::max(m.line, 0) + 1) + ":" +
                      std::to_string(std::max(m.column, 0) + 1) + ": " + msg};
  }

  // Checks a whole document before it is interpreted: at most kMaxNodes
  // nodes counting every alias use (an alias bomb fails here, fast), nesting
  // at most kMaxNesting deep, no duplicate keys, no tags but '!' (quoting).
  void CheckTree(const std::string& file, const YAML::Node& root) {
    constexpr size_t kMaxNodes = 100000;
    constexpr size_t kMaxNesting = 64;
    size_t visited = 0;
    std::vector<std::pair<YAML::Node, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto [n, depth] = stack.back();
      stack.pop_back();
      if (++visited > kMaxNodes)
        Fail(file, n,
             "the document has more than " + std::to_string(kMaxNodes) +
                 " nodes once aliases are expanded");
      if (depth > kMaxNesting)
        Fail(file, n, "nested more than " + std::to_string(kMaxNesting) + " levels deep");
      if (n.IsScalar() && !ValidUtf8(n.Scalar())) Fail(file, n, "the text is not valid UTF-8");
      const std::string& tag = n.Tag();
      if (!tag.empty() && tag != "?" && tag != "!")
        Fail(file, n, "unsupported YAML tag '" + Printable(tag) + "'");
      if (n.IsSequence()) {
        for (const YAML::Node& item : n) stack.emplace_back(item, depth + 1);
      } else if (n.IsMap()) {
        std::set<std::string> keys;
        for (auto it = n.begin(); it != n.end(); ++it) {
          if (it->first.IsScalar() && !keys.insert(it->first.Scalar()).second)
            Fail(file, it->first, "duplicate key '" + Printable(it->first.Scalar()) + "'");
          stack.emplace_back(it->first, depth + 1);
          stack.emplace_back(it->second, depth + 1);
        }
      }
    }
  }

  // Reads a YAML file. `included_at` (with `site`) is the include that names
  // it, where a missing file is reported.
  YAML::Node LoadYaml(const std::string& file, const std::string* included_at = nullptr,
                      const YAML::Node* site = nullptr) {
    // Read through the capped reader: a directory, a device or an endless
    // file is refused with a message, not read forever.
    StatusOr<std::string> text = ReadFileToString(file);
    if (!text.ok()) {
      if (included_at)
        Fail(*included_at, *site, "cannot open included file " + text.status().message());
      throw YamlFailure{"cannot open pipeline file " + text.status().message()};
    }
    try {
      YAML::Node root = YAML::Load(*text);
      CheckTree(file, root);
      return root;
    } catch (const YAML::ParserException& e) {
      throw YamlFailure{file + ":" + std::to_string(e.mark.line + 1) + ":" +
                        std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg};
    }
  }

  std::string Resolve(const std::string& file, const std::string& rel) {
    fs::path p(rel);
    if (p.is_relative()) p = fs::path(file).parent_path() / p;
    return p.lexically_normal().string();
  }

  void CheckKeys(const std::string& file, const YAML::Node& map,
                 const std::vector<std::string>& keys, const std::string& what) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) Fail(file, it->first, "keys must be strings");
      std::string key = it->first.as<std::string>();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      std::string msg = "unknown key '" + key + "' in " + what;
      auto close = ClosestNames(key, keys, 1);
      if (!close.empty())
        msg += "; did you mean '" + close[0] + "'?";
      else {
        msg += " (allowed:";
        for (const auto& k : keys) msg += " " + k;
        msg += ")";
      }
      Fail(file, it->first, msg);
    }
  }

  void CheckVersion(const std::string& file, const YAML::Node& root) {
    if (!root["version"]) return;
    if (Int(file, root["version"], "version") != 1)
      Fail(file, root["version"], "unsupported pipeline version; this PLIR reads version 1");
  }

  std::string Scalar(const std::string& file, const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) Fail(file, n, "expected a string for " + what);
    return n.as<std::string>();
  }

  int64_t Int(const std::string& file, const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) Fail(file, n, "expected an integer for " + what);
    std::string s = n.as<std::string>();
    int64_t v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc::result_out_of_range)
      Fail(file, n, "integer out of range for " + what + ": '" + Printable(s) + "'");
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || n.Tag() == "!")
      Fail(file, n, "expected an integer for " + what + ", got '" + Printable(s) + "'");
    return v;
  }

  bool Bool(const std::string& file, const YAML::Node& n, const std::string& what) {
    if (n.IsScalar() && n.Tag() != "!") {
      std::string s = n.as<std::string>();
      if (s == "true") return true;
      if (s == "false") return false;
    }
    Fail(file, n, "expected true or false for " + what);
  }

  std::vector<std::pair<YAML::Node, std::string>> StringList(const std::string& file,
                                                             const YAML::Node& n,
                                                             const std::string& what) {
    std::vector<std::pair<YAML::Node, std::string>> out;
    if (n.IsScalar()) {
      out.emplace_back(n, n.as<std::string>());
      return out;
    }
    if (!n.IsSequence()) Fail(file, n, "expected a list of strings for " + what);
    for (const YAML::Node& item : n) out.emplace_back(item, Scalar(file, item, what));
    return out;
  }

  // Generic conversion of a YAML value (config values, untyped).
  AttrValue Value(const std::string& file, const YAML::Node& n) {
    if (n.IsSequence()) {
      std::vector<AttrValue> items;
      for (const YAML::Node& item : n) {
        if (!item.IsScalar()) Fail(file, item, "lists may hold only scalars");
        items.push_back(Value(file, item));
      }
      return AttrValue::List(std::move(items));
    }
    if (!n.IsScalar()) Fail(file, n, "expected a scalar or a list of scalars");
    std::string s = n.as<std::string>();
    if (n.Tag() == "!") return AttrValue::String(s);  // quoted
    if (s == "true" || s == "false") return AttrValue::Bool(s == "true");
    int64_t i;
    auto ri = std::from_chars(s.data(), s.data() + s.size(), i);
    if (ri.ec == std::errc() && ri.ptr == s.data() + s.size()) return AttrValue::Int(i);
    double d;
    auto rd = std::from_chars(s.data(), s.data() + s.size(), d);
    if (rd.ec == std::errc() && rd.ptr == s.data() + s.size()) return AttrValue::Float(d);
    return AttrValue::String(s);
  }

  // Typed conversion of an option value; errors point at the value.
  AttrValue OptionValue(const std::string& file, const YAML::Node& n, const PassInfo& pass,
                        const OptionSpec& spec) {
    AttrValue v = Value(file, n);
    // A single scalar where a list is expected is a one-element list.
    bool list_type = spec.type == OptionType::kIntList || spec.type == OptionType::kFloatList ||
                     spec.type == OptionType::kBoolList || spec.type == OptionType::kStringList;
    if (list_type && v.kind() != AttrValue::Kind::kList) v = AttrValue::List({v});
    // Strings are what YAML gives for bare words: accept them for string options.
    auto r = pass.ResolveOptions({{spec.name, v}});
    if (!r.ok()) Fail(file, n, r.status().message());
    return v;
  }

  void LoadPlugins(const std::string& file, const YAML::Node& root, Pipeline* p) {
    if (!root["plugins"]) return;
    // Entries are names (or paths), or {name: NAME, sha256: HEX}: the
    // plugin file must then have that SHA-256, checked before it is opened.
    YAML::Node list = root["plugins"];
    std::vector<std::pair<YAML::Node, std::string>> entries;
    if (list.IsSequence()) {
      for (const YAML::Node& item : list) {
        if (item.IsMap()) {
          CheckKeys(file, item, {"name", "sha256"}, "plugin entry");
          if (!item["name"]) Fail(file, item, "a plugin entry needs 'name'");
          std::string name = Scalar(file, item["name"], "the plugin name");
          if (item["sha256"]) {
            std::string sha = Scalar(file, item["sha256"], "sha256");
            bool hex =
                sha.size() == 64 && sha.find_first_not_of("0123456789abcdef") == std::string::npos;
            if (!hex) Fail(file, item["sha256"], "sha256 must be 64 lowercase hex digits");
            plugins_.Pin(name, sha);
          }
          entries.emplace_back(item["name"], name);
        } else {
          entries.emplace_back(item, Scalar(file, item, "plugins"));
        }
      }
    } else {
      entries = StringList(file, list, "plugins");
    }
    for (const auto& [node, name] : entries) {
      StatusOr<LoadedPlugin> r = (name.find('/') != std::string::npos ||
                                  (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0))
                                     ? plugins_.LoadPath(Resolve(file, name))
                                     : plugins_.LoadByName(name);
      if (!r.ok()) Fail(file, node, r.status().message());
      if (std::find(p->plugins.begin(), p->plugins.end(), r->name) == p->plugins.end())
        p->plugins.push_back(r->name);
    }
  }

  std::string KnownPass(const std::string& file, const YAML::Node& node, const std::string& name) {
    auto r = ResolvePassName(name, plugins_, registry_);
    if (!r.ok()) Fail(file, node, r.status().message());
    return *r;
  }

  std::vector<PipelineStep> Steps(const std::string& file, const YAML::Node& list, int depth) {
    if (depth > kMaxIncludeDepth) Fail(file, list, "passes nested too deeply");
    if (!list.IsSequence()) Fail(file, list, "'passes' must be a list");
    std::vector<PipelineStep> steps;
    for (const YAML::Node& item : list) {
      if (++total_steps_ > kMaxSteps)
        Fail(file, item,
             "the pipeline has more than " + std::to_string(kMaxSteps) +
                 " steps (includes expanded)");
      YAML::Mark m = item.Mark();
      SourceLoc loc{file, m.line + 1, m.column + 1};
      if (item.IsScalar()) {
        PipelineStep s;
        s.pass = KnownPass(file, item, item.as<std::string>());
        s.options = *registry_.Lookup(s.pass)->info.ResolveOptions({});
        s.loc = loc;
        steps.push_back(std::move(s));
        continue;
      }
      if (!item.IsMap()) Fail(file, item, "a pass must be a name or a map");
      if (item["include"]) {
        CheckKeys(file, item, {"include"}, "include");
        for (auto& s : Include(file, item["include"], depth)) steps.push_back(std::move(s));
        continue;
      }
      if (item["repeat"]) {
        CheckKeys(file, item, {"repeat", "passes"}, "repeat group");
        PipelineStep s;
        s.kind = PipelineStep::Kind::kRepeat;
        s.loc = loc;
        const YAML::Node& r = item["repeat"];
        if (!r.IsMap()) Fail(file, r, "repeat must be a map: {max_iterations: N, until: fixpoint}");
        CheckKeys(file, r, {"max_iterations", "until"}, "repeat");
        s.max_iterations = r["max_iterations"]
                               ? static_cast<int>(Int(file, r["max_iterations"], "max_iterations"))
                               : 10;
        if (s.max_iterations < 1 || s.max_iterations > 1000)
          Fail(file, r["max_iterations"], "max_iterations must be between 1 and 1000");
        if (r["until"]) {
          if (Scalar(file, r["until"], "until") != "fixpoint")
            Fail(file, r["until"], "until must be 'fixpoint'");
          s.until_fixpoint = true;
        }
        if (!item["passes"]) Fail(file, item, "a repeat group needs 'passes'");
        s.steps = Steps(file, item["passes"], depth + 1);
        steps.push_back(std::move(s));
        continue;
      }
      if (item["extension_point"]) {
        CheckKeys(file, item, {"extension_point"}, "extension point");
        PipelineStep s;
        s.kind = PipelineStep::Kind::kExtensionPoint;
        s.point = Scalar(file, item["extension_point"], "extension_point");
        s.loc = loc;
        steps.push_back(std::move(s));
        continue;
      }
      CheckKeys(file, item, {"name", "options", "min_opt_level", "functions"}, "pass");
      if (!item["name"])
        Fail(file, item, "a pass map needs 'name' (or 'repeat', 'include', 'extension_point')");
      PipelineStep s;
      s.loc = loc;
      s.pass = KnownPass(file, item["name"], Scalar(file, item["name"], "the pass name"));
      const PassInfo& info = registry_.Lookup(s.pass)->info;
      if (item["options"]) {
        const YAML::Node& opts = item["options"];
        if (!opts.IsMap()) Fail(file, opts, "options must be a map");
        for (auto it = opts.begin(); it != opts.end(); ++it) {
          std::string key = it->first.as<std::string>();
          const OptionSpec* spec = info.FindOption(key);
          if (!spec) {
            auto r = info.ResolveOptions({{key, AttrValue::Int(0)}});
            Fail(file, it->first, r.status().message());
          }
          if (s.given_options.count(key)) Fail(file, it->first, "option '" + key + "' given twice");
          s.given_options[key] = OptionValue(file, it->second, info, *spec);
        }
      }
      auto resolved = info.ResolveOptions(s.given_options);
      if (!resolved.ok()) Fail(file, item, resolved.status().message());
      s.options = *resolved;
      if (item["min_opt_level"]) {
        int64_t l = Int(file, item["min_opt_level"], "min_opt_level");
        if (l < 0 || l > 3) Fail(file, item["min_opt_level"], "min_opt_level must be 0, 1, 2 or 3");
        s.min_opt_level = static_cast<int>(l);
      }
      if (item["functions"]) {
        // As TVM's ApplyPassToFunction: a regular expression over function
        // names (RE2 syntax, matching the whole name).
        std::string re = Scalar(file, item["functions"], "functions");
        if (re.empty())
          Fail(file, item["functions"], "functions must be a non-empty regular expression");
        RE2 check(re, RE2::Quiet);
        if (!check.ok())
          Fail(file, item["functions"],
               "functions: invalid regular expression '" + re + "': " + check.error());
        s.functions = re;
      }
      steps.push_back(std::move(s));
    }
    return steps;
  }

  // `extend: BASE.yaml`: this pipeline is BASE (its passes, plugins and
  // settings) with this file's passes appended and its settings on top.
  Pipeline Base(const std::string& file, const YAML::Node& node) {
    std::string path = Resolve(file, Scalar(file, node, "extend"));
    std::string canonical = fs::weakly_canonical(path).string();
    if (stack_.empty()) stack_.push_back(fs::weakly_canonical(files_.front()).string());
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i] == canonical) {
        std::string chain;
        for (size_t j = i; j < stack_.size(); ++j) chain += stack_[j] + " -> ";
        Fail(file, node, "extend cycle: " + chain + canonical);
      }
    }
    YAML::Node root = LoadYaml(path, &file, &node);
    stack_.push_back(canonical);
    Pipeline base = LoadRoot(path, root);
    stack_.pop_back();
    return base;
  }

  std::vector<PipelineStep> Include(const std::string& file, const YAML::Node& node, int depth) {
    std::string path = Resolve(file, Scalar(file, node, "include"));
    std::string canonical = fs::weakly_canonical(path).string();
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i] == canonical) {
        std::string chain;
        for (size_t j = i; j < stack_.size(); ++j) chain += stack_[j] + " -> ";
        Fail(file, node, "include cycle: " + chain + canonical);
      }
    }
    if (stack_.empty()) stack_.push_back(fs::weakly_canonical(files_.front()).string());
    YAML::Node root = LoadYaml(path, &file, &node);
    if (!root.IsMap()) Fail(path, root, "an included file must be a map with 'passes'");
    // A full pipeline (configs/O2.yaml) may be included: it contributes its
    // passes, plugins and plugin_path; its settings (opt_level, instruments,
    // limits, ...) stay the including pipeline's (`extend:` inherits them).
    CheckKeys(path, root, kPipelineKeys, "included file");
    CheckVersion(path, root);
    if (root["extend"])
      Fail(path, root["extend"],
           "an included file cannot extend another pipeline (include that one too)");
    if (root["plugin_path"])
      for (const auto& [dir_node, dir] : StringList(path, root["plugin_path"], "plugin_path"))
        plugins_.AddSearchDir(Resolve(path, dir));
    stack_.push_back(canonical);
    Pipeline dummy;
    LoadPlugins(path, root, &dummy);
    std::vector<PipelineStep> steps;
    if (root["passes"]) steps = Steps(path, root["passes"], depth + 1);
    stack_.pop_back();
    return steps;
  }

  InstrumentOptions Instruments(const std::string& file, const YAML::Node& n) {
    if (!n.IsMap()) Fail(file, n, "instruments must be a map");
    CheckKeys(file, n,
              {"timing", "verify", "print_before", "print_after", "print_changed",
               "check_input_unchanged"},
              "instruments");
    InstrumentOptions o;
    if (n["timing"]) o.timing = Bool(file, n["timing"], "timing");
    if (n["verify"]) {
      std::string v = Scalar(file, n["verify"], "verify");
      if (v == "true") v = "each";
      if (v == "false") v = "none";
      if (v != "each" && v != "end" && v != "none")
        Fail(file, n["verify"], "verify must be 'each', 'end' or 'none'");
      o.verify = v;
    }
    for (auto [key, target] :
         {std::pair{"print_before", &o.print_before}, {"print_after", &o.print_after}}) {
      if (!n[key]) continue;
      for (const auto& [node, name] : StringList(file, n[key], key))
        target->push_back(name == "all" ? name : KnownPass(file, node, name));
    }
    if (n["print_changed"]) o.print_changed = Bool(file, n["print_changed"], "print_changed");
    if (n["check_input_unchanged"])
      o.check_input_unchanged = Bool(file, n["check_input_unchanged"], "check_input_unchanged");
    return o;
  }

  size_t total_steps_ = 0;
  PluginLoader& plugins_;
  const PassRegistry& registry_;
  const PipelineLoadOptions& options_;
  std::vector<std::string> files_;
  std::vector<std::string> stack_;  // include chain
};

void EmitOptions(YAML::Emitter& out, const std::map<std::string, AttrValue>& options) {
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : options) {
    out << YAML::Key << k << YAML::Value;
    auto scalar = [&](const AttrValue& x) {
      switch (x.kind()) {
        case AttrValue::Kind::kInt:
          out << x.as_int();
          break;
        case AttrValue::Kind::kFloat: {
          std::string s;
          AppendFloat(x.as_float(), &s);
          out << s;
          break;
        }
        case AttrValue::Kind::kBool:
          out << (x.as_bool() ? "true" : "false");
          break;
        default:
          out << YAML::DoubleQuoted << x.as_string();
          break;
      }
    };
    if (v.kind() == AttrValue::Kind::kList) {
      out << YAML::Flow << YAML::BeginSeq;
      for (const AttrValue& x : v.as_list()) scalar(x);
      out << YAML::EndSeq;
    } else {
      scalar(v);
    }
  }
  out << YAML::EndMap;
}

void EmitSteps(YAML::Emitter& out, const std::vector<PipelineStep>& steps) {
  out << YAML::BeginSeq;
  for (const PipelineStep& s : steps) {
    switch (s.kind) {
      case PipelineStep::Kind::kPass:
        if (s.given_options.empty() && !s.min_opt_level && !s.functions) {
          out << s.pass;
          break;
        }
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.pass;
        if (!s.given_options.empty()) {
          out << YAML::Key << "options" << YAML::Value;
          EmitOptions(out, s.given_options);
        }
        if (s.min_opt_level) out << YAML::Key << "min_opt_level" << YAML::Value << *s.min_opt_level;
        if (s.functions)
          out << YAML::Key << "functions" << YAML::Value << YAML::DoubleQuoted << *s.functions;
        out << YAML::EndMap;
        break;
      case PipelineStep::Kind::kRepeat:
        out << YAML::BeginMap << YAML::Key << "repeat" << YAML::Value << YAML::Flow
            << YAML::BeginMap << YAML::Key << "max_iterations" << YAML::Value << s.max_iterations;
        if (s.until_fixpoint) out << YAML::Key << "until" << YAML::Value << "fixpoint";
        out << YAML::EndMap << YAML::Key << "passes" << YAML::Value;
        EmitSteps(out, s.steps);
        out << YAML::EndMap;
        break;
      case PipelineStep::Kind::kExtensionPoint:
        out << YAML::BeginMap << YAML::Key << "extension_point" << YAML::Value;
        EmitYamlText(out, s.point);
        out << YAML::EndMap;
        break;
    }
  }
  out << YAML::EndSeq;
}

void EmitList(YAML::Emitter& out, const char* key, const std::vector<std::string>& v) {
  if (v.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& s : v) EmitYamlText(out, s);
  out << YAML::EndSeq;
}

}  // namespace

namespace {
// The loader's failures (positioned messages, and yaml-cpp's own exceptions)
// become Status values here, at the one place they can surface: nothing
// thrown inside this file escapes it.
template <typename F>
auto AsStatus(const std::string& file, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const YamlFailure& f) {
    return InvalidArgument(f.message);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}
}  // namespace

StatusOr<Pipeline> LoadPipeline(const std::string& file, PluginLoader& loader,
                                const PassRegistry& registry, const PipelineLoadOptions& options) {
  return AsStatus(
      file, [&]() -> StatusOr<Pipeline> { return Loader(loader, registry, options).Load(file); });
}

StatusOr<Pipeline> LoadPipelineText(const std::string& name, const std::string& text,
                                    PluginLoader& loader, const PassRegistry& registry,
                                    const PipelineLoadOptions& options) {
  return AsStatus(name, [&]() -> StatusOr<Pipeline> {
    return Loader(loader, registry, options).LoadText(name, text);
  });
}

namespace {
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
}  // namespace

Status ApplyExtension(Pipeline& p, const std::string& fragment_file, PluginLoader& loader,
                      const PassRegistry& registry) {
  return AsStatus(fragment_file, [&]() -> Status {
    PipelineLoadOptions options;
    Loader l(loader, registry, options);
    YAML::Node point_node;
    auto [point, steps] = l.LoadExtension(fragment_file, &point_node);
    std::vector<std::string> seen;
    if (InsertAtPoint(p.steps, point, steps, &seen) == 0) {
      std::string known;
      for (const std::string& s : seen) known += (known.empty() ? "" : ", ") + s;
      l.FailAt(fragment_file, point_node,
               "pipeline " + (p.name.empty() ? p.file : p.name) + " has no extension point '" +
                   point + "' (it has: " + (known.empty() ? "none" : known) + ")");
    }
    return CheckProperties(p.steps, registry);
  });
}

std::string PipelineToYaml(const Pipeline& p) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "version" << YAML::Value << 1;
  if (!p.name.empty()) {
    out << YAML::Key << "name" << YAML::Value;
    EmitYamlText(out, p.name);
  }
  EmitList(out, "plugins", p.plugins);
  EmitList(out, "plugin_path", p.plugin_path);
  if (p.opt_level) out << YAML::Key << "opt_level" << YAML::Value << *p.opt_level;
  EmitList(out, "required", p.required);
  EmitList(out, "disabled", p.disabled);
  if (!p.config.empty()) {
    out << YAML::Key << "config" << YAML::Value;
    EmitOptions(out, p.config);
  }
  out << YAML::Key << "passes" << YAML::Value;
  EmitSteps(out, p.steps);
  const InstrumentOptions& i = p.instruments;
  InstrumentOptions none;
  if (i.timing || i.verify != "end" || !i.print_before.empty() || !i.print_after.empty() ||
      i.print_changed || i.check_input_unchanged) {
    out << YAML::Key << "instruments" << YAML::Value << YAML::BeginMap;
    if (i.timing) out << YAML::Key << "timing" << YAML::Value << true;
    if (i.verify != "end") out << YAML::Key << "verify" << YAML::Value << i.verify;
    EmitList(out, "print_before", i.print_before);
    EmitList(out, "print_after", i.print_after);
    if (i.print_changed) out << YAML::Key << "print_changed" << YAML::Value << true;
    if (i.check_input_unchanged) out << YAML::Key << "check_input_unchanged" << YAML::Value << true;
    out << YAML::EndMap;
  }
  if (p.pass_timeout_s || p.memory_limit_mb) {
    out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
    if (p.pass_timeout_s) out << YAML::Key << "pass_timeout" << YAML::Value << *p.pass_timeout_s;
    if (p.memory_limit_mb) out << YAML::Key << "memory_limit" << YAML::Value << *p.memory_limit_mb;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void AddInstruments(const InstrumentOptions& o, std::ostream* out, PassContext& ctx) {
  if (o.check_input_unchanged)
    ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
  if (o.verify == "each") ctx.instruments.push_back(std::make_shared<VerifyInstrument>());
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
