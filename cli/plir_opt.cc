// plir-opt: runs pass pipelines on PLIR modules.
//
//   plir-opt INPUT [-o OUT] [--pipeline FILE.yaml | --passes A,B]
//            [--plugin PATH]... [--plugin-path DIR]... [--opt-level N]
//            [--time-passes] [--print-before-all] [--print-after-all]
//            [--print-after P]... [--print-changed] [--verify-each]
//            [--check-input-unchanged] [--list-passes] [--emit-pipeline]
//            [--check-execution[=INPUTS.safetensors] [--params W.safetensors]
//             [--check-tolerance RTOL[,ATOL]] [--entry F] [--check-seed N]]
//            [--dump-ir-dir DIR] [--bisect-limit N]
//
// INPUT may be '-' (standard input), in text, JSON or binary form (detected
// by magic); --emit text|json|binary picks the output form. Plugins are searched along
// --plugin-path, then $PLIR_PLUGIN_PATH, then the pipeline's plugin_path,
// then the in-tree plugins next to this executable. Output is written
// atomically; on any error nothing is written. Exit status: 0 success,
// 1 input or pipeline error, 2 usage error.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cli/huge_page_new.h"
#include "cli/opt_program.h"
#include "driver/child_result.h"
#include "driver/execution_check.h"
#include "driver/file_util.h"
#include "driver/pass_debug.h"
#include "driver/pass_resolver.h"
#include "driver/pipeline.h"
#include "driver/plugin_loader.h"
#include "driver/reproducer.h"
#include "driver/sandbox.h"
#include "driver/supervised_child.h"
#include "driver/supervisor.h"
#include "driver/tool_options.h"
#include "ir/parallel.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "kernels/op_kernels.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"

namespace plir {
namespace {

using opt::EmitFormat;
using opt::Error;
using opt::Flags;
using opt::KeepUntilExit;
using opt::ProgramResult;
using opt::RunPipeline;
using opt::SplitList;

using Input = ChildInput;

void WriteBundle(const Flags& f, const Input& in, const RunState& state,
                 const std::string& failure) {
  if (f.no_reproducer || !f.reproduce.empty()) return;
  // Everything read from the page is bounded (RunState's readers); the
  // plugins are recorded as the child hashed them.
  const int step = state.top_step.load();
  std::string prefix = state.Prefix(step);
  if (prefix.empty()) return;  // not in a pass (or the page is not consistent)
  Reproducer r;
  r.plugins = PluginsFromLines(state.PluginsText());
  r.opt_level = f.opt_level;
  r.threads = f.threads;
  r.pass_timeout_s = f.pass_timeout_s > 0 ? f.pass_timeout_s : state.PassTimeoutSeconds();
  r.memory_limit_mb = f.memory_limit_mb > 0 ? f.memory_limit_mb : state.MemoryLimitMb();
  r.command = f.argv;
  r.failure = failure;
  r.max_input_copy_bytes = f.reproducer_max_input_bytes;
  if (f.check_execution) {
    auto abs = [](const std::string& p) {
      return p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string();
    };
    r.check.enabled = true;
    r.check.entry = f.entry;
    r.check.inputs = abs(f.check_inputs);
    r.check.params = abs(f.check_params);
    r.check.tolerance = f.check_tolerance;
    r.check.seed = f.check_seed;
  }
  auto dir = WriteReproducer(f.reproducer_dir, in.path, in.ext, prefix, std::move(r));
  if (!dir.ok()) {
    std::cerr << "plir-opt: could not write a crash reproducer: "
              << Printable(dir.status().message()) << "\n";
    return;
  }
  std::cerr << "plir-opt: reproducer written to " << *dir << "\n"
            << "plir-opt: replay it with: plir-opt --reproduce " << *dir << "\n";
}

// The output as the parent owns it: a temporary file beside -o, renamed
// into place only when the run succeeded; else standard output, written
// only once the result is checked. The child never holds either.
struct Output {
  std::optional<AtomicOutput> file;
};

StatusOr<Output> PrepareOutput(const Flags& f) {
  Output out;
  if (!f.output.empty() && f.output != "-") {
    PLIR_ASSIGN_OR_RETURN(AtomicOutput file, AtomicOutput::Create(f.output));
    out.file.emplace(std::move(file));
  }
  return out;
}

using Sink = std::function<Status(std::string_view)>;
// Writes bytes at an offset of what the sink wrote (a file's pwrite); empty
// where the output cannot be written out of order (a pipe, a device).
using SinkAt = std::function<Status(uint64_t, std::string_view)>;

// Writes what `produce` hands its sink, in order: to the temporary file
// beside -o (renamed into place at the end, removed on an error), or to
// standard output.
Status WriteOutput(Output& out, const std::function<Status(const Sink&, const SinkAt&)>& produce) {
  if (out.file) {
    SinkAt at;
    if (!out.file->in_place())
      at = [&](uint64_t offset, std::string_view bytes) {
        return WriteAllToFdAt(out.file->fd(), offset, bytes, out.file->path());
      };
    Status s = produce([&](std::string_view piece) { return out.file->Write(piece); }, at);
    if (!s.ok()) {
      out.file->Abort();
      return Internal("error writing the output: " + s.message());
    }
    return out.file->Commit();
  }
  std::cout.flush();
  std::fflush(stdout);
  return produce([](std::string_view piece) { return WriteAllToFd(1, piece, "standard output"); },
                 SinkAt());
}

Status WriteOutput(Output& out, std::span<const std::string_view> pieces) {
  return WriteOutput(out, [&](const Sink& sink, const SinkAt&) {
    for (std::string_view piece : pieces) PLIR_RETURN_IF_ERROR(sink(piece));
    return Status::Ok();
  });
}

// Hands `m` to `sink`, printed as -o's extension or --emit says.
// `verified`: `m` verifies, or the output is kept only if it does.
// `write_at`: the output is a file that can be written out of order.
Status ProduceModule(const Flags& f, const Module& m, const Sink& sink, bool verified,
                     const SinkAt& write_at) {
  const std::string emit = EmitFormat(f);
  if (emit == "binary") {
    // In pieces: the sections as the writer built them, the tensor data
    // straight from the constants (no file-sized string). Into a file, a
    // verified module's version 4 shards go out as they are done, the shard
    // table last, and their memory serves the next ones (peak RSS 167 ->
    // 148 MB at 1M ops in 1,000 functions, bench/RESULTS.md).
    BinarySaveOptions o;
    o.version = f.binary_version;
    if (verified) return SaveVerifiedBinaryTo(m, o, BinarySink{sink, write_at});
    const BinaryParts parts = SaveBinaryParts(m, o);
    for (std::string_view piece : parts.pieces) PLIR_RETURN_IF_ERROR(sink(piece));
    return Status::Ok();
  }
  if (emit == "json") return sink(SaveJson(m));
  // Text is written as it prints, a piece at a time: the whole text is
  // never held (at 1M ops it was the largest block of the parent's peak
  // RSS, doubled while its string grew).
  return PrintModuleTo(m, sink);
}

// Prints `m` and writes it (`verified`: as ProduceModule's).
Status WriteModule(const Flags& f, const Module& m, Output& out, bool verified) {
  return WriteOutput(out, [&](const Sink& sink, const SinkAt& at) {
    return ProduceModule(f, m, sink, verified, at);
  });
}

// Whether only PLIR's own code can run in the child: the plugins it can load
// are the bundled ones (beside this executable) and nothing else. That holds
// when nothing adds a plugin or a directory to the search: no --plugin,
// --plugin-path, $PLIR_PLUGIN_PATH, --extend or --reproduce, and a
// pipeline (its includes and extends expanded, read here by the parent)
// that names plugins only by name, no plugin_path and no Python file. The
// bundled plugins are built and installed with plir-opt, so trusting them is
// trusting plir-opt; a third party's plugin (or Python pass) is never
// trusted. Decided from the parent's own command line, environment and
// files, never from the child's word; the child's loader enforces it again
// (set_bundled_only), before any file is opened.
bool OnlyBundledPluginsCanRun(const Flags& f) {
  if (!f.plugins.empty() || !f.plugin_dirs.empty() || !f.extends.empty() || !f.reproduce.empty())
    return false;
  if (const char* env = std::getenv("PLIR_PLUGIN_PATH"); env && *env && !f.hermetic_plugins)
    return false;
  if (f.pipeline.empty()) return true;
  StatusOr<PipelineSpec> spec = ParsePipelineFile(f.pipeline);
  if (!spec.ok() || !spec->python.empty() || !spec->plugin_path.empty()) return false;
  for (const PluginSourceSpec& s : spec->plugin_sources)
    if (s.kind == PluginSourceSpec::Kind::kSearchDir ||
        (s.kind == PluginSourceSpec::Kind::kPlugin && s.is_path))
      return false;
  return true;
}

// A run in which only PLIR's own code can run (no plugin at all, or only the
// bundled ones: OnlyBundledPluginsCanRun) has no third party's result for
// the parent to check. Its child writes the output itself, into the
// parent's temporary file beside -o, which the parent renames into place
// only after the child has exited 0: a crash, a limit or an error still
// leaves the target untouched, and the child keeps its sandbox, limits and
// crash report. It verifies its result as the parent would have (also
// under `verify: none`). What is saved is the hand-over of the module (the
// child's binary save, the parent's load and verify: about 1 CPU s at 1M
// ops, bench/RESULTS.md). A device, pipe or standard output (written where
// it is, so not undone by an abort) still gets the checked hand-over, and
// so does --check-result.
bool ChildWritesOutput(const Flags& f, const Output& out) {
  return out.file && !out.file->in_place() && !f.check_result && !f.list_passes && !f.list_ops &&
         !f.emit_pipeline && OnlyBundledPluginsCanRun(f);
}

// Writes what the program produced: the module, or its text.
Status CommitResult(const Flags& f, const ProgramResult& r, Output& out) {
  if (r.module) return WriteModule(f, *r.module, out, r.verified);
  const std::string_view text = r.text;
  return WriteOutput(out, std::span<const std::string_view>(&text, 1));
}

// In the parent: the child's result, checked by the parent's own code. A
// module is loaded and verified; text (pass and op lists, a pipeline) gets
// its control bytes escaped, as any text from a plugin does.
StatusOr<ProgramResult> TakeChildResult(const Flags& f, int result_fd) {
  PLIR_ASSIGN_OR_RETURN(ChildResult r, ReadChildResult(result_fd, f.max_input_bytes));
  ProgramResult out;
  const bool wants_text = f.list_passes || f.list_ops || f.emit_pipeline;
  if (wants_text != (r.kind() == ChildResultKind::kText))
    return FailedPrecondition("the child handed over a result of the wrong kind");
  if (wants_text) {
    out.text = Printable(r.payload());
    return out;
  }
  PLIR_ASSIGN_OR_RETURN(Module m, LoadResultModule(r));  // verified there
  KeepUntilExit(m);
  out.module = std::move(m);
  out.verified = true;
  return out;
}

// What the child may read and write, for the sandbox (driver/sandbox.h):
// the system's files, and every file the command line and the pipeline
// name.
SandboxPolicy BuildSandboxPolicy(const Flags& f, const Input& in) {
  SandboxPolicy p = NewSandboxPolicy();
  auto add = [&](const std::string& path) {
    if (!path.empty() && path != "-") AddReadPath(path, &p);
  };
  if (in.fd < 0) add(in.path);
  for (const std::string& plugin : f.plugins) AddPluginReadPath(plugin, &p);
  for (const std::string& d : f.plugin_dirs) add(d);
  // The in-tree plugins' directories as the child scans them (a runfiles
  // link farm under bazel test: AddReadPath follows its links).
  if (!f.hermetic_plugins)
    for (const std::string& d : DefaultPluginDirs()) add(d);
  if (const char* env = std::getenv("PLIR_PLUGIN_PATH"); env && !f.hermetic_plugins)
    for (const std::string& d : SplitList(env, ':')) add(d);
  if (!f.pipeline.empty()) AddYamlReferencedPaths(f.pipeline, &p);
  for (const std::string& e : f.extends) AddYamlReferencedPaths(e, &p);
  add(f.check_inputs);
  add(f.check_params);
  add(f.reproduce);
  for (const std::string& r : f.sandbox_read) add(r);
  if (!f.dump_ir_dir.empty()) p.write.push_back(f.dump_ir_dir);
  return p;
}

int Main(Flags f) {
  if (f.threads > 0) SetDefaultThreads(f.threads);
  ModuleFile::SetMaxBytes(f.max_input_bytes);
  const bool needs_input = !(f.list_passes || f.list_ops || f.emit_pipeline);
  if (needs_input && f.input.empty())
    return Error("plir-opt: an input file is required (or --list-passes)");
  Input in;
  if (needs_input) {
    StatusOr<Input> i = PrepareChildInput(f.input, f.max_input_bytes);
    if (!i.ok()) return Error("plir-opt: " + Printable(i.status().message()));
    in = *i;
  }
  StatusOr<Output> prepared = PrepareOutput(f);
  if (!prepared.ok()) return Error("plir-opt: " + Printable(prepared.status().message()));
  Output out = std::move(prepared).value();

  if (f.no_isolate) {
    if (f.sandbox == "require")
      return Error("plir-opt: --sandbox=require needs the supervised child (not --no-isolate)");
    RunState* state = NewRunState(false);
    if (f.pass_timeout_s > 0 || f.timeout_s > 0)
      std::cerr << "warning: --pass-timeout and --timeout need isolation; ignored with "
                   "--no-isolate\n";
    ProgramResult result;
    int rc = RunPipeline(f, in.path, in.name, state, &result);
    if (rc != 0 && state->PassFailureWantsReproducer())
      WriteBundle(f, in, *state, state->FailureText());
    if (rc == 0)
      if (Status s = CommitResult(f, result, out); !s.ok())
        return Error("plir-opt: " + Printable(s.message()));
    return rc;
  }

  // The sandbox: probed once, here; entered by every child.
  const SandboxMode sandbox_mode = *ParseSandboxMode(f.sandbox);
  StatusOr<SandboxSupport> support = ProbeSandboxFor(sandbox_mode, "plir-opt");
  if (!support.ok()) return Error(support.status().message());
  if (!f.dump_ir_dir.empty()) {  // the child may write there, but not create it
    std::error_code ec;
    std::filesystem::create_directories(f.dump_ir_dir, ec);
    if (ec)
      return Error("plir-opt: --dump-ir-dir: cannot create " + Printable(f.dump_ir_dir) + ": " +
                   ec.message());
  }
  ChildSetup setup;
  setup.tool = "plir-opt";
  setup.sandbox_mode = sandbox_mode;
  setup.sandbox_support = *support;
  setup.sandbox_policy = BuildSandboxPolicy(f, in);
  setup.memory_limit_mb = f.memory_limit_mb;

  RunState* state = NewRunState(true);
  if (!state) return Error("plir-opt: cannot allocate shared memory for the supervisor");
  StatusOr<int> result_fd = CreateResultFile();
  if (!result_fd.ok()) return Error("plir-opt: " + result_fd.status().message());
  // The supervisor's own limits: one deadline for the whole run (every
  // attempt), whatever the child says in the page.
  setup.limits = SupervisorLimits(f.timeout_s, f.load_timeout_s);
  setup.fds = {*result_fd};
  if (in.fd >= 0) setup.fds.push_back(in.fd);
  const bool child_writes = ChildWritesOutput(f, out);
  f.child_writes_output = child_writes;
  if (child_writes) setup.fds.push_back(out.file->fd());
  if (f.verbose)
    std::cerr << (child_writes ? "note: only PLIR's own code can run: the child writes the output\n"
                               : "note: the parent loads and verifies the child's result\n");
  // Plugins that crash while loading during a scan (--list-passes, a pass
  // looked for on the path) are skipped, named, and the run starts over.
  for (int attempt = 0;; ++attempt) {
    new (state) RunState;  // not RunState(): see RunState::prefixes
    if (f.pass_timeout_s > 0)
      state->pass_timeout_ns.store(static_cast<int64_t>(f.pass_timeout_s * 1e9));
    if (f.memory_limit_mb > 0) state->memory_limit_mb.store(f.memory_limit_mb);
    if (ftruncate(*result_fd, 0) != 0) return Error("plir-opt: cannot reset the result file");
    if (child_writes &&
        (ftruncate(out.file->fd(), 0) != 0 || lseek(out.file->fd(), 0, SEEK_SET) != 0))
      return Error("plir-opt: cannot reset the output's temporary file");
    StatusOr<ChildEnd> end = RunInSupervisedChild(setup, state, [&](const std::vector<int>& fds) {
      const int child_result_fd = fds[0];
      std::string input_path = in.fd >= 0 ? "/proc/self/fd/" + std::to_string(fds[1]) : in.path;
      ProgramResult result;
      result.defer_result_check = child_writes;
      int rc = RunPipeline(f, input_path, in.name, state, &result);
      if (rc == 0) {
        state->Enter(RunPhase::kWritingOutput, f.output);
        Status s;
        if (child_writes) {
          // Its loader refused every plugin but the bundled ones.
          if (!result.module) return Error("plir-opt: internal error: no module to write");
          const int out_fd = fds.back();
          const std::string what = Printable(f.output);
          // The end check runs beside the printing, whose serial parts (the
          // naming pass) it fills: the parent keeps the file only after an
          // exit status 0, so a module that fails it is never committed.
          int check_rc = 0;
          std::thread check;
          if (result.deferred_check) {
            try {
              check = std::thread([&] { check_rc = result.deferred_check(); });
            } catch (const std::system_error&) {  // no thread to be had: in turn
              check_rc = result.deferred_check();
            }
          }
          // The file is fsynced when the parent commits it: its writeback
          // starts as it grows. A module that is verified (result.verified)
          // or fails the deferred check (this process then exits non-zero
          // and the file is not kept) is written without the binary
          // writer's own check for an ill-formed module.
          WritebackAhead writeback(out_fd);
          s = ProduceModule(
              f, *result.module,
              [&](std::string_view piece) {
                Status w = WriteAllToFd(out_fd, piece, what);
                if (w.ok()) writeback.Wrote(piece.size());
                return w;
              },
              result.verified,
              [&](uint64_t offset, std::string_view bytes) {
                return WriteAllToFdAt(out_fd, offset, bytes, what);
              });
          if (check.joinable()) check.join();
          if (check_rc != 0) return check_rc;
        } else {
          s = result.module
                  ? WriteModuleResult(child_result_fd, result.plugin_ops, *result.module)
                  : WriteChildResult(child_result_fd, ChildResultKind::kText, {}, result.text);
        }
        if (!s.ok()) rc = Error("plir-opt: " + s.message());
      }
      return rc;
    });
    if (!end.ok()) return Error("plir-opt: " + end.status().message());
    const ChildOutcome& o = end->outcome;
    const std::string& why = end->abnormal;
    if (why.empty()) {
      // The child finished its program.
      if (o.exit_code != 0) {
        if (state->PassFailureWantsReproducer()) WriteBundle(f, in, *state, state->FailureText());
        return 1;
      }
      if (child_writes) {
        if (Status s = out.file->Commit(); !s.ok())
          return Error("plir-opt: " + Printable(s.message()));
        return 0;
      }
      StatusOr<ProgramResult> result = TakeChildResult(f, *result_fd);
      if (!result.ok()) return Error("plir-opt: " + Printable(result.status().message()));
      if (Status s = CommitResult(f, *result, out); !s.ok())
        return Error("plir-opt: " + Printable(s.message()));
      return 0;
    }
    std::string crashed;
    if (DiedWhileScanning(*state, &crashed) && attempt < 64) {
      std::cerr << "warning: " << why.substr(std::strlen("plir-opt: "))
                << "; skipping that plugin\n";
      f.skip_plugins.push_back(crashed);
      continue;
    }
    std::cerr << why << "\n";
    if (state->Phase() == RunPhase::kRunningPass) WriteBundle(f, in, *state, why);
    return 1;
  }
}

// Fills `f` from a reproducer bundle.
Status LoadReproduceFlags(Flags& f) {
  PLIR_ASSIGN_OR_RETURN(Reproducer r, ReadReproducer(f.reproduce));
  f.input = r.input_file;
  f.pipeline = r.pipeline_file;
  if (!r.input_sha256.empty()) {  // a large input the bundle names
    StatusOr<std::string> sha = Sha256File(r.input_file);
    if (!sha.ok())
      return FailedPrecondition("the reproducer's input " + r.input_file +
                                " is gone: " + sha.status().message());
    if (*sha != r.input_sha256)
      return FailedPrecondition("the reproducer's input " + r.input_file +
                                " changed since the reproducer was written (sha256 " + *sha +
                                ", was " + r.input_sha256 + ")");
  }
  for (const ReproducerPlugin& p : r.plugins) {
    StatusOr<std::string> sha = Sha256File(p.path);
    if (!sha.ok())
      return FailedPrecondition("the reproducer's plugin " + p.path +
                                " is gone: " + sha.status().message());
    if (!p.sha256.empty() && *sha != p.sha256) {
      std::string what = "plugin " + p.path + " changed since the reproducer was written (sha256 " +
                         *sha + ", was " + p.sha256 + ")";
      if (!f.allow_changed_plugins)
        return FailedPrecondition(what + "; --allow-changed-plugins replays it anyway");
      std::cerr << "warning: " << what << "\n";
    } else if (!p.sha256.empty()) {
      // Checked again right before the child opens it.
      f.pinned_plugins.emplace_back(p.path, p.sha256);
    }
    f.plugins.push_back(p.path);
  }
  if (r.opt_level >= 0 && f.opt_level < 0) f.opt_level = r.opt_level;
  if (r.threads > 0 && f.threads == 0) f.threads = r.threads;
  if (r.pass_timeout_s > 0 && f.pass_timeout_s <= 0) f.pass_timeout_s = r.pass_timeout_s;
  if (r.memory_limit_mb > 0 && f.memory_limit_mb <= 0) f.memory_limit_mb = r.memory_limit_mb;
  if (r.check.enabled && !f.check_execution) {
    f.check_execution = true;
    f.entry = r.check.entry.empty() ? "main" : r.check.entry;
    f.check_inputs = r.check.inputs;
    f.check_params = r.check.params;
    f.check_tolerance = r.check.tolerance;
    f.check_seed = r.check.seed;
  }
  if (f.output.empty()) f.output = "/dev/null";
  std::cerr << "plir-opt: replaying " << f.reproduce
            << " (failure recorded: " << Printable(r.failure) << ")\n";
  return Status::Ok();
}

int ParseAndRun(int argc, char** argv) {
  EnterBuildWorkingDirectory("plir-opt");
  CLI::App app{"plir-opt: run PLIR pass pipelines on modules"};
  Flags f;
  for (int i = 0; i < argc; ++i) f.argv.push_back(argv[i]);
  // --check-execution takes its optional inputs file only attached
  // (--check-execution=FILE): a bare one never swallows the next argument.
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& a : args)
    if (a.rfind("--check-execution=", 0) == 0) {
      f.check_inputs = a.substr(std::strlen("--check-execution="));
      if (f.check_inputs.empty()) {
        std::cerr << "plir-opt: --check-execution=: give a file after '=', or no '='\n";
        return 2;
      }
      a = "--check-execution";
    }
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  AddToolOptions(app, &f,
                 {.input = "input module (.plir), or - for standard input",
                  .output = "write the result to this file (atomically)",
                  .pipeline = "YAML pipeline to run",
                  .passes = "comma-separated passes to run",
                  .plugin = "load the plugin at this path (repeatable)",
                  .plugin_dir = "search this directory for plugins (repeatable)"});
  app.add_option("--opt-level", f.opt_level, "optimization level 0-3")->check(CLI::Range(0, 3));
  app.add_flag("--time-passes", f.time_passes, "print a pass timing report to stderr");
  app.add_flag("--print-before-all", f.print_before_all, "print the IR before every pass");
  app.add_flag("--print-after-all", f.print_after_all, "print the IR after every pass");
  app.add_option("--print-after", f.print_after, "print the IR after this pass (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--print-changed", f.print_changed,
               "print a diff of the IR for each pass that changed it");
  app.add_flag("--verify-each", f.verify_each, "run the verifier after every pass");
  app.add_flag("--check-input-unchanged", f.check_input_unchanged,
               "prove that no pass modified its input module");
  app.add_flag("--list-passes", f.list_passes,
               "list registered passes (with --verbose: options, paths)");
  app.add_flag("--list-ops", f.list_ops, "list registered ops with arity and attributes");
  app.add_flag("-v,--verbose", f.verbose,
               "more detail in --list-passes and --list-ops; say whether the child or the "
               "supervisor writes the module");
  app.add_flag("--emit-pipeline", f.emit_pipeline, "print the loaded pipeline as canonical YAML");
  app.add_option("--extend", f.extends, "apply an extension fragment to the pipeline (repeatable)")
      ->allow_extra_args(false);
  app.add_option(
         "--threads", f.threads,
         "threads for parsing, printing and parallel function passes (default: the hardware's)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--emit", f.emit,
                 "output format (default: by -o's extension .plirb/.json, else text)")
      ->check(CLI::IsMember({"text", "json", "binary"}));
  app.add_option("--binary-version", f.binary_version,
                 "binary format version to write (4, the default: a large module as version 3 "
                 "shards, written and loaded in parallel; 3: one shard, tensor data aligned and "
                 "loaded in place; 2: the format before)")
      ->check(CLI::Range(2, 4));
  app.add_flag("--verify-tensor-data", f.verify_tensor_data,
               "also check a binary (version 3) input's tensor-data checksum, which loading "
               "skips so that weights page in only when used");
  app.add_flag("--check-result", f.check_result,
               "hand the module to the supervisor, which loads and verifies it, also when only "
               "the bundled plugins can run (then the child writes -o itself)");
  app.add_flag("--no-isolate", f.no_isolate,
               "run plugins in this process (for debuggers): no crash report, no --pass-timeout");
  app.add_option("--pass-timeout", f.pass_timeout_s,
                 "end the run if one pass (or plugin load) takes longer (seconds)")
      ->check(Seconds(0.001, 1e6));
  AddSupervisorOptions(
      app, {&f.timeout_s, &f.load_timeout_s, &f.memory_limit_mb, &f.sandbox, &f.sandbox_read},
      "end the run if it takes longer, all passes and repeats together (seconds; "
      "kept by the supervisor, beyond a plugin's reach)");
  app.add_option("--max-pass-runs", f.max_pass_runs,
                 "end the run when the pipeline has run this many passes, repeats and nested "
                 "repeats included (default 1000000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--reproduce", f.reproduce, "replay a crash reproducer directory")
      ->check(CLI::ExistingDirectory);
  app.add_option("--reproducer-dir", f.reproducer_dir,
                 "where crash reproducers go (default: $TMPDIR or /tmp)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--no-reproducer", f.no_reproducer, "do not write a reproducer when a pass fails");
  app.add_option("--reproducer-max-input-bytes", f.reproducer_max_input_bytes,
                 "a reproducer copies an input up to this size; a larger file is named by path "
                 "and sha256 (default 64 MiB)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 50));
  app.add_flag("--allow-insecure-plugins", f.allow_insecure_plugins,
               "load plugins even from files or directories that another user owns or that "
               "group or others may write");
  app.add_flag("--allow-changed-plugins", f.allow_changed_plugins,
               "--reproduce: load the bundle's plugins even if their sha256 changed");
  app.add_flag("--hermetic-plugins", f.hermetic_plugins,
               "load plugins only from --plugin and --plugin-path (and the pipeline's "
               "plugin_path): not $PLIR_PLUGIN_PATH, not next to the executable");
  app.add_option("--max-input-bytes", f.max_input_bytes,
                 "refuse inputs larger than this (default 16 GiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  auto* check = app.add_flag("--check-execution", f.check_execution,
                             "run the entry function before the pipeline and after every "
                             "pass, and stop at the first pass that changes its outputs; "
                             "=INPUTS.safetensors gives the inputs (default: random, seeded)");
  auto* params = app.add_option("--params", f.check_params,
                                "--check-execution: a weights file (safetensors) for the entry's "
                                "parameters after the inputs");
  auto* tolerance = app.add_option("--check-tolerance", f.check_tolerance,
                                   "--check-execution: RTOL[,ATOL] (default 1e-5,1e-8)");
  auto* entry = app.add_option("--entry", f.entry, "--check-execution: the function run (main)");
  auto* seed = app.add_option("--check-seed", f.check_seed,
                              "--check-execution: the seed of the random inputs (default 0)");
  app.add_option("--dump-ir-dir", f.dump_ir_dir,
                 "write the module before the pipeline and after each pass application to "
                 "numbered files in this directory (created)");
  app.add_option("--bisect-limit", f.bisect_limit,
                 "run only the first N pass applications (BISECT lines on stderr)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  f.check_execution = check->count() > 0;
  for (auto* o : {params, tolerance, entry, seed})
    if (o->count() > 0 && !f.check_execution) {
      std::cerr << "plir-opt: " << o->get_name() << " needs --check-execution\n";
      return 2;
    }
  if (!f.check_tolerance.empty())
    if (auto t = ParseTolerance(f.check_tolerance); !t.ok()) {
      std::cerr << "plir-opt: " << t.status().message() << "\n";
      return 2;
    }
  if (!f.reproduce.empty()) {
    if (!f.input.empty() || !f.pipeline.empty() || !f.passes.empty()) {
      std::cerr << "plir-opt: --reproduce takes its input and pipeline from the bundle\n";
      return 2;
    }
    if (Status s = LoadReproduceFlags(f); !s.ok()) return Error("plir-opt: " + s.message());
  }
  if (f.input.empty() && !f.list_passes && !f.list_ops && !f.emit_pipeline) {
    std::cerr << "plir-opt: an input file is required\n" << app.help();
    return 2;
  }
  return Main(std::move(f));
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  plir::GuardStandardFds();
  // glibc raises its mmap threshold to the size of each large block freed
  // (up to 32 MB), so after the first growing table is freed, later large
  // blocks come from the heap, and the holes they leave stay resident.
  // Fixed at glibc's initial 128 KiB, blocks that large are mapped and
  // unmapped: the text round trip of a 1M-binding function peaks at 168
  // instead of 210 MB, in the same time (bench/RESULTS.md).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  // So each of them may have transparent huge pages (cli/huge_page_new.cc).
  plir::cli::EnableHugePageBlocks();
  // OpenBLAS (linked for the execution checks) starts its workers when the
  // program loads, and they spin in sched_yield for about 0.1 s: a tenth
  // of the CPU samples of a text round trip of 1M ops on two cores, taken
  // from the parser's threads. As plir-run, stop them; the kernels split a
  // product over PLIR's own threads anyway.
  plir::TakeOverBlasThreads();
  // Nothing escapes main(): whatever is thrown ends in a message and exit 1.
  try {
    return plir::FinishStdout("plir-opt", plir::ParseAndRun(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "plir-opt: internal error: " << plir::Printable(e.what()) << "\n";
  } catch (...) {
    std::cerr << "plir-opt: internal error\n";
  }
  return 1;
}
