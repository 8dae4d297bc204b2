// Reproducer manifests read back what was written, control characters
// included (a failure message or a command-line argument with carriage
// returns: yaml-cpp would write them as plain scalars and lose them).
#include "driver/reproducer.h"

#include <gtest/gtest.h>

#include <fstream>

namespace plir {
namespace {

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
