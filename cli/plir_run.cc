// plir-run: executes a function of a module with the reference interpreter.
//
//   plir-run MODULE --entry F [--inputs SPEC]... [--params IN.safetensors]
//            [--save-outputs OUT.safetensors] [--plugin PATH]...
//            [--lazy-param-types "T;T"] [--lazy-params SPEC] [--threads N]
//            [--timeout S] [--load-timeout S] [--memory-limit MB]
//            [--sandbox=auto|require|off] [--sandbox-read PATH]... [--no-isolate]
//
// Parameters. `--params IN.safetensors` reads them from a weights file. For
// an eager function every tensor of its parameters (tuple fields included)
// is read up front, bound by name when every name is in the file (a tuple
// field is named by the variable it is bound to, `%w1 = %params.0`), else
// by index in the file's order. For a lazy function (after
// LazyTransformParams) `get_item(i)` reads weight i from the file when it
// is called, and nothing before: by name when the variables get_item binds
// (`%w1 = call_packed("get_item", 0)`) all name tensors of the file, else
// by index. Without --params, SPEC fills each parameter (a tuple parameter:
// each field): `zeros`, `ones`, `random` or `random:SEED` (uniform in
// [-1, 1)), or `file:PATH` (raw little-endian bytes of exactly the
// parameter's size); for a lazy function --lazy-param-types gives the types
// get_item loads and --lazy-params how to fill them. Dtype and shape are
// checked against the declared types (--lazy-param-types for get_item).
//
// Inputs of an imported model. `--inputs-file IN.safetensors` binds the
// first `num_input` parameters (the function attribute the ONNX importer
// sets; all parameters when it is absent and there is no --params) by name
// when every one is in the file under its PLIR name or the ONNX name kept in
// `onnx_names`, else by position in file order (the file then holds exactly
// that many tensors); `--params` binds the parameters after them.
//
// Outputs. `--save-outputs OUT.safetensors` writes the tensors of the
// result (eager; a tuple flattened, named by the function's `onnx_outputs`
// when it names every tensor) or what `set_item(j, t)` receives (lazy: each
// output is spooled to disk as it arrives and then released), else named
// "0", "1", ... in index order; the file is complete and in place only when the run
// succeeds, and is byte-identical for the two forms. Without it, each output
// is printed (dtype, shape, checksum, first values).
//
// `--plugin PATH` loads a plugin first: its ops (with their kernels) and its
// extern kernels (call_tir targets) become available. The run ends with the
// interpreter's peak live bytes and the process's peak RSS (getrusage).
//
// Plugins run only in a supervised, sandboxed child, as in plir-opt
// (driver/supervised_child.h, docs/reliability.md): the child loads the
// plugins, reads the module and the inputs, runs, and hands what it printed
// and the --save-outputs bytes (spooled in memory) to this process, which
// checks them (the bytes must parse as safetensors, both are bounded) and
// writes them itself, the file atomically. A crash, an abort, an exit(),
// a stop signal or a limit (--timeout, --load-timeout, --memory-limit) ends
// the run with exit 1, one line naming the plugin (in a kernel: the op and
// its plugin), and nothing written. Without a plugin the run stays in this
// process (no plugin code runs), unless --timeout or --memory-limit asks
// for the supervisor; --no-isolate keeps plugins in this process too (for
// debuggers). Exit status: 0 success, 1 error, 2 usage error.
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/run_program.h"
#include "driver/file_util.h"
#include "driver/supervisor.h"
#include "driver/tool_options.h"
#include "interpreter/interpreter.h"
#include "ir/parallel.h"
#include "ir/support/huge_pages.h"
#include "kernels/op_kernels.h"

namespace {

int ParseAndRun(int argc, char** argv) {
  plir::EnterBuildWorkingDirectory("plir-run");
  CLI::App app{
      "plir-run: execute a PLIR function with the reference interpreter\n\n"
      "With --plugin, the plugins are loaded and their kernels run only in a supervised, "
      "sandboxed child process (as in plir-opt: Landlock read-only on what the run needs, "
      "seccomp, no network), which hands the printed results and the --save-outputs bytes to "
      "this process to check and write; a crash, an abort, an exit() or a limit in a plugin "
      "names it and writes nothing. Without a plugin the run stays in this process (no plugin "
      "code runs), unless --timeout or --memory-limit asks for the supervisor."};
  plir::run::Options o;
  app.add_option("module", o.file, "module file: text, JSON or binary (.plir, .json, .plirb)")
      ->required();
  app.add_option("--entry", o.entry, "function to run (default main)");
  // Several values after one --inputs (`--inputs a b c`, as the help says)
  // or one per repeated --inputs; the module comes first.
  app.add_option("--inputs", o.inputs,
                 "one spec per parameter, in order: zeros, ones, random[:SEED], file:PATH")
      ->allow_extra_args(true);
  app.add_option(
      "--params", o.params,
      "safetensors file: the parameters (eager) or what get_item loads (lazy, read on demand)");
  app.add_option("--inputs-file", o.inputs_file,
                 "safetensors file for the first num_input parameters (by name, PLIR or ONNX, "
                 "else by position in file order); --params gives the rest");
  app.add_option("--save-outputs", o.save_outputs,
                 "safetensors file for the result tensors (eager) or the set_item outputs (lazy)");
  app.add_option("--plugin", o.plugins,
                 "load a plugin (ops, kernels) first, in the supervised sandboxed child; "
                 "repeatable")
      ->allow_extra_args(false);
  app.add_option("--lazy-param-types", o.lazy_types,
                 "types of the parameters get_item loads, ';'-separated");
  app.add_option("--lazy-params", o.lazy_spec,
                 "spec for the get_item parameters without --params (default random)");
  int threads = 0;
  app.add_option("--threads", threads,
                 "threads of the kernels (OpenBLAS and split loops; default: the hardware's)")
      ->check(CLI::Range(0, 1024));
  int64_t max_tensor_bytes = plir::MaxTensorBytes();
  app.add_option("--max-tensor-bytes", max_tensor_bytes,
                 "refuse to create a tensor larger than this, checked from its declared type "
                 "(default 16 GiB)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  app.add_option("--max-input-bytes", o.max_input_bytes,
                 "refuse a module or input file larger than this (default 16 GiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  app.add_option("--max-output-bytes", o.max_output_bytes,
                 "refuse to write --save-outputs tensors of more bytes than this (default 16 GiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  app.add_flag("--no-isolate", o.no_isolate,
               "run plugins in this process (for debuggers): no sandbox, no crash report, no "
               "limits");
  plir::AddSupervisorOptions(
      app, {&o.timeout_s, &o.load_timeout_s, &o.memory_limit_mb, &o.sandbox, &o.sandbox_read},
      "end the run if it takes longer (seconds; kept by the supervisor, "
      "beyond a plugin's reach)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  plir::ModuleFile::SetMaxBytes(o.max_input_bytes);
  plir::SetMaxTensorBytes(max_tensor_bytes);
  if (threads > 0) plir::SetDefaultThreads(threads);
  return plir::run::RunMain(o);
}

// Where a run's memory comes from (glibc's malloc), set before anything
// large is allocated. Each choice is measured in bench/RESULTS.md.
void SetUpMemory() {
  // malloc keeps 32 MiB past the top of its heap when it grows and trims:
  // activations are freed and allocated again all through a run, and
  // without the pad their pages went back to the kernel and faulted in
  // again (mobilenet_v2: 10k page faults a run -> 5.5k, 46.2 -> 37.9 ms
  // wall; the lazy vit_b_16 transform's peak RSS 37.3 -> 37.5 MiB: the pad
  // keeps pages that were in use, it does not add any).
  mallopt(M_TOP_PAD, 32 << 20);
  // Blocks of 1 MiB or more come from mmap and go back to the system when
  // freed, so the process's RSS follows the live tensors (glibc would
  // otherwise raise the threshold after the first free and keep freed
  // weights in the heap). A fixed threshold also makes every tensor buffer
  // of 2 MiB or more a mapping of its own, which may then have transparent
  // huge pages (kernels/tensor.h).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  plir::SetHugePageTensorBuffers(true);
  // The heap's new part, grown by the pad now, gets huge pages too: the
  // smaller activations live there, and its pages fault in 2 MiB at a time
  // instead of 4 KiB (mobilenet_v2: page faults 5.8k -> 1.2k a run, CPU 53
  // -> 42 ms). This is what glibc's glibc.malloc.hugetlb=1 tunable does,
  // which a program cannot set for itself. The advice covers the heap as it
  // is here (brk extends it later as a mapping without the advice); where
  // the kernel has no THP, nothing changes.
  char* const old_top = static_cast<char*>(sbrk(0));
  void* volatile grow = malloc(256 << 10);  // volatile: the pair is not elided
  free(grow);
  char* const top = static_cast<char*>(sbrk(0));
  if (old_top != reinterpret_cast<char*>(-1) && top > old_top)
    plir::internal::AdviseHugePages(old_top, static_cast<size_t>(top - old_top));
}

}  // namespace

int main(int argc, char** argv) {
  SetUpMemory();
  plir::GuardStandardFds();
  plir::TakeOverBlasThreads();  // OpenBLAS's idle workers off the cores
  // Nothing escapes main(): whatever is thrown ends in a message and exit 1.
  try {
    return plir::FinishStdout("plir-run", ParseAndRun(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "plir-run: internal error: " << plir::Printable(e.what()) << "\n";
  } catch (...) {
    std::cerr << "plir-run: internal error\n";
  }
  return 1;
}
