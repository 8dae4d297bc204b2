// Regenerates expected files of golden cases.
//
//   bazel run //testing:update_goldens -- //plugins/dead_code_elimination [...]
//   bazel run //testing:update_goldens            # every in-tree plugin
//
// Writes plugins/NAME/tests/CASE.expected.plir in the source tree, only
// where the content changes, and says which files it created or changed
// (`created X`, `changed X`) and how many it left as they were. Refuses to
// overwrite a file without the do-not-edit banner.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "driver/file_util.h"
#include "testing/golden.h"

namespace fs = std::filesystem;

namespace plir::testing {
namespace {

struct Tally {
  int created = 0, changed = 0, unchanged = 0;
};

// `package` is the plugin's directory relative to `root` ("plugins/NAME").
int UpdatePlugin(const fs::path& root, const std::string& package, PluginLoader& loader,
                 Tally* tally) {
  std::string name = fs::path(package).filename().string();
  auto plugin = loader.LoadByName(name);
  if (!plugin.ok()) {
    std::cerr << "update_goldens: " << plugin.status().message() << "\n";
    return 1;
  }
  fs::path tests = root / package / "tests";
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tests, ec)) {
    std::string f = e.path().filename().string();
    if (e.path().extension() == ".plir" && f.find(".expected.") == std::string::npos)
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int errors = 0;
  for (const fs::path& file : files) {
    fs::path expected = file;
    expected.replace_extension(".expected.plir");
    std::optional<std::string> previous;
    if (fs::exists(expected)) {
      auto old = ReadFileToString(expected.string());
      if (old.ok()) previous = *old;
      if (old.ok() && old->rfind(kBannerPrefix, 0) != 0) {
        std::cerr << "update_goldens: refusing to overwrite " << expected
                  << ": it has no do-not-edit banner (was it written by hand?)\n";
        ++errors;
        continue;
      }
    }
    auto text = ReadFileToString(file.string());
    if (!text.ok()) {
      std::cerr << "update_goldens: " << text.status().message() << "\n";
      ++errors;
      continue;
    }
    std::string rel = fs::relative(file, root).string();
    std::vector<std::string> sections;
    bool ok = true;
    for (const GoldenCase& c : SplitCases(*text)) {
      auto r = RunCase(c, rel, plugin->passes, loader);
      if (!r.ok()) {
        std::cerr << "update_goldens: " << r.status().message() << "\n";
        ok = false;
        break;
      }
      if (r->is_error && !r->is_parse_error && c.expect_error.empty())
        std::cerr << "update_goldens: warning: " << rel << ":" << c.first_line
                  << ": the pipeline fails: " << r->error << "\n";
      sections.push_back(r->rendered);
    }
    if (!ok) {
      ++errors;
      continue;
    }
    std::string content = RenderExpected(sections, name);
    if (previous && *previous == content) {
      ++tally->unchanged;
      continue;
    }
    Status s = WriteFileAtomically(expected.string(), content);
    if (!s.ok()) {
      std::cerr << "update_goldens: " << s.message() << "\n";
      ++errors;
      continue;
    }
    std::cout << (previous ? "changed " : "created ") << fs::relative(expected, root).string()
              << "\n";
    ++(previous ? tally->changed : tally->created);
  }
  return errors;
}

}  // namespace
}  // namespace plir::testing

int main(int argc, char** argv) {
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  fs::path root = ws ? fs::path(ws) : fs::current_path();
  if (!fs::exists(root / "WORKSPACE")) {
    std::cerr << "update_goldens: run it through Bazel from the workspace: `bazel run "
                 "//plugins/NAME:update_goldens` (every plugin package has this target)\n";
    return 2;
  }
  plir::PluginLoader loader;
  std::vector<std::string> names;  // packages: "plugins/NAME"
  bool explicit_plugins = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--plugin" && i + 1 < argc) {
      // Plugins given by path (bazel run //plugins/NAME:update_goldens).
      auto r = loader.LoadPath(argv[++i]);
      if (!r.ok()) {
        std::cerr << "update_goldens: " << r.status().message() << "\n";
        return 1;
      }
      explicit_plugins = true;
      continue;
    }
    if (arg.rfind("//", 0) == 0) arg = arg.substr(2);
    while (!arg.empty() && (arg.back() == '/' || arg.back() == ':')) arg.pop_back();
    if (auto colon = arg.find(':'); colon != std::string::npos) arg = arg.substr(0, colon);
    if (arg.find('/') == std::string::npos) arg = "plugins/" + arg;
    names.push_back(arg);
  }
  if (names.empty())
    for (const auto& e : fs::directory_iterator(root / "plugins"))
      if (fs::exists(e.path() / "tests"))
        names.push_back("plugins/" + e.path().filename().string());
  std::sort(names.begin(), names.end());
  if (!explicit_plugins) {
    // Load every in-tree plugin so that RUN lines may use passes of others.
    for (const std::string& d : plir::DefaultPluginDirs()) loader.AddSearchDir(d);
    if (plir::Status s = loader.LoadAll(); !s.ok()) {
      std::cerr << "update_goldens: " << s.message() << "\n";
      return 1;
    }
  }
  int errors = 0;
  plir::testing::Tally tally;
  for (const std::string& n : names) errors += plir::testing::UpdatePlugin(root, n, loader, &tally);
  std::cout << "update_goldens: " << tally.changed << " changed, " << tally.created << " created, "
            << tally.unchanged << " unchanged\n";
  return errors == 0 ? 0 : 1;
}
