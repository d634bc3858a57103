"""Converters of data-movement ops: constants, iota, broadcasts, reshape, transpose, reverse,
slice, concatenate, pad, tuples, optimization_barrier.
"""
from __future__ import annotations

from xlair.dialect.attrs import PaddingConfig
from xlair.dialect.ir import ir

from .attrs import _attr, _ints, _result_shape
from .scope import converter


# -- data: constants, iota, shapes ---------------------------------------------------------
@converter("stablehlo.constant")
def _c_constant(s, op):
    return [s._constant(op)]


@converter("stablehlo.iota")
def _c_iota(s, op):
    return [s.emit("iota", shape=_result_shape(op), iota_dimension=ir.IntegerAttr(op.attributes["iota_dimension"]).value)]


@converter("stablehlo.broadcast_in_dim")
def _c_bid(s, op):
    return [s.emit("broadcast_in_dim", operand=s.get(op.operands[0]), out_dim_size=_result_shape(op).dims,
                   broadcast_dimensions=_ints(op.attributes["broadcast_dimensions"]))]


@converter("stablehlo.broadcast")
def _c_broadcast(s, op):
    return [s.emit("broadcast", operand=s.get(op.operands[0]), broadcast_sizes=_ints(op.attributes["broadcast_sizes"]))]


@converter("stablehlo.reshape")
def _c_reshape(s, op):
    return [s.emit("reshape", operand=s.get(op.operands[0]), dimensions=None, new_sizes=_result_shape(op).dims)]


@converter("stablehlo.transpose")
def _c_transpose(s, op):
    return [s.emit("transpose", operand=s.get(op.operands[0]), permutation=_ints(op.attributes["permutation"]))]


@converter("stablehlo.reverse")
def _c_reverse(s, op):
    return [s.emit("rev", operand=s.get(op.operands[0]), dimensions=_ints(op.attributes["dimensions"]))]


@converter("stablehlo.slice")
def _c_slice(s, op):
    x = s.get(op.operands[0])
    strides = _attr(op, "strides")
    return [s.emit("slice", operand=x, start_indices=_ints(op.attributes["start_indices"]),
                   limit_indices=_ints(op.attributes["limit_indices"]),
                   strides=_ints(strides) if strides is not None else None)]


@converter("stablehlo.concatenate")
def _c_concat(s, op):
    return [s.emit("concatenate", operands=[s.get(v) for v in op.operands],
                   dimension=ir.IntegerAttr(op.attributes["dimension"]).value)]


@converter("stablehlo.pad")
def _c_pad(s, op):
    triples = zip(_ints(op.attributes["edge_padding_low"]), _ints(op.attributes["edge_padding_high"]),
                  _ints(op.attributes["interior_padding"]))
    return [s.emit("pad", operand=s.get(op.operands[0]), padding_value=s.get(op.operands[1]),
                   padding_config=PaddingConfig(tuple(triples)))]


@converter("stablehlo.tuple")
def _c_tuple(s, op):
    return [s.emit("tuple", elements=[s.get(v) for v in op.operands])]


@converter("stablehlo.get_tuple_element")
def _c_gte(s, op):
    return [s.emit("get_tuple_element", tuple_data=s.get(op.operands[0]),
                   index=ir.IntegerAttr(op.attributes["index"]).value)]


@converter("stablehlo.optimization_barrier")
def _c_barrier(s, op):
    # An identity on values; it only fences optimizations, which the xla ops never move across.
    return [s.get(v) for v in op.operands]
