#include "testing/ir_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ir/text/parser.h"

namespace plir::testing {

Module ParseOrFail(const std::string& text) {
  StatusOr<Module> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : Module();
}

const VarBindingNode* FindBinding(const SeqExprNode& body, const std::string& name) {
  for (const Block& b : body.blocks())
    for (const Binding& x : b->bindings()) {
      if (x->var()->name_hint() == name) return x.get();
      if (auto* i = As<IfNode>(x->value())) {
        if (auto* r = FindBinding(*i->then_body(), name)) return r;
        if (auto* r = FindBinding(*i->else_body(), name)) return r;
      }
    }
  return nullptr;
}

const VarBindingNode* FindBinding(const Function& f, const std::string& name) {
  return FindBinding(*f->body(), name);
}

std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> ListTestFiles(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string p = entry.path().string();
    if (p.size() >= suffix.size() &&
        p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace plir::testing
