"""Imports every family of lowering patterns (files mirror dialect/ops/)."""
from . import contraction, elementwise, indexing, reduction, shape  # noqa: F401
