"""One function per op of the spec (see _opgen.py for how they are made).

Names are the seed names in snake_case (`DotGeneral` -> `dot_general`), positional
arguments in the seed's order, seed argument names as keywords; Python keywords get a
trailing underscore (`while_`, `and_`, `or_`, `not_`).  Ops without an array operand
take the Builder first (`constant(b, value)`, `iota(b, type, size)`).

Note: this module's namespace holds `tuple`, `max`, `min`, `abs`, `pow`, ... as op functions.
"""
from __future__ import annotations

import inspect as _inspect

import numpy as _np

from xlair.dialect.checks import Check as _Check
from xlair.dialect.core import all_ops as _all_ops

from ._opgen import attach_operators as _attach_operators, make as _make, python_name as _python_name

__all__ = []
for _d in _all_ops():
    _n = _python_name(_d)
    globals()[_n] = _make(_d, _n)
    __all__.append(_n)

_constant_record = globals()["constant"]
_complex_op = globals()["complex"]


def constant(builder, value, dtype=None):
    """Constant: an array literal.  numpy values keep their dtype; Python bool/int/float/complex
    become PRED/S32/F32/C64 (as XlaBuilder's ConstantR0<T>); `dtype` overrides."""
    try:
        if dtype is None and not isinstance(value, (_np.ndarray, _np.generic)):
            kind = _np.asarray(value).dtype.kind
            dtype = {"b": _np.bool_, "i": _np.int32, "u": _np.uint32, "f": _np.float32,
                     "c": _np.complex64}.get(kind)
        a = _np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as e:
        _Check("constant").fail("value", f"must be an array literal ({e})", value)
    if a.dtype.kind == "c":   # complex literals are built from their real and imaginary parts
        return _complex_op(_constant_record(builder, _np.array(a.real)),
                           _constant_record(builder, _np.array(a.imag)))
    return _constant_record(builder, a)


constant.__signature__ = _inspect.signature(lambda builder, value, dtype=None: None)

_attach_operators(globals())     # Op's +, -, *, ... over the functions above
