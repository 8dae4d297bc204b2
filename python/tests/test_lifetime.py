"""Python objects share ownership of the nodes (run under ASan in CI)."""

import gc

import numpy as np

import plir
from conftest import SMALL


def test_nodes_outlive_their_module():
    mod = plir.parse(SMALL)
    f = mod["main"]
    call = f.body.blocks[0].bindings[0].value
    var = f.params[0]
    del mod, f
    gc.collect()
    assert call.op.name == "add"
    assert call.args[0] == var
    assert var.type.shape == [2, 3]
    assert "add(%x, %y)" in str(call)


def test_constant_view_outlives_constant_and_module():
    mod = plir.parse("def @main() -> Tensor[(3,), float32] { const<Tensor[(3,), float32]>[1, 2, 3] }")
    view = mod["main"].body.result.numpy()
    del mod
    gc.collect()
    assert view.tolist() == [1, 2, 3]


def test_run_output_outlives_everything():
    mod = plir.parse("def @main(%x: Tensor[(3,), float32]) -> Tensor[(3,), float32] { add(%x, %x) }")
    out = plir.run(mod, "main", [np.ones(3, np.float32)])
    del mod
    gc.collect()
    assert out.tolist() == [2, 2, 2]


def test_reference_counts_follow_python():
    x = plir.Var("x", plir.TensorType([1], "float32"))
    before = x._use_count
    e = plir.op_call("add", [x, x])
    assert x._use_count == before + 2
    del e
    gc.collect()
    assert x._use_count == before


def test_module_copies_share_until_dropped():
    mod = plir.parse(SMALL)
    copies = [mod.copy() for _ in range(100)]
    f = mod["main"]
    del mod
    for c in copies:
        assert c["main"] == f
    del copies
    gc.collect()
    assert f.name == "main" and len(f.params) == 2
