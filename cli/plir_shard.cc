// plir-shard: splits a module by function into shards that build actions
// compile apart, and merges the compiled shards (cli/module_shards.h).
//
//   plir-shard split IN -o SHARD0 [-o SHARD1]...   one shard per -o
//   plir-shard merge SHARD0 SHARD1... -o OUT       in shard order
//
// Each shard holds a contiguous run of the module's items, and externs
// (marked shard_extern) of the other shards' functions it calls. Running
// function passes on every shard and merging gives the bytes that running
// them on the whole module gives. Files may be text, JSON or binary (read by
// magic, written by extension: .plirb, .json, else text), written
// atomically; on an error nothing is written. Exit: 0, 1 on bad input, 2 on
// a usage error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/module_shards.h"
#include "driver/file_util.h"
#include "driver/tool_options.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "plir-shard: %s\n", msg.c_str());
  return 1;
}

std::string Encode(const plir::Module& m, const std::string& path) {
  if (EndsWith(path, ".plirb")) return plir::SaveBinary(m);
  if (EndsWith(path, ".json")) return plir::SaveJson(m);
  return plir::PrintModule(m);
}

// Writes every file, or none: each goes to a temporary name first.
int WriteAll(const std::vector<plir::Module>& modules, const std::vector<std::string>& paths) {
  std::vector<plir::AtomicOutput> outs;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto out = plir::AtomicOutput::Create(paths[i]);
    if (!out.ok()) return Fail(paths[i] + ": " + out.status().message());
    if (plir::Status s = out->Write(Encode(modules[i], paths[i])); !s.ok())
      return Fail(paths[i] + ": " + s.message());
    outs.push_back(std::move(out).value());
  }
  for (size_t i = 0; i < outs.size(); ++i)
    if (plir::Status s = outs[i].Commit(); !s.ok()) return Fail(paths[i] + ": " + s.message());
  return 0;
}

plir::StatusOr<plir::Module> Load(const std::string& path) {
  PLIR_ASSIGN_OR_RETURN(plir::Module m, plir::LoadModuleFile(path));
  if (plir::Status s = plir::Verify(m); !s.ok()) return s.WithPrefix(path);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  plir::GuardStandardFds();  // no shard file lands on a closed fd 0-2
  plir::EnterBuildWorkingDirectory("plir-shard");
  CLI::App app{"plir-shard: split a module by function into shards, and merge them"};
  app.require_subcommand(1);
  std::string input;
  std::vector<std::string> shard_outputs, shard_inputs;
  std::string output;
  CLI::App* split = app.add_subcommand("split", "split IN into one shard per -o");
  split->add_option("input", input, "the module")->required();
  split->add_option("-o", shard_outputs, "a shard file (repeat: one per shard)")->required();
  CLI::App* merge = app.add_subcommand("merge", "merge shards, in the order given");
  merge->add_option("shards", shard_inputs, "the shard files")->required();
  merge->add_option("-o", output, "the merged module")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (split->parsed()) {
    auto m = Load(input);
    if (!m.ok()) return Fail(m.status().message());
    auto shards = plir::SplitByFunction(*m, shard_outputs.size());
    if (!shards.ok()) return Fail(input + ": " + shards.status().message());
    for (size_t k = 0; k < shards->size(); ++k)
      if (plir::Status s = plir::Verify((*shards)[k]); !s.ok())
        return Fail(input + ": shard " + std::to_string(k) + " does not verify: " + s.message());
    return WriteAll(*shards, shard_outputs);
  }
  std::vector<plir::Module> shards;
  for (const std::string& path : shard_inputs) {
    auto m = Load(path);
    if (!m.ok()) return Fail(m.status().message());
    shards.push_back(std::move(m).value());
  }
  auto merged = plir::MergeShards(shards);
  if (!merged.ok()) return Fail(merged.status().message());
  if (plir::Status s = plir::Verify(*merged); !s.ok())
    return Fail("the merged module does not verify: " + s.message());
  return WriteAll({*merged}, {output});
}
