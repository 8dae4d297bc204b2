"""Importers into PLIR."""

from . import onnx  # noqa: F401
