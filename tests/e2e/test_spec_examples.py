"""Every example that the spec gives for the foundation ops, with the spec's own numbers."""
import numpy as np
import pytest

import xlair as xla
from xlair import F32, PRED, S32, Shape
from xlair import ops as O
from xlair_testing import check_example, comp_of, scalar_computation

V = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]],
              [[30, 31, 32], [35, 36, 37]], [[40, 41, 42], [45, 46, 47]]], np.float32)


def test_clamp(covers, target):
    covers.add(target, "xla.clamp")
    c = comp_of(lambda b, x: O.clamp(O.constant(b, np.int32(0)), x, O.constant(b, np.int32(6))),
                Shape(S32, (3,)))
    check_example(c, [np.array([-1, 5, 9], np.int32)], np.array([0, 5, 6], np.int32), target=target)


@pytest.mark.parametrize("dims,expected", [
    ((0, 1, 2), V.reshape(24)),
    # The spec's example labels these two the other way round ("v01 == f32[4x6]"), which
    # contradicts its own rule (the new dimension's size is the product of the collapsed
    # ones, in their place) and XlaBuilder::Collapse.  The numbers are the spec's; the
    # dimensions are the ones its rule gives for them (docs/semantics.md).
    ((1, 2), V.reshape(4, 6)), ((0, 1), V.reshape(8, 3))])
def test_collapse(covers, target, dims, expected):
    covers.add(target, "xla.collapse")
    c = comp_of(lambda b, v: O.collapse(v, dims), Shape(F32, (4, 2, 3)))
    check_example(c, [V], expected, target=target)


def test_concatenate(covers, target):
    covers.add(target, "xla.concatenate")
    c = comp_of(lambda b: O.concatenate([O.constant(b, np.array([2, 3], np.float32)),
                                         O.constant(b, np.array([4, 5], np.float32)),
                                         O.constant(b, np.array([6, 7], np.float32))], 0))
    check_example(c, [], np.array([2, 3, 4, 5, 6, 7], np.float32), target=target)
    a = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    c = comp_of(lambda b, x, y: O.concatenate([x, y], 0), Shape(F32, (3, 2)), Shape(F32, (1, 2)))
    check_example(c, [a, np.array([[7, 8]], np.float32)], np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32), target=target)


def test_convert_element_type(covers, target):
    covers.add(target, "xla.convert_element_type")
    c = comp_of(lambda b, a: O.convert_element_type(a, F32), Shape(S32, (3,)))
    check_example(c, [np.array([0, 1, 2], np.int32)], np.array([0.0, 1.0, 2.0], np.float32), target=target)


def test_dot_general_contracting(covers, target):
    covers.add(target, "xla.dot_general")
    dn = xla.DotDimensionNumbers(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[1])
    c = comp_of(lambda b, l, r: O.dot_general(l, r, dn), Shape(F32, (2, 3)), Shape(F32, (2, 3)))
    check_example(c, [np.array([[1, 2, 3], [4, 5, 6]], np.float32), np.array([[1, 1, 1], [2, 2, 2]], np.float32)],
                  np.array([[6, 12], [15, 30]], np.float32), target=target)


def test_dot_general_batch(covers, target):
    covers.add(target, "xla.dot_general")
    dn = xla.DotDimensionNumbers([2], [1], [0], [0])
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.float32)
    c = comp_of(lambda b, l, r: O.dot_general(l, r, dn), Shape(F32, (2, 2, 2)), Shape(F32, (2, 2, 2)))
    check_example(c, [lhs, rhs], lhs, target=target)


@pytest.mark.parametrize("lshape,rshape,expected", [
    ((3,), (3,), np.float32(1 * 4 + 2 * 5 + 3 * 6)),                        # vector . vector
    ((2, 3), (3,), np.array([32, 77], np.float32)),                          # matrix . vector
    ((2, 3), (3, 2), np.array([[22, 28], [49, 64]], np.float32)),            # matrix . matrix
])
def test_dot_table(covers, target, lshape, rshape, expected):
    covers.add(target, "xla.dot")
    lhs = np.arange(1, 7, dtype=np.float32)[:np.prod(lshape)].reshape(lshape)
    rhs = (np.arange(4, 7, dtype=np.float32) if rshape == (3,) else np.arange(1, 7, dtype=np.float32).reshape(rshape))
    c = comp_of(lambda b, l, r: O.dot(l, r), Shape(F32, lshape), Shape(F32, rshape))
    check_example(c, [lhs, rhs], expected, target=target)


def test_dynamic_slice(covers, target):
    covers.add(target, "xla.dynamic_slice")
    a = np.array([0, 1, 2, 3, 4], np.float32)
    c = comp_of(lambda b, a, s: O.dynamic_slice(a, [s], [2]), Shape(F32, (5,)), Shape(S32, ()))
    check_example(c, [a, np.int32(2)], np.array([2, 3], np.float32), target=target)
    bm = np.arange(12, dtype=np.float32).reshape(4, 3)
    c = comp_of(lambda b, a, s0, s1: O.dynamic_slice(a, [s0, s1], [2, 2]),
                Shape(F32, (4, 3)), Shape(S32, ()), Shape(S32, ()))
    check_example(c, [bm, np.int32(2), np.int32(1)], np.array([[7, 8], [10, 11]], np.float32), target=target)


def test_dynamic_update_slice(covers, target):
    covers.add(target, "xla.dynamic_update_slice")
    c = comp_of(lambda b, a, u, s: O.dynamic_update_slice(a, u, [s]),
                Shape(F32, (5,)), Shape(F32, (2,)), Shape(S32, ()))
    check_example(c, [np.arange(5, dtype=np.float32), np.array([5, 6], np.float32), np.int32(2)],
                  np.array([0, 1, 5, 6, 4], np.float32), target=target)
    bm = np.arange(12, dtype=np.float32).reshape(4, 3)
    u = np.array([[12, 13], [14, 15], [16, 17]], np.float32)
    c = comp_of(lambda b, a, u, s0, s1: O.dynamic_update_slice(a, u, [s0, s1]),
                Shape(F32, (4, 3)), Shape(F32, (3, 2)), Shape(S32, ()), Shape(S32, ()))
    check_example(c, [bm, u, np.int32(1), np.int32(1)],
                  np.array([[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]], np.float32), target=target)


R3 = np.tile(np.array([[1, 2, 3], [4, 5, 6]], np.float32), (4, 1, 1))  # "values 1 to 6 replicated"


@pytest.mark.parametrize("dims,expected", [
    ([0], np.array([[4, 8, 12], [16, 20, 24]], np.float32)),
    ([2], np.array([[6, 15]] * 4, np.float32)),
    ([0, 1], np.array([20, 28, 36], np.float32)),
    ([0, 1, 2], np.float32(84)),
])
def test_reduce_3d(covers, target, dims, expected):
    covers.add(target, "xla.reduce")
    add = scalar_computation("add", F32)
    c = comp_of(lambda b, x: O.reduce(x, O.constant(b, np.float32(0)), add, dims), Shape(F32, (4, 2, 3)))
    check_example(c, [R3], expected, target=target)


def test_reduce_argmax(covers, target):
    """The spec's variadic example: max and argmax of a 1-D array in parallel."""
    covers.add(target, "xla.reduce")
    f = xla.Builder("argmax")
    mx, amx = f.parameter(0, Shape(F32, ())), f.parameter(1, Shape(S32, ()))
    v, i = f.parameter(2, Shape(F32, ())), f.parameter(3, Shape(S32, ()))
    ge = O.ge(v, mx)
    O.tuple(f, [O.select(ge, v, mx), O.select(ge, i, amx)])
    f = f.build()

    def prog(b, vals):
        idx = O.iota(b, S32, 6)
        return O.reduce([vals, idx], [O.constant(b, np.float32(-np.inf)), O.constant(b, np.int32(0))], f, [0])
    c = comp_of(prog, Shape(F32, (6,)))
    check_example(c, [np.array([3, 9, 1, 9, 4, 2], np.float32)], (np.float32(9), np.int32(3)), target=target)


RESHAPES = [
    ((0, 1, 2), (24,), V.reshape(24)),
    ((0, 1, 2), (8, 3), V.reshape(8, 3)),
    ((1, 2, 0), (24,), np.array([10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42,
                                 15, 25, 35, 45, 16, 26, 36, 46, 17, 27, 37, 47], np.float32)),
    ((1, 2, 0), (8, 3), np.array([[10, 20, 30], [40, 11, 21], [31, 41, 12], [22, 32, 42],
                                  [15, 25, 35], [45, 16, 26], [36, 46, 17], [27, 37, 47]], np.float32)),
    ((1, 2, 0), (2, 6, 2), np.array([[[10, 20], [30, 40], [11, 21], [31, 41], [12, 22], [32, 42]],
                                     [[15, 25], [35, 45], [16, 26], [36, 46], [17, 27], [37, 47]]], np.float32)),
]


@pytest.mark.parametrize("dims,sizes,expected", RESHAPES)
def test_reshape(covers, target, dims, sizes, expected):
    covers.add(target, "xla.reshape")
    c = comp_of(lambda b, v: O.reshape(v, dims, sizes), Shape(F32, (4, 2, 3)))
    check_example(c, [V], expected, target=target)


def test_reshape_scalar_cases(covers, target):
    covers.add(target, "xla.reshape")
    c = comp_of(lambda b, x: O.reshape(x, [0, 1], []), Shape(F32, (1, 1)))
    check_example(c, [np.array([[5]], np.float32)], np.float32(5), target=target)
    c = comp_of(lambda b, x: O.reshape(x, [], [1, 1]), Shape(F32, ()))
    check_example(c, [np.float32(5)], np.array([[5]], np.float32), target=target)


def test_select(covers, target):
    covers.add(target, "xla.select")
    v1, v2 = np.array([1, 2, 3, 4], np.int32), np.array([100, 200, 300, 400], np.int32)
    c = comp_of(lambda b, p, x, y: O.select(p, x, y), Shape(PRED, (4,)), Shape(S32, (4,)), Shape(S32, (4,)))
    check_example(c, [np.array([True, False, False, True]), v1, v2], np.array([1, 200, 300, 4], np.int32), target=target)
    c = comp_of(lambda b, p, x, y: O.select(p, x, y), Shape(PRED, ()), Shape(S32, (4,)), Shape(S32, (4,)))
    check_example(c, [np.True_, v1, v2], v1, target=target)


def test_select_tuples(covers, target):
    """Tuples are scalars for Select: a scalar pred picks a whole tuple."""
    covers.add(target, "xla.select", "xla.tuple")
    def prog(b, p, x, y):
        O.select(p, O.tuple(b, [x, y]), O.tuple(b, [O.neg(x), O.neg(y)]))
    c = comp_of(prog, Shape(PRED, ()), Shape(S32, (2,)), Shape(F32, ()))
    x, y = np.array([1, 2], np.int32), np.float32(3)
    check_example(c, [np.False_, x, y], (-x, -y), target=target)
    check_example(c, [np.True_, x, y], (x, y), target=target)
    with pytest.raises(xla.XlaError, match="on_false must have the shape of on_true"):
        comp_of(lambda b, p, x, y: O.select(p, O.tuple(b, [x, y]), O.tuple(b, [y, x])),
                Shape(PRED, ()), Shape(S32, (2,)), Shape(F32, ()))


def test_slice(covers, target):
    covers.add(target, "xla.slice")
    c = comp_of(lambda b, a: O.slice(a, [2], [4]), Shape(F32, (5,)))
    check_example(c, [np.arange(5, dtype=np.float32)], np.array([2, 3], np.float32), target=target)
    c = comp_of(lambda b, a: O.slice(a, [2, 1], [4, 3]), Shape(F32, (4, 3)))
    check_example(c, [np.arange(12, dtype=np.float32).reshape(4, 3)], np.array([[7, 8], [10, 11]], np.float32), target=target)


def test_broadcast(covers, target):
    covers.add(target, "xla.broadcast")
    c = comp_of(lambda b: O.broadcast(O.constant(b, np.float32(2.0)), [2, 3]))
    check_example(c, [], np.full((2, 3), 2.0, np.float32), target=target)


def test_tuple_and_get_tuple_element(covers, target):
    covers.add(target, "xla.tuple", "xla.get_tuple_element")
    def prog(b, v, s):
        t = O.tuple(b, [v, s])
        O.tuple(b, [O.get_tuple_element(t, 1), t])
    c = comp_of(prog, Shape(F32, (10,)), Shape(S32, ()))
    v = np.arange(10, dtype=np.float32)
    check_example(c, [v, np.int32(5)], (np.int32(5), (v, np.int32(5))), target=target)
    assert c.result_shape == Shape.tuple([Shape(S32, ()), Shape.tuple([Shape(F32, (10,)), Shape(S32, ())])])


def test_tuple_parameter(covers, target):
    covers.add(target, "xla.get_tuple_element")
    ts = Shape.tuple([Shape(F32, (2,)), Shape(S32, ())])
    c = comp_of(lambda b, t: O.mul(O.get_tuple_element(t, 0), O.convert_element_type(O.get_tuple_element(t, 1), F32)), ts)
    check_example(c, [(np.array([1.5, 2], np.float32), np.int32(3))], np.array([4.5, 6], np.float32), target=target)


def test_sign_special_values(covers, target):
    covers.add(target, "xla.sign")
    c = comp_of(lambda b, x: O.sign(x), Shape(F32, (5,)))
    x = np.array([-2.5, -0.0, np.nan, 0.0, 7.0], np.float32)
    check_example(c, [x], np.array([-1.0, -0.0, np.nan, 0.0, 1.0], np.float32), target=target)


def test_total_order(covers, target):
    """-NaN < -Inf < -Finite < -0 < +0 < +Finite < +Inf < +NaN."""
    covers.add(target, "xla.lt_total_order", "xla.eq_total_order", "xla.ge_total_order")
    neg_nan = -np.float32(np.nan) if np.signbit(-np.float32(np.nan)) else np.float32(np.nan)
    order = np.array([neg_nan, -np.inf, -3.5, -0.0, 0.0, 2.0, np.inf, np.float32(np.nan)], np.float32)
    assert np.signbit(order[0]) and not np.signbit(order[-1])
    n = len(order)
    lhs, rhs = np.repeat(order, n), np.tile(order, n)
    c = comp_of(lambda b, x, y: O.tuple(b, [O.lt_total_order(x, y), O.eq_total_order(x, y), O.ge_total_order(x, y)]),
                Shape(F32, (n * n,)), Shape(F32, (n * n,)))
    i, j = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    check_example(c, [lhs, rhs], (i < j, i == j, i >= j), target=target)
