"""ONNX import: plir.frontend.onnx.from_onnx (docs/onnx-import.md)."""

import os

from .. import _plir


def from_onnx(model, weights_as_constants=False):
    """Imports an ONNX model (a path or an onnx.ModelProto).

    Returns (mod, params): the module, whose @main takes the graph's inputs
    then one parameter per initializer, and a dict of the weights (numpy
    arrays) by parameter name, in parameter order (empty with
    weights_as_constants=True). Raises plir.ParseError naming the file and
    node on a bad model.
    """
    if not isinstance(weights_as_constants, bool):
        raise TypeError("argument 'weights_as_constants' must be a bool")
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise FileNotFoundError(path)
        return _plir._from_onnx(path, True, weights_as_constants)
    if hasattr(model, "SerializeToString"):
        return _plir._from_onnx(model.SerializeToString(), False, weights_as_constants)
    raise TypeError("argument 'model' must be a path or an onnx.ModelProto, not %s" % type(model).__name__)
