"""Dot and DotGeneral (convolutions join this family in their own issue)."""
from __future__ import annotations

import numpy as np

from ..attrs import DotDimensionNumbers, ETypeKind, Optional, kind_for
from ..core import Attr, OpDef, Operand, register
from ..types import COMPLEX, FLOATS, INTEGERS, Shape

NUMERIC = INTEGERS + FLOATS + COMPLEX


def dot_general_shape(chk, lhs: Shape, rhs: Shape, dn: DotDimensionNumbers, preferred=None) -> Shape:
    chk.element_type("lhs", lhs, NUMERIC, "integer, floating-point or complex")
    chk.element_type("rhs", rhs, NUMERIC, "integer, floating-point or complex")
    if preferred is None:
        chk.same_element_type("lhs", lhs, "rhs", rhs)
    lc, rc = dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions
    lb, rb = dn.lhs_batch_dimensions, dn.rhs_batch_dimensions
    for name, dims, s in (("lhs_contracting_dimensions", lc, lhs), ("rhs_contracting_dimensions", rc, rhs),
                          ("lhs_batch_dimensions", lb, lhs), ("rhs_batch_dimensions", rb, rhs)):
        chk.dims_in_range(f"dimension_numbers.{name}", dims, s.rank)
        chk.unique(f"dimension_numbers.{name}", dims)
    if len(lc) != len(rc):
        chk.fail("dimension_numbers.rhs_contracting_dimensions",
                 f"must have as many dimensions as lhs_contracting_dimensions ({list(lc)})", list(rc))
    if len(lb) != len(rb):
        chk.fail("dimension_numbers.rhs_batch_dimensions",
                 f"must have as many dimensions as lhs_batch_dimensions ({list(lb)})", list(rb))
    for side, c, b in (("lhs", lc, lb), ("rhs", rc, rb)):
        both = set(c) & set(b)
        if both:
            chk.fail(f"dimension_numbers.{side}_batch_dimensions",
                     f"must not overlap {side}_contracting_dimensions", sorted(both))
    for kind, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ld, rd):
            if lhs.dims[a] != rhs.dims[b]:
                chk.fail(f"dimension_numbers.rhs_{kind}_dimensions",
                         f"must pair dimensions of equal size: lhs dimension {a} has {lhs.dims[a]}, "
                         f"rhs dimension {b} has {rhs.dims[b]}", list(rd))
    lfree = [d for d in range(lhs.rank) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.rank) if d not in rc and d not in rb]
    dims = [lhs.dims[d] for d in lb] + [lhs.dims[d] for d in lfree] + [rhs.dims[d] for d in rfree]
    return Shape(preferred or lhs.element_type, dims)


def dot_general_value(lhs, rhs, dn: DotDimensionNumbers, result: Shape):
    """Reference: exact sum of products (float64/complex128/int64), then the result type."""
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lsub = [None] * lhs.ndim
    rsub = [None] * rhs.ndim
    for a, b in zip(dn.lhs_batch_dimensions, dn.rhs_batch_dimensions):
        lsub[a] = rsub[b] = next(letters)
    for a, b in zip(dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions):
        lsub[a] = rsub[b] = next(letters)
    for i in range(lhs.ndim):
        lsub[i] = lsub[i] or next(letters)
    for i in range(rhs.ndim):
        rsub[i] = rsub[i] or next(letters)
    out = [lsub[d] for d in dn.lhs_batch_dimensions]
    out += [lsub[d] for d in range(lhs.ndim) if d not in dn.lhs_batch_dimensions and d not in dn.lhs_contracting_dimensions]
    out += [rsub[d] for d in range(rhs.ndim) if d not in dn.rhs_batch_dimensions and d not in dn.rhs_contracting_dimensions]
    et = result.element_type
    wide = np.complex128 if (et.is_complex or np.asarray(lhs).dtype.kind == "c") else (
        np.float64 if et.is_float else np.int64)
    if et.is_unsigned:
        wide = np.uint64
    spec = f"{''.join(lsub)},{''.join(rsub)}->{''.join(out)}"
    with np.errstate(all="ignore"):
        r = np.einsum(spec, np.asarray(lhs).astype(wide), np.asarray(rhs).astype(wide))
    return np.asarray(r).astype(result.dtype)


def _dot_numbers(lhs: Shape, rhs: Shape) -> DotDimensionNumbers:
    return DotDimensionNumbers((max(lhs.rank - 1, 0),), (0,))


def _dot_infer(chk, lhs, rhs, preferred_element_type=None):
    chk.array("lhs", lhs)
    chk.array("rhs", rhs)
    for name, s in (("lhs", lhs), ("rhs", rhs)):
        if s.rank not in (1, 2):
            chk.fail(name, "must be a vector or a matrix (rank 1 or 2)", s)
    if lhs.dims[-1] != rhs.dims[0]:
        chk.fail("rhs", f"must have dimension 0 equal to the last dimension of lhs ({lhs}): "
                 "the contracted dimensions must be of the same size", rhs)
    return dot_general_shape(chk, lhs, rhs, _dot_numbers(lhs, rhs), preferred_element_type)


register(OpDef("Dot", (Operand("lhs"), Operand("rhs"),
                       Attr("preferred_element_type", Optional(ETypeKind()), None)),
               _dot_infer,
               lambda lhs, rhs, preferred_element_type=None, *, result: dot_general_value(
                   lhs, rhs, DotDimensionNumbers((max(np.ndim(lhs) - 1, 0),), (0,)), result),
               "contraction", "Dot", doc="vector/matrix products contracting lhs's last and rhs's first dimension"))


def _dot_general_infer(chk, lhs, rhs, dimension_numbers, preferred_element_type=None):
    chk.array("lhs", lhs)
    chk.array("rhs", rhs)
    return dot_general_shape(chk, lhs, rhs, dimension_numbers, preferred_element_type)


register(OpDef("DotGeneral", (Operand("lhs"), Operand("rhs"),
                              Attr("dimension_numbers", kind_for(DotDimensionNumbers)),
                              Attr("preferred_element_type", Optional(ETypeKind()), None)),
               _dot_general_infer,
               lambda lhs, rhs, dimension_numbers, preferred_element_type=None, *, result:
               dot_general_value(lhs, rhs, dimension_numbers, result),
               "contraction", "DotGeneral",
               doc="sum of products over contracting dimensions, with batch dimensions"))
