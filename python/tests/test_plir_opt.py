"""Python passes named in YAML pipelines: plir-opt (embedded interpreter,
the python_passes plugin, in the supervised child) and Pipeline.from_yaml."""

import os
import subprocess

import pytest

import plir
from conftest import path

MODEL = """
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %a = nn.relu(add(%x, %x));
  %dead = multiply(%a, %a);
  %a
}
"""

PASSES = """
import plir


class ReluToSigmoid(plir.ExprMutator):
    def visit_call_(self, call):
        if isinstance(call.op, plir.Op) and call.op.name == "nn.relu":
            return plir.op_call("sigmoid", call.args)
        return call


@plir.function_pass(name="{name}", requires=["normal_form"] if {needs_nf} else [])
def relu_to_sigmoid(func):
    return ReluToSigmoid().visit_function(func)


@plir.module_pass(name="{name}Raises")
def raises(mod):
    raise KeyError("no such thing")


@plir.module_pass(name="{name}Mutates")
def mutates(mod):
    return 3


class FirstConstant(plir.ExprVisitor):
    found = None

    def visit_constant_(self, c):
        self.found = self.found or c


@plir.module_pass(name="{name}Pokes")
def pokes(mod):
    # Objects are immutable; ctypes is the way around that, and
    # --check-input-unchanged must still see the write.
    import ctypes
    v = FirstConstant()
    v.visit_module(mod)
    p = ctypes.cast(v.found.data_address, ctypes.POINTER(ctypes.c_ubyte))
    p[0] ^= 1
    return mod
"""


def plir_opt(*args, cwd):
    exe = path("cli/plir-opt")
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "model.plir").write_text(MODEL)
    (tmp_path / "py").mkdir()
    (tmp_path / "py" / "passes.py").write_text(PASSES.format(name="PySig", needs_nf=False))
    (tmp_path / "pipeline.yaml").write_text(
        "version: 1\n"
        "plugins: [normalize, dead_code_elimination]\n"
        "python: [py/passes.py]\n"
        "passes: [Normalize, PySig, DeadCodeElimination]\n"
        "instruments: {verify: each, check_input_unchanged: true}\n"
    )
    return tmp_path


def test_python_pass_between_two_cpp_plugins(work):
    r = plir_opt("model.plir", "--pipeline", "pipeline.yaml", "-o", "out.plir", "--time-passes", cwd=work)
    assert r.returncode == 0, r.stderr
    out = (work / "out.plir").read_text()
    assert "sigmoid(" in out and "nn.relu" not in out
    assert "%dead" not in out  # DeadCodeElimination ran after it
    assert "add(%x, %x);" in out  # Normalize ran before it (no nested call)
    for p in ("Normalize", "PySig", "DeadCodeElimination"):
        assert p in r.stderr  # the timing report
    m = plir.load(str(work / "out.plir"))
    plir.verify(m)


def test_list_passes_sees_python_pass(work):
    r = plir_opt("--pipeline", "pipeline.yaml", "--list-passes", cwd=work)
    assert r.returncode == 0, r.stderr
    line = [l for l in r.stdout.splitlines() if l.startswith("PySig ")][0]
    assert "python" in line and "passes.py" in line


def test_python_exception_names_pass_and_line(work):
    (work / "out.plir").write_text("old output\n")
    (work / "bad.yaml").write_text("version: 1\npython: [py/passes.py]\npasses: [Normalize, PySigRaises]\n")
    r = plir_opt("model.plir", "--pipeline", "bad.yaml", "-o", "out.plir", cwd=work)
    assert r.returncode == 1
    assert "PySigRaises" in r.stderr
    assert "KeyError: 'no such thing'" in r.stderr
    line = PASSES.splitlines().index('    raise KeyError("no such thing")') + 1
    assert "passes.py:%d" % line in r.stderr
    assert (work / "out.plir").read_text() == "old output\n"
    rep = [l for l in r.stderr.splitlines() if "--reproduce" in l][0].split("--reproduce ")[1].strip()
    again = plir_opt("--reproduce", rep, cwd="/")
    assert again.returncode == 1
    assert "PySigRaises" in again.stderr and "KeyError" in again.stderr


def test_python_pass_returning_non_module(work):
    (work / "bad.yaml").write_text("version: 1\npython: [py/passes.py]\npasses: [PySigMutates]\n")
    r = plir_opt("model.plir", "--pipeline", "bad.yaml", cwd=work)
    assert r.returncode == 1
    assert "PySigMutates returned int, not a plir.Module" in r.stderr


def test_bad_python_files_name_yaml_and_python_locations(work):
    (work / "syn.py").write_text("import plir\nx = (\n")
    (work / "syn.yaml").write_text("version: 1\npython: [syn.py]\npasses: [Normalize]\n")
    r = plir_opt("model.plir", "--pipeline", "syn.yaml", cwd=work)
    assert r.returncode == 1
    assert "syn.yaml:2:10:" in r.stderr and "syn.py:2:" in r.stderr and "SyntaxError" in r.stderr
    (work / "exit.py").write_text("import sys\nsys.exit(4)\n")
    (work / "exit.yaml").write_text("version: 1\npython: [exit.py]\npasses: [Normalize]\n")
    r = plir_opt("model.plir", "--pipeline", "exit.yaml", cwd=work)
    assert r.returncode == 1 and "exit.py:2: SystemExit: 4" in r.stderr
    (work / "missing.yaml").write_text("version: 1\npython: [nope.py]\npasses: [Normalize]\n")
    r = plir_opt("model.plir", "--pipeline", "missing.yaml", cwd=work)
    assert r.returncode == 1 and "nope.py: no such file" in r.stderr
    (work / "type.yaml").write_text("version: 1\npython: {a: 1}\npasses: [Normalize]\n")
    r = plir_opt("model.plir", "--pipeline", "type.yaml", cwd=work)
    assert r.returncode == 1 and "type.yaml:2:" in r.stderr and "python" in r.stderr
    assert not list(work.rglob("__pycache__"))  # nothing written beside the files


def test_check_input_unchanged_covers_python_passes(work):
    r = plir_opt("model.plir", "--pipeline", "pipeline.yaml", "--check-input-unchanged", "--verify-each", cwd=work)
    assert r.returncode == 0, r.stderr
    # A Python pass that writes into a constant of its input, in place.
    (work / "c.plir").write_text(
        "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n"
        "  %y = add(%x, const<Tensor[(2,), float32]>[1, 2]);\n"
        "  %y\n"
        "}\n"
    )
    (work / "poke.yaml").write_text("version: 1\npython: [py/passes.py]\npasses: [PySigPokes]\n")
    r = plir_opt("c.plir", "--pipeline", "poke.yaml", "-o", "out.plir", cwd=work)
    assert r.returncode == 0, r.stderr  # unchecked, the write goes unseen
    (work / "out.plir").write_text("old output\n")
    r = plir_opt("c.plir", "--pipeline", "poke.yaml", "-o", "out.plir", "--check-input-unchanged", cwd=work)
    assert r.returncode == 1, r.stderr
    assert "pass PySigPokes" in r.stderr and "modified its input module (changed: @main)" in r.stderr
    assert (work / "out.plir").read_text() == "old output\n"


def test_emit_pipeline_keeps_python_key(work):
    r = plir_opt("--pipeline", "pipeline.yaml", "--emit-pipeline", cwd=work)
    assert r.returncode == 0, r.stderr
    assert "python:" in r.stdout and os.path.join(str(work), "py", "passes.py") in r.stdout


def test_pipeline_from_yaml_with_python_key_in_process(tmp_path):
    (tmp_path / "p.py").write_text(PASSES.format(name="PyInProc", needs_nf=False))
    (tmp_path / "p.yaml").write_text("version: 1\npython: [p.py]\npasses: [Normalize, PyInProc, DeadCodeElimination]\n")
    p = plir.Pipeline.from_yaml(str(tmp_path / "p.yaml"))
    assert p.pass_names == ["Normalize", "PyInProc", "DeadCodeElimination"]
    assert "PyInProc" in plir.passes(load_plugins=False)
    new = p.run(plir.parse(MODEL))
    assert "sigmoid(" in str(new) and "%dead" not in str(new)
    # Loading the same pipeline again does not run the file twice.
    assert plir.Pipeline.from_yaml(str(tmp_path / "p.yaml")).pass_names == p.pass_names
    (tmp_path / "q.py").write_text("raise ValueError('at import')\n")
    (tmp_path / "q.yaml").write_text("version: 1\npython: [q.py]\npasses: [Normalize]\n")
    with pytest.raises(plir.ParseError) as e:
        plir.Pipeline.from_yaml(str(tmp_path / "q.yaml"))
    assert e.value.file == str(tmp_path / "q.yaml") and e.value.line == 2
    assert "q.py:1: ValueError: at import" in str(e.value)
