"""Shared C++ settings and macros for PLIR's BUILD files."""

PLIR_COPTS = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-sign-compare"]

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
        linkopts = linkopts + ["-rdynamic", "-ldl"],
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
        deps = deps + ["//passes:sdk_headers"],
        **kwargs
    )
