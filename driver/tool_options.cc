#include "driver/tool_options.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

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

void EnterBuildWorkingDirectory(const char* tool) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0)
      std::perror((std::string(tool) + ": chdir to BUILD_WORKING_DIRECTORY").c_str());
  }
}

}  // namespace plir
