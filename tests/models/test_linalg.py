"""Linear algebra from JAX (jnp.linalg, jax.scipy.linalg, lax.linalg) through xlair.jit on the
CPU: JAX lowers them to `lapack_<t><routine>_ffi` custom calls, which xlair imports and runs
by calling LAPACK on the host (python/xlair/lapack.py).

Each function is compared with jax.jit on the same input (random, batched, ill-conditioned
and singular matrices; NaN where jax.jit gives NaN), and each decomposition is also checked
for its defining property (reconstruction, orthogonality, triangularity) against bounds
derived from the precision.  XLA's own decomposition targets (Qr, Eigh, LuDecomposition,
ProductOfElementaryHouseholderReflectors) are checked through the builder against numpy.
"""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jsl = pytest.importorskip("jax.scipy.linalg")
lax = jax.lax

RNG = np.random.default_rng(11)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps,
       np.complex64: np.finfo(np.float32).eps, np.complex128: np.finfo(np.float64).eps}


def _mat(shape, dt, rng=RNG):
    a = rng.standard_normal(shape)
    if np.issubdtype(dt, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def _spd(a):
    n = a.shape[-1]
    return a @ jnp.conj(jnp.swapaxes(a, -1, -2)) + n * jnp.eye(n, dtype=a.dtype)


def _tridiag_args(a):
    # lax.linalg.tridiagonal_solve(dl, d, du, b): dl[0] and du[-1] are zero by its convention
    return (a[..., 0, :].at[..., 0].set(0), a[..., 1, :] + 8, a[..., 2, :].at[..., -1].set(0), a[..., :, :2])


#: name -> (function of one matrix argument, whether it takes a batch of matrices)
FUNCTIONS = {
    "solve": (lambda a: jnp.linalg.solve(a, a[..., :2]), True),
    "inv": (jnp.linalg.inv, True),
    "det": (jnp.linalg.det, True),
    "slogdet": (lambda a: tuple(jnp.linalg.slogdet(a)), True),
    "cholesky": (lambda a: jnp.linalg.cholesky(_spd(a)), True),
    "qr": (lambda a: tuple(jnp.linalg.qr(a)), True),
    "qr_reduced_wide": (lambda a: tuple(jnp.linalg.qr(a[..., :3, :])), True),
    "eigh": (lambda a: tuple(jnp.linalg.eigh(a)), True),
    "eigvalsh": (jnp.linalg.eigvalsh, True),
    "svd": (lambda a: tuple(jnp.linalg.svd(a)), True),
    "svd_reduced_tall": (lambda a: tuple(jnp.linalg.svd(a[..., :, :3], full_matrices=False)), True),
    "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), True),
    "svd_gesvd": (lambda a: tuple(lax.linalg.svd(a, algorithm=lax.linalg.SvdAlgorithm.QR)), True),
    "eig": (lambda a: tuple(jnp.linalg.eig(a)), True),
    "eigvals": (jnp.linalg.eigvals, True),
    "eig_left": (lambda a: tuple(lax.linalg.eig(a, compute_left_eigenvectors=True)), True),
    "lstsq": (lambda a: jnp.linalg.lstsq(a, a[:, 0])[0], False),
    "pinv": (jnp.linalg.pinv, True),
    "norm2": (lambda a: jnp.linalg.norm(a, ord=2, axis=(-2, -1)), True),
    "cond": (jnp.linalg.cond, True),
    "lu_factor": (lambda a: tuple(jsl.lu_factor(a)), True),
    "lu_solve": (lambda a: jsl.lu_solve(jsl.lu_factor(a), a[..., 0]), True),
    "lu": (lambda a: tuple(jsl.lu(a)), False),
    "cho_factor": (lambda a: jsl.cho_factor(_spd(a))[0], True),
    "cho_solve": (lambda a: jsl.cho_solve(jsl.cho_factor(_spd(a)), a[..., 0]), True),
    "solve_triangular": (lambda a: jsl.solve_triangular(a + 8 * jnp.eye(a.shape[-1], dtype=a.dtype), a[..., :2],
                                                        lower=True), True),
    "solve_triangular_trans_unit": (lambda a: jsl.solve_triangular(a, a[..., :2], trans=1, unit_diagonal=True),
                                    True),
    "solve_triangular_right": (lambda a: lax.linalg.triangular_solve(
        a + 8 * jnp.eye(a.shape[-1], dtype=a.dtype), a[..., :2, :], left_side=False, lower=False), True),
    "schur": (lambda a: tuple(jsl.schur(a)), False),
    "qr_pivoting": (lambda a: tuple(jsl.qr(a, pivoting=True)), False),
    "hessenberg": (lambda a: tuple(jsl.hessenberg(a, calc_q=True)), False),
    "tridiagonal": (lambda a: tuple(lax.linalg.tridiagonal(a)), True),
    "tridiagonal_solve": (lambda a: lax.linalg.tridiagonal_solve(*_tridiag_args(a)), True),
    "expm": (jsl.expm, False),
    "sqrtm": (jsl.sqrtm, False),
}
#: the functions that are also checked in f64 and c64 (all are checked in f32 and c128)
CORE = ("solve", "inv", "det", "cholesky", "qr", "eigh", "svd", "eig", "lu_factor", "solve_triangular")
#: what jax itself does not do for a dtype
NOT_IN_JAX = {("tridiagonal", np.complex128)}


def _run(fn, *args, x64: bool):
    with jax.enable_x64(x64):
        want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        got = jax.tree_util.tree_leaves(xla.jit(fn)(*args))
    return [np.asarray(g) for g in got], [np.asarray(w) for w in want]


def _assert_match(got, want, rtol):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, g.dtype, w.shape, w.dtype)
        scale = max(float(np.nanmax(np.abs(w))) if w.size and not np.all(np.isnan(w)) else 1.0, 1.0)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True, err_msg=f"output {i}")


def _cases():
    out = []
    for name, (_fn, batched) in FUNCTIONS.items():
        dts = (np.float32, np.complex128) + ((np.float64, np.complex64) if name in CORE else ())
        for dt in dts:
            if (name, dt) not in NOT_IN_JAX:
                out.append((name, dt, (5, 5)))
        if batched:
            out.append((name, np.float32, (2, 4, 4)))
    return out


@pytest.mark.parametrize("name,dt,shape", _cases(), ids=lambda v: getattr(v, "__name__", str(v)))
def test_matches_jax(name, dt, shape):
    fn = FUNCTIONS[name][0]
    a = _mat(shape, dt, np.random.default_rng(len(name)))
    got, want = _run(fn, a, x64=np.dtype(dt) in (np.float64, np.complex128))
    _assert_match(got, want, rtol=1e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-10)


def _hilbert(n):
    i = np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


SPECIAL = {
    # singular: LAPACK's getrf reports info > 0; jax's solve / inv give inf / nan, det gives 0
    "singular": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
    # not positive definite: potrf fails and jax fills the factor with NaN
    "indefinite": np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    # ill-conditioned (cond ~ 1e10)
    "hilbert8": _hilbert(8),
    "zeros": np.zeros((4, 4)),
}


@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "cholesky_raw", "eigh", "svd", "lu_factor",
                                  "qr", "pinv"])
@pytest.mark.parametrize("matrix", sorted(SPECIAL))
def test_special_matrices_match_jax(name, matrix):
    fn = (lambda a: jnp.linalg.cholesky(a)) if name == "cholesky_raw" else FUNCTIONS[name][0]
    got, want = _run(fn, SPECIAL[matrix], x64=True)
    if matrix in ("singular", "zeros") and name in ("solve", "inv"):
        # the values past a zero pivot are inf / nan in both; where they are finite they agree
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.isfinite(g), np.isfinite(w))
            np.testing.assert_allclose(np.where(np.isfinite(w), g, 0), np.where(np.isfinite(w), w, 0), rtol=1e-6)
        return
    _assert_match(got, want, rtol=1e-7 if matrix == "hilbert8" else 1e-10)
    if name == "cholesky_raw" and matrix == "indefinite":
        assert np.all(np.isnan(got[0][np.tril_indices(3)]))     # the failure convention: NaN-filled


# -- the defining properties ----------------------------------------------------------------
def _h(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _rel(x, a):
    return np.linalg.norm(x) / max(np.linalg.norm(a), 1e-300)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_decompositions_satisfy_their_definitions(dt):
    n = 24
    a = _mat((n, n), dt, np.random.default_rng(5))
    bound = 30 * n * EPS[dt]          # a small multiple of eps * n (LAPACK's backward error)
    eye = np.eye(n)
    with jax.enable_x64(np.dtype(dt) in (np.float64, np.complex128)):
        q, r = (np.asarray(x) for x in xla.jit(jnp.linalg.qr)(a))
        assert _rel(a - q @ r, a) < bound and _rel(_h(q) @ q - eye, eye) < bound
        assert np.all(np.tril(r, -1) == 0)

        h = (a + _h(a)) / 2
        w, v = (np.asarray(x) for x in xla.jit(jnp.linalg.eigh)(h))
        assert _rel(h @ v - v * w, h) < bound and _rel(_h(v) @ v - eye, eye) < bound
        assert np.all(np.diff(w) >= 0) and w.dtype == np.finfo(dt).dtype

        u, s, vh = (np.asarray(x) for x in xla.jit(jnp.linalg.svd)(a))
        assert _rel(a - (u * s) @ vh, a) < bound and np.all(np.diff(s) <= 0) and np.all(s >= 0)
        assert _rel(_h(u) @ u - eye, eye) < bound and _rel(vh @ _h(vh) - eye, eye) < bound

        spd = a @ _h(a) + n * eye
        lo = np.asarray(xla.jit(jnp.linalg.cholesky)(spd))
        assert _rel(spd - lo @ _h(lo), spd) < bound and np.all(np.triu(lo, 1) == 0)

        p, lo, up = (np.asarray(x) for x in xla.jit(jsl.lu)(a))
        assert _rel(a - p @ lo @ up, a) < bound
        assert np.all(np.triu(lo, 1) == 0) and np.allclose(np.diag(lo), 1) and np.all(np.tril(up, -1) == 0)
        # partial pivoting bounds the multipliers: by 1, or by sqrt(2) for complex ones (the pivot
        # is chosen by |re| + |im|)
        assert np.all(np.abs(lo) <= (np.sqrt(2) if np.iscomplexobj(lo) else 1) * (1 + bound))

        t, z = (np.asarray(x) for x in xla.jit(jsl.schur)(a))
        assert _rel(a - z @ t @ _h(z), a) < bound and _rel(_h(z) @ z - eye, eye) < bound
        assert np.all(np.tril(t, -2) == 0)                # quasi-triangular (2x2 blocks when real)

        w, v = (np.asarray(x) for x in xla.jit(jnp.linalg.eig)(a))
        assert _rel(a @ v - v * w, a) < bound

        hs, qh = (np.asarray(x) for x in xla.jit(lambda m: jsl.hessenberg(m, calc_q=True))(a))
        assert _rel(a - qh @ hs @ _h(qh), a) < bound and np.all(np.tril(hs, -2) == 0)


def test_batched_solve_matches_numpy():
    a = _mat((64, 12, 12), np.float32, np.random.default_rng(2)) + 4 * np.eye(12, dtype=np.float32)
    b = _mat((64, 12, 3), np.float32, np.random.default_rng(3))
    got = np.asarray(xla.jit(jnp.linalg.solve)(a, b))
    np.testing.assert_allclose(got, np.linalg.solve(a.astype(np.float64), b), rtol=2e-4, atol=2e-4)


# -- XLA's own decomposition targets, through the builder --------------------------------------
def _program(name, shapes, body):
    b = xla.Builder(name)
    params = [b.parameter(i, s, f"p{i}") for i, s in enumerate(shapes)]
    body(*params)
    return b.build()


@pytest.mark.parametrize("dt", [xla.F32, xla.C128], ids=["f32", "c128"])
def test_xla_decomposition_targets(dt):
    n = 6
    npdt = xla.Shape(dt, ()).dtype
    a = _mat((2, n, n), npdt, np.random.default_rng(9))
    bound = 50 * n * EPS[npdt.type]
    eye = np.eye(n)
    arr = xla.Shape(dt, (2, n, n))
    vec = xla.Shape(dt, (2, n))
    s32 = xla.Shape(xla.S32, (2, n))

    def qr_body(x):
        t = O.custom_call("Qr", [x], xla.Shape.tuple([arr, vec]))
        packed, taus = O.get_tuple_element(t, 0), O.get_tuple_element(t, 1)
        O.tuple([packed, O.custom_call("ProductOfElementaryHouseholderReflectors", [packed, taus], arr)])
    packed, q = xla.compile(_program("qr", [arr], qr_body))(a)
    r = np.triu(packed)
    assert _rel(a - q @ r, a) < bound and _rel(_h(q) @ q - eye, eye) < bound

    lu_comp = _program("lu", [arr], lambda x: O.custom_call("LuDecomposition", [x], xla.Shape.tuple([arr, s32, s32])))
    lu, piv, perm = xla.compile(lu_comp)(a)
    for k in range(2):
        lo, up = np.tril(lu[k], -1) + eye, np.triu(lu[k])
        assert _rel(a[k][perm[k]] - lo @ up, a[k]) < bound
        swapped = np.arange(n)
        for i, p in enumerate(piv[k]):          # the permutation is the pivots' swaps applied in order
            swapped[[i, p]] = swapped[[p, i]]
        np.testing.assert_array_equal(perm[k], swapped)

    real = xla.Shape(xla.F32 if dt == xla.F32 else xla.F64, (2, n))
    eigh_comp = _program("eigh", [arr], lambda x: O.custom_call("Eigh", [x], xla.Shape.tuple([arr, real]),
                                                                opaque="1,1,100,1e-6"))
    h = (a + _h(a)) / 2
    v, w = xla.compile(eigh_comp)(h)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=1e-5, atol=1e-5 * np.abs(w).max())
    assert _rel(h @ v - v * w[:, None, :], h) < bound


def test_eigh_target_rejects_a_malformed_opaque():
    arr = xla.Shape(xla.F32, (3, 3))
    comp = _program("eigh", [arr], lambda x: O.custom_call("Eigh", [x], xla.Shape.tuple(
        [arr, xla.Shape(xla.F32, (3,))]), opaque="lower"))
    with pytest.raises(xla.XlaError, match="lower,sort_eigenvalues,max_iter,tol"):
        xla.compile(comp)(np.eye(3, dtype=np.float32))


@pytest.mark.parametrize("n", [6, 300], ids=["device_code", "host"])
def test_decomposition_target_rejects_integer_matrices(n):
    """An S32 Qr is refused with the rule, as device code (small) and on the host (large),
    where it had failed inside the expansion ('xla.sqrt' operand ...) or in LAPACK's lookup."""
    arr, vec = xla.Shape(xla.S32, (2, n, n)), xla.Shape(xla.S32, (2, n))
    comp = _program("qr", [arr], lambda x: O.custom_call("Qr", [x], xla.Shape.tuple([arr, vec])))
    with pytest.raises(xla.XlaError, match=r"'xla.custom_call' Qr operand 0 must have a floating-point "
                                           r"or complex element type; got S32"):
        xla.compile(comp)(np.ones((2, n, n), np.int32))


# -- the importer and the targets -----------------------------------------------------------
def _lowered(fn, *args):
    return jax.jit(fn).lower(*args).as_text()


def test_importer_checks_the_lapack_layouts():
    """jaxlib's kernels read matrices column-major; a row-major matrix operand would be read
    transposed, so the importer refuses it and says which layout it wants."""
    a = _mat((4, 4), np.float32)
    text = _lowered(jsl.lu_factor, a)
    assert "operand_layouts = [dense<[0, 1]>" in text
    xla.from_stablehlo(text)                                # as JAX wrote it: accepted
    bad = text.replace("operand_layouts = [dense<[0, 1]>", "operand_layouts = [dense<[1, 0]>")
    with pytest.raises(xla.XlaError, match=r"operand_layouts\[0\] = \[1, 0\].*minor-to-major \[0, 1\]"):
        xla.from_stablehlo(bad)
