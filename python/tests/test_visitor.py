"""ExprVisitor and ExprMutator subclassed in Python."""

import plir
from conftest import relu_add_module


class CallCounter(plir.ExprVisitor):
    def __init__(self):
        self.ops = []
        self.defs = []
        self.uses = 0

    def visit_call_(self, call):
        if isinstance(call.op, plir.Op):
            self.ops.append(call.op.name)

    def visit_var_def_(self, var):
        self.defs.append(var.name_hint)

    def visit_var_(self, var):
        self.uses += 1


def test_visitor_sees_calls_in_order(small):
    v = CallCounter()
    v.visit_module(small)
    assert v.ops == ["add", "nn.relu", "multiply"]
    assert v.defs == ["x", "y", "a", "b", "dead"]
    assert v.uses == 6  # add(x, y), relu(a), multiply(a, a), the result b

def test_visitor_can_skip_children(blocks):
    class NoIf(CallCounter):
        def visit_if_(self, node):
            return False

    a, b = CallCounter(), NoIf()
    a.visit_module(blocks)
    b.visit_module(blocks)
    assert a.ops.count("add") == b.ops.count("add") + 1  # the add inside the if


def test_visitor_current_path(small):
    paths = []

    class P(plir.ExprVisitor):
        def visit_call_(self, call):
            paths.append(self.current_path())

    P().visit_module(small)
    assert paths[0].startswith("@main, body, block 0, binding 0")


class AddToSubtract(plir.ExprMutator):
    def visit_call_(self, call):
        if isinstance(call.op, plir.Op) and call.op.name == "add":
            return plir.op_call("subtract", call.args, call.attrs)
        return call


def test_mutator_rewrites_and_keeps_input(small):
    before = plir.structural_hash(small)
    new = AddToSubtract().visit_module(small)
    assert "subtract(%x, %y)" in str(new)
    assert "add(" not in str(new)
    assert plir.structural_hash(small) == before
    assert not new.same_as(small)


def test_mutator_unchanged_returns_same_nodes(small):
    class Nothing(plir.ExprMutator):
        pass

    assert Nothing().visit_module(small).same_as(small)
    f = small["main"]
    assert Nothing().visit_function(f) == f


def test_mutator_removes_binding(small):
    class DropDead(plir.ExprMutator):
        def visit_binding_(self, b):
            return None if b.var.name_hint == "dead" else b

    new = DropDead().visit_module(small)
    assert "%dead" not in str(new)
    plir.verify(new)


def test_mutator_remaps_variables():
    mod = relu_add_module()

    class SkipRelu(plir.ExprMutator):
        def visit_binding_(self, b):
            if isinstance(b.value, plir.Call) and b.value.op.name == "nn.relu":
                self.remap_var(b.var, b.value.args[0])
                return None
            return b

    new = SkipRelu().visit_module(mod)
    plir.verify(new)
    assert "nn.relu" not in str(new)
    assert "add(%x, %x)" in str(new)


def test_mutator_on_expression():
    x = plir.Var("x", plir.TensorType([2], "float32"))
    e = plir.op_call("add", [x, plir.op_call("add", [x, x])])
    out = AddToSubtract().visit_expr(e)
    assert isinstance(out, plir.Call) and out.op.name == "subtract"
    assert out.args[1].op.name == "subtract"
