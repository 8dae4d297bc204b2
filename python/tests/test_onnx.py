"""plir.frontend.onnx.from_onnx on models made with onnx.helper."""

import numpy as np
import pytest

import plir

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _model(w):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


W = np.arange(12, dtype=np.float32).reshape(3, 4) / 10 - 0.5


def test_from_model_proto_runs():
    mod, params = plir.frontend.onnx.from_onnx(_model(W))
    assert list(params) == ["w"]
    np.testing.assert_array_equal(params["w"], W)
    x = np.array([[1, -2, 3], [0.5, 1, -1]], np.float32)
    out = plir.run(mod, "main", [x], params)
    np.testing.assert_allclose(out, np.maximum(x @ W, 0), rtol=1e-6)
    assert mod["main"].attrs["num_input"] == 1


def test_from_path_weights_as_constants(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_model(W), str(p))
    mod, params = plir.frontend.onnx.from_onnx(str(p), weights_as_constants=True)
    assert params == {}
    assert len(mod["main"].params) == 1
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(plir.run(mod, "main", [x]), np.maximum(x @ W, 0), rtol=1e-6)


def test_bad_models(tmp_path):
    p = tmp_path / "bad.onnx"
    p.write_bytes(b"\x08\x07garbage")
    with pytest.raises(plir.ParseError, match="bad.onnx"):
        plir.frontend.onnx.from_onnx(str(p))
    with pytest.raises(FileNotFoundError):
        plir.frontend.onnx.from_onnx(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError, match="'model'"):
        plir.frontend.onnx.from_onnx(42)
