"""Gather and Scatter end to end: the spec's informal examples (batch dynamic slice, gather_nd)
checked against numpy slicing, XLA's clamping of gather starts and skipping of out-of-bounds
scatter windows, duplicates, operand batching dimensions, several operands, and the reference
interpreter vs compiled across element types and dimension numbers."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import BF16, C64, F16, F32, F64, PRED, S8, S32, S64, U8, U64, Shape
from xlair_testing import check_example, comp_of, random_array, run_and_compare, scalar_computation

GDN = xla.GatherDimensionNumbers
SDN = xla.ScatterDimensionNumbers


def _clamped_slices(x, starts, sizes):
    out = []
    for s in starts:
        c = [min(max(int(v), 0), d - z) for v, d, z in zip(s, x.shape, sizes)]
        out.append(x[tuple(slice(a, a + z) for a, z in zip(c, sizes))])
    return np.stack(out)


def test_gather_batch_dynamic_slice(covers, target):
    """The spec's first example: 5 slices of [8, 6] from a [16, 11] array at S64[5, 2] starts;
    output [G, O0, O1] is input [X + O0, Y + O1].  Starts past either end are clamped so the
    slice fits (XLA's rule)."""
    covers.add(target, "xla.gather")
    x = np.arange(16 * 11, dtype=np.float32).reshape(16, 11)
    idx = np.array([[0, 0], [8, 5], [3, 2], [-4, 9], [20, -1]], np.int64)
    comp = comp_of(lambda b, px, pi: O.gather(px, pi, GDN(offset_dims=(1, 2), collapsed_slice_dims=(),
                                                          start_index_map=(0, 1), index_vector_dim=1), [8, 6]),
                   Shape(F32, x.shape), Shape(S64, idx.shape), name="gather_batch_ds")
    want = _clamped_slices(x, idx, [8, 6])
    assert np.array_equal(want[3], x[0:8, 5:11]) and np.array_equal(want[4], x[8:16, 0:6])
    check_example(comp, [x, idx], want, target=target)


def test_gather_multidimensional_indices(covers, target):
    """The spec's second example: indices of shape [4, 5, 2] give a [4, 5, 8, 6] result (a batch
    dynamic slice with two batch dimensions)."""
    covers.add(target, "xla.gather")
    rng = np.random.default_rng(60)
    x = rng.uniform(-1, 1, (16, 11)).astype(np.float32)
    idx = np.stack([rng.integers(0, 9, (4, 5)), rng.integers(0, 6, (4, 5))], -1).astype(np.int32)
    comp = comp_of(lambda b, px, pi: O.gather(px, pi, slice_sizes=[8, 6], offset_dims=[2, 3], collapsed_slice_dims=[],
                                              start_index_map=[0, 1], index_vector_dim=2),
                   Shape(F32, x.shape), Shape(S32, idx.shape), name="gather_multi")
    want = _clamped_slices(x, idx.reshape(20, 2), [8, 6]).reshape(4, 5, 8, 6)
    check_example(comp, [x, idx], want, target=target)


def test_gather_nd(covers, target):
    """The spec's tf.gather_nd example: one-element start vectors [G0, G1, 0] pick whole rows
    (slice_sizes [1, 11], dimension 0 collapsed): output [G0, G1, O0] = input[X, O0]."""
    covers.add(target, "xla.gather")
    x = np.arange(16 * 11, dtype=np.int32).reshape(16, 11)
    idx = np.array([[[3], [15]], [[0], [7]], [[30], [-2]]], np.int32)        # [3, 2, 1]
    comp = comp_of(lambda b, px, pi: O.gather(px, pi, offset_dims=[2], collapsed_slice_dims=[0],
                                              start_index_map=[0], index_vector_dim=2, slice_sizes=[1, 11]),
                   Shape(S32, x.shape), Shape(S32, idx.shape), name="gather_nd")
    check_example(comp, [x, idx], x[np.clip(idx[..., 0], 0, 15)], target=target)


def test_gather_index_vector_dim_is_rank(covers, target):
    """index_vector_dim == rank(start_indices): every index is a one-element vector (the spec's
    implicit trailing 1); the spec's positional form gather(operand, start_indices,
    offset_dims, collapsed_slice_dims, slice_sizes, start_index_map) with the default
    index_vector_dim (the last dimension) on [.., 1] indices gives the same."""
    covers.add(target, "xla.gather")
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    idx = np.array([[5, 0], [2, 9]], np.int32)
    comp = comp_of(lambda b, px, pi, pi1: O.tuple(b, [
        O.gather(px, pi, GDN(offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=2),
                 [1, 4]),
        O.gather(px, pi1, [2], [0], [1, 4], [0])]),
        Shape(F32, x.shape), Shape(S32, idx.shape), Shape(S32, (2, 2, 1)), name="gather_ivd_rank")
    want = x[np.clip(idx, 0, 5)]
    check_example(comp, [x, idx, idx[..., None]], (want, want), target=target)


def _gather_cases(b, p, params):
    """(name, gather op) for a set of dimension-number shapes; `params(shape)` adds an index
    parameter."""
    return [
        # collapsed 0, offset dims interleaved with batch dims, index vector in the last dim
        O.gather(p["a"], params((4, 3, 2)), GDN((1, 3), (0,), (0, 2), 2), [1, 3, 4]),
        # index vector in dim 0, start_index_map reversed, no collapsed dims
        O.gather(p["b"], params((2, 5)), GDN((1, 2), (), (1, 0), 0), [2, 3]),
        # index_vector_dim == rank
        O.gather(p["b"], params((3, 4)), GDN((2,), (1,), (1,), 2), [6, 1]),
        # operand batching dims
        O.gather(p["a3"], params((4, 3, 1)), GDN((2,), (1,), (1,), 2, (0,), (1,)), [1, 1, 4]),
        # empty index vector: every batch position reads the slice at 0
        O.gather(p["b"], params((3, 0)), GDN((1, 2), (), (), 1), [2, 3]),
        # all dims collapsed: element gather (tf.gather_nd of scalars)
        O.gather(p["b"], params((5, 2)), GDN((), (0, 1), (0, 1), 1), [1, 1]),
    ]


GATHER_TYPES = [F32, F16, BF16, F64, S32, U8, PRED, C64]


@pytest.mark.parametrize("et", GATHER_TYPES, ids=[t.name for t in GATHER_TYPES])
def test_gather_differential(covers, target, et):
    covers.add(target, "xla.gather")
    rng = np.random.default_rng(61)
    b = xla.Builder(f"gather_{et.name}")
    args = []
    p = {}
    for name, shape in (("a", (5, 6, 7)), ("b", (6, 7)), ("a3", (3, 5, 4))):
        p[name] = b.parameter(len(args), Shape(et, shape))
        args.append(random_array(et, shape, rng))
    ind_types = iter([S32, U8, S64, S8, U64, S32])

    def params(shape):
        it = next(ind_types)
        lo = 0 if it.is_unsigned else -3
        args.append(rng.integers(lo, 10, shape).astype(it.dtype))
        return b.parameter(len(args) - 1, Shape(it, shape))
    O.tuple(b, _gather_cases(b, p, params))
    run_and_compare(b.build(), *args, what=f"gather on {et}", target=target)


def test_gather_keyword_forms_agree():
    """dimension_numbers given whole, as keywords, or in the spec's positional order build the
    same op; both at once is an error."""
    b = xla.Builder("forms")
    x = b.parameter(0, Shape(F32, (6, 4)))
    i = b.parameter(1, Shape(S32, (3, 1)))
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1)
    a = O.gather(x, i, dn, [1, 4])
    k = O.gather(x, i, slice_sizes=[1, 4], offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0])
    s = O.gather(x, i, [1], [0], [1, 4], [0])
    texts = [str(op.builder._nodes[op.index].args["dimension_numbers"]) for op in (a, k, s)]
    assert texts[0] == texts[1] == texts[2]
    with pytest.raises(xla.XlaError, match="arguments must match"):
        O.gather(x, i, dn, [1, 4], offset_dims=[1])


# ----------------------------------------------------------------------------------------
# Scatter
# ----------------------------------------------------------------------------------------
def test_scatter_rows_by_hand(covers, target):
    """tf.tensor_scatter_nd_add's example ([0]*8, indices [[4], [3], [1], [7]], updates
    [9, 10, 11, 12] -> [0, 11, 0, 10, 9, 0, 0, 12]); duplicate indices combine through the
    computation; the computation gets the current value first: sub gives current - update."""
    covers.add(target, "xla.scatter")
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    b = xla.Builder("sub_f32")
    O.sub(b.parameter(0, Shape(F32, ())), b.parameter(1, Shape(F32, ())))
    sub = b.build()
    comp = comp_of(lambda b, x, i, u, i2: O.tuple(b, [
        O.scatter(x, i, u, scalar_computation("add", F32), dn),
        O.scatter(x, i2, u, scalar_computation("add", F32), dn),
        O.scatter(x, i2, u, sub, dn)]),
        Shape(F32, (8,)), Shape(S32, (4, 1)), Shape(F32, (4,)), Shape(S32, (4, 1)), name="scatter_rows")
    zeros = np.zeros(8, np.float32)
    u = np.array([9, 10, 11, 12], np.float32)
    check_example(comp, [zeros, np.array([[4], [3], [1], [7]], np.int32), u, np.array([[1], [1], [6], [1]], np.int32)],
                  (np.array([0, 11, 0, 10, 9, 0, 0, 12], np.float32),
                   np.array([0, 31, 0, 0, 0, 0, 11, 0], np.float32),
                   np.array([0, -31, 0, 0, 0, 0, -11, 0], np.float32)), target=target)


def test_scatter_of_many_updates_exceeded_stack_allocation_limit():
    """100,000 updates added into 100 slots (jax.random.randint's bias check, random_lax_test's
    test_randint_narrow_int_bias): IREE computed the clamped indices inside the scatter's
    dispatch, on its stack: "exceeded stack allocation limit of 32768 bytes for function. Got
    800000 bytes".  Large index tensors now get a dispatch of their own.  Against numpy's
    np.add.at (out-of-bounds indices skipped, as XLA's Scatter does)."""
    rng = np.random.default_rng(3)
    idx = rng.integers(-5, 105, (100_000, 1)).astype(np.int32)
    upd = rng.integers(-3, 4, 100_000).astype(np.int32)
    x = np.arange(100, dtype=np.int32)
    comp = comp_of(lambda b, px, pi, pu: O.scatter(px, pi, pu, scalar_computation("add", S32),
                                                   update_window_dims=[], inserted_window_dims=[0],
                                                   scatter_dims_to_operand_dims=[0], index_vector_dim=1),
                   Shape(S32, x.shape), Shape(S32, idx.shape), Shape(S32, upd.shape), name="scatter_many")
    want = x.copy()
    ok = (idx[:, 0] >= 0) & (idx[:, 0] < 100)
    np.add.at(want, idx[ok, 0], upd[ok])
    np.testing.assert_array_equal(xla.compile(comp, target="cpu")(x, idx, upd), want)


def test_scatter_out_of_bounds_windows_skipped(covers, target):
    """A window with any part out of bounds is skipped whole (XLA), not clipped or clamped:
    2x2 windows into a 4x4 array at starts (0, 0), (3, 1), (-1, 0), (2, 2), (1, 3)."""
    covers.add(target, "xla.scatter")
    x = np.zeros((4, 4), np.int32)
    idx = np.array([[0, 0], [3, 1], [-1, 0], [2, 2], [1, 3]], np.int32)
    u = np.arange(1, 21, dtype=np.int32).reshape(5, 2, 2)
    comp = comp_of(lambda b, px, pi, pu: O.scatter(px, pi, pu, scalar_computation("add", S32),
                                                   update_window_dims=[1, 2], inserted_window_dims=[],
                                                   scatter_dims_to_operand_dims=[0, 1], index_vector_dim=1),
                   Shape(S32, x.shape), Shape(S32, idx.shape), Shape(S32, u.shape), name="scatter_oob")
    want = np.zeros((4, 4), np.int32)
    want[0:2, 0:2] += u[0]
    want[2:4, 2:4] += u[3]
    check_example(comp, [x, idx, u], want, target=target)


def test_scatter_unit_window_of_an_indexed_dim_linalg_transpose_rank_mismatch(covers, target):
    """An indexed operand dimension whose window of 1 is not an inserted dimension, with the
    updates' scatter dimension between their window dimensions (jax.jacrev of a vmapped
    dynamic_index_in_dim: lax_autodiff_test's testGradOfVmapOfDynamicSlice): the updates'
    transpose left that unit dimension out: "'linalg.transpose' op input rank (3) does not
    match init rank (2)".  Hand-derived: column idx[j] of operand row r gets u[r, j, 0]."""
    covers.add(target, "xla.scatter")
    x = np.zeros((3, 5), np.float32)
    idx = np.array([[4], [0], [2], [4]], np.int32)
    u = np.arange(1, 13, dtype=np.float32).reshape(3, 4, 1)
    comp = comp_of(lambda b, px, pi, pu: O.scatter(px, pi, pu, scalar_computation("add", F32),
                                                   update_window_dims=[0, 2], inserted_window_dims=[],
                                                   scatter_dims_to_operand_dims=[1], index_vector_dim=1),
                   Shape(F32, x.shape), Shape(S32, idx.shape), Shape(F32, u.shape), name="scatter_unit_window")
    want = np.zeros((3, 5), np.float32)
    for j, c in enumerate(idx[:, 0]):
        want[:, c] += u[:, j, 0]
    check_example(comp, [x, idx, u], want, target=target)


def test_scatter_positional_spec_form(covers, target):
    """scatter(operand, scatter_indices, updates, update_computation, index_vector_dim,
    update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims), the spec's order."""
    covers.add(target, "xla.scatter")
    x = np.zeros((3, 4), np.float32)
    comp = comp_of(lambda b, px, pi, pu: O.scatter(px, pi, pu, scalar_computation("add", F32), 1, [1], [0], [0]),
                   Shape(F32, x.shape), Shape(S32, (2, 1)), Shape(F32, (2, 4)), name="scatter_spec_form")
    u = np.arange(8, dtype=np.float32).reshape(2, 4)
    want = np.zeros((3, 4), np.float32)
    want[2] = u[0]
    want[0] = u[1]
    check_example(comp, [x, np.array([[2], [0]], np.int32), u], want, target=target)


def test_scatter_variadic(covers, target):
    """Two operands: an argmax-style computation that couples them (values with their indices,
    strict > so the earlier update wins ties), and one that treats each on its own."""
    covers.add(target, "xla.scatter")
    f = xla.Builder("argmax")
    a, ai = f.parameter(0, Shape(F32, ())), f.parameter(1, Shape(S32, ()))
    v, vi = f.parameter(2, Shape(F32, ())), f.parameter(3, Shape(S32, ()))
    take = O.gt(v, a)
    O.tuple(f, [O.select(take, v, a), O.select(take, vi, ai)])
    f = f.build()
    g = xla.Builder("pair")
    a, ai = g.parameter(0, Shape(F32, ())), g.parameter(1, Shape(S32, ()))
    v, vi = g.parameter(2, Shape(F32, ())), g.parameter(3, Shape(S32, ()))
    O.tuple(g, [O.mul(a, v), O.max(ai, vi)])
    g = g.build()
    dn = SDN((), (0,), (0,), 1)
    comp = comp_of(lambda b, x, xi, i, u, ui: O.tuple(b, [O.scatter([x, xi], i, [u, ui], f, dn),
                                                           O.scatter([x, xi], i, [u, ui], g, dn)]),
                   Shape(F32, (5,)), Shape(S32, (5,)), Shape(S32, (6, 1)), Shape(F32, (6,)), Shape(S32, (6,)),
                   name="scatter_variadic")
    x = np.array([0, 1, 2, 3, 4], np.float32)
    xi = np.full(5, -1, np.int32)
    i = np.array([[1], [1], [3], [9], [1], [0]], np.int32)
    u = np.array([5, 7, 2, 100, 7, -1], np.float32)
    ui = np.arange(10, 16, dtype=np.int32)
    want = (np.array([0, 7, 2, 3, 4], np.float32), np.array([-1, 11, -1, -1, -1], np.int32))
    want2 = (np.array([-0.0, 35 * 7, 2, 6, 4], np.float32), np.array([15, 14, -1, 12, -1], np.int32))
    check_example(comp, [x, xi, i, u, ui], (want, want2), target=target)


def _scatter_cases(b, p, params, upd, comp, et):
    return [
        # windows over an indexed dimension (2) and an unindexed one (1), batch dims interleaved
        O.scatter(p["a"], params((4, 3, 2), (5, 7)), upd((4, 3, 3, 4)), comp, SDN((1, 3), (0,), (0, 2), 2)),
        # index vector in dim 0, scatter_dims_to_operand_dims reversed
        O.scatter(p["b"], params((2, 5), (7, 6)), upd((5, 2, 3)), comp, SDN((1, 2), (), (1, 0), 0)),
        # index_vector_dim == rank, whole columns
        O.scatter(p["b"], params((3, 4), (7,)), upd((3, 4, 6)), comp, SDN((2,), (1,), (1,), 2)),
        # operand batching dims
        O.scatter(p["a3"], params((4, 3, 1), (5,)), upd((4, 3, 4)), comp, SDN((2,), (1,), (1,), 2, (0,), (1,))),
        # scalar updates into both dims (many duplicates)
        O.scatter(p["b"], params((12, 2), (6, 7)), upd((12,)), comp, SDN((), (0, 1), (0, 1), 1)),
    ]


SCATTER_TYPES = [F32, F16, BF16, F64, S32, U8, PRED, C64]


@pytest.mark.parametrize("et", SCATTER_TYPES, ids=[t.name for t in SCATTER_TYPES])
def test_scatter_differential(covers, target, et):
    """Random indices reaching past both ends (so windows are skipped) and repeating."""
    covers.add(target, "xla.scatter")
    rng = np.random.default_rng(62)
    b = xla.Builder(f"scatter_{et.name}")
    args = []
    p = {}
    for name, shape in (("a", (5, 6, 7)), ("b", (6, 7)), ("a3", (3, 5, 4))):
        p[name] = b.parameter(len(args), Shape(et, shape))
        args.append(random_array(et, shape, rng, "small"))
    ind_types = [S32, U8, S64, S8, U64]

    def params(shape, dims):
        it = ind_types[len(args) % len(ind_types)]
        lo = 0 if it.is_unsigned else -2
        args.append(rng.integers(lo, max(dims) + 2, shape).astype(it.dtype))
        return b.parameter(len(args) - 1, Shape(it, shape))

    def upd(shape):
        args.append(random_array(et, shape, rng, "small"))
        return b.parameter(len(args) - 1, Shape(et, shape))
    comps = ["or_"] if et.is_pred else (["add"] if et.is_complex else ["add", "max"])
    outs = []
    for c in comps:
        outs += _scatter_cases(b, p, params, upd, scalar_computation(c, et), et)
    O.tuple(b, outs)
    run_and_compare(b.build(), *args, scale=8.0, what=f"scatter on {et}", target=target)


def test_scatter_lowers_to_linalg_ext():
    """Scatter reaches IREE as iree_linalg_ext.scatter, its region (update, current)."""
    from xlair.compile import lower
    b = xla.Builder("lx")
    x = b.parameter(0, Shape(F32, (10, 4)))
    i = b.parameter(1, Shape(S32, (3, 1)))
    u = b.parameter(2, Shape(F32, (3, 4)))
    O.scatter(x, i, u, scalar_computation("add", F32), SDN((1,), (0,), (0,), 1))
    text = str(lower(b.build()))
    assert "iree_linalg_ext.scatter" in text and "unique_indices(false)" in text


def test_gather_scatter_feeding_transposes(covers, target):
    """Results of Gather and Scatter used by transposes and element-wise ops (IREE 3.13 cannot
    fuse a gather with a transposing consumer: the lowering keeps them apart)."""
    covers.add(target, "xla.gather", "xla.scatter")
    rng = np.random.default_rng(63)
    b = xla.Builder("gather_scatter_chain")
    x = b.parameter(0, Shape(F32, (50, 8)))
    i = b.parameter(1, Shape(S32, (6, 1)))
    g = O.gather(x, i, GDN((1,), (0,), (0,), 1), [1, 8])
    t = O.transpose(O.add(g, g), [1, 0])
    s = O.scatter(x, i, O.transpose(t, [1, 0]), scalar_computation("add", F32), SDN((1,), (0,), (0,), 1))
    w = O.gather(x, O.reshape(i, [3, 2]), GDN((1, 2), (), (0, 1), 1), [2, 4])      # [3, 2, 4]
    O.tuple(b, [t, O.transpose(s, [1, 0]), O.transpose(w, [2, 0, 1])])
    xs = rng.uniform(-1, 1, (50, 8)).astype(np.float32)
    idx = rng.integers(0, 50, (6, 1)).astype(np.int32)
    got = run_and_compare(b.build(), xs, idx, target=target)
    np.testing.assert_array_equal(got[0], (xs[idx[:, 0]] * 2).T)


def test_complex_scatter_getIntOrFloatBitWidth_in_setScatterLoweringConfig(monkeypatch):
    """IREE 3.13's LLVMGPU lowering config of iree_linalg_ext.scatter crashed on complex
    elements (`getIntOrFloatBitWidth` in `setScatterLoweringConfig`): every complex
    `x.at[i].set(v)` failed to compile for CUDA and ROCm.  Those targets scatter complex
    elements as one generic over the operand (`complex_scatter_dense`); it compiles for both,
    and the same form, forced on the CPU, gives jax.jit's results (repeated indices added)."""
    import dataclasses

    import jax
    import jax.numpy as jnp
    from xlair.compile import compile_vmfb
    import xlair.lowering.targets as lt
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))).astype(np.complex64)
    idx = np.array([1, 4, 1], np.int32)
    fns = [lambda x, i: x.at[..., 0].set(0), lambda x, i: x.at[i].add(x[:3] * 2j), lambda x, i: x.at[i, 1].set(x[0, 2])]
    comps = [xla.from_jax(f, a, idx) for f in fns]
    for comp in comps:
        for gpu in ("cuda", "rocm"):
            assert compile_vmfb(comp, gpu)[:8]
    monkeypatch.setitem(lt.DESCRIPTIONS, "cpu", dataclasses.replace(lt.CPU, complex_scatter_dense=True))
    for f, comp in zip(fns, comps):
        text = xla.compile(comp, "cpu")
        np.testing.assert_allclose(np.asarray(text(a, idx)), np.asarray(jax.jit(f)(a, idx)), rtol=1e-6, atol=1e-6)
