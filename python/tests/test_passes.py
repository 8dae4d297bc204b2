"""Pass registry, plugins, pipelines, and Python passes by name."""

import os

import pytest

import plir
from conftest import path, relu_add_module


def test_pipeline_from_passes_runs_plugin_passes(small):
    p = plir.Pipeline.from_passes(["DeadCodeElimination"])
    new = p.run(small)
    assert "%dead" in str(small)
    assert "%dead" not in str(new)
    plir.verify(new)


def test_pipeline_leaves_input_unchanged(small):
    h = plir.structural_hash(small)
    text = str(small)
    plir.Pipeline.from_passes(["Normalize", "DeadCodeElimination"]).run(small, check_input_unchanged=True, verify_each=True)
    assert plir.structural_hash(small) == h
    assert str(small) == text


def test_pipeline_timing_and_print(small):
    p = plir.Pipeline.from_passes(["Normalize", "DeadCodeElimination"])
    p.run(small, timing=True, print_after=["DeadCodeElimination"])
    assert [t[0] for t in p.timings] == ["Normalize", "DeadCodeElimination"]
    assert all(t[1] >= 0 for t in p.timings)
    assert "timing report" in p.output
    assert "def @main" in p.output


def test_pipeline_from_yaml(small):
    p = plir.Pipeline.from_yaml(path("configs/O1.yaml"))
    assert p.name == "O1"
    assert "DeadCodeElimination" in p.pass_names
    new = p.run(small)
    assert "%dead" not in str(new)
    assert "name: O1" in p.to_yaml()


def test_pipeline_yaml_error_has_location(tmp_path):
    y = tmp_path / "bad.yaml"
    y.write_text("version: 1\npasses:\n  - NoSuchPassAtAll\n")
    with pytest.raises(plir.ParseError) as e:
        plir.Pipeline.from_yaml(str(y))
    assert e.value.file == str(y)
    assert e.value.line == 3
    assert "NoSuchPassAtAll" in str(e.value)


def test_pipeline_options(small):
    p = plir.Pipeline.from_passes([("DeadCodeElimination", {"entry_functions": ["main"]})])
    assert "%dead" not in str(p.run(small))
    with pytest.raises(plir.PlirError, match="no_such_option"):
        plir.Pipeline.from_passes([("DeadCodeElimination", {"no_such_option": 1})])


def test_unknown_pass_suggests():
    with pytest.raises(plir.PlirError, match="DeadCodeElimination"):
        plir.Pipeline.from_passes(["DeadCodeEliminaton"])
    with pytest.raises(TypeError, match="'passes'"):
        plir.Pipeline.from_passes("Normalize")


def test_load_plugin_registers_its_passes(small):
    info = plir.load_plugin(path("testing/plugins/libplir_test_good.so"))
    assert "TestReluToSoftmax" in info["passes"]
    assert "TestReluToSoftmax" in plir.passes(load_plugins=False)
    assert "test.square" in plir.ops()
    new = plir.Pipeline.from_passes(["TestReluToSoftmax"]).run(small)
    assert "nn.softmax" in str(new) and "nn.relu" not in str(new)
    again = plir.load_plugin(path("testing/plugins/libplir_test_good.so"))
    assert again["path"] == info["path"]  # loading twice is a no-op


def test_load_plugin_errors(tmp_path):
    with pytest.raises(plir.PluginError, match="missing.so"):
        plir.load_plugin(str(tmp_path / "missing.so"))
    bad = tmp_path / "libplir_bad.so"
    bad.write_bytes(b"not an elf")
    os.chmod(bad, 0o644)
    with pytest.raises(plir.PluginError, match="libplir_bad.so"):
        plir.load_plugin(str(bad))


@plir.function_pass(name="PyReluToSigmoid", provides=["py_sigmoid"])
def relu_to_sigmoid(func):
    """Replaces nn.relu by sigmoid."""

    class M(plir.ExprMutator):
        def visit_call_(self, call):
            if isinstance(call.op, plir.Op) and call.op.name == "nn.relu":
                return plir.op_call("sigmoid", call.args)
            return call

    return M().visit_function(func)


def test_python_function_pass_registered_and_runs(small):
    assert relu_to_sigmoid.pass_name == "PyReluToSigmoid"
    assert "PyReluToSigmoid" in plir.passes(load_plugins=False)
    info = plir.pass_info("PyReluToSigmoid")
    assert info["kind"] == "function"
    assert info["provides"] == ["py_sigmoid"]
    assert info["description"] == "Replaces nn.relu by sigmoid."
    assert info["origin"].endswith("test_passes.py")
    h = plir.structural_hash(small)
    new = plir.Pipeline.from_passes(["PyReluToSigmoid", "DeadCodeElimination"]).run(
        small, verify_each=True, check_input_unchanged=True
    )
    assert "sigmoid" in str(new) and "%dead" not in str(new)
    assert plir.structural_hash(small) == h


def test_python_module_pass_with_options(small):
    seen = {}

    @plir.module_pass(name="PyTagModule", options={"tag": "x", "times": 1})
    def tag(mod, options):
        seen.update(options)
        f = mod["main"]
        return mod.with_item(f.with_attrs({"tag": options["tag"] * options["times"]}))

    new = plir.Pipeline.from_passes([("PyTagModule", {"tag": "ab", "times": 2})]).run(small)
    assert new["main"].attrs["tag"] == "abab"
    assert seen == {"tag": "ab", "times": 2}
    assert "tag" not in small["main"].attrs


def test_python_pass_between_plugins_requires(small):
    @plir.function_pass(name="PyNeedsSigmoid", requires=["py_sigmoid"])
    def needs(func):
        return func

    ok = plir.Pipeline.from_passes(["PyReluToSigmoid", "PyNeedsSigmoid"]).run(small)
    assert "sigmoid" in str(ok)
    with pytest.raises(plir.PlirError, match="py_sigmoid"):
        plir.Pipeline.from_passes(["Normalize", "PyNeedsSigmoid"])


def test_python_pass_exception_names_pass_and_line(small):
    @plir.module_pass(name="PyRaises")
    def raises(mod):
        raise ValueError("boom from python")  # the line reported

    with pytest.raises(plir.PlirError) as e:
        plir.Pipeline.from_passes(["PyRaises"]).run(small)
    msg = str(e.value)
    assert "PyRaises" in msg and "ValueError: boom from python" in msg
    line = raises.__code__.co_firstlineno + 2
    assert "test_passes.py:%d" % line in msg


def test_python_pass_returning_non_module_is_error(small):
    @plir.module_pass(name="PyReturnsInt")
    def bad(mod):
        return 42

    with pytest.raises(plir.PlirError, match="PyReturnsInt returned int, not a plir.Module"):
        plir.Pipeline.from_passes(["PyReturnsInt"]).run(small)

    @plir.function_pass(name="PyReturnsModule")
    def bad2(func, mod):
        return mod

    with pytest.raises(plir.PlirError, match="PyReturnsModule returned Module, not a plir.Function"):
        plir.Pipeline.from_passes(["PyReturnsModule"]).run(small)


def test_python_pass_ill_formed_output_caught_by_verify_each(small):
    @plir.function_pass(name="PyBreaksScoping")
    def breaks(func):
        stray = plir.Var("stray", func.params[0].type)
        return func.with_body(plir.SeqExpr(func.body.blocks, stray))

    with pytest.raises(plir.VerifyError, match="stray"):
        plir.Pipeline.from_passes(["PyBreaksScoping"]).run(small, verify_each=True)
    with pytest.raises(plir.VerifyError):
        plir.Pipeline.from_passes(["PyBreaksScoping"]).run(small)


def test_duplicate_pass_name_is_error():
    with pytest.raises(plir.PluginError, match="Normalize"):

        @plir.module_pass(name="Normalize")
        def clash(mod):
            return mod

    with pytest.raises(TypeError, match="'requires'"):
        plir.module_pass(name="PyBadRequires", requires="x")(lambda m: m)


def test_python_pass_cannot_mutate_input():
    mod = relu_add_module()
    h = plir.structural_hash(mod)

    @plir.module_pass(name="PyTriesToMutate")
    def tries(m):
        f = m["main"]
        with pytest.raises(AttributeError):
            f.body = None
        f.params.clear()  # a copy
        return m.without("main").with_item(f.with_attrs({"touched": True}))

    new = plir.Pipeline.from_passes(["PyTriesToMutate"]).run(mod, check_input_unchanged=True)
    assert new["main"].attrs["touched"] is True
    assert plir.structural_hash(mod) == h
