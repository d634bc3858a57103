"""Data-movement, contraction, reduction and dynamic-slice ops: compiled against the reference
interpreter on random inputs, across element types (one computation per type, tuple results)."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import (BF16, C64, F16, F32, F64, PRED, S8, S32, S64, U8, U32, U64,
                                 Shape)
from xlair_testing import assert_close, random_array, run_and_compare, scalar_computation

TYPES = [PRED, U8, U32, S64, F16, BF16, F32, F64, C64]
IDS = [t.name for t in TYPES]
SHAPE_OPS = ["xla.iota", "xla.broadcast", "xla.broadcast_in_dim", "xla.reshape", "xla.collapse",
             "xla.transpose", "xla.rev", "xla.slice", "xla.concatenate", "xla.pad", "xla.tuple",
             "xla.get_tuple_element", "xla.constant"]


@pytest.mark.parametrize("et", TYPES, ids=IDS)
def test_shape_ops(covers, target, et):
    covers.add(target, *SHAPE_OPS)
    rng = np.random.default_rng(10)
    x = random_array(et, (2, 3, 4), rng)
    row = random_array(et, (1, 4), rng)
    pv = random_array(et, (), rng)
    lit = random_array(et, (2, 2), rng)
    b = xla.Builder(f"shape_{et.name}")
    px = b.parameter(0, Shape(et, (2, 3, 4)))
    pr = b.parameter(1, Shape(et, (1, 4)))
    pp = b.parameter(2, Shape(et, ()))
    t = O.tuple(b, [px, pr])
    outs = [
        O.broadcast(pr, [2, 3]),
        O.broadcast_in_dim(pr, [3, 5, 4], [1, 2]),           # size-1 dimension expanded
        O.broadcast_in_dim(O.transpose(pr, [1, 0]), [4, 2, 3], [0, 2]),
        O.broadcast_in_dim(pp, [2, 2], []),
        O.reshape(px, [4, 6]), O.reshape(px, [2, 0, 1], [12, 2]), O.reshape(px, [24]),
        O.collapse(px, [1, 2]), O.collapse(px, [0, 1]),
        O.transpose(px, [2, 0, 1]), O.rev(px, [0, 2]), O.rev(px, []),
        O.slice(px, [0, 1, 0], [2, 3, 4], [1, 1, 3]), O.slice(px, [1, 0, 1], [2, 3, 3]),
        O.concatenate([px, px, px], 1), O.concatenate([pr, pr], 0),
        O.pad(px, pp, xla.PaddingConfig([(1, 2, 0), (-1, 1, 1), (0, -2, 2)])),
        O.pad(pr, pp, [(0, 0, 0), (-3, -2, 1)]),
        O.pad(px, pp, [(0, 0, 0), (2, -5, 0), (0, 0, 0)]),     # the operand is cut away entirely
        O.get_tuple_element(t, 1), O.get_tuple_element(t, 0),
        O.constant(b, lit),
    ]
    if not et.is_pred:
        outs.append(O.iota(b, Shape(et, (3, 5)), 1))
        outs.append(O.iota(b, et, 6))
    O.tuple(b, outs)
    run_and_compare(b.build(), x, row, pv, what=f"shape ops on {et}", target=target)


def test_rev_then_transpose(covers, target):
    """A reversed outer dimension made innermost by a transpose (alone, with a consumer, and as
    the input of a sort along it): IREE 3.13 rejected the fused reverse's indexing map, and
    crashed with an element-wise consumer (found by the fuzzer)."""
    covers.add(target, "xla.rev", "xla.transpose")
    x = np.arange(20, dtype=np.uint32).reshape(4, 5) * 7 % 11
    b = xla.Builder("rev_transpose")
    p = b.parameter(0, Shape(U32, x.shape))
    t = O.transpose(O.rev(p, [0]), [1, 0])
    less = xla.Builder("lt")
    O.lt(less.parameter(0, Shape(U32, ())), less.parameter(1, Shape(U32, ())))
    O.tuple(b, [t, O.add(t, O.transpose(p, [1, 0])), O.sort(O.rev(p, [0]), less.build(), 0, True)])
    got = run_and_compare(b.build(), x, target=target)
    np.testing.assert_array_equal(got[0], x[::-1].T)
    np.testing.assert_array_equal(got[1], x[::-1].T + x.T)
    np.testing.assert_array_equal(got[2], np.sort(x, 0))


def test_empty_arrays(covers, target):
    """Zero-sized dimensions flow through data-movement ops."""
    covers.add(target, "xla.concatenate", "xla.slice", "xla.pad", "xla.broadcast_in_dim", "xla.reshape")
    b = xla.Builder("empty")
    x = b.parameter(0, Shape(F32, (0, 3)))
    y = b.parameter(1, Shape(F32, (2, 3)))
    O.tuple(b, [O.concatenate([x, y], 0), O.slice(y, [1, 0], [1, 3]),
                O.pad(x, O.constant(b, np.float32(7)), [(1, 1, 0), (0, 0, 0)]),
                O.broadcast_in_dim(x, [4, 0, 3], [1, 2]), O.reshape(x, [3, 0])])
    run_and_compare(b.build(), np.zeros((0, 3), np.float32), np.ones((2, 3), np.float32), target=target)


DOT_TYPES = [S32, U8, S64, F16, BF16, F32, F64, C64]


@pytest.mark.parametrize("et", DOT_TYPES, ids=[t.name for t in DOT_TYPES])
def test_dot_and_dot_general(covers, target, et):
    covers.add(target, "xla.dot", "xla.dot_general")
    rng = np.random.default_rng(11)
    dom = "small"
    args = [random_array(et, s, rng, dom) for s in
            [(5,), (4, 5), (5, 3), (2, 3, 4, 5), (3, 5, 2, 6), (6, 3, 5)]]
    b = xla.Builder(f"dot_{et.name}")
    v, m, n, a4, b4, c3 = (b.parameter(i, Shape(et, x.shape)) for i, x in enumerate(args))
    DN = xla.DotDimensionNumbers
    O.tuple(b, [
        O.dot(v, v), O.dot(m, v), O.dot(m, n), O.dot(v, n),
        # contracting (3, 1) with batch (1, 0): non-canonical order on both sides
        O.dot_general(a4, b4, DN([3], [1], [1], [0])),
        # two contracting dimensions, no batch
        O.dot_general(a4, c3, DN([1, 3], [1, 2])),
        # batch dimension last on lhs, first on rhs; transposed matmul
        O.dot_general(m, n, DN([1], [0])), O.dot_general(n, m, DN([0], [1])),
        O.dot_general(b4, c3, DN([1, 3], [2, 0], [0], [1])),
    ])
    run_and_compare(b.build(), *args, scale=8.0, what=f"dot on {et}", target=target)


def test_dot_preferred_element_type(covers, target):
    covers.add(target, "xla.dot", "xla.dot_general")
    rng = np.random.default_rng(12)
    a = rng.integers(-128, 127, (4, 8), endpoint=True).astype(np.int8)
    c = rng.integers(-128, 127, (8, 3), endpoint=True).astype(np.int8)
    b = xla.Builder("dot_s8")
    pa, pc = b.parameter(0, Shape(S8, a.shape)), b.parameter(1, Shape(S8, c.shape))
    O.tuple(b, [O.dot(pa, pc, preferred_element_type=S32),
                O.dot_general(pa, pc, xla.DotDimensionNumbers([1], [0]), preferred_element_type=F32)])
    got = run_and_compare(b.build(), a, c, target=target)
    np.testing.assert_array_equal(got[0], a.astype(np.int32) @ c.astype(np.int32))


REDUCE_TYPES = [S32, U8, U64, F16, BF16, F32, F64, C64, PRED]


@pytest.mark.parametrize("et", REDUCE_TYPES, ids=[t.name for t in REDUCE_TYPES])
def test_reduce(covers, target, et):
    covers.add(target, "xla.reduce")
    rng = np.random.default_rng(13)
    x = random_array(et, (3, 4, 5), rng, "small")
    reducers = ["and_", "or_"] if et.is_pred else (["add", "mul"] if et.is_complex else ["add", "max", "min", "mul"])
    b = xla.Builder(f"reduce_{et.name}")
    p = b.parameter(0, Shape(et, x.shape))
    outs = []
    for i, r in enumerate(reducers):
        init = O.constant(b, np.asarray(1 if r in ("mul", "and_") else 0).astype(et.dtype))
        comp = scalar_computation(r, et)
        for dims in ([0], [2], [0, 2], [1, 0, 2], []):
            outs.append(O.reduce(p, init, comp, dims))
    O.tuple(b, outs)
    run_and_compare(b.build(), x, scale=16.0, what=f"reduce on {et}", target=target)


def test_reduce_variadic_mixed_types(covers, target):
    """Two operands of different element types; a computation that is not commutative."""
    covers.add(target, "xla.reduce")
    f = xla.Builder("minloc")
    a, ai = f.parameter(0, Shape(F64, ())), f.parameter(1, Shape(U32, ()))
    v, vi = f.parameter(2, Shape(F64, ())), f.parameter(3, Shape(U32, ()))
    lt = O.lt(v, a)
    O.tuple(f, [O.select(lt, v, a), O.select(lt, vi, ai)])
    f = f.build()
    rng = np.random.default_rng(14)
    x = rng.permutation(60).astype(np.float64).reshape(3, 4, 5)
    b = xla.Builder("reduce_mixed")
    p = b.parameter(0, Shape(F64, x.shape))
    idx = O.iota(b, Shape(U32, x.shape), 2)
    O.reduce([p, idx], [O.constant(b, np.float64(np.inf)), O.constant(b, np.uint32(99))], f, [2])
    got = run_and_compare(b.build(), x, target=target)
    np.testing.assert_array_equal(got[1], x.argmin(2).astype(np.uint32))


INDEX_TYPES = [U8, S32, S64, U64]


@pytest.mark.parametrize("it", INDEX_TYPES, ids=[t.name for t in INDEX_TYPES])
def test_dynamic_slices_clamp(covers, target, it):
    """Start indices beyond either end are clamped into bounds, as the spec says."""
    covers.add(target, "xla.dynamic_slice", "xla.dynamic_update_slice")
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    u = -np.arange(6, dtype=np.float32).reshape(2, 3)
    b = xla.Builder(f"dyn_{it.name}")
    px, pu = b.parameter(0, Shape(F32, (5, 6))), b.parameter(1, Shape(F32, (2, 3)))
    s0, s1 = b.parameter(2, Shape(it, ())), b.parameter(3, Shape(it, ()))
    O.tuple(b, [O.dynamic_slice(px, [s0, s1], [2, 3]), O.dynamic_update_slice(px, pu, [s0, s1]),
                O.dynamic_slice(px, [s1, s0], [5, 0])])
    comp = b.build()
    exe = xla.compile(comp, target=target)
    cases = [(1, 2), (4, 5), (0, 200)] + ([(-3, 2), (2, -100)] if it.is_signed else [])
    for a0, a1 in cases:
        args = [x, u, np.asarray(a0).astype(it.dtype), np.asarray(a1).astype(it.dtype)]
        got, want = exe(*args), xla.interpret(comp, *args)
        assert_close(got, want, comp.result_shape, f"starts {(a0, a1)}")
        c0, c1 = min(max(a0, 0), 3), min(max(a1, 0), 3)
        np.testing.assert_array_equal(got[0], x[c0:c0 + 2, c1:c1 + 3])
