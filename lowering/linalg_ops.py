"""Lowering of BatchNorm*, Cholesky, TriangularSolve and Fft (mirrors dialect/ops/linalg_ops.py).

IREE lowers none of these itself, so each is expanded here into linalg:

* BatchNorm*: linalg.generic reductions over every dimension but the feature one, then one
  element-wise generic (two-pass mean and variance; f16/bf16 accumulate in f32).
* Cholesky: left-looking blocked algorithm on the lower triangle (upper: through the conjugate
  transpose).  Block column k: the panel A[k:, k] is updated by one matmul with the columns
  already factored, then factored unblocked by an scf.for over its columns (one linalg.generic
  per column).  Complex products are four real matmuls (linalg.matmul / batch_matmul).
* TriangularSolve: every form is brought to `L X = B` with L lower triangular (transposes,
  conjugation and a reversal of rows and columns for upper factors); the diagonal blocks of L are
  inverted all at once by an scf.for of row steps, then a block forward substitution of two
  matmuls per block row.
* Fft: planar (re, im) arrays; each transformed axis is a mixed-radix decimation-in-time FFT:
  one transpose into digit-reversed order, then one linalg.generic per radix stage (a
  contraction of the radix against a constant twiddle table).  Lengths with a prime factor
  > 13 use one direct DFT stage (n <= 64) or Bluestein's algorithm with a power-of-two FFT.
"""
from __future__ import annotations

import numpy as np

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.attrs import FftType, Transpose
from xlair.dialect.ir import arith, complex_d, ir, linalg, math, scf, tensor
from xlair.dialect.types import BF16, F16, F32, F64, Shape

from .registry import (options, barrier, float_const, affine_map, complex_of, complex_parts, extract_slice, generic, index, insert_slice,
                       loop_index, lowers, reshape, tuple_of, value_of)
from .elementwise import convert_tensor, narrow_float
from .shape import dense_attr

CF = arith.CmpFPredicate
CI = arith.CmpIPredicate


# ----------------------------------------------------------------------------------------
# small helpers on builtin tensors
# ----------------------------------------------------------------------------------------
def _rt(v) -> ir.RankedTensorType:
    return ir.RankedTensorType(v.type)


def _dims(v) -> list[int]:
    return list(_rt(v).shape)


def _etype(v) -> ir.Type:
    return _rt(v).element_type


def _tensor_type(dims, et) -> ir.Type:
    return ir.RankedTensorType.get(list(dims), et)


def _empty(dims, et) -> ir.Value:
    return tensor.empty(list(dims), et)


def _zeros(dims, et) -> ir.Value:
    return value_of(linalg.fill(_zero(et), outs=[_empty(dims, et)]))


def _is_complex(t: ir.Type) -> bool:
    return t.typeid == ir.ComplexType.static_typeid


def _component(t: ir.Type) -> ir.Type:
    return ir.ComplexType(t).element_type if _is_complex(t) else t


def _zero(t: ir.Type) -> ir.Value:
    if _is_complex(t):
        c = float_const(_component(t), 0.0)
        return complex_d.create_(t, c, c)
    return float_const(t, 0.0)


def _ident(n: int) -> ir.AffineMap:
    return affine_map(n, list(range(n)))


def _map(n: int, exprs) -> ir.AffineMap:
    return affine_map(n, exprs)


def _ew(inputs, maps, out_dims, out_et, body, n_out=1, out_ets=None) -> list[ir.Value]:
    """A parallel linalg.generic over `out_dims` (identity output maps)."""
    n = len(out_dims)
    ets = out_ets or [out_et] * n_out
    outs = [_empty(out_dims, t) for t in ets]
    return generic(list(inputs), list(maps), outs, [_ident(n)] * len(outs), ["parallel"] * n, body)


def _idx(d: int) -> ir.Value:
    return loop_index(d)


# complex-or-real scalar arithmetic written in arith (no complex.mul/div: their lowering adds
# inf/nan recovery code that the numerics here do not need)
def _re(x):
    return complex_d.re(x) if _is_complex(x.type) else x


def _im(x):
    return complex_d.im(x)


def _mk(t, re, im):
    return complex_d.create_(t, re, im)


def _conj(x):
    if not _is_complex(x.type):
        return x
    return _mk(x.type, _re(x), arith.negf(_im(x)))


def _mul(a, b):
    if not _is_complex(a.type):
        return arith.mulf(a, b)
    ar, ai, br, bi = _re(a), _im(a), _re(b), _im(b)
    return _mk(a.type, arith.subf(arith.mulf(ar, br), arith.mulf(ai, bi)),
               arith.addf(arith.mulf(ar, bi), arith.mulf(ai, br)))


def _sub(a, b):
    if not _is_complex(a.type):
        return arith.subf(a, b)
    return _mk(a.type, arith.subf(_re(a), _re(b)), arith.subf(_im(a), _im(b)))


def _div_real(a, r):
    if not _is_complex(a.type):
        return arith.divf(a, r)
    return _mk(a.type, arith.divf(_re(a), r), arith.divf(_im(a), r))


def _from_real(t, r):
    if not _is_complex(t):
        return r
    return _mk(t, r, float_const(_component(t), 0.0))


def _join(re, im) -> ir.Value:
    if options().desc.complex_join_barrier:
        # IREE 3.13's LLVMGPU thread tiling of a complex-typed op fused after a reduction
        # reads the element bit width of complex<f32> and crashes (docs/iree-limits.md)
        re, im = barrier(re, im)
    return complex_of(re, im)


def _dyn_slice(src, offsets, sizes, result_dims) -> ir.Value:
    """tensor.extract_slice with some offsets given as index values; result_dims drop unit dims."""
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    vals = [o for o in offsets if not isinstance(o, int)]
    static = [o if isinstance(o, int) else dyn for o in offsets]
    t = _tensor_type(result_dims, _etype(src))
    return tensor.ExtractSliceOp(t, src, vals, [], [], static, list(sizes), [1] * len(sizes)).result


def _matmul(a, b, acc=None) -> ir.Value:
    """acc + a x b for [B, M, K] x [B, K, N] (acc [B, M, N], zero when None), with linalg.matmul /
    batch_matmul from a zero-filled init and an element-wise consumer adding acc: IREE's CPU
    backend packs a non-fill init inside the matmul's dispatch and then exceeds its 32 KB stack
    limit for panel-shaped matmuls.  Complex products are one contraction generic
    accumulating planar (re, im) results: IREE's data tiling miscompiles complex values built
    from the results of real matmuls (it propagates the matmul encoding onto the complex
    tensor), and IREE cannot fill a complex<f64> tensor (no i128 splat)."""
    et = _etype(a)
    B, M, K = _dims(a)
    N = _dims(b)[2]
    if _is_complex(et):
        ft = _component(et)
        omap = _map(4, [0, 1, 2])
        inits = complex_parts(acc) if acc is not None else (_zeros([B, M, N], ft), _zeros([B, M, N], ft))

        def body(x, y, acc_r, acc_i):
            p = _mul(x, y)
            return [arith.addf(acc_r, _re(p)), arith.addf(acc_i, _im(p))]
        re, im = generic([a, b], [_map(4, [0, 1, 3]), _map(4, [0, 3, 2])], list(inits), [omap, omap],
                         ["parallel"] * 3 + ["reduction"], body)
        return _join(re, im)
    r = value_of(linalg.batch_matmul(a, b, outs=[_zeros([B, M, N], et)]))
    if acc is None:
        return r
    return _ew([acc, r], [_ident(3)] * 2, [B, M, N], et, lambda x, y, _o: arith.addf(x, y))[0]


def _neg(x) -> ir.Value:
    d = _dims(x)
    et = _etype(x)
    neg = (lambda v: _mk(et, arith.negf(_re(v)), arith.negf(_im(v)))) if _is_complex(et) else arith.negf
    return _ew([x], [_ident(len(d))], d, et, lambda v, _o: neg(v))[0]


def _adjoint(x) -> ir.Value:
    """Conjugate transpose of the two minor dimensions of a [B, M, N] tensor."""
    B, M, N = _dims(x)
    return _ew([x], [_map(3, [0, 2, 1])], [B, N, M], _etype(x), lambda v, _o: _conj(v))[0]


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= int(x)
    return p


def _for(lb: int, ub: int, inits, body):
    """scf.for over [lb, ub) with tensor iter_args; body(iv, *args) -> new args."""
    loop = scf.ForOp(index(lb), index(ub), index(1), list(inits))
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(list(body(loop.induction_variable, *loop.inner_iter_args)))
    return list(loop.results)


# ----------------------------------------------------------------------------------------
# BatchNorm*
# ----------------------------------------------------------------------------------------
def _bn_types(et):
    """(element type, accumulation type) as builtin types."""
    acc = F32 if et in (F16, BF16) else et
    return et.builtin_type(), acc.builtin_type()


def _ext(x, at):
    return x if x.type == at else arith.extf(at, x)


def _feature_sums(xs, fns, dims, f, at) -> list[ir.Value]:
    """Sums over every dimension but f of fns[k](*element scalars), one [C] tensor per fn."""
    n = len(dims)
    its = ["parallel" if d == f else "reduction" for d in range(n)]
    outs = [_zeros([dims[f]], at) for _ in fns]
    maps = [_ident(n)] * len(xs)
    nx = len(xs)

    def body(*args):
        vals, accs = args[:nx], args[nx:]
        return [arith.addf(acc, fn(*vals)) for acc, fn in zip(accs, fns)]
    return generic(list(xs), maps, outs, [_map(n, [f])] * len(fns), its, body)


def _per_feature(vs, fn, at) -> ir.Value:
    """An element-wise generic over [C] vectors."""
    (c,) = _dims(vs[0])
    return _ew(vs, [_ident(1)] * len(vs), [c], at, lambda *a: fn(*a[:-1]))[0]


def _bn_count(dims, f) -> float:
    return float(_prod(dims) // dims[f]) if dims[f] else 0.0


@lowers("xla.batch_norm_training")
def lower_batch_norm_training(lw):
    s = lw.shape("operand")
    f, eps = lw.attr("feature_index"), lw.attr("epsilon")
    et, at = _bn_types(s.element_type)
    x, scale, offset = lw.value("operand"), lw.value("scale"), lw.value("offset")
    dims, n = list(s.dims), s.rank
    cnt = _bn_count(dims, f)
    (total,) = _feature_sums([x], [lambda v: _ext(v, at)], dims, f, at)
    mean = _per_feature([total], lambda t: arith.divf(t, float_const(at, cnt)), at)
    its = ["parallel" if d == f else "reduction" for d in range(n)]
    (sq,) = generic([x, mean], [_ident(n), _map(n, [f])], [_zeros([dims[f]], at)], [_map(n, [f])], its,
                    lambda v, m, acc: arith.addf(acc, arith.mulf(arith.subf(_ext(v, at), m),
                                                                   arith.subf(_ext(v, at), m))))
    var = _per_feature([sq], lambda t: arith.divf(t, float_const(at, cnt)), at)
    fm = _map(n, [f])

    def norm(v, g, b, m, va, _o):
        xc = arith.subf(_ext(v, at), m)
        sd = math.sqrt(arith.addf(va, float_const(at, eps)))
        return narrow_float(arith.addf(arith.divf(arith.mulf(_ext(g, at), xc), sd), _ext(b, at)), et)
    y = _ew([x, scale, offset, mean, var], [_ident(n), fm, fm, fm, fm], dims, et, norm)[0]
    outs = [_per_feature([v], lambda t: narrow_float(t, et), et) for v in (mean, var)]
    return tuple_of(lw, [y] + outs)


@lowers("xla.batch_norm_inference")
def lower_batch_norm_inference(lw):
    s = lw.shape("operand")
    f, eps = lw.attr("feature_index"), lw.attr("epsilon")
    et, at = _bn_types(s.element_type)
    vals = [lw.value(p) for p in ("operand", "scale", "offset", "mean", "variance")]
    n = s.rank
    fm = _map(n, [f])

    def norm(v, g, b, m, va, _o):
        xc = arith.subf(_ext(v, at), _ext(m, at))
        sd = math.sqrt(arith.addf(_ext(va, at), float_const(at, eps)))
        return narrow_float(arith.addf(arith.divf(arith.mulf(_ext(g, at), xc), sd), _ext(b, at)), et)
    return _ew(vals, [_ident(n), fm, fm, fm, fm], list(s.dims), et, norm)[0]


@lowers("xla.batch_norm_grad")
def lower_batch_norm_grad(lw):
    s = lw.shape("operand")
    f, eps = lw.attr("feature_index"), lw.attr("epsilon")
    et, at = _bn_types(s.element_type)
    x, scale, mean, var, dy = (lw.value(p) for p in ("operand", "scale", "mean", "variance", "grad_output"))
    dims, n = list(s.dims), s.rank
    cnt = _bn_count(dims, f)
    fm = _map(n, [f])
    its = ["parallel" if d == f else "reduction" for d in range(n)]
    sum_dy, sum_dyxc = generic(
        [x, dy, mean], [_ident(n), _ident(n), fm], [_zeros([dims[f]], at), _zeros([dims[f]], at)],
        [fm, fm], its,
        lambda v, g, m, a1, a2: [arith.addf(a1, _ext(g, at)),
                                 arith.addf(a2, arith.mulf(_ext(g, at), arith.subf(_ext(v, at), _ext(m, at))))])
    eps_c = lambda: float_const(at, eps)  # noqa: E731

    def grad(v, g, m, va, gm, sdy, sdx, _o):
        ve = arith.addf(_ext(va, at), eps_c())
        c = arith.divf(sdx, arith.mulf(float_const(at, cnt), ve))
        mean_dy = arith.divf(sdy, float_const(at, cnt))
        xc = arith.subf(_ext(v, at), _ext(m, at))
        inner = arith.subf(arith.subf(_ext(g, at), mean_dy), arith.mulf(c, xc))
        return narrow_float(arith.mulf(arith.divf(_ext(gm, at), math.sqrt(ve)), inner), et)
    dx = _ew([x, dy, mean, var, scale, sum_dy, sum_dyxc], [_ident(n), _ident(n)] + [fm] * 5, dims, et, grad)[0]
    dscale = _ew([sum_dyxc, var], [_ident(1)] * 2, [dims[f]], et,
                 lambda t, va, _o: narrow_float(arith.divf(t, math.sqrt(arith.addf(_ext(va, at), eps_c()))), et))[0]
    doffset = _per_feature([sum_dy], lambda t: narrow_float(t, et), et)
    return tuple_of(lw, [dx, dscale, doffset])


# ----------------------------------------------------------------------------------------
# Cholesky
# ----------------------------------------------------------------------------------------
CHOLESKY_BLOCK = 64


def _lower_triangle_of(x, lower: bool) -> ir.Value:
    """[B, n, n]: the Hermitian matrix's lower triangle read from the triangle the spec names
    (the other triangle set to zero)."""
    B, n, _ = _dims(x)
    et = _etype(x)
    src = _map(3, [0, 1, 2] if lower else [0, 2, 1])

    def body(v, _o):
        keep = arith.cmpi(CI.uge, _idx(1), _idx(2))
        v = v if lower else _conj(v)
        return arith.select(keep, v, _zero(et))
    return _ew([x], [src], [B, n, n], et, body)[0]


def _panel_factor(p) -> ir.Value:
    """Unblocked right-looking Cholesky of a panel [B, m, w] (m >= w) whose top w x w block is
    the diagonal block: column j is scaled by 1/sqrt(pivot) and the panel's columns to its right
    are updated, one linalg.generic per column."""
    B, m, w = _dims(p)
    et = _etype(p)

    def step(j, cur):
        col = _dyn_slice(cur, [0, 0, j], [B, m, 1], [B, m])
        top = _dyn_slice(cur, [0, 0, j], [B, w, 1], [B, w])
        piv = _dyn_slice(cur, [0, j, j], [B, 1, 1], [B])

        def body(v, ci, cc, pv, _o):
            i, c = _idx(1), _idx(2)
            d = _re(pv)
            sd = math.sqrt(d)
            on_col = arith.cmpi(CI.eq, c, j)
            scaled = arith.select(arith.cmpi(CI.eq, i, j), _from_real(et, sd), _div_real(v, sd))
            col_v = arith.select(arith.cmpi(CI.uge, i, j), scaled, v)
            upd = _sub(v, _div_real(_mul(ci, _conj(cc)), d))
            trailing = arith.andi(arith.cmpi(CI.ugt, c, j), arith.cmpi(CI.uge, i, c))
            upper = arith.cmpi(CI.ult, i, c)
            return arith.select(upper, _zero(et), arith.select(on_col, col_v, arith.select(trailing, upd, v)))
        out = _ew([cur, col, top, piv], [_ident(3), _map(3, [0, 1]), _map(3, [0, 2]), _map(3, [0])],
                  [B, m, w], et, body)[0]
        return [out]
    return _for(0, w, [p], step)[0]


def cholesky_lower(a, block: int = CHOLESKY_BLOCK) -> ir.Value:
    """Lower Cholesky factor of [B, n, n] holding the lower triangle (upper one zero).

    Left-looking, block columns unrolled (static shapes: an scf.for over blocks with dynamic
    offsets trips IREE's stream partitioning): block column k0 is updated by one matmul with
    the columns already factored, then factored by an scf.for of column steps."""
    B, n, _ = _dims(a)
    L = a
    for k0 in range(0, n, block):
        kb = min(block, n - k0)
        m = n - k0
        panel = extract_slice(L, [0, k0, k0], [B, m, kb])
        if k0 > 0:
            left = extract_slice(L, [0, k0, 0], [B, m, k0])
            top = extract_slice(L, [0, k0, 0], [B, kb, k0])
            # entries above the diagonal block's diagonal change too; the panel steps zero them
            panel = _matmul(_neg(left), _adjoint(top), acc=panel)
        panel = _panel_factor(panel)
        L = insert_slice(panel, L, [0, k0, k0])
    return L


@lowers("xla.cholesky")
def lower_cholesky(lw):
    s = lw.shape("a")
    lower = lw.attr("lower")
    n = s.dims[-1]
    B = _prod(s.dims[:-2])
    if s.size == 0:
        return _empty(list(s.dims), s.element_type.builtin_type())
    x = reshape(lw.value("a"), [B, n, n])
    L = cholesky_lower(_lower_triangle_of(x, lower))
    if not lower:
        L = _adjoint(L)
    return reshape(L, list(s.dims))


# ----------------------------------------------------------------------------------------
# TriangularSolve
# ----------------------------------------------------------------------------------------
TRSOLVE_BLOCK = 64


def _gather(x, out_dims, index_fn, value_fn=lambda v: v) -> ir.Value:
    """out[p] = value_fn(x[index_fn(p)]) by tensor.extract (IREE's CPU codegen rejects indexing
    maps that reverse the innermost dimension, so reversals read through tensor.extract)."""
    n = len(out_dims)

    def body(_o):
        return value_fn(tensor.extract(x, index_fn([_idx(d) for d in range(n)])))
    return _ew([], [], out_dims, _etype(x), body)[0]


def _rev(i, size: int):
    return arith.subi(index(size - 1), i)


def _canonical_factor(a, lower, unit, transpose, conj, rev, et) -> ir.Value:
    """M[b, i, j] (lower triangular) = f(A) read from A's `lower` triangle, where f transposes
    and/or conjugates, and rev reverses rows and columns."""
    B, m, _ = _dims(a)

    def at(p):
        b, i, j = p
        if rev:
            i, j = _rev(i, m), _rev(j, m)
        return [b, j, i] if transpose else [b, i, j]

    def value(v):
        i, j = _idx(1), _idx(2)
        v = _conj(v) if conj else v
        if unit:
            v = arith.select(arith.cmpi(CI.eq, i, j), _from_real(et, float_const(_component(et), 1.0)), v)
        return arith.select(arith.cmpi(CI.uge, i, j), v, _zero(et))
    return _gather(a, [B, m, m], at, value)


def _invert_diagonal_blocks(D) -> ir.Value:
    """Inverses of lower-triangular blocks D [B, q, nb, nb]: forward substitution of the
    identity, one generic per row step (all blocks and batches at once)."""
    B, q, nb, _ = _dims(D)
    et = _etype(D)
    one = lambda: _from_real(et, float_const(_component(et), 1.0))  # noqa: E731
    X0 = _ew([], [], [B, q, nb, nb], et,
             lambda _o: arith.select(arith.cmpi(CI.eq, _idx(2), _idx(3)), one(), _zero(et)))[0]

    def step(j, X):
        row = _dyn_slice(X, [0, 0, j, 0], [B, q, 1, nb], [B, q, nb])
        col = _dyn_slice(D, [0, 0, 0, j], [B, q, nb, 1], [B, q, nb])
        piv = _dyn_slice(D, [0, 0, j, j], [B, q, 1, 1], [B, q])

        def body(x, r, c, p, _o):
            i = _idx(2)
            xj = _div(r, p)
            below = _sub(x, _mul(c, xj))
            return arith.select(arith.cmpi(CI.eq, i, j), xj, arith.select(arith.cmpi(CI.ugt, i, j), below, x))
        out = _ew([X, row, col, piv], [_ident(4), _map(4, [0, 1, 3]), _map(4, [0, 1, 2]), _map(4, [0, 1])],
                  [B, q, nb, nb], et, body)[0]
        return [out]
    return _for(0, nb, [X0], step)[0]


def _div(a, b):
    """a / b (complex b divided through its conjugate; no inf/nan recovery)."""
    if not _is_complex(a.type):
        return arith.divf(a, b)
    br, bi = _re(b), _im(b)
    den = arith.addf(arith.mulf(br, br), arith.mulf(bi, bi))
    return _div_real(_mul(a, _conj(b)), den)


def _diagonal_blocks(L, r0: int, count: int, size: int) -> ir.Value:
    """[B, count, size, size]: the diagonal blocks of L starting at row/column r0."""
    B = _dims(L)[0]
    span = count * size
    sub = extract_slice(L, [0, r0, r0], [B, span, span])
    blocks = reshape(sub, [B, count, size, count, size])
    return _ew([blocks], [_map(4, [0, 1, 2, 1, 3])], [B, count, size, size], _etype(L), lambda v, _o: v)[0]


def solve_lower(L, Bm, nb: int = TRSOLVE_BLOCK) -> ir.Value:
    """X with L X = Bm; L [B, m, m] lower triangular, Bm [B, m, k]: the diagonal blocks' inverses
    (nb x nb, and one smaller last block), then block forward substitution with matmuls."""
    Bt, m, _ = _dims(L)
    k = _dims(Bm)[2]
    et = _etype(L)
    nb = min(nb, m)
    full, rem = m // nb, m % nb
    inv_full = _invert_diagonal_blocks(_diagonal_blocks(L, 0, full, nb))
    inv_rem = _invert_diagonal_blocks(_diagonal_blocks(L, full * nb, 1, rem)) if rem else None
    X = _empty([Bt, m, k], et)
    rows = [(b * nb, nb) for b in range(full)] + ([(full * nb, rem)] if rem else [])
    for b, (r0, size) in enumerate(rows):
        R = extract_slice(Bm, [0, r0, 0], [Bt, size, k])
        if r0 > 0:
            Lrow = extract_slice(L, [0, r0, 0], [Bt, size, r0])
            Xtop = extract_slice(X, [0, 0, 0], [Bt, r0, k])
            R = _matmul(_neg(Lrow), Xtop, acc=R)
        if b < full:
            Ib = reshape(extract_slice(inv_full, [0, b, 0, 0], [Bt, 1, nb, nb]), [Bt, nb, nb])
        else:
            Ib = reshape(inv_rem, [Bt, rem, rem])
        X = insert_slice(_matmul(Ib, R), X, [0, r0, 0])
    return X


@lowers("xla.triangular_solve")
def lower_triangular_solve(lw):
    sa, sb = lw.shape("a"), lw.shape("b")
    left, lower, unit = lw.attr("left_side"), lw.attr("lower"), lw.attr("unit_diagonal")
    tr = lw.attr("transpose_a")
    et = sa.element_type.builtin_type()
    if sb.size == 0:
        return _empty(list(sb.dims), et)
    a, b = lw.value("a"), lw.value("b")
    if sa.element_type in (F16, BF16):            # solved in F32, rounded once (as XLA:CPU)
        low = sa.element_type
        x = _solve(_convert(a, low, F32), _convert(b, low, F32), sa, sb, left, lower, unit, tr, F32.builtin_type())
        return _convert(x, F32, low)
    return _solve(a, b, sa, sb, left, lower, unit, tr, et)


def _solve(a, b, sa, sb, left, lower, unit, tr, et):
    m = sa.dims[-1]
    Bt = _prod(sa.dims[:-2])
    a = reshape(a, [Bt, m, m])
    # M0 = op(a) (left side) or op(a)^T (right side) as (transpose?, conjugate?) of a
    t_op = tr is not Transpose.NO_TRANSPOSE
    conj = tr is Transpose.ADJOINT and _is_complex(et)
    transpose = t_op if left else not t_op
    rev = lower == transpose                  # M0 is upper triangular: reverse rows and columns
    M = _canonical_factor(a, lower, unit, transpose, conj, rev, et)
    if left:
        k = sb.dims[-1]
        b3 = reshape(b, [Bt, m, k])
        rhs = _gather(b3, [Bt, m, k], lambda p: [p[0], _rev(p[1], m) if rev else p[1], p[2]])
    else:
        k = sb.dims[-2]
        b3 = reshape(b, [Bt, k, m])
        rhs = _gather(b3, [Bt, m, k], lambda p: [p[0], p[2], _rev(p[1], m) if rev else p[1]])
    X = solve_lower(M, rhs)
    # back to b's layout: out[b, r, c] = X[b, rev(r), c] (left) or out[b, c, r] = X[b, rev(r), c]
    if left:
        out = _gather(X, [Bt, m, k], lambda p: [p[0], _rev(p[1], m) if rev else p[1], p[2]]) if rev else X
    else:
        out = _gather(X, [Bt, k, m], lambda p: [p[0], _rev(p[2], m) if rev else p[2], p[1]])
    return reshape(out, list(sb.dims))


# ----------------------------------------------------------------------------------------
# Fft
# ----------------------------------------------------------------------------------------
MAX_RADIX_PRIME = 13
DIRECT_DFT_MAX = 64


def _factor(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def fft_plan(n: int):
    """('stages', radices) or ('bluestein', M) for a transform of length n."""
    primes = _factor(n)
    if primes and max(primes) > MAX_RADIX_PRIME:
        if n <= DIRECT_DFT_MAX:
            return "stages", [n]
        return "bluestein", 1 << (2 * n - 2).bit_length()
    twos = primes.count(2)
    radices = [8] * (twos // 3) + ([{1: 2, 2: 4}[twos % 3]] if twos % 3 else [])
    radices += [p for p in primes if p != 2]
    return "stages", radices


def _const(array: np.ndarray, ft: ir.Type) -> ir.Value:
    t = _tensor_type(array.shape, ft)
    return arith.ConstantOp(t, dense_attr(np.ascontiguousarray(array), t)).result


def _np_dtype(ft: ir.Type):
    return np.float64 if str(ft) == "f64" else np.float32


_PI_LD = np.longdouble("3.14159265358979323846264338327950288")


def unit_roots(k, n: int, sign: float) -> np.ndarray:
    """exp(sign * 2 pi i k / n) for integer arrays k, exact at the quarter turns (0, +-1),
    symmetric within each octant (cos and sin of the smaller angle, swapped past pi/4) and
    computed in long double, so that transforms of exact data give exact zeros where XLA's do
    and the twiddles are (nearly always) correctly rounded."""
    k = np.asarray(k, np.int64) % n
    quadrant, rem = np.divmod(4 * k, n)             # angle = (quadrant + rem / n) * pi / 2
    swap = 2 * rem > n
    low = np.where(swap, n - rem, rem).astype(np.longdouble) * (_PI_LD / 2) / n
    c, s = np.cos(low).astype(np.float64), np.sin(low).astype(np.float64)     # rounded once
    c, s = np.where(swap, s, c), np.where(swap, c, s)
    half = 2 * rem == n
    c, s = np.where(half, np.sqrt(0.5), c), np.where(half, np.sqrt(0.5), s)
    c, s = np.where(rem == 0, 1.0, c), np.where(rem == 0, 0.0, s)
    re = np.choose(quadrant, [c, -s, -c, s])
    im = np.choose(quadrant, [s, c, -s, -c])
    return re + 1j * sign * im


def _stage(re, im, P, G, r, m, Q, n_s, sign, scale, ft):
    """One radix-r combine: out[p, g, k1, k2, q] = sum_j1 x[p, g, j1, k2, q] w_{n_s}^{j1 k2} w_r^{j1 k1}."""
    k1 = np.arange(r)[:, None, None]
    j1 = np.arange(r)[None, :, None]
    k2 = np.arange(m)[None, None, :]
    tw = unit_roots((j1 * k2) % n_s + ((j1 * k1) % r) * m, n_s, sign) * scale
    dt = _np_dtype(ft)
    tr, ti = _const(tw.real.astype(dt), ft), _const(tw.imag.astype(dt), ft)
    shape = [P, G, r, m, Q]
    xr, xi = reshape(re, shape), reshape(im, shape)
    xmap = _map(6, [0, 1, 5, 3, 4])
    tmap = _map(6, [2, 5, 3])
    omap = _map(6, [0, 1, 2, 3, 4])

    def body(a, b, c, d, acc_r, acc_i):
        return [arith.addf(acc_r, arith.subf(arith.mulf(a, c), arith.mulf(b, d))),
                arith.addf(acc_i, arith.addf(arith.mulf(a, d), arith.mulf(b, c)))]
    outr, outi = generic([xr, xi, tr, ti], [xmap, xmap, tmap, tmap], [_zeros(shape, ft), _zeros(shape, ft)],
                         [omap, omap], ["parallel"] * 5 + ["reduction"], body)
    n = G * r * m
    return reshape(outr, [P, n, Q]), reshape(outi, [P, n, Q])


def _fft_stages(re, im, P, n, Q, radices, inverse, scale, ft):
    sign = 1.0 if inverse else -1.0
    t = len(radices)
    if t > 1:                       # digit reversal: [P, r_t .. r_1, Q] -> [P, r_1 .. r_t, Q]
        dims = [P] + list(reversed(radices)) + [Q]
        perm = [0] + list(range(t, 0, -1)) + [t + 1]
        out_dims = [dims[p] for p in perm]
        re, im = (reshape(value_of(linalg.transpose(reshape(v, dims), outs=[_empty(out_dims, ft)],
                                                    permutation=perm)), [P, n, Q]) for v in (re, im))
    for s in range(t - 1, -1, -1):
        r = radices[s]
        m = _prod(radices[s + 1:])
        n_s = r * m
        re, im = _stage(re, im, P, n // n_s, r, m, Q, n_s, sign, scale if s == 0 else 1.0, ft)
    return re, im


def _pointwise_cmul(re, im, wr, wi, wmap, ft):
    d = _dims(re)
    k = len(d)

    def body(a, b, c, e, _o1, _o2):
        return [arith.subf(arith.mulf(a, c), arith.mulf(b, e)), arith.addf(arith.mulf(a, e), arith.mulf(b, c))]
    return _ew([re, im, wr, wi], [_ident(k), _ident(k), wmap, wmap], d, ft, body, n_out=2)


def _bluestein(re, im, P, n, Q, M, inverse, ft):
    sign = 1.0 if inverse else -1.0
    j = np.arange(n)
    chirp = unit_roots((j * j) % (2 * n), 2 * n, sign)
    bvec = np.zeros(M, np.complex128)
    bvec[:n] = np.conj(chirp)
    bvec[M - n + 1:] = np.conj(chirp[1:][::-1])
    bhat = np.fft.fft(bvec)
    dt = _np_dtype(ft)
    wmap = _map(3, [1])
    cr, ci = _const(chirp.real.astype(dt), ft), _const(chirp.imag.astype(dt), ft)
    ar, ai = _pointwise_cmul(re, im, cr, ci, wmap, ft)
    ar = insert_slice(ar, _zeros([P, M, Q], ft), [0, 0, 0])
    ai = insert_slice(ai, _zeros([P, M, Q], ft), [0, 0, 0])
    _, radices = fft_plan(M)
    ar, ai = _fft_stages(ar, ai, P, M, Q, radices, False, 1.0, ft)
    br, bi = _const(bhat.real.astype(dt), ft), _const(bhat.imag.astype(dt), ft)
    ar, ai = _pointwise_cmul(ar, ai, br, bi, wmap, ft)
    ar, ai = _fft_stages(ar, ai, P, M, Q, radices, True, 1.0 / M, ft)
    ar = extract_slice(ar, [0, 0, 0], [P, n, Q])
    ai = extract_slice(ai, [0, 0, 0], [P, n, Q])
    post = chirp / n if inverse else chirp
    pr, pi = _const(post.real.astype(dt), ft), _const(post.imag.astype(dt), ft)
    return _pointwise_cmul(ar, ai, pr, pi, wmap, ft)


def fft_axis(re, im, axis: int, inverse: bool, ft):
    """Complex DFT (inverse: with 1/n) of planar tensors along one axis."""
    dims = _dims(re)
    n = dims[axis]
    if n <= 1:
        return re, im
    P, Q = _prod(dims[:axis]), _prod(dims[axis + 1:])
    re3, im3 = reshape(re, [P, n, Q]), reshape(im, [P, n, Q])
    kind, plan = fft_plan(n)
    if kind == "stages":
        re3, im3 = _fft_stages(re3, im3, P, n, Q, plan, inverse, 1.0 / n if inverse else 1.0, ft)
    else:
        re3, im3 = _bluestein(re3, im3, P, n, Q, plan, inverse, ft)
    return reshape(re3, dims), reshape(im3, dims)


def _hermitian_extend(re, im, n: int, ft):
    """Full length-n spectra from the n//2+1 entries of the last axis (X[n-k] = conj X[k])."""
    dims = _dims(re)
    h = dims[-1]
    r = len(dims)
    full = dims[:-1] + [n]
    out_r, out_i = _zeros(full, ft), _zeros(full, ft)
    keep = min(h, n)
    if keep != h:
        re, im = (extract_slice(v, [0] * r, dims[:-1] + [keep]) for v in (re, im))
    out_r = insert_slice(re, out_r, [0] * r)
    out_i = insert_slice(im, out_i, [0] * r)
    tail = n - n // 2 - 1
    if tail > 0:
        # entries n//2+1 .. n-1 are conj(X[n-k]) for n-k = tail .. 1: X[1 .. tail] reversed
        tdims = dims[:-1] + [tail]
        at = lambda p: p[:-1] + [_rev(p[-1], tail + 1)]  # noqa: E731  (X[tail - k] for k < tail)
        tr = _gather(re, tdims, at)
        ti = _gather(im, tdims, at, arith.negf)
        out_r = insert_slice(tr, out_r, [0] * (r - 1) + [n // 2 + 1])
        out_i = insert_slice(ti, out_i, [0] * (r - 1) + [n // 2 + 1])
    return out_r, out_i


@lowers("xla.fft")
def lower_fft(lw):
    s = lw.shape("operand")
    out = lw.result_shape
    kind, lengths = lw.attr("fft_type"), list(lw.attr("fft_length"))
    if out.size == 0:
        return _empty(list(out.dims), out.element_type.builtin_type())
    x = lw.value("operand")
    rank, k = s.rank, len(lengths)
    axes = list(range(rank - k, rank))
    # F32/C64 transforms are computed in F64 on the CPU and rounded once: in F32 the stages'
    # roundings left errors of hundreds of ULP on the smaller outputs of large transforms (a C64
    # transform over 15x16x17: 598 ULP; in F64, 0.5); SPIR-V targets have no F64 to spare
    narrow = s.element_type.component
    wide = F64 if narrow == F32 and options().desc.wide_math else narrow
    ft = wide.builtin_type()
    if kind is FftType.RFFT:
        re, im = _convert(x, narrow, wide), _zeros(list(s.dims), ft)
        re, im = fft_axis(re, im, rank - 1, False, ft)
        h = out.dims[-1]
        re, im = (extract_slice(v, [0] * rank, list(s.dims[:-1]) + [h]) for v in (re, im))
        for a in axes[:-1]:
            re, im = fft_axis(re, im, a, False, ft)
        return _join(_convert(re, wide, narrow), _convert(im, wide, narrow))
    re, im = (_convert(v, narrow, wide) for v in complex_parts(x))
    if kind in (FftType.FFT, FftType.IFFT):
        for a in axes:
            re, im = fft_axis(re, im, a, kind is FftType.IFFT, ft)
        return _join(_convert(re, wide, narrow), _convert(im, wide, narrow))
    # IRFFT: the outer axes first (complex), then the innermost from its Hermitian half
    for a in axes[:-1]:
        re, im = fft_axis(re, im, a, True, ft)
    re, im = _hermitian_extend(re, im, lengths[-1], ft)
    re, _ = fft_axis(re, im, rank - 1, True, ft)
    return _convert(re, wide, narrow)


def _convert(x: ir.Value, src, dst) -> ir.Value:
    """A real tensor of element type src as element type dst (ConvertElementType)."""
    return convert_tensor(x, Shape(src, _dims(x)), dst)


