// Writing strings into YAML that reads back the same. yaml-cpp writes a
// string with control characters (a carriage return in a pipeline name, a
// command-line argument, a failure message) as a plain scalar, and reading
// it back loses them: such strings are written double-quoted, with escapes.
// Used for canonical pipelines (driver/pipeline.cc) and reproducer
// manifests (driver/reproducer.cc).
#ifndef PLIR_DRIVER_YAML_TEXT_H_
#define PLIR_DRIVER_YAML_TEXT_H_

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>

namespace plir {

inline void EmitYamlText(YAML::Emitter& out, const std::string& s) {
  bool plain =
      std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x20; });
  if (!plain) out << YAML::DoubleQuoted;
  out << s;
}

}  // namespace plir

#endif  // PLIR_DRIVER_YAML_TEXT_H_
