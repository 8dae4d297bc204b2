"""Inspecting functions, blocks, bindings, vars, calls, attrs and types."""

import pytest

import plir


def test_function_params_and_types(conv):
    f = conv["main"]
    assert isinstance(f, plir.Function)
    assert f.name == "main"
    assert [p.name_hint for p in f.params] == ["data", "weight"]
    t = f.params[0].type
    assert isinstance(t, plir.TensorType)
    assert t.shape == [1, 3, 224, 224]
    assert t.dtype == "float32" and t.ndim == 4
    assert f.ret_type.shape == [1, 32, 222, 222]


def test_call_op_args_attrs(conv):
    call = conv["main"].body.result
    assert isinstance(call, plir.Call)
    assert isinstance(call.op, plir.Op)
    assert call.op.name == "nn.conv2d"
    assert call.op == plir.Op.get("nn.conv2d")  # ops are singletons
    assert call.args[0] == conv["main"].params[0]  # identity of the variable
    assert call.attrs == {"channels": 32, "kernel_size": [5, 5], "padding": [1, 1, 1, 1]}


def test_blocks_and_bindings(blocks):
    main = blocks["main"]
    body = main.body
    assert isinstance(body, plir.SeqExpr)
    kinds = [b.is_dataflow for b in body.blocks]
    assert True in kinds and False in kinds
    df = [b for b in body.blocks if b.is_dataflow][0]
    names = [b.var.name_hint for b in df.bindings]
    assert names == ["a", "b", "unused"]
    a = df.bindings[0]
    assert isinstance(a, plir.Binding)
    assert a.var.is_dataflow
    assert not df.bindings[1].var.is_dataflow  # an output
    assert isinstance(a.value, plir.Call) and a.value.op.name == "add"


def test_if_tuple_constant_global(blocks):
    main = blocks["main"]
    bindings = [b for blk in main.body.blocks for b in blk.bindings]
    by_name = {b.var.name_hint: b.value for b in bindings}
    k = by_name["k"]
    assert isinstance(k, plir.Constant)
    assert k.shape == [2, 2] and k.dtype == "float32"
    assert k.numpy().tolist() == [[1, 2], [3, 4]]
    r = by_name["r"]
    assert isinstance(r, plir.If)
    assert isinstance(r.cond, plir.Var) and r.cond.name_hint == "flag"
    assert isinstance(r.then_body, plir.SeqExpr)
    pair = by_name["pair"]
    assert isinstance(pair, plir.Tuple) and len(pair) == 2
    assert isinstance(pair.fields[1], plir.PrimValue) and pair.fields[1].value == 7
    b = by_name["b"]
    assert isinstance(b.callee, plir.GlobalVar) and b.callee.name == "scale"
    assert main.attrs == {"num_input": 2}


def test_types_are_interned():
    a = plir.TensorType([2, "n"], "float32")
    b = plir.TensorType([2, "n"], "float32")
    assert a == b  # equal types are one node
    assert a.shape == [2, "n"]
    assert plir.TensorType(ndim=2, dtype="int64").shape is None
    assert plir.TensorType(ndim=2, dtype="int64").ndim == 2
    assert plir.parse_type("Tensor[(2, n), float32]") == a
    tt = plir.TupleType([a, plir.PrimType("int64")])
    assert tt.fields[0] == a and tt.fields[1].dtype == "int64"
    ft = plir.FuncType([a], a, pure=False)
    assert ft.params == [a] and ft.ret == a and not ft.pure
    assert isinstance(plir.ObjectType(), plir.Type)
    assert plir.ShapeType([1, "m"]).values == [1, "m"]
    assert str(a) == "Tensor[(2, n), float32]"


def test_vars_have_identity():
    t = plir.TensorType([1], "float32")
    a1, a2 = plir.Var("a", t), plir.Var("a", t)
    assert a1 != a2
    assert a1.name_hint == a2.name_hint
    assert len({a1, a2, a1}) == 2


def test_expr_types_inferred():
    x = plir.Var("x", plir.TensorType([4, 3], "float32"))
    w = plir.Var("w", plir.TensorType([3, 5], "float32"))
    mm = plir.op_call("matmul", [x, w])
    assert mm.type.shape == [4, 5]
    tr = plir.op_call("permute_dims", [w])
    assert tr.type.shape == [5, 3]
    assert plir.StringImm("hi").value == "hi"
    assert plir.PrimValue(1.5).value == 1.5
    assert plir.PrimValue(True).value is True
    t = plir.Tuple([x, w])
    assert plir.TupleGetItem(t, 1).type == w.type


def test_bad_op_call_is_error():
    x = plir.Var("x", plir.TensorType([4, 3], "float32"))
    with pytest.raises(plir.PlirError, match="matmul"):
        plir.op_call("matmul", [x, x])
    with pytest.raises(plir.PlirError, match="no_such_op"):
        plir.op_call("no_such_op", [x])
    with pytest.raises(TypeError, match="'args'"):
        plir.op_call("add", [x, 3])
    with pytest.raises(TypeError, match="'op'"):
        plir.op_call(42, [x])


def test_attrs_round_trip_kinds():
    x = plir.Var("x", plir.TensorType([1, 3, 8, 8], "float32"))
    c = plir.op_call("nn.max_pool2d", [x], {"pool_size": [2, 2], "strides": [2, 2], "layout": "NCHW"})
    assert c.attrs["pool_size"] == [2, 2]
    assert c.attrs["layout"] == "NCHW"
    assert c.type.shape == [1, 3, 4, 4]
    with pytest.raises(TypeError, match="'attrs'"):
        plir.op_call("add", [x, x], {"k": object()})


def test_ops_and_passes_listed():
    ops = plir.ops()
    assert "add" in ops and "nn.conv2d" in ops
    assert ops == sorted(ops)
    passes = plir.passes()
    for p in ("Normalize", "DeadCodeElimination", "FoldConstant", "FuseOps"):
        assert p in passes
    info = plir.pass_info("DeadCodeElimination")
    assert info["name"] == "DeadCodeElimination"
    assert "dead_code_elimination" in info["origin"]


def test_repr_and_str_of_nodes(conv):
    call = conv["main"].body.result
    assert "nn.conv2d" in str(call)
    assert repr(call).startswith("plir.Call(")
    assert str(conv["main"]).startswith("def @main(")
    assert repr(conv) == "plir.Module(@main)"


def test_nodes_are_immutable(conv):
    f = conv["main"]
    with pytest.raises(AttributeError):
        f.name = "other"
    with pytest.raises(AttributeError):
        f.params[0].name_hint = "z"
    params = f.params
    params.append(None)  # a list copy: the function is unchanged
    assert len(f.params) == 2
