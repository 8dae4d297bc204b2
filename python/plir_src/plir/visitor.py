"""ExprVisitor and ExprMutator, subclassable in Python (Relax's names).

A visitor's visit_<kind>_(node) methods are called in pre-order
(definitions before uses); returning False skips the node's children.
leave_<kind>_(node) is called after them. visit_var_def_(var) is called for
a variable in definition position (a parameter or a binding target)
instead of visit_var_.

A mutator's visit_<kind>_(node) methods are called in post-order, with the
node rebuilt from its rewritten children (or the original node when none
changed); they return the replacement. For a binding, returning None
removes it. visit_var_def_(var) may return another variable, which every
later use then reads. Unchanged parts come back as the very same nodes.

Kinds: var, global_var, op, tuple, tuple_getitem, prim_value, string_imm,
constant, call, if, seq_expr, shape_expr, prim_expr, local_fn, binding,
binding_block, function, extern_func; and types when visit_types is True.
"""

import re

from . import _plir

_NAMES = {"TupleGetItem": "tuple_getitem", "If": "if"}


def _kind(node):
    cls = type(node).__name__
    n = _NAMES.get(cls)
    if n is None:
        n = re.sub(r"(?<!^)(?=[A-Z])", "_", cls).lower()
        _NAMES[cls] = n
    return n


class ExprVisitor:
    visit_types = False

    def visit_module(self, mod):
        self._walk(mod)

    def visit_expr(self, expr):
        self._walk(expr)

    visit = visit_expr

    def _walk(self, root):
        self._impl = _plir._Visitor(self._enter, self._leave, self.visit_types)
        self._impl.walk(root)

    def current_path(self):
        """The path to the node being visited ("@main, body, block 0, ...")."""
        return self._impl.current_path()

    def _enter(self, node, is_def):
        if is_def and isinstance(node, _plir.Var):
            m = getattr(self, "visit_var_def_", None)
        else:
            m = getattr(self, "visit_" + _kind(node) + "_", None)
        if m is None:
            return True
        return m(node) is not False

    def _leave(self, node, is_def):
        m = getattr(self, "leave_" + _kind(node) + "_", None)
        if m is not None:
            m(node)


class ExprMutator:
    def visit_module(self, mod):
        return self._run(mod)

    def visit_function(self, func):
        return self._run(func)

    def visit_expr(self, expr):
        return self._run(expr)

    visit = visit_expr

    def _run(self, root):
        self._impl = _plir._Mutator(self._rewrite, self._var_def)
        return self._impl.mutate(root)

    def remap_var(self, var, to):
        """Makes every later use of `var` read `to`."""
        self._impl.remap_var(var, to)

    def _rewrite(self, node):
        m = getattr(self, "visit_" + _kind(node) + "_", None)
        return node if m is None else m(node)

    def _var_def(self, var):
        m = getattr(self, "visit_var_def_", None)
        return var if m is None else m(var)
