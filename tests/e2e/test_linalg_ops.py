"""BatchNormTraining/Inference/Grad, Cholesky and TriangularSolve: worked examples, compiled
against the numpy reference interpreter, and float64 residuals of the factorizations and solves."""
import itertools

import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import BF16, C64, C128, F16, F32, F64, Shape
from xlair_testing import check_example, random_array, run_and_compare

TR = xla.Transpose
LINALG_TYPES = [F32, F64, C64, C128]
IDS = [t.name for t in LINALG_TYPES]
RESID_TOL = {"f32": 2e-5, "c64": 2e-5, "f64": 1e-12, "c128": 1e-12}


def _skip_vulkan_f32(target, et):
    """Seen on lavapipe: IREE's vulkan-spirv code for these f32 programs (batch_matmul of panel
    shapes, multi-dimensional f32 reductions) returns wrong values while f64 / complex ones pass;
    not yet reduced to a minimal IREE reproducer."""
    if target == "vulkan" and et.component.name in ("f32", "f16", "bf16"):
        pytest.skip("vulkan: IREE's SPIR-V code for this f32 program gives wrong results (lavapipe)")


def _comp(fn, *shapes, name="c"):
    b = xla.Builder(name)
    ps = [b.parameter(i, s) for i, s in enumerate(shapes)]
    fn(*ps)
    return b.build()


def _rand(et, dims, rng):
    x = rng.standard_normal(dims)
    if et.is_complex:
        x = x + 1j * rng.standard_normal(dims)
    return x


def _hpd(et, dims, rng):
    """Hermitian positive definite matrices, with garbage (NaN) in the strictly upper triangle
    and its mirror image in the lower: each factorization may read only its own triangle."""
    m = _rand(et, dims, rng)
    n = dims[-1]
    return (m @ np.conj(np.swapaxes(m, -1, -2)) / n + np.eye(n)).astype(et.dtype)


def _poison(a, keep_lower):
    a = a.copy()
    n = a.shape[-1]
    mask = np.tril(np.ones((n, n), bool)) if keep_lower else np.triu(np.ones((n, n), bool))
    a[..., ~mask] = np.nan
    return a


# ----------------------------------------------------------------------------------------
# BatchNorm
# ----------------------------------------------------------------------------------------
def test_batch_norm_worked_example(covers, target):
    """f32[2, 2] with the features in dimension 1: mean [2, 30], variance [1, 100]."""
    covers.add(target, "xla.batch_norm_training", "xla.batch_norm_inference")
    x = np.array([[1, 20], [3, 40]], np.float32)
    g = np.array([1, 2], np.float32)
    o = np.array([0, 1], np.float32)
    comp = _comp(lambda x_, g_, o_: O.tuple(x_.builder, [
        O.batch_norm_training(x_, g_, o_, 0.0, 1),
        O.batch_norm_inference(x_, g_, o_, O.constant(x_.builder, np.float32([2, 30])),
                               O.constant(x_.builder, np.float32([1, 100])), 0.0, 1)]),
        Shape(F32, (2, 2)), Shape(F32, (2,)), Shape(F32, (2,)), name="bn_example")
    y = np.array([[-1, -1], [1, 3]], np.float32)
    check_example(comp, [x, g, o], ((y, np.float32([2, 30]), np.float32([1, 100])), y), target=target)


def test_batch_norm_grad_worked_example(covers, target):
    """One feature (dimension 1 of f32[4, 1]): x = [1, 1, 5, 5], mean 3, variance 4, scale 3,
    grad_output [1, 0, 0, 0]: c = mean(dy (x - mu) / var) = -1/8, mean(dy) = 1/4,
    dx = 3/2 (dy - 1/4 + (x - mu) / 8) = [3/4, -3/4, 0, 0], dscale = -1, doffset = 1."""
    covers.add(target, "xla.batch_norm_grad")
    x = np.array([[1], [1], [5], [5]], np.float32)
    dy = np.array([[1], [0], [0], [0]], np.float32)
    comp = _comp(lambda x_, dy_: O.batch_norm_grad(
        x_, O.constant(x_.builder, np.float32([3])), O.constant(x_.builder, np.float32([3])),
        O.constant(x_.builder, np.float32([4])), dy_, 0.0, 1),
        Shape(F32, (4, 1)), Shape(F32, (4, 1)), name="bn_grad_example")
    check_example(comp, [x, dy], (np.array([[0.75], [-0.75], [0], [0]], np.float32), np.float32([-1]),
                                  np.float32([1])), target=target)


@pytest.mark.parametrize("et", [F32, F64, F16, BF16], ids=lambda t: t.name)
def test_batch_norm_random(covers, target, et):
    _skip_vulkan_f32(target, et)
    covers.add(target, "xla.batch_norm_training", "xla.batch_norm_inference", "xla.batch_norm_grad")
    rng = np.random.default_rng(3)
    cases = [((2, 3, 4, 5), 3), ((6, 4), 0), ((7,), 0), ((2, 5, 3), 1), ((3, 64, 33), 2)]
    b = xla.Builder(f"bn_{et.name}")
    outs, args = [], []
    for dims, f in cases:
        c = dims[f]
        vals = [random_array(et, dims, rng), random_array(et, (c,), rng), random_array(et, (c,), rng),
                random_array(et, (c,), rng), random_array(et, (c,), rng, "positive"), random_array(et, dims, rng)]
        x, g, o, m, v, dy = (b.parameter(len(args) + i, Shape(et, a.shape)) for i, a in enumerate(vals))
        args += vals
        outs += [O.batch_norm_training(x, g, o, 1e-3, f), O.batch_norm_inference(x, g, o, m, v, 0.01, f),
                 O.batch_norm_grad(x, g, m, v, dy, 1e-3, f)]
    O.tuple(b, outs)
    run_and_compare(b.build(), *args, target=target, scale=8)


# ----------------------------------------------------------------------------------------
# Cholesky
# ----------------------------------------------------------------------------------------
def test_cholesky_worked_example(covers, target):
    covers.add(target, "xla.cholesky")
    a = np.array([[4, 99], [2, 3]], np.float64)          # the 99 is never read (lower)
    au = np.array([[4, 2], [-7, 3]], np.float64)         # the -7 is never read (upper)
    comp = _comp(lambda p, q: O.tuple(p.builder, [O.cholesky(p, lower=True), O.cholesky(q, lower=False)]),
                 Shape(F64, (2, 2)), Shape(F64, (2, 2)), name="chol_example")
    s2 = np.sqrt(2.0)
    check_example(comp, [a, au], (np.array([[2, 0], [1, s2]]), np.array([[2, 1], [0, s2]])), target=target)


@pytest.mark.parametrize("et", LINALG_TYPES, ids=IDS)
def test_cholesky_random(covers, target, et):
    """Both triangles, batches, sizes across the block boundary (64); compiled against the
    reference, and L L^H (U^H U) against a in float64."""
    _skip_vulkan_f32(target, et)
    covers.add(target, "xla.cholesky")
    rng = np.random.default_rng(4)
    dims = [(1, 1), (5, 5), (2, 3, 9, 9), (130, 130)]
    mats = [_hpd(et, d, rng) for d in dims]
    b = xla.Builder(f"chol_{et.name}")
    ps = [b.parameter(i, Shape(et, m.shape)) for i, m in enumerate(mats)]
    O.tuple(b, [O.cholesky(p, lower=lo) for p in ps for lo in (True, False)])
    comp = b.build()
    args = [_poison(m, True) for m in mats]
    # the upper factorization reads the upper triangle: give it the same matrices' upper halves
    got = xla.compile(comp, target=target)(*[m for m in mats])
    want = xla.interpret(comp, *mats)
    tol = RESID_TOL[et.name]
    for i, m in enumerate(mats):
        a64 = m.astype(np.complex128 if et.is_complex else np.float64)
        L, U = (g.astype(a64.dtype) for g in got[2 * i: 2 * i + 2])
        assert np.allclose(np.triu(L, 1), 0) and np.allclose(np.tril(U, -1), 0), "other triangle zeroed"
        lh = L @ np.conj(np.swapaxes(L, -1, -2))
        uh = np.conj(np.swapaxes(U, -1, -2)) @ U
        scale = np.abs(a64).max()
        assert np.abs(lh - a64).max() / scale < tol * m.shape[-1] ** 0.5, ("LL^H", m.shape)
        assert np.abs(uh - a64).max() / scale < tol * m.shape[-1] ** 0.5, ("U^HU", m.shape)
        for g, w in zip(got[2 * i: 2 * i + 2], want[2 * i: 2 * i + 2]):
            assert np.allclose(g, w, rtol=tol * 50, atol=tol * 50)
    # values in the triangle that is not read do not matter (NaN there)
    got_lower = xla.compile(comp, target=target)(*args)
    for i in range(len(mats)):
        assert np.array_equal(got_lower[2 * i], got[2 * i])
    got_upper = xla.compile(comp, target=target)(*[_poison(m, False) for m in mats])
    for i in range(len(mats)):
        assert np.array_equal(got_upper[2 * i + 1], got[2 * i + 1])


def test_cholesky_not_positive_definite_does_not_crash(covers, target):
    covers.add(target, "xla.cholesky")
    comp = _comp(lambda p: O.cholesky(p), Shape(F32, (3, 3)), name="chol_bad")
    out = xla.compile(comp, target=target)(-np.eye(3, dtype=np.float32))
    assert out.shape == (3, 3) and np.isnan(out[0, 0])      # implementation-defined: NaN


# ----------------------------------------------------------------------------------------
# TriangularSolve
# ----------------------------------------------------------------------------------------
def test_triangular_solve_worked_example(covers, target):
    covers.add(target, "xla.triangular_solve")
    a = np.array([[2, 7, 7], [1, 4, 7], [3, 2, 1]], np.float32)   # only the lower triangle is read
    b = np.array([[2, 4], [5, 6], [12, 2]], np.float32)
    comp = _comp(lambda p, q: O.tuple(p.builder, [
        O.triangular_solve(p, q, True, True, False, TR.NO_TRANSPOSE),      # [[2,0,0],[1,4,0],[3,2,1]] x = b
        O.triangular_solve(p, O.transpose(q, [1, 0]), False, True, True, TR.TRANSPOSE)]),
        Shape(F32, (3, 3)), Shape(F32, (3, 2)), name="trsolve_example")
    # x1: x0 = [1, 2]; x1 = ([5, 6] - x0) / 4 = [1, 1]; x2 = [12, 2] - 3 x0 - 2 x1 = [7, -6]
    # x2 solves x L1^T = b^T with unit-diagonal L1 = [[1,0,0],[1,1,0],[3,2,1]]:
    #   L1 x^T = b  ->  x^T = [[2, 4], [3, 2], [0, -14]]
    check_example(comp, [a, b], (np.array([[1, 2], [1, 1], [7, -6]], np.float32),
                                 np.array([[2, 3, 0], [4, 2, -14]], np.float32)), target=target)


@pytest.mark.parametrize("et", [F16, BF16], ids=["f16", "bf16"])
def test_triangular_solve_half_precision(covers, target, et):
    """F16/BF16 systems (XLA solves them; xlair in F32, rounded once): the worked example
    above, whose values are all exact in both types."""
    covers.add(target, "xla.triangular_solve")
    a = np.array([[2, 7, 7], [1, 4, 7], [3, 2, 1]], np.float32).astype(et.dtype)
    b = np.array([[2, 4], [5, 6], [12, 2]], np.float32).astype(et.dtype)
    comp = _comp(lambda p, q: O.tuple(p.builder, [
        O.triangular_solve(p, q, True, True, False, TR.NO_TRANSPOSE),
        O.triangular_solve(p, O.transpose(q, [1, 0]), False, True, True, TR.TRANSPOSE)]),
        Shape(et, (3, 3)), Shape(et, (3, 2)), name=f"trsolve_{et.name}")
    got = xla.compile(comp, target=target)(a, b)
    assert got[0].dtype == et.dtype
    np.testing.assert_array_equal(got[0].astype(np.float32), [[1, 2], [1, 1], [7, -6]])
    np.testing.assert_array_equal(got[1].astype(np.float32), [[2, 3, 0], [4, 2, -14]])


@pytest.mark.parametrize("et", LINALG_TYPES, ids=IDS)
def test_triangular_solve_all_forms(covers, target, et):
    """All 24 forms (left/right, lower/upper, unit diagonal, NO_TRANSPOSE/TRANSPOSE/ADJOINT) on a
    batch, across the block boundary; residual op(a) x - b in float64 and the reference."""
    _skip_vulkan_f32(target, et)
    covers.add(target, "xla.triangular_solve")
    rng = np.random.default_rng(5)
    m, k = 70, 3
    a = _rand(et, (2, m, m), rng) / np.sqrt(m)
    a[..., np.arange(m), np.arange(m)] += 2
    a = a.astype(et.dtype)
    bl, br = _rand(et, (2, m, k), rng).astype(et.dtype), _rand(et, (2, k, m), rng).astype(et.dtype)
    forms = list(itertools.product((True, False), (True, False), (True, False), list(TR)))
    b = xla.Builder(f"trsolve_{et.name}")
    pa, pl, pr = (b.parameter(i, Shape(et, v.shape)) for i, v in enumerate((a, bl, br)))
    O.tuple(b, [O.triangular_solve(pa, pl if left else pr, left, lower, unit, t)
                for left, lower, unit, t in forms])
    comp = b.build()
    got = run_and_compare(comp, a, bl, br, target=target, scale=20)
    from xlair.dialect.ops.linalg_ops import op_a
    wide = np.complex128 if et.is_complex else np.float64
    for x, (left, lower, unit, t) in zip(got, forms):
        oa = op_a(a, lower, unit, t)
        x = x.astype(wide)
        r = oa @ x - bl if left else x @ oa - br
        rhs = bl if left else br
        assert np.abs(r).max() / np.abs(rhs).max() < RESID_TOL[et.name] * 10, (left, lower, unit, t)
    # the other triangle is never read
    poisoned = a.copy()
    poisoned[..., np.triu_indices(m, 1)[0], np.triu_indices(m, 1)[1]] = np.nan
    b2 = xla.Builder("trsolve_poison")
    q0, q1 = b2.parameter(0, Shape(et, a.shape)), b2.parameter(1, Shape(et, bl.shape))
    O.tuple(b2, [O.triangular_solve(q0, q1, True, True, u, t) for u in (True, False) for t in TR])
    out = xla.compile(b2.build(), target=target)(poisoned, bl)
    assert all(np.all(np.isfinite(o)) for o in out)


def test_triangular_solve_large_residual(covers, target):
    """1000 x 1000 lower solve with 37 right-hand sides (15 full blocks and a remainder)."""
    _skip_vulkan_f32(target, F32)
    covers.add(target, "xla.triangular_solve")
    rng = np.random.default_rng(6)
    n, k = 1000, 37
    a = (np.tril(rng.standard_normal((n, n))) / np.sqrt(n) + 2 * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    comp = _comp(lambda p, q: O.triangular_solve(p, q, True, True, False, TR.NO_TRANSPOSE),
                 Shape(F32, (n, n)), Shape(F32, (n, k)), name="trsolve_big")
    x = xla.compile(comp, target=target)(a, b).astype(np.float64)
    assert np.linalg.norm(a.astype(np.float64) @ x - b) / np.linalg.norm(b) < 1e-5
