#include "driver/pipeline_spec.h"

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "driver/file_util.h"
#include "driver/limits.h"
#include "driver/supervisor.h"  // Printable
#include "ir/support/closest_names.h"

namespace plir {

const char* VerifyModeName(VerifyMode m) {
  switch (m) {
    case VerifyMode::kEach:
      return "each";
    case VerifyMode::kNone:
      return "none";
    case VerifyMode::kEnd:
      break;
  }
  return "end";
}

Status ErrorAt(const SourceLoc& loc, const std::string& message) {
  return InvalidArgument(loc.ToString() + ": " + message);
}

namespace {

namespace fs = std::filesystem;

constexpr int kMaxIncludeDepth = 32;
constexpr size_t kMaxSteps = 10000;

// The keys of a pipeline file; an included file may have them all too.
const std::vector<std::string>& PipelineKeys() {
  static const std::vector<std::string> keys = {
      "version", "name",   "plugins",     "plugin_path", "opt_level", "required", "disabled",
      "config",  "passes", "instruments", "limits",      "extend",    "python"};
  return keys;
}

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

// The position of `node` for errors. A null node (an empty file) has none:
// line 1.
SourceLoc At(const std::string& file, const YAML::Node& node) {
  YAML::Mark m = node.Mark();
  return SourceLoc{file, int64_t{std::max(m.line, 0)} + 1, int64_t{std::max(m.column, 0)} + 1};
}

Status Fail(const std::string& file, const YAML::Node& node, const std::string& msg) {
  return ErrorAt(At(file, node), msg);
}

Status SyntaxError(const std::string& file, const YAML::Mark& mark, const std::string& msg) {
  return InvalidArgument(file + ":" + std::to_string(mark.line + 1) + ":" +
                         std::to_string(mark.column + 1) + ": " + msg);
}

std::string Resolve(const std::string& file, const std::string& rel) {
  fs::path p(rel);
  if (p.is_relative()) p = fs::path(file).parent_path() / p;
  return p.lexically_normal().string();
}

// The lower-case first letter of a system message, for "...: too many
// levels of symbolic links".
std::string LowerFirst(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

// fs::weakly_canonical without the exception: a symlink loop (or a path
// too long) is an error at `node` (the include or extend naming `path`).
StatusOr<std::string> Canonical(const std::string& file, const YAML::Node& node,
                                const std::string& path, const char* what) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(path, ec);
  if (ec)
    return Fail(file, node,
                std::string("cannot open ") + what + " file " + Printable(path) + ": " +
                    LowerFirst(ec.message()));
  return c.string();
}

// Checks a whole document before it is interpreted: at most kMaxNodes nodes
// counting every alias use (an alias bomb fails here, fast), nesting at most
// kMaxNesting deep, no duplicate keys, no tags but '!' (quoting).
Status CheckTree(const std::string& file, const YAML::Node& root) {
  constexpr size_t kMaxNodes = 100000;
  constexpr size_t kMaxNesting = 64;
  size_t visited = 0;
  std::vector<std::pair<YAML::Node, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto [n, depth] = stack.back();
    stack.pop_back();
    if (++visited > kMaxNodes)
      return Fail(file, n,
                  "the document has more than " + std::to_string(kMaxNodes) +
                      " nodes once aliases are expanded");
    if (depth > kMaxNesting)
      return Fail(file, n, "nested more than " + std::to_string(kMaxNesting) + " levels deep");
    if (n.IsScalar() && !ValidUtf8(n.Scalar())) return Fail(file, n, "the text is not valid UTF-8");
    const std::string& tag = n.Tag();
    if (!tag.empty() && tag != "?" && tag != "!")
      return Fail(file, n, "unsupported YAML tag '" + Printable(tag) + "'");
    if (n.IsSequence()) {
      for (const YAML::Node& item : n) stack.emplace_back(item, depth + 1);
    } else if (n.IsMap()) {
      std::set<std::string> keys;
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (it->first.IsScalar() && !keys.insert(it->first.Scalar()).second)
          return Fail(file, it->first, "duplicate key '" + Printable(it->first.Scalar()) + "'");
        stack.emplace_back(it->first, depth + 1);
        stack.emplace_back(it->second, depth + 1);
      }
    }
  }
  return Status::Ok();
}

StatusOr<YAML::Node> ParseYaml(const std::string& file, const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return SyntaxError(file, e.mark, "YAML syntax error: " + e.msg);
  }
  PLIR_RETURN_IF_ERROR(CheckTree(file, root));
  return root;
}

// Reads and parses a YAML file. `included_at` (with `site`) is the include
// that names it, where a missing file is reported.
StatusOr<YAML::Node> ReadYaml(const std::string& file, const std::string* included_at = nullptr,
                              const YAML::Node* site = nullptr) {
  // Read through the capped reader: a directory, a device or an endless
  // file is refused with a message, not read forever.
  StatusOr<std::string> text = ReadFileToString(file);
  if (!text.ok()) {
    if (included_at)
      return Fail(*included_at, *site, "cannot open included file " + text.status().message());
    return InvalidArgument("cannot open pipeline file " + text.status().message());
  }
  return ParseYaml(file, *text);
}

Status CheckKeys(const std::string& file, const YAML::Node& map,
                 const std::vector<std::string>& keys, const std::string& what) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) return Fail(file, it->first, "keys must be strings");
    std::string key = it->first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string msg = "unknown key '" + key + "' in " + what;
    auto close = ClosestNames(key, keys, 1);
    if (!close.empty()) {
      msg += "; did you mean '" + close[0] + "'?";
    } else {
      msg += " (allowed:";
      for (const auto& k : keys) msg += " " + k;
      msg += ")";
    }
    return Fail(file, it->first, msg);
  }
  return Status::Ok();
}

StatusOr<std::string> Scalar(const std::string& file, const YAML::Node& n,
                             const std::string& what) {
  if (!n.IsScalar()) return Fail(file, n, "expected a string for " + what);
  return n.as<std::string>();
}

StatusOr<int64_t> Int(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) return Fail(file, n, "expected an integer for " + what);
  std::string s = n.as<std::string>();
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc::result_out_of_range)
    return Fail(file, n, "integer out of range for " + what + ": '" + Printable(s) + "'");
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || n.Tag() == "!")
    return Fail(file, n, "expected an integer for " + what + ", got '" + Printable(s) + "'");
  return v;
}

// An integer in [lo, hi]; `range` says which in the error.
StatusOr<int> IntIn(const std::string& file, const YAML::Node& n, const std::string& what,
                    int64_t lo, int64_t hi, const std::string& range) {
  PLIR_ASSIGN_OR_RETURN(int64_t v, Int(file, n, what));
  if (v < lo || v > hi) return Fail(file, n, range);
  return static_cast<int>(v);
}

StatusOr<bool> Bool(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (n.IsScalar() && n.Tag() != "!") {
    std::string s = n.as<std::string>();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  return Fail(file, n, "expected true or false for " + what);
}

using NodeStrings = std::vector<std::pair<YAML::Node, std::string>>;

StatusOr<NodeStrings> StringList(const std::string& file, const YAML::Node& n,
                                 const std::string& what) {
  NodeStrings out;
  if (n.IsScalar()) {
    out.emplace_back(n, n.as<std::string>());
    return out;
  }
  if (!n.IsSequence()) return Fail(file, n, "expected a list of strings for " + what);
  for (const YAML::Node& item : n) {
    PLIR_ASSIGN_OR_RETURN(std::string s, Scalar(file, item, what));
    out.emplace_back(item, std::move(s));
  }
  return out;
}

StatusOr<std::vector<NameSpec>> NameList(const std::string& file, const YAML::Node& n,
                                         const std::string& what) {
  PLIR_ASSIGN_OR_RETURN(NodeStrings names, StringList(file, n, what));
  std::vector<NameSpec> out;
  for (auto& [node, name] : names) out.push_back({std::move(name), At(file, node)});
  return out;
}

// Generic conversion of a YAML value (config and option values, untyped).
StatusOr<AttrValue> Value(const std::string& file, const YAML::Node& n) {
  if (n.IsSequence()) {
    std::vector<AttrValue> items;
    for (const YAML::Node& item : n) {
      if (!item.IsScalar()) return Fail(file, item, "lists may hold only scalars");
      PLIR_ASSIGN_OR_RETURN(AttrValue v, Value(file, item));
      items.push_back(std::move(v));
    }
    return AttrValue::List(std::move(items));
  }
  if (!n.IsScalar()) return Fail(file, n, "expected a scalar or a list of scalars");
  std::string s = n.as<std::string>();
  if (n.Tag() == "!") return AttrValue::String(s);  // quoted
  if (s == "true" || s == "false") return AttrValue::Bool(s == "true");
  int64_t i;
  auto ri = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ri.ec == std::errc() && ri.ptr == s.data() + s.size()) return AttrValue::Int(i);
  // An integer too large for int64 is an error here, not a real (which a
  // pass would then refuse as "must be int, got 1e+23").
  if (ri.ec == std::errc::result_out_of_range && ri.ptr == s.data() + s.size())
    return Fail(file, n,
                "integer " + Printable(s) + " is out of the int64 range (-2^63 to 2^63-1)");
  double d;
  auto rd = std::from_chars(s.data(), s.data() + s.size(), d);
  if (rd.ec == std::errc() && rd.ptr == s.data() + s.size()) return AttrValue::Float(d);
  if (rd.ec == std::errc::result_out_of_range && rd.ptr == s.data() + s.size())
    return Fail(file, n, "number " + Printable(s) + " is out of the range of a double");
  return AttrValue::String(s);
}

Status CheckVersion(const std::string& file, const YAML::Node& root) {
  if (!root["version"]) return Status::Ok();
  PLIR_ASSIGN_OR_RETURN(int64_t v, Int(file, root["version"], "version"));
  if (v != 1)
    return Fail(file, root["version"], "unsupported pipeline version; this PLIR reads version 1");
  return Status::Ok();
}

// Parses the files of one pipeline (its includes and bases) into a spec.
class SpecParser {
 public:
  StatusOr<PipelineSpec> Root(const std::string& file, const YAML::Node& root) {
    PipelineSpec p;
    files_.push_back(file);
    if (!root.IsMap())
      return Fail(file, root, "a pipeline file must be a map of keys (version, passes, ...)");
    PLIR_RETURN_IF_ERROR(CheckKeys(file, root, PipelineKeys(), "pipeline"));
    PLIR_RETURN_IF_ERROR(CheckVersion(file, root));
    if (root["extend"]) {
      PLIR_ASSIGN_OR_RETURN(p, Base(file, root["extend"]));
    }
    p.file = file;
    if (root["name"]) {
      PLIR_ASSIGN_OR_RETURN(p.name, Scalar(file, root["name"], "the pipeline name"));
    }
    if (root["plugin_path"]) {
      PLIR_ASSIGN_OR_RETURN(NodeStrings dirs, StringList(file, root["plugin_path"], "plugin_path"));
      for (const auto& [node, dir] : dirs) {
        std::string abs = Resolve(file, dir);
        p.plugin_path.push_back(abs);
        p.plugin_sources.push_back(
            {PluginSourceSpec::Kind::kSearchDir, abs, false, std::nullopt, false, At(file, node)});
      }
    }
    p.plugin_sources.push_back(
        {PluginSourceSpec::Kind::kFallbackDirs, "", false, std::nullopt, false, At(file, root)});
    PLIR_RETURN_IF_ERROR(Plugins(file, root, /*listed=*/true, &p.plugin_sources));
    if (root["python"]) {
      PLIR_ASSIGN_OR_RETURN(NodeStrings files, StringList(file, root["python"], "python"));
      for (const auto& [node, f] : files)  // absolute: reproducers name them from elsewhere
      {
        std::error_code ec;
        fs::path abs = fs::absolute(Resolve(file, f), ec);
        if (ec)
          return Fail(
              file, node,
              "cannot resolve python file " + Printable(f) + ": " + LowerFirst(ec.message()));
        p.python.push_back({abs.lexically_normal().string(), At(file, node)});
      }
    }
    if (root["opt_level"]) {
      PLIR_ASSIGN_OR_RETURN(p.opt_level, IntIn(file, root["opt_level"], "opt_level", 0, 3,
                                               "opt_level must be 0, 1, 2 or 3"));
    }
    if (root["passes"]) {  // after a base pipeline's steps (extend:)
      PLIR_ASSIGN_OR_RETURN(std::vector<StepSpec> steps,
                            Steps(file, root["passes"], 0, &p.plugin_sources));
      for (auto& step : steps) p.steps.push_back(std::move(step));
    }
    if (root["required"]) {
      PLIR_ASSIGN_OR_RETURN(auto names, NameList(file, root["required"], "required"));
      p.required.insert(p.required.end(), names.begin(), names.end());
    }
    if (root["disabled"]) {
      PLIR_ASSIGN_OR_RETURN(auto names, NameList(file, root["disabled"], "disabled"));
      p.disabled.insert(p.disabled.end(), names.begin(), names.end());
    }
    if (root["config"]) {
      if (!root["config"].IsMap()) return Fail(file, root["config"], "config must be a map");
      for (auto it = root["config"].begin(); it != root["config"].end(); ++it) {
        PLIR_ASSIGN_OR_RETURN(p.config[it->first.as<std::string>()], Value(file, it->second));
      }
    }
    if (root["instruments"]) {
      PLIR_ASSIGN_OR_RETURN(p.instruments, Instruments(file, root["instruments"]));
    }
    if (root["limits"]) PLIR_RETURN_IF_ERROR(Limits(file, root["limits"], &p));
    return p;
  }

  StatusOr<ExtensionSpec> Extension(const std::string& file, const YAML::Node& root) {
    ExtensionSpec e;
    e.file = file;
    files_.push_back(file);
    if (!root.IsMap()) return Fail(file, root, "an extension fragment must be a map with 'extend'");
    PLIR_RETURN_IF_ERROR(CheckKeys(
        file, root, {"version", "name", "plugins", "plugin_path", "extend"}, "extension fragment"));
    PLIR_RETURN_IF_ERROR(CheckVersion(file, root));
    PLIR_RETURN_IF_ERROR(SearchDirs(file, root, &e.plugin_sources));
    PLIR_RETURN_IF_ERROR(Plugins(file, root, /*listed=*/false, &e.plugin_sources));
    const YAML::Node& ext = root["extend"];
    if (!ext || !ext.IsMap())
      return Fail(file, root, "an extension fragment needs 'extend: {point: NAME, passes: [...]}'");
    PLIR_RETURN_IF_ERROR(CheckKeys(file, ext, {"point", "passes"}, "extend"));
    if (!ext["point"] || !ext["passes"])
      return Fail(file, ext, "'extend' needs 'point' and 'passes'");
    e.point_loc = At(file, ext["point"]);
    PLIR_ASSIGN_OR_RETURN(e.point, Scalar(file, ext["point"], "point"));
    PLIR_ASSIGN_OR_RETURN(e.steps, Steps(file, ext["passes"], 0, &e.plugin_sources));
    return e;
  }

 private:
  // A file's plugin_path, for files whose directories do not go into the
  // canonical pipeline (includes, extension fragments).
  Status SearchDirs(const std::string& file, const YAML::Node& root,
                    std::vector<PluginSourceSpec>* out) {
    if (!root["plugin_path"]) return Status::Ok();
    PLIR_ASSIGN_OR_RETURN(NodeStrings dirs, StringList(file, root["plugin_path"], "plugin_path"));
    for (const auto& [node, dir] : dirs)
      out->push_back({PluginSourceSpec::Kind::kSearchDir, Resolve(file, dir), false, std::nullopt,
                      false, At(file, node)});
    return Status::Ok();
  }

  // Entries are names (or paths), or {name: NAME, sha256: HEX}: the plugin
  // file must then have that SHA-256, checked before it is opened.
  Status Plugins(const std::string& file, const YAML::Node& root, bool listed,
                 std::vector<PluginSourceSpec>* out) {
    if (!root["plugins"]) return Status::Ok();
    YAML::Node list = root["plugins"];
    auto add = [&](const YAML::Node& node, const std::string& name,
                   std::optional<std::string> sha) {
      bool is_path = name.find('/') != std::string::npos ||
                     (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0);
      out->push_back({PluginSourceSpec::Kind::kPlugin, is_path ? Resolve(file, name) : name,
                      is_path, std::move(sha), listed, At(file, node)});
    };
    if (!list.IsSequence()) {
      PLIR_ASSIGN_OR_RETURN(NodeStrings names, StringList(file, list, "plugins"));
      for (const auto& [node, name] : names) add(node, name, std::nullopt);
      return Status::Ok();
    }
    for (const YAML::Node& item : list) {
      if (!item.IsMap()) {
        PLIR_ASSIGN_OR_RETURN(std::string name, Scalar(file, item, "plugins"));
        add(item, name, std::nullopt);
        continue;
      }
      PLIR_RETURN_IF_ERROR(CheckKeys(file, item, {"name", "sha256"}, "plugin entry"));
      if (!item["name"]) return Fail(file, item, "a plugin entry needs 'name'");
      PLIR_ASSIGN_OR_RETURN(std::string name, Scalar(file, item["name"], "the plugin name"));
      std::optional<std::string> pin;
      if (item["sha256"]) {
        PLIR_ASSIGN_OR_RETURN(std::string sha, Scalar(file, item["sha256"], "sha256"));
        bool hex =
            sha.size() == 64 && sha.find_first_not_of("0123456789abcdef") == std::string::npos;
        if (!hex) return Fail(file, item["sha256"], "sha256 must be 64 lowercase hex digits");
        pin = sha;
      }
      add(item["name"], name, std::move(pin));
    }
    return Status::Ok();
  }

  StatusOr<std::vector<StepSpec>> Steps(const std::string& file, const YAML::Node& list, int depth,
                                        std::vector<PluginSourceSpec>* plugins) {
    if (depth > kMaxIncludeDepth) return Fail(file, list, "passes nested too deeply");
    if (!list.IsSequence()) return Fail(file, list, "'passes' must be a list");
    std::vector<StepSpec> steps;
    for (const YAML::Node& item : list) {
      if (++total_steps_ > kMaxSteps)
        return Fail(file, item,
                    "the pipeline has more than " + std::to_string(kMaxSteps) +
                        " steps (includes expanded)");
      YAML::Mark m = item.Mark();
      StepSpec s;
      s.loc = SourceLoc{file, int64_t{m.line} + 1, int64_t{m.column} + 1};
      s.at = At(file, item);
      if (item.IsScalar()) {
        s.pass = {item.as<std::string>(), At(file, item)};
        steps.push_back(std::move(s));
        continue;
      }
      if (!item.IsMap()) return Fail(file, item, "a pass must be a name or a map");
      if (item["include"]) {
        PLIR_RETURN_IF_ERROR(CheckKeys(file, item, {"include"}, "include"));
        PLIR_ASSIGN_OR_RETURN(std::vector<StepSpec> included,
                              Include(file, item["include"], depth, plugins));
        for (auto& i : included) steps.push_back(std::move(i));
        continue;
      }
      if (item["repeat"]) {
        PLIR_RETURN_IF_ERROR(CheckKeys(file, item, {"repeat", "passes"}, "repeat group"));
        s.kind = PipelineStep::Kind::kRepeat;
        const YAML::Node& r = item["repeat"];
        if (!r.IsMap())
          return Fail(file, r, "repeat must be a map: {max_iterations: N, until: fixpoint}");
        PLIR_RETURN_IF_ERROR(CheckKeys(file, r, {"max_iterations", "until"}, "repeat"));
        if (r["max_iterations"]) {
          PLIR_ASSIGN_OR_RETURN(s.max_iterations,
                                IntIn(file, r["max_iterations"], "max_iterations", 1, 1000,
                                      "max_iterations must be between 1 and 1000"));
        }
        if (r["until"]) {
          PLIR_ASSIGN_OR_RETURN(std::string until, Scalar(file, r["until"], "until"));
          if (until != "fixpoint") return Fail(file, r["until"], "until must be 'fixpoint'");
          s.until_fixpoint = true;
        }
        if (!item["passes"]) return Fail(file, item, "a repeat group needs 'passes'");
        PLIR_ASSIGN_OR_RETURN(s.steps, Steps(file, item["passes"], depth + 1, plugins));
        steps.push_back(std::move(s));
        continue;
      }
      if (item["extension_point"]) {
        PLIR_RETURN_IF_ERROR(CheckKeys(file, item, {"extension_point"}, "extension point"));
        s.kind = PipelineStep::Kind::kExtensionPoint;
        PLIR_ASSIGN_OR_RETURN(s.point, Scalar(file, item["extension_point"], "extension_point"));
        steps.push_back(std::move(s));
        continue;
      }
      PLIR_RETURN_IF_ERROR(
          CheckKeys(file, item, {"name", "options", "min_opt_level", "functions"}, "pass"));
      if (!item["name"])
        return Fail(file, item,
                    "a pass map needs 'name' (or 'repeat', 'include', 'extension_point')");
      PLIR_ASSIGN_OR_RETURN(std::string name, Scalar(file, item["name"], "the pass name"));
      s.pass = {std::move(name), At(file, item["name"])};
      if (item["options"]) {
        const YAML::Node& opts = item["options"];
        if (!opts.IsMap()) return Fail(file, opts, "options must be a map");
        for (auto it = opts.begin(); it != opts.end(); ++it) {
          WrittenOption o;
          o.key = it->first.as<std::string>();
          o.key_loc = At(file, it->first);
          o.value_loc = At(file, it->second);
          PLIR_ASSIGN_OR_RETURN(o.value, Value(file, it->second));
          s.options.push_back(std::move(o));
        }
      }
      if (item["min_opt_level"]) {
        PLIR_ASSIGN_OR_RETURN(s.min_opt_level, IntIn(file, item["min_opt_level"], "min_opt_level",
                                                     0, 3, "min_opt_level must be 0, 1, 2 or 3"));
      }
      if (item["functions"]) {
        // As TVM's ApplyPassToFunction: a regular expression over function
        // names (RE2 syntax, matching the whole name).
        PLIR_ASSIGN_OR_RETURN(std::string re, Scalar(file, item["functions"], "functions"));
        if (re.empty())
          return Fail(file, item["functions"], "functions must be a non-empty regular expression");
        RE2 check(re, RE2::Quiet);
        if (!check.ok())
          return Fail(file, item["functions"],
                      "functions: invalid regular expression '" + re + "': " + check.error());
        s.functions = re;
      }
      steps.push_back(std::move(s));
    }
    return steps;
  }

  // Fails on a cycle through `canonical` in the include/extend chain.
  Status CheckCycle(const std::string& file, const YAML::Node& node, const std::string& canonical,
                    const char* what) {
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i] != canonical) continue;
      std::string chain;
      for (size_t j = i; j < stack_.size(); ++j) chain += stack_[j] + " -> ";
      return Fail(file, node, std::string(what) + " cycle: " + chain + canonical);
    }
    return Status::Ok();
  }

  // The include/extend chain starts at the top file (read already).
  Status PushTop(const std::string& file, const YAML::Node& node) {
    if (!stack_.empty()) return Status::Ok();
    PLIR_ASSIGN_OR_RETURN(std::string top, Canonical(file, node, files_.front(), "pipeline"));
    stack_.push_back(std::move(top));
    return Status::Ok();
  }

  // `extend: BASE.yaml`: this pipeline is BASE (its passes, plugins and
  // settings) with this file's passes appended and its settings on top.
  StatusOr<PipelineSpec> Base(const std::string& file, const YAML::Node& node) {
    PLIR_ASSIGN_OR_RETURN(std::string rel, Scalar(file, node, "extend"));
    std::string path = Resolve(file, rel);
    PLIR_ASSIGN_OR_RETURN(std::string canonical, Canonical(file, node, path, "base"));
    PLIR_RETURN_IF_ERROR(PushTop(file, node));
    PLIR_RETURN_IF_ERROR(CheckCycle(file, node, canonical, "extend"));
    PLIR_ASSIGN_OR_RETURN(YAML::Node root, ReadYaml(path, &file, &node));
    stack_.push_back(canonical);
    StatusOr<PipelineSpec> base = Root(path, root);
    stack_.pop_back();
    return base;
  }

  StatusOr<std::vector<StepSpec>> Include(const std::string& file, const YAML::Node& node,
                                          int depth, std::vector<PluginSourceSpec>* plugins) {
    PLIR_ASSIGN_OR_RETURN(std::string rel, Scalar(file, node, "include"));
    std::string path = Resolve(file, rel);
    PLIR_ASSIGN_OR_RETURN(std::string canonical, Canonical(file, node, path, "included"));
    PLIR_RETURN_IF_ERROR(CheckCycle(file, node, canonical, "include"));
    PLIR_RETURN_IF_ERROR(PushTop(file, node));
    PLIR_ASSIGN_OR_RETURN(YAML::Node root, ReadYaml(path, &file, &node));
    if (!root.IsMap()) return Fail(path, root, "an included file must be a map with 'passes'");
    // A full pipeline (configs/O2.yaml) may be included: it contributes its
    // passes, plugins and plugin_path; its settings (opt_level, instruments,
    // limits, ...) stay the including pipeline's (`extend:` inherits them).
    PLIR_RETURN_IF_ERROR(CheckKeys(path, root, PipelineKeys(), "included file"));
    PLIR_RETURN_IF_ERROR(CheckVersion(path, root));
    if (root["extend"])
      return Fail(path, root["extend"],
                  "an included file cannot extend another pipeline (include that one too)");
    PLIR_RETURN_IF_ERROR(SearchDirs(path, root, plugins));
    PLIR_RETURN_IF_ERROR(Plugins(path, root, /*listed=*/false, plugins));
    std::vector<StepSpec> steps;
    if (root["passes"]) {
      stack_.push_back(canonical);
      StatusOr<std::vector<StepSpec>> r = Steps(path, root["passes"], depth + 1, plugins);
      stack_.pop_back();
      PLIR_ASSIGN_OR_RETURN(steps, std::move(r));
    }
    return steps;
  }

  StatusOr<InstrumentSpec> Instruments(const std::string& file, const YAML::Node& n) {
    if (!n.IsMap()) return Fail(file, n, "instruments must be a map");
    PLIR_RETURN_IF_ERROR(CheckKeys(file, n,
                                   {"timing", "verify", "print_before", "print_after",
                                    "print_changed", "check_input_unchanged"},
                                   "instruments"));
    InstrumentSpec o;
    if (n["timing"]) {
      PLIR_ASSIGN_OR_RETURN(o.timing, Bool(file, n["timing"], "timing"));
    }
    if (n["verify"]) {
      PLIR_ASSIGN_OR_RETURN(std::string v, Scalar(file, n["verify"], "verify"));
      if (v == "each" || v == "true")
        o.verify = VerifyMode::kEach;
      else if (v == "none" || v == "false")
        o.verify = VerifyMode::kNone;
      else if (v == "end")
        o.verify = VerifyMode::kEnd;
      else
        return Fail(file, n["verify"], "verify must be 'each', 'end' or 'none'");
    }
    if (n["print_before"]) {
      PLIR_ASSIGN_OR_RETURN(o.print_before, NameList(file, n["print_before"], "print_before"));
    }
    if (n["print_after"]) {
      PLIR_ASSIGN_OR_RETURN(o.print_after, NameList(file, n["print_after"], "print_after"));
    }
    if (n["print_changed"]) {
      PLIR_ASSIGN_OR_RETURN(o.print_changed, Bool(file, n["print_changed"], "print_changed"));
    }
    if (n["check_input_unchanged"]) {
      PLIR_ASSIGN_OR_RETURN(o.check_input_unchanged,
                            Bool(file, n["check_input_unchanged"], "check_input_unchanged"));
    }
    return o;
  }

  Status Limits(const std::string& file, const YAML::Node& l, PipelineSpec* p) {
    if (!l.IsMap())
      return Fail(file, l, "limits must be a map: {pass_timeout: SECONDS, memory_limit: MB}");
    PLIR_RETURN_IF_ERROR(CheckKeys(file, l, {"pass_timeout", "memory_limit"}, "limits"));
    if (l["pass_timeout"]) {
      PLIR_ASSIGN_OR_RETURN(std::string v, Scalar(file, l["pass_timeout"], "pass_timeout"));
      double d = 0;
      auto r = std::from_chars(v.data(), v.data() + v.size(), d);
      // The command line's range (--pass-timeout): NaN, infinities and
      // sub-millisecond values (0 ns once converted: no limit) are errors.
      if (r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(d) ||
          d < limits::kMinPassTimeoutS || d > limits::kMaxPassTimeoutS)
        return Fail(file, l["pass_timeout"],
                    "pass_timeout must be a number of seconds from 0.001 to 1000000, not '" +
                        Printable(v) + "'");
      p->pass_timeout_s = d;
    }
    if (l["memory_limit"]) {
      PLIR_ASSIGN_OR_RETURN(int64_t mb, Int(file, l["memory_limit"], "memory_limit"));
      if (mb < limits::kMinMemoryLimitMb || mb > limits::kMaxMemoryLimitMb)
        return Fail(file, l["memory_limit"],
                    "memory_limit must be from " + std::to_string(limits::kMinMemoryLimitMb) +
                        " to " + std::to_string(limits::kMaxMemoryLimitMb) + " (megabytes), not " +
                        std::to_string(mb));
      p->memory_limit_mb = mb;
    }
    return Status::Ok();
  }

  size_t total_steps_ = 0;
  std::vector<std::string> files_;
  std::vector<std::string> stack_;  // include chain
};

// yaml-cpp reports misuse of its nodes by exceptions: they become Status
// values here, at the only place they can surface.
template <typename F>
auto Guard(const std::string& file, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const YAML::Exception& e) {
    return SyntaxError(file, e.mark, e.msg);
  }
}

}  // namespace

StatusOr<PipelineSpec> ParsePipelineFile(const std::string& file) {
  return Guard(file, [&]() -> StatusOr<PipelineSpec> {
    PLIR_ASSIGN_OR_RETURN(YAML::Node root, ReadYaml(file));
    return SpecParser().Root(file, root);
  });
}

StatusOr<PipelineSpec> ParsePipelineText(const std::string& name, const std::string& text) {
  return Guard(name, [&]() -> StatusOr<PipelineSpec> {
    PLIR_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(name, text));
    return SpecParser().Root(name, root);
  });
}

StatusOr<ExtensionSpec> ParseExtensionFile(const std::string& file) {
  return Guard(file, [&]() -> StatusOr<ExtensionSpec> {
    PLIR_ASSIGN_OR_RETURN(YAML::Node root, ReadYaml(file));
    return SpecParser().Extension(file, root);
  });
}

}  // namespace plir
