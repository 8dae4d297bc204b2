"""Shared C++ settings and macros for PLIR's BUILD files."""

PLIR_COPTS = ["-Wall", "-Wextra"]

# For translation units that parse command lines and call into the
# libraries, with no loop over a model's data: a tool's main and its option
# parsing. CLI11 is header-only (Debian's 2.1.2 has no precompiled mode), and
# its header alone takes 9.7 s to compile at -O2 against 4.6 s at -O0 (g++
# 12, a file that only declares one option); eight such files were about a
# quarter of a fresh build's CPU. Their own code runs once per process.
# Not -O0: such a file also emits out-of-line copies of every inline
# function it uses (std::string::push_back, vector growth, ...), and the
# linker keeps the first copy it meets, the main's, which comes first on
# the link line. The -O2 libraries' calls that were not inlined then ran
# -O0 code: plir-opt's 1M-op binary round trip took 0.64 s against 0.45 s
# with these files at -O2 or -O1 (bench/RESULTS.md, "-O0 mains"). At -O1
# those copies are as fast, and plir_run.cc compiles in 4.9 s against 3.7 s
# at -O0 and 6.6 s at -O2. Code that touches tensors or IR in bulk stays in
# libraries built at the default -O2 (.bazelrc).
COLD_COPTS = ["-O1"]

def plir_cc_library(name, copts = [], **kwargs):
    """A cc_library with PLIR's warnings and include root.

    Args:
      name: target name.
      copts: extra compiler options.
      **kwargs: passed to cc_library.
    """
    native.cc_library(name = name, copts = PLIR_COPTS + copts, **kwargs)

def plir_cc_test(name, copts = [], deps = [], **kwargs):
    """A googletest cc_test linked with gtest_main.

    Args:
      name: target name.
      copts: extra compiler options.
      deps: dependencies (gtest_main is added).
      **kwargs: passed to cc_test.
    """
    native.cc_test(
        name = name,
        copts = PLIR_COPTS + copts,
        deps = deps + ["@system//:gtest_main"],
        **kwargs
    )

# The tools link Debian's OpenBLAS statically (libopenblas.a, the same
# pthreads build as libopenblas.so): the shared library's 16,000 symbol
# relocations were half of plir-run's start-up (perf: about 3 ms of CPU in
# ld.so per process, in each of plir-opt's two processes). Ahead of the
# -lopenblas of //kernels on the link line, the archive resolves the BLAS
# symbols; --as-needed drops the shared library (and libgfortran, and any
# other one the binary does not use). A binary that links no kernels pulls
# nothing from the archive.
#
# The same holds for the other Debian libraries that ship an archive and
# that plugins do not link themselves: OpenSSL's libcrypto (SHA-256 only,
# a 4.7 MB library), RE2, yaml-cpp and libseccomp. Each shared library is
# a file to open and map and a scope to search for every symbol; static,
# `plir-run --help` went from 6.2 to 5.0 ms wall (perf stat -r 30,
# bench/RESULTS.md). With -rdynamic their symbols stay visible to plugins
# as the rest of the host's are. libstdc++ stays shared: plugins link it.
STATIC_LINKOPTS = [
    "-Wl,--as-needed",
    "-l:libopenblas.a",
    "-lgfortran",
    "-l:libcrypto.a",
    "-l:libre2.a",
    "-l:libyaml-cpp.a",
    "-l:libseccomp.a",
]

def plir_cc_binary(name, copts = [], linkopts = [], **kwargs):
    """A host binary that exports the IR core's symbols to plugins.

    Args:
      name: target name.
      copts: extra compiler options.
      linkopts: extra link options (-rdynamic and -ldl are added).
      **kwargs: passed to cc_binary.
    """
    native.cc_binary(
        name = name,
        copts = PLIR_COPTS + copts,
        linkopts = linkopts + ["-rdynamic", "-ldl"] + STATIC_LINKOPTS,
        **kwargs
    )

def plir_pass_plugin_library(name, srcs, deps = [], **kwargs):
    """Builds a pass plugin: the shared library libplir_<name>.so.

    The plugin compiles against headers only and leaves the core's symbols
    undefined; dlopen binds them to the host's single copy.

    Args:
      name: the plugin name (snake_case); the target is libplir_<name>.so.
      srcs: plugin sources; one of them expands PLIR_PLUGIN.
      deps: header-only dependencies (the SDK is added).
      **kwargs: passed to cc_binary.
    """
    native.cc_binary(
        name = "libplir_" + name + ".so",
        srcs = srcs,
        copts = PLIR_COPTS,
        linkshared = True,
        deps = deps + [str(Label("//passes:sdk_headers"))],
        **kwargs
    )

def plir_pass_plugin(name, srcs, deps = [], plugin_deps = [], **kwargs):
    """A pass plugin with one golden test per case file under tests/.

    Builds libplir_<name>.so and, for each tests/CASE.plir (other than
    *.expected.plir), a test `golden_CASE` that runs the case through the
    plugin loaded from its .so and compares with tests/CASE.expected.plir.
    Regenerate expected files with
    `bazel run //testing:update_goldens -- //plugins/<name>`.

    Args:
      name: plugin name (snake_case).
      srcs: plugin sources.
      deps: header-only dependencies.
      plugin_deps: other plugin .so targets whose passes cases may RUN.
      **kwargs: passed to the plugin's cc_binary.
    """
    plir_pass_plugin_library(name = name, srcs = srcs, deps = deps, **kwargs)
    lib = ":libplir_" + name + ".so"
    runner = str(Label("//testing:golden_runner"))
    wrapper = str(Label("//testing:golden_test.sh"))
    cases = native.glob(["tests/*.plir"], exclude = ["tests/*.expected.plir"])
    for case in cases:
        stem = case[len("tests/"):-len(".plir")]
        expected = native.glob(["tests/" + stem + ".expected.plir"])
        expected_path = "$(rootpath " + expected[0] + ")" if expected else native.package_name() + "/tests/" + stem + ".expected.plir"
        args = ["$(rootpath " + runner + ")", "--plugin", "$(rootpath " + lib + ")"]
        for dep in plugin_deps:
            args += ["--plugin", "$(rootpath " + dep + ")"]
        args += ["--case", "$(rootpath " + case + ")", "--expected", expected_path]
        native.sh_test(
            name = "golden_" + stem,
            srcs = [wrapper],
            args = args,
            data = [runner, lib, case] + expected + plugin_deps +
                   native.glob(["tests/*.yaml"]),
        )

    # Each tests/upstream/CASE.expected_upstream.plir is TVM's Expected module
    # for tests/CASE.plir, written by hand: `upstream_CASE` checks that the
    # generated golden is structurally equal to it (plir-diff), so that a
    # regenerated golden cannot drift from TVM.
    plir_diff = str(Label("//cli:plir-diff"))
    for up in native.glob(["tests/upstream/*.expected_upstream.plir"]):
        stem = up[len("tests/upstream/"):-len(".expected_upstream.plir")]
        golden = native.glob(["tests/" + stem + ".expected.plir"])
        golden_path = "$(rootpath " + golden[0] + ")" if golden else native.package_name() + "/tests/" + stem + ".expected.plir"
        native.sh_test(
            name = "upstream_" + stem,
            srcs = [wrapper],
            args = ["$(rootpath " + plir_diff + ")", golden_path, "$(rootpath " + up + ")"],
            data = [plir_diff, up] + golden,
        )

    # `bazel run //<package>:update_goldens` regenerates this plugin's
    # expected files (in-tree or out of tree).
    update = str(Label("//testing:update_goldens"))
    update_args = ["$(rootpath " + update + ")", "--plugin", "$(rootpath " + lib + ")"]
    for dep in plugin_deps:
        update_args += ["--plugin", "$(rootpath " + dep + ")"]
    native.sh_binary(
        name = "update_goldens",
        srcs = [wrapper],
        args = update_args + [native.package_name()],
        data = [update, lib] + plugin_deps,
    )

def plir_execution_test(name, models, pipeline, plugins = [], params = None, inputs = None, tolerance = None, entry = None, data = [], **kwargs):
    """Checks a pipeline by execution: one test per model, every pass checked.

    For each model file M, a test `NAME_<stem of M>` runs
    `plir-opt M --pipeline PIPELINE --plugin P... --check-execution`: the
    entry function runs in the interpreter before the pipeline and after
    every pass (on `inputs`, or on seeded random inputs), and the test fails
    at the first pass whose outputs diverge beyond the tolerance, naming
    the pass, its plugin, the first differing output and the first
    differing binding. Usable out of tree (`@plir//tools:plir.bzl`).

    Args:
      name: prefix of the test names.
      models: module files (.plir, .json or .plirb), one test each.
      pipeline: the YAML pipeline file.
      plugins: plugin .so targets to load (`--plugin`); the pipeline's own
        `plugins:` are found as plir-opt finds them.
      params: optional safetensors file of the entry's parameters after
        num_input (`--params`).
      inputs: optional safetensors file of the entry's inputs
        (`--check-execution=FILE`).
      tolerance: optional "RTOL[,ATOL]" (`--check-tolerance`).
      entry: optional function to run (default main).
      data: other files the test reads (the pipeline's includes).
      **kwargs: passed to each sh_test (size, tags, ...).
    """
    opt = str(Label("//cli:plir-opt"))
    wrapper = str(Label("//testing:golden_test.sh"))
    for m in models:
        stem = m.split(":")[-1].split("/")[-1].rsplit(".", 1)[0]
        args = ["$(rootpath " + opt + ")", "$(rootpath " + m + ")", "--pipeline", "$(rootpath " + pipeline + ")"]
        files = [opt, m, pipeline] + plugins + data
        for p in plugins:
            args += ["--plugin", "$(rootpath " + p + ")"]
        if inputs:
            args.append("--check-execution=$(rootpath " + inputs + ")")
            files.append(inputs)
        else:
            args.append("--check-execution")
        if params:
            args += ["--params", "$(rootpath " + params + ")"]
            files.append(params)
        if tolerance:
            args += ["--check-tolerance", tolerance]
        if entry:
            args += ["--entry", entry]
        args += ["-o", "/dev/null"]
        native.sh_test(
            name = name + "_" + stem,
            srcs = [wrapper],
            args = args,
            data = files,
            **kwargs
        )
