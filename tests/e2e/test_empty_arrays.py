"""Zero-sized dimensions through the ops: results without elements, reductions and dots over
empty dimensions, slices, pads and concatenations of empty arrays."""
import numpy as np
import pytest

import xlair as xla
from xlair import F32, S32, Shape
from xlair import ops as O
from xlair_testing import comp_of, run_and_compare, scalar_computation

ADD = scalar_computation("add", F32)
LT = scalar_computation("lt", F32)

CASES = {
    "elementwise": lambda b, z, w: O.tanh(O.add(z, z)),
    "reduce_over_empty": lambda b, z, w: O.reduce(z, O.constant(b, np.float32(1)), ADD, [0]),
    "reduce_all": lambda b, z, w: O.reduce(z, O.constant(b, np.float32(1)), ADD, [0, 1]),
    "dot_empty_sum": lambda b, z, w: O.dot(O.transpose(z, [1, 0]), z),
    "dot_empty_rows": lambda b, z, w: O.dot(z, w),
    "sort": lambda b, z, w: O.sort(z, LT, 0),
    "transpose": lambda b, z, w: O.transpose(z, [1, 0]),
    "concatenate": lambda b, z, w: O.concatenate([z, z], 0),
    "pad": lambda b, z, w: O.pad(z, O.constant(b, np.float32(2)), [(1, 1, 0), (0, 0, 1)]),
    "rev": lambda b, z, w: O.rev(z, [0, 1]),
    "slice": lambda b, z, w: O.slice(z, [0, 1], [0, 3]),
    "broadcast": lambda b, z, w: O.broadcast(z, [2]),
    "reshape": lambda b, z, w: O.reshape(z, [3, 0]),
    "iota": lambda b, z, w: O.iota(b, Shape(F32, (0, 4)), 1),
    "dynamic_slice": lambda b, z, w: O.dynamic_slice(z, [O.constant(b, np.int32(0))] * 2, [0, 2]),
    "convert": lambda b, z, w: O.convert_element_type(z, S32),
    "select": lambda b, z, w: O.select(O.lt(z, z), z, z),
    "map": lambda b, z, w: O.map([z, z], ADD, [0, 1]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_empty(covers, target, case):
    c = comp_of(lambda b, z, w: CASES[case](b, z, w), Shape(F32, (0, 3)), Shape(F32, (3, 2)), name=case)
    got = run_and_compare(c, np.zeros((0, 3), np.float32), np.ones((3, 2), np.float32), target=target)
    if case == "reduce_over_empty":
        np.testing.assert_array_equal(got, np.ones(3, np.float32))      # just the init value
    if case == "dot_empty_sum":
        np.testing.assert_array_equal(got, np.zeros((3, 3), np.float32))
    if case == "pad":
        np.testing.assert_array_equal(got, np.full((2, 5), 2, np.float32))
