"""The nonsymmetric eigenproblem in `xla` ops, for targets without a host LAPACK
(lowering/linalg_expand.py's geev and gees), batched over leading dimensions.

complex_schur: the Schur form T = Z^H H Z of a complex upper Hessenberg matrix (given with the
unitary Z that made it), by the shifted QR algorithm as zlahqr runs it: a While whose trip finds
each matrix's active block (the last unreduced diagonal block: a subdiagonal element is taken as
zero where it is at most eps (|h_ii| + |h_i+1,i+1|)), takes the Wilkinson shift of the block's
trailing 2x2 (an exceptional shift, h_ii + 3/4 |h_i,i-1|, after 10 and 20 trips without a
deflation), and chases the bulge through the block with Givens rotations (a counted loop over
the columns; a matrix whose block does not cover a column rotates by the identity there).
The rotations apply to whole rows and columns (zlahqr's wantt and wantz), so T and Z are the
full Schur form, as LAPACK's.

real_schur and standardize: a real matrix's real Schur form, by dlahqr's double-shift QR (blocks
of 3 rows or more iterate; 3-element Householder reflectors chase the bulge), then each 2x2
block in dlanv2's standard form.  complex_form makes the complex triangular form of it, so that
one back substitution serves both.

right_vectors / left_vectors: the eigenvectors of an upper triangular T (ztrevc's back
substitution, all eigenvalues at once, a zero divisor replaced by smin = max(eps |t_kk|, tiny));
left ones are the right ones of the reversed conjugate transpose.  normalize scales them as
zgeev does (unit 2-norm, the largest component real); real_vectors as dgeev does.
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.types import C64, C128, F64, PRED, S32

from . import jacobi
from .emit import X, counted, full, iota, op, where, while_loop
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

    def cond(s):
        t, _, trips, _, _ = s
        return t.diagonal(-1).ne(0).any(list(range(len(bt) + 1))) & trips.lt(TRIPS_PER_ROW * max(n, 10))

    def body(s):
        t, zz, trips, last_hi, stall = s
        ri, ci = iota(t.dims, -2), iota(t.dims, -1)
        d = jacobi.diag(t)
        sub = t.diagonal(-1)
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
    converged = ~t.diagonal(-1).ne(0).any(-1)
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
    x0 = jacobi.eye_like(t.dims, real).astype(t.et)

    def step(s, st):
        x, t, w = st
        i = (n - 1) - s
        cols = iota(list(t.dims[:-1]), -1)
        row = _slice_at(t, i, -2)                                        # t[i, :]: [..., n]
        row = row * cols.gt(i).astype(real).astype(t.et)
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



# -- real matrices: LAPACK's double-shift QR (dlahqr) and the standard 2x2 blocks (dlanv2) -----
def _sgn(x: X) -> X:
    """Fortran's SIGN(1, x): 1 where x >= 0, else -1."""
    return where(x.ge(0), full(1, x.et), full(-1, x.et))


def _rows3(m: X, k: X, v1: X, v2: X, tau: X, three: X) -> X:
    """(I - tau v v^T) on rows k, k + 1, k + 2 of m from the left, v = (1, v1, v2) (row k + 2
    only where `three`; v1, v2, tau [...])."""
    n = m.dims[-2]
    ri = iota(m.dims, -2)
    k2 = (k + 2).minimum(full(n - 1, S32))
    r0, r1, r2 = _slice_at(m, k, -2), _slice_at(m, k + 1, -2), _slice_at(m, k2, -2)
    v1, v2, tau = _last(v1), _last(where(three, v2, 0)), _last(tau)
    w = tau * (r0 + v1 * r1 + v2 * r2)
    row = lambda v: v.reshape(list(v.dims[:-1]) + [1, v.dims[-1]])     # noqa: E731
    return where(ri.eq(k), row(r0 - w), where(ri.eq(k + 1), row(r1 - v1 * w),
                                              where(ri.eq(k + 2), row(r2 - v2 * w), m)))


def _cols3(m: X, k: X, v1: X, v2: X, tau: X, three: X) -> X:
    """m (I - tau v v^T) on columns k, k + 1, k + 2."""
    return _rows3(m.mT, k, v1, v2, tau, three).mT


def _rot_rows(m: X, i: X, cs: X, sn: X, on: X) -> X:
    """LAPACK's drot of rows i, i + 1 of m (x' = cs x + sn y, y' = cs y - sn x), where `on`."""
    ri = iota(m.dims, -2)
    x, y = _slice_at(m, i, -2), _slice_at(m, i + 1, -2)
    cs, sn = _last(where(on, cs, 1)), _last(where(on, sn, 0))
    row = lambda v: v.reshape(list(v.dims[:-1]) + [1, v.dims[-1]])     # noqa: E731
    return where(ri.eq(i), row(cs * x + sn * y), where(ri.eq(i + 1), row(cs * y - sn * x), m))


def real_schur(h: X, z: X) -> tuple[X, X, X]:
    """The real Schur form of the upper Hessenberg h [..., n, n] (real, n >= 3) by the double-shift
    QR algorithm as dlahqr runs it: (T quasi-triangular with 1x1 and 2x2 diagonal blocks, not yet
    in standard form, Z z, converged [...])."""
    *bt, n, _ = h.dims
    eps = float(np.finfo(h.et.dtype).eps / 2)
    nb = len(bt)

    def blocks(t):
        """(small [..., n - 1], lo, hi [...]: the last block of 3 rows or more, hi = -1: none)."""
        d = jacobi.diag(t)
        sub = t.diagonal(-1)
        small = sub.abs().le(eps * (d.slice([0] * d.rank, bt + [n - 1]).abs()
                                    + d.slice([0] * nb + [1], bt + [n]).abs())) | sub.eq(0)
        idx = iota(bt + [n], -1)
        cut = small.pad(True, [0] * nb + [0], lows=[0] * nb + [1])        # cut[i]: row i starts a block
        jj, ii = iota(bt + [n, n], -1), iota(bt + [n, n], -2)
        start = where(jj.le(ii) & cut.reshape(bt + [1, n]), jj, 0).max(-1)      # each row's block start
        end = small.pad(True, [0] * nb + [1])                              # end[i]: row i ends a block
        big = end & (idx - start).ge(2)
        hi = where(big, idx, -1).max(-1)
        lo = where(idx.eq(_last(hi)), start, 0).max(-1)
        return small, lo, hi

    def cond(s):
        t, _, trips, _, _ = s
        left = blocks(t)[2].ge(0)
        return (left.any(list(range(nb))) if nb else left) & trips.lt(TRIPS_PER_ROW * max(n, 10))

    def body(s):
        t, zz, trips, last_hi, stall = s
        ri, ci = iota(t.dims, -2), iota(t.dims, -1)
        small, lo, hi = blocks(t)
        t = where(ri.eq(ci + 1) & small.pad(False, [0] * nb + [1]).reshape(bt + [1, n]), full(0, t.et), t)
        active = hi.ge(0)
        stall = where(hi.eq(last_hi), stall + 1, full(0, S32, bt))
        h0 = hi.maximum(full(2, S32, bt))
        at = lambda i, j: _entry(t, i, j)                                 # noqa: E731
        h11, h12, h21, h22 = at(h0 - 1, h0 - 1), at(h0 - 1, h0), at(h0, h0 - 1), at(h0, h0)
        # the shifts: the trailing 2x2's eigenvalues (both the one nearer h22 where they are real),
        # or dlahqr's exceptional ones after 10 and 20 trips without a deflation
        ex = stall.gt(0) & (stall % 10).eq(0)
        sx = at(h0, h0 - 1).abs() + at(h0 - 1, h0 - 2).abs()
        h11 = where(ex, 0.75 * sx + h22, h11)
        h12 = where(ex, -0.4375 * sx, h12)
        h21 = where(ex, sx, h21)
        h22 = where(ex, h11, h22)
        tr = (h11 + h22) * 0.5
        det = (h11 - tr) * (h22 - tr) - h12 * h21
        root = det.abs().sqrt()
        near = where((tr + root - h22).abs().le((tr - root - h22).abs()), tr + root, tr - root)
        s_ = where(det.ge(0), 2 * tr, 2 * near)
        p_ = where(det.ge(0), tr * tr + det, near * near)
        lo0 = lo.minimum(full(n - 3, S32, bt))
        a, b, c = at(lo0, lo0), at(lo0, lo0 + 1), at(lo0 + 1, lo0)
        d, e = at(lo0 + 1, lo0 + 1), at(lo0 + 2, lo0 + 1)
        x0 = a * a + b * c - s_ * a + p_
        y0 = c * (a + d - s_)
        z0 = c * e

        def chase(k, s):
            t, zz = s
            kb = k.to(bt) if bt else k
            first = kb.eq(lo)
            on = active & kb.ge(lo) & kb.lt(hi)
            three = (kb + 2).le(hi)
            km = (k - 1).maximum(full(0, S32))
            k2 = (k + 2).minimum(full(n - 1, S32))
            col = _slice_at(t, km, -1)                                       # t[:, k - 1]
            x = where(first, x0, _slice_at(col, k, -1))
            y = where(first, y0, _slice_at(col, k + 1, -1))
            zv = where(three, where(first, z0, _slice_at(col, k2, -1)), 0)
            xn2 = y * y + zv * zv
            norm = (x * x + xn2).sqrt()
            none = xn2.eq(0) | ~on
            beta = where(none, x, where(x.ge(0), -norm, norm))
            tau = where(none, 0, (beta - x) / where(none, 1, beta))
            scale = where(none, 1, x - beta)
            v1, v2 = y / scale, zv / scale
            t = _cols3(_rows3(t, k, v1, v2, tau, three), k, v1, v2, tau, three)
            zz = _cols3(zz, k, v1, v2, tau, three)
            # (the bulge's column below k: exactly zero, as dlahqr sets it)
            clean = _last(_last(on & ~first)) & ci.eq(k - 1) & (ri.eq(k + 1) | ri.eq(k + 2))
            return [where(clean, full(0, t.et), t), zz]

        t, zz = counted(n - 1, [t, zz], chase)
        return [t, zz, trips + 1, hi, stall]

    t, zz, _, _, _ = while_loop([h, z, full(0, S32), full(-1, S32, bt), full(0, S32, bt)], cond, body)
    small, _, hi = blocks(t)
    ri, ci = iota(t.dims, -2), iota(t.dims, -1)
    # (the last trip's negligible subdiagonal elements, zero: the 2x2 blocks are then exact)
    t = where(ri.eq(ci + 1) & small.pad(False, [0] * nb + [1]).reshape(bt + [1, n]), full(0, t.et), t)
    return t, zz, ~hi.ge(0)


def _lanv2(a: X, b: X, c: X, d: X, eps: float):
    """LAPACK's dlanv2: the standard form of the real 2x2 [[a, b], [c, d]] (upper triangular
    where its eigenvalues are real, else a == d and b c < 0) and its rotation (cs, sn)."""
    one, zero = full(1, a.et), full(0, a.et)
    c0 = c.eq(0)
    b0 = ~c0 & b.eq(0)
    std = ~c0 & ~b0 & (a - d).eq(0) & _sgn(b).ne(_sgn(c))
    temp = a - d
    p = temp * 0.5
    bcmax = b.abs().maximum(c.abs())
    bcmis = b.abs().minimum(c.abs()) * _sgn(b) * _sgn(c)
    scale = p.abs().maximum(bcmax)
    scale = where(scale.eq(0), one, scale)
    zz = p / scale * p + bcmax / scale * bcmis
    real = zz.ge(4 * eps)
    # real eigenvalues
    zr = p + _sgn(p) * scale.sqrt() * zz.maximum(zero).sqrt()
    zr = where(zr.eq(0), one, zr)
    ar, dr = d + zr, d - bcmax / zr * bcmis
    taur = (c * c + zr * zr).sqrt()
    csr, snr = zr / taur, c / taur
    br = b - c
    # complex (or nearly equal real) eigenvalues
    sigma = b + c
    tau = (sigma * sigma + temp * temp).sqrt()
    tau = where(tau.eq(0), one, tau)
    cs = (0.5 * (1 + sigma.abs() / tau)).sqrt()
    sn = -(p / (tau * cs)) * _sgn(sigma)
    aa, bb = a * cs + b * sn, -a * sn + b * cs
    cc, dd = c * cs + d * sn, -c * sn + d * cs
    b2, c2 = bb * cs + dd * sn, -aa * sn + cc * cs
    mid = ((aa * cs + cc * sn) + (-bb * sn + dd * cs)) * 0.5
    tri = c2.ne(0) & b2.ne(0) & _sgn(b2).eq(_sgn(c2))
    sab, sac = b2.abs().sqrt(), c2.abs().sqrt()
    pp = _sgn(c2) * sab * sac
    tau3 = 1 / where(tri, (b2 + c2).abs(), one).sqrt()
    cs1, sn1 = sab * tau3, sac * tau3
    flip = c2.ne(0) & b2.eq(0)
    a_c = where(tri, mid + pp, mid)
    d_c = where(tri, mid - pp, mid)
    b_c = where(tri, b2 - c2, where(flip, -c2, b2))
    c_c = where(tri | flip, zero, c2)
    cs_c = where(tri, cs * cs1 - sn * sn1, where(flip, -sn, cs))
    sn_c = where(tri, cs * sn1 + sn * cs1, where(flip, cs, sn))
    # the cases
    pick = lambda v_c0, v_b0, v_real, v_cplx: where(c0 | std, v_c0, where(b0, v_b0, where(real, v_real, v_cplx)))   # noqa: E731
    return (pick(a, d, ar, a_c), pick(b, -c, br, b_c), pick(c, zero, zero, c_c), pick(d, a, dr, d_c),
            pick(one, zero, csr, cs_c), pick(zero, one, snr, sn_c))


def standardize(t: X, z: X) -> tuple[X, X, X, X]:
    """The real Schur form's 2x2 blocks in dlanv2's standard form (rotations applied to T's rows
    and columns and to Z's columns): (T, Z, wr, wi), a complex pair's eigenvalue with wi > 0
    first, as LAPACK's."""
    *bt, n, _ = t.dims
    eps = float(np.finfo(t.et.dtype).eps / 2)

    def step(i, s):
        t, z = s
        a, b = _slice_at(_slice_at(t, i, -2), i, -1), _slice_at(_slice_at(t, i, -2), i + 1, -1)
        c, d = _slice_at(_slice_at(t, i + 1, -2), i, -1), _slice_at(_slice_at(t, i + 1, -2), i + 1, -1)
        on = c.ne(0)
        a2, b2, c2, d2, cs, sn = _lanv2(a, b, c, d, eps)
        t = _rot_rows(t, i, cs, sn, on)
        t = _rot_rows(t.mT, i, cs, sn, on).mT
        z = _rot_rows(z.mT, i, cs, sn, on).mT
        ri, ci = iota(t.dims, -2), iota(t.dims, -1)
        for r, cc, v in ((0, 0, a2), (0, 1, b2), (1, 0, c2), (1, 1, d2)):
            t = where(_last(_last(on)) & ri.eq(i + r) & ci.eq(i + cc), _last(_last(v)), t)
        return [t, z]

    t, z = counted(n - 1, [t, z], step)
    ri, ci = iota(t.dims, -2), iota(t.dims, -1)
    t = where(ri.gt(ci + 1), full(0, t.et), t)
    wr = jacobi.diag(t)
    sub = _next_to_diagonal(t, -1)                 # [..., n]: t[i + 1, i], 0 at n - 1
    sup = _next_to_diagonal(t, 1)                 # t[i, i + 1]
    om = sup.abs().sqrt() * sub.abs().sqrt()
    nb = len(bt)
    om_prev = om.pad(0, [0] * nb + [0], lows=[0] * nb + [1]).slice([0] * (nb + 1), bt + [n])
    wi = where(sub.ne(0), om, where(om_prev.ne(0), -om_prev, 0))
    return t, z, wr, wi


def _next_to_diagonal(t: X, k: int) -> X:
    """t[i + 1, i] (k = -1) or t[i, i + 1] (k = 1): [..., n], 0 at n - 1."""
    return t.diagonal(k).pad(0, [0] * (t.rank - 2) + [1])


def complex_form(t: X, z: X, wi: X) -> tuple[X, X]:
    """The real Schur form (standard 2x2 blocks [[a, b], [c, a]], b c < 0) made complex upper
    triangular: (U^H T U, Z U), U unitary with a block [[b, i w], [i w, b]] / sqrt(b^2 + w^2)
    at each complex pair (w = wi > 0: its first column is the eigenvector of a + i w)."""
    *bt, n, _ = t.dims
    nb = len(bt)
    ct = C128 if t.et == F64 else C64
    ri, ci = iota(t.dims, -2), iota(t.dims, -1)
    sup = _next_to_diagonal(t, 1)                 # t[i, i + 1]
    start = wi.gt(0)                                         # a pair's first row
    second = start.pad(False, [0] * nb + [0], lows=[0] * nb + [1]).slice([0] * (nb + 1), bt + [n])
    bpair = where(start, sup, 0)
    bpair = where(second, bpair.pad(0, [0] * nb + [0], lows=[0] * nb + [1]).slice([0] * (nb + 1), bt + [n]), bpair)
    wpair = where(start, wi, where(second, -wi, 0))
    nrm = (bpair * bpair + wpair * wpair).sqrt()
    pair = start | second
    nrm = where(pair, nrm, 1)
    diag_u = where(pair, bpair / nrm, 1).astype(ct)          # the block's diagonal: b / r
    off_u = X(op("complex", full(0, t.et, bt + [n]), where(start, wpair / nrm, 0)))   # i w / r at (i, i + 1), (i + 1, i)
    u = where(ri.eq(ci), diag_u.reshape(bt + [n, 1]), full(0, ct, t.dims))
    u = where(ri.eq(ci - 1), off_u.reshape(bt + [n, 1]), u)                                  # (i, i + 1)
    u = where(ri.eq(ci + 1), off_u.reshape(bt + [1, n]), u)                                  # (i + 1, i)
    tc = u.conj().mT @ t.astype(ct) @ u
    tc = where(ri.gt(ci), full(0, ct, t.dims), tc)
    return tc, z.astype(ct) @ u


def real_vectors(v: X, t: X, z: X, wi: X, left: bool) -> X:
    """Eigenvectors of a real matrix (columns of the complex form's back-transformed vectors;
    t, z its real Schur form in standard form) scaled as dgeev scales them: a real eigenvalue's
    vector real, of unit norm; a pair's first vector as dtrevc starts it (in the Schur basis, its
    first row of the pair 1, or -wi / t[i + 1, i] where |t[i, i + 1]| < |t[i + 1, i]|; a left
    one wi / t[i, i + 1] or 1), then of unit norm and rotated by dlartg so that its largest
    component is real, of the sign of its real part; the second the first's conjugate."""
    *bt, n, m = v.dims
    nb = len(bt)
    et = v.et
    ri, ci = iota(t.dims, -2), iota(t.dims, -1)
    b = _next_to_diagonal(t, 1)                     # t[i, i + 1]: [..., n]
    c = _next_to_diagonal(t, -1)                     # t[i + 1, i]
    case1 = b.abs().ge(c.abs())
    one = full(1, wi.et, list(wi.dims))
    if left:
        start = where(case1, wi / where(b.eq(0), one, b), one)
    else:
        start = where(case1, one, -wi / where(c.eq(0), one, c))
    first = wi.gt(0)
    # the vectors' own first row of the pair, in the Schur basis: (Z^T v)[k, k]
    vt = z.mT.astype(et) @ v
    own = jacobi.diag(vt)
    own = where(first & own.ne(0), own, full(1, et, list(own.dims)))
    v = where(_last(first).reshape(bt + [1, m]), v * (start.astype(et) / own).reshape(bt + [1, m]), v)
    realv = _last(wi.eq(0)).reshape(bt + [1, m])
    v = where(realv, v.real().astype(et), v)
    v = v / v.abs2().sum(-2).sqrt().reshape(bt + [1, m]).astype(et)
    # dlartg on the pair's largest component (the first of the largest |v_j|^2)
    mag = v.abs2()
    rows = iota(v.dims, -2)
    kmax = where(mag.eq(mag.max(-2).reshape(bt + [1, m])), rows, n).min(-2)
    at_k = rows.eq(kmax.reshape(bt + [1, m]))
    vk = where(at_k, v, 0).sum(-2)
    avk = vk.abs()
    phase = (vk.conj() / where(avk.eq(0), 1, avk).astype(et)) * _sgn(vk.real()).astype(et)
    phase = where(avk.eq(0) | ~first, full(1, et, list(phase.dims)), phase)
    v = v * phase.reshape(bt + [1, m])
    v = where(at_k & _last(first).reshape(bt + [1, m]), v.real().astype(et), v)
    prev = v.pad(0, [0] * (nb + 2), lows=[0] * nb + [0, 1]).slice([0] * (nb + 2), bt + [n, m])   # column j - 1
    return where(_last(wi.lt(0)).reshape(bt + [1, m]), prev.conj(), v)
