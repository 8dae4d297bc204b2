// Replays the importer's fuzz target over fuzz_corpus/ (node-test models)
// and deterministic mutations of them: byte-level (flips, truncations,
// splices, inserted varints) and structural (a parsed model with an
// attribute, a dimension, an op type, an input list or the opset changed,
// serialized again, so that the converters see well-formed models with
// hostile values), so `bazel test` exercises it without libFuzzer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/onnx/converter.h"
#include "frontends/onnx/onnx_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void RunTarget(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string Mutate(std::string s, std::mt19937_64& rng, const std::vector<std::string>& pool) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t at = s.empty() ? 0 : rng() % s.size();
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
        break;
      case 1:
        if (!s.empty()) s[at] = static_cast<char>(rng());
        break;
      case 2:
        s.resize(at);
        break;
      case 3:
        s.erase(at, std::min<size_t>(s.size() - at, 1 + rng() % 16));
        break;
      case 4:
        s.insert(at, std::string(1, static_cast<char>(0x80 | (rng() & 0x7f))) +
                         std::string(1, static_cast<char>(rng() & 0x7f)));
        break;
      default: {
        const std::string& o = pool[rng() % pool.size()];
        size_t from = o.empty() ? 0 : rng() % o.size();
        s.insert(at, o.substr(from, 1 + rng() % 64));
      }
    }
  }
  return s;
}

int64_t HostileInt(std::mt19937_64& rng) {
  static const int64_t v[] = {0,    -1,      1,         2,         3,         -2,      7,
                              1000, 1 << 20, INT32_MAX, INT64_MAX, INT64_MIN, -1000000};
  return v[rng() % (sizeof v / sizeof v[0])];
}

std::string MutateModel(const std::string& bytes, std::mt19937_64& rng,
                        const std::vector<std::string>& ops) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) return bytes;
  onnx::GraphProto* g = m.mutable_graph();
  int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    onnx::NodeProto* n =
        g->node_size() ? g->mutable_node(static_cast<int>(rng() % g->node_size())) : nullptr;
    switch (rng() % 8) {
      case 0:
      case 1:
        if (n && n->attribute_size()) {
          onnx::AttributeProto* a =
              n->mutable_attribute(static_cast<int>(rng() % n->attribute_size()));
          if (a->ints_size())
            a->set_ints(static_cast<int>(rng() % a->ints_size()), HostileInt(rng));
          else if (a->has_i())
            a->set_i(HostileInt(rng));
          else if (a->has_f())
            a->set_f(rng() % 2 ? 0.0f : -1e30f);
          else if (a->has_s())
            a->set_s(rng() % 2 ? "" : "SAME_LOWER");
        }
        break;
      case 2:
        if (n) {
          onnx::AttributeProto* a = n->add_attribute();
          static const char* names[] = {"axis",  "axes",     "strides", "pads",      "kernel_shape",
                                        "group", "keepdims", "perm",    "blocksize", "k"};
          a->set_name(names[rng() % 10]);
          if (rng() % 2) {
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(HostileInt(rng));
          } else {
            a->set_type(onnx::AttributeProto::INTS);
            for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) a->add_ints(HostileInt(rng));
          }
        }
        break;
      case 3:
        if (n) n->set_op_type(ops[rng() % ops.size()]);
        break;
      case 4:
        if (n && n->input_size()) {
          if (rng() % 2)
            n->mutable_input()->RemoveLast();
          else
            n->add_input(n->input(static_cast<int>(rng() % n->input_size())));
        }
        break;
      case 5:
        if (g->input_size()) {
          auto* tt = g->mutable_input(static_cast<int>(rng() % g->input_size()))
                         ->mutable_type()
                         ->mutable_tensor_type();
          if (tt->has_shape() && tt->shape().dim_size())
            tt->mutable_shape()
                ->mutable_dim(static_cast<int>(rng() % tt->shape().dim_size()))
                ->set_dim_value(HostileInt(rng) & 0xffffff);
        }
        break;
      case 6:
        if (g->initializer_size()) {
          auto* t = g->mutable_initializer(static_cast<int>(rng() % g->initializer_size()));
          if (t->dims_size())
            t->set_dims(static_cast<int>(rng() % t->dims_size()), HostileInt(rng));
        }
        break;
      default:
        if (m.opset_import_size())
          m.mutable_opset_import(0)->set_version(1 + static_cast<int64_t>(rng() % 19));
    }
  }
  return m.SerializeAsString();
}

TEST(ImporterFuzzTest, CorpusAndMutations) {
  std::vector<std::string> pool;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator("frontends/onnx/fuzz_corpus"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    pool.push_back(ss.str());
  }
  ASSERT_GE(pool.size(), 5u) << "no corpus";
  for (const std::string& s : pool) RunTarget(s);
  std::mt19937_64 rng(20261201);
  int n = 2000;
  if (const char* e = std::getenv("FUZZ_MUTATIONS")) n = std::atoi(e);
  for (int i = 0; i < n; ++i) RunTarget(Mutate(pool[rng() % pool.size()], rng, pool));
  std::vector<std::string> ops = plir::onnx_import::Converters().Ops();
  for (int i = 0; i < n; ++i) RunTarget(MutateModel(pool[rng() % pool.size()], rng, ops));
}

}  // namespace
