"""Every shape rule's constraints: a bad call raises XlaError at build time, naming the op, the
parameter and the rule (`'xla.<op>' <parameter> <rule>; got <value>`)."""
import numpy as np
import pytest

import xlair as xla
from xlair import C64, C128, F32, F64, PRED, S32, U8, U32, Shape
from xlair import ops as O
from xlair_testing import scalar_computation, check_rule


def _b():
    b = xla.Builder("bad")
    p = {
        "f": b.parameter(0, Shape(F32, (2, 3))),
        "f3": b.parameter(1, Shape(F32, (3,))),
        "i": b.parameter(2, Shape(S32, (2, 3))),
        "s": b.parameter(3, Shape(F32, ())),
        "si": b.parameter(4, Shape(S32, ())),
        "p": b.parameter(5, Shape(PRED, (2, 3))),
        "c": b.parameter(6, Shape(C64, (2, 3))),
        "t": b.parameter(7, Shape.tuple([Shape(F32, (2,)), Shape(S32, ())])),
        "u": b.parameter(8, Shape(U8, (2, 3))),
        "f4": b.parameter(9, Shape(F32, (4, 3, 2))),
    }
    return b, p


ADD = scalar_computation("add", F32)
_b3 = xla.Builder("add3")
O.add(_b3.parameter(0, Shape(F32, ())), _b3.parameter(1, Shape(F32, ())))
_b3.parameter(2, Shape(F32, ()))
ADD2 = _b3.build()

CASES = [
    # element-wise binary
    ("add", lambda b, p: O.add(p["f"], p["i"]), "'xla.add' rhs must have the element type of lhs"),
    ("add", lambda b, p: O.add(p["f"], p["f3"]), "'xla.add' rhs must have the rank of lhs or be a scalar"),
    ("add", lambda b, p: O.add(p["f"], p["f4"]), "rhs must have the rank of lhs"),
    ("add", lambda b, p: O.add(p["f"], p["f3"], [0]), "'xla.add' rhs dimension 0 (size 3) must be 1 or equal dimension 0 (size 2)"),
    ("add", lambda b, p: O.add(p["f"], p["f3"], [2]), "'xla.add' broadcast_dimensions must be dimensions of the result's rank 2"),
    ("add", lambda b, p: O.add(p["f"], p["f3"], [0, 1]), "'xla.add' broadcast_dimensions must have one entry per dimension of rhs"),
    ("add", lambda b, p: O.add(p["f4"], O.transpose(p["f"], [1, 0]), [2, 1]), "'xla.add' broadcast_dimensions must be strictly increasing"),
    ("add", lambda b, p: O.add(p["f"], p["t"]), "'xla.add' rhs must be an array"),
    ("add", lambda b, p: O.add(p["f"], 3), "'xla.add' rhs must be an XlaOp"),
    ("sub", lambda b, p: O.sub(p["p"], p["p"]), "'xla.sub' lhs must have signed integer, unsigned integer, floating-point or complex element type"),
    ("rem", lambda b, p: O.rem(p["c"], p["c"]), "'xla.rem' lhs must have"),
    ("and", lambda b, p: O.and_(p["f"], p["f"]), "'xla.and' lhs must have PRED, signed integer or unsigned integer element type"),
    ("logical_and", lambda b, p: O.logical_and(p["i"], p["i"]), "'xla.logical_and' lhs must have PRED element type"),
    ("shift_left", lambda b, p: O.shift_left(p["f"], p["f"]), "'xla.shift_left' lhs must have signed integer or unsigned integer"),
    ("atan2", lambda b, p: O.atan2(p["i"], p["i"]), "'xla.atan2' lhs must have floating-point or complex element type"),
    ("complex", lambda b, p: O.complex(p["i"], p["i"]), "'xla.complex' lhs must have floating-point element type"),
    ("pow", lambda b, p: O.pow(p["p"], p["p"]), "'xla.pow' lhs must have"),
    # comparisons
    ("lt", lambda b, p: O.lt(p["c"], p["c"]), "'xla.lt' lhs must have PRED, signed integer, unsigned integer or floating-point element type"),
    ("eq", lambda b, p: O.eq(p["f"], p["i"]), "'xla.eq' rhs must have the element type of lhs"),
    ("lt_total_order", lambda b, p: O.lt_total_order(p["c"], p["c"]), "'xla.lt_total_order' lhs must have"),
    # unary
    ("cos", lambda b, p: O.cos(p["i"]), "'xla.cos' operand must have floating-point or complex element type"),
    ("is_finite", lambda b, p: O.is_finite(p["i"]), "'xla.is_finite' operand must have floating-point element type"),
    ("logical_not", lambda b, p: O.logical_not(p["i"]), "'xla.logical_not' operand must have PRED element type"),
    ("population_count", lambda b, p: O.population_count(p["f"]), "'xla.population_count' operand must have"),
    ("clz", lambda b, p: O.clz(p["p"]), "'xla.clz' operand must have"),
    ("abs", lambda b, p: O.abs(p["u"]), "'xla.abs' operand must have signed integer, floating-point or complex"),
    ("ceil", lambda b, p: O.ceil(p["c"]), "'xla.ceil' operand must have floating-point element type"),
    ("cbrt", lambda b, p: O.cbrt(p["c"]), "'xla.cbrt' operand must have floating-point element type"),
    ("neg", lambda b, p: O.neg(p["p"]), "'xla.neg' operand must have"),
    ("round_nearest_even", lambda b, p: O.round_nearest_even(p["i"]), "'xla.round_nearest_even' operand must have floating-point"),
    ("not", lambda b, p: O.not_(p["t"]), "'xla.not' operand must be an array"),
    # select, clamp
    ("select", lambda b, p: O.select(p["i"], p["f"], p["f"]), "'xla.select' pred must have PRED element type"),
    ("select", lambda b, p: O.select(p["p"], p["f"], p["i"]), "'xla.select' on_false must have the shape of on_true"),
    ("select", lambda b, p: O.select(O.slice(p["p"], [0, 0], [1, 3]), p["f"], p["f"]), "'xla.select' pred must be a scalar or have the dimensions of on_true"),
    ("select", lambda b, p: O.select(p["p"], p["t"], p["t"]), "'xla.select' pred must be a scalar"),
    ("clamp", lambda b, p: O.clamp(p["f3"], p["f"], p["s"]), "'xla.clamp' min must be a scalar or have the shape of operand"),
    ("clamp", lambda b, p: O.clamp(p["si"], p["f"], p["s"]), "'xla.clamp' min must have the element type of operand"),
    ("clamp", lambda b, p: O.clamp(p["c"], p["c"], p["c"]), "'xla.clamp' operand must have an ordered (non-complex) element type"),
    # conversions
    ("convert_element_type", lambda b, p: O.convert_element_type(p["c"], F32), "'xla.convert_element_type' new_element_type must be complex when operand is complex"),
    ("convert_element_type", lambda b, p: O.convert_element_type(p["f"], "f128"), "'xla.convert_element_type' new_element_type must be an XLA element type"),
    ("bitcast_convert_type", lambda b, p: O.bitcast_convert_type(p["c"], F32), "'xla.bitcast_convert_type' new_element_type must be complex exactly when operand is"),
    ("bitcast_convert_type", lambda b, p: O.bitcast_convert_type(p["c"], C128), "'xla.bitcast_convert_type' new_element_type must have the width of operand's complex type"),
    ("bitcast_convert_type", lambda b, p: O.bitcast_convert_type(p["p"], S32), "'xla.bitcast_convert_type' operand must have a last dimension of size 4 (32/8 bits)"),
    ("bitcast_convert_type", lambda b, p: O.bitcast_convert_type(p["u"], F32), "'xla.bitcast_convert_type' operand must have a last dimension of size 4"),
    # shape ops
    ("iota", lambda b, p: O.iota(b, PRED, 4), "'xla.iota' type must be an integer, floating-point or complex type"),
    ("iota", lambda b, p: O.iota(b, Shape(F32, (2, 3)), 2), "'xla.iota' iota_dimension must be dimensions of the shape's rank 2"),
    ("iota", lambda b, p: O.iota(b, F32, -1), "'xla.iota' shape must not be negative"),
    ("broadcast", lambda b, p: O.broadcast(p["f"], [-1]), "'xla.broadcast' broadcast_sizes must not be negative"),
    ("broadcast", lambda b, p: O.broadcast(p["f"], "x"), "'xla.broadcast' broadcast_sizes must be a sequence of integers"),
    ("broadcast_in_dim", lambda b, p: O.broadcast_in_dim(p["f"], [2, 3, 4], [0]), "'xla.broadcast_in_dim' broadcast_dimensions must have one entry per operand dimension"),
    ("broadcast_in_dim", lambda b, p: O.broadcast_in_dim(p["f"], [2, 3], [0, 2]), "'xla.broadcast_in_dim' broadcast_dimensions must be dimensions of the output's rank 2"),
    ("broadcast_in_dim", lambda b, p: O.broadcast_in_dim(p["f"], [2, 3], [0, 0]), "'xla.broadcast_in_dim' broadcast_dimensions must not repeat"),
    ("broadcast_in_dim", lambda b, p: O.broadcast_in_dim(p["f"], [2, 4], [0, 1]), "'xla.broadcast_in_dim' operand dimension 1 (size 3) must be 1 or out_dim_size[1] (4)"),
    ("reshape", lambda b, p: O.reshape(p["f"], [5]), "'xla.reshape' new_sizes must have as many elements as operand"),
    ("reshape", lambda b, p: O.reshape(p["f"], [1, 1], [6]), "'xla.reshape' dimensions must be a permutation of [0, 2)"),
    ("collapse", lambda b, p: O.collapse(p["f4"], [0, 2]), "'xla.collapse' dimensions must be an in-order, consecutive subset"),
    ("collapse", lambda b, p: O.collapse(p["f4"], [1, 0]), "'xla.collapse' dimensions must be an in-order, consecutive subset"),
    ("collapse", lambda b, p: O.collapse(p["f4"], [3]), "'xla.collapse' dimensions must be dimensions of the operand's rank 3"),
    ("transpose", lambda b, p: O.transpose(p["f"], [0, 0]), "'xla.transpose' permutation must be a permutation of [0, 2)"),
    ("rev", lambda b, p: O.rev(p["f"], [1, 1]), "'xla.rev' dimensions must not repeat"),
    ("rev", lambda b, p: O.rev(p["f"], [2]), "'xla.rev' dimensions must be dimensions of the operand's rank 2"),
    ("slice", lambda b, p: O.slice(p["f"], [0], [1, 1]), "'xla.slice' start_indices must have 2 elements"),
    ("slice", lambda b, p: O.slice(p["f"], [0, 2], [1, 1]), "'xla.slice' limit_indices must be >= start_indices"),
    ("slice", lambda b, p: O.slice(p["f"], [0, 0], [3, 1]), "'xla.slice' limit_indices must be <= the operand's dimensions"),
    ("slice", lambda b, p: O.slice(p["f"], [-1, 0], [1, 1]), "'xla.slice' start_indices must not be negative"),
    ("slice", lambda b, p: O.slice(p["f"], [0, 0], [1, 1], [1, 0]), "'xla.slice' strides must be positive"),
    ("concatenate", lambda b, p: O.concatenate(b, [], 0), "'xla.concatenate' operands must have at least one array"),
    ("concatenate", lambda b, p: O.concatenate([p["f"], p["i"]], 0), "'xla.concatenate' operands[1] must have the element type of operands[0]"),
    ("concatenate", lambda b, p: O.concatenate([p["f"], p["f3"]], 0), "'xla.concatenate' operands[1] must have the rank of operands[0]"),
    ("concatenate", lambda b, p: O.concatenate([p["f"], p["f"]], 2), "'xla.concatenate' dimension must be dimensions of the operand's rank 2"),
    ("concatenate", lambda b, p: O.concatenate([p["s"], p["s"]], 0), "'xla.concatenate' operands must not be scalars"),
    ("concatenate", lambda b, p: O.concatenate([p["f"], O.transpose(p["f"], [1, 0])], 0), "'xla.concatenate' operands[1] must match operands[0] (f32[2,3]) in every dimension but 0"),
    ("pad", lambda b, p: O.pad(p["f"], p["f3"], [(0, 0, 0)] * 2), "'xla.pad' padding_value must be a scalar"),
    ("pad", lambda b, p: O.pad(p["f"], p["si"], [(0, 0, 0)] * 2), "'xla.pad' padding_value must have the element type of operand"),
    ("pad", lambda b, p: O.pad(p["f"], p["s"], [(0, 0, 0)]), "'xla.pad' padding_config must have one dimension per operand dimension"),
    ("pad", lambda b, p: O.pad(p["f"], p["s"], [(0, 0, -1), (0, 0, 0)]), "'xla.pad' padding_config interior_padding must not be negative"),
    ("pad", lambda b, p: O.pad(p["f"], p["s"], [(-2, -1, 0), (0, 0, 0)]), "'xla.pad' padding_config must leave a non-negative size in dimension 0"),
    ("pad", lambda b, p: O.pad(p["f"], p["s"], [(0, 0), (0, 0)]), "'xla.pad' padding_config must be a PaddingConfig"),
    ("get_tuple_element", lambda b, p: O.get_tuple_element(p["f"], 0), "'xla.get_tuple_element' tuple_data must be a tuple"),
    ("get_tuple_element", lambda b, p: O.get_tuple_element(p["t"], 2), "'xla.get_tuple_element' index must be in [0, 2)"),
    ("constant", lambda b, p: O.constant(b, "text"), "'xla.constant' value must have an XLA element type"),
    # dot, dot_general
    ("dot", lambda b, p: O.dot(p["f"], p["f"]), "'xla.dot' rhs must have dimension 0 equal to the last dimension of lhs"),
    ("dot", lambda b, p: O.dot(p["f4"], p["f3"]), "'xla.dot' lhs must be a vector or a matrix"),
    ("dot", lambda b, p: O.dot(p["p"], O.transpose(p["p"], [1, 0])), "'xla.dot' lhs must have integer, floating-point or complex element type"),
    ("dot", lambda b, p: O.dot(p["f"], O.transpose(p["i"], [1, 0])), "'xla.dot' rhs must have the element type of lhs"),
    ("dot_general", lambda b, p: O.dot_general(p["f"], p["f"], xla.DotDimensionNumbers([1], [0])),
     "'xla.dot_general' dimension_numbers.rhs_contracting_dimensions must pair dimensions of equal size"),
    ("dot_general", lambda b, p: O.dot_general(p["f"], p["f"], xla.DotDimensionNumbers([1, 0], [1])),
     "'xla.dot_general' dimension_numbers.rhs_contracting_dimensions must have as many dimensions as lhs_contracting_dimensions"),
    ("dot_general", lambda b, p: O.dot_general(p["f"], p["f"], xla.DotDimensionNumbers([2], [1])),
     "'xla.dot_general' dimension_numbers.lhs_contracting_dimensions must be dimensions of the operand's rank 2"),
    ("dot_general", lambda b, p: O.dot_general(p["f"], p["f"], xla.DotDimensionNumbers([1, 1], [1, 1])),
     "'xla.dot_general' dimension_numbers.lhs_contracting_dimensions must not repeat"),
    ("dot_general", lambda b, p: O.dot_general(p["f"], p["f"], xla.DotDimensionNumbers([1], [1], [1], [1])),
     "'xla.dot_general' dimension_numbers.lhs_batch_dimensions must not overlap lhs_contracting_dimensions"),
    ("dot_general", lambda b, p: O.dot_general(p["f"], p["f"], xla.DotDimensionNumbers([1], [1], [0], [])),
     "'xla.dot_general' dimension_numbers.rhs_batch_dimensions must have as many dimensions as lhs_batch_dimensions"),
    ("dot_general", lambda b, p: O.dot_general(p["f"], p["f"], {"lhs_contracting_dimensions": [1]}),
     "'xla.dot_general' dimension_numbers must be a DotDimensionNumbers"),
    # reduce
    ("reduce", lambda b, p: O.reduce(p["f"], p["s"], ADD, [2]), "'xla.reduce' dimensions must be dimensions of the operand's rank 2"),
    ("reduce", lambda b, p: O.reduce(p["f"], p["s"], ADD, [0, 0]), "'xla.reduce' dimensions must not repeat"),
    ("reduce", lambda b, p: O.reduce(p["f"], p["f3"], ADD, [0]), "'xla.reduce' init_values[0] must be a scalar"),
    ("reduce", lambda b, p: O.reduce(p["f"], p["si"], ADD, [0]), "'xla.reduce' init_values[0] must have the element type of operands[0]"),
    ("reduce", lambda b, p: O.reduce(p["f"], [p["s"], p["s"]], ADD, [0]), "'xla.reduce' init_values must have one scalar per operand (1)"),
    ("reduce", lambda b, p: O.reduce([p["f"], p["f4"]], [p["s"], p["s"]], ADD, [0]), "'xla.reduce' operands[1] must have the dimensions of operands[0]"),
    ("reduce", lambda b, p: O.reduce(p["f"], p["s"], ADD2, [0]), "'xla.reduce' computation must take 2 scalar parameters"),
    ("reduce", lambda b, p: O.reduce(p["i"], p["si"], ADD, [0]), "'xla.reduce' computation must have parameters [s32[], s32[]]"),
    ("reduce", lambda b, p: O.reduce(p["f"], p["s"], p["f"], [0]), "'xla.reduce' computation must be an xla.Computation"),
    ("reduce", lambda b, p: O.reduce(p["f"], p["s"], scalar_computation("lt", F32), [0]), "'xla.reduce' computation must return f32[]"),
    # dynamic slices
    ("dynamic_slice", lambda b, p: O.dynamic_slice(p["f"], [p["si"]], [1, 1]), "'xla.dynamic_slice' start_indices must have one scalar per operand dimension"),
    ("dynamic_slice", lambda b, p: O.dynamic_slice(p["f"], [p["si"], p["s"]], [1, 1]), "'xla.dynamic_slice' start_indices[1] must have integer element type"),
    ("dynamic_slice", lambda b, p: O.dynamic_slice(p["f"], [p["si"], O.convert_element_type(p["si"], U32)], [1, 1]),
     "'xla.dynamic_slice' start_indices[1] must have the type of start_indices[0] (S32)"),
    ("dynamic_slice", lambda b, p: O.dynamic_slice(p["f"], [p["si"], p["si"]], [3, 1]), "'xla.dynamic_slice' size_indices must be in [0, dimension size]"),
    ("dynamic_slice", lambda b, p: O.dynamic_slice(p["f"], [p["si"], p["si"]], [1]), "'xla.dynamic_slice' size_indices must have 2 elements"),
    ("dynamic_update_slice", lambda b, p: O.dynamic_update_slice(p["f"], p["f4"], [p["si"], p["si"]]), "'xla.dynamic_update_slice' update must have the rank of operand"),
    ("dynamic_update_slice", lambda b, p: O.dynamic_update_slice(p["f"], p["i"], [p["si"], p["si"]]), "'xla.dynamic_update_slice' update must have the element type of operand"),
    ("dynamic_update_slice", lambda b, p: O.dynamic_update_slice(p["f3"], O.concatenate([p["f3"], p["f3"]], 0), [p["si"]]),
     "'xla.dynamic_update_slice' update must fit in operand"),
]


@pytest.mark.parametrize("op,call,message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(op, call, message):
    check_rule(call, _b, op, message, "test_shape_rules.py", exact_op=False)


# ops whose only rules are their family's operand-type rules, tested through a sibling op
SHARED_RULES = {"mul", "div", "max", "min", "logical_or", "or", "xor", "shift_right_logical",
                "shift_right_arithmetic", "ne", "ge", "gt", "le", "eq_total_order", "ne_total_order",
                "ge_total_order", "gt_total_order", "le_total_order", "sin", "tan", "exp", "expm1",
                "log", "log1p", "logistic", "tanh", "sqrt", "rsqrt", "imag", "real", "floor", "sign",
                "round_nearest_afz", "tuple"}


def test_every_registered_op_has_a_negative_test():
    """Every op of the registry has rule tests in some tests/unit/test_shape_rules*.py (each such
    module lists CASES of (op, call, message) and may extend SHARED_RULES)."""
    import importlib.util
    import pathlib
    from xlair.dialect.core import all_ops
    tested, shared = set(), set(SHARED_RULES)
    for path in sorted(pathlib.Path(__file__).parent.glob("test_shape_rules*.py")):
        spec = importlib.util.spec_from_file_location(path.stem + "_cases", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        tested |= {c[0] for c in getattr(mod, "CASES", [])}
        shared |= set(getattr(mod, "SHARED_RULES", set()))
    untested = sorted(d.name for d in all_ops() if d.name not in tested | shared)
    assert untested == [], f"ops without negative tests: {untested}"
