"""Converters of get_dimension_size and of the dynamic-shape ops (dynamic_broadcast_in_dim,
dynamic_reshape, dynamic_iota, dynamic_pad, real_dynamic_slice) whose result type is static
and whose shape operands are constants: they become their static counterparts.
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.attrs import PaddingConfig
from xlair.dialect.checks import XlaError
from xlair.dialect.ir import ir
from xlair.dialect.types import Shape

from .attrs import _ints, _result_shape, constant_value
from .scope import converter


@converter("stablehlo.get_dimension_size")
def _c_gds(s, op):
    return [s.emit("get_dimension_size", operand=s.get(op.operands[0]),
                   dimension=ir.IntegerAttr(op.attributes["dimension"]).value)]


# -- dynamic ops whose shapes are constants -------------------------------------------------
def _check_shape_operand(s, v, shape: Shape, what: str):
    owner = v.owner
    if isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "stablehlo.constant":
        got = tuple(int(x) for x in np.asarray(constant_value(owner.operation)).reshape(-1))
        if got != shape.dims:
            raise XlaError(f"{what} {list(got)} does not match the result type {shape}")


@converter("stablehlo.dynamic_broadcast_in_dim")
def _c_dyn_bid(s, op):
    shape = _result_shape(op)
    _check_shape_operand(s, op.operands[1], shape, "output_dimensions")
    return [s.emit("broadcast_in_dim", operand=s.get(op.operands[0]), out_dim_size=shape.dims,
                   broadcast_dimensions=_ints(op.attributes["broadcast_dimensions"]))]


@converter("stablehlo.dynamic_reshape")
def _c_dyn_reshape(s, op):
    shape = _result_shape(op)
    _check_shape_operand(s, op.operands[1], shape, "output_shape")
    return [s.emit("reshape", operand=s.get(op.operands[0]), dimensions=None, new_sizes=shape.dims)]


@converter("stablehlo.dynamic_iota")
def _c_dyn_iota(s, op):
    shape = _result_shape(op)
    _check_shape_operand(s, op.operands[0], shape, "output_shape")
    return [s.emit("iota", shape=shape, iota_dimension=ir.IntegerAttr(op.attributes["iota_dimension"]).value)]


@converter("stablehlo.dynamic_pad")
def _c_dyn_pad(s, op):
    lo, hi, it = (np.asarray(s.constant_operand(v, name)).reshape(-1)
                  for v, name in zip(op.operands[2:], ("edge_padding_low", "edge_padding_high", "interior_padding")))
    cfg = PaddingConfig(tuple((int(a), int(b), int(c)) for a, b, c in zip(lo, hi, it)))
    return [s.emit("pad", operand=s.get(op.operands[0]), padding_value=s.get(op.operands[1]), padding_config=cfg)]


@converter("stablehlo.real_dynamic_slice")
def _c_real_dyn_slice(s, op):
    start, limit, strides = (tuple(int(x) for x in np.asarray(s.constant_operand(v, n)).reshape(-1))
                             for v, n in zip(op.operands[1:], ("start_indices", "limit_indices", "strides")))
    return [s.emit("slice", operand=s.get(op.operands[0]), start_indices=start, limit_indices=limit,
                   strides=strides)]
