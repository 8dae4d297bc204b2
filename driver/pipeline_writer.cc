// The pipeline's YAML writer: the canonical form that LoadPipeline reads
// back the same (keys in a fixed order, includes expanded, options sorted).
#include <yaml-cpp/yaml.h>

#include "driver/pipeline.h"
#include "driver/yaml_text.h"
#include "ir/attrs.h"

namespace plir {
namespace {

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
  EmitList(out, "python", p.python);
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
  if (i.timing || i.verify != VerifyMode::kEnd || !i.print_before.empty() ||
      !i.print_after.empty() || i.print_changed || i.check_input_unchanged) {
    out << YAML::Key << "instruments" << YAML::Value << YAML::BeginMap;
    if (i.timing) out << YAML::Key << "timing" << YAML::Value << true;
    if (i.verify != VerifyMode::kEnd)
      out << YAML::Key << "verify" << YAML::Value << VerifyModeName(i.verify);
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

}  // namespace plir
