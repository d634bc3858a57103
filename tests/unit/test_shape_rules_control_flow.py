"""Constraints of Call, Map, While, Conditional, Sort, ReducePrecision and the dynamic-size ops."""
import numpy as np
import pytest

import xlair as xla
from xlair import C64, F32, PRED, S32, U8, Shape
from xlair import ops as O
from xlair_testing import comp_of, scalar_computation, check_rule

ST = Shape.tuple([Shape(S32, ()), Shape(F32, (2,))])
COND = comp_of(lambda b, s: O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(3))), ST, name="cond")
BODY = comp_of(
    lambda b, s: O.tuple(b, [O.get_tuple_element(s, 0), O.get_tuple_element(s, 1)]), ST, name="body")
NOT_PRED = comp_of(lambda b, s: O.get_tuple_element(s, 0), ST, name="not_pred")
BAD_BODY = comp_of(lambda b, s: O.get_tuple_element(s, 1), ST, name="bad_body")
NEG = comp_of(lambda b, x: O.neg(x), Shape(F32, ()), name="neg")
NEG_S = comp_of(lambda b, x: O.neg(x), Shape(S32, ()), name="neg_s")
LT = comp_of(lambda b, x, y: O.lt(x, y), Shape(F32, ()), Shape(F32, ()), name="lt")
ADD = scalar_computation("add", F32)


def _b():
    b = xla.Builder("bad")
    return b, {"f": b.parameter(0, Shape(F32, (3,))), "s": b.parameter(1, Shape(F32, ())),
               "i": b.parameter(2, Shape(S32, ())), "p": b.parameter(3, Shape(PRED, ())),
               "t": b.parameter(4, ST), "m": b.parameter(5, Shape(F32, (2, 3))),
               "u": b.parameter(6, Shape(U8, ())), "c": b.parameter(7, Shape(C64, (3,)))}


CASES = [
    ("call", lambda b, p: O.call(NEG, [p["i"]]), "'xla.call' args must match the parameters of the computation (f32[]) -> f32[]; got [s32[]]"),
    ("call", lambda b, p: O.call(NEG, [p["s"], p["s"]]), "'xla.call' args must match the parameters"),
    ("call", lambda b, p: O.call(p["s"], [p["s"]]), "'xla.call' computation must be an xla.Computation"),
    ("while", lambda b, p: O.while_(COND, BODY, p["f"]), "'xla.while' condition must take parameters [f32[3]] (the type of init); got ((s32[], f32[2])) -> pred[]"),
    ("while", lambda b, p: O.while_(NOT_PRED, BODY, p["t"]), "'xla.while' condition must return a PRED scalar"),
    ("while", lambda b, p: O.while_(COND, BAD_BODY, p["t"]), "'xla.while' body must return the type of init"),
    ("conditional", lambda b, p: O.conditional(p["s"], p["s"], NEG, p["s"], NEG), "'xla.conditional' branch_index must have PRED or S32 element type"),
    ("conditional", lambda b, p: O.conditional(p["p"], p["s"], NEG, p["i"], NEG_S),
     "'xla.conditional' branch_computations[1] must return the type of branch_computations[0]"),
    ("conditional", lambda b, p: O.conditional(p["p"], p["i"], NEG, p["s"], NEG),
     "'xla.conditional' branch_computations[0] must take parameters [s32[]]"),
    ("conditional", lambda b, p: O.conditional(p["i"], [NEG, NEG], [p["s"]]),
     "'xla.conditional' branch_operands must have one operand per branch computation (2)"),
    ("conditional", lambda b, p: O.conditional(p["p"], [NEG, NEG, NEG], [p["s"]] * 3),
     "'xla.conditional' branch_computations must be two computations (true, false) for a PRED predicate"),
    ("conditional", lambda b, p: O.conditional(p["i"], [], []), "'xla.conditional' branch_computations must have at least one computation"),
    ("conditional", lambda b, p: O.conditional(p["i"], NEG), "'xla.conditional' arguments must match"),
    ("map", lambda b, p: O.map([p["f"], p["m"]], ADD, [0]), "'xla.map' operands[1] must have the dimensions of operands[0]"),
    ("map", lambda b, p: O.map([p["m"]], NEG, [1, 0]), "'xla.map' dimensions must be every dimension in order"),
    ("map", lambda b, p: O.map([p["f"]], ADD, [0]), "'xla.map' computation must take parameters [f32[]]"),
    ("map", lambda b, p: O.map([p["f"]], ADD, [0], [p["f"]]), "'xla.map' static_operands[0] must be a scalar"),
    ("map", lambda b, p: O.map([p["f"]], comp_of(lambda bb, x: O.broadcast(x, [2]), Shape(F32, ())), [0]),
     "'xla.map' computation must return a scalar"),
    ("sort", lambda b, p: O.sort([p["f"]], LT, 1), "'xla.sort' dimension must be a dimension of the operands' rank 1"),
    ("sort", lambda b, p: O.sort([p["f"], p["m"]], LT), "'xla.sort' operands[1] must have the dimensions of operands[0]"),
    ("sort", lambda b, p: O.sort([p["f"]], ADD), "'xla.sort' comparator must return a PRED scalar"),
    ("sort", lambda b, p: O.sort([p["f"], p["f"]], LT), "'xla.sort' comparator must take parameters [f32[], f32[], f32[], f32[]]"),
    ("sort", lambda b, p: O.sort([p["s"]], LT), "'xla.sort' operands must have rank >= 1"),
    ("sort", lambda b, p: O.sort([p["f"]], LT, 0, "yes"), "'xla.sort' is_stable must be a bool"),
    ("get_dimension_size", lambda b, p: O.get_dimension_size(p["f"], 1), "'xla.get_dimension_size' dimension must be dimensions of the operand's rank 1"),
    ("get_dimension_size", lambda b, p: O.get_dimension_size(p["t"], 0), "'xla.get_dimension_size' operand must be an array"),
    ("set_dimension_size", lambda b, p: O.set_dimension_size(p["f"], p["s"], 0), "'xla.set_dimension_size' size must have integer (S32) element type"),
    ("set_dimension_size", lambda b, p: O.set_dimension_size(p["f"], p["i"], 2), "'xla.set_dimension_size' dimension must be dimensions of the operand's rank 1"),
    ("reduce_precision", lambda b, p: O.reduce_precision(p["i"], 5, 10), "'xla.reduce_precision' operand must have floating-point element type"),
    ("reduce_precision", lambda b, p: O.reduce_precision(p["f"], 0, 10), "'xla.reduce_precision' exponent_bits must be at least 1"),
    ("reduce_precision", lambda b, p: O.reduce_precision(p["f"], 5, -1), "'xla.reduce_precision' mantissa_bits must not be negative"),
]


@pytest.mark.parametrize("op,call,message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(op, call, message):
    check_rule(call, _b, op, message, "test_shape_rules_control_flow.py")


def test_verifier_checks_text_calls():
    """A call naming a missing function, in text, is an XlaError at parse/verify time."""
    text = """func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = "xla.call"(%a) {computation = @nowhere} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
    with pytest.raises(xla.XlaError, match="'xla.call' computation must name a function of the module; got '@nowhere'"):
        xla.Computation.from_text(text)
