"""The nonsymmetric eigenproblem in `xla` ops, for targets without a host LAPACK
(lowering/linalg_expand.py's geev and gees of complex matrices), batched over leading
dimensions.

complex_schur: the Schur form T = Z^H H Z of an upper Hessenberg matrix (given with the unitary
Z that made it), by the shifted QR algorithm as zlahqr runs it: a While whose trip finds each
matrix's active block (the last unreduced diagonal block: a subdiagonal element is taken as zero
where it is at most eps (|h_ii| + |h_i+1,i+1|)), takes the Wilkinson shift of the block's
trailing 2x2 (an exceptional shift, h_ii + 3/4 |h_i,i-1|, after 10 and 20 trips without a
deflation), and chases the bulge through the block with Givens rotations (a counted loop over
the columns; a matrix whose block does not cover a column rotates by the identity there).
The rotations apply to whole rows and columns (zlahqr's wantt and wantz), so T and Z are the
full Schur form, as LAPACK's.

eigenvectors: the right eigenvectors of an upper triangular T (ztrevc's back substitution, all
eigenvalues at once, a zero divisor replaced by smin = max(eps |t_kk|, tiny)); left ones are the
right ones of the reversed conjugate transpose.  `normalize` scales each vector as zgeev does:
unit 2-norm, its largest component real.
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.types import PRED, S32

from . import jacobi
from .emit import X, counted, full, iota, where, while_loop
from .emit import cabs1 as _cabs1, last as _last, slice_at as _slice_at

#: trips of the QR iteration per row, as LAPACK's ITMAX = 30 max(10, n)
TRIPS_PER_ROW = 30


def _entry(a: X, i: X, j: X) -> X:
    """a[..., i, j] for per-matrix indices i, j [...]: [...]."""
    hit = iota(a.dims, -2).eq(_last(_last(i))) & iota(a.dims, -1).eq(_last(_last(j)))
    return where(hit, a, 0).sum([-2, -1])


def _givens(x: X, y: X) -> tuple[X, X]:
    """(c real, s) with [[c, s], [-conj(s), c]] [x, y] = [r, 0]."""
    ax = x.abs()
    r = (x.abs2() + y.abs2()).sqrt()
    zero_r, zero_x = r.eq(0), ax.eq(0)
    c = where(zero_r | zero_x, 0, ax / where(zero_r, 1, r))
    phase = x / where(zero_x, 1, ax).astype(x.et)
    s = where(zero_x, full(1, x.et), phase * y.conj() / where(zero_r, 1, r).astype(x.et))
    c = where(zero_r, 1, c)
    s = where(zero_r, full(0, x.et), s)
    return c, s


def _rotate(t: X, z: X, k: X, c: X, s: X) -> tuple[X, X]:
    """G = [[c, s], [-conj(s), c]] on rows k, k + 1 of t from the left, G^H on columns k, k + 1
    of t and z from the right (c, s [...], one per matrix)."""
    c, s = _last(c).astype(t.et), _last(s)                      # [..., 1]
    ri = iota(t.dims, -2)
    rk, rk1 = _slice_at(t, k, -2), _slice_at(t, k + 1, -2)      # [..., n]
    as_row = lambda v: v.reshape(list(v.dims[:-1]) + [1, v.dims[-1]])     # noqa: E731
    t = where(ri.eq(k), as_row(c * rk + s * rk1), where(ri.eq(k + 1), as_row(c * rk1 - s.conj() * rk), t))

    def right(m):
        mi = iota(m.dims, -1)
        ck, ck1 = _slice_at(m, k, -1), _slice_at(m, k + 1, -1)
        return where(mi.eq(k), _last(ck * c + ck1 * s.conj()), where(mi.eq(k + 1), _last(ck1 * c - ck * s), m))
    return right(t), right(z)


def complex_schur(h: X, z: X) -> tuple[X, X, X]:
    """The Schur form of the upper Hessenberg h [..., n, n] (complex): (T, Z z, converged [...])
    with h = (Z) T (Z)^H, T upper triangular."""
    *bt, n, _ = h.dims
    eps = float(np.finfo(h.et.component.dtype).eps / 2)
    if n == 1:
        return h, z, full(True, PRED, bt)

    def subdiag(t):                              # t[i + 1, i], i = 0 .. n - 2: [..., n - 1]
        ri, ci = iota(t.dims, -2), iota(t.dims, -1)
        return where(ri.eq(ci + 1), t, 0).sum(-2).slice([0] * (t.rank - 1), bt + [n - 1])

    def cond(s):
        t, _, trips, _, _ = s
        return subdiag(t).ne(0).any(list(range(len(bt) + 1))) & trips.lt(TRIPS_PER_ROW * max(n, 10))

    def body(s):
        t, zz, trips, last_hi, stall = s
        ri, ci = iota(t.dims, -2), iota(t.dims, -1)
        d = jacobi.diag(t)
        sub = subdiag(t)
        small = _cabs1(sub).le(eps * (_cabs1(d.slice([0] * d.rank, bt + [n - 1]))
                                      + _cabs1(d.slice([0] * (d.rank - 1) + [1], bt + [n])))) | sub.eq(0)
        t = where(ri.eq(ci + 1) & _pad_last(small, n).reshape(bt + [1, n]), full(0, t.et), t)
        idx = iota(bt + [n - 1], -1)
        # the active block: rows lo .. hi, hi the last row with a nonzero subdiagonal (-1: done)
        hi = where(~small, idx + 1, -1).max(-1)
        active = hi.ge(0)
        lo = where(small & idx.lt(_last(hi)), idx + 1, 0).max(-1)
        stall = where(hi.eq(last_hi), stall + 1, full(0, S32, bt))
        him = (hi - 1).maximum(full(0, S32, bt))
        hi0 = hi.maximum(full(0, S32, bt))
        a, b = _entry(t, him, him), _entry(t, him, hi0)
        c, dd = _entry(t, hi0, him), _entry(t, hi0, hi0)
        delta = (a - dd) * 0.5
        root = (delta * delta + b * c).sqrt()
        den = where(_cabs1(delta + root).ge(_cabs1(delta - root)), delta + root, delta - root)
        mu = dd - where(den.eq(0), full(0, t.et), b * c / where(den.eq(0), full(1, t.et), den))
        exceptional = stall.gt(0) & (stall % 10).eq(0)
        mu = where(exceptional, dd + (0.75 * _cabs1(c)).astype(t.et), mu)

        def chase(k, s):
            t, zz = s
            kb = k.to(bt)
            first = kb.eq(lo)
            on = active & kb.ge(lo) & kb.lt(hi)
            km = (k - 1).maximum(full(0, S32))
            rk, rk1 = _slice_at(t, k, -2), _slice_at(t, k + 1, -2)
            x_b, y_b = _slice_at(rk, km, -1), _slice_at(rk1, km, -1)
            x_f, y_f = _slice_at(rk, k, -1) - mu, _slice_at(rk1, k, -1)
            cc, ss = _givens(where(first, x_f, x_b), where(first, y_f, y_b))
            cc = where(on, cc, 1)
            ss = where(on, ss, full(0, t.et))
            t, zz = _rotate(t, zz, k, cc, ss)
            # (the rotation leaves the bulge t[k + 1, k - 1] at rounding level: zero, as LAPACK's)
            kill = _last(_last(on & ~first)) & iota(t.dims, -2).eq(k + 1) & iota(t.dims, -1).eq(k - 1)
            t = where(kill, full(0, t.et), t)
            return [t, zz]

        t, zz = counted(n - 1, [t, zz], chase) if n > 2 else chase(full(0, S32), [t, zz])
        return [t, zz, trips + 1, hi, stall]

    t, zz, _, _, _ = while_loop([h, z, full(0, S32), full(-1, S32, bt), full(0, S32, bt)], cond, body)
    converged = ~subdiag(t).ne(0).any(-1)
    ri, ci = iota(t.dims, -2), iota(t.dims, -1)
    return where(ri.gt(ci), full(0, t.et), t), zz, converged


def _pad_last(x: X, n: int) -> X:
    """x [..., n - 1] padded with one False at the end: [..., n]."""
    return x.pad(False, [0] * (x.rank - 1) + [n - x.dims[-1]])


def right_vectors(t: X) -> X:
    """The right eigenvectors of the upper triangular t [..., n, n] (complex): X upper
    triangular, X[k, k] = 1, t X = X diag(t)."""
    *bt, n, _ = t.dims
    real = t.et.component
    eps, tiny = float(np.finfo(real.dtype).eps / 2), float(np.finfo(real.dtype).tiny)
    w = jacobi.diag(t)                                          # [..., n]
    x0 = jacobi.eye_like(t.dims, t.et)

    def step(s, st):
        x, t, w = st
        i = (n - 1) - s
        cols = iota(list(t.dims[:-1]), -1)
        row = _slice_at(t, i, -2)                                  # t[i, :]: [..., n]
        row = where(cols.gt(i), row, full(0, t.et))
        acc = (row.reshape(bt + [1, n]) @ x).reshape(bt + [n])     # sum_j t[i, j] x[j, k]
        tii = _slice_at(_slice_at(t, i, -2), i, -1)
        den = _last(tii) - w
        smin = (eps * _cabs1(w)).maximum(tiny)
        den = where(_cabs1(den).lt(smin), smin.astype(t.et), den)
        val = -acc / den
        xi = iota(x.dims, -2)
        x = where(xi.eq(i) & iota(x.dims, -1).gt(i), val.reshape(bt + [1, n]), x)
        return [x, t, w]

    x, _, _ = counted(n, [x0, t, w], step)
    return x


def left_vectors(t: X) -> X:
    """The left eigenvectors of the upper triangular t: Y with Y^H t = diag(t) Y^H."""
    return right_vectors(t.conj().mT.rev([-2, -1])).rev([-2, -1])


def normalize(v: X) -> X:
    """Each column of v scaled as zgeev scales its eigenvectors: unit 2-norm, then its largest
    component (the first of the largest |v_j|^2) made real."""
    *bt, n, m = v.dims
    mag = v.abs2()
    nrm = mag.sum(-2).sqrt()
    v = v / nrm.reshape(bt + [1, m]).astype(v.et)
    mag = v.abs2()
    rows = iota(v.dims, -2)
    best = mag.max(-2)
    kmax = where(mag.eq(best.reshape(bt + [1, m])), rows, n).min(-2)
    at_k = rows.eq(kmax.reshape(bt + [1, m]))
    vk = where(at_k, v, 0).sum(-2)
    avk = vk.abs()
    phase = vk.conj() / where(avk.eq(0), 1, avk).astype(v.et)
    phase = where(avk.eq(0), full(1, v.et), phase)
    v = v * phase.reshape(bt + [1, m])
    return where(at_k, v.real().astype(v.et), v)

