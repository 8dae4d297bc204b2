"""Arrays passed to PLIR are read in place, never copied nor written (issue 23).

Every test mutates nothing and compares data pointers: a numpy array
(buffer protocol) or a torch tensor (DLPack) given to plir.const, or to
plir.run as an input or a parameter, is the memory the constant or the
interpreter reads. Its lifetime is PLIR's too: the array may go on the
Python side while PLIR holds it (run under ASan: --config=asan).
"""

import gc
import sys
import weakref

import numpy as np
import pytest

import plir
from plir import _plir

IDENTITY = """
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %x
}
"""

# An input and a parameter handed back as they came, and a computed result.
INPUT_AND_PARAM = """
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3,), float32]) -> (Tensor[(2, 3), float32], Tensor[(3,), float32], Tensor[(2, 3), float32]) attrs {num_input = 1} {
  %s = add(%x, %w);
  %out = (%x, %w, %s);
  %out
}
"""


def test_numpy_const_borrows_the_array():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    before = a.copy()
    assert _plir._borrows_memory(a)  # neither copied nor a buffer PLIR handed out
    refs = sys.getrefcount(a)
    c = plir.const(a)
    assert c.data_address == a.ctypes.data
    assert c.numpy().ctypes.data == a.ctypes.data
    assert sys.getrefcount(a) == refs + 1  # the constant holds the array
    np.testing.assert_array_equal(a, before)
    assert a.flags.writeable  # the array itself is untouched
    del c
    gc.collect()
    assert sys.getrefcount(a) == refs


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool", "float16"])
def test_numpy_const_borrows_every_dtype(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    c = plir.const(a)
    assert c.data_address == a.ctypes.data
    np.testing.assert_array_equal(c.numpy(), a)


def test_numpy_run_inputs_and_params_are_not_copied():
    mod = plir.parse(INPUT_AND_PARAM)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.array([10, 20, 30], np.float32)
    x0, w0 = x.copy(), w.copy()
    for params in ([w], {"w": w}):
        rx, rw, s = plir.run(mod, "main", [x], params)
        assert rx.ctypes.data == x.ctypes.data  # the input's own memory, handed back
        assert rw.ctypes.data == w.ctypes.data  # the parameter's own memory
        np.testing.assert_array_equal(s, x0 + w0)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(w, w0)
    assert x.flags.writeable and w.flags.writeable


def test_borrowed_constant_outlives_the_array():
    n = 1 << 16  # 256 KiB: freed to the system, not to a small-object pool
    a = np.arange(n, dtype=np.float32)
    addr = a.ctypes.data
    watch = weakref.ref(a)
    c = plir.const(a)
    mod = plir.Module([plir.Function("main", [], plir.SeqExpr([], c))])
    del a
    gc.collect()
    assert watch() is not None  # PLIR holds it
    junk = [np.full(n, 7, np.float32) for _ in range(8)]
    assert c.data_address == addr
    np.testing.assert_array_equal(c.numpy(), np.arange(n, dtype=np.float32))
    out = plir.run(mod, "main", [])
    assert out.ctypes.data == addr
    del c
    gc.collect()
    np.testing.assert_array_equal(mod["main"].body.result.numpy(), np.arange(n, dtype=np.float32))
    del mod, out, junk
    gc.collect()
    assert watch() is None  # released once PLIR let go


def test_run_output_keeps_a_borrowed_input_alive():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    watch = weakref.ref(x)
    out = plir.run(plir.parse(IDENTITY), "main", [x])
    assert out.ctypes.data == x.ctypes.data
    del x
    gc.collect()
    assert watch() is not None
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))
    del out
    gc.collect()
    assert watch() is None


def test_keepalive_released_on_a_thread_without_the_gil():
    a = np.ones(1000, np.float32)
    refs = sys.getrefcount(a)
    _plir._release_on_other_thread(a)  # takes the GIL to drop its reference
    assert sys.getrefcount(a) == refs


def test_torch_tensors_are_borrowed_through_dlpack():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    w = torch.tensor([10.0, 20.0, 30.0])
    t0, w0 = t.clone(), w.clone()
    c = plir.const(t)
    assert c.data_address == t.data_ptr()
    out = plir.run(plir.parse(IDENTITY), "main", [t])
    assert out.ctypes.data == t.data_ptr()
    rx, rw, s = plir.run(plir.parse(INPUT_AND_PARAM), "main", [t], [w])
    assert rx.ctypes.data == t.data_ptr()
    assert rw.ctypes.data == w.data_ptr()
    np.testing.assert_array_equal(s, (t0 + w0).numpy())
    assert torch.equal(t, t0) and torch.equal(w, w0)
    # The tensor may go: the constant holds its memory (numpy's DLPack view
    # holds torch's tensor handle, not the Python object).
    addr = t.data_ptr()
    del t, out, rx
    gc.collect()
    junk = [torch.full((2, 3), 7.0) for _ in range(8)]
    assert c.data_address == addr
    np.testing.assert_array_equal(c.numpy(), t0.numpy())
    assert len(junk) == 8


def test_arrays_that_need_one_copy():
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    c = plir.const(strided)
    assert c.data_address != strided.ctypes.data
    assert not _plir._borrows_memory(strided)
    np.testing.assert_array_equal(c.numpy(), strided)
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(plir.run(plir.parse(IDENTITY), "main", [fortran]), fortran)
    big_endian = np.arange(3, dtype=">f4")
    c = plir.const(big_endian)
    assert c.dtype == "float32"
    np.testing.assert_array_equal(c.numpy(), [0, 1, 2])
    as_double = plir.const(np.arange(3, dtype=np.float32), dtype="float64")
    assert as_double.dtype == "float64"
    np.testing.assert_array_equal(as_double.numpy(), [0, 1, 2])
    torch = pytest.importorskip("torch")
    tt = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()
    c = plir.const(tt)
    assert c.data_address != tt.data_ptr()
    np.testing.assert_array_equal(c.numpy(), tt.numpy())
