"""Lowering of DynamicSlice and DynamicUpdateSlice: start indices are clamped into bounds
as the spec says, then tensor.extract_slice / tensor.insert_slice with dynamic offsets."""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.ir import arith, ir, tensor

from .registry import dynamic_offsets, extract_scalar, lowers


def clamped_index(start: ir.Value, et, dim: int, size: int) -> ir.Value:
    """index value of clamp(start, 0, dim - size) for an integer scalar tensor `start`."""
    i64 = ir.IntegerType.get_signless(64)
    s = extract_scalar(start)
    if et.bits < 64:
        s = arith.extsi(i64, s) if et.is_signed else arith.extui(i64, s)
    hi = arith.constant(i64, ir.IntegerAttr.get(i64, dim - size))
    zero = arith.constant(i64, ir.IntegerAttr.get(i64, 0))
    if et.is_unsigned and et.bits == 64:
        s = arith.minui(s, hi)                 # huge unsigned values clamp high, not low
    else:
        s = arith.maxsi(arith.minsi(s, hi), zero)
    return arith.index_cast(ir.IndexType.get(), s)


def _offsets(lw, sizes):
    operand = lw.shape("operand")
    starts = lw.value("start_indices")
    types = [s.element_type for s in lw.shape("start_indices")]
    return [clamped_index(v, et, d, z) for v, et, d, z in zip(starts, types, operand.dims, sizes)]


@lowers("xla.dynamic_slice")
def lower_dynamic_slice(lw):
    sizes = list(lw.attr("size_indices"))
    vals, static = dynamic_offsets(_offsets(lw, sizes))
    return tensor.ExtractSliceOp(lw.result_type, lw.value("operand"), vals, [], [], static, sizes,
                                 [1] * len(sizes)).result


@lowers("xla.dynamic_update_slice")
def lower_dynamic_update_slice(lw):
    sizes = list(lw.shape("update").dims)
    vals, static = dynamic_offsets(_offsets(lw, sizes))
    return tensor.InsertSliceOp(lw.value("update"), lw.value("operand"), vals, [], [], static, sizes,
                                [1] * len(sizes)).result
