"""plir_py_test: one pytest file run by /usr/bin/python3 under Bazel."""

def plir_py_test(name, src, data = [], **kwargs):
    """An sh_test that runs `/usr/bin/python3 -m pytest SRC` on the built package.

    Args:
      name: test name.
      src: the pytest file.
      data: extra data files.
      **kwargs: passed to sh_test.
    """
    native.sh_test(
        name = name,
        srcs = ["tests/run_pytest.sh"],
        args = ["$(rootpath " + src + ")"],
        data = [
            src,
            ":plir",
            "tests/conftest.py",
            "//examples/spec:examples",
            "//examples/models",
            "//configs",
            "//cli:plir-opt",
            "//testing/plugins:libplir_test_good.so",
            "//plugins/python_passes:libplir_python_passes.so",
            "//docs:python.md",
        ] + native.glob(["tests/data/**"]) + data,
        **kwargs
    )
