// gen_model: writes one generated model for the zoo (and the sharding
// benchmark): the benchmark workloads of bench/workloads.h or a seeded
// random module of testing/random_module.h.
//
//   gen_model --kind chain|resnet|transformer|random --bindings N
//             [--per-function M] [--seed S] -o OUT.plir|.plirb|.json
//
// The output form follows -o's extension; the file is written atomically.
// The same arguments always give the same bytes.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "bench/workloads.h"
#include "driver/file_util.h"
#include "ir/serialize/serialize.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "testing/random_module.h"

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gen_model: write a generated PLIR model"};
  std::string kind, out;
  size_t bindings = 0, per_function = 0;
  uint64_t seed = 1;
  app.add_option("--kind", kind, "chain, resnet, transformer or random")
      ->required()
      ->check(CLI::IsMember({"chain", "resnet", "transformer", "random"}));
  app.add_option("--bindings", bindings, "about this many bindings")
      ->required()
      ->check(CLI::Range(size_t{1}, size_t{100000000}));
  app.add_option("--per-function", per_function,
                 "bindings per function (chain: default 10000; random: default all in one)")
      ->check(CLI::Range(size_t{1}, size_t{100000000}));
  app.add_option("--seed", seed, "random: the seed (default 1)");
  app.add_option("-o", out, "output file (.plir, .plirb or .json)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  plir::Module m;
  if (kind == "chain") {
    m = plir::bench::ChainModel(bindings, per_function ? per_function : 10000);
  } else if (kind == "resnet") {
    m = plir::bench::ResNetModel(bindings);
  } else if (kind == "transformer") {
    m = plir::bench::TransformerModel(bindings);
  } else {
    plir::testing::RandomModuleOptions o;
    o.seed = seed;
    o.num_bindings = bindings;
    if (per_function) o.bindings_per_function = per_function;
    m = plir::testing::GenerateRandomModule(o);
  }
  if (plir::Status s = plir::Verify(m); !s.ok()) {
    std::fprintf(stderr, "gen_model: the generated module does not verify: %s\n",
                 s.message().c_str());
    return 1;
  }
  std::string bytes = EndsWith(out, ".plirb")  ? plir::SaveBinary(m)
                      : EndsWith(out, ".json") ? plir::SaveJson(m)
                                               : plir::PrintModule(m);
  if (plir::Status s = plir::WriteFileAtomically(out, bytes); !s.ok()) {
    std::fprintf(stderr, "gen_model: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
