"""xla-expand-linalg: JAX's LAPACK custom calls (and XLA's decomposition targets) as `xla` ops,
for targets without a host LAPACK: XLA's expanders (cholesky_expander, qr_expander,
eigh_expander, ...), done here for every call a target cannot run on the host.

Each expander computes what jaxlib's kernel returns (python/xlair/lapack.py runs the kernels
on the host): the same results, layouts and `info`, for real types (f32, f64) and, for potrf,
trsm, getrf, LuDecomposition, the Householder QR, eigh, the SVD, gtsv, hetrd, geqp3 and gehrd,
complex ones (c64, c128), and geev and gees for both.  Batched over the leading dimensions.
The algorithms, on whole batches of matrices (masks and reductions select rows and columns, so
every matrix of a batch takes its own pivots):

  potrf    xla.cholesky; info = the first column whose pivot is not positive (or NaN).  The
           other triangle is xla.cholesky's zeros, where LAPACK leaves the input (JAX's program
           masks it): keeping the input there (a select of the factor and the input) made IREE
           3.13's Vulkan stream partitioning fail ("circular dependency: input operation uses
           partition output") when the input is itself computed, as JAX's symmetrisation is
  trsm     xla.triangular_solve
  getrf    LU with partial pivoting, a While over the columns (the first largest |pivot|, as
           LAPACK's idamax; of a complex matrix |re| + |im|, as icamax; 1-based pivots; info =
           the first zero pivot)
  geqrf    Householder QR, a While over the columns (LAPACK's dlarfg: beta = -sign(alpha) ||x||,
           tau = 0 where the column below the diagonal is zero; zlarfg for complex columns:
           beta real, -sign(re alpha) ||x||, tau = 0 only where alpha is real too; the trailing
           columns take H^H = I - conj(tau) v v^H)
  orgqr    the product of the reflectors applied to the identity, last reflector first (ungqr:
           H = I - tau v v^H)
  syevd    cyclic Jacobi (lowering/jacobi.py) on the matrix read from its `uplo` triangle;
           eigenvalues ascending (heevd: the Hermitian matrix, its diagonal taken as real)
  gesdd / gesvd  two-sided Jacobi on the square factor: of a itself, or of R from a's QR (a
           tall a; a wide a is done conjugate-transposed); singular values descending
  gtsv     Gaussian elimination with partial pivoting over the rows, as dgtsv / zgtsv run it
  sytrd    Householder tridiagonalisation, as dsytd2 / zhetd2 run it (hetrd: complex)
  geqp3    QR with column pivoting, as dgeqp3 / zgeqp3 run it (dlaqp2's norm downdating; the
           columns with jpvt != 0 first, unpivoted)
  gehrd    Householder reduction to upper Hessenberg form of rows and columns ilo..ihi, as
           dgehd2 / zgehd2 run it
  geev, gees  the Hessenberg form, then the shifted QR algorithm (zlahqr; real matrices:
           dlahqr's double shift and dlanv2's standard 2x2 blocks) and ztrevc's eigenvectors
           (lowering/schur.py), scaled as zgeev / dgeev scale them

Eigenvectors and singular vectors are LAPACK's up to their signs.  `info` of syevd / gesdd
is 0, or 1 where the result has a NaN (JAX's program then fills the results with NaN).

The pass option `linalg` says which calls are expanded: `auto` (the default) every call a
target other than the CPU cannot run on the host, and on the CPU those small enough that the
device form is faster (lowering/cost.py LINALG_DEVICE_MAX: up to n = 32 for the
factorisations; the Jacobi methods stay on LAPACK); `device` every call it covers;
`host` none.
"""
from __future__ import annotations

import json
import re

import numpy as np

from xlair.dialect.attrs import Transpose
from xlair.dialect.checks import XlaError, require_floating
from xlair.dialect.core import lookup
from xlair.dialect.ir import ir
from xlair.dialect.types import S32, Shape

from . import jacobi, registry, schur
from .registry import defining_op
from .cost import LINALG_DEVICE_MAX
from .emit import X, full, iota, op, tuple_of, where, counted
from .emit import cabs1 as _cabs1, last as _last, slice_at as _slice_at

#: XLA's decomposition targets, as the LAPACK routine they compute
_XLA_TARGETS = {"Qr": "geqrf", "ProductOfElementaryHouseholderReflectors": "orgqr",
                "LuDecomposition": "LuDecomposition", "Eigh": "Eigh"}
_LAPACK = re.compile(r"lapack_([sdcz])(\w+)_ffi")
#: the LAPACK type prefixes expanded in every routine (the real types) ...
_TYPES = "sd"
#: ... and the routines also expanded for complex matrices (prefixes c, z; XLA's targets of c64,
#: c128); the others' complex calls stay on the host (python/xlair/lapack.py DEVICE_COMPLEX)
_COMPLEX = frozenset({"potrf", "trsm", "getrf", "LuDecomposition", "geqrf", "ungqr", "orgqr", "heevd", "Eigh",
                      "gesdd", "gesvd", "gtsv", "hetrd", "geqp3", "gehrd", "geev", "gees"})


def routine_of(target_name: str, operand_types=()) -> str | None:
    """The routine an expander computes for a custom call of `target_name` whose operands have
    the xla element type names `operand_types`, or None where there is none (complex types,
    routines not expanded)."""
    m = _LAPACK.fullmatch(target_name)
    if m:
        name = m.group(2)
        return name if name in EXPANDERS and (m.group(1) in _TYPES or name in _COMPLEX) else None
    name = _XLA_TARGETS.get(target_name)
    return name if name and (name in _COMPLEX or not set(operand_types) & {"c64", "c128"}) else None


def _config(opaque: str) -> dict:
    """A call's attributes: the importer's JSON object, or {'text': XLA's backend_config}."""
    try:
        cfg = json.loads(opaque) if opaque else {}
    except ValueError:
        return {"text": opaque}
    return cfg if isinstance(cfg, dict) else {"text": opaque}


def _char(cfg: dict, key: str, default: str) -> str:
    v = cfg.get(key, ord(default))
    return chr(v) if isinstance(v, int) else str(v)


# -- helpers ------------------------------------------------------------------------------
def _col(a: X, j: X) -> X:
    """Column j (a scalar, or one per matrix [...]) of each matrix: [..., m]."""
    if j.rank:
        j = j.reshape(list(j.dims) + [1, 1])
    return where(iota(a.dims, -1).eq(j), a, 0).sum(-1)


def _row(a: X, i: X) -> X:
    """Row i (a scalar, or one per matrix [...]) of each matrix: [..., n]."""
    if i.rank:
        i = i.reshape(list(i.dims) + [1, 1])
    return where(iota(a.dims, -2).eq(i), a, 0).sum(-2)


def _at(v: X, j: X) -> X:
    """Element j (a scalar, or one per vector [...]) of each vector: [...]."""
    if j.rank:
        j = _last(j)
    return where(iota(v.dims, -1).eq(j), v, 0).sum(-1)


def _outer(u: X, v: X) -> X:
    return u.reshape(list(u.dims) + [1]) * v.reshape(list(v.dims[:-1]) + [1, v.dims[-1]])


def _info_where(bad: X) -> X:
    """info [...] from bad [..., n]: the first bad index + 1, or 0."""
    n = bad.dims[-1]
    first = where(bad, iota(bad.dims, -1) + 1, n + 1).min(-1)
    return where(first.gt(n), 0, first)


def _nan_info(*xs: X) -> X:
    """1 where a result of the matrix has a NaN, else 0: [...] (batch dims of xs[0] minus its core)."""
    bad = None
    for x, core in xs:
        b = x.isnan().any(list(range(x.rank - core, x.rank)))
        bad = b if bad is None else bad | b
    return where(bad, full(1, S32), full(0, S32))


# -- the routines -------------------------------------------------------------------------
def _potrf(args, cfg, outs):
    a = args[0]
    lower = _char(cfg, "uplo", "L") == "L"
    c = X(op("cholesky", a, lower=lower))
    d = jacobi.diag(c).real()           # (a complex factor's diagonal is real, as LAPACK's)
    return [c, _info_where(d.isnan() | d.le(0))]


def _trsm(args, cfg, outs):
    a, b = args
    if a.rank < b.rank:
        a = a.to(list(b.dims[:-2]) + list(a.dims[-2:]))
    trans = {"N": Transpose.NO_TRANSPOSE, "T": Transpose.TRANSPOSE, "C": Transpose.ADJOINT}[_char(cfg, "trans_x", "N")]
    return [X(op("triangular_solve", a, b, left_side=_char(cfg, "side", "L") == "L",
                 lower=_char(cfg, "uplo", "L") == "L", unit_diagonal=_char(cfg, "diag", "N") == "U",
                 transpose_a=trans))]


def lu(a: X) -> tuple[X, X, X, X]:
    """LU with partial pivoting of a [..., m, n]: (packed L\\U, 0-based pivots [..., k], the
    permutation [..., m], info [...])."""
    *bt, m, n = a.dims
    k = min(m, n)

    def step(j, s):
        ri, ci = iota(a.dims, -2), iota(a.dims, -1)         # (a While's body sees only its state)
        rows, cols = iota(bt + [m], -1), iota(bt + [n], -1)
        x, piv, perm, info = s
        col = _col(x, j)
        mag = where(rows.ge(j), _cabs1(col), -1)
        best = mag.max(-1)
        p = where(mag.eq(_last(best)), rows, m).min(-1)
        p = where(p.ge(m), j.to(p.dims), p)             # (NaN in the column: no swap)
        rj, rp = _row(x, j), _row(x, p)
        pe = _last(_last(p))
        x = where(ri.eq(j), rp.reshape(bt + [1, n]), where(ri.eq(pe), rj.reshape(bt + [1, n]), x))
        piv = where(iota(piv.dims, -1).eq(j), _last(p), piv)
        pj = _at(perm, j)
        pp = _at(perm, p)
        perm = where(rows.eq(j), _last(pp), where(rows.eq(_last(p)), _last(pj), perm))
        pivot = _at(rp, j)
        info = where(info.eq(0) & pivot.eq(0), (j + 1).to(info.dims), info)
        colx = _col(x, j)
        ok = _last(pivot.ne(0))
        l = where(rows.gt(j), where(ok, colx / where(ok, _last(pivot), 1), colx), 0)
        u = where(cols.gt(j), rp, 0)
        x = x - _outer(l, u)
        x = where(ci.eq(j) & ri.gt(j), _last(l), x)
        return [x, piv, perm, info]

    x, piv, perm, info = counted(k, [a, full(0, S32, bt + [k]), iota(bt + [m], -1), full(0, S32, bt)], step)
    return x, piv, perm, info


def _getrf(args, cfg, outs):
    x, piv, _, info = lu(args[0])
    return [x, piv + 1, info]


def _lu_decomposition(args, cfg, outs):
    x, piv, perm, _ = lu(args[0])
    return [x, piv, perm]


def _larfg(alpha: X, below: X) -> tuple[X, X, X]:
    """LAPACK's dlarfg / zlarfg of the vectors (alpha, below) (alpha [...], below [..., m] zero
    where it is not part of the vector): (beta, tau, scale), the reflector's vector being
    (1, below / scale).  beta = -sign(re alpha) ||(alpha, below)||, real; tau = 0 where there is
    nothing to do (below zero, and alpha real)."""
    xn2 = below.abs2().sum(-1)
    norm = (alpha.abs2() + xn2).sqrt()
    re = alpha.real()
    zero = xn2.eq(0)
    if alpha.et.is_complex:         # (zlarfg: nothing to do only where alpha is real too)
        zero = zero & alpha.imag().eq(0)
    beta = where(zero, re, where(re.ge(0), -norm, norm)).astype(alpha.et)     # real, as LAPACK's
    tau = where(zero, 0, (beta - alpha) / where(zero, 1, beta))
    return beta, tau, where(zero, 1, alpha - beta)


def householder_qr(a: X) -> tuple[X, X]:
    """LAPACK's geqrf of a [..., m, n]: (R above the diagonal, the reflectors' vectors below,
    tau [..., k])."""
    *bt, m, n = a.dims
    k = min(m, n)

    def step(j, s):
        x, tau = s
        ri, ci = iota(a.dims, -2), iota(a.dims, -1)
        rows = iota(bt + [m], -1)
        col = _col(x, j)
        alpha = _at(col, j)
        below = where(rows.gt(j), col, 0)
        beta, t, scale = _larfg(alpha, below)
        v = where(rows.gt(j), below / _last(scale), where(rows.eq(j), full(1, a.et), full(0, a.et)))
        w = (_last(v.conj()) * x).sum(-2)                   # v^H x: [..., n]
        # (geqr2 applies H^H = I - conj(tau) v v^H)
        x = where(ci.gt(j), x - _outer(v * _last(t.conj()), w), x)
        x = where(ci.eq(j) & ri.ge(j), where(ri.eq(j), _last(_last(beta)), _last(v)), x)
        tau = where(iota(tau.dims, -1).eq(j), _last(t), tau)
        return [x, tau]

    x, tau = counted(k, [a, full(0, a.et, bt + [k])], step)
    return x, tau


def householder_product(a: X, tau: X) -> X:
    """LAPACK's orgqr: the first a.dims[-1] columns of H_0 ... H_{k-1} (k = tau's length)."""
    *bt, m, p = a.dims
    k = tau.dims[-1]
    q0 = where(iota(a.dims, -1).eq(iota(a.dims, -2)), full(1, a.et), full(0, a.et))

    def step(i, s):
        q, a, tau = s
        rows = iota(bt + [m], -1)
        j = (k - 1) - i
        v = where(rows.gt(j), _col(a, j), where(rows.eq(j), full(1, a.et), full(0, a.et)))
        w = (_last(v.conj()) * q).sum(-2)                   # v^H q; H = I - tau v v^H
        return [q - _outer(v * _last(_at(tau, j)), w), a, tau]

    return counted(k, [q0, a, tau], step)[0]


def _geqrf(args, cfg, outs):
    return list(householder_qr(args[0]))


def _orgqr(args, cfg, outs):
    return [householder_product(args[0], args[1])]


def _swap(v: X, i: X, j: X) -> X:
    """v [..., n] with elements i (a scalar) and j ([...], one per vector) exchanged."""
    idx = iota(v.dims, -1)
    vi, vj = _slice_at(v, i, -1), _at(v, j)
    return where(idx.eq(i), _last(vj), where(idx.eq(_last(j)), _last(vi), v))


def _swap_columns(x: X, i: X, j: X) -> X:
    """x [..., m, n] with columns i (a scalar) and j ([...], one per matrix) exchanged."""
    ci, jj = iota(x.dims, -1), _last(_last(j))
    xi, xj = _slice_at(x, i, -1), _col(x, j)
    return where(ci.eq(i), _last(xj), where(ci.eq(jj), _last(xi), x))


def _constant(x: X) -> np.ndarray | None:
    """x's value where it is an integer constant (or a broadcast of one), else None."""
    o = defining_op(x.v)
    if o is not None and o.name == "xla.broadcast_in_dim":
        src = _constant(X(o.operands[0]))
        if src is None:
            return None
        keep = list(ir.DenseI64ArrayAttr(o.attributes["broadcast_dimensions"]))
        shape = [src.shape[keep.index(d)] if d in keep else 1 for d in range(x.rank)]
        return np.broadcast_to(src.reshape(shape), x.dims)
    if o is None or o.name != "xla.constant" or not isinstance(o.attributes["value"], ir.DenseIntElementsAttr):
        return None
    a = ir.DenseIntElementsAttr(o.attributes["value"])
    return np.full(x.dims, int(a[0])) if a.is_splat else np.array(a).reshape(x.dims)


def _fixed_first(jpvt: np.ndarray) -> tuple[list[int], int]:
    """dgeqp3's first stage for one matrix: the columns with jpvt != 0 moved to the front, by
    its swaps in column order; (the 1-based column order, the number of fixed columns)."""
    piv, nf = list(range(1, len(jpvt) + 1)), 0
    for j, fixed in enumerate(jpvt):
        if fixed:
            piv[j], piv[nf] = piv[nf], piv[j]
            nf += 1
    return piv, nf


def _geqp3(args, cfg, outs):
    """LAPACK's geqp3 of a [..., m, n] with jpvt [..., n]: QR with column pivoting as dgeqp3 /
    zgeqp3 run it for min(m, n) <= 128 (their unblocked dlaqp2 / zlaqp2; larger matrices take
    LAPACK's blocked form there, whose pivots may differ in near-ties).  The columns with
    jpvt != 0 (a constant: JAX passes zeros) are moved to the front (dgeqp3's swaps, in column
    order) and factored first, without pivoting; then each step takes the free column of the
    largest partial norm (the first, as idamax), and the norms are downdated as dlaqp2 does,
    recomputed where the downdate would lose more than half the digits (tol3z = sqrt(eps)).
    Results: (the packed R and reflectors, 1-based pivots, tau [..., min(m, n)])."""
    a, jpvt = args
    *bt, m, n = a.dims
    k = min(m, n)
    et = a.et
    real = et.component if et.is_complex else et
    tol3z = float(np.sqrt(np.finfo(real.dtype).eps / 2))       # sqrt(dlamch('E'))
    jp = _constant(jpvt)
    if jp is None:
        raise XlaError("'xla.custom_call' geqp3 (as device code) needs jpvt to be a constant (the "
                       "columns to factor first: JAX passes zeros); got a value computed by "
                       f"'{defining_op(jpvt.v).name if defining_op(jpvt.v) else 'a parameter'}'")
    fronts = [_fixed_first(row) for row in jp.reshape(-1, n)]
    piv = X(op("constant", value=np.array([p for p, _ in fronts], np.int32).reshape(bt + [n]))).astype(jpvt.et)
    nf = X(op("constant", value=np.array([f for _, f in fronts], np.int32).reshape(bt)))
    x = a
    if any(f for _, f in fronts):                               # (the columns, gathered)
        src = (piv - 1).astype(S32).reshape(bt + [1, 1, n])
        x = where(iota(bt + [m, n, n], -2).eq(src), a.reshape(bt + [m, n, 1]), 0).sum(-2)

    def norms_past(x, i):                       # ||x[i + 1:, j]|| for each column j: [..., n]
        return where(iota(x.dims, -2).gt(i), x.abs2(), 0).sum(-2).sqrt()

    def step(i, s):
        x, piv, tau, vn1, vn2, nf = s
        ri, ci = iota(x.dims, -2), iota(x.dims, -1)
        rows, cols = iota(bt + [m], -1), iota(bt + [n], -1)
        free = i.to(bt).ge(nf)
        mag = where(cols.ge(i), vn1, -1)
        pv = where(mag.eq(_last(mag.max(-1))), cols, n).min(-1)
        pv = where(pv.ge(n) | ~free, i.to(pv.dims), pv)         # (NaN norms, a fixed column: no swap)
        x = _swap_columns(x, i, pv)
        piv = _swap(piv, i, pv)
        vn1 = where(cols.eq(_last(pv)), _last(_slice_at(vn1, i, -1)), vn1)
        vn2 = where(cols.eq(_last(pv)), _last(_slice_at(vn2, i, -1)), vn2)
        col = _slice_at(x, i, -1)
        below = where(rows.gt(i), col, 0)
        beta, t, scale = _larfg(_slice_at(col, i, -1), below)
        v = where(rows.gt(i), below / _last(scale), where(rows.eq(i), full(1, et), full(0, et)))
        w = (_last(v.conj()) * x).sum(-2)                   # H^H = I - conj(tau) v v^H from the left
        x = where(ci.gt(i), x - _outer(v * _last(t.conj()), w), x)
        x = where(ci.eq(i) & ri.ge(i), where(ri.eq(i), _last(_last(beta)), _last(v)), x)
        tau = where(iota(tau.dims, -1).eq(i), _last(t), tau)
        # dlaqp2's downdate of the partial norms of the columns past i
        exact = norms_past(x, i)
        ok = vn1.ne(0)
        r = _slice_at(x, i, -2).abs() / where(ok, vn1, 1)
        temp = (1 - r * r).maximum(0)
        q = vn1 / where(ok, vn2, 1)
        redo = (temp * q * q).le(tol3z)
        past, fr = cols.gt(i), _last(free)
        upd = past & fr & ok
        vn1 = where(upd, where(redo, exact, vn1 * temp.sqrt()), where(past & ~fr, exact, vn1))
        vn2 = where((upd & redo) | (past & ~fr), exact, vn2)
        return [x, piv, tau, vn1, vn2, nf]

    vn = norms_past(x, full(-1, S32))
    x, piv, tau, *_ = counted(k, [x, piv, full(0, et, bt + [k]), vn, vn, nf], step)
    return [x, piv, tau]


def _gehrd(args, cfg, outs):
    """LAPACK's gehrd of a [..., n, n] with ilo, ihi (the call's `low`, `high`, 1-based):
    Householder reduction of rows and columns ilo..ihi to upper Hessenberg form, as dgehd2 /
    zgehd2 run it (LAPACK's blocked dgehrd is the same reduction): step i takes column i below
    its subdiagonal to zero with H = I - tau v v^H (v[i + 1] = 1), applied from the right to
    rows up to ihi and as H^H from the left to the columns past i.  Results: (the Hessenberg
    matrix with the reflectors' vectors below its subdiagonal, tau [..., n - 1] (zero outside
    ilo..ihi - 1), info [...] = 0)."""
    a = args[0]
    *bt, n, _ = a.dims
    lo, hi = int(cfg.get("low", 1)) - 1, int(cfg.get("high", n)) - 1
    et = a.et

    def step(k, s):
        x, tau = s
        i = k + lo
        ri, ci, rows = iota(a.dims, -2), iota(a.dims, -1), iota(bt + [n], -1)
        col = _slice_at(x, i, -1)
        inside = rows.gt(i + 1) & rows.le(hi)
        below = where(inside, col, 0)
        beta, t, scale = _larfg(_slice_at(col, i + 1, -1), below)
        v = where(inside, below / _last(scale), where(rows.eq(i + 1), full(1, et), full(0, et)))
        xv = (x @ v.reshape(bt + [n, 1])).reshape(bt + [n])
        x = where(ri.le(hi), x - _outer(xv * _last(t), v.conj()), x)            # x H, rows up to ihi
        w = (_last(v.conj()) * x).sum(-2)
        x = where(ci.gt(i), x - _outer(v * _last(t.conj()), w), x)             # H^H x, columns past i
        x = where(ci.eq(i) & ri.gt(i) & ri.le(hi), where(ri.eq(i + 1), _last(_last(beta)), _last(v)), x)
        tau = where(iota(tau.dims, -1).eq(i), _last(t), tau)
        return [x, tau]

    state = [a, full(0, et, bt + [max(n - 1, 0)])]
    x, tau = counted(hi - lo, state, step) if hi > lo else state
    return [x, tau, full(0, S32, bt)]


#: the size a matrix's Schur form is computed at, at least (zero rows and columns added, in a
#: block of their own that no rotation touches).  IREE 3.13 first crashed compiling 1x1 to 3x3
#: complex ones ("getTypeBitWidth" in ConvertBufferOps); since iotas are constant tables and
#: C128 inits planar, each smaller size fails elsewhere (measured, docs/iree-limits.md): at 3,
#: CUDA's complex 2x2 eig ("'vector.transfer_read' op requires valid padding vector elemental
#: type"); at 2, Vulkan's 1x1 and 2x2 eig and Schur forms (a null buffer read in every loop
#: form, real eigvals failing at run time); at 1, the Hessenberg reduction's empty reflectors
_SCHUR_MIN = 4


def _schur_padded(a: X) -> tuple[X, int]:
    """a with zero rows and columns up to _SCHUR_MIN, and its own size."""
    *bt, n, _ = a.dims
    return (a.pad(0, [0] * len(bt) + [_SCHUR_MIN - n] * 2) if n < _SCHUR_MIN else a), n


def _lead(x: X, n: int, core: int) -> X:
    """x's leading n along its last `core` dimensions."""
    return x.slice([0] * x.rank, list(x.dims[:x.rank - core]) + [n] * core)


def _schur_of(a: X) -> tuple[X, X, X, list[X]]:
    """The Schur form of a [..., n, n]: (T, Z, converged [...], the eigenvalues: [w], or [wr, wi]
    of a real matrix), a = Z T Z^H; the Hessenberg form and its Z as ?gehrd and ?orghr make
    them, then lowering/schur.py (a real matrix's form real, its 2x2 blocks in dlanv2's
    standard form)."""
    *bt, n, _ = a.dims
    packed, tau, _ = _gehrd([a], {}, None)
    ri, ci = iota(a.dims, -2), iota(a.dims, -1)
    h = where(ri.gt(ci + 1), full(0, a.et), packed)
    q = householder_product(packed.slice([0] * len(bt) + [1, 0], bt + [n, n - 1]), tau)
    z = where(ri.ge(1) & ci.ge(1), q.pad(0, [0] * (len(bt) + 2), lows=[0] * len(bt) + [1, 1]),
              jacobi.eye_like(a.dims, a.et))
    if a.et.is_complex:
        t, z, ok = schur.complex_schur(h, z)
        return t, z, ok, [jacobi.diag(t)]
    t, z, ok = schur.real_schur(h, z)
    t, z, wr, wi = schur.standardize(t, z)
    return t, z, ok, [wr, wi]


def _vectors_out(v: X, shape) -> X:
    """v as the call's result of `shape`: v, or zeros where the call asked for no vectors."""
    d = list(shape.dims)
    return v if tuple(d) == tuple(v.dims) else full(0, v.et, d)


def _geev(args, cfg, outs):
    """zgeev / dgeev of a [..., n, n]: (w, vl, vr, info), or (wr, wi, vl, vr, info) of a real a
    (its vectors complex, as jaxlib unpacks them).  Eigenvalues are the diagonal (blocks) of the
    Schur form (lowering/schur.py), in the order the QR algorithm leaves them (LAPACK's order is
    its algorithm's too: JAX sorts nothing; a real matrix's pairs are adjacent, wi > 0 first);
    eigenvectors by ztrevc's back substitution on the (complex) triangular form, back-
    transformed and scaled as zgeev / dgeev do.  info = 1 where the iteration did not converge
    or the result has a NaN (JAX then fills the results with NaN)."""
    a, n = _schur_padded(args[0])
    t, z, ok, w = _schur_of(a)
    if a.et.is_complex:
        tc, zc, finish = t, z, lambda v, left: schur.normalize(v)       # noqa: E731
    else:
        wi = w[1]
        tc, zc = schur.complex_form(t, z, wi)
        finish = lambda v, left: schur.real_vectors(v, t, z, wi, left)     # noqa: E731
    w = [_lead(x, n, 1) for x in w]
    res = list(w)
    for key, default, vectors, shape in (("compute_left", "N", schur.left_vectors, outs[len(w)]),
                                         ("compute_right", "V", schur.right_vectors, outs[len(w) + 1])):
        want = _char(cfg, key, default) == "V"
        res.append(_vectors_out(_lead(finish(zc @ vectors(tc), key == "compute_left"), n, 2), shape) if want
                   else full(0, shape.element_type, shape.dims))
    return res + [where(ok, _nan_info(*[(x, 1) for x in w]), full(1, S32, list(ok.dims)))]


def _gees(args, cfg, outs):
    """zgees / dgees of a [..., n, n] with sort N: (T, vs, w, sdim = 0, info), or (T, vs, wr, wi,
    sdim, info) of a real a (T quasi-triangular, its 2x2 blocks in dlanv2's standard form)."""
    a = args[0]
    if _char(cfg, "sort", "N") != "N":
        raise XlaError(f"'xla.custom_call' gees sort must be 'N' (no eigenvalue ordering: a select "
                       f"function cannot be passed); got {_char(cfg, 'sort', 'N')!r}")
    a, n = _schur_padded(a)
    t, z, ok, w = _schur_of(a)
    w = [_lead(x, n, 1) for x in w]
    t, z = _lead(t, n, 2), _lead(z, n, 2)
    info = where(ok, _nan_info(*[(x, 1) for x in w]), full(1, S32, list(ok.dims)))
    return [t, _vectors_out(z, outs[1]), *w, full(0, S32, list(ok.dims)), info]


def _symmetric(a: X, lower: bool) -> X:
    """The symmetric (Hermitian) matrix of a's lower (or upper) triangle; a complex one's
    diagonal real, as LAPACK's heevd assumes it."""
    ri, ci = iota(a.dims, -2), iota(a.dims, -1)
    h = where(ri.ge(ci) if lower else ri.le(ci), a, a.mT.conj())
    return where(ri.eq(ci), h.real().astype(a.et), h) if a.et.is_complex else h


def _syevd(args, cfg, outs):
    v, w = jacobi.eigh(_symmetric(args[0], _char(cfg, "uplo", "L") == "L"))
    return [v, w, _nan_info((w, 1))]


def _eigh(args, cfg, outs):
    parts = cfg.get("text", "").split(",")
    lower = len(parts) != 4 or int(parts[0]) != 0
    v, w = jacobi.eigh(_symmetric(args[0], lower))
    return [v, w]


def svd(a: X) -> tuple[X, X, X]:
    """U [..., m, m], s [..., k] (descending), V [..., n, n] with a = U[:, :k] diag(s) V[:, :k]^H."""
    *bt, m, n = a.dims
    if m < n:
        u, s, v = svd(a.conj().mT)
        return v, s, u
    if m == n:
        return jacobi.svd_square(a)
    if a.et.is_complex and n < min(m, 3):
        # zero columns up to 3 (no rotation mixes them with A's: they stay last, with zero
        # singular values): a complex QR of one or two columns and its Jacobi step failed in
        # IREE 3.13 ("streamable op expected to be in an execution region", docs/iree-limits.md).
        # Re-tried 2026-11-28: CUDA and Vulkan now take 6x2, 2x6 and 4x1, but the CPU's C64
        # ones still fail so
        w = min(m, 3)
        u, s, v = svd(a.pad(0, [0] * len(bt) + [0, w - n]))
        return u, s.slice([0] * s.rank, bt + [n]), v.slice([0] * v.rank, bt + [n, n])
    packed, tau = householder_qr(a)
    r = packed.slice([0] * a.rank, bt + [n, n])
    r = where(iota(r.dims, -2).le(iota(r.dims, -1)), r, 0)
    q = householder_product(packed.pad(0, [0] * len(bt) + [0, m - n]), tau)     # [..., m, m]
    ur, s, v = jacobi.svd_square(r)
    eye = jacobi.eye_like(bt + [m, m], a.et)
    ur = where(iota(eye.dims, -1).ge(n) | iota(eye.dims, -2).ge(n), eye, ur.pad(0, [0] * len(bt) + [m - n, m - n]))
    return q @ ur, s, v


def _svd(args, cfg, outs):
    a = args[0]
    u, s, v = svd(a)
    vt = v.conj().mT
    res = [full(0, a.et, outs[0].dims), s]
    for x, shape in ((u, outs[2]), (vt, outs[3])):
        d = list(shape.dims)
        fits = all(want <= got for want, got in zip(d, x.dims)) and len(d) == x.rank
        res.append(x.slice([0] * x.rank, d) if fits else full(0, a.et, d))
    return res + [_nan_info((s, 1))]


def _gtsv(args, cfg, outs):
    """LAPACK's gtsv of tridiagonal systems (dl, d, du [..., n] in JAX's layout: dl[0] and
    du[n - 1] unused; b [..., n, nrhs]): Gaussian elimination with partial pivoting, a loop
    over the rows as dgtsv / zgtsv run it (a row interchange where |d| < |dl|, |re| + |im| for
    complex ones; zgtsv leaves a row whose subdiagonal is zero as it is), the fill-in of the
    second superdiagonal returned in dl, then the back substitution; a zero pivot stops the
    system's elimination there with info = its row (1-based), its b left as it was then."""
    dl, d, du, b = args
    *bt, n = d.dims
    nb, nrhs = len(bt), b.dims[-1]
    # LAPACK's vectors, length n: sub[i] = dl[i + 1] (below the diagonal in column i), sup = du
    sub = dl.slice([0] * nb + [1], bt + [n]).pad(0, [0] * nb + [1])
    complex_ = d.et.is_complex

    at = lambda v, k: _slice_at(v, k, -1)         # noqa: E731  ([..., n] at k: [...])
    at_row = lambda x, k: _slice_at(x, k, -2)     # noqa: E731  ([..., n, nrhs], row k: [..., nrhs])

    def step(i, s):
        sub, dg, sup, x, info = s
        idx, rows = iota(bt + [n], -1), iota(bt + [n, nrhs], -2)
        j = i + 1
        last = i.eq(n - 2)
        di, d1, li, ui = at(dg, i), at(dg, j), at(sub, i), at(sup, i)
        u1 = at(sup, j)
        bi, b1 = at_row(x, i), at_row(x, j)
        swap = ~_cabs1(di).ge(_cabs1(li))               # (NaN: an interchange, as LAPACK's test)
        zero = ~swap & di.eq(0)
        go = info.eq(0) & ~zero
        if complex_:
            go = go & (swap | li.ne(0))
        fact = where(swap, di / where(li.eq(0), 1, li), li / where(di.eq(0), 1, di))
        keep = last.to(bt) if bt else last
        new_di = where(swap, li, di)
        new_d1 = where(swap, ui - fact * d1, d1 - fact * ui)
        new_li = where(keep, li, where(swap, u1, full(0, d.et)))
        new_ui = where(swap, d1, ui)
        new_u1 = where(swap & ~keep, -fact * u1, u1)
        f2 = _last(fact)
        sw2 = _last(swap)
        new_bi = where(sw2, b1, bi)
        new_b1 = where(sw2, bi - f2 * b1, b1 - f2 * bi)
        g, g2 = _last(go), _last(_last(go))
        dg = where(g & idx.eq(i), _last(new_di), where(g & idx.eq(j), _last(new_d1), dg))
        sub = where(g & idx.eq(i), _last(new_li), sub)
        sup = where(g & idx.eq(i), _last(new_ui), where(g & idx.eq(j), _last(new_u1), sup))
        x = where(g2 & rows.eq(i), _last(new_bi).reshape(bt + [1, nrhs]),
                  where(g2 & rows.eq(j), _last(new_b1).reshape(bt + [1, nrhs]), x))
        info = where(info.eq(0) & zero, (i + 1).to(info.dims), info)
        return [sub, dg, sup, x, info]

    info0 = full(0, S32, bt)
    if n > 1:
        sub, dg, sup, x, info = counted(n - 1, [sub, d, du, b, info0], step)
    else:
        dg, sup, x, info = d, du, b, info0
    info = where(info.eq(0) & at(dg, full(n - 1, S32)).eq(0), full(n, S32, bt), info)

    def back(k, s):
        (y,) = s
        i = (n - 1) - k
        rows = iota(bt + [n, nrhs], -2)
        def nxt(o):                              # y's row i + o, zero past the last
            return where((i + o).lt(n).to(bt + [nrhs]), at_row(y, (i + o).minimum(full(n - 1, S32))),
                         full(0, d.et))
        di, ui, li = at(dg, i), at(sup, i), at(sub, i)
        term = at_row(y, i) - _last(ui) * nxt(1)
        # (row n - 2 has no second superdiagonal: dgtsv leaves its dl as the input's there)
        term = where(i.lt(n - 2).to(bt + [nrhs]), term - _last(li) * nxt(2), term)
        yi = term / _last(di)
        return [where(rows.eq(i), yi.reshape(bt + [1, nrhs]), y)]

    (solved,) = counted(n, [x], back)
    ok = _last(_last(info.eq(0)))
    x = where(ok, solved, x)
    dl_out = X(op("concatenate", [dl.slice([0] * (nb + 1), bt + [1]).v, sub.slice([0] * (nb + 1), bt + [n - 1]).v],
                  dimension=nb))
    du_out = X(op("concatenate", [sup.slice([0] * (nb + 1), bt + [n - 1]).v, du.slice([0] * nb + [n - 1], bt + [n]).v],
                  dimension=nb))
    return [dl_out, dg, du_out, x, info]


def _sytrd(args, cfg, outs):
    """LAPACK's sytrd / hetrd: the symmetric (Hermitian) matrix read from its `uplo` triangle
    reduced to tridiagonal form T = Q^H A Q by Householder reflectors, as dsytd2 / zhetd2 run
    it; the upper form is the lower one of the matrix with its rows and columns reversed."""
    a = args[0]
    if _char(cfg, "uplo", "L") == "L":
        return list(_tridiagonal_lower(a))
    c, d, e, tau, info = _tridiagonal_lower(a.rev([-2, -1]))
    return [c.rev([-2, -1]), d.rev([-1]), e.rev([-1]), tau.rev([-1]), info]


def _tridiagonal_lower(a: X) -> tuple[X, X, X, X, X]:
    """dsytd2 / zhetd2 with uplo L of a [..., n, n] (its strictly upper part left as it is):
    (the matrix with d, e and the reflectors' vectors below the subdiagonal in its lower part,
    d [..., n] and e [..., n - 1] real, tau [..., n - 1], info [...] = 0).  Step i takes column
    i's part below the subdiagonal to zero with H = I - tau v v^H (v[i + 1] = 1) and updates the
    trailing Hermitian matrix: y = tau A v, w = y - tau (y^H v) v / 2, A - v w^H - w v^H."""
    *bt, n, _ = a.dims
    et = a.et
    real = et.component if et.is_complex else et
    ri, ci = iota(a.dims, -2), iota(a.dims, -1)

    def step(i, s):
        m, out, e, tau = s
        ri, ci, rows = iota(a.dims, -2), iota(a.dims, -1), iota(bt + [n], -1)
        col = _slice_at(m, i, -1)                              # column i: [..., n]
        alpha = _slice_at(col, i + 1, -1)
        below = where(rows.gt(i + 1), col, 0)
        beta, t, scale = _larfg(alpha, below)
        v = where(rows.gt(i + 1), below / _last(scale), where(rows.eq(i + 1), full(1, et), full(0, et)))
        y = _last(t) * (m @ v.reshape(bt + [n, 1])).reshape(bt + [n])
        w = y + _last(-0.5 * t * (y.conj() * v).sum(-1)) * v
        e = where(iota(e.dims, -1).eq(i), _last(beta.real()), e)
        tau = where(iota(tau.dims, -1).eq(i), _last(t), tau)
        out = where(ci.eq(i) & ri.gt(i), where(ri.eq(i + 1), _last(_last(beta)), _last(v)), out)
        m = m - _outer(v, w.conj()) - _outer(w, v.conj())
        return [m, out, e, tau]

    state = [_symmetric(a, True), a, full(0, real, bt + [max(n - 1, 0)]), full(0, et, bt + [max(n - 1, 0)])]
    m, out, e, tau = counted(n - 1, state, step) if n > 1 else state
    # d: the diagonal as the steps leave it (step i updates rows and columns past i only)
    d = jacobi.diag(m.real())
    out = where(ri.eq(ci), _last(d).astype(et), out)
    return out, d, e, tau, full(0, S32, bt)


EXPANDERS = {"potrf": _potrf, "trsm": _trsm, "getrf": _getrf, "geqrf": _geqrf, "orgqr": _orgqr, "ungqr": _orgqr,
             "syevd": _syevd, "heevd": _syevd, "gesdd": _svd, "gesvd": _svd, "LuDecomposition": _lu_decomposition,
             "Eigh": _eigh, "gtsv": _gtsv, "sytrd": _sytrd, "hetrd": _sytrd, "geqp3": _geqp3, "gehrd": _gehrd,
             "geev": _geev, "gees": _gees}


# -- the pass -----------------------------------------------------------------------------
def _size(shapes: list[Shape]) -> int:
    """The largest matrix dimension of a call's operands."""
    return max((max(s.dims[-2:]) for s in shapes if s.rank >= 2), default=0)


def _wanted(opts, name: str, shapes) -> bool:
    if opts.linalg == "host":
        return False
    if opts.linalg == "device" or not opts.desc.host_linalg:
        return True
    # (the CPU's choice by size was measured on real matrices: complex ones keep LAPACK there)
    real = not any(leaf.element_type.is_complex for s in shapes for leaf in s.leaves() if leaf.is_array)
    return opts.desc.cpu_kernels and real and _size(shapes) <= LINALG_DEVICE_MAX.get(name, 0)


def _of_empty(leaves: list[Shape]) -> list[X] | None:
    """The results of a routine of empty matrices, which LAPACK computes without work: its
    empty results, and 0 (success) for its integer results of the batch (info).  (The
    iterations of jacobi.eigh sliced an empty matrix: "'xla.slice' limit_indices must be <= the
    operand's dimensions", JAX's testEigh of a 0x0 matrix.)  None when a result of another kind
    has elements: the routine itself then makes them."""
    if not all(0 in leaf.dims or leaf.element_type.is_integer for leaf in leaves):
        return None
    return [full(0, leaf.element_type, leaf.dims) for leaf in leaves]


def expand(module: ir.Module) -> None:
    """Replace every custom call the options say (see the module's docstring)."""
    opts = registry.options()
    calls = []

    def visit(o):
        o = o.operation if hasattr(o, "operation") else o
        if o.name == "xla.custom_call":
            calls.append(o)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    d = lookup("xla.custom_call")
    for call in calls:
        args = d.unpack(call)
        shapes = [Shape.from_mlir(v.type) for v in args["args"]]
        # (a custom call of another target may take tuples and tokens: their leaves' types)
        name = routine_of(args["target_name"], {leaf.element_type.name for s in shapes for leaf in s.leaves()
                                                if leaf.is_array})
        if name is None or not _wanted(opts, name, shapes):
            continue
        require_floating(args["target_name"], shapes[0].element_type)
        result = Shape.from_mlir(call.results[0].type)
        leaves = result.leaves()
        with ir.InsertionPoint(call), call.location:
            got = _of_empty(leaves) if any(s.is_array and 0 in s.dims[-2:] for s in shapes) else None
            got = got or EXPANDERS[name]([X(v) for v in args["args"]], _config(args["opaque"] or ""), leaves)
            outs = [g.astype(s.element_type) for g, s in zip(got, leaves)]
            for g, s in zip(outs, leaves):
                if g.dims != tuple(s.dims):
                    raise AssertionError(f"{name}: expanded {g.dims}, want {s.dims}")
            value = tuple_of(outs) if result.is_tuple else outs[0].v
        call.results[0].replace_all_uses_with(value)
        call.erase()


