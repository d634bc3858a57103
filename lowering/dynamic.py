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
from xlair.dialect.ops.dynamic import DynamicError, propagate
from xlair.dialect.types import PRED, S32, Shape

from .registry import lowers, xla_op

SCALAR_S32 = Shape(S32, ())


class _IRSizes:
    @staticmethod
    def clamp_sub(size, start, bound):
        c = lambda v: xla_op("constant", [], SCALAR_S32, value=np.int32(v))  # noqa: E731
        return xla_op("clamp", [c(0), xla_op("sub", [size, c(start)], SCALAR_S32), c(bound)], SCALAR_S32)


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
    args = opdef.unpack(op)
    res = op.results[0]
    name = opdef.name
    if name == "set_dimension_size":
        size = args["size"]
        st = Shape.from_mlir(size.type)
        if st.element_type != S32:
            size = xla_op("convert_element_type", [size], SCALAR_S32, new_element_type=S32)
        bound = Shape.from_mlir(args["operand"].type).dims[args["dimension"]]
        size = _IRSizes.clamp_sub(size, 0, bound)               # a size beyond the bound is the bound
        d = dict(dyn.get(args["operand"], {}))
        d[args["dimension"]] = size
        dyn[res] = d
        return
    if name == "get_dimension_size":
        d = dyn.get(args["operand"], {})
        if args["dimension"] in d:
            res.replace_all_uses_with(d[args["dimension"]])
        return
    if name == "reduce":
        ops = args["operands"]
        ds = [dyn.get(v, {}) for v in ops]
        dims = args["dimensions"]
        if not any(ds):
            return
        for k, (x, init, d) in enumerate(zip(ops, args["init_values"], ds)):
            s = Shape.from_mlir(x.type)
            for dim, size in d.items():
                if dim not in dims:
                    continue
                iota = xla_op("iota", [], Shape(S32, s.dims), shape=Shape(S32, s.dims), iota_dimension=dim)
                lim = xla_op("broadcast_in_dim", [size], Shape(S32, s.dims), out_dim_size=s.dims,
                             broadcast_dimensions=())
                keep = xla_op("lt", [iota, lim], Shape(PRED, s.dims))
                fill = xla_op("broadcast_in_dim", [init], s, out_dim_size=s.dims, broadcast_dimensions=())
                x = xla_op("select", [keep, x, fill], s)
            op.operands[k] = x
        kept = [i for i in range(Shape.from_mlir(ops[0].type).rank) if i not in dims]
        d0 = {kept.index(dim): size for dim, size in ds[0].items() if dim in kept}
        if d0:
            dyn[res] = d0
        return
    variadic_dyn = [v for p in opdef.operand_params if p.variadic for v in args[p.name] if dyn.get(v)]
    if variadic_dyn:
        raise DynamicError("operands", "must not have a dynamic dimension (set by xla.set_dimension_size); "
                           "this op does not support dynamic sizes")
    operand_dyn = {p.name: dyn.get(args[p.name]) for p in opdef.operand_params if not p.variadic}
    if not any(operand_dyn.values()):
        return
    shapes = {p.name: Shape.from_mlir(args[p.name].type) for p in opdef.operand_params if not p.variadic}
    shapes["result"] = Shape.from_mlir(res.type)
    out = propagate(opdef, args, operand_dyn, shapes, _IRSizes)
    if out:
        dyn[res] = out


@lowers("xla.set_dimension_size")
def lower_set_dimension_size(lw):
    return lw.value("operand")


@lowers("xla.get_dimension_size")
def lower_get_dimension_size(lw):
    i32 = ir.IntegerType.get_signless(32)
    size = lw.shape("operand").dims[lw.attr("dimension")]
    return arith.ConstantOp(lw.result_type, ir.DenseElementsAttr.get_splat(
        lw.result_type, ir.IntegerAttr.get(i32, size))).result
