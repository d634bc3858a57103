"""Converters of contractions: dot_general, dot, convolution (and dynamic_conv with constant
padding).
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.attrs import DotDimensionNumbers
from xlair.dialect.ir import ir
from xlair.dialect.types import S32, Shape

from ..builder import Op
from .attrs import _bools, _conv_numbers, _enum, _int_matrix, _ints, _result_shape, _struct
from .scope import converter


# -- contractions ---------------------------------------------------------------------------
def _preferred(lhs: Op, rhs: Op, result: Shape):
    et = result.element_type
    if et != lhs.shape.element_type or lhs.shape.element_type != rhs.shape.element_type:
        return et
    return None


@converter("stablehlo.dot_general")
def _c_dot_general(s, op):
    lhs, rhs = s.get(op.operands[0]), s.get(op.operands[1])
    d = _struct(op.attributes["dot_dimension_numbers"], "dot")
    dn = DotDimensionNumbers(d.get("lhs_contracting_dimensions", ()), d.get("rhs_contracting_dimensions", ()),
                             d.get("lhs_batching_dimensions", ()), d.get("rhs_batching_dimensions", ()))
    # the precision config says where a target that takes F32 products through BF16 keeps F32
    # (HIGHEST); `algorithm` is not read
    return _boolean_product(s, op, lhs, rhs, lambda a, b, pref: s.emit(
        "dot_general", lhs=a, rhs=b, dimension_numbers=dn, preferred_element_type=pref,
        precision_config=_precision(op)))


@converter("stablehlo.dot")
def _c_dot(s, op):
    lhs, rhs = s.get(op.operands[0]), s.get(op.operands[1])
    return _boolean_product(s, op, lhs, rhs, lambda a, b, pref: s.emit(
        "dot", lhs=a, rhs=b, preferred_element_type=pref, precision_config=_precision(op)))


def _boolean_product(s, op, lhs: Op, rhs: Op, product) -> list:
    """`product(lhs, rhs, preferred_element_type)`; a product of booleans, which StableHLO has
    and XLA's Dot does not (jax.lax.dot_general of bool arrays: an OR of ANDs), as the product
    of their 0/1 values in S32, then != 0."""
    result = _result_shape(op)
    if not (lhs.shape.element_type.is_pred or rhs.shape.element_type.is_pred):
        return [product(lhs, rhs, _preferred(lhs, rhs, result))]
    ints = [s.emit("convert_element_type", operand=x, new_element_type=S32) for x in (lhs, rhs)]
    counts = product(*ints, None)
    return [s.emit("convert_element_type", operand=counts, new_element_type=result.element_type)]


def _precision(op, all_default=False):
    """The op's precision_config as names (DEFAULT, HIGH, HIGHEST), or None: for none, and
    for all DEFAULT unless `all_default` (what JAX writes unless asked: a product's text then
    stays as it was without one)."""
    if "precision_config" not in op.attributes:
        return None
    names = tuple(_enum(a) for a in ir.ArrayAttr(op.attributes["precision_config"]))
    return names if names and (all_default or any(n != "DEFAULT" for n in names)) else None


def _conv(s, op, padding):
    lhs, rhs = s.get(op.operands[0]), s.get(op.operands[1])
    dn = _conv_numbers(op.attributes["dimension_numbers"])
    n = len(dn.input_spatial_dimensions)
    ones = (1,) * n
    strides = _ints(op.attributes["window_strides"]) if "window_strides" in op.attributes else ones
    lhs_dil = _ints(op.attributes["lhs_dilation"]) if "lhs_dilation" in op.attributes else ones
    rhs_dil = _ints(op.attributes["rhs_dilation"]) if "rhs_dilation" in op.attributes else ones
    if "window_reversal" in op.attributes:
        rev = [d for d, r in zip(dn.kernel_spatial_dimensions, _bools(op.attributes["window_reversal"])) if r]
        if rev:          # a reversed window is the convolution with the kernel reversed
            rhs = s.emit("rev", operand=rhs, dimensions=tuple(rev))
    precision = _precision(op, all_default=True)
    return [s.emit("conv_general_dilated", lhs=lhs, rhs=rhs, window_strides=strides, padding=padding,
                   lhs_dilation=lhs_dil, rhs_dilation=rhs_dil, dimension_numbers=dn,
                   feature_group_count=ir.IntegerAttr(op.attributes["feature_group_count"]).value,
                   batch_group_count=ir.IntegerAttr(op.attributes["batch_group_count"]).value,
                   precision_config=precision,
                   preferred_element_type=_preferred(lhs, rhs, _result_shape(op)))]


@converter("stablehlo.convolution")
def _c_convolution(s, op):
    n = _result_shape(op).rank - 2
    pad = _int_matrix(op.attributes["padding"]) if "padding" in op.attributes else [(0, 0)] * n
    return _conv(s, op, tuple(pad))


@converter("stablehlo.dynamic_conv")
def _c_dynamic_conv(s, op):
    pad = s.constant_operand(op.operands[2], "the padding operand")
    return _conv(s, op, tuple(tuple(int(x) for x in row) for row in np.asarray(pad).reshape(-1, 2)))
