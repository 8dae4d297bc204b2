#include "driver/reproducer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "driver/file_util.h"
#include "driver/limits.h"
#include "driver/yaml_text.h"

namespace plir {

std::vector<ReproducerPlugin> PluginsFromLines(const std::string& lines) {
  std::vector<ReproducerPlugin> out;
  std::stringstream ss(lines);
  for (std::string line; std::getline(ss, line) && out.size() < 4096;) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream fs(line);
    for (std::string f; fields.size() < 4 && std::getline(fs, f, '\t');)
      fields.push_back(f.substr(0, 4096));
    fields.resize(4);
    out.push_back({fields[0], fields[1], fields[2], fields[3]});
  }
  return out;
}

namespace {
Status WriteBundleFiles(const std::string& dir, const std::string& input_path,
                        const std::string& input_ext, const std::string& pipeline_yaml,
                        Reproducer r);
}  // namespace

StatusOr<std::string> WriteReproducer(const std::string& parent_dir, const std::string& input_path,
                                      const std::string& input_ext,
                                      const std::string& pipeline_yaml, Reproducer r) {
  std::string parent = parent_dir;
  if (parent.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp && *tmp ? tmp : "/tmp";
  }
  std::string templ = parent + "/plir-reproducer-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    return Internal("cannot create a reproducer directory in " + parent + ": " +
                    std::strerror(errno));
  std::string dir(buf.data());
  chmod(dir.c_str(), 0755);
  Status s = WriteBundleFiles(dir, input_path, input_ext, pipeline_yaml, std::move(r));
  if (!s.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return s;
  }
  return dir;
}

namespace {

Status WriteBundleFiles(const std::string& dir, const std::string& input_path,
                        const std::string& input_ext, const std::string& pipeline_yaml,
                        Reproducer r) {
  struct stat st;
  if (stat(input_path.c_str(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) > r.max_input_copy_bytes) {
    if (input_path.rfind("/proc/self/fd/", 0) == 0)
      return ResourceExhausted("the input (" + std::to_string(st.st_size) +
                               " bytes, read from standard input or a pipe) is larger than "
                               "--reproducer-max-input-bytes, and has no file to name");
    PLIR_ASSIGN_OR_RETURN(r.input_sha256, Sha256File(input_path));
    r.input_file = std::filesystem::absolute(input_path).lexically_normal().string();
  } else {
    PLIR_ASSIGN_OR_RETURN(std::string input, ReadFileToString(input_path));
    r.input_file = "input" + input_ext;
    PLIR_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + r.input_file, input));
  }
  r.pipeline_file = "pipeline.yaml";
  PLIR_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + r.pipeline_file, pipeline_yaml));

  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "version" << YAML::Value << 1;
  out << YAML::Key << "failure" << YAML::Value;
  EmitYamlText(out, r.failure);
  if (r.input_sha256.empty()) {
    out << YAML::Key << "input" << YAML::Value << r.input_file;
  } else {
    out << YAML::Key << "input_path" << YAML::Value;
    EmitYamlText(out, r.input_file);
    out << YAML::Key << "input_sha256" << YAML::Value << r.input_sha256;
  }
  out << YAML::Key << "pipeline" << YAML::Value << r.pipeline_file;
  out << YAML::Key << "plugins" << YAML::Value << YAML::BeginSeq;
  for (const ReproducerPlugin& p : r.plugins) {
    out << YAML::BeginMap;
    for (const auto& [key, value] : {std::pair{"path", &p.path},
                                     {"name", &p.name},
                                     {"version", &p.version},
                                     {"sha256", &p.sha256}}) {
      out << YAML::Key << key << YAML::Value;
      EmitYamlText(out, *value);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (r.opt_level >= 0) out << YAML::Key << "opt_level" << YAML::Value << r.opt_level;
  if (r.threads > 0) out << YAML::Key << "threads" << YAML::Value << r.threads;
  if (r.pass_timeout_s > 0) out << YAML::Key << "pass_timeout" << YAML::Value << r.pass_timeout_s;
  if (r.memory_limit_mb > 0) out << YAML::Key << "memory_limit" << YAML::Value << r.memory_limit_mb;
  if (r.check.enabled) {
    out << YAML::Key << "check_execution" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, value] : {std::pair{"entry", &r.check.entry},
                                     {"inputs", &r.check.inputs},
                                     {"params", &r.check.params},
                                     {"tolerance", &r.check.tolerance}}) {
      out << YAML::Key << key << YAML::Value;
      EmitYamlText(out, *value);
    }
    out << YAML::Key << "seed" << YAML::Value << r.check.seed;
    out << YAML::EndMap;
  }
  out << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& c : r.command) EmitYamlText(out, c);
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return WriteFileAtomically(dir + "/reproducer.yaml", std::string(out.c_str()) + "\n");
}

}  // namespace

namespace {

// "MANIFEST:LINE:COL: " of `n`.
std::string Where(const std::string& manifest, const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  return manifest + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

// The bundle's numbers have the command line's ranges (driver/limits.h):
// a hand-edited or hostile manifest cannot set what --threads,
// --memory-limit, --pass-timeout or --opt-level would refuse.
StatusOr<int64_t> IntIn(const std::string& manifest, const YAML::Node& n, const char* key,
                        int64_t lo, int64_t hi) {
  std::string v = n.IsScalar() ? n.Scalar() : "";
  int64_t i = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), i);
  if (!n.IsScalar() || r.ec != std::errc() || r.ptr != v.data() + v.size() || i < lo || i > hi)
    return InvalidArgument(Where(manifest, n) + "'" + key + "' must be an integer from " +
                           std::to_string(lo) + " to " + std::to_string(hi) +
                           (n.IsScalar() ? ", not '" + v + "'" : std::string()));
  return i;
}

StatusOr<double> SecondsIn(const std::string& manifest, const YAML::Node& n, const char* key,
                           double lo, double hi) {
  std::string v = n.IsScalar() ? n.Scalar() : "";
  double d = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), d);
  if (!n.IsScalar() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(d) ||
      d < lo || d > hi)
    return InvalidArgument(Where(manifest, n) + "'" + key +
                           "' must be a number of seconds from 0.001 to 1000000" +
                           (n.IsScalar() ? ", not '" + v + "'" : std::string()));
  return d;
}

}  // namespace

StatusOr<Reproducer> ReadReproducer(const std::string& dir) {
  std::string manifest = dir + "/reproducer.yaml";
  PLIR_ASSIGN_OR_RETURN(std::string text, ReadFileToString(manifest));
  Reproducer r;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return InvalidArgument(manifest + ": not a reproducer manifest");
    auto rel = [&](const YAML::Node& n, const char* key) -> StatusOr<std::string> {
      if (!n || !n.IsScalar()) return InvalidArgument(manifest + ": missing '" + key + "'");
      std::string v = n.as<std::string>();
      if (v.empty() || v.find('/') != std::string::npos || v[0] == '.')
        return InvalidArgument(manifest + ": '" + key + "' must name a file in the bundle");
      return dir + "/" + v;
    };
    // Other relative paths (a plugin, the --check-execution files) are the
    // bundle's too, never the current directory's.
    auto in_bundle = [&](const std::string& path) {
      return path.empty() || path[0] == '/' ? path : dir + "/" + path;
    };
    if (root["input_path"] && !root["input"]) {
      // A large input named by path (absolute) and hash.
      if (!root["input_path"].IsScalar() || !root["input_sha256"] ||
          root["input_path"].as<std::string>().empty() ||
          root["input_path"].as<std::string>()[0] != '/')
        return InvalidArgument(manifest +
                               ": 'input_path' must be an absolute path, with 'input_sha256'");
      r.input_file = root["input_path"].as<std::string>();
      r.input_sha256 = root["input_sha256"].as<std::string>();
    } else {
      PLIR_ASSIGN_OR_RETURN(r.input_file, rel(root["input"], "input"));
    }
    PLIR_ASSIGN_OR_RETURN(r.pipeline_file, rel(root["pipeline"], "pipeline"));
    if (root["failure"]) r.failure = root["failure"].as<std::string>();
    if (root["opt_level"]) {
      PLIR_ASSIGN_OR_RETURN(int64_t v, IntIn(manifest, root["opt_level"], "opt_level",
                                             limits::kMinOptLevel, limits::kMaxOptLevel));
      r.opt_level = static_cast<int>(v);
    }
    if (root["threads"]) {
      PLIR_ASSIGN_OR_RETURN(int64_t v, IntIn(manifest, root["threads"], "threads",
                                             limits::kMinThreads, limits::kMaxThreads));
      r.threads = static_cast<int>(v);
    }
    if (root["pass_timeout"]) {
      PLIR_ASSIGN_OR_RETURN(r.pass_timeout_s,
                            SecondsIn(manifest, root["pass_timeout"], "pass_timeout",
                                      limits::kMinPassTimeoutS, limits::kMaxPassTimeoutS));
    }
    if (root["memory_limit"]) {
      PLIR_ASSIGN_OR_RETURN(r.memory_limit_mb,
                            IntIn(manifest, root["memory_limit"], "memory_limit",
                                  limits::kMinMemoryLimitMb, limits::kMaxMemoryLimitMb));
    }
    if (root["command"])
      for (const auto& c : root["command"]) r.command.push_back(c.as<std::string>());
    if (const YAML::Node c = root["check_execution"]; c && c.IsMap()) {
      r.check.enabled = true;
      if (c["entry"]) r.check.entry = c["entry"].as<std::string>();
      if (c["inputs"]) r.check.inputs = in_bundle(c["inputs"].as<std::string>());
      if (c["params"]) r.check.params = in_bundle(c["params"].as<std::string>());
      if (c["tolerance"]) r.check.tolerance = c["tolerance"].as<std::string>();
      if (c["seed"]) r.check.seed = c["seed"].as<uint64_t>();
    }
    if (const YAML::Node plugins = root["plugins"]) {
      if (!plugins.IsSequence())
        return InvalidArgument(Where(manifest, plugins) +
                               "'plugins' must be a list of {path, name, version, sha256}");
      for (const auto& p : plugins) {
        if (!p.IsMap() || !p["path"] || !p["path"].IsScalar() || p["path"].Scalar().empty())
          return InvalidArgument(Where(manifest, p) + "a plugin needs a 'path'");
        ReproducerPlugin rp;
        rp.path = in_bundle(p["path"].as<std::string>());
        if (p["name"]) rp.name = p["name"].as<std::string>();
        if (p["version"]) rp.version = p["version"].as<std::string>();
        if (p["sha256"]) rp.sha256 = p["sha256"].as<std::string>();
        r.plugins.push_back(std::move(rp));
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(manifest + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return r;
}

}  // namespace plir
