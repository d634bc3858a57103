"""Element-wise ops: compiled results against the reference interpreter on random inputs, for
every element type each op allows (one computation per type and family, a tuple of results)."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.core import REGISTRY
from xlair.dialect.ops import elementwise as EW
from xlair.dialect.types import ALL_TYPES, F32, PRED, S32, U8, U32, Shape, element_type
from xlair_testing import assert_close, random_array

DIMS = (3, 4)
TYPES = [t for t in ALL_TYPES if t.name not in ("s16", "u16")]
POSITIVE = {"log", "log1p", "sqrt", "rsqrt"}
IDS = [t.name for t in TYPES]


def _name(seed):
    from xlair.dialect.core import snake
    return snake(seed)


def _op(name):
    from xlair._opgen import python_name
    return getattr(O, python_name(REGISTRY[name]))


def run_family(covers, target, et, comp, args, names, scale=1.0):
    covers.add(target, *[f"xla.{n}" for n in names])
    expected = xla.interpret(comp, *args)
    got = xla.compile(comp, target=target)(*args)
    for i, n in enumerate(names):
        assert_close(got[i], expected[i], comp.result_shape.tuple_shapes[i], f"xla.{n} on {et}", scale)


@pytest.mark.parametrize("et", TYPES, ids=IDS)
def test_unary(covers, target, et):
    names = [_name(s) for s, types, _, _ in EW.UNARY if et in types]
    rng = np.random.default_rng(1)
    x_any = random_array(et, DIMS, rng, "bits" if et.is_integer else "any")
    x_pos = random_array(et, DIMS, rng, "positive")
    b = xla.Builder(f"unary_{et.name}")
    pa = b.parameter(0, Shape(et, DIMS))
    pp = b.parameter(1, Shape(et, DIMS))
    O.tuple(b, [_op(n)(pp if n in POSITIVE else pa) for n in names])
    run_family(covers, target, et, b.build(), [x_any, x_pos], names)


BIN_DOMAIN = {"pow": "positive"}


@pytest.mark.parametrize("et", TYPES, ids=IDS)
def test_binary(covers, target, et):
    names = [_name(s) for s, types, _, _ in EW.BINARY if et in types]
    rng = np.random.default_rng(2)
    lhs = random_array(et, DIMS, rng)
    rhs = random_array(et, DIMS, rng)
    lpos = random_array(et, DIMS, rng, "positive" if not et.is_integer else "small")
    rsmall = random_array(et, DIMS, rng, "small")
    if et.is_integer:   # shift amounts around the bit width, and some zero divisors
        shifts = rng.integers(0, et.bits + 3, DIMS).astype(et.dtype)
        rhs.flat[::5] = 0
    else:
        shifts = rhs
    b = xla.Builder(f"binary_{et.name}")
    l, r, lp, rs, sh = (b.parameter(i, Shape(et, DIMS)) for i in range(5))
    outs = []
    for n in names:
        if n == "pow":
            outs.append(O.pow(lp, rs))
        elif n.startswith("shift"):
            outs.append(_op(n)(l, sh))
        else:
            outs.append(_op(n)(l, r))
    O.tuple(b, outs)
    run_family(covers, target, et, b.build(), [lhs, rhs, lpos, rsmall, shifts], names, scale=4.0)


def _edge_values(et, rng, n):
    x = random_array(et, (n,), rng, "small")
    if et.is_float:
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0], np.float64)
        x[:len(special)] = special.astype(et.dtype)
    return x


@pytest.mark.parametrize("et", TYPES, ids=IDS)
def test_compare(covers, target, et):
    names = [_name(s) for s, types, _, _ in EW.COMPARE if et in types]
    rng = np.random.default_rng(3)
    n = 24
    lhs = _edge_values(et, rng, n)
    rhs = np.concatenate([lhs[:8], rng.permutation(lhs)[8:]]) if not et.is_complex else lhs.copy()
    rhs[::3] = lhs[::3]
    b = xla.Builder(f"compare_{et.name}")
    l, r = b.parameter(0, Shape(et, (n,))), b.parameter(1, Shape(et, (n,)))
    O.tuple(b, [_op(nm)(l, r) for nm in names])
    run_family(covers, target, et, b.build(), [lhs, rhs], names)


def _convert_inputs(et, rng):
    x = random_array(et, (16,), rng, "any")
    if et.is_float:
        x[:10] = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 0.5, -0.5, 2.5, -2.5, 300.7]).astype(et.dtype)
    elif et.is_integer:
        info = np.iinfo(et.dtype)
        x[:4] = np.array([info.min, info.max, 0, -1 if et.is_signed else 1]).astype(et.dtype)
    elif et.is_complex:
        x[:2] = np.array([complex(1.5, -2.5), complex(-300.25, 7)]).astype(et.dtype)
    return x


@pytest.mark.parametrize("src", TYPES, ids=IDS)
def test_convert(covers, target, src):
    dsts = [t for t in ALL_TYPES if not (src.is_complex and not t.is_complex)]
    rng = np.random.default_rng(4)
    x = _convert_inputs(src, rng)
    b = xla.Builder(f"convert_{src.name}")
    p = b.parameter(0, Shape(src, x.shape))
    O.tuple(b, [O.convert_element_type(p, t) for t in dsts])
    comp = b.build()
    covers.add(target, "xla.convert_element_type")
    expected = xla.interpret(comp, x)
    got = xla.compile(comp, target=target)(x)
    for i, t in enumerate(dsts):
        assert_close(got[i], expected[i], comp.result_shape.tuple_shapes[i], f"convert {src} -> {t}")


BITCASTS = [("s32", "f32", (3, 4)), ("f32", "u32", (3, 4)), ("f16", "s16", (5,)), ("bf16", "u16", (5,)),
            ("f64", "s64", (2, 3)), ("u64", "f64", (4,)), ("s8", "u8", (6,)),
            ("f32", "u8", (3, 4)), ("u8", "f32", (3, 4)), ("f64", "s16", (2,)), ("s16", "s64", (3, 4)),
            ("s32", "f16", (2, 2)), ("f16", "f32", (3, 2))]


@pytest.mark.parametrize("src,dst,dims", BITCASTS, ids=[f"{a}-{b}" for a, b, _ in BITCASTS])
def test_bitcast_convert(covers, target, src, dst, dims):
    covers.add(target, "xla.bitcast_convert_type")
    src, dst = element_type(src), element_type(dst)
    rng = np.random.default_rng(5)
    x = random_array(src, dims, rng, "bits" if src.is_integer else "any")
    b = xla.Builder("bitcast")
    O.bitcast_convert_type(b.parameter(0, Shape(src, dims)), dst)
    comp = b.build()
    got = xla.compile(comp, target=target)(x)
    # the reference is numpy's own reinterpretation of the bytes
    want = np.ascontiguousarray(x).view(dst.dtype).reshape(comp.result_shape.dims)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(xla.interpret(comp, x).view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("et", [F32, S32, U8, PRED], ids=lambda t: t.name)
def test_broadcasting_forms(covers, target, et):
    """Scalar with array, degenerate (size-1) dimensions, and broadcast_dimensions."""
    covers.add(target, "xla.add", "xla.max", "xla.eq")
    rng = np.random.default_rng(6)
    args = [random_array(et, s, rng) for s in [(), (3, 4), (3, 1), (1, 4), (4,), (3,), (2, 3, 4)]]
    b = xla.Builder(f"bcast_{et.name}")
    s, m, c, r, v4, v3, t = (b.parameter(i, Shape(et, a.shape)) for i, a in enumerate(args))
    O.tuple(b, [O.add(s, m), O.add(m, s), O.max(c, r), O.add(m, v4, [1]), O.max(v3, m, [0]),
                O.eq(t, m, [1, 2]), O.add(t, c, [1, 2]), O.max(s, t, [])])
    comp = b.build()
    assert_close(xla.compile(comp, target=target)(*args), xla.interpret(comp, *args), comp.result_shape, "broadcast forms")


@pytest.mark.parametrize("et", [F32, S32, U32, xla.BF16], ids=lambda t: t.name)
def test_clamp_select(covers, target, et):
    covers.add(target, "xla.clamp", "xla.select")
    rng = np.random.default_rng(7)
    x, lo, hi = (random_array(et, DIMS, rng) for _ in range(3))
    p = rng.random(DIMS) < 0.5
    b = xla.Builder("cs")
    px, plo, phi = (b.parameter(i, Shape(et, DIMS)) for i in range(3))
    pp = b.parameter(3, Shape(PRED, DIMS))
    ps = b.parameter(4, Shape(PRED, ()))
    zero, ten = O.constant(b, np.zeros((), et.dtype)), O.constant(b, np.full((), 10, et.dtype))
    O.tuple(b, [O.clamp(plo, px, phi), O.clamp(zero, px, ten), O.clamp(plo, px, ten),
                O.select(pp, px, plo), O.select(ps, px, phi)])
    comp = b.build()
    args = [x, lo, hi, p, np.True_]
    assert_close(xla.compile(comp, target=target)(*args), xla.interpret(comp, *args), comp.result_shape, "clamp/select")


def test_operator_sugar():
    b = xla.Builder("sugar")
    x = b.parameter(0, Shape(F32, (3,)))
    y = b.parameter(1, Shape(F32, (3,)))
    O.tuple(b, [x + y, x - 1, 2 * x, -x, x / y])
    comp = b.build()
    a, c = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32)
    got = xla.interpret(comp, a, c)
    for g, w in zip(got, [a + c, a - 1, 2 * a, -a, a / c]):
        np.testing.assert_allclose(g, w)
