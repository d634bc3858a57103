"""GetDimensionSize / SetDimensionSize: the spec's example and how sizes flow."""
import numpy as np
import pytest

import xlair as xla
from xlair import F32, S32, U8, Shape
from xlair import ops as O
from xlair_testing import check_example, comp_of, scalar_computation

ADD, MUL = scalar_computation("add", F32), scalar_computation("mul", F32)


def test_spec_example(covers, target):
    """sum(set_dimension_size(v, 5)) = 1+..+5, product = 5!, with six: 1+..+6."""
    covers.add(target, "xla.set_dimension_size", "xla.reduce")

    def prog(b, v, five, six):
        p5 = O.set_dimension_size(v, five, 0)
        p6 = O.set_dimension_size(v, six, 0)
        zero, one = O.constant(b, np.float32(0)), O.constant(b, np.float32(1))
        O.tuple(b, [O.reduce(p5, zero, ADD, [0]), O.reduce(p5, one, MUL, [0]), O.reduce(p6, zero, ADD, [0]),
                    O.get_dimension_size(p5, 0), O.get_dimension_size(v, 0)])
    c = comp_of(prog, Shape(F32, (10,)), Shape(S32, ()), Shape(S32, ()))
    v = np.arange(1, 11, dtype=np.float32)
    check_example(c, [v, np.int32(5), np.int32(6)],
                  (np.float32(15), np.float32(120), np.float32(21), np.int32(5), np.int32(10)), target=target)


def test_sizes_flow_through_elementwise_transpose_broadcast_slice(covers, target):
    covers.add(target, "xla.set_dimension_size", "xla.get_dimension_size")

    def prog(b, m, n):
        d = O.set_dimension_size(m, n, 1)                      # f32[3, 8] with dim 1 dynamic
        e = O.mul(O.exp(d), O.constant(b, np.full((3, 8), 2, np.float32)))
        t = O.transpose(e, [1, 0])                             # dynamic dim is now 0
        s = O.slice(t, [2, 0], [8, 3])                         # size n - 2 (clamped)
        bb = O.broadcast_in_dim(s, [4, 6, 3], [1, 2])
        O.tuple(b, [O.reduce(t, O.constant(b, np.float32(0)), ADD, [0]),
                    O.get_dimension_size(t, 0), O.get_dimension_size(s, 0), O.get_dimension_size(bb, 1),
                    O.reduce(bb, O.constant(b, np.float32(0)), ADD, [0, 1])])
    c = comp_of(prog, Shape(F32, (3, 8)), Shape(U8, ()))
    m = np.linspace(-1, 1, 24, dtype=np.float32).reshape(3, 8)
    for n in (5, 1, 8, 200):
        size = min(n, 8)
        e = np.exp(m[:, :size]) * 2
        want = (e.sum(1).astype(np.float32), np.int32(size), np.int32(max(size - 2, 0)), np.int32(max(size - 2, 0)),
                4 * e[:, 2:size].sum(1).astype(np.float32))
        got_i = xla.interpret(c, m, np.uint8(n))
        got_c = xla.compile(c, target=target)(m, np.uint8(n))
        for g in (got_i, got_c):
            for x, w in zip(g, want):
                np.testing.assert_allclose(x, w, rtol=1e-5)


def test_unsupported_ops_refuse_dynamic_operands():
    def prog(b, m, n):
        O.dot(O.set_dimension_size(m, n, 1), O.transpose(m, [1, 0]))
    c = comp_of(prog, Shape(F32, (3, 4)), Shape(S32, ()))
    with pytest.raises(xla.XlaError, match="'xla.dot' lhs must not have a dynamic dimension"):
        xla.interpret(c, np.ones((3, 4), np.float32), np.int32(2))
    with pytest.raises(xla.XlaError, match="'xla.dot' lhs must not have a dynamic dimension"):
        xla.compile(c)
