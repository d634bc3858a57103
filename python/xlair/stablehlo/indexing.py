"""Converters of indexing ops: dynamic_slice, dynamic_update_slice, gather (and dynamic_gather
with constant slice sizes), scatter.
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.attrs import GatherDimensionNumbers, ScatterDimensionNumbers
from xlair.dialect.ir import ir

from .attrs import _attr, _ints, _struct
from .scope import converter


@converter("stablehlo.dynamic_slice")
def _c_dynamic_slice(s, op):
    return [s.emit("dynamic_slice", operand=s.get(op.operands[0]), start_indices=[s.get(v) for v in op.operands[1:]],
                   size_indices=_ints(op.attributes["slice_sizes"]))]


@converter("stablehlo.dynamic_update_slice")
def _c_dus(s, op):
    return [s.emit("dynamic_update_slice", operand=s.get(op.operands[0]), update=s.get(op.operands[1]),
                   start_indices=[s.get(v) for v in op.operands[2:]])]


# -- indexing -------------------------------------------------------------------------------
def _gather(s, op, slice_sizes):
    d = _struct(op.attributes["dimension_numbers"], "gather")
    dn = GatherDimensionNumbers(d.get("offset_dims", ()), d.get("collapsed_slice_dims", ()),
                                d.get("start_index_map", ()), d.get("index_vector_dim", 0),
                                d.get("operand_batching_dims", ()), d.get("start_indices_batching_dims", ()))
    sorted_ = _attr(op, "indices_are_sorted")
    return [s.emit("gather", operand=s.get(op.operands[0]), start_indices=s.get(op.operands[1]),
                   dimension_numbers=dn, slice_sizes=tuple(slice_sizes),
                   indices_are_sorted=bool(ir.BoolAttr(sorted_).value) if sorted_ is not None else False)]


@converter("stablehlo.gather")
def _c_gather(s, op):
    return _gather(s, op, _ints(op.attributes["slice_sizes"]))


@converter("stablehlo.dynamic_gather")
def _c_dynamic_gather(s, op):
    sizes = s.constant_operand(op.operands[2], "the slice_sizes operand")
    return _gather(s, op, [int(x) for x in np.asarray(sizes).reshape(-1)])


@converter("stablehlo.scatter")
def _c_scatter(s, op):
    vals = [s.get(v) for v in op.operands]
    n = (len(vals) - 1) // 2
    d = _struct(op.attributes["scatter_dimension_numbers"], "scatter")
    dn = ScatterDimensionNumbers(d.get("update_window_dims", ()), d.get("inserted_window_dims", ()),
                                 d.get("scatter_dims_to_operand_dims", ()), d.get("index_vector_dim", 0),
                                 d.get("input_batching_dims", ()), d.get("scatter_indices_batching_dims", ()))
    comp = s.scalar_computation(op.regions[0], "stablehlo.scatter")
    flags = {k: bool(ir.BoolAttr(op.attributes[k]).value) if k in op.attributes else False
             for k in ("indices_are_sorted", "unique_indices")}
    r = s.emit("scatter", operands=vals[:n], scatter_indices=vals[n], updates=vals[n + 1:],
               update_computation=comp, dimension_numbers=dn, **flags)
    return s.unpack(r, n)
