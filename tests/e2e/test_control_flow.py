"""Call, Map, While, Conditional, Sort, non-commutative Reduce and ReducePrecision, end to end."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xlair as xla
from xlair import F16, F32, F64, PRED, S8, S32, S64, U8, U32, Shape
from xlair import ops as O
from xlair.dialect.types import BF16
from xlair_testing import (assert_close, check_example, comp_of, random_array, run_and_compare, scalar_computation,
                           skip_if_unsupported)


def _while_example():
    """The spec's While example: 1000 iterations adding a constant vector."""
    st = Shape.tuple([Shape(S32, ()), Shape(F32, (10,))])
    cond = comp_of(lambda b, s: O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(1000))), st, name="cond")
    body = comp_of(lambda b, s: O.tuple(b, [O.add(O.get_tuple_element(s, 0), O.constant(b, np.int32(1))),
                                            O.add(O.get_tuple_element(s, 1), O.constant(b, np.arange(10, dtype=np.float32)))]),
                   st, name="body")
    return comp_of(lambda b: O.while_(cond, body, O.tuple(b, [O.constant(b, np.int32(0)),
                                                               O.constant(b, np.zeros(10, np.float32))])))


def test_while_spec_example(covers, target):
    covers.add(target, "xla.while")
    check_example(_while_example(), [], (np.int32(1000), 1000 * np.arange(10, dtype=np.float32)), target=target)


def test_nested_whiles_and_conditionals(covers, target):
    """A while inside a conditional inside a while: sum over i<4 of (i odd ? sum_{j<i} j : -i)."""
    covers.add(target, "xla.while", "xla.conditional")
    inner_st = Shape.tuple([Shape(S32, ()), Shape(S32, ()), Shape(S32, ())])   # (j, limit, acc)
    inner_cond = comp_of(lambda b, s: O.lt(O.get_tuple_element(s, 0), O.get_tuple_element(s, 1)), inner_st)
    inner_body = comp_of(lambda b, s: O.tuple(b, [O.add(O.get_tuple_element(s, 0), O.constant(b, np.int32(1))),
                                                  O.get_tuple_element(s, 1),
                                                  O.add(O.get_tuple_element(s, 2), O.get_tuple_element(s, 0))]), inner_st)
    odd = comp_of(lambda b, i: O.get_tuple_element(
        O.while_(inner_cond, inner_body, O.tuple(b, [O.constant(b, np.int32(0)), i, O.constant(b, np.int32(0))])), 2),
        Shape(S32, ()), name="odd")
    even = comp_of(lambda b, i: O.neg(i), Shape(S32, ()), name="even")
    st = Shape.tuple([Shape(S32, ()), Shape(S32, ())])                         # (i, total)
    cond = comp_of(lambda b, s: O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(4))), st)

    def body(b, s):
        i = O.get_tuple_element(s, 0)
        is_odd = O.eq(O.rem(i, O.constant(b, np.int32(2))), O.constant(b, np.int32(1)))
        v = O.conditional(is_odd, i, odd, i, even)
        return O.tuple(b, [O.add(i, O.constant(b, np.int32(1))), O.add(O.get_tuple_element(s, 1), v)])
    body = comp_of(body, st)
    c = comp_of(lambda b: O.get_tuple_element(O.while_(cond, body, O.tuple(b, [O.constant(b, np.int32(0)),
                                                                                O.constant(b, np.int32(0))])), 1))
    # i=0: -0, i=1: 0, i=2: -2, i=3: 0+1+2=3  -> 1
    check_example(c, [], np.int32(1), target=target)


def test_conditional_forms(covers, target):
    covers.add(target, "xla.conditional")
    plus = comp_of(lambda b, x: O.add(x, O.constant(b, np.float32(1))), Shape(F32, (2,)), name="plus")
    neg = comp_of(lambda b, x: O.neg(x), Shape(F32, (2,)), name="neg")
    sq = comp_of(lambda b, t: O.mul(O.get_tuple_element(t, 0), O.get_tuple_element(t, 1)),
                 Shape.tuple([Shape(F32, (2,)), Shape(F32, (2,))]), name="sq")
    c = comp_of(lambda b, p, x: O.conditional(p, x, plus, x, neg), Shape(PRED, ()), Shape(F32, (2,)))
    x = np.array([1.5, -2], np.float32)
    check_example(c, [np.True_, x], x + 1, target=target)
    check_example(c, [np.False_, x], -x, target=target)
    c = comp_of(lambda b, i, x: O.conditional(i, [plus, neg, sq], [x, x, O.tuple(b, [x, x])]),
                Shape(S32, ()), Shape(F32, (2,)))
    exe = xla.compile(c, target=target)
    for k, want in [(0, x + 1), (1, -x), (2, x * x), (3, x * x), (-5, x * x)]:   # out of range: last
        np.testing.assert_array_equal(exe(np.int32(k), x), want)
        np.testing.assert_array_equal(xla.interpret(c, np.int32(k), x), want)
    one = comp_of(lambda b, i, x: O.conditional(i, [neg], [x]), Shape(S32, ()), Shape(F32, (2,)))
    check_example(one, [np.int32(7), x], -x, target=target)


def test_only_the_taken_branch_runs(tmp_path):
    """The untaken branch loops 2^62 times; the program must still return at once."""
    script = textwrap.dedent("""
        import numpy as np, xlair as xla
        from xlair import ops as O, Shape, S64, PRED
        st = Shape(S64, ())
        c = xla.Builder("c"); x = c.parameter(0, st); O.lt(x, O.constant(c, np.int64(2**62))); c = c.build()
        b = xla.Builder("b"); x = b.parameter(0, st); O.add(x, O.constant(b, np.int64(1))); b = b.build()
        spin = xla.Builder("spin"); x = spin.parameter(0, st); O.while_(c, b, x); spin = spin.build()
        fast = xla.Builder("fast"); x = fast.parameter(0, st); O.neg(x); fast = fast.build()
        m = xla.Builder("m"); p = m.parameter(0, Shape(PRED, ())); x = m.parameter(1, st)
        O.conditional(p, x, fast, x, spin); m = m.build()
        print(int(xla.compile(m)(np.True_, np.int64(5))), int(xla.interpret(m, np.True_, np.int64(5))))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["-5", "-5"]


def test_call_shares_one_function(covers, target):
    covers.add(target, "xla.call")
    sq = comp_of(lambda b, x: O.mul(x, x), Shape(F32, (3,)), name="square")
    two = comp_of(lambda b, x: O.add(O.call(sq, [x]), O.call(sq, [x])), Shape(F32, (3,)), name="twice")
    c = comp_of(lambda b, x: O.add(O.call(two, [x]), O.call(sq, [x])), Shape(F32, (3,)))
    text = str(c)
    assert text.count("func.func private @square_") == 1 and text.count("func.func private @twice_") == 1
    x = np.array([1, 2, -3], np.float32)
    check_example(c, [x], 3 * x * x, target=target)
    from xlair.compile import lower
    lowered = str(lower(c))
    assert lowered.count("func.func private @square_") == 1 and lowered.count("call @square_") == 3


def test_call_with_tuples_and_no_arguments(covers, target):
    covers.add(target, "xla.call")
    pair = comp_of(lambda b, t: O.tuple(b, [O.get_tuple_element(t, 1), O.get_tuple_element(t, 0)]),
                   Shape.tuple([Shape(S32, ()), Shape(F32, (2,))]), name="swap")
    const = comp_of(lambda b: O.constant(b, np.float32(4)), name="four")
    c = comp_of(lambda b, x, y: O.tuple(b, [O.call(pair, [O.tuple(b, [x, y])]), O.call(b, const, [])]),
                Shape(S32, ()), Shape(F32, (2,)))
    y = np.array([1, 2], np.float32)
    check_example(c, [np.int32(3), y], ((y, np.int32(3)), np.float32(4)), target=target)
    with pytest.raises(xla.XlaError, match="'xla.call' args must match the parameters"):
        comp_of(lambda b, x: O.call(pair, [x]), Shape(S32, ()))


def test_map_with_static_operands(covers, target):
    covers.add(target, "xla.map")
    # x is f32, y is s32, k a static f32 operand
    f = comp_of(lambda b, x, y, k: O.select(O.gt(x, O.convert_element_type(y, F32)), O.mul(x, k),
                                            O.convert_element_type(y, F32)),
                Shape(F32, ()), Shape(S32, ()), Shape(F32, ()), name="f")
    rng = np.random.default_rng(20)
    x = random_array(F32, (3, 4), rng)
    y = random_array(S32, (3, 4), rng, "small")
    c = comp_of(lambda b, x, y: O.map([x, y], f, [0, 1], [O.constant(b, np.float32(10))]),
                Shape(F32, (3, 4)), Shape(S32, (3, 4)))
    got = run_and_compare(c, x, y, target=target)
    np.testing.assert_allclose(got, np.where(x > y, x * 10, y.astype(np.float32)))


def test_reduce_non_commutative_init_on_the_left(covers, target):
    """f(acc, x) = 2*acc + x folds digits; the init value is passed on the left."""
    covers.add(target, "xla.reduce")
    f = comp_of(lambda b, acc, x: O.add(O.mul(acc, O.constant(b, np.int64(2))), x), Shape(S64, ()), Shape(S64, ()))
    bits = np.array([[1, 0, 1, 1], [0, 0, 0, 1]], np.int64)
    c = comp_of(lambda b, x: O.reduce(x, O.constant(b, np.int64(1)), f, [1]), Shape(S64, (2, 4)))
    # sequential folding from the left, starting from the init value 1: 1011 with a leading 1
    check_example(c, [bits], np.array([0b11011, 0b10001], np.int64), target=target)


def test_reduce_precision(covers, target):
    covers.add(target, "xla.reduce_precision")
    x = np.array([1.0, 1.0009765625, 1.00048828125, 1.00146484375, 65504, 65520, -70000, 1e-5, np.nan,
                  -np.inf, 3.14159265, -0.0], np.float32)
    c = comp_of(lambda b, x: O.tuple(b, [O.reduce_precision(x, 5, 10), O.reduce_precision(x, 8, 7),
                                         O.reduce_precision(x, 2, 1), O.reduce_precision(x, 11, 30)]),
                Shape(F32, x.shape))
    with np.errstate(over="ignore"):
        f16 = x.astype(np.float16).astype(np.float32)
    f16[np.abs(x) < 2.0 ** -14] = np.copysign(0, x[np.abs(x) < 2.0 ** -14])   # flushed below f16's normals
    bf16 = x.astype(BF16.dtype).astype(np.float32)
    for label, res in (("interpreter", xla.interpret(c, x)), (target, xla.compile(c, target=target)(x))):
        np.testing.assert_array_equal(res[0], f16, err_msg=label)
        np.testing.assert_array_equal(res[1], bf16, err_msg=label)
        np.testing.assert_array_equal(res[3], x, err_msg=label)
        # 2 exponent bits, 1 mantissa bit: representable {0, 1, 1.5, 2, 3}; above 3 -> inf
        want = np.array([1, 1, 1, 1, np.inf, np.inf, -np.inf, 0, np.nan, -np.inf, 3, -0.0], np.float32)
        np.testing.assert_array_equal(res[2], want, err_msg=label)
    rng = np.random.default_rng(21)
    for et in (F16, F64, BF16):
        y = random_array(et, (64,), rng) * 1000
        cc = comp_of(lambda b, y: O.tuple(b, [O.reduce_precision(y, 4, 3), O.reduce_precision(y, 6, 9)]),
                     Shape(et, y.shape))
        run_and_compare(cc, y, target=target)


# -- Sort ------------------------------------------------------------------------------------
def _cmp(types, fn="lt", k=0):
    def build(b, *ps):
        getattr(O, fn)(ps[2 * k], ps[2 * k + 1])
    return comp_of(build, *[Shape(t, ()) for t in types for _ in (0, 1)], name=f"{fn}{k}")


def test_sort_spec_example(covers, target):
    """operand0 = [3, 1], operand1 = [42, 50], operand2 = [-3.0, 1.1], less-than on operand0."""
    covers.add(target, "xla.sort")
    c = comp_of(lambda b, a, c_, d: O.sort([a, c_, d], _cmp([S32, S32, F32])),
                Shape(S32, (2,)), Shape(S32, (2,)), Shape(F32, (2,)))
    check_example(c, [np.array([3, 1], np.int32), np.array([42, 50], np.int32), np.array([-3.0, 1.1], np.float32)],
                  (np.array([1, 3], np.int32), np.array([50, 42], np.int32), np.array([1.1, -3.0], np.float32)),
                  target=target)


SORT_TYPES = [F32, F64, S32, U8, S64, U32, F16, BF16]


def _stable_sorted(x, key, descending=False, axis=1):
    """numpy's stable sort of x along an axis by a key (the comparator's order as numbers)."""
    order = np.argsort(-key if descending else key, axis=axis, kind="stable")
    return np.take_along_axis(x, order, axis=axis)


def _bits(x):
    return np.ascontiguousarray(x).view(np.uint8)


@pytest.mark.parametrize("n", [17, 300])
@pytest.mark.parametrize("et", SORT_TYPES, ids=[t.name for t in SORT_TYPES])
def test_sort_one_key(covers, target, et, n):
    """Plain and total-order less/greater-than, along both dimensions, stable with duplicates
    and signed zeros: bit for bit against numpy's stable sort, and against the reference
    interpreter."""
    covers.add(target, "xla.sort")
    rng = np.random.default_rng(22)
    x = random_array(et, (3, n), rng, "small" if et.is_integer else "any")
    if et.is_float:
        x.flat[::7] = x.flat[1::7]          # duplicates
        x.flat[::5] = 0.0
        x.flat[2::11] = -0.0                # equal to +0 in lt and gt: their order is the input's
    b = xla.Builder(f"sort_{et.name}")
    p = b.parameter(0, Shape(et, x.shape))
    outs = [O.sort(p, _cmp([et], "lt"), 1, True), O.sort(p, _cmp([et], "gt"), 1, True),
            O.sort(O.transpose(p, [1, 0]), _cmp([et], "lt"), 0, True)]
    key = x.astype(np.float64) if et.is_float else x.astype(np.int64)
    want = [_stable_sorted(x, key), _stable_sorted(x, key, True), _stable_sorted(x, key).T]
    if et.is_float:
        outs.append(O.sort(p, _cmp([et], "lt_total_order"), -1, True))
        outs.append(O.sort(p, _cmp([et], "gt_total_order"), 1, True))
        total = _total_order_key(x)
        want += [_stable_sorted(x, total), _stable_sorted(x, total, True)]
    O.tuple(b, outs)
    comp = b.build()
    skip_if_unsupported(comp, target)
    got = run_and_compare(comp, x, target=target)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(_bits(g), _bits(w), err_msg=f"result {i}")


def test_sort_total_order_nans_and_zeros(covers, target):
    covers.add(target, "xla.sort")
    vals = np.array([np.nan, -np.inf, 2.0, -0.0, 0.0, -3.0, np.inf, -np.nan, 1.0, -0.0], np.float32)
    x = np.tile(vals, 10)
    c = comp_of(lambda b, x: O.tuple(b, [O.sort(x, _cmp([F32], "lt_total_order"), 0, True),
                                         O.sort(x, _cmp([F32], "gt_total_order"), 0, True)]), Shape(F32, x.shape))
    got = run_and_compare(c, x, target=target)
    bits = got[0].view(np.int32)
    key = np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)
    assert np.all(np.diff(key.astype(np.int64)) >= 0)


def _lex_comparator():
    """(S32 key, F32 payload, U8 payload): key ascending, then the F32 payload descending."""
    def lex(b, a0, b0, a1, b1, a2, b2):
        O.or_(O.lt(a0, b0), O.and_(O.eq(a0, b0), O.gt(a1, b1)))
    return comp_of(lex, *[Shape(t, ()) for t in (S32, S32, F32, F32, U8, U8)])


def test_sort_general_comparator(covers, target):
    """A lexicographic comparator (key ascending, then payload descending), stable, three
    operands: against numpy's lexsort and the reference interpreter."""
    covers.add(target, "xla.sort")
    lexc = _lex_comparator()
    rng = np.random.default_rng(23)
    for n in (9, 500):
        k = rng.integers(0, 4, (2, n)).astype(np.int32)
        v = np.round(rng.normal(size=(2, n)), 1).astype(np.float32)
        w = rng.integers(0, 255, (2, n)).astype(np.uint8)
        c = comp_of(lambda b, k, v, w: O.sort([k, v, w], lexc, 1, True),
                    Shape(S32, k.shape), Shape(F32, v.shape), Shape(U8, w.shape))
        skip_if_unsupported(c, target)
        got = run_and_compare(c, k, v, w, target=target)
        for row in range(2):
            order = np.lexsort((-v[row], k[row]))
            for g, a in zip(got, (k, v, w)):
                np.testing.assert_array_equal(g[row], a[row][order])


@pytest.mark.parametrize("table_max", [2048, 8])
def test_sort_reference_both_paths(monkeypatch, table_max):
    """The reference interpreter's sort: rows of at most SORT_TABLE_MAX elements from a table of
    batched comparator answers, longer rows one comparator call a comparison (SORT_TABLE_MAX=8
    puts the n=40 rows on that path); empty rows and dimensions; a lexicographic comparator on
    three operands along a middle dimension: against numpy's lexsort."""
    from xlair.dialect.ops import control_flow
    monkeypatch.setattr(control_flow, "SORT_TABLE_MAX", table_max)
    lexc = _lex_comparator()
    rng = np.random.default_rng(25)
    for shape in [(3, 40, 2), (2, 5, 3), (2, 1, 3), (2, 0, 3), (0, 4, 1)]:
        k = rng.integers(0, 4, shape).astype(np.int32)
        v = np.round(rng.normal(size=shape), 1).astype(np.float32)
        w = rng.integers(0, 255, shape).astype(np.uint8)
        c = comp_of(lambda b, k, v, w: O.sort([k, v, w], lexc, 1, True),
                    Shape(S32, k.shape), Shape(F32, v.shape), Shape(U8, w.shape))
        got = xla.interpret(c, k, v, w)
        for i in range(shape[0]):
            for j in range(shape[2]):
                order = np.lexsort((-v[i, :, j], k[i, :, j]))
                for g, a in zip(got, (k, v, w)):
                    np.testing.assert_array_equal(g[i, :, j], a[i, :, j][order], err_msg=f"{shape} {i} {j}")


def test_sort_argsort_payload(covers, target):
    covers.add(target, "xla.sort")
    rng = np.random.default_rng(24)
    x = rng.normal(size=(200, 2)).astype(np.float32)
    c = comp_of(lambda b, x: O.sort([x, O.iota(b, Shape(S32, x.shape.dims), 0)], _cmp([F32, S32]), 0, True),
                Shape(F32, x.shape))
    got = run_and_compare(c, x, target=target)
    np.testing.assert_array_equal(got[1], np.argsort(x, 0, kind="stable").astype(np.int32))


def _total_order_key(x):
    """The spec's total order of floats as integers (-NaN < -Inf < ... < -0 < +0 < ... < +NaN)."""
    width = x.dtype.itemsize * 8
    bits = np.ascontiguousarray(x).view(f"i{x.dtype.itemsize}").astype(np.int64)
    top = np.int64((1 << (width - 1)) - 1)
    return np.where(bits < 0, -(bits & top) - 1, bits)


LONG = 40_000       # a lone row this long is split by its top digit and sorted bucket by bucket


def _long_values(et, rng, kind):
    dt = et.dtype
    if kind == "equal":
        return np.full(LONG, 7, dt)
    if et.is_float:
        x = (rng.standard_normal(LONG) * 10.0 ** rng.integers(-3, 4, LONG)).astype(dt)
        if kind == "zeros":         # many signed zeros among repeats: stability shows in their signs
            x[::3] = 0.0
            x[1::7] = -0.0
            x[::11] = x[5]
        return x
    info = np.iinfo(dt)
    return rng.integers(info.min // 2, info.max // 2, LONG, dtype=dt)


LONG_CASES = [(F32, "lt", "normal"), (F32, "lt", "zeros"), (F32, "gt", "zeros"), (F64, "lt", "zeros"),
              (F32, "lt_total_order", "zeros"), (F64, "gt_total_order", "normal"), (S32, "lt", "normal"),
              (U32, "gt", "normal"), (S64, "lt", "normal"), (F32, "lt", "equal")]


@pytest.mark.parametrize("et,fn,kind", LONG_CASES, ids=[f"{e.name}-{f}-{k}" for e, f, k in LONG_CASES])
def test_sort_long_row(covers, et, fn, kind):
    """A long lone row on the CPU (split by the top digit, buckets sorted in parallel), stable,
    bit for bit against numpy's stable sort: the signs of equal zeros keep the input's order."""
    covers.add("cpu", "xla.sort")
    rng = np.random.default_rng(31)
    x = _long_values(et, rng, kind)
    if fn.endswith("total_order"):
        key = _total_order_key(x)
    else:
        key = x.astype(np.float64) if et.is_float else x.astype(np.int64)
        key = np.where(key == 0, 0, key)     # -0 == +0
    order = np.argsort(-key if fn.startswith("gt") else key, kind="stable")
    c = comp_of(lambda b, p: O.sort(p, _cmp([et], fn), 0, True), Shape(et, x.shape))
    got = xla.compile(c, target="cpu")(x)
    np.testing.assert_array_equal(got.view(np.uint8), x[order].view(np.uint8))


def test_sort_long_row_payload(covers):
    """Argsort of a long row with a float key and an index payload, and a key that is not the
    first operand (keys and source indices move through the buckets, operands gathered)."""
    covers.add("cpu", "xla.sort")
    rng = np.random.default_rng(32)
    x = _long_values(F32, rng, "zeros")
    w = rng.standard_normal(LONG)
    c = comp_of(lambda b, p, q: O.sort([O.iota(b, Shape(S32, (LONG,)), 0), p, q], _cmp([S32, F32, F64], "lt", 1),
                                        0, True),
                Shape(F32, x.shape), Shape(F64, w.shape))
    got = xla.compile(c, target="cpu")(x, w)
    order = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(got[0], order.astype(np.int32))
    np.testing.assert_array_equal(got[1].view(np.uint32), x[order].view(np.uint32))
    np.testing.assert_array_equal(got[2], w[order])


def test_sort_of_a_folded_producer(covers, target):
    """Sort of xor(x, x) (zeros IREE folds before the sort): IREE 3.13 could not compile the
    rank sort's count once the folded producer was fused into it (found by the fuzzer)."""
    covers.add(target, "xla.sort")
    x = np.array([3, -1, 7], np.int8).reshape(3, 1, 1)
    c = comp_of(lambda b, x: O.sort(O.xor(x, x), _cmp([S8], "gt"), 0, True), Shape(S8, x.shape))
    got = run_and_compare(c, x, target=target)
    np.testing.assert_array_equal(got, np.zeros((3, 1, 1), np.int8))
