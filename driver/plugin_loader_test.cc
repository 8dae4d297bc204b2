// The loader's checks, each with its own error, and the single-copy rule.
#include "driver/plugin_loader.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "ir/text/parser.h"
#include "passes/pass_manager.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

const std::string kDir = "testing/plugins";
std::string Lib(const std::string& name) { return kDir + "/libplir_" + name + ".so"; }

void ExpectLoadError(PluginLoader& loader, const std::string& name, PluginError kind,
                     const std::string& needle) {
  auto r = loader.LoadPath(Lib(name));
  ASSERT_FALSE(r.ok()) << name << " loaded";
  EXPECT_EQ(r.error(), kind) << r.status().message();
  EXPECT_NE(r.status().message().find(Lib(name)), std::string::npos)
      << "error does not name the file: " << r.status().message();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

TEST(PluginLoaderTest, LoadsAGoodPluginAndRegistersItsPassesAndOps) {
  PluginLoader loader;
  auto r = loader.LoadPath(Lib("test_good"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->name, "test_good");
  EXPECT_EQ(r->version, "1.2.3");
  EXPECT_EQ(r->passes,
            (std::vector<std::string>{"TestReluToSoftmax", "TestBindResult", "TestOptions"}));
  auto def = PassRegistry::Global().Lookup("TestReluToSoftmax");
  ASSERT_TRUE(def);
  EXPECT_NE(def->info.origin.find("plugin test_good"), std::string::npos);
  // The plugin's op is visible to the host's parser.
  EXPECT_TRUE(ParseModule("def @f(%x: Tensor[(2,), float32]) { test.square(%x) }").ok());
  // Loading the same file again is a no-op.
  auto again = loader.LoadPath(Lib("test_good"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(loader.loaded().size(), 1u);
}

TEST(PluginLoaderTest, PluginsShareTheHostsSingleRegistry) {
  PluginLoader loader;
  ASSERT_TRUE(loader.LoadPath(Lib("test_good")).ok());
  void* handle = dlopen(Lib("test_good").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  using AddrFn = const void* (*)();
  auto passes = reinterpret_cast<AddrFn>(dlsym(handle, "test_good_registry_address"));
  auto ops = reinterpret_cast<AddrFn>(dlsym(handle, "test_good_op_registry_address"));
  ASSERT_TRUE(passes && ops);
  EXPECT_EQ(passes(), &PassRegistry::Global());
  EXPECT_EQ(ops(), &OpRegistry::Global());
  dlclose(handle);
}

TEST(PluginLoaderTest, CannotOpen) {
  PluginLoader loader;
  auto r = loader.LoadPath("testing/plugins/libplir_does_not_exist.so");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), PluginError::kCannotOpen);
  EXPECT_NE(
      r.status().message().find("cannot open plugin testing/plugins/libplir_does_not_exist.so: "),
      std::string::npos);
  EXPECT_NE(r.status().message().find("No such file"), std::string::npos);  // dlerror's words
}

TEST(PluginLoaderTest, MissingEntrySymbol) {
  PluginLoader loader;
  ExpectLoadError(loader, "test_no_entry", PluginError::kMissingEntry,
                  "is not a PLIR plugin: it does not export plir_plugin_entry");
}

TEST(PluginLoaderTest, RegistrationIsAllOrNothing) {
  PluginLoader loader;
  ExpectLoadError(loader, "test_partial", PluginError::kRegistration,
                  "TestPartialBad has no run function");
  EXPECT_FALSE(PassRegistry::Global().Lookup("TestPartialGood"));
  EXPECT_FALSE(OpRegistry::Global().Lookup("test_partial.op"));
}

TEST(PluginLoaderTest, ApiVersionMismatch) {
  PluginLoader loader;
  ExpectLoadError(loader, "test_bad_version", PluginError::kApiVersion,
                  "plugin API version 999, but this PLIR supports version " +
                      std::to_string(PLIR_PLUGIN_API_VERSION));
}

TEST(PluginLoaderTest, FingerprintMismatch) {
  PluginLoader loader;
  ExpectLoadError(loader, "test_bad_fingerprint", PluginError::kFingerprint,
                  "build fingerprint mismatch");
}

TEST(PluginLoaderTest, RegistrationFailureLeavesNothingRegistered) {
  PluginLoader loader;
  ExpectLoadError(loader, "test_register_fails", PluginError::kRegistration,
                  "plugin test_register_fails failed to register: the GPU backend");
  EXPECT_FALSE(PassRegistry::Global().Lookup("TestNeverCommitted"));
}

TEST(PluginLoaderTest, DuplicatePassName) {
  PluginLoader loader;
  ASSERT_TRUE(loader.LoadPath(Lib("test_good")).ok());
  ExpectLoadError(loader, "test_duplicate", PluginError::kDuplicateName,
                  "duplicate pass name TestReluToSoftmax: already registered by plugin test_good");
}

TEST(PluginLoaderTest, FindsPluginsByNameOnTheSearchPath) {
  PluginLoader loader;
  loader.AddSearchDir("/nonexistent");
  loader.AddSearchDir(kDir);
  EXPECT_EQ(loader.Find("test_good"), std::optional<std::string>(kDir + "/libplir_test_good.so"));
  auto r = loader.LoadByName("test_good");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.error(), PluginError::kNone);
  auto missing = loader.LoadByName("no_such_plugin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), PluginError::kNotFound);
  EXPECT_NE(missing.status().message().find(
                "libplir_no_such_plugin.so in:\n  /nonexistent\n  testing/plugins"),
            std::string::npos)
      << missing.status().message();
}

// A loader that trusts only the bundled plugins refuses any other file
// before opening it, and takes a bundled one reached through a link (as a
// runfiles tree holds them).
TEST(PluginLoaderTest, BundledOnlyRefusesOtherPluginsBeforeOpeningThem) {
  namespace fs = std::filesystem;
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path root = fs::path(tmp ? tmp : "/tmp") / "bundled_only";
  fs::remove_all(root);
  fs::create_directories(root / "bundled");
  fs::create_directories(root / "other");
  const fs::path good = fs::absolute(Lib("test_good"));
  fs::create_symlink(good, root / "bundled" / "libplir_test_good.so");
  const fs::path copy = root / "other" / "libplir_test_noop.so";
  fs::copy_file(fs::absolute(Lib("test_noop")), copy);

  PluginLoader loader;
  loader.DeclareBundledDir((root / "bundled").string());
  loader.set_bundled_only(true);
  auto refused = loader.LoadPath(copy.string());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), PluginError::kNotBundled);
  EXPECT_NE(refused.status().message().find(copy.string()), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(dlopen(copy.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "the refused file was opened";
  auto bundled = loader.LoadPath((root / "bundled" / "libplir_test_good.so").string());
  EXPECT_TRUE(bundled.ok()) << bundled.status().message();
  EXPECT_EQ(loader.loaded().size(), 1u);

  // Without the restriction the same file loads.
  PluginLoader open;
  auto other = open.LoadPath(copy.string());
  EXPECT_TRUE(other.ok()) << other.status().message();
}

TEST(PluginLoaderTest, ExceptionsFromPluginPassesBecomeErrors) {
  PluginLoader loader;
  ASSERT_TRUE(loader.LoadPath(Lib("test_misbehaving")).ok());
  auto step = MakePassStep(PassRegistry::Global(), "TestThrows");
  ASSERT_TRUE(step.ok());
  PassContext ctx;
  auto r = PassManager().Run({*step}, Module(), ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "pass TestThrows threw an exception: something went wrong inside the plugin"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace plir
