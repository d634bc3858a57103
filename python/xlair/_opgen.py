"""Making the op functions of `xlair.ops` from the op records (kept apart from ops.py,
whose namespace shadows builtins such as `tuple`, `max` and `abs`).

One function per op of the spec, made from the op records.

Names are the seed names in snake_case (`DotGeneral` -> `dot_general`), positional
arguments in the seed's order, seed argument names as keywords; Python keywords get a
trailing underscore (`while_`, `and_`, `or_`, `not_`).  Ops without an array operand
take the Builder first (`constant(b, value)`, `iota(b, type, size)`).
"""
from __future__ import annotations

import inspect
import keyword

import numpy as np

from xlair.dialect.checks import Check, XlaError
from xlair.dialect.core import REQUIRED, OpDef, all_ops

from .builder import Builder, Op, caller_location

def python_name(opdef: OpDef) -> str:
    n = opdef.name
    return n + "_" if keyword.iskeyword(n) or n in ("and", "or", "not") else n


def _find_builder(opdef: OpDef, args: dict, chk: Check) -> Builder:
    for p in opdef.operand_params:
        v = args.get(p.name)
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(x, Op):
                return x.builder
    first = opdef.operand_params[0].name if opdef.operand_params else "builder"
    chk.fail(first, "must include an XlaOp (or pass the Builder first)", args.get(first), cid="ir:operands")


def _bind_default(opdef: OpDef, name: str, args, kwargs, chk: Check) -> dict:
    sig = _signature(opdef)
    try:
        ba = sig.bind(*args, **kwargs)
    except TypeError as e:
        chk.fail("arguments", f"must match {name}{sig} ({e})", None, show_got=False, cid="ir:operands")
    return dict(ba.arguments)


def _signature(opdef: OpDef) -> inspect.Signature:
    ps = []
    for p in opdef.params:
        default = inspect.Parameter.empty if p.default is REQUIRED else p.default
        ps.append(inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    return inspect.Signature(ps)


def make(opdef: OpDef, name: str):
    def op_function(*args, **kwargs):
        loc = caller_location()
        chk = Check(opdef.name, f"{loc[0]}:{loc[1]}" if loc else None)
        builder = None
        if opdef.takes_builder or (args and isinstance(args[0], Builder)):
            if not args or not isinstance(args[0], Builder):
                chk.fail("builder", "must be the first argument (an xla.Builder)", args[0] if args else None,
                         cid="ir:operands")
            builder, args = args[0], args[1:]
        if opdef.bind is not None:
            try:
                bound = opdef.bind(*args, **kwargs)
            except XlaError as e:
                if e.op is not None:
                    raise
                raise XlaError(f"'xla.{opdef.name}' {e.message}", op=opdef.name, location=chk.location) from None
            except TypeError as e:
                chk.fail("arguments", f"must match {name}{inspect.signature(opdef.bind)} ({e})", None,
                         show_got=False, cid="ir:operands")
        else:
            bound = _bind_default(opdef, name, args, kwargs, chk)
        if builder is None:
            builder = _find_builder(opdef, bound, chk)
        return builder.add(opdef, bound)

    op_function.__name__ = op_function.__qualname__ = name
    op_function.__doc__ = f"{opdef.seed}: {opdef.doc}\n\nSpec section: {opdef.section}."
    sig = inspect.signature(opdef.bind) if opdef.bind else _signature(opdef)
    if opdef.takes_builder:
        sig = sig.replace(parameters=[inspect.Parameter("builder", inspect.Parameter.POSITIONAL_ONLY)]
                          + list(sig.parameters.values()))
    op_function.__signature__ = sig
    return op_function


#: Op's operators, as XlaOp has in C++: method -> (op function, operands swapped)
_BINARY = {"__add__": ("add", False), "__radd__": ("add", True), "__sub__": ("sub", False),
           "__rsub__": ("sub", True), "__mul__": ("mul", False), "__rmul__": ("mul", True),
           "__truediv__": ("div", False), "__rtruediv__": ("div", True), "__mod__": ("rem", False),
           "__and__": ("and_", False), "__or__": ("or_", False), "__xor__": ("xor", False),
           "__lshift__": ("shift_left", False), "__rshift__": ("shift_right_arithmetic", False)}
_UNARY = {"__neg__": "neg", "__invert__": "not_"}


def attach_operators(ops: dict) -> None:
    """Give `Op` its operators over the op functions of `ops` (the namespace of xlair.ops, read
    at each call; a Python number becomes a constant of the other operand's type).  xlair.ops
    calls this once its functions exist, as JAX sets the methods of its arrays: builder.py,
    which the op functions are made over, imports nothing of them."""
    def _bin(self, name, other, swap=False):
        if not isinstance(other, Op):
            other = ops["constant"](self.builder, np.asarray(other, dtype=self.shape.dtype))
        a, b = (other, self) if swap else (self, other)
        return ops[name](a, b)

    def binary(method, name, swap):
        def operator(self, o):
            return self._bin(name, o, swap)
        operator.__name__, operator.__qualname__ = method, f"Op.{method}"
        return operator

    def unary(method, name):
        def operator(self):
            return ops[name](self)
        operator.__name__, operator.__qualname__ = method, f"Op.{method}"
        return operator

    _bin.__qualname__ = "Op._bin"
    Op._bin = _bin
    for method, (name, swap) in _BINARY.items():
        setattr(Op, method, binary(method, name, swap))
    for method, name in _UNARY.items():
        setattr(Op, method, unary(method, name))
