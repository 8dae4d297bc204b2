// Crash reproducers: when a pass fails (crashes, hits a limit, returns an
// error, or leaves an ill-formed module), plir-opt writes a directory that
// replays the failure with `plir-opt --reproduce DIR`:
//
//   DIR/input.plir (or .json, .plirb)   the input module, byte for byte
//   DIR/pipeline.yaml   the pipeline up to and including the failing step,
//                       canonical YAML
//   DIR/reproducer.yaml the manifest: input, pipeline, plugins (path, name,
//                       version, sha256), opt level, threads, limits, the
//                       command line, the failure as reported, and
//                       --check-execution's settings if it was on (the
//                       inputs and weights files by absolute path: they
//                       are not copied)
#ifndef PLIR_DRIVER_REPRODUCER_H_
#define PLIR_DRIVER_REPRODUCER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/status.h"

namespace plir {

struct ReproducerPlugin {
  std::string path;
  std::string name;
  std::string version;
  std::string sha256;  // hex
};

// plir-opt --check-execution as the failing run had it (replayed too).
struct ReproducerCheck {
  bool enabled = false;
  std::string entry;
  std::string inputs;  // absolute path of the inputs file, or empty (random)
  std::string params;  // absolute path of the weights file, or empty
  std::string tolerance;
  uint64_t seed = 0;
};

struct Reproducer {
  // In the bundle: "input.plir" etc.; or, for an input larger than
  // max_input_copy_bytes, the user's own file by absolute path, with its
  // SHA-256 in input_sha256 (checked on --reproduce).
  std::string input_file;
  std::string input_sha256;
  uint64_t max_input_copy_bytes = uint64_t{64} << 20;
  std::string pipeline_file;  // in the bundle: "pipeline.yaml"
  std::vector<ReproducerPlugin> plugins;
  int opt_level = -1;
  int threads = 0;
  double pass_timeout_s = 0;
  int64_t memory_limit_mb = 0;
  std::vector<std::string> command;
  std::string failure;
  ReproducerCheck check;
};

// Parses "PATH\tNAME\tVERSION\tSHA256" lines (the plugins the child loaded,
// hashed by the child: the supervisor never opens a path it read from the
// child). A line with fewer fields leaves the rest empty; at most 4,096
// lines, fields of at most 4,096 bytes.
std::vector<ReproducerPlugin> PluginsFromLines(const std::string& lines);

// Creates a new directory under `parent` (default: $TMPDIR or /tmp) and
// writes the bundle: `input` is copied byte for byte (a path; for standard
// input, a file holding what was read) unless it is larger than
// r.max_input_copy_bytes: then a file of the user's is named by path and
// SHA-256, and standard input is an error (no bundle). `pipeline_yaml` is
// written as is. Returns the directory; on any error the directory is
// removed again (no empty or partial bundle is left).
StatusOr<std::string> WriteReproducer(const std::string& parent, const std::string& input_path,
                                      const std::string& input_ext,
                                      const std::string& pipeline_yaml, Reproducer r);

// Reads DIR/reproducer.yaml; paths in the result are absolute (inside DIR
// for the input and pipeline; a relative plugin or --check-execution path
// is resolved against DIR, never against the current directory).
StatusOr<Reproducer> ReadReproducer(const std::string& dir);

}  // namespace plir

#endif  // PLIR_DRIVER_REPRODUCER_H_
