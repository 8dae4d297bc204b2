"""Structural equality, hashing and diff; identity is ==."""

import pytest

import plir
from conftest import SMALL


def test_equal_after_reparse(small):
    other = plir.parse(SMALL)
    assert not other.same_as(small)
    assert other != small  # == is identity
    assert plir.structural_equal(small, other)
    assert plir.structural_hash(small) == plir.structural_hash(other)


def test_unequal_modules_differ_in_hash_and_diff(small):
    changed = plir.parse(SMALL.replace("nn.relu", "sigmoid"))
    assert not plir.structural_equal(small, changed)
    assert plir.structural_hash(small) != plir.structural_hash(changed)
    d = plir.diff(small, changed)
    assert d is not None
    assert "@main" in d.path and "binding 1" in d.path
    assert "nn.relu" in d.lhs or "nn.relu" in str(d)


def test_diff_none_when_equal(small):
    assert plir.diff(small, plir.parse(SMALL)) is None


def test_node_structural_equal_and_identity(small):
    other = plir.parse(SMALL)
    f, g = small["main"], other["main"]
    assert f != g
    assert f == small["main"]
    assert plir.structural_equal(f, g)
    assert plir.structural_hash(f) == plir.structural_hash(g)
    assert hash(f) == hash(small["main"])


def test_free_vars_need_map_free_vars():
    t = plir.TensorType([2], "float32")
    a, b = plir.Var("a", t), plir.Var("b", t)
    ea = plir.op_call("add", [a, a])
    eb = plir.op_call("add", [b, b])
    assert not plir.structural_equal(ea, eb)
    assert plir.structural_equal(ea, eb, map_free_vars=True)
    assert plir.structural_hash(ea, map_free_vars=True) == plir.structural_hash(eb, map_free_vars=True)


def test_structural_type_errors(small):
    with pytest.raises(TypeError, match="'lhs'"):
        plir.structural_equal(1, small)
    with pytest.raises(TypeError, match="'obj'"):
        plir.structural_hash("x")


def test_deep_copy_is_equal_but_fresh(small):
    d = plir.deep_copy(small)
    assert plir.structural_equal(d, small)
    assert d["main"].params[0] != small["main"].params[0]
