"""Imports every family of lowering patterns (files mirror dialect/ops/)."""
from . import contraction, elementwise, indexing, reduction, shape  # noqa: F401
from . import linalg_ops, random  # noqa: F401  (numerics: issue 5)
