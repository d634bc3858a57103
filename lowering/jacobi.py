"""Jacobi methods in `xla` ops, for targets without a host LAPACK (lowering/linalg_expand.py):
the symmetric eigenproblem (cyclic Jacobi) and the SVD of a square matrix (two-sided Jacobi,
Kogbetliantz), batched over leading dimensions.

Both run the parallel (round-robin) ordering: the n' - 1 steps of a sweep each rotate n' / 2
disjoint index pairs at once (n' = n rounded up to even; an odd matrix gets a zero row and
column that no rotation touches), so a step is a few batched matrix products with a matrix of
rotations J, not n' / 2 scalar updates.  The pairs are carried in the loop's state.  A While runs steps until the off-diagonal part's
Frobenius norm is at most eps * ||A||_F (checked every step) or MAX_SWEEPS sweeps are done.

Results are what LAPACK's syevd / gesdd give up to the signs of vectors: eigenvalues
ascending, singular values descending and non-negative, orthonormal vectors.
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.attrs import DotDimensionNumbers
from xlair.dialect.types import S32

from .emit import X, full, iota, op, where, while_loop

#: sweeps a Jacobi iteration stops after, converged or not (it converges quadratically:
#: 5-10 sweeps for the matrices of the tests)
MAX_SWEEPS = 30


def _contract(x: X, m: X, xd: int, md: int) -> X:
    """dot_general of x and m over x's dimension xd and m's md, no batch dimensions: x's free
    dimensions then m's."""
    dn = DotDimensionNumbers((xd % x.rank,), (md % m.rank,), (), ())
    return X(op("dot_general", x, m, dimension_numbers=dn))


def diag(a: X) -> X:
    """The diagonals of a batch of square matrices."""
    return a.diagonal()


def eye_like(dims, et) -> X:
    return where(iota(dims, -1).eq(iota(dims, -2)), full(1, et), full(0, et))


class _Step:
    """One step's pairs: one-hot matrices Pp, Pq [n/2, n] (of the element type) of its pairs
    (top_i, bot_i), p the smaller index of each."""

    def __init__(self, top: X, bot: X, idx: X, et):
        h, n = top.dims[0], idx.dims[0]
        self.idx = idx

        def onehot(i):
            return where(idx.reshape([1, n]).eq(i.reshape([h, 1])), full(1, et), full(0, et))
        self.p, self.q = onehot(top.minimum(bot)), onehot(top.maximum(bot))

    @staticmethod
    def first(n: int) -> tuple[X, X]:
        """The pairs (top, bot) of a sweep's first step (the round-robin ordering: player 0
        stays, the others move one place each step)."""
        return iota([n // 2], 0), (n - 1) - iota([n // 2], 0)

    @staticmethod
    def next(top: X, bot: X) -> tuple[X, X]:
        """The pairs of the next step.  They are carried in the loop's state rather than read
        from a constant table: a one-hot matrix from a table sliced at the step (a dispatch
        with no operand but the counter) left IREE 3.13's stream partitioning unable to place
        its dispatch on Vulkan ("streamable op expected to be in an execution region")."""
        h = top.dims[0]
        if h == 1:
            return top, bot
        cat = lambda *xs: X(op("concatenate", [x.v for x in xs], dimension=0))     # noqa: E731
        return (cat(top.slice([0], [1]), bot.slice([0], [1]), top.slice([1], [h - 1])),
                cat(bot.slice([1], [h]), top.slice([h - 1], [h])))

    def entry(self, a: X, rows: X, cols: X) -> X:
        """a[..., rows_i, cols_i] for each pair i: [..., n/2]."""
        ac = _contract(a, cols, -1, -1)                    # [..., n, n/2]: a's columns cols_i
        return (ac * rows.mT).sum(-2)

    def gather(self, v: X, sel: X) -> X:
        """v[..., sel_i] for a batch of vectors [..., n]: [..., n/2]."""
        return _contract(v, sel, -1, -1)

    def _at_pq(self, x: X) -> X:
        """[..., n, n] holding x [..., n/2] at (p, q) of each pair."""
        return _contract(x.reshape(list(x.dims) + [1]) * self.p, self.q, -2, 0)

    def rotation(self, c: X, s: X, e: X | None = None) -> X:
        """J [..., n, n]: J[p,p] = J[q,q] = c, J[p,q] = s, J[q,p] = -s for each pair (c, s
        [..., n/2]), the identity elsewhere.  With a phase e (complex, |e| = 1): J[q,q] =
        c conj(e), J[q,p] = -s conj(e), the rotation of the pair after its off-diagonal
        element was made real (diag(1, conj(e)) then the real rotation)."""
        if e is None:
            return self.embed(c, s, -s, c)
        return self.embed(c, s, -s * e.conj(), c * e.conj())

    def embed(self, pp: X, pq: X, qp: X, qq: X) -> X:
        """[..., n, n] holding each pair's 2x2 block [[pp, pq], [qp, qq]] ([..., n/2] each) in
        its rows and columns p, q (the pairs cover every index)."""
        dv = _contract(pp, self.p, -1, 0) + _contract(qq, self.q, -1, 0)     # [..., n]
        n = dv.dims[-1]
        d = where(self.idx.reshape([n, 1]).eq(self.idx.reshape([1, n])), dv.reshape(list(dv.dims) + [1]), 0)
        return d + self._at_pq(pq) + self._at_pq(qp).mT


def symmetric_rotation(app: X, apq: X, aqq: X) -> tuple[X, X]:
    """(c, s) with [[c, s], [-s, c]]^T [[app, apq], [apq, aqq]] [[c, s], [-s, c]] diagonal
    (Golub and Van Loan's sym.schur2); (1, 0) where apq = 0."""
    zero = apq.eq(0)
    safe = where(zero, 1, apq)
    tau = (aqq - app) / (2 * safe)
    sgn = where(tau.ge(0), full(1, tau.et), full(-1, tau.et))
    t = sgn / (tau.abs() + (1 + tau * tau).sqrt())
    c = 1 / (1 + t * t).sqrt()
    return where(zero, 1, c), where(zero, 0, t * c)


def unit(z: X) -> X:
    """The phase z / |z| of complex values, 1 where z = 0 (a pair's off-diagonal element, a
    2x2 block's determinant), made of its real and imaginary parts (no complex constant)."""
    r = z.abs()
    zero = r.eq(0)
    safe = where(zero, 1, r)
    return X(op("complex", where(zero, 1, z.real() / safe), where(zero, 0, z.imag() / safe)))


def polar2(b11: X, b12: X, b21: X, b22: X) -> tuple[X, X, X, X]:
    """The unitary polar factor Q of complex 2x2 blocks B = [[b11, b12], [b21, b22]] (each
    [..., k]): Q^H B is Hermitian and positive semidefinite.  Q = (B + e adj(B)^H) / (s1 + s2),
    e the phase of det B: with B = U diag(s1, s2) V^H, e adj(B)^H = U diag(s2, s1) V^H, so the
    sum is (s1 + s2) U V^H, and s1 + s2 is its Frobenius norm over sqrt 2.  Any unit e keeps Q
    unitary (the two diagonal terms s1 + c s2, s2 + c s1 have one modulus), so a singular B
    (e taken as 1) or an inexact phase leaves Q^H B near Hermitian, never a non-unitary step.
    The identity where B = 0."""
    et = b11.et
    e = unit(b11 * b22 - b12 * b21)
    q = [b11 + e * b22.conj(), b12 - e * b21.conj(), b21 - e * b12.conj(), b22 + e * b11.conj()]
    norm = ((q[0].abs2() + q[1].abs2() + q[2].abs2() + q[3].abs2()) / 2).sqrt()
    zero = norm.eq(0)
    scale = where(zero, 1, norm).astype(et)
    one = where(zero, full(1, norm.et), full(0, norm.et)).astype(et)     # (B = 0: each q is 0; Q = I)
    return q[0] / scale + one, q[1] / scale, q[2] / scale, q[3] / scale + one


def _pad_even(a: X) -> X:
    """a padded with zero rows and columns to an even size, and a complex one to 4 at least:
    with one pair a step, the complex steps' one-element tensors (a pair's entries, its
    rotation) were miscompiled by IREE 3.13 (2x2 C128: two one-element sums given one buffer,
    docs/iree-limits.md).  No rotation mixes a padded index with another: its entries are zero."""
    n = a.dims[-1]
    n2 = max(n + n % 2, 4 if a.et.is_complex else 0)
    return a if n2 == n else a.pad(0, [0] * (a.rank - 2) + [n2 - n, n2 - n])


def _off_and_norm(a: X) -> tuple[X, X]:
    """Squared Frobenius norms of the off-diagonal part and of the whole (the off-diagonal
    part summed itself: total - diagonal would cancel away what the stopping test looks at)."""
    n = a.dims[-1]
    idx = iota([n], 0)
    sq = a.abs2()
    off = where(idx.reshape([n, 1]).eq(idx.reshape([1, n])), 0, sq).sum([-2, -1])
    return off, sq.sum([-2, -1])


def _iterate(a: X, mats: list, update) -> list:
    """Steps `update(_Step, a, mats) -> (a, mats)` until a is diagonal to eps * ||a||_F."""
    n = a.dims[-1]
    eps = float(np.finfo(a.shape.dtype).eps)
    _, norm2 = _off_and_norm(a)
    limit = norm2 * (eps * eps)
    max_steps = MAX_SWEEPS * max(n - 1, 1)

    def cond(s):
        off, _ = _off_and_norm(s[4])
        big = off.gt(s[1])
        return s[0].lt(max_steps) & (big.any(list(range(big.rank))) if big.rank else big)

    # (a While's regions see only its state: the limit is carried)
    def body(s):
        m, ms = update(_Step(s[2], s[3], iota([n], 0), a.et), s[4], s[5:])
        return [s[0] + 1, s[1], *_Step.next(s[2], s[3]), m] + list(ms)

    out = while_loop([full(0, S32), limit, *_Step.first(n), a] + mats, cond, body)
    return out[4:]


def _sort_perm(keys: X, descending: bool) -> X:
    """The permutation matrix P [..., n, n] (of keys' type) with (keys @ P) sorted, ties in
    index order: P[r, j] = 1 where r's rank is j."""
    n = keys.dims[-1]
    kr = keys.reshape(list(keys.dims) + [1])            # [..., n, 1]: key r
    kc = keys.reshape(list(keys.dims[:-1]) + [1, n])    # [..., 1, n]: key i
    before = kc.gt(kr) if descending else kc.lt(kr)
    dims = list(keys.dims) + [n]
    tie = kc.eq(kr) & iota(dims, -1).lt(iota(dims, -2))
    rank = where(before | tie, full(1, S32), full(0, S32)).sum(-1)     # [..., n]
    return where(rank.reshape(list(keys.dims) + [1]).eq(iota(dims, -1)), full(1, keys.et), full(0, keys.et))


def _apply_perm(v: X, p: X) -> X:
    """v [..., n] permuted by P (a select, so a NaN stays where it is)."""
    return where(p.eq(1), v.reshape(list(v.dims) + [1]), 0).sum(-2)


def eigh(a: X) -> tuple[X, X]:
    """Eigenvectors V and eigenvalues w (ascending, real) of symmetric or Hermitian matrices
    a [..., n, n].  A complex pair's off-diagonal element is first made real by a phase (its
    modulus over itself), then rotated as a real one: J^H a J."""
    n = a.dims[-1]
    ap = _pad_even(a)
    n2 = ap.dims[-1]
    hermitian = a.et.is_complex

    def update(st, m, mats):
        d = diag(m)
        app, aqq = st.gather(d, st.p).real(), st.gather(d, st.q).real()
        apq = st.entry(m, st.p, st.q)
        if hermitian:
            c, s = symmetric_rotation(app, apq.abs(), aqq)
            j = st.rotation(c.astype(a.et), s.astype(a.et), unit(apq))
        else:
            j = st.rotation(*symmetric_rotation(app, apq, aqq))
        return j.conj().mT @ (m @ j), [mats[0] @ j]

    m, v = _iterate(ap, [eye_like(ap.dims, ap.et)], update)
    w = diag(m).real()
    if n2 != n:
        w = w.slice([0] * w.rank, list(w.dims[:-1]) + [n])
        v = v.slice([0] * v.rank, list(v.dims[:-2]) + [n, n])
    p = _sort_perm(w, descending=False)
    return v @ p.astype(v.et), _apply_perm(w, p)


def svd_square(a: X) -> tuple[X, X, X]:
    """U, s (descending, non-negative, real), V of square matrices a [..., n, n]: a = U diag(s)
    V^H.  Each step takes every pair's 2x2 block B to a symmetric (Hermitian) one from the left
    and diagonalises that from both sides: a real B by the rotation that makes it symmetric, a
    complex B by its unitary polar factor Q (polar2: Q^H B Hermitian), whose off-diagonal
    element is then made real by its phase and rotated as in eigh."""
    n = a.dims[-1]
    ap = _pad_even(a)
    n2 = ap.dims[-1]
    et = a.et

    def update(st, m, mats):
        d = diag(m)
        app, aqq = st.gather(d, st.p), st.gather(d, st.q)
        apq, aqp = st.entry(m, st.p, st.q), st.entry(m, st.q, st.p)
        if et.is_complex:
            q11, q12, q21, q22 = polar2(app, apq, aqp, aqq)
            h12 = q11.conj() * apq + q21.conj() * aqq          # (Q^H B)[p, q]
            c2, s2 = symmetric_rotation((q11.conj() * app + q21.conj() * aqp).real(), h12.abs(),
                                        (q12.conj() * apq + q22.conj() * aqq).real())
            right = st.rotation(c2.astype(et), s2.astype(et), unit(h12))
            left = st.embed(q11, q12, q21, q22) @ right
        else:
            # rotate [[app, apq], [aqp, aqq]] symmetric from the left ...
            x, y = app + aqq, apq - aqp
            r = (x * x + y * y).sqrt()
            flat = r.eq(0)
            cs, sn = where(flat, 1, x / where(flat, 1, r)), where(flat, 0, y / where(flat, 1, r))
            # ... then diagonalise it from both sides
            c2, s2 = symmetric_rotation(cs * app - sn * aqp, cs * apq - sn * aqq, sn * apq + cs * aqq)
            left = st.rotation(cs * c2 - sn * s2, sn * c2 + cs * s2)
            right = st.rotation(c2, s2)
        return left.conj().mT @ (m @ right), [mats[0] @ left, mats[1] @ right]

    eye = eye_like(ap.dims, ap.et)
    m, u, v = _iterate(ap, [eye, eye], update)
    d = diag(m)
    if n2 != n:
        d = d.slice([0] * d.rank, list(d.dims[:-1]) + [n])
        u = u.slice([0] * u.rank, list(u.dims[:-2]) + [n, n])
        v = v.slice([0] * v.rank, list(v.dims[:-2]) + [n, n])
    # each diagonal element's phase (its sign, when real) moved into U's column
    s = d.abs()
    phase = unit(d) if et.is_complex else where(d.lt(0), full(-1, et), full(1, et))
    u = u * phase.reshape(list(d.dims[:-1]) + [1, n])
    perm = _sort_perm(s, descending=True)
    p = perm.astype(et)
    return u @ p, _apply_perm(s, perm), v @ p
