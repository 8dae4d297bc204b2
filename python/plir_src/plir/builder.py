"""BlockBuilder: builds functions and modules, as Relax's BlockBuilder does.

    bb = plir.BlockBuilder()
    x = plir.Var("x", plir.TensorType([2, 3], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(plir.op_call("nn.relu", [x]))
            out = bb.emit_output(plir.op_call("add", [y, y]))
        bb.emit_func_output(out)
    mod = bb.get()
"""

import contextlib

from . import _plir
from .errors import PlirError


class BlockBuilder:
    def __init__(self, mod=None):
        if mod is not None and not isinstance(mod, _plir.Module):
            raise TypeError("argument 'mod' must be a plir.Module, not %s" % type(mod).__name__)
        self._mod = mod if mod is not None else _plir.Module()
        self._bb = None
        self._result = None

    @contextlib.contextmanager
    def function(self, name, params, attrs=None, ret_type=None):
        """Builds function @name(params): emit into it, then emit_func_output."""
        if not isinstance(name, str):
            raise TypeError("argument 'name' must be a str, not %s" % type(name).__name__)
        if self._bb is not None:
            raise PlirError("BlockBuilder.function: already building a function")
        params = list(params)
        self._bb = _plir._BlockBuilder()
        self._result = None
        try:
            yield
            if self._result is None:
                raise PlirError("BlockBuilder.function @%s: emit_func_output was not called" % name)
            body = self._bb.finalize(self._result)
            self._mod = self._mod.with_item(_plir.Function(name, params, body, ret_type, attrs))
        finally:
            self._bb = None
            self._result = None

    @contextlib.contextmanager
    def dataflow(self):
        """A dataflow block: emit() binds dataflow variables, emit_output() outputs."""
        self._need_function("dataflow")
        self._bb.begin_dataflow_block()
        yield
        self._bb.end_block()

    def _need_function(self, what):
        if self._bb is None:
            raise PlirError("BlockBuilder.%s: not inside BlockBuilder.function" % what)

    def emit(self, expr, name_hint=""):
        """Binds `expr` to a new variable (its type inferred) and returns it."""
        self._need_function("emit")
        return self._bb.emit(expr, name_hint)

    def emit_output(self, expr, name_hint=""):
        """In a dataflow block: binds `expr` to an output variable."""
        self._need_function("emit_output")
        return self._bb.emit_output(expr, name_hint)

    def emit_annotated(self, expr, type, name_hint="", is_output=False):
        self._need_function("emit_annotated")
        return self._bb.emit_annotated(expr, type, name_hint, is_output)

    def emit_binding(self, binding):
        self._need_function("emit_binding")
        self._bb.emit_binding(binding)

    def call(self, op, *args, name_hint="", attrs=None, sinfo_args=None):
        """Emits a call of a registered op and returns its variable."""
        return self.emit(_plir.op_call(op, list(args), attrs, sinfo_args), name_hint)

    def emit_func_output(self, output):
        """The function's result (a list or tuple becomes a Tuple)."""
        self._need_function("emit_func_output")
        if isinstance(output, (list, tuple)):
            output = _plir.Tuple(list(output))
        self._result = output

    def add_func(self, func):
        """Adds (or replaces) a function of the module being built."""
        self._mod = self._mod.with_item(func)
        return _plir.GlobalVar(func.name)

    def get(self):
        """The module built so far."""
        return self._mod
