"""PLIR's exceptions. Each carries the message and, when the message starts
with ``file:line:column:``, those three as attributes (else None)."""

import os
import re
import traceback

_LOC = re.compile(r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<column>\d+): ")


class PlirError(Exception):
    """An error reported by PLIR's core (a value there, an exception here)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message
        self.file = None
        self.line = None
        self.column = None
        for line in message.splitlines():
            m = _LOC.search(line)
            if m:
                self.file = m.group("file")
                self.line = int(m.group("line"))
                self.column = int(m.group("column"))
                break


class ParseError(PlirError):
    """A module, type or pipeline that does not parse."""


class VerifyError(PlirError):
    """A module that is not well-formed."""


class PluginError(PlirError):
    """A plugin that cannot be loaded, or a pass that cannot be registered."""


_CLASSES = {"parse": ParseError, "verify": VerifyError, "plugin": PluginError}


def _class_for(kind):
    return _CLASSES.get(kind, PlirError)


def _describe_exception(etype, value, tb):
    """("TypeName: message", "file:line") of the innermost frame."""
    what = "".join(traceback.format_exception_only(etype, value)).strip()
    where = ""
    frames = traceback.extract_tb(tb) if tb is not None else []
    # The innermost frame outside the plir package (the pass author's code).
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    for f in reversed(frames):
        if not os.path.abspath(f.filename).startswith(here):
            return what, "%s:%d" % (f.filename, f.lineno)
    if frames:
        where = "%s:%d" % (frames[-1].filename, frames[-1].lineno)
    return what, where
