"""GetDimensionSize and SetDimensionSize: dynamic sizes within static bounds.

Types stay static (the bound); which dimensions of which values have a dynamic size, and where
that size comes from, is a dataflow fact derived from the program's SetDimensionSize ops by
`propagate` below from each op's record: its `dynamic` rule (`OpDef.dynamic`), written where
the op is defined.  The reference interpreter evaluates these facts on numbers, the lowering
(pass `xla-dynamic-sizes`) on IR values, each through its `DynamicContext`.  The rules:

- element-wise ops, ConvertElementType, Select, Clamp, ReducePrecision: the operands' sizes;
- Transpose, Broadcast, BroadcastInDim: the sizes move with their dimensions;
- Slice: a sliced dynamic dimension (stride 1) gets clamp(size - start, 0, limit - start);
  other dimensions keep theirs;
- Reduce: elements beyond the size of a reduced dimension are ignored (read as the init
  value, as the spec says); the kept dimensions keep their sizes;
- GetDimensionSize reads the size (the static bound when the dimension is not dynamic).
Any other op given an operand with a dynamic dimension raises XlaError.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Int
from ..core import Attr, OpDef, Operand, register
from ..types import INTEGERS, S32, Shape


def _gds_infer(chk, operand, dimension):
    chk.array("operand", operand, cid="get_dimension_size_i1")
    chk.dims_in_range("dimension", [dimension], operand.rank, cid="get_dimension_size_c1")
    return Shape(S32, ())


def _sds_infer(chk, operand, size, dimension):
    chk.array("operand", operand, cid="spec:SetDimensionSize")
    chk.scalar("size", size, INTEGERS, "integer (S32)", cid="spec:SetDimensionSize")
    chk.dims_in_range("dimension", [dimension], operand.rank, cid="spec:SetDimensionSize")
    return operand


class DynamicError(Exception):
    """Raised by a dynamic rule with (param, message) for the op's XlaError."""


class DynamicContext:
    """What an op's dynamic rule sees of one op: its unpacked arguments (`args`, operands as
    IR values), the dynamic sizes of its operands (`dyn`: IR value -> {dim: size}) and their
    shapes.  The caller's subclass does the arithmetic on its kind of size (ints in the
    interpreter, S32 IR values in the lowering) and on its kind of value."""

    def __init__(self, opdef, op, args: dict, dyn: dict):
        self.opdef, self.op, self.args, self.dyn = opdef, op, args, dyn

    def sizes(self, name: str):
        """{dim: size} of operand `name` (a list of them for a variadic operand)."""
        v = self.args[name]
        return [self.dyn.get(x, {}) for x in v] if isinstance(v, list) else self.dyn.get(v, {})

    def shape(self, name: str):
        v = self.args[name]
        return [Shape.from_mlir(x.type) for x in v] if isinstance(v, list) else Shape.from_mlir(v.type)

    @property
    def result(self) -> Shape:
        return Shape.from_mlir(self.op.results[0].type)

    # -- the caller's arithmetic and values --------------------------------------------------
    def clamp_sub(self, size, start: int, bound: int):
        """clamp(size - start, 0, bound)."""
        raise NotImplementedError

    def size_operand(self, name: str):
        """The integer scalar operand `name` as a size (S32)."""
        raise NotImplementedError

    def mask(self, name: str, i: int, dim: int, size, fill: str) -> None:
        """Replace element i of the variadic operand `name` by itself with the elements at or
        beyond `size` along `dim` set to element i of the operand `fill` (a scalar)."""
        raise NotImplementedError

    def replace_result(self, size) -> None:
        """The op's (S32 scalar) result is `size`."""
        raise NotImplementedError


def propagate(opdef, ctx: DynamicContext) -> dict:
    """The dynamic sizes of an op's result, {dim: size}, by the op's rule; an op without one
    raises DynamicError when an operand has a dynamic dimension."""
    if opdef.dynamic is not None:
        return opdef.dynamic(ctx) or {}
    for p in opdef.operand_params:
        d = ctx.sizes(p.name)
        if p.variadic and any(d):
            raise DynamicError("operands", "must not have a dynamic dimension (set by xla.set_dimension_size); "
                               "this op does not support dynamic sizes")
    for p in opdef.operand_params:
        d = ctx.sizes(p.name)
        if d and not p.variadic:
            raise DynamicError(p.name, f"must not have a dynamic dimension (dimensions {sorted(d)} were "
                                       "set by xla.set_dimension_size); this op does not support dynamic sizes")
    return {}


def same_as_operands(ctx: DynamicContext) -> dict:
    """Element-wise ops: the operands' sizes (an operand that is broadcast must have none)."""
    merged = {}
    for p in ctx.opdef.operand_params:
        d = ctx.sizes(p.name)
        if d:
            if ctx.shape(p.name).rank != ctx.result.rank:
                raise DynamicError(p.name, "must not have a dynamic dimension when it is broadcast")
            merged.update(d)
    return merged


def _gds_dynamic(ctx: DynamicContext) -> dict:
    d = ctx.sizes("operand")
    if ctx.args["dimension"] in d:
        ctx.replace_result(d[ctx.args["dimension"]])
    return {}


def _sds_dynamic(ctx: DynamicContext) -> dict:
    dim = ctx.args["dimension"]
    bound = ctx.shape("operand").dims[dim]
    d = dict(ctx.sizes("operand"))
    d[dim] = ctx.clamp_sub(ctx.size_operand("size"), 0, bound)     # a size beyond the bound is the bound
    return d


# The references see plain arrays; the interpreter applies the dynamic facts around them
# (python/xlair/interpreter.py), so these give the static answers.
register(OpDef("GetDimensionSize", (Operand("operand"), Attr("dimension", Int())), _gds_infer,
               lambda operand, dimension, *, result: np.int32(np.shape(operand)[dimension]),
               "dynamic", "GetDimensionSize", doc="the (dynamic) size of a dimension, as S32", dynamic=_gds_dynamic,
               constraints={
                   "get_dimension_size_i1": "operand is an array",
                   "get_dimension_size_c1": "`0 <= dimension < rank(operand)`",
               }))
register(OpDef("SetDimensionSize", (Operand("operand"), Operand("size"), Attr("dimension", Int())), _sds_infer,
               lambda operand, size, dimension, *, result: np.array(operand),
               "dynamic", "SetDimensionSize", dynamic=_sds_dynamic,
               doc="the operand, with the size of `dimension` set dynamically (within its bound)",
               constraints={
                   "spec:SetDimensionSize": "operand is an array; size is an integer scalar; dimension"
                                            " is one of the operand's",
               }))
