"""Shared fixtures of the plir pytest files (run by tests/run_pytest.sh)."""

import os

import pytest

import plir

ROOT = os.environ.get("PLIR_TEST_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))


def path(rel):
    return os.path.join(ROOT, rel)


SMALL = """
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  dataflow {
    %a = add(%x, %y);
    %b = nn.relu(%a);
    %dead = multiply(%a, %a);
    output %b;
  }
  %b
}
"""


@pytest.fixture
def small():
    return plir.parse(SMALL, "small.plir")


@pytest.fixture
def conv():
    return plir.load(path("examples/spec/conv2d.plir"))


@pytest.fixture
def blocks():
    return plir.load(path("examples/spec/blocks_and_if.plir"))


def relu_add_module(shape=(2, 3), dtype="float32"):
    """@main(x) = add(relu(x), relu(x)), built with the BlockBuilder."""
    x = plir.Var("x", plir.TensorType(list(shape), dtype))
    bb = plir.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(plir.op_call("nn.relu", [x]), "y")
            out = bb.emit_output(plir.op_call("add", [y, y]), "out")
        bb.emit_func_output(out)
    return bb.get()
