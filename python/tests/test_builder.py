"""The BlockBuilder, Relax-style."""

import numpy as np
import pytest

import plir
from conftest import relu_add_module


def test_builds_dataflow_function():
    mod = relu_add_module()
    plir.verify(mod)
    f = mod["main"]
    blk = f.body.blocks[0]
    assert blk.is_dataflow
    assert [b.var.name_hint for b in blk.bindings] == ["y", "out"]
    assert blk.bindings[0].var.is_dataflow and not blk.bindings[1].var.is_dataflow
    assert f.ret_type.shape == [2, 3]


def test_built_module_equals_parsed_text():
    mod = relu_add_module()
    text = """
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  dataflow {
    %y = nn.relu(%x);
    %out = add(%y, %y);
    output %out;
  }
  %out
}"""
    assert plir.structural_equal(mod, plir.parse(text))


def test_call_helper_and_ordinary_block():
    x = plir.Var("x", plir.TensorType([3], "float32"))
    bb = plir.BlockBuilder()
    with bb.function("f", [x], attrs={"global_symbol": "f"}):
        a = bb.call("exp", x, name_hint="a")
        b = bb.call("add", a, x)
        bb.emit_func_output([a, b])
    mod = bb.get()
    plir.verify(mod)
    f = mod["f"]
    assert not f.body.blocks[0].is_dataflow
    assert isinstance(f.body.result, plir.Tuple)
    assert f.attrs["global_symbol"] == "f"
    out = plir.run(mod, "f", [np.zeros(3, np.float32)])
    assert [o.tolist() for o in out] == [[1, 1, 1], [1, 1, 1]]


def test_if_and_two_functions():
    x = plir.Var("x", plir.TensorType([2], "float32"))
    c = plir.Var("c", plir.TensorType([], "bool"))
    bb = plir.BlockBuilder()
    with bb.function("double", [x]):
        bb.emit_func_output(bb.call("add", x, x))
    gv = plir.GlobalVar("double")
    x2 = plir.Var("x", plir.TensorType([2], "float32"))
    with bb.function("main", [x2, c]):
        then_body = plir.SeqExpr([], plir.global_call(gv, [x2], x2.type))
        else_body = plir.SeqExpr([], x2)
        r = bb.emit(plir.If(c, then_body, else_body), "r")
        bb.emit_func_output(r)
    mod = bb.get()
    assert mod.names() == ["double", "main"]
    plir.verify(mod)
    v = np.array([1, 2], np.float32)
    assert plir.run(mod, "main", [v, np.array(True)]).tolist() == [2, 4]
    assert plir.run(mod, "main", [v, np.array(False)]).tolist() == [1, 2]


def test_emit_outside_function_is_error():
    bb = plir.BlockBuilder()
    with pytest.raises(plir.PlirError, match="not inside"):
        bb.emit(plir.PrimValue(1))


def test_missing_output_is_error():
    bb = plir.BlockBuilder()
    with pytest.raises(plir.PlirError, match="emit_func_output"):
        with bb.function("f", []):
            pass
    assert len(bb.get()) == 0


def test_emit_annotated_checks_type():
    x = plir.Var("x", plir.TensorType([2], "float32"))
    bb = plir.BlockBuilder()
    with bb.function("f", [x]):
        with pytest.raises(plir.PlirError):
            bb.emit_annotated(plir.op_call("add", [x, x]), plir.TensorType([3], "float32"))
        y = bb.emit_annotated(plir.op_call("add", [x, x]), plir.TensorType(ndim=1, dtype="float32"), "y")
        bb.emit_func_output(y)
    assert bb.get()["f"].body.blocks[0].bindings[0].var.type.ndim == 1


def test_builder_from_nodes_directly():
    x = plir.Var("x", plir.TensorType([2], "float32"))
    y = plir.Var("y", plir.TensorType([2], "float32"))
    blk = plir.BindingBlock([plir.Binding(y, plir.op_call("negative", [x]))])
    f = plir.Function("main", [x], plir.SeqExpr([blk], y))
    mod = plir.Module([f])
    plir.verify(mod)
    assert plir.run(mod, "main", [np.array([1, -2], np.float32)]).tolist() == [-1, 2]
    with pytest.raises(TypeError, match="'items'"):
        plir.Module([f, 3])
    with pytest.raises(plir.PlirError):
        plir.Module([f, f])  # two items named main
