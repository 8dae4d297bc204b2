#include "driver/tool_options.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace plir {

CLI::Option* AddToolOptions(CLI::App& app, ToolFlags* to, const ToolOptionHelp& help) {
  CLI::Option* input = app.add_option("input", to->input, help.input);
  app.add_option("-o,--output", to->output, help.output);
  CLI::Option* pipeline = app.add_option("--pipeline", to->pipeline, help.pipeline);
  app.add_option("--passes", to->passes, help.passes)->excludes(pipeline);
  app.add_option("--plugin", to->plugins, help.plugin)->allow_extra_args(false);
  app.add_option("--plugin-path", to->plugin_dirs, help.plugin_dir)->allow_extra_args(false);
  return input;
}

CLI::Validator Seconds(double lo, double hi, bool or_zero) {
  return CLI::Validator(
      [lo, hi, or_zero](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        double v = std::strtod(s.c_str(), &end);
        const bool number =
            !s.empty() && end == s.c_str() + s.size() && errno != ERANGE && std::isfinite(v);
        if (number && ((v >= lo && v <= hi) || (or_zero && v == 0))) return "";
        std::ostringstream range;
        range << "must be a number of seconds from " << lo << " to " << hi
              << (or_zero ? ", or 0" : "") << ", not " << s;
        return range.str();
      },
      "SECONDS");
}

void EnterBuildWorkingDirectory(const char* tool) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0)
      std::perror((std::string(tool) + ": chdir to BUILD_WORKING_DIRECTORY").c_str());
  }
}

}  // namespace plir
