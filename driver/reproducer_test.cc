// Reproducer manifests read back what was written, control characters
// included (a failure message or a command-line argument with carriage
// returns: yaml-cpp would write them as plain scalars and lose them).
#include "driver/reproducer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace plir {
namespace {

// A manifest written by hand (or by a hostile plugin's child): its numbers
// have the command line's ranges, errors have the manifest's line:col.
void ExpectBadManifest(const std::string& extra, int line, int col, const std::string& needle) {
  std::string dir = ::testing::TempDir() + "/bad_manifest";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/reproducer.yaml", std::ios::trunc)
      << "version: 1\ninput: input.plir\npipeline: pipeline.yaml\n"
      << extra;
  auto r = ReadReproducer(dir);
  ASSERT_FALSE(r.ok()) << extra;
  std::string prefix =
      dir + "/reproducer.yaml:" + std::to_string(line) + ":" + std::to_string(col) + ": ";
  EXPECT_EQ(r.status().message().compare(0, prefix.size(), prefix), 0)
      << "want " << prefix << "\ngot  " << r.status().message();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

TEST(ReproducerTest, ManifestValuesAreRangeChecked) {
  ExpectBadManifest("memory_limit: 9007199254740992\n", 4, 15,
                    "'memory_limit' must be an integer from 16 to 1099511627776");
  ExpectBadManifest("memory_limit: 1\n", 4, 15, "'memory_limit' must be an integer from 16");
  ExpectBadManifest("memory_limit: -5\n", 4, 15, "not '-5'");
  ExpectBadManifest("opt_level: 99\n", 4, 12, "'opt_level' must be an integer from 0 to 3");
  ExpectBadManifest("threads: 100000\n", 4, 10, "'threads' must be an integer from 1 to 1024");
  ExpectBadManifest("threads: [1]\n", 4, 10, "'threads' must be an integer");
  ExpectBadManifest("pass_timeout: 1e300\n", 4, 15,
                    "'pass_timeout' must be a number of seconds from 0.001 to 1000000");
  ExpectBadManifest("pass_timeout: nan\n", 4, 15, "not 'nan'");
  ExpectBadManifest("pass_timeout: 1e-300\n", 4, 15, "not '1e-300'");
  ExpectBadManifest("plugins: [{name: x}]\n", 4, 11, "a plugin needs a 'path'");
  ExpectBadManifest("plugins: 5\n", 4, 10, "'plugins' must be a list");
}

TEST(ReproducerTest, ManifestRoundTripsControlCharacters) {
  std::string tmp = ::testing::TempDir();
  std::string input = tmp + "/in.plir";
  std::ofstream(input) << "def @main() { () }\n";
  Reproducer r;
  r.failure = "pass X crashed\r\r\rdetail\r";
  r.command = {"plir-opt", "in\r\r.plir", "--passes", "X"};
  r.plugins.push_back({"/p/lib\rx.so", "x\r", "1.0", "ab"});
  r.opt_level = 2;
  auto dir = WriteReproducer(tmp, input, ".plir", "version: 1\npasses: []\n", r);
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  auto back = ReadReproducer(*dir);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->failure, r.failure);
  EXPECT_EQ(back->command, r.command);
  ASSERT_EQ(back->plugins.size(), 1u);
  EXPECT_EQ(back->plugins[0].path, r.plugins[0].path);
  EXPECT_EQ(back->plugins[0].name, r.plugins[0].name);
  EXPECT_EQ(back->plugins[0].version, "1.0");
  EXPECT_EQ(back->plugins[0].sha256, "ab");
  EXPECT_EQ(back->opt_level, 2);
}

TEST(ReproducerTest, CheckExecutionSettingsRoundTrip) {
  std::string tmp = ::testing::TempDir();
  std::string input = tmp + "/in2.plir";
  std::ofstream(input) << "def @main() { () }\n";
  Reproducer r;
  r.check.enabled = true;
  r.check.entry = "main";
  r.check.params = "/w/weights.safetensors";
  r.check.tolerance = "0.001,1e-06";
  r.check.seed = 7;
  auto dir = WriteReproducer(tmp, input, ".plir", "version: 1\npasses: []\n", r);
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  auto back = ReadReproducer(*dir);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->check.enabled);
  EXPECT_EQ(back->check.entry, "main");
  EXPECT_EQ(back->check.inputs, "");
  EXPECT_EQ(back->check.params, "/w/weights.safetensors");
  EXPECT_EQ(back->check.tolerance, "0.001,1e-06");
  EXPECT_EQ(back->check.seed, 7u);

  Reproducer plain;
  auto dir2 = WriteReproducer(tmp, input, ".plir", "version: 1\npasses: []\n", plain);
  ASSERT_TRUE(dir2.ok());
  auto back2 = ReadReproducer(*dir2);
  ASSERT_TRUE(back2.ok());
  EXPECT_FALSE(back2->check.enabled);
}

}  // namespace
}  // namespace plir
