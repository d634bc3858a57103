"""Converters of reductions and windows: reduce, reduce_window, select_and_scatter.
"""
from __future__ import annotations

from .attrs import _int_matrix, _ints
from .scope import converter


# -- reductions and windows -------------------------------------------------------------
@converter("stablehlo.reduce")
def _c_reduce(s, op):
    vals = [s.get(v) for v in op.operands]
    n = len(vals) // 2
    comp = s.scalar_computation(op.regions[0], "stablehlo.reduce")
    r = s.emit("reduce", operands=vals[:n], init_values=vals[n:], computation=comp,
               dimensions=_ints(op.attributes["dimensions"]))
    return s.unpack(r, n)


@converter("stablehlo.reduce_window")
def _c_reduce_window(s, op):
    vals = [s.get(v) for v in op.operands]
    n = len(vals) // 2
    rank = vals[0].shape.rank
    comp = s.scalar_computation(op.regions[0], "stablehlo.reduce_window")
    opt = {k: _ints(op.attributes[k]) if k in op.attributes else None
           for k in ("window_strides", "base_dilations", "window_dilations")}
    pad = _int_matrix(op.attributes["padding"]) if "padding" in op.attributes else [(0, 0)] * rank
    r = s.emit("reduce_window", operands=vals[:n], init_values=vals[n:], computation=comp,
               window_dimensions=_ints(op.attributes["window_dimensions"]),
               window_strides=opt["window_strides"] or (1,) * rank, padding=tuple(pad),
               base_dilations=opt["base_dilations"], window_dilations=opt["window_dilations"])
    return s.unpack(r, n)


@converter("stablehlo.select_and_scatter")
def _c_select_and_scatter(s, op):
    x, src, init = (s.get(v) for v in op.operands)
    rank = x.shape.rank
    dims = _ints(op.attributes["window_dimensions"]) if "window_dimensions" in op.attributes else (1,) * rank
    strides = _ints(op.attributes["window_strides"]) if "window_strides" in op.attributes else (1,) * rank
    pad = _int_matrix(op.attributes["padding"]) if "padding" in op.attributes else [(0, 0)] * rank
    select = s.scalar_computation(op.regions[0], "stablehlo.select_and_scatter")
    scatter = s.scalar_computation(op.regions[1], "stablehlo.select_and_scatter")
    return [s.emit("select_and_scatter", operand=x, select=select, window_dimensions=dims, window_strides=strides,
                   padding=tuple(pad), source=src, init_value=init, scatter=scatter)]
