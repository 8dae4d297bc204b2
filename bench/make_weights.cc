// make_weights: writes a weights file and the model that uses it, for the
// lazy-parameter benchmark (bench/lazy_rss.sh), the README's main job and
// plir-run's tests.
//
//   make_weights --count N --dim D --weights W.safetensors --model M.plir
//                [--dtype float32|int32] [--prefix w] [--seed S]
//
// The file holds N weights `w0`..`w{N-1}` of D x D elements (float32:
// 4*D*D bytes each; D = 2048 is 16 MiB), stored transposed. The model's
// @main(%x, %w0, ...) transposes each weight (permute_dims: weight-only
// work that LiftTransformParams lifts) and sums x @ w_i^T.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>

#include "interpreter/safetensors.h"

int main(int argc, char** argv) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("make_weights: chdir");
  }
  CLI::App app{"make_weights: a weights file and a model for the lazy-parameter benchmark"};
  int64_t count = 4, dim = 64;
  uint64_t seed = 1;
  std::string weights, model, dtype = "float32", prefix = "w";
  app.add_option("--count", count, "number of weights")->check(CLI::Range(1, 100000));
  app.add_option("--dim", dim, "each weight is dim x dim")->check(CLI::Range(1, 1 << 20));
  app.add_option("--dtype", dtype, "float32 or int32")->check(CLI::IsMember({"float32", "int32"}));
  app.add_option("--prefix", prefix, "tensor name prefix (default w)");
  app.add_option("--seed", seed, "random seed");
  app.add_option("--weights", weights, "safetensors file to write")->required();
  app.add_option("--model", model, "model file (.plir) to write");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  plir::DataType dt = dtype == "int32" ? plir::DataType::kInt32 : plir::DataType::kFloat32;
  auto w = plir::SafetensorsWriter::Create(weights);
  if (!w.ok()) {
    std::cerr << "make_weights: " << w.status().message() << "\n";
    return 1;
  }
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < count; ++i) {
    // One weight in memory at a time: the writer spools it to disk.
    plir::Tensor t;
    t.dtype = dt;
    t.shape = {dim, dim};
    auto buf = std::make_shared<plir::WritableTensorBytes>(
        std::string(static_cast<size_t>(dim * dim) * 4, '\0'));
    for (int64_t k = 0; k < dim * dim; ++k) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      if (dt == plir::DataType::kFloat32) {
        float f = static_cast<float>(static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1);
        std::memcpy(buf->mutable_data() + k * 4, &f, 4);
      } else {
        int32_t v = static_cast<int32_t>(state % 2001) - 1000;
        std::memcpy(buf->mutable_data() + k * 4, &v, 4);
      }
    }
    t.data = std::move(buf);
    plir::Status s = (*w)->Add(i, prefix + std::to_string(i), t);
    if (!s.ok()) {
      std::cerr << "make_weights: " << s.message() << "\n";
      return 1;
    }
  }
  plir::Status s = (*w)->Finish();
  if (!s.ok()) {
    std::cerr << "make_weights: " << s.message() << "\n";
    return 1;
  }
  if (!model.empty()) {
    std::string ty =
        "Tensor[(" + std::to_string(dim) + ", " + std::to_string(dim) + "), " + dtype + "]";
    std::string row = "Tensor[(1, " + std::to_string(dim) + "), " + dtype + "]";
    std::ofstream out(model);
    out << "// " << count << " weights of " << dim << "x" << dim << " " << dtype
        << ", stored transposed: made by bench/make_weights\n";
    out << "def @main(%x: " << row;
    for (int64_t i = 0; i < count; ++i) out << ", %w" << i << ": " << ty;
    out << ") -> " << row << " attrs {num_input = 1, global_symbol = \"main\"} {\n  dataflow {\n";
    for (int64_t i = 0; i < count; ++i) {
      out << "    %t" << i << " = permute_dims(%w" << i << ");\n";
      out << "    %p" << i << " = matmul(%x, %t" << i << ");\n";
      if (i > 0)
        out << "    %s" << i << " = add(%s" << i - 1 << ", %p" << i << ");\n";
      else
        out << "    %s0 = %p0;\n";
    }
    out << "    output %s" << count - 1 << ";\n  }\n  %s" << count - 1 << "\n}\n";
    if (!out) {
      std::cerr << "make_weights: cannot write " << model << "\n";
      return 1;
    }
  }
  return 0;
}
