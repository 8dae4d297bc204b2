"""Python passes, registered by name next to the C++ plugins' passes.

    @plir.function_pass(name="MyPass", requires=[], provides=[])
    def my_pass(func, mod, options):       # (func), (func, mod) also work
        return func                         # a plir.Function

    @plir.module_pass(name="MyModulePass")
    def my_module_pass(mod, options):       # (mod) also works
        return mod                          # a plir.Module

Both return the function itself, with `pass_name` set. Pipelines
(plir.Pipeline, plir-opt's YAML `python:` key) then name the pass.
"""

import inspect
import os

from . import _plir


def _arity(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return 99
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _origin(fn):
    try:
        return "python %s" % os.path.abspath(inspect.getsourcefile(fn))
    except TypeError:
        return "python"


def _register(kind, fn, name, requires, provides, description, min_opt_level, options):
    if not callable(fn):
        raise TypeError("a pass must be a function, not %s" % type(fn).__name__)
    if name is None:
        name = fn.__name__
    if not isinstance(name, str):
        raise TypeError("argument 'name' must be a str, not %s" % type(name).__name__)
    for param, v in (("requires", requires), ("provides", provides)):
        if isinstance(v, str) or not all(isinstance(x, str) for x in v):
            raise TypeError("argument '%s' must be a list of str" % param)
    if options is not None and not isinstance(options, dict):
        raise TypeError("argument 'options' must be a dict of defaults")
    if description is None:
        description = (inspect.getdoc(fn) or "").split("\n")[0]
    n = _arity(fn)
    if kind == "module":

        def call(mod, opts):
            return fn(mod, opts) if n >= 2 else fn(mod)

    else:

        def call(func, opts, mod):
            if n >= 3:
                return fn(func, mod, opts)
            return fn(func, mod) if n == 2 else fn(func)

    _plir._register_pass(
        name, kind, call, list(requires), list(provides), description, int(min_opt_level), _origin(fn), dict(options or {})
    )
    fn.pass_name = name
    return fn


def _decorator(kind, fn, name, requires, provides, description, min_opt_level, options):
    if fn is not None:
        return _register(kind, fn, name, requires, provides, description, min_opt_level, options)
    return lambda f: _register(kind, f, name, requires, provides, description, min_opt_level, options)


def function_pass(fn=None, *, name=None, requires=(), provides=(), description=None, min_opt_level=0, options=None):
    """Registers a function pass: fn(func[, mod[, options]]) -> plir.Function."""
    return _decorator("function", fn, name, requires, provides, description, min_opt_level, options)


def module_pass(fn=None, *, name=None, requires=(), provides=(), description=None, min_opt_level=0, options=None):
    """Registers a module pass: fn(mod[, options]) -> plir.Module."""
    return _decorator("module", fn, name, requires, provides, description, min_opt_level, options)


def _load_pass_file(path):
    """Runs the Python file `path` as a module (its passes register); returns
    "" or the error, "FILE:LINE: Type: message" (a pipeline's python: key)."""
    import importlib.util
    import sys
    import traceback

    path = os.path.abspath(path)
    sys.dont_write_bytecode = True  # nothing is written next to the pipeline
    if not os.path.isfile(path):
        return "%s: no such file" % path
    d = os.path.dirname(path)
    if d and d not in sys.path:
        sys.path.insert(0, d)
    try:
        name = "plir_python_passes_%d" % len(sys.modules)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None:
            return "%s: not a Python file" % path
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return ""
    except BaseException as e:  # SystemExit too: an error value, not an exit
        what = "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()[-1]
        if isinstance(e, SyntaxError) and e.filename == path:
            return "%s:%d:%d: %s" % (path, e.lineno or 0, e.offset or 0, what)
        frames = traceback.extract_tb(e.__traceback__)
        for f in reversed(frames):
            if f.filename == path:
                return "%s:%d: %s" % (f.filename, f.lineno, what)
        if frames:
            return "%s (at %s:%d): %s" % (path, frames[-1].filename, frames[-1].lineno, what)
        return "%s: %s" % (path, what)
