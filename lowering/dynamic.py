"""Dynamic dimension sizes (GetDimensionSize / SetDimensionSize).

The pass `xla-dynamic-sizes` follows, in each block, which values have dynamic sizes and
their S32 size values (the facts of dialect/ops/dynamic.py), masks the ignored tail of
dynamically sized reduced dimensions with the reduction's init value, and replaces
GetDimensionSize of a dynamic dimension with its size.  What is left lowers trivially:
SetDimensionSize passes its operand through, GetDimensionSize of a static dimension is a
constant."""
from __future__ import annotations

import numpy as np

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.checks import XlaError
from xlair.dialect.core import location_str, lookup
from xlair.dialect.ir import arith, ir
from xlair.dialect.ops.dynamic import DynamicContext, DynamicError, propagate
from xlair.dialect.types import PRED, S32, Shape

from .registry import lowers, xla_op

SCALAR_S32 = Shape(S32, ())


class _IRDynamic(DynamicContext):
    """The dynamic-size rules (dialect/ops/dynamic.py) on IR values: sizes are S32 scalars
    computed by xla ops inserted before the op; masks replace the op's operands."""

    def clamp_sub(self, size, start, bound):
        c = lambda v: xla_op("constant", [], SCALAR_S32, value=np.int32(v))  # noqa: E731
        return xla_op("clamp", [c(0), xla_op("sub", [size, c(start)], SCALAR_S32), c(bound)], SCALAR_S32)

    def size_operand(self, name):
        size = self.args[name]
        if Shape.from_mlir(size.type).element_type != S32:
            size = xla_op("convert_element_type", [size], SCALAR_S32, new_element_type=S32)
        return size

    def mask(self, name, i, dim, size, fill):
        k = self._flat_index(name, i)
        x = self.op.operands[k]
        s = Shape.from_mlir(x.type)
        iota = xla_op("iota", [], Shape(S32, s.dims), shape=Shape(S32, s.dims), iota_dimension=dim)
        lim = xla_op("broadcast_in_dim", [size], Shape(S32, s.dims), out_dim_size=s.dims, broadcast_dimensions=())
        keep = xla_op("lt", [iota, lim], Shape(PRED, s.dims))
        init = self.args[fill][i]
        full = xla_op("broadcast_in_dim", [init], s, out_dim_size=s.dims, broadcast_dimensions=())
        self.op.operands[k] = xla_op("select", [keep, x, full], s)

    def _flat_index(self, name, i):
        """The position among the op's operands of element i of operand group `name`."""
        k = 0
        for p in self.opdef.operand_params:
            if p.name == name:
                return k + i
            k += len(self.args[p.name]) if p.variadic else 1
        raise KeyError(name)

    def replace_result(self, size):
        self.op.results[0].replace_all_uses_with(size)


def dynamic_sizes(module) -> None:
    for f in module.body.operations:
        for region in f.operation.regions:
            for block in region.blocks:
                _block(block)


def _block(block) -> None:
    dyn: dict = {}
    for op in [o.operation for o in block.operations]:
        for region in op.regions:
            for b in region.blocks:
                _block(b)
        if not op.name.startswith("xla.") or op.name in ("xla.return",):
            continue
        opdef = lookup(op.name)
        if opdef is None:
            continue
        with ir.InsertionPoint(op), op.location:
            try:
                _op(op, opdef, dyn)
            except DynamicError as e:
                raise XlaError(f"'{op.name}' {e.args[0]} {e.args[1]}", location=location_str(op.location)) from None


def _op(op, opdef, dyn):
    out = propagate(opdef, _IRDynamic(opdef, op, opdef.unpack(op), dyn))
    if out:
        dyn[op.results[0]] = out


@lowers("xla.set_dimension_size")
def lower_set_dimension_size(lw):
    return lw.value("operand")


@lowers("xla.get_dimension_size")
def lower_get_dimension_size(lw):
    i32 = ir.IntegerType.get_signless(32)
    size = lw.shape("operand").dims[lw.attr("dimension")]
    return arith.ConstantOp(lw.result_type, ir.DenseElementsAttr.get_splat(
        lw.result_type, ir.IntegerAttr.get(i32, size))).result
