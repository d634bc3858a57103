"""Lowering of Dot and DotGeneral: operands are brought to [batch, M, K] x [batch, K, N]
(transpose + reshape) so the contraction is always linalg.matmul / linalg.batch_matmul,
the named ops IREE's data tiling and microkernels are tuned for."""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.attrs import DotDimensionNumbers
from xlair.dialect.ir import complex_d, ir, linalg
from xlair.dialect.types import Shape

from .elementwise import convert_scalar
from .registry import affine_map, empty, fill, generic, lowers, reshape, scalar_const, value_of
from .shape import transpose


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def _convert(x: ir.Value, s: Shape, et) -> ir.Value:
    if s.element_type == et:
        return x
    n = s.rank
    ident = affine_map(n, list(range(n)))
    return generic([x], [ident], [empty(s.with_type(et))], [ident], ["parallel"] * n,
                   lambda a, _o: convert_scalar(a, s.element_type, et))[0]


def lower_dot_general(lw, dn: DotDimensionNumbers):
    lhs_s, rhs_s, out = lw.shape("lhs"), lw.shape("rhs"), lw.result_shape
    et = out.element_type
    lhs = _convert(lw.value("lhs"), lhs_s, et)
    rhs = _convert(lw.value("rhs"), rhs_s, et)
    lb, rb = list(dn.lhs_batch_dimensions), list(dn.rhs_batch_dimensions)
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    lfree = [d for d in range(lhs_s.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs_s.rank) if d not in rb and d not in rc]
    lhs_t = transpose(lhs, lhs_s.with_type(et), lb + lfree + lc)
    rhs_t = transpose(rhs, rhs_s.with_type(et), rb + rc + rfree)
    B = _prod(lhs_s.dims[d] for d in lb)
    M = _prod(lhs_s.dims[d] for d in lfree)
    K = _prod(lhs_s.dims[d] for d in lc)
    N = _prod(rhs_s.dims[d] for d in rfree)
    batched = bool(lb)
    lshape = [B, M, K] if batched else [M, K]
    rshape = [B, K, N] if batched else [K, N]
    oshape = [B, M, N] if batched else [M, N]
    a = reshape(lhs_t, lshape)
    b = reshape(rhs_t, rshape)
    acc_shape = Shape(et, oshape)
    init = fill(acc_shape, scalar_const(et, 0))
    if et.is_complex:
        n = len(oshape)
        dims = list(range(n + 1))            # (b,) m, n, k
        k = n
        bm = dims[:-3] if batched else []
        amap = affine_map(n + 1, bm + [n - 2, k])
        bmap = affine_map(n + 1, bm + [k, n - 1])
        omap = affine_map(n + 1, bm + [n - 2, n - 1])
        res = generic([a, b], [amap, bmap], [init], [omap], ["parallel"] * n + ["reduction"],
                      lambda x, y, acc: complex_d.add(acc, complex_d.mul(x, y)))[0]
    elif batched:
        res = value_of(linalg.batch_matmul(a, b, outs=[init]))
    else:
        res = value_of(linalg.matmul(a, b, outs=[init]))
    return reshape(res, out.dims)


@lowers("xla.dot")
def lower_dot(lw):
    lhs = lw.shape("lhs")
    return lower_dot_general(lw, DotDimensionNumbers((lhs.rank - 1,), (0,)))


@lowers("xla.dot_general")
def lower_dot_general_op(lw):
    return lower_dot_general(lw, lw.attr("dimension_numbers"))
