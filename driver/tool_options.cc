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

void AddSupervisorOptions(CLI::App& app, const SupervisorOptionTargets& to,
                          const std::string& timeout_help) {
  app.add_option("--timeout", *to.timeout_s, timeout_help)->check(Seconds(0.001, 1e7));
  app.add_option("--load-timeout", *to.load_timeout_s,
                 "end the run if loading one plugin takes longer (seconds; default 30, 0: none)")
      ->check(Seconds(0.001, 1e6, /*or_zero=*/true));
  app.add_option("--memory-limit", *to.memory_limit_mb,
                 "cap the address space of the run (megabytes)")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 40));
  app.add_option("--sandbox", *to.sandbox,
                 "confine the plugin child (Landlock, seccomp): require (fail where the kernel "
                 "cannot), auto (the default: what the kernel offers, with a warning if that is "
                 "less), off (debugging)")
      ->check(CLI::IsMember({"require", "auto", "off"}));
  app.add_option("--sandbox-read", *to.sandbox_read,
                 "let the plugin child read this file or directory too (repeatable)")
      ->allow_extra_args(false);
}

void EnterBuildWorkingDirectory(const char* tool) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0)
      std::perror((std::string(tool) + ": chdir to BUILD_WORKING_DIRECTORY").c_str());
  }
}

}  // namespace plir
