"""PLIR from Python: parse, build, inspect, transform and run PLIR modules.

    import plir
    mod = plir.load("model.plir")            # text, JSON or binary
    new = plir.Pipeline.from_passes(["Normalize"]).run(mod)
    out = plir.run(new, "main", [x], params)  # numpy arrays

See docs/python.md.
"""

import os as _os
import sys as _sys

# The extension holds PLIR's core; plugins bind to its symbols, so it is
# loaded into the global symbol scope (as plir-opt exports its own).
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_flags | _os.RTLD_GLOBAL)
try:
    from . import _plir
finally:
    _sys.setdlopenflags(_flags)

from .errors import ParseError, PlirError, PluginError, VerifyError  # noqa: E402
from ._plir import (  # noqa: E402,F401
    Binding,
    BindingBlock,
    Call,
    Constant,
    Expr,
    ExternFunc,
    FuncType,
    Function,
    GlobalVar,
    If,
    Item,
    LocalFn,
    Module,
    Node,
    ObjectType,
    Op,
    Pipeline,
    PrimExpr,
    PrimType,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    ShapeType,
    StringImm,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    Type,
    Var,
    VarBinding,
    const,
    deep_copy,
    empty,
    load_plugin,
    ops,
    parse_type,
    pass_info,
    passes,
    structural_equal,
    structural_hash,
    to_dlpack,
)
from .builder import BlockBuilder  # noqa: E402
from .visitor import ExprMutator, ExprVisitor  # noqa: E402
from ._passes import function_pass, module_pass  # noqa: E402
from . import frontend  # noqa: E402,F401


def _default_plugin_dirs():
    dirs = []
    env = _os.environ.get("PLIR_PLUGIN_PATH")
    if env:
        dirs += [d for d in env.split(":") if d]
    here = _os.path.dirname(_os.path.abspath(__file__))
    for rel in ("../../plugins", "../plugins"):
        d = _os.path.normpath(_os.path.join(here, rel))
        if _os.path.isdir(d):
            dirs.append(d)
            break
    return dirs


_plir._set_plugin_dirs(_default_plugin_dirs())


def _check(value, types, param, what):
    if not isinstance(value, types) or (types is int and isinstance(value, bool)):
        raise TypeError("argument '%s' must be %s, not %s" % (param, what, type(value).__name__))


def _check_path(path, param):
    _check(path, (str, _os.PathLike), param, "a path (str or os.PathLike)")
    return _os.fspath(path)


def parse(text, name="<input>"):
    """Parses a module in the text format. Raises ParseError (file, line, column)."""
    _check(text, str, "text", "a str")
    _check(name, str, "name", "a str")
    return _plir._parse(text, name)


def load(path):
    """Loads a module from a file in any format (text, JSON, binary; told by content)."""
    path = _check_path(path, "path")
    if not _os.path.exists(path):
        raise FileNotFoundError(path)
    return _plir._load(path)


def loads(data, name="<bytes>"):
    """Loads a module from bytes in any format."""
    _check(data, (bytes, bytearray, memoryview), "data", "bytes")
    return _plir._load_bytes(bytes(data), name)


_FORMATS = {".json": "json", ".plirb": "binary", ".plir": "text"}


def save(mod, path, format=None):
    """Writes `mod` to `path` atomically, in `format` ('text', 'json' or
    'binary'; by default from the suffix: .json, .plirb, else text)."""
    _check(mod, Module, "mod", "a plir.Module")
    path = _check_path(path, "path")
    if format is None:
        format = _FORMATS.get(_os.path.splitext(path)[1], "text")
    _check(format, str, "format", "a str")
    mod._save(path, format)


def _module_save(self, path, format=None):
    save(self, path, format)


Module.save = _module_save


class Mismatch:
    """Where two modules or nodes first differ (as plir-diff reports it)."""

    def __init__(self, path, lhs, rhs):
        self.path, self.lhs, self.rhs = path, lhs, rhs

    def __str__(self):
        return "%s: %s vs %s" % (self.path, self.lhs, self.rhs)

    __repr__ = __str__


def diff(lhs, rhs, map_free_vars=False):
    """The first structural mismatch between `lhs` and `rhs` (a Mismatch), or None."""
    r = _plir._diff(lhs, rhs, map_free_vars)
    return None if r is None else Mismatch(*r)


def verify(mod):
    """Raises VerifyError listing the problems unless `mod` is well-formed."""
    _check(mod, Module, "mod", "a plir.Module")
    errors = _plir.verify_errors(mod)
    if errors:
        raise VerifyError("the module is ill-formed:\n" + "\n".join(errors))


def well_formed(mod):
    """True iff `mod` is well-formed."""
    _check(mod, Module, "mod", "a plir.Module")
    return not _plir.verify_errors(mod)


def op_call(op, args, attrs=None, sinfo_args=None):
    """A call of a registered op (by name or plir.Op), its type inferred."""
    return _plir.op_call(op, list(args), attrs, sinfo_args)


def global_call(callee, args, ret_type):
    """A call of a module function."""
    if isinstance(callee, str):
        callee = GlobalVar(callee)
    return _plir.global_call(callee, list(args), ret_type)


def run(mod, entry="main", inputs=(), params=()):
    """Runs function `entry` of `mod` on the interpreter.

    `inputs` and `params` are the function's arguments in order (params
    after inputs, as the ONNX importer lays them out); `params` may also be
    a dict by parameter name. Arrays are numpy arrays, torch tensors or
    anything array-like; a tuple is a tuple value. Returns a numpy array (or
    a tuple of them) for a tensor (tuple) result. C-contiguous arrays
    (numpy, torch through DLPack) are not copied: PLIR reads their memory
    in place, holding a reference to them, and never writes it; others are
    copied once. The results are read-only views of the interpreter's
    buffers (an input handed back is the input's memory).
    """
    _check(mod, Module, "mod", "a plir.Module")
    _check(entry, str, "entry", "a str")
    if isinstance(inputs, (str, bytes)) or not hasattr(inputs, "__iter__"):
        raise TypeError("argument 'inputs' must be a list of arrays, not %s" % type(inputs).__name__)
    inputs = list(inputs)
    if isinstance(params, dict):
        f = mod.get(entry)
        if f is None:
            raise PlirError("no function @%s in the module" % entry)
        names = [p.name_hint for p in f.params][len(inputs):]
        missing = [n for n in names if n not in params]
        if missing:
            raise PlirError("params: no value for %s" % ", ".join(missing))
        params = [params[n] for n in names]
    elif isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise TypeError("argument 'params' must be a list or dict of arrays, not %s" % type(params).__name__)
    return _plir._run(mod, entry, inputs, list(params))


def from_dlpack(x):
    """A numpy view of a DLPack tensor (a torch tensor, a capsule...)."""
    import numpy

    return numpy.from_dlpack(x)


__all__ = [n for n in dir() if not n.startswith("_")]
