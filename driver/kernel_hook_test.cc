// The kernel hook (PluginLoader::SetKernelHook) that plir-opt and plir-run
// set: every call of a plugin's kernel is seen, with the op (or extern) and
// the plugin, and its end. A test of its own: test_good, which
// plugin_loader_test loads, has an op of the same name as test_kernels.
#include <gtest/gtest.h>

#include "driver/plugin_loader.h"
#include "kernels/extern_kernels.h"
#include "kernels/tensor.h"

namespace plir {
namespace {

TEST(KernelHookTest, SeesEveryCallOfAPluginsKernel) {
  PluginLoader loader;
  std::vector<std::string> seen;
  loader.SetKernelHook([&](const std::string* what) { seen.push_back(what ? *what : "none"); });
  auto r = loader.LoadPath("testing/plugins/libplir_test_kernels.so");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string plugin = " of plugin test_kernels 1.0 (" + r->path + ")";
  EXPECT_TRUE(seen.empty());  // registering calls no kernel
  Op sq = OpRegistry::Global().Lookup("test.square");
  ASSERT_TRUE(sq);
  Tensor x = MakeTensor(DataType::kFloat32, {2}, [](int64_t i) { return i + 2.0; });
  StatusOr<Tensor> y = sq->def().eval({x}, Attrs());
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(y->GetDouble(1), 9.0);
  auto neg = KernelRegistry::Global().Lookup("test_negate");
  ASSERT_TRUE(neg);
  StatusOr<Tensor> z = neg->fn({x}, Type());
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(z->GetDouble(0), -2.0);
  EXPECT_EQ(seen, (std::vector<std::string>{"op test.square" + plugin, "none",
                                            "extern @test_negate" + plugin, "none"}));
}

}  // namespace
}  // namespace plir
