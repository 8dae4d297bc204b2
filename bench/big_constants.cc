// big_constants: a module whose weights are bound as constants, for the
// large-constant load benchmark (bench/big_constants.sh).
//
//   big_constants gen OUT.plirb [--mb 300] [--tensor-mb 16] [--version 3]
//       def @main() { (const_0, ..., const_k) }: float32 vectors of
//       --tensor-mb MiB each (the last one shorter), --mb MiB in all,
//       pseudo-random, saved as binary version --version.
//   big_constants load FILE [--verify] [--touch] [--repeat N]
//       Loads FILE as the tools do (LoadModuleFile: mapped; version 3
//       constants view the mapping) and prints the load time in ms;
//       --verify checks the tensor data's checksum first (version 3),
//       --touch then reads every byte of every constant (a sum), as a
//       kernel would.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "ir/module.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"

namespace {

double Ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int Gen(const std::string& out, uint64_t mb, uint64_t tensor_mb, int version) {
  using namespace plir;
  uint64_t total = mb << 20, per = tensor_mb << 20;
  std::vector<Expr> fields;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint64_t done = 0; done < total;) {
    uint64_t n = std::min(per, total - done) / 4 * 4;
    std::string bytes(n, '\0');
    for (uint64_t i = 0; i + 8 <= n; i += 8) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      uint64_t v = state & 0x3fffffff3fffffffull;  // finite floats
      std::memcpy(&bytes[i], &v, 8);
    }
    Type t = TensorTypeNode::Make({Dim::Const(static_cast<int64_t>(n / 4))}, DataType::kFloat32);
    auto c = ConstantNode::Make(t, std::make_shared<const TensorBytes>(std::move(bytes)));
    if (!c.ok()) {
      std::fprintf(stderr, "big_constants: %s\n", c.status().message().c_str());
      return 1;
    }
    fields.push_back(*c);
    done += n;
  }
  Expr tuple = TupleNode::Make(fields);
  auto m =
      Module::Make({FunctionNode::Make("main", {}, tuple->type(), SeqExprNode::Make({}, tuple))});
  if (!m.ok()) return 1;
  BinarySaveOptions o;
  o.version = version;
  std::string b = SaveBinary(*m, o);
  std::ofstream(out, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
  std::printf("%s: %zu bytes, %zu constants, version %d\n", out.c_str(), b.size(), fields.size(),
              version);
  return 0;
}

int Load(const std::string& path, bool verify, bool touch) {
  auto t0 = std::chrono::steady_clock::now();
  if (verify) {
    auto f = plir::ModuleFile::Open(path);
    if (!f.ok()) return 1;
    if (plir::Status s = plir::VerifyBinaryTensorData(*f); !s.ok()) {
      std::fprintf(stderr, "big_constants: %s\n", s.message().c_str());
      return 1;
    }
  }
  auto m = plir::LoadModuleFile(path);
  if (!m.ok()) {
    std::fprintf(stderr, "big_constants: %s\n", m.status().message().c_str());
    return 1;
  }
  double load_ms = Ms(t0);
  uint64_t sum = 0, bytes = 0, borrowed = 0;
  auto* f = static_cast<const plir::FunctionNode*>(m->items()[0].get());
  auto* t = static_cast<const plir::TupleNode*>(f->body()->result().get());
  for (const plir::Expr& e : t->fields()) {
    auto* c = static_cast<const plir::ConstantNode*>(e.get());
    bytes += c->data().size();
    borrowed += c->data().borrowed();
    if (touch) {
      const char* p = c->data().data();
      for (size_t i = 0; i + 8 <= c->data().size(); i += 8) {
        uint64_t v;
        std::memcpy(&v, p + i, 8);
        sum += v;
      }
    }
  }
  std::printf(
      "load %.1f ms, total %.1f ms, %llu bytes, %llu of %zu constants borrowed (sum %llx)\n",
      load_ms, Ms(t0), static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(borrowed), t->fields().size(),
      static_cast<unsigned long long>(sum));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("big_constants: chdir");
  }
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: big_constants gen OUT [--mb N] [--tensor-mb N] [--version V]\n"
                 "       big_constants load FILE [--verify] [--touch]\n");
    return 2;
  }
  std::string cmd = argv[1], path = argv[2];
  uint64_t mb = 300, tensor_mb = 16;
  int version = plir::kBinaryFormatVersion;
  bool verify = false, touch = false;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify")
      verify = true;
    else if (a == "--touch")
      touch = true;
    else if (a == "--mb" && i + 1 < argc)
      mb = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--tensor-mb" && i + 1 < argc)
      tensor_mb = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--version" && i + 1 < argc)
      version = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "big_constants: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (cmd == "gen") return Gen(path, mb, tensor_mb, version);
  if (cmd == "load") return Load(path, verify, touch);
  std::fprintf(stderr, "big_constants: unknown command %s\n", cmd.c_str());
  return 2;
}
