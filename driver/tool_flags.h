// The values of the command-line options that the tools share (the input,
// -o, and what runs), without the parser: code that only reads them
// (plir-opt's child program, cli/opt_program.cc) includes this, not
// driver/tool_options.h, and so does not compile CLI11's header (about 10 s
// of a translation unit's build at -O2, measured with g++ 12).
#ifndef PLIR_DRIVER_TOOL_FLAGS_H_
#define PLIR_DRIVER_TOOL_FLAGS_H_

#include <string>
#include <vector>

namespace plir {

// The options' values: each tool's flags derive from this.
struct ToolFlags {
  std::string input;
  std::string output;
  std::string pipeline;
  std::string passes;
  std::vector<std::string> plugins;
  std::vector<std::string> plugin_dirs;
};

}  // namespace plir

#endif  // PLIR_DRIVER_TOOL_FLAGS_H_
