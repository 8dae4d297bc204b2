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

}  // namespace
}  // namespace plir
