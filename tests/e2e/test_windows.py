"""ReduceWindow and SelectAndScatter end to end: the spec's examples with its own numbers,
hand-derived cases, and the reference interpreter vs compiled across element types,
computations (pooling-op forms and general ones), several operands, paddings and dilations."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import BF16, F16, F32, F64, PRED, S32, U8, U32, Shape
from xlair_testing import check_example, comp_of, random_array, run_and_compare, scalar_computation


def _max_of(et):
    info = np.finfo(et.dtype) if et.is_float else np.iinfo(et.dtype)
    return np.asarray(info.max, et.dtype)


def _min_of(et):
    info = np.finfo(et.dtype) if et.is_float else np.iinfo(et.dtype)
    return np.asarray(info.min, et.dtype)


def test_reduce_window_spec_padding_example(covers, target):
    """The spec: min over windows of 3 with stride 2 over [10000, 1000, 100, 10, 1]: VALID
    gives [100, 1], SAME gives [1000, 10, 1]."""
    covers.add(target, "xla.reduce_window")
    mn = scalar_computation("min", F32)
    comp = comp_of(lambda b, x: O.tuple(b, [
        O.reduce_window(x, O.constant(b, _max_of(F32)), mn, [3], [2], xla.Padding.VALID),
        O.reduce_window(x, O.constant(b, _max_of(F32)), mn, [3], [2], xla.Padding.SAME)]),
        Shape(F32, (5,)), name="rw_spec_min")
    check_example(comp, [np.array([10000, 1000, 100, 10, 1], np.float32)],
                  (np.array([100, 1], np.float32), np.array([1000, 10, 1], np.float32)), target=target)


def test_reduce_window_spec_max_2x3(covers, target):
    """The spec's code example: max over 2x3 windows with 2x3 strides of a 4x6 matrix, VALID,
    init the lowest float (numbers hand-derived)."""
    covers.add(target, "xla.reduce_window")
    x = np.array([[7, 2, 5, 3, 10, 2], [3, 8, 9, 3, 4, 2], [1, 5, 7, 5, 6, 1], [0, 6, 2, 7, 2, 8]], np.float32)
    comp = comp_of(lambda b, p: O.reduce_window(p, O.constant(b, _min_of(F32)), scalar_computation("max", F32),
                                                [2, 3], [2, 3], xla.Padding.VALID),
                   Shape(F32, x.shape), name="rw_spec_max")
    check_example(comp, [x], np.array([[9, 10], [7, 8]], np.float32), target=target)


def test_reduce_window_dilations_by_hand(covers, target):
    """Sum, init 100: base dilation 2 turns [1 2 3] into [1 h 2 h 3] (holes h take the init
    value); window dilation 2 reads every other element; explicit (low, high) padding adds init
    values, negative padding cuts."""
    covers.add(target, "xla.reduce_window")
    add = scalar_computation("add", S32)
    comp = comp_of(lambda b, x: O.tuple(b, [
        O.reduce_window(x, O.constant(b, np.int32(100)), add, [2], [1], "VALID", base_dilations=[2]),
        O.reduce_window(x, O.constant(b, np.int32(100)), add, [2], [1], "VALID", window_dilations=[2]),
        O.reduce_window(x, O.constant(b, np.int32(100)), add, [2], [2], [(1, -1)])]),
        Shape(S32, (3,)), name="rw_dilations")
    # base dilated [1 100 2 100 3]: windows [1 100] [100 2] [2 100] [100 3], each + init 100
    # window dilation over [1 2 3]: (1, 3) -> 104;  padding (1, -1): [100 1 2] stride 2 -> (100 1)
    check_example(comp, [np.array([1, 2, 3], np.int32)],
                  (np.array([201, 202, 202, 203], np.int32), np.array([104], np.int32), np.array([201], np.int32)),
                  target=target)


RW_TYPES = [F32, F16, BF16, F64, S32, U8, PRED]


@pytest.mark.parametrize("et", RW_TYPES, ids=[t.name for t in RW_TYPES])
def test_reduce_window_differential(covers, target, et):
    """Windows over 1, 2 and 3 of 4 dimensions (pooling ops), other dimensions windowed too
    (general form), every reducer of the type, SAME/VALID/explicit padding, strides, base and
    window dilations, a non-commutative computation."""
    covers.add(target, "xla.reduce_window")
    rng = np.random.default_rng(50)
    x = random_array(et, (2, 7, 6, 3), rng, "small")
    reducers = ["and_", "or_"] if et.is_pred else ["add", "max", "min", "mul"]
    configs = [  # window, strides, padding, base dilations, window dilations
        ([1, 3, 3, 1], [1, 2, 2, 1], "SAME", None, None),            # NHWC pooling
        ([1, 2, 2, 1], [1, 2, 2, 1], "VALID", None, None),
        ([1, 1, 3, 1], [1, 1, 1, 1], [(0, 0), (0, 0), (1, 1), (0, 0)], None, None),
        ([1, 2, 2, 2], [1, 1, 2, 1], "SAME", None, [1, 2, 1, 1]),    # 3 windowed dims
        ([2, 1, 2, 1], [1, 1, 1, 1], [(0, 1), (0, 0), (1, -1), (0, 0)], None, None),   # not contiguous
        ([2, 2, 1, 2], [1, 2, 1, 1], [(1, 0), (2, -1), (0, 0), (0, 1)], [1, 2, 1, 1], [1, 1, 1, 2]),
        ([2, 2, 2, 2], [1, 1, 1, 1], "VALID", None, None),            # four: the general form
    ]
    b = xla.Builder(f"rw_{et.name}")
    p = b.parameter(0, Shape(et, x.shape))
    outs = []
    for r in reducers:
        init = O.constant(b, np.asarray(1 if r in ("mul", "and_") else 0).astype(et.dtype))
        comp = scalar_computation(r, et)
        for wd, st, pad, bd, wdl in configs:
            outs.append(O.reduce_window(p, init, comp, wd, st, pad, bd, wdl))
    if not et.is_pred:
        outs.append(O.reduce_window(p, O.constant(b, np.asarray(3).astype(et.dtype)), scalar_computation("sub", et),
                                    [1, 2, 3, 1], [1, 1, 2, 1], "SAME"))
    O.tuple(b, outs)
    run_and_compare(b.build(), x, scale=16.0, what=f"reduce_window on {et}", target=target)


def test_reduce_window_variadic_argmax(covers, target):
    """Two operands (values, their flat indices) and an argmax computation: the index of the
    first maximum of each 2x2 window, against numpy."""
    covers.add(target, "xla.reduce_window")
    f = xla.Builder("argmax")
    a, ai = f.parameter(0, Shape(F32, ())), f.parameter(1, Shape(S32, ()))
    v, vi = f.parameter(2, Shape(F32, ())), f.parameter(3, Shape(S32, ()))
    take = O.gt(v, a)
    O.tuple(f, [O.select(take, v, a), O.select(take, vi, ai)])
    f = f.build()
    rng = np.random.default_rng(51)
    x = rng.permutation(48).astype(np.float32).reshape(6, 8)
    b = xla.Builder("rw_argmax")
    p = b.parameter(0, Shape(F32, x.shape))
    idx = O.iota(b, Shape(S32, x.shape), 1)
    O.reduce_window([p, idx], [O.constant(b, np.float32(-np.inf)), O.constant(b, np.int32(-1))], f,
                    [2, 2], [2, 2], "VALID")
    got = run_and_compare(b.build(), x, target=target)
    win = x.reshape(3, 2, 4, 2).transpose(0, 2, 1, 3).reshape(3, 4, 4)
    col = np.arange(8).reshape(4, 2)
    best = win.argmax(-1)
    np.testing.assert_array_equal(got[0], win.max(-1))
    np.testing.assert_array_equal(got[1], col[np.arange(4)[None, :], best % 2])


def test_reduce_window_pools_to_linalg():
    """add/max/min of one operand reach IREE as linalg pooling ops."""
    from xlair.compile import lower
    b = xla.Builder("pools")
    x = b.parameter(0, Shape(F32, (8, 16, 16, 4)))
    u = b.parameter(1, Shape(U32, (4, 9)))
    O.tuple(b, [O.reduce_window(x, O.constant(b, np.float32(-np.inf)), scalar_computation("max", F32),
                                [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                O.reduce_window(x, O.constant(b, np.float32(0)), scalar_computation("add", F32),
                                [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
                O.reduce_window(u, O.constant(b, np.uint32(7)), scalar_computation("min", U32), [1, 3], [1, 2], "SAME")])
    text = str(lower(b.build()))
    for name in ("linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum", "linalg.pooling_nwc_min_unsigned"):
        assert name in text, name
    assert "linalg.generic" not in text


POOL_TYPES = [F32, BF16, F64, S32, U8]


@pytest.mark.parametrize("et", POOL_TYPES, ids=[t.name for t in POOL_TYPES])
def test_pools_with_channels_in_whole_vectors(covers, target, et):
    """2-D pools whose channels fill whole vectors (on the CPU, lowering/reduction.py picks
    IREE's tile sizes for them: _set_cpu_pool_tiles): max, sum and min over 2x2/2 VALID, 3x3/2 SAME
    and 3x3/1 windows, with 64 and 96 channels, images smaller and larger than a workgroup's
    share, against the reference interpreter."""
    covers.add(target, "xla.reduce_window")
    rng = np.random.default_rng(63)
    for shape in ((3, 10, 12, 64), (1, 40, 36, 96)):
        x = random_array(et, shape, rng, "small")
        b = xla.Builder(f"pools_{et.name}")
        p = b.parameter(0, Shape(et, x.shape))
        outs = []
        low, high = (np.asarray(-np.inf, et.dtype), np.asarray(np.inf, et.dtype)) if et.is_float \
            else (_min_of(et), _max_of(et))
        for r, init in (("max", low), ("add", np.asarray(0, et.dtype)), ("min", high)):
            for wd, st, pad in (([1, 2, 2, 1], [1, 2, 2, 1], "VALID"), ([1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
                                ([1, 3, 3, 1], [1, 1, 1, 1], "VALID")):
                outs.append(O.reduce_window(p, O.constant(b, init), scalar_computation(r, et), wd, st, pad))
        O.tuple(b, outs)
        run_and_compare(b.build(), x, scale=16.0, what=f"pools of {shape} on {et}", target=target)


def test_pool_tiles_only_where_iree_sees_them():
    """On the CPU a pool with channels in whole vectors carries its tile sizes to IREE (an
    iree_codegen.compilation_info); one with 3 channels, or lowered for Vulkan, does not; one
    in a loop run as one dispatch (lowering/device_loops.py) is scalar code there, so no
    tile sizes reach a dispatch region xlair formed, and the loop runs."""
    from xlair.compile import lower
    from xlair.dialect.ir import ir
    b = xla.Builder("pool_tiles")
    x = b.parameter(0, Shape(F32, (2, 16, 16, 64)))
    y = b.parameter(1, Shape(F32, (2, 16, 16, 3)))
    mx = scalar_computation("max", F32)
    O.tuple(b, [O.reduce_window(x, O.constant(b, np.float32(-np.inf)), mx, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                O.reduce_window(y, O.constant(b, np.float32(-np.inf)), mx, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")])
    comp = b.build()
    cpu = str(lower(comp, target_name="cpu"))
    assert cpu.count("{compilation_info = ") == 1, cpu
    assert "distribution = [2, 8, 8, 64, 0, 0], vector_common_parallel = [1, 1, 1" in cpu
    assert "compilation_info" not in str(lower(comp, target_name="vulkan"))

    # a loop whose body pools a small tensor: its trips run as one dispatch on the CPU
    body = xla.Builder("body")
    s = body.parameter(0, Shape.tuple([Shape(S32, ()), Shape(F32, (1, 4, 4, 16))]))
    i, v = O.get_tuple_element(s, 0), O.get_tuple_element(s, 1)
    pooled = O.reduce_window(v, O.constant(body, np.float32(0)), scalar_computation("add", F32),
                             [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
    O.tuple(body, [O.add(i, O.constant(body, np.int32(1))), O.mul(pooled, O.constant(body, np.float32(0.25)))])
    cond = xla.Builder("cond")
    c = cond.parameter(0, Shape.tuple([Shape(S32, ()), Shape(F32, (1, 4, 4, 16))]))
    O.lt(O.get_tuple_element(c, 0), O.constant(cond, np.int32(5)))
    b = xla.Builder("pool_loop")
    z = b.parameter(0, Shape(F32, (1, 4, 4, 16)))
    O.get_tuple_element(O.while_(cond.build(), body.build(), O.tuple(b, [O.constant(b, np.int32(0)), z])), 1)
    comp = b.build()
    module = lower(comp, target_name="cpu")
    configured, regions = [], []

    def visit(o):
        o = o.operation
        regions.append(o.name == "flow.dispatch.region")
        if "compilation_info" in o.attributes:
            p = o.parent
            while p.name not in ("flow.dispatch.region", "func.func"):
                p = p.parent
            configured.append(p.name)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    assert any(regions) and configured == ["func.func"]   # the peeled first trip only
    run_and_compare(comp, np.random.default_rng(64).standard_normal((1, 4, 4, 16)).astype(np.float32))


# ----------------------------------------------------------------------------------------
# SelectAndScatter
# ----------------------------------------------------------------------------------------
def _select(direction, et):
    b = xla.Builder(f"select_{direction}")
    getattr(O, direction)(b.parameter(0, Shape(et, ())), b.parameter(1, Shape(et, ())))
    return b.build()


def test_select_and_scatter_overlapping_windows(covers, target):
    """The spec's overlapping case: 3x3 windows with stride 2 overlap; the 9 is the maximum of
    both top windows, so with an add scatter it receives 2 + 6 = 8 (numbers hand-derived)."""
    covers.add(target, "xla.select_and_scatter")
    x = np.array([[7, 2, 5, 3, 8], [3, 8, 9, 3, 4], [1, 5, 7, 5, 6], [0, 6, 2, 10, 2], [3, 1, 4, 1, 5]], np.float32)
    src = np.array([[2, 6], [3, 1]], np.float32)
    comp = comp_of(lambda b, px, ps: O.select_and_scatter(px, _select("ge", F32), [3, 3], [2, 2], "VALID", ps,
                                                          O.constant(b, np.float32(0)), scalar_computation("add", F32)),
                   Shape(F32, x.shape), Shape(F32, src.shape), name="sas_overlap")
    want = np.zeros((5, 5), np.float32)
    want[1, 2], want[2, 2], want[3, 3] = 8, 3, 1
    check_example(comp, [x, src], want, target=target)


def test_select_and_scatter_ties_and_padding(covers, target):
    """Ties: select `ge` keeps the first element of the window in row-major order, `gt` moves
    to the last.  SAME padding: padding is never selected."""
    covers.add(target, "xla.select_and_scatter")
    x = np.array([[1, 1, 0], [1, 0, 1]], np.int32)
    src = np.array([[10, 20]], np.int32)
    add = scalar_computation("add", S32)
    comp = comp_of(lambda b, px, ps: O.tuple(b, [
        O.select_and_scatter(px, _select("ge", S32), [2, 2], [1, 1], "VALID", ps, O.constant(b, np.int32(0)), add),
        O.select_and_scatter(px, _select("gt", S32), [2, 2], [1, 1], "VALID", ps, O.constant(b, np.int32(0)), add)]),
        Shape(S32, x.shape), Shape(S32, src.shape), name="sas_ties")
    # windows: cols 0-1 holds 1 at (0,0), (0,1), (1,0); cols 1-2 holds 1 at (0,1), (1,2)
    check_example(comp, [x, src], (np.array([[10, 20, 0], [0, 0, 0]], np.int32),
                                   np.array([[0, 0, 0], [10, 0, 20]], np.int32)), target=target)
    neg = np.array([[-5, -7], [-9, -6]], np.float32)
    comp2 = comp_of(lambda b, px, ps: O.select_and_scatter(
        px, _select("ge", F32), [2, 2], [1, 1], "SAME", ps, O.constant(b, np.float32(0)),
        scalar_computation("add", F32)), Shape(F32, (2, 2)), Shape(F32, (2, 2)), name="sas_same")
    # SAME pads high by one in each dimension; padding is never selected (a 0 there would beat
    # every element): (0, 0) is the maximum of its window, (1, 1) of the three others
    check_example(comp2, [neg, np.ones((2, 2), np.float32)], np.array([[1, 0], [0, 3]], np.float32), target=target)


SAS_TYPES = [F32, F16, BF16, F64, S32, U8]


@pytest.mark.parametrize("et", SAS_TYPES, ids=[t.name for t in SAS_TYPES])
def test_select_and_scatter_differential(covers, target, et):
    """Max-pool gradients (ge/add) and min selection (le/mul) with many ties, SAME, VALID and
    explicit (negative) padding, 1-D to 3-D windows."""
    covers.add(target, "xla.select_and_scatter")
    rng = np.random.default_rng(52)
    from xlair.dialect.checks import Check
    from xlair.dialect.ops.reduction import resolve_padding, window_output_dims
    x = random_array(et, (5, 7, 4), rng, "small")
    if et.is_float:
        x = np.round(x).astype(et.dtype)             # ties
    b = xla.Builder(f"sas_{et.name}")
    px = b.parameter(0, Shape(et, x.shape))
    args, outs = [x], []
    configs = [([1, 2, 2], [1, 2, 2], "VALID", "ge", "add"), ([1, 3, 3], [1, 2, 2], "SAME", "ge", "add"),
               ([2, 3, 1], [1, 1, 1], [(1, 0), (-1, 2), (0, 0)], "le", "mul"),
               ([3, 2, 2], [2, 3, 1], "SAME", "gt", "max"), ([1, 1, 4], [1, 1, 3], "VALID", "lt", "add")]
    for wd, st, pad, sel, sc in configs:
        pads = resolve_padding(xla.Padding[pad] if isinstance(pad, str) else tuple(pad), x.shape, wd, st)
        sdims = window_output_dims(Check("t"), x.shape, wd, st, pads, cid="select_and_scatter_c2")
        src = random_array(et, sdims, rng, "small")
        ps = b.parameter(len(args), Shape(et, sdims))
        args.append(src)
        init = O.constant(b, np.asarray(1 if sc == "mul" else 0).astype(et.dtype))
        outs.append(O.select_and_scatter(px, _select(sel, et), wd, st, pad, ps, init, scalar_computation(sc, et)))
    O.tuple(b, outs)
    run_and_compare(b.build(), *args, scale=8.0, what=f"select_and_scatter on {et}", target=target)


@pytest.mark.parametrize("et", [F32, BF16, S32], ids=["f32", "bf16", "s32"])
def test_select_and_scatter_windows_tiling_the_operand(covers, target, et):
    """Windows that tile the operand exactly (strides equal to the window, no padding: a max
    pool's gradient) take the tiled form of pass 2, one parallel generic with no gather (the
    general form was 36% of a CNN training step's dispatch time); with ties, ge/gt/lt
    selections and add/mul/max scatters, against the reference interpreter."""
    covers.add(target, "xla.select_and_scatter")
    from xlair.compile import lower
    rng = np.random.default_rng(61)
    x = np.round(random_array(et, (4, 6, 9, 3), rng, "small")).astype(et.dtype)
    b = xla.Builder(f"sas_tiled_{et.name}")
    px = b.parameter(0, Shape(et, x.shape))
    args, outs = [x], []
    for wd, sel, sc in (([1, 2, 3, 1], "ge", "add"), ([2, 3, 1, 3], "gt", "mul"), ([1, 1, 9, 1], "lt", "max")):
        sdims = [n // w for n, w in zip(x.shape, wd)]
        ps = b.parameter(len(args), Shape(et, sdims))
        args.append(random_array(et, sdims, rng, "small"))
        init = O.constant(b, np.asarray(1 if sc == "mul" else 0).astype(et.dtype))
        outs.append(O.select_and_scatter(px, _select(sel, et), wd, wd, "VALID", ps, init, scalar_computation(sc, et)))
    O.tuple(b, outs)
    comp = b.build()
    if target == "cpu":
        text = str(lower(comp, 1, "cpu"))
        assert "arith.remsi" not in text and "arith.divsi" not in text
    run_and_compare(comp, *args, scale=8.0, what=f"tiled select_and_scatter on {et}", target=target)


def test_max_pool_gradient_is_jax_bit_for_bit():
    """flax's max_pool gradient (2x2 and 3x3 windows tiling the input, ties included) through
    xlair.jit, bit for bit jax.jit's."""
    jax = pytest.importorskip("jax")
    nn = pytest.importorskip("flax.linen")
    rng = np.random.default_rng(62)
    for shape, win in (((8, 14, 14, 16), (2, 2)), ((2, 6, 9, 3), (3, 3))):
        x = rng.standard_normal(shape).astype(np.float32)
        x[0, 0, :2, 0] = 1.0
        f = jax.grad(lambda v: (nn.max_pool(v, win, strides=win) ** 2).sum())
        np.testing.assert_array_equal(np.asarray(xla.jit(f)(x)), np.asarray(jax.jit(f)(x)))


def test_window_edge_shapes(covers, target):
    """Rank 0 (one window of nothing), empty operands, a window wider than the base (no
    output), and SelectAndScatter windows lying wholly in the padding (nothing selected: their
    source values are dropped): [1, 4] padded by 3 below has windows (-3, -2) and (-2, -1) - no
    element -, (-1, 0) - the 1 gets source 2 - and (0, 1) - the 4 gets source 3."""
    covers.add(target, "xla.reduce_window", "xla.select_and_scatter")
    add = scalar_computation("add", F32)
    ge = _select("ge", F32)
    init = lambda b: O.constant(b, np.float32(2))  # noqa: E731
    cases = [
        (lambda b, x: O.reduce_window(x, init(b), add, [], [], "VALID"), [np.float32(3)], np.float32(5)),
        (lambda b, x: O.reduce_window(x, init(b), add, [2, 1], [1, 1], "SAME"), [np.ones((0, 3), np.float32)],
         np.ones((0, 3), np.float32)),
        (lambda b, x: O.reduce_window(x, init(b), add, [5], [1], "VALID"), [np.ones(3, np.float32)],
         np.ones(0, np.float32)),
        (lambda b, x, s: O.select_and_scatter(x, ge, [], [], "VALID", s, O.constant(b, np.float32(0)), add),
         [np.float32(3), np.float32(5)], np.float32(5)),
        (lambda b, x, s: O.select_and_scatter(x, ge, [2], [1], [(3, 0)], s, O.constant(b, np.float32(0)), add),
         [np.array([1, 4], np.float32), np.arange(4, dtype=np.float32)], np.array([2, 3], np.float32)),
    ]
    for i, (fn, args, want) in enumerate(cases):
        comp = comp_of(fn, *[Shape(F32, np.shape(a)) for a in args], name=f"window_edge_{i}")
        check_example(comp, args, want, target=target)
