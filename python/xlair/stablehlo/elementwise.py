"""Converters of element-wise ops: the unary and binary tables (a line per op), compare,
select, clamp, the conversions, reduce_precision; what XLA's Cbrt and BitcastConvertType
do not take.
"""
from __future__ import annotations

from xlair.dialect.checks import XlaError
from xlair.dialect.ir import ir

from .attrs import _enum, _result_shape, shape_of
from .scope import CONVERTERS, converter, xla_lacks


UNARY = {   # stablehlo op -> xla op, operand -> operand
    "abs": "abs", "cbrt": "cbrt", "ceil": "ceil", "cosine": "cos", "count_leading_zeros": "clz",
    "exponential": "exp", "exponential_minus_one": "expm1", "floor": "floor", "imag": "imag",
    "is_finite": "is_finite", "log": "log", "log_plus_one": "log1p", "logistic": "logistic",
    "negate": "neg", "not": "not", "popcnt": "population_count", "real": "real",
    "round_nearest_afz": "round_nearest_afz", "round_nearest_even": "round_nearest_even",
    "rsqrt": "rsqrt", "sign": "sign", "sine": "sin", "sqrt": "sqrt", "tan": "tan", "tanh": "tanh",
}
BINARY = {  # stablehlo op -> xla op, (lhs, rhs) -> (lhs, rhs)
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "remainder": "rem",
    "maximum": "max", "minimum": "min", "power": "pow", "atan2": "atan2", "and": "and", "or": "or",
    "xor": "xor", "shift_left": "shift_left", "shift_right_arithmetic": "shift_right_arithmetic",
    "shift_right_logical": "shift_right_logical", "complex": "complex",
}


def _table(table: dict, fn):
    for sh, xla_name in table.items():
        CONVERTERS["stablehlo." + sh] = fn(xla_name)


_table(UNARY, lambda x: lambda s, op: [s.emit(x, operand=s.get(op.operands[0]))])
_table(BINARY, lambda x: lambda s, op: [s.emit(x, lhs=s.get(op.operands[0]), rhs=s.get(op.operands[1]))])


# -- element-wise with attributes ------------------------------------------------------------
@converter("stablehlo.compare")
def _c_compare(s, op):
    direction = _enum(op.attributes["comparison_direction"])
    ctype = _enum(op.attributes["compare_type"]) if "compare_type" in op.attributes else None
    if direction not in ("EQ", "NE", "GE", "GT", "LE", "LT"):
        raise XlaError(f"comparison_direction {direction} is not one of EQ, NE, GE, GT, LE, LT")
    name = direction.lower() + ("_total_order" if ctype == "TOTALORDER" else "")
    return [s.emit(name, lhs=s.get(op.operands[0]), rhs=s.get(op.operands[1]))]


@converter("stablehlo.select")
def _c_select(s, op):
    p, t, f = (s.get(v) for v in op.operands)
    return [s.emit("select", pred=p, on_true=t, on_false=f)]


@converter("stablehlo.clamp")
def _c_clamp(s, op):
    lo, x, hi = (s.get(v) for v in op.operands)
    return [s.emit("clamp", min=lo, operand=x, max=hi)]


@converter("stablehlo.convert")
def _c_convert(s, op):
    x = s.get(op.operands[0])
    dst = _result_shape(op).element_type
    if x.shape.element_type.is_complex and not dst.is_complex:
        x = s.emit("real", operand=x)          # complex -> real types drop the imaginary part
        if x.shape.element_type == dst:
            return [x]
    return [s.emit("convert_element_type", operand=x, new_element_type=dst)]


@converter("stablehlo.bitcast_convert")
def _c_bitcast(s, op):
    return [s.emit("bitcast_convert_type", operand=s.get(op.operands[0]),
                   new_element_type=_result_shape(op).element_type)]


@converter("stablehlo.reduce_precision")
def _c_reduce_precision(s, op):
    return [s.emit("reduce_precision", operand=s.get(op.operands[0]),
                   exponent_bits=ir.IntegerAttr(op.attributes["exponent_bits"]).value,
                   mantissa_bits=ir.IntegerAttr(op.attributes["mantissa_bits"]).value)]


@xla_lacks("stablehlo.cbrt")
def _cbrt_lacks(op):
    if shape_of(op.operands[0].type, "operand").element_type.is_complex:
        return "of complex values: XLA's Cbrt takes floating-point types only"
    return None


@xla_lacks("stablehlo.bitcast_convert")
def _bitcast_lacks(op):
    src, dst = shape_of(op.operands[0].type, "operand"), _result_shape(op)
    s, d = src.element_type, dst.element_type
    if (s.is_pred or d.is_pred) and src.dims != dst.dims:
        return ("with i1 changing the shape: StableHLO packs i1 as one bit, XLA's BitcastConvertType "
                "stores PRED in a byte")
    if (s.is_complex or d.is_complex) and (s.is_complex != d.is_complex or s.bits != d.bits):
        return f"from {s} to {d}: XLA bitcasts complex values only to complex values of the same width"
    return None
