"""Linear algebra as device code (lowering/linalg_expand.py, lowering/jacobi.py): JAX's LAPACK
custom calls expanded into xla ops, on the CPU (forced with xla-expand-linalg{linalg=device})
and on Vulkan (lavapipe here: xla.jit(target="vulkan") expands them by itself), against
jax.jit (LAPACK) and numpy.  Eigenvectors and singular vectors are checked by their defining
properties (their signs are LAPACK's choice); everything else is compared as it is.  Every
program also compiles for CUDA and ROCm (no GPU is needed to compile).
"""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.compile import compile_vmfb
from xlair.computation import Computation
from xlair.dialect.ir import context, ir, lock
from xlair.dialect.types import Shape
from xlair.lowering import pipeline
from xlair_testing import E2E_TARGETS, gpu_cases

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jsl = pytest.importorskip("jax.scipy.linalg")
from jax._src.lax.linalg import geqp3 as _geqp3   # noqa: E402  (lax.linalg.qr(pivoting=True) passes jpvt = 0)


def _spd(a):
    n = a.shape[-1]
    return a @ jnp.swapaxes(a, -1, -2) + n * jnp.eye(n, dtype=a.dtype)


def _sym(a):
    return (a + jnp.conj(jnp.swapaxes(a, -1, -2))) / 2            # (Hermitian where complex)


#: name -> function of one matrix (the programs of docs/linalg.md that use the routines expanded)
FUNCTIONS = {
    "cholesky": lambda a: jnp.linalg.cholesky(_spd(a)),
    "cho_solve": lambda a: jsl.cho_solve(jsl.cho_factor(_spd(a)), a[..., :2]),
    "solve_triangular": lambda a: jsl.solve_triangular(a + 8 * jnp.eye(a.shape[-1], dtype=a.dtype), a[..., :2],
                                                       lower=True),
    "solve": lambda a: jnp.linalg.solve(a, a[..., :2]),
    "inv": jnp.linalg.inv,
    "det": jnp.linalg.det,
    "slogdet": lambda a: tuple(jnp.linalg.slogdet(a)),
    "lu_factor": lambda a: tuple(jsl.lu_factor(a)),
    "lu": lambda a: tuple(jsl.lu(a)),
    "qr": lambda a: tuple(jnp.linalg.qr(a)),
    "qr_complete_tall": lambda a: tuple(jnp.linalg.qr(a[..., :, :3], mode="complete")),
    "qr_wide": lambda a: tuple(jnp.linalg.qr(a[..., :3, :])),
    "eigvalsh": lambda a: jnp.linalg.eigvalsh(_sym(a)),
    "eigh": lambda a: tuple(jnp.linalg.eigh(_sym(a))),
    "svdvals": lambda a: jnp.linalg.svd(a, compute_uv=False),
    "svd": lambda a: tuple(jnp.linalg.svd(a)),
    "svd_tall": lambda a: tuple(jnp.linalg.svd(a[..., :, :3])),
    "svd_wide_reduced": lambda a: tuple(jnp.linalg.svd(a[..., :3, :], full_matrices=False)),
    "pinv": jnp.linalg.pinv,
    "qr_pivoting": lambda a: tuple(jax.lax.linalg.qr(a, pivoting=True)),
    "qr_pivoting_wide": lambda a: tuple(jax.lax.linalg.qr(a[..., :3, :], pivoting=True, full_matrices=False)),
    "qr_pivoting_tall": lambda a: tuple(jax.lax.linalg.qr(a[..., :, :3], pivoting=True)),
    "hessenberg": lambda a: tuple(jax.lax.linalg.hessenberg(a)),
    "hessenberg_q": lambda a: tuple(jsl.hessenberg(a, calc_q=True)),
    "tridiagonal": lambda a: tuple(jax.lax.linalg.tridiagonal(a)),
    "tridiagonal_upper": lambda a: tuple(jax.lax.linalg.tridiagonal(a, lower=False)),
    # rows 0, 1, 2 as the sub-, main and superdiagonal (dl[0], du[n - 1] unused), b its first two columns
    "tridiagonal_solve": lambda a: jax.lax.linalg.tridiagonal_solve(
        a[..., 0, :].at[..., 0].set(0), a[..., 1, :], a[..., 2, :].at[..., -1].set(0), a[..., :, :2]),
}
#: checked by their defining properties (the vectors' signs are free)
VECTORS = {"eigh", "svd", "svd_tall", "svd_wide_reduced"}
#: what jax.scipy.linalg does not batch
UNBATCHED = {"lu", "hessenberg_q"}
RTOL = {np.float32: 2e-4, np.float64: 1e-9, np.complex64: 2e-4, np.complex128: 1e-9}
#: the functions whose routines (potrf, trsm, getrf, geqrf, ungqr, heevd) run as device code for
#: complex matrices too (python/xlair/lapack.py DEVICE_COMPLEX)
COMPLEX = ["cholesky", "cho_solve", "solve_triangular", "solve", "inv", "det", "slogdet", "lu_factor", "lu",
           "qr", "qr_complete_tall", "qr_wide", "eigh", "eigvalsh", "svdvals", "svd", "svd_tall", "svd_wide_reduced",
           "pinv", "tridiagonal_solve", "tridiagonal", "tridiagonal_upper", "qr_pivoting", "qr_pivoting_wide",
           "qr_pivoting_tall", "hessenberg", "hessenberg_q"]


def _device_form(comp: Computation) -> Computation:
    """The computation with every linear-algebra custom call expanded (as on a GPU target)."""
    with lock, context():
        module = ir.Module.parse(comp.to_text())
    pipeline.run(module, "xla-simplify", "xla-expand-linalg{target=cpu linalg=device}")
    assert "xla.custom_call" not in str(module)
    return Computation(module, comp.name)


def _mat(shape, dt, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def _run(name, a, target):
    fn = FUNCTIONS[name]
    x64 = a.dtype in (np.float64, np.complex128)
    with jax.enable_x64(x64):
        want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(fn)(a))]
        if target == "cpu":
            got = xla.compile(_device_form(xla.from_jax(fn, a)), "cpu")(a)
            got = [np.asarray(g) for g in (got if isinstance(got, tuple) else (got,))]
        else:
            got = [np.asarray(g) for g in jax.tree_util.tree_leaves(xla.jit(fn, target=target)(a))]
    return got, want


def _close(g, w, rtol, what=""):
    assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, g.dtype, w.shape, w.dtype)
    finite = w[np.isfinite(w)]
    scale = max(float(np.abs(finite).max()) if finite.size else 1.0, 1.0)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True, err_msg=what)


def _check_vectors(name, a, got, want, rtol):
    eye = lambda k: np.eye(k)                                   # noqa: E731
    h = lambda x: np.conj(np.swapaxes(x, -1, -2))               # noqa: E731  (the adjoint)
    if name == "eigh":
        w, v = got
        _close(w, want[0], rtol, "eigenvalues")
        s = (a + h(a)) / 2
        np.testing.assert_allclose(s @ v, v * w[..., None, :], atol=rtol * 10 * max(1, np.abs(w).max()))
        np.testing.assert_allclose(h(v) @ v, np.broadcast_to(eye(v.shape[-1]), v.shape), atol=rtol * 10)
        return
    u, s, vt = got
    _close(s, want[1], rtol, "singular values")
    m = {"svd": a, "svd_tall": a[..., :, :3], "svd_wide_reduced": a[..., :3, :]}[name]
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], m,
                               atol=rtol * 10 * max(1, np.abs(m).max()))
    np.testing.assert_allclose(h(u) @ u, np.broadcast_to(eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2),
                               atol=rtol * 10)
    np.testing.assert_allclose(vt @ h(vt), np.broadcast_to(eye(vt.shape[-2]), vt.shape[:-2] + (vt.shape[-2],) * 2),
                               atol=rtol * 10)
    assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)


def _check(name, a, target, rtol=None):
    got, want = _run(name, a, target)
    rtol = rtol or RTOL[a.dtype.type]
    assert len(got) == len(want)
    if name in VECTORS:
        _check_vectors(name, a, got, want, rtol)
    else:
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, rtol, f"{name} output {i}")


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(5, 5), (2, 4, 4)], ids=["5x5", "batch2x4x4"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.sample(per="name")
def test_device_form_on_cpu_matches_jax(name, shape, dt):
    if len(shape) > 2 and name in UNBATCHED:
        pytest.skip(f"jax's {name} takes one matrix")
    _check(name, _mat(shape, dt, len(name)), "cpu")


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("shape", [(5, 5), (2, 4, 4)], ids=["5x5", "batch2x4x4"])
@pytest.mark.parametrize("name", COMPLEX)
@pytest.mark.sample(per="name")
def test_complex_device_form_on_cpu_matches_jax(name, shape, dt):
    """Complex Cholesky, triangular solves, LU, QR and eigh as device code: LAPACK's results, the
    LU's pivots included (the pivot search compares |re| + |im|, as LAPACK's icamax does), and
    Q and R as zgeqrf / zungqr make them (zlarfg's real beta; H^H applied to the trailing
    columns), eigenvectors by their defining properties (their phases are LAPACK's choice)."""
    if len(shape) > 2 and name in UNBATCHED:
        pytest.skip(f"jax's {name} takes one matrix")
    _check(name, _mat(shape, dt, len(name)), "cpu")


def test_complex_lu_takes_lapacks_pivot_where_modulus_and_cabs1_disagree():
    """Column 0 holds 3+3j (|z| 4.24, |re|+|im| 6) and 5 (|z| 5, |re|+|im| 5): LAPACK's cgetrf
    pivots on row 1, where a modulus search would take row 2."""
    a = np.array([[1, 2, 0], [3 + 3j, 1, 1], [5, 0, 2]], np.complex64)
    got, want = _run("lu_factor", a, "cpu")
    assert want[1][0] == 1                                      # jaxlib's pivot (LAPACK's)
    np.testing.assert_array_equal(got[1], want[1])
    _close(got[0], want[0], 2e-6)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (6, 2), (2, 6), (4, 1)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.sample(every=2)
def test_complex_svd_and_eigh_of_small_matrices(shape, dt):
    """One pair a Jacobi step, or a complex QR of one or two columns: IREE 3.13 gave a 2x2 C128
    eigh wrong eigenvalues (two one-element sums in one buffer) and refused the SVD of a 6x2
    matrix ("'stream.async.dispatch' op : streamable op expected to be in an execution region"):
    such matrices are padded (lowering/jacobi.py _pad_even, linalg_expand.svd)."""
    a = _mat(shape, dt, sum(shape))
    got, want = _run("svd", a, "cpu")
    u, s, vt = got
    rtol = RTOL[dt]
    _close(s, want[1], rtol, "singular values")
    k = s.shape[-1]
    np.testing.assert_allclose((u[:, :k] * s) @ vt[:k], a, atol=rtol * 10 * max(1, np.abs(a).max()))
    np.testing.assert_allclose(np.conj(u.T) @ u, np.eye(u.shape[0]), atol=rtol * 10)
    np.testing.assert_allclose(vt @ np.conj(vt.T), np.eye(vt.shape[0]), atol=rtol * 10)
    if shape[0] == shape[1]:
        _check("eigh", a, "cpu")


@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=["f64", "c128"])
def test_tridiagonal_solve_stops_where_lapack_does(dt):
    """gtsv as dgtsv / zgtsv run it: row interchanges where |d| < |dl| (every system here needs
    some), and a zero pivot in the third row, which stops that system's elimination there,
    its b left as LAPACK leaves it (JAX returns it as it is)."""
    rng = np.random.default_rng(7)
    n = 6
    dl, d, du = (rng.standard_normal((2, n)).astype(dt) for _ in range(3))
    dl[:, 0] = du[:, -1] = 0
    d[:, 1] *= 1e-3                         # small pivots: interchanges
    d[1, 2] = dl[1, 3] = 0                  # the second system: no pivot in the third column
    b = rng.standard_normal((2, n, 3)).astype(dt)
    fn = jax.lax.linalg.tridiagonal_solve
    with jax.enable_x64(True):
        want = np.asarray(jax.jit(fn)(dl, d, du, b))
        got = np.asarray(xla.compile(_device_form(xla.from_jax(fn, dl, d, du, b)), "cpu")(dl, d, du, b))
    _close(got, want, 1e-12)


@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=["f64", "c128"])
def test_pivoted_qr_with_fixed_columns_and_recomputed_norms(dt):
    """geqp3 as dgeqp3 / zgeqp3 run it: the columns with jpvt != 0 moved to the front (LAPACK's
    swaps, in column order) and factored without pivoting, then the free ones pivoted by their
    partial norms.  Columns 1 and 2 are 3 and 2 times column 0 plus 1e-9 of noise: once one of
    them is factored, the others' downdated norms have lost every digit and dlaqp2 recomputes
    them (downdated, the f64 case takes another pivot at step 4).  The columns left after those
    are what the noise makes of them, so only their R is compared, not their reflectors."""
    rng = np.random.default_rng(3)
    a = _mat((2, 7, 5), dt, 3)
    a[:, :, 1] = a[:, :, 0] * 3 + 1e-9 * rng.standard_normal((2, 7))
    a[:, :, 2] = a[:, :, 0] * 2 + 2e-9 * rng.standard_normal((2, 7))
    jpvt = np.array([[0, 0, 0, 0, 1], [0, 0, 0, 0, 0]], np.int32)

    def fn(a):
        return _geqp3(a, jnp.asarray(jpvt))
    with jax.enable_x64(True):
        want = [np.asarray(w) for w in jax.jit(fn)(a)]
        got = [np.asarray(g) for g in xla.compile(_device_form(xla.from_jax(fn, a)), "cpu")(a)]
    np.testing.assert_array_equal(got[1], want[1])
    _close(got[0][..., :3], want[0][..., :3], 1e-9, "packed QR, columns 0-2")
    _close(got[2][..., :3], want[2][..., :3], 1e-9, "tau 0-2")
    upper = np.triu(np.ones((7, 5), bool))[:, 3:]
    np.testing.assert_allclose(got[0][..., 3:][:, upper], want[0][..., 3:][:, upper], atol=1e-12)


def test_pivoted_qr_refuses_computed_fixed_columns_on_gpus():
    """Which columns dgeqp3 fixes must be known when the device form is made (JAX passes zeros,
    a constant); a computed jpvt is refused with the reason, not run as if it were zeros."""
    a = _mat((4, 4), np.float32, 0)
    comp = xla.from_jax(lambda a, j: _geqp3(a, j), a, np.zeros(4, np.int32))
    with pytest.raises(xla.XlaError, match=r"geqp3 \(as device code\) needs jpvt to be a constant.*a parameter"):
        compile_vmfb(comp, "cuda", cache=False)


@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=["f64", "c128"])
@pytest.mark.parametrize("low,high", [(1, 6), (2, 5), (3, 3), (1, 2)])
def test_hessenberg_reduction_of_rows_ilo_to_ihi(dt, low, high):
    """gehrd with ilo, ihi other than 1, n (what LAPACK's balancing leaves; JAX passes 1, n):
    only rows and columns ilo..ihi are reduced, tau is zero outside, as LAPACK's host call (the
    reference here) leaves them."""
    et = xla.F64 if dt == np.float64 else xla.C128
    n = 6
    out = Shape.tuple([Shape(et, (n, n)), Shape(et, (n - 1,)), Shape(xla.S32, ())])
    name = "lapack_dgehrd_ffi" if dt == np.float64 else "lapack_zgehrd_ffi"
    b = xla.Builder("hrd")
    O.custom_call(name, [b.parameter(0, Shape(et, (n, n)))], out, opaque=f'{{"low": {low}, "high": {high}}}')
    comp = b.build()
    a = _mat((n, n), dt, 5)
    rows, cols = np.indices((n, n))
    a[(rows > cols) & ~((cols >= low - 1) & (rows <= high - 1))] = 0      # (triangular outside ilo..ihi)
    want = [np.asarray(w) for w in xla.compile(comp, "cpu")(a)]
    got = [np.asarray(g) for g in xla.compile(_device_form(comp), "cpu")(a)]
    for i, (g, w) in enumerate(zip(got, want)):
        _close(g, w, 1e-10, f"gehrd output {i}")


def _hilbert(n):
    i = np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


@pytest.mark.parametrize("name", ["det", "slogdet", "solve", "eigvalsh", "svdvals", "lu_factor", "qr"])
def test_device_form_on_an_ill_conditioned_matrix(name):
    # cond(H8) = 1.5e10: two backward-stable algorithms agree to about cond * eps
    _check(name, _hilbert(8), "cpu", rtol=1e-5)


def test_device_form_of_special_matrices():
    """An indefinite matrix gives a NaN Cholesky factor (info > 0, JAX fills it), a singular one
    a zero determinant, the zero matrix zero singular values and eigenvalues."""
    indefinite = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with jax.enable_x64(True):
        got = xla.compile(_device_form(xla.from_jax(jnp.linalg.cholesky, indefinite)), "cpu")(indefinite)
        assert np.all(np.isnan(np.asarray(got)[np.tril_indices(3)]))
        singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
        got = xla.compile(_device_form(xla.from_jax(jnp.linalg.det, singular)), "cpu")(singular)
        assert abs(float(np.asarray(got))) < 1e-12
    for name in ("svdvals", "eigvalsh", "det"):
        got, want = _run(name, np.zeros((4, 4)), "cpu")
        _close(got[0], want[0], 1e-12, name)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)], ids=["0x0", "batch2x0x0"])
@pytest.mark.parametrize("name", ["cholesky", "inv", "det", "slogdet", "eigh", "eigvalsh", "svdvals", "qr",
                                  "lu_factor"])
def test_device_form_of_empty_matrices(name, shape):
    """Empty matrices: LAPACK's results without work (empty, info 0), and what JAX makes of them
    (a determinant of 1).  The Jacobi iterations of eigh sliced the empty matrix: "'xla.slice'
    limit_indices must be <= the operand's dimensions" (JAX's testEigh of 0x0)."""
    if len(shape) > 2 and name in UNBATCHED:
        pytest.skip(f"jax's {name} takes one matrix")
    got, want = _run(name, np.zeros(shape, np.float32), "cpu")
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        _close(g, w, 1e-6, f"{name} output {i}")


@pytest.mark.parametrize("name", ["cholesky", "solve", "det", "lu_factor", "qr", "eigh", "svd_tall", "tridiagonal_solve",
                                  "tridiagonal", "qr_pivoting", "hessenberg"])
def test_device_form_on_vulkan(name):
    if "vulkan" not in E2E_TARGETS:
        pytest.skip("no Vulkan device on this machine")
    _check(name, _mat((2, 4, 4), np.float32, len(name)), "vulkan")


@pytest.mark.parametrize("name", ["cholesky", "cho_solve", "solve", "inv", "det", "lu_factor", "qr", "eigh", "svd",
                                  "svd_tall", "tridiagonal_solve", "tridiagonal_upper", "qr_pivoting_tall",
                                  "hessenberg"])
def test_complex_device_form_on_vulkan(name):
    if "vulkan" not in E2E_TARGETS:
        pytest.skip("no Vulkan device on this machine")
    _check(name, _mat((2, 4, 4), np.complex64, len(name)), "vulkan")


def test_the_targets_table_names_what_is_expanded():
    """xlair.targets reads which calls run as device code from xlair.lapack (the run side may
    not import the lowering): the same calls lowering/linalg_expand.py expands."""
    from xlair import lapack
    from xlair.lowering import linalg_expand
    for target_name in lapack.TARGETS:
        for types in ({"f32"}, {"c64"}):
            assert lapack.on_device(target_name, types) == (linalg_expand.routine_of(target_name, types) is not None), \
                (target_name, types)


@pytest.mark.parametrize("name,gpu", gpu_cases(sorted(FUNCTIONS)))
@pytest.mark.sample(every=5)
def test_compiles_for_gpus(name, gpu):
    for dt in (np.float32, np.float64) + ((np.complex64,) if name in COMPLEX else ()):
        with jax.enable_x64(dt in (np.float64, np.complex128)):
            comp = xla.from_jax(FUNCTIONS[name], _mat((4, 4) if name in UNBATCHED else (2, 4, 4), dt, 0))
        assert compile_vmfb(comp, gpu)[:8]


def _eig(a, left=True, target="cpu"):
    """(ours, jax.jit's) w, vl, vr of lax.linalg.eig with left and right vectors."""
    def fn(a):
        return tuple(jax.lax.linalg.eig(a, compute_left_eigenvectors=left))
    with jax.enable_x64(a.dtype in (np.complex128, np.float64)):
        want = [np.asarray(w) for w in jax.jit(fn)(a)]
        if target == "cpu":
            got = [np.asarray(g) for g in xla.compile(_device_form(xla.from_jax(fn, a)), "cpu")(a)]
        else:
            got = [np.asarray(g) for g in xla.jit(fn, target=target)(a)]
    return got, want


def _check_eig(a, got, want, tol):
    """Eigenvalues as LAPACK's (in the QR algorithm's order, which may differ from LAPACK's);
    each right and left vector equal to LAPACK's for the same eigenvalue (zgeev's scaling, unit
    norm and a real positive largest component, fixes a complex matrix's; a real matrix's are
    LAPACK's up to sign: dgeev's scaling leaves the sign its Schur vectors give), and by their
    defining property."""
    h = lambda x: np.conj(np.swapaxes(x, -1, -2))               # noqa: E731
    w, vl, vr = (got[0] + 1j * got[1], *got[2:4]) if len(got) == 4 else got[:3]
    ww, wvl, wvr = (want[0] + 1j * want[1], *want[2:4]) if len(want) == 4 else want[:3]
    scale = max(1.0, float(np.abs(a).max()))
    for b in np.ndindex(w.shape[:-1]):
        match = _check_eigenvalues(w[b], ww[b], tol * scale)
        for mine, lapack in ((vr[b], wvr[b][:, match]), (vl[b], wvl[b][:, match])):
            if np.isrealobj(a):
                lapack = lapack * np.where(np.sum(np.real(np.conj(lapack) * mine), 0) < 0, -1, 1)
            np.testing.assert_allclose(mine, lapack, atol=tol * 10)
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=tol * scale * 10)
    np.testing.assert_allclose(h(a) @ vl, vl * np.conj(w)[..., None, :], atol=tol * scale * 10)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (2, 4, 4), (24, 24)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.sample(every=2)
def test_complex_eig_device_form_on_cpu_matches_lapack(shape, dt):
    """zgeev as device code (lowering/schur.py): the Hessenberg form, the shifted QR algorithm
    with Givens rotations, ztrevc's back substitution and zgeev's scaling.  1x1 to 3x3 are
    computed padded to 4 (IREE 3.13 crashed compiling them)."""
    a = _mat(shape, dt, shape[-1])
    got, want = _eig(a)
    _check_eig(a, got, want, 2e-4 if dt == np.complex64 else 1e-10)


def _check_eigenvalues(w, want, atol):
    """Eigenvalues w [n] as LAPACK's `want`, each matched to its nearest (in any order); the
    matching indices into `want`."""
    match = [int(np.argmin(np.abs(want - x))) for x in w]
    assert sorted(match) == list(range(len(want))), (w, want)
    np.testing.assert_allclose(w, want[match], atol=atol)
    return match


def _schur(a):
    """T, Z of lax.linalg.schur(a) as device code on the CPU, checked to be a Schur
    decomposition of `a` (Z unitary, Z T Z^H = a), and jax.jit's eigenvalues of `a`."""
    wide = a.dtype in (np.float64, np.complex128)
    tol = 1e-9 if wide else 2e-3
    with jax.enable_x64(wide):
        want_w = np.asarray(jax.jit(jnp.linalg.eigvals)(a))
        fn = lambda a: tuple(jax.lax.linalg.schur(a))          # noqa: E731
        t, z = (np.asarray(g) for g in xla.compile(_device_form(xla.from_jax(fn, a)), "cpu")(a))
    zh = np.conj(np.swapaxes(z, -1, -2))
    np.testing.assert_allclose(zh @ z, np.broadcast_to(np.eye(a.shape[-1]), z.shape), atol=tol)
    np.testing.assert_allclose(z @ t @ zh, a, atol=tol * np.abs(a).max())
    return t, z, want_w


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 5)], ids=["3x3", "batch2x5x5"])
def test_complex_schur_device_form(shape, dt):
    """zgees as device code: Z unitary, T upper triangular, Z T Z^H = a, T's diagonal LAPACK's
    eigenvalues (the Schur form itself is not unique: its diagonal's order is the algorithm's)."""
    a = _mat(shape, dt, 9)
    tol = 2e-4 if dt == np.complex64 else 1e-10
    t, z, want_w = _schur(a)
    assert np.all(np.tril(t, -1) == 0)
    d = np.diagonal(t, axis1=-2, axis2=-1)
    for b in np.ndindex(d.shape[:-1]):
        _check_eigenvalues(d[b], want_w[b], tol * 10)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (5, 5), (2, 4, 4)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.sample(every=2)
def test_real_eig_device_form_on_cpu_matches_lapack(shape, dt):
    """dgeev as device code: dlahqr's double-shift QR, dlanv2's standard 2x2 blocks (a complex
    pair adjacent, its positive imaginary part first, exactly conjugate), the eigenvectors of
    the complex triangular form made of it, scaled as dgeev scales them (a pair's largest
    component real, the second vector the first's conjugate)."""
    a = _mat(shape, dt, shape[-1] + 1)
    got, want = _eig(a)
    tol = 2e-4 if dt == np.float32 else 1e-10
    _check_eig(a, got, want, tol)
    w = got[0]
    for b in np.ndindex(w.shape[:-1]):
        pairs = np.flatnonzero(w[b].imag > 0)
        np.testing.assert_array_equal(w[b][pairs + 1], np.conj(w[b][pairs]))
        np.testing.assert_array_equal(got[2][b][:, pairs + 1], np.conj(got[2][b][:, pairs]))
        assert np.all(w[b].imag[np.abs(w[b].imag) < 1e-3] == 0)       # (real eigenvalues exactly real)


def test_real_eig_streamable_op_expected_to_be_in_an_execution_region():
    """A 16x16 real eig: the Schur iteration's masks shared an iota, an operand-less dispatch
    IREE 3.13 left outside its execution regions in every form of the program's loops (or
    compiled with a buffer the VM may read as null).  Small iotas are constant tables now
    (emit.iota; docs/iree-limits.md)."""
    a = _mat((16, 16), np.float64, 17)
    got, want = _eig(a)
    _check_eig(a, got, want, 1e-10)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 6, 6)], ids=["3x3", "batch2x6x6"])
def test_real_schur_device_form(shape, dt):
    """dgees as device code: Z orthogonal, Z T Z^T = a, T quasi-triangular with dlanv2's 2x2
    blocks (equal diagonal, b c < 0), its eigenvalues LAPACK's."""
    a = _mat(shape, dt, 11)
    tol = 2e-4 if dt == np.float32 else 1e-10
    t, z, want_w = _schur(a)
    n = shape[-1]
    assert np.all(np.tril(t, -2) == 0)
    for b in np.ndindex(t.shape[:-2]):
        tb, ws = t[b], []
        i = 0
        while i < n:
            if i + 1 < n and tb[i + 1, i] != 0:
                assert tb[i, i] == tb[i + 1, i + 1] and tb[i, i + 1] * tb[i + 1, i] < 0
                assert i + 2 >= n or tb[i + 2, i + 1] == 0
                r = np.sqrt(abs(tb[i, i + 1])) * np.sqrt(abs(tb[i + 1, i]))
                ws += [tb[i, i] + 1j * r, tb[i, i] - 1j * r]
                i += 2
            else:
                ws.append(tb[i, i])
                i += 1
        _check_eigenvalues(np.array(ws), want_w[b], tol * 10)


def test_complex_eig_of_special_matrices():
    """A cyclic permutation (unit eigenvalues that plain Wilkinson shifts cycle on: the
    exceptional shifts after 10 and 20 trips break it), a Jordan block, the zero and identity
    matrices, and NaN (info 1: JAX fills every result with NaN, as after LAPACK's failure)."""
    n = 6
    cycle = np.roll(np.eye(n), 1, 0).astype(np.complex128)
    got, want = _eig(cycle)
    np.testing.assert_allclose(np.sort(np.angle(got[0])), np.sort(np.angle(np.exp(2j * np.pi * np.arange(n) / n))),
                               atol=1e-10)
    np.testing.assert_allclose(cycle @ got[2], got[2] * got[0][None, :], atol=1e-10)
    for a in (np.zeros((n, n)), np.eye(n), 2 * np.eye(n) + np.eye(n, k=1)):
        got, want = _eig(a.astype(np.complex128))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=1e-12)
    got, _ = _eig(np.full((n, n), np.nan, np.complex128))
    assert all(np.all(np.isnan(g)) for g in got)


@pytest.mark.parametrize("dt", [np.complex64, np.float32], ids=["c64", "f32"])
def test_eig_on_vulkan(dt):
    if "vulkan" not in E2E_TARGETS:
        pytest.skip("no Vulkan device on this machine")
    a = _mat((2, 5, 5), dt, 5)
    got, want = _eig(a, target="vulkan")
    _check_eig(a, got, want, 2e-4)


@pytest.mark.parametrize("dt,gpu", gpu_cases([np.complex64, np.float32]),
                         ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_eig_and_schur_compile_for_gpus(gpu, dt):
    a = _mat((2, 4, 4), dt, 0)
    for fn in (jnp.linalg.eig, jnp.linalg.eigvals, lambda a: tuple(jax.lax.linalg.schur(a))):
        assert compile_vmfb(xla.from_jax(fn, a), gpu)[:8]


def test_eigvals_failed_to_solve_for_timepoint_coverage_cuda():
    """A batch of real 6x6 eigvals for CUDA: both device-loop forms compile with a buffer IREE's
    VM may read as null (iree-org/iree#24753) and the general form with host loops fails with
    IREE's 'failed to solve for timepoint coverage'; the counted form with host loops is right
    (compile_vmfb tries it after the general form's own fallbacks; docs/iree-limits.md)."""
    a = _mat((2, 6, 6), np.float32, 6)
    assert compile_vmfb(xla.from_jax(jnp.linalg.eigvals, a), "cuda")[:8]
