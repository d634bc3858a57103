"""GetDimensionSize and SetDimensionSize: dynamic sizes within static bounds.

Types stay static (the bound); which dimensions of which values have a dynamic size, and where
that size comes from, is a dataflow fact derived from the program's SetDimensionSize ops by
`propagate` below.  The reference interpreter evaluates these facts on numbers, the lowering
(pass `xla-dynamic-sizes`) on IR values; both read this one table:

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
    chk.array("operand", operand)
    chk.dims_in_range("dimension", [dimension], operand.rank)
    return Shape(S32, ())


def _sds_infer(chk, operand, size, dimension):
    chk.array("operand", operand)
    chk.scalar("size", size, INTEGERS, "integer (S32)")
    chk.dims_in_range("dimension", [dimension], operand.rank)
    return operand


# The references see plain arrays; the interpreter applies the dynamic facts around them
# (python/xlair/interpreter.py), so these give the static answers.
register(OpDef("GetDimensionSize", (Operand("operand"), Attr("dimension", Int())), _gds_infer,
               lambda operand, dimension, *, result: np.int32(np.shape(operand)[dimension]),
               "dynamic", "GetDimensionSize", doc="the (dynamic) size of a dimension, as S32"))
register(OpDef("SetDimensionSize", (Operand("operand"), Operand("size"), Attr("dimension", Int())), _sds_infer,
               lambda operand, size, dimension, *, result: np.array(operand),
               "dynamic", "SetDimensionSize",
               doc="the operand, with the size of `dimension` set dynamically (within its bound)"))

ELEMENTWISE_LIKE = "elementwise"


class DynamicError(Exception):
    """Raised by `propagate` with (param, message) for the op's XlaError."""


def propagate(opdef, args: dict, dyn: dict, shapes: dict, size_ops):
    """Dynamic sizes of an op's result: {dim: size}, from its operands' ({param: {dim: size}}).

    `size_ops` evaluates size arithmetic on the caller's kind of size (ints in the interpreter,
    IR values in the lowering): `size_ops.clamp_sub(size, start, bound)`.
    Reduce is handled by its caller (it masks); GetDimensionSize/SetDimensionSize too.
    """
    ops = [p for p in opdef.operand_params]
    present = {p.name: dyn.get(p.name) for p in ops if dyn.get(p.name)}
    if not present:
        return {}
    name = opdef.name
    if opdef.family == ELEMENTWISE_LIKE and name != "bitcast_convert_type":
        out_rank = shapes["result"].rank
        merged = {}
        for pname, d in present.items():
            if shapes[pname].rank != out_rank:
                raise DynamicError(pname, "must not have a dynamic dimension when it is broadcast")
            merged.update(d)
        return merged
    if name == "transpose":
        d = present["operand"]
        perm = args["permutation"]
        return {i: d[p] for i, p in enumerate(perm) if p in d}
    if name == "broadcast_in_dim":
        d = present["operand"]
        bd = args["broadcast_dimensions"]
        return {bd[i]: s for i, s in d.items()}
    if name == "broadcast":
        d = present["operand"]
        k = len(args["broadcast_sizes"])
        return {i + k: s for i, s in d.items()}
    if name == "slice":
        d = present["operand"]
        strides = args.get("strides") or [1] * shapes["operand"].rank
        out = {}
        for i, s in d.items():
            start, limit = args["start_indices"][i], args["limit_indices"][i]
            if start == 0 and limit == shapes["operand"].dims[i] and strides[i] == 1:
                out[i] = s
            elif strides[i] == 1:
                out[i] = size_ops.clamp_sub(s, start, limit - start)
            else:
                raise DynamicError("operand", f"must not be sliced with a stride along its dynamic dimension {i}")
        return out
    pname = next(iter(present))
    raise DynamicError(pname, f"must not have a dynamic dimension (dimensions {sorted(present[pname])} were "
                              "set by xla.set_dimension_size); this op does not support dynamic sizes")
