"""Scalar emitters and the lowering of scalar computations.

`SCALAR["xla.add"](args, in_types, out_type)` emits the arith/math/complex code of one
element of an element-wise op, on builtin scalar values.  The element-wise patterns wrap
these emitters in a linalg.generic; `emit_region` runs them over the body of a scalar
computation (the region of a Reduce, Map, Sort, ...), so that body becomes straight-line
scalar code inside the linalg op that consumes it.
"""
from __future__ import annotations

from typing import Callable, Sequence

from xlair.dialect.attrs import literal_value
from xlair.dialect.checks import XlaError
from xlair.dialect.core import RETURN, location_str, lookup
from xlair.dialect.ir import ir
from xlair.dialect.types import ElementType, Shape

SCALAR: dict[str, Callable] = {}

#: ops that are the identity on a rank-0 operand (shape ops of scalars)
SCALAR_IDENTITY = {"xla.reshape", "xla.broadcast", "xla.broadcast_in_dim", "xla.transpose",
                    "xla.rev", "xla.slice", "xla.collapse", "xla.copy"}


def scalar(*names: str):
    def deco(fn):
        for n in names:
            SCALAR[n] = fn
        return fn
    return deco


def element_types(values: Sequence[ir.Value]) -> list[ElementType]:
    return [Shape.from_mlir(v.type).element_type for v in values]


def emit_region(region: ir.Region, args: Sequence[ir.Value], owner: str,
                elementwise: bool = False) -> list[ir.Value]:
    """Emit the scalar code of a computation region at the current insertion point.

    `args` are builtin scalars for the region's parameters (flattened through tuples, in
    order).  Returns the scalars of the returned value(s), flattened the same way.  With
    `elementwise`, the region's arrays may have any one shape (the caller checked that every
    op is element-wise over it, lowering/loops.py): the code computes one of their elements.
    """
    from .registry import scalar_const
    block = region.blocks[0]
    env: dict = {}
    it = iter(args)

    def bind(v, shape):
        if shape.is_tuple:
            return tuple(bind(None, s) for s in shape.tuple_shapes)
        return next(it)

    for a in block.arguments:
        env[a] = bind(a, Shape.from_mlir(a.type))
    for op in block.operations:
        name = op.name
        if name == RETURN:
            out = []

            def flat(x):
                if isinstance(x, tuple):
                    for y in x:
                        flat(y)
                else:
                    out.append(x)
            for v in op.operands:
                flat(env[v])
            return out
        res = op.results[0] if len(op.results) else None
        with op.location:
            if name == "xla.tuple":
                env[res] = tuple(env[v] for v in op.operands)
            elif name == "xla.get_tuple_element":
                env[res] = env[op.operands[0]][ir.IntegerAttr(op.attributes["index"]).value]
            elif name == "xla.constant":          # (elementwise: a splat, one scalar)
                shape = Shape.from_mlir(res.type)
                if shape.rank != 0 and not elementwise:
                    _unsupported(owner, op)
                env[res] = scalar_const(shape.element_type, literal_value(op.attributes["value"]).flat[0])
            elif name in SCALAR_IDENTITY:
                if Shape.from_mlir(res.type).rank != 0 and not elementwise:
                    _unsupported(owner, op)
                env[res] = env[op.operands[0]]
            elif name in SCALAR:
                shapes = [Shape.from_mlir(v.type) for v in op.operands]
                if not elementwise and (any(s.rank != 0 for s in shapes) or Shape.from_mlir(res.type).rank != 0):
                    _unsupported(owner, op)
                emit = SCALAR[name]
                extra = (lookup(name).unpack(op),) if getattr(emit, "attrs", False) else ()
                env[res] = emit([env[v] for v in op.operands], [s.element_type for s in shapes],
                                Shape.from_mlir(res.type).element_type, *extra)
            else:
                _unsupported(owner, op)
    raise XlaError(f"'{owner}' computation must end in xla.return")


def _unsupported(owner: str, op: ir.Operation):
    raise XlaError(f"'{owner}' computation must be a scalar computation of element-wise ops; "
                   f"got '{op.name}' with type {op.results[0].type if len(op.results) else '()'}",
                   op=owner[4:], location=location_str(op.location))
