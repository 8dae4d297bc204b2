"""plir.run, and tensors exchanged with numpy and torch without copies."""

import numpy as np
import pytest

import plir
from conftest import path, relu_add_module

IDENTITY = """
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %x
}
"""


def test_run_returns_numpy():
    mod = relu_add_module()
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    out = plir.run(mod, "main", [x])
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(out, 2 * np.maximum(x, 0))
    assert not out.flags.writeable  # a view of the interpreter's buffer


def test_run_tuple_and_scalar_results(blocks):
    x = np.ones((2, 2), np.float32)
    r, seven = plir.run(blocks, "main", [x, np.array(True)])
    np.testing.assert_array_equal(r, (x + [[1, 2], [3, 4]]) * 0.5 * 2)
    assert seven == 7


def test_run_params_list_and_dict():
    mod = plir.load(path("examples/models/mlp_with_constants.plir"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    w2 = rng.standard_normal((8, 4)).astype(np.float32)
    a = plir.run(mod, "main", [x], [w1, w2])
    b = plir.run(mod, "main", [x], {"w1": w1, "w2": w2})
    np.testing.assert_array_equal(a, b)
    xn = (x - 0.5) * 0.5
    h = np.maximum(xn @ w1, 0)
    o = (2 * h) @ w2
    e = np.exp(o - o.max(axis=1, keepdims=True))
    np.testing.assert_allclose(a, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(plir.PlirError, match="w2"):
        plir.run(mod, "main", [x], {"w1": w1})


def test_run_errors():
    mod = relu_add_module()
    with pytest.raises(plir.PlirError, match="nope"):
        plir.run(mod, "nope", [np.zeros((2, 3), np.float32)])
    with pytest.raises(plir.PlirError):
        plir.run(mod, "main", [np.zeros((5,), np.float32)])
    with pytest.raises(plir.PlirError, match="takes 1 arguments, 0 given"):
        plir.run(mod, "main", [])
    with pytest.raises(plir.PlirError, match="%x"):
        plir.run(mod, "main", [np.zeros((2, 3), np.int32)])
    with pytest.raises(TypeError, match="'inputs'"):
        plir.run(mod, "main", 3)
    with pytest.raises(TypeError, match="'mod'"):
        plir.run("mod", "main", [])
    with pytest.raises(TypeError, match="'entry'"):
        plir.run(mod, 0, [])


def test_constant_numpy_view_is_zero_copy():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = plir.const(data)
    v1, v2 = c.numpy(), c.data
    assert v1.ctypes.data == c.data_address
    assert v2.ctypes.data == c.data_address
    assert not v1.flags.writeable
    np.testing.assert_array_equal(v1, data)
    assert c.type.shape == [2, 3] and c.dtype == "float32"


def test_run_output_becomes_constant_without_copy():
    out = plir.run(relu_add_module(), "main", [np.ones((2, 3), np.float32)])
    c = plir.const(out)
    assert c.data_address == out.ctypes.data


def test_plir_buffers_as_inputs_are_not_copied():
    mod = plir.parse(IDENTITY)
    x = plir.empty([2, 3], "float32")
    x[:] = np.arange(6).reshape(2, 3)
    assert x.flags.writeable
    out = plir.run(mod, "main", [x])
    assert out.ctypes.data == x.ctypes.data  # the same buffer, in and out
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))
    # An ordinary numpy array is not copied either: PLIR reads it in place
    # (test_zero_copy.py).
    y = np.zeros((2, 3), np.float32)
    assert plir.run(mod, "main", [y]).ctypes.data == y.ctypes.data


def test_torch_dlpack_zero_copy():
    torch = pytest.importorskip("torch")
    from torch.utils import dlpack

    c = plir.const(np.arange(4, dtype=np.float32))
    t = dlpack.from_dlpack(c.to_dlpack())
    assert t.data_ptr() == c.data_address
    t2 = dlpack.from_dlpack(c)  # through __dlpack__
    assert t2.data_ptr() == c.data_address
    assert t.tolist() == [0, 1, 2, 3]
    # A torch tensor over PLIR memory goes back in without a copy.
    mod = plir.parse(IDENTITY)
    x = plir.empty([2, 3])
    tx = dlpack.from_dlpack(plir.to_dlpack(x))
    assert tx.data_ptr() == x.ctypes.data
    out = plir.run(mod, "main", [tx])
    assert out.ctypes.data == tx.data_ptr()
    # torch's own memory is read in place through DLPack (no copy).
    own = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    np.testing.assert_array_equal(plir.run(mod, "main", [own]), own.numpy())
    assert plir.run(mod, "main", [own]).ctypes.data == own.data_ptr()
    back = dlpack.from_dlpack(plir.to_dlpack(out))
    assert back.data_ptr() == out.ctypes.data


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool", "float16"])
def test_const_dtypes_round_trip(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(3, 2)
    c = plir.const(a)
    assert c.dtype == dtype
    np.testing.assert_array_equal(c.numpy(), a)
    back = plir.parse(str(plir.Module([plir.Function("main", [], plir.SeqExpr([], c))])))
    np.testing.assert_array_equal(back["main"].body.result.numpy(), a)


def test_const_bad_input():
    with pytest.raises(TypeError, match="'value'"):
        plir.const(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="'value'"):
        plir.const(np.zeros(2, np.complex64))


LEAVES_BLAS = """
import ctypes, sys
import numpy as np
import plir

blas = ctypes.CDLL("libopenblas.so.0")  # the one PLIR's kernels link
blas.openblas_set_num_threads(2)
mod = plir.parse(
    "def @main(%a: Tensor[(64, 64), float32], %b: Tensor[(64, 64), float32]) -> Tensor[(64, 64), float32] {\\n"
    "  matmul(%a, %b)\\n"
    "}\\n"
)
a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
np.testing.assert_allclose(plir.run(mod, "main", [a, a]), a @ a, rtol=1e-4, atol=1e-4)
print(blas.openblas_get_num_threads())
"""


def test_run_leaves_openblas_threads_to_the_process():
    # plir-run's kernels take OpenBLAS's threads over on the first matrix
    # product (one thread, workers stopped); inside Python, beside numpy and
    # torch, they must not. A fresh process: the takeover happens once.
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", LEAVES_BLAS], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2"
