"""Dot, DotGeneral and the convolutions (Conv, ConvWithGeneralPadding, ConvGeneralDilated)."""
from __future__ import annotations

import numpy as np

from ..attrs import (AttrKind, ConvolutionDimensionNumbers, DotDimensionNumbers, ETypeKind, Int, Ints,
                     Optional, Padding, kind_for)
from ..core import Attr, OpDef, Operand, register
from ..ir import ir
from ..types import COMPLEX, FLOATS, INTEGERS, Shape
from .reduction import WINDOW_PADDING, WindowPaddingKind, np_pad, resolve_padding, window_output_dims

NUMERIC = INTEGERS + FLOATS + COMPLEX


def dot_general_shape(chk, lhs: Shape, rhs: Shape, dn: DotDimensionNumbers, preferred=None) -> Shape:
    chk.element_type("lhs", lhs, NUMERIC, "integer, floating-point or complex", cid="dot_general_i1")
    chk.element_type("rhs", rhs, NUMERIC, "integer, floating-point or complex", cid="dot_general_i2")
    if preferred is None:
        chk.same_element_type("lhs", lhs, "rhs", rhs, cid="dot_general_c13")
    lc, rc = dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions
    lb, rb = dn.lhs_batch_dimensions, dn.rhs_batch_dimensions
    for name, dims, s, rng, uniq in (
            ("lhs_contracting_dimensions", lc, lhs, "dot_general_c6", "dot_general_c3"),
            ("rhs_contracting_dimensions", rc, rhs, "dot_general_c8", "dot_general_c4"),
            ("lhs_batch_dimensions", lb, lhs, "dot_general_c5", "dot_general_c3"),
            ("rhs_batch_dimensions", rb, rhs, "dot_general_c7", "dot_general_c4")):
        chk.dims_in_range(f"dimension_numbers.{name}", dims, s.rank, cid=rng)
        chk.unique(f"dimension_numbers.{name}", dims, cid=uniq)
    if len(lc) != len(rc):
        chk.fail("dimension_numbers.rhs_contracting_dimensions",
                 f"must have as many dimensions as lhs_contracting_dimensions ({list(lc)})", list(rc),
                 cid="dot_general_c2")
    if len(lb) != len(rb):
        chk.fail("dimension_numbers.rhs_batch_dimensions",
                 f"must have as many dimensions as lhs_batch_dimensions ({list(lb)})", list(rb),
                 cid="dot_general_c1")
    for side, c, b, cid in (("lhs", lc, lb, "dot_general_c3"), ("rhs", rc, rb, "dot_general_c4")):
        both = set(c) & set(b)
        if both:
            chk.fail(f"dimension_numbers.{side}_batch_dimensions",
                     f"must not overlap {side}_contracting_dimensions", sorted(both), cid=cid)
    for kind, ld, rd, cid in (("contracting", lc, rc, "dot_general_c10"),
                              ("batch", lb, rb, "dot_general_c9")):
        for a, b in zip(ld, rd):
            if lhs.dims[a] != rhs.dims[b]:
                chk.fail(f"dimension_numbers.rhs_{kind}_dimensions",
                         f"must pair dimensions of equal size: lhs dimension {a} has {lhs.dims[a]}, "
                         f"rhs dimension {b} has {rhs.dims[b]}", list(rd), cid=cid)
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


#: XLA's operand precisions (PrecisionConfig), for Dot, DotGeneral and the convolutions
PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


class PrecisionConfigKind(AttrKind):
    """XLA's PrecisionConfig: one precision (DEFAULT, HIGH, HIGHEST) for both operands or one
    per operand.  Kept on the op.  The CPU computes every F32 product in F32 whatever it says;
    a target whose F32 products go through BF16 (lowering/targets.py `f32_products`) keeps
    F32 for an operand marked HIGHEST."""
    what = "a precision config (DEFAULT, HIGH or HIGHEST; one, or one per operand)"

    def normalize(self, chk, param, v):
        items = [v] if isinstance(v, str) or not isinstance(v, (list, tuple)) else list(v)
        names = []
        for x in items:
            name = x if isinstance(x, str) else getattr(x, "name", None)
            if not isinstance(name, str) or name.upper() not in PRECISIONS:
                self._bad(chk, param, v)
            names.append(name.upper())
        if len(names) not in (1, 2):
            self._bad(chk, param, v)
        return tuple(names)

    def to_attr(self, v):
        return ir.ArrayAttr.get([ir.StringAttr.get(x) for x in v])

    def from_attr(self, a):
        return tuple(ir.StringAttr(x).value for x in ir.ArrayAttr(a))



def _dot_numbers(lhs: Shape, rhs: Shape) -> DotDimensionNumbers:
    return DotDimensionNumbers((max(lhs.rank - 1, 0),), (0,))


def _dot_infer(chk, lhs, rhs, preferred_element_type=None, precision_config=None):
    chk.array("lhs", lhs, cid="spec:Dot")
    chk.array("rhs", rhs, cid="spec:Dot")
    for name, s in (("lhs", lhs), ("rhs", rhs)):
        if s.rank not in (1, 2):
            chk.fail(name, "must be a vector or a matrix (rank 1 or 2)", s, cid="spec:Dot")
    if lhs.dims[-1] != rhs.dims[0]:
        chk.fail("rhs", f"must have dimension 0 equal to the last dimension of lhs ({lhs}): "
                 "the contracted dimensions must be of the same size", rhs, cid="spec:Dot")
    return dot_general_shape(chk, lhs, rhs, _dot_numbers(lhs, rhs), preferred_element_type)


#: the constraints of dot_general_shape (DotGeneral, and Dot through it), StableHLO's dot_general
_DOT_GENERAL_CONSTRAINTS = {
    "dot_general_i1": "`lhs` is a tensor or per-tensor quantized tensor",
    "dot_general_i2": "`rhs` is a tensor or quantized tensor",
    "dot_general_c1": "`size(lhs_batching_dimensions) = size(rhs_batching_dimensions)`",
    "dot_general_c2": "`size(lhs_contracting_dimensions) = "
                      "size(rhs_contracting_dimensions)`",
    "dot_general_c3": "`is_unique(lhs_batching_dimensions + "
                      "lhs_contracting_dimensions)`",
    "dot_general_c4": "`is_unique(rhs_batching_dimensions + "
                      "rhs_contracting_dimensions)`",
    "dot_general_c5": "`0 <= lhs_batching_dimensions < rank(lhs)`",
    "dot_general_c6": "`0 <= lhs_contracting_dimensions < rank(lhs)`",
    "dot_general_c7": "`0 <= rhs_batching_dimensions < rank(rhs)`",
    "dot_general_c8": "`0 <= rhs_contracting_dimensions < rank(rhs)`",
    "dot_general_c9": "`dim(lhs, lhs_batching_dimensions...) = dim(rhs, "
                      "rhs_batching_dimensions...)`",
    "dot_general_c10": "`dim(lhs, lhs_contracting_dimensions...) = dim(rhs, "
                       "rhs_contracting_dimensions...)`",
    "dot_general_c13": "`element_type(lhs) = element_type(rhs)`",
}


register(OpDef("Dot", (Operand("lhs"), Operand("rhs"),
                       Attr("preferred_element_type", Optional(ETypeKind()), None),
                       Attr("precision_config", Optional(PrecisionConfigKind()), None)),
               _dot_infer,
               lambda lhs, rhs, preferred_element_type=None, precision_config=None, *, result: dot_general_value(
                   lhs, rhs, DotDimensionNumbers((max(np.ndim(lhs) - 1, 0),), (0,)), result),
               "contraction", "Dot", doc="vector/matrix products contracting lhs's last and rhs's first dimension",
               constraints={"spec:Dot": "lhs and rhs are vectors or matrices, rhs's dimension 0 the size of "
                                        "lhs's last dimension", **_DOT_GENERAL_CONSTRAINTS}))


def _dot_general_infer(chk, lhs, rhs, dimension_numbers, preferred_element_type=None, precision_config=None):
    chk.array("lhs", lhs, cid="dot_general_i1")
    chk.array("rhs", rhs, cid="dot_general_i2")
    return dot_general_shape(chk, lhs, rhs, dimension_numbers, preferred_element_type)


register(OpDef("DotGeneral", (Operand("lhs"), Operand("rhs"),
                              Attr("dimension_numbers", kind_for(DotDimensionNumbers)),
                              Attr("preferred_element_type", Optional(ETypeKind()), None),
                              Attr("precision_config", Optional(PrecisionConfigKind()), None)),
               _dot_general_infer,
               lambda lhs, rhs, dimension_numbers, preferred_element_type=None, precision_config=None, *, result:
               dot_general_value(lhs, rhs, dimension_numbers, result),
               "contraction", "DotGeneral",
               doc="sum of products over contracting dimensions, with batch dimensions",
               constraints=_DOT_GENERAL_CONSTRAINTS))


# ----------------------------------------------------------------------------------------
# Conv, ConvWithGeneralPadding, ConvGeneralDilated
# ----------------------------------------------------------------------------------------
def default_conv_numbers(rank: int) -> ConvolutionDimensionNumbers:
    """The layout of Conv and ConvWithGeneralPadding: lhs [batch, feature, spatial...],
    rhs [output feature, input feature, spatial...], output like lhs."""
    sp = tuple(range(2, rank))
    return ConvolutionDimensionNumbers(0, 1, sp, 1, 0, sp, 0, 1, sp)


def _check_layout(chk, name: str, dims: list, rank: int, operand: str, *, cid: str):
    for d in dims:
        if not 0 <= d < rank:
            chk.fail(f"dimension_numbers.{name}", f"must be dimensions of {operand} (rank {rank}), in [0, {rank})",
                     dims, cid=cid)
    if len(set(dims)) != len(dims):
        chk.fail(f"dimension_numbers.{name}", f"must be distinct dimensions of {operand}", dims, cid=cid)


def conv_shape(chk, lhs: Shape, rhs: Shape, window_strides, padding, lhs_dilation, rhs_dilation,
               dn: ConvolutionDimensionNumbers, feature_group_count, batch_group_count, preferred=None) -> Shape:
    """The shape rule shared by the three convolution ops (spec: ConvWithGeneralPadding)."""
    chk.element_type("lhs", lhs, NUMERIC, "integer, floating-point or complex", cid="convolution_i1")
    chk.element_type("rhs", rhs, NUMERIC, "integer, floating-point or complex", cid="convolution_i2")
    if preferred is None:
        chk.same_element_type("lhs", lhs, "rhs", rhs, cid="convolution_c27")
    else:
        kinds = {lhs.element_type.kind, rhs.element_type.kind}
        if preferred.is_pred or ("complex" in kinds and not preferred.is_complex) or (
                "float" in kinds and not preferred.is_floating):
            chk.fail("preferred_element_type", f"must hold the operands' values ({lhs.element_type}, "
                     f"{rhs.element_type})", preferred, cid="spec:ConvWithGeneralPadding")
    if rhs.rank != lhs.rank:
        chk.fail("rhs", f"must have the rank of lhs ({lhs})", rhs, cid="convolution_c1")
    if lhs.rank < 2:
        chk.fail("lhs", "must have rank n+2 >= 2 (batch, feature and n spatial dimensions)", lhs,
                 cid="spec:ConvWithGeneralPadding")
    rank = lhs.rank
    n = len(dn.input_spatial_dimensions)
    if n != rank - 2:
        chk.fail("dimension_numbers.input_spatial_dimensions", f"must number rank - 2 = {rank - 2} "
                 f"(lhs is {lhs})", list(dn.input_spatial_dimensions), cid="convolution_c12")
    for name, seq, cid in (("kernel_spatial_dimensions", dn.kernel_spatial_dimensions, "convolution_c17"),
                           ("output_spatial_dimensions", dn.output_spatial_dimensions, "convolution_c19")):
        if len(seq) != n:
            chk.fail(f"dimension_numbers.{name}", f"must number {n}, like input_spatial_dimensions", list(seq),
                     cid=cid)
    _check_layout(chk, "input_*_dimension(s)", [dn.input_batch_dimension, dn.input_feature_dimension,
                                                *dn.input_spatial_dimensions], rank, "lhs",
                                                cid="convolution_c13")
    _check_layout(chk, "kernel_*_dimension(s)", [dn.kernel_output_feature_dimension,
                                                 dn.kernel_input_feature_dimension,
                                                 *dn.kernel_spatial_dimensions], rank, "rhs",
                                                 cid="convolution_c18")
    _check_layout(chk, "output_*_dimension(s)", [dn.output_batch_dimension, dn.output_feature_dimension,
                                                 *dn.output_spatial_dimensions], rank, "the result",
                  cid="convolution_c20")
    what = f"one per spatial dimension ({n})"
    chk.length("window_strides", window_strides, n, what, cid="convolution_c2")
    chk.positive("window_strides", window_strides, cid="convolution_c3")
    chk.length("lhs_dilation", lhs_dilation, n, what, cid="convolution_c5")
    chk.positive("lhs_dilation", lhs_dilation, cid="convolution_c6")
    chk.length("rhs_dilation", rhs_dilation, n, what, cid="convolution_c7")
    chk.positive("rhs_dilation", rhs_dilation, cid="convolution_c8")
    if not isinstance(padding, Padding):
        chk.length("padding", padding, n, what, cid="convolution_c4")
    fgc, bgc = feature_group_count, batch_group_count
    if fgc < 1:
        chk.fail("feature_group_count", "must be positive", fgc, cid="convolution_c21")
    if bgc < 1:
        chk.fail("batch_group_count", "must be positive", bgc, cid="convolution_c22")
    if fgc > 1 and bgc > 1:
        chk.fail("batch_group_count", f"must be 1 when feature_group_count is {fgc} (both cannot exceed 1)", bgc,
                 cid="convolution_c23")
    batch = lhs.dims[dn.input_batch_dimension]
    cin = lhs.dims[dn.input_feature_dimension]
    kin = rhs.dims[dn.kernel_input_feature_dimension]
    kout = rhs.dims[dn.kernel_output_feature_dimension]
    if cin % fgc:
        chk.fail("feature_group_count", f"must divide the lhs feature dimension ({cin})", fgc,
                 cid="convolution_c11")
    if kin != cin // fgc:
        chk.fail("rhs", f"must have input feature dimension (dimension {dn.kernel_input_feature_dimension}) "
                 f"of size lhs features / feature_group_count = {cin // fgc}", rhs, cid="convolution_c14")
    if kout % fgc:
        chk.fail("feature_group_count", f"must divide the rhs output feature dimension ({kout})", fgc,
                 cid="convolution_c16")
    if kout % bgc:
        chk.fail("batch_group_count", f"must divide the rhs output feature dimension ({kout})", bgc,
                 cid="convolution_c15")
    if batch % bgc:
        chk.fail("batch_group_count", f"must divide the lhs batch dimension ({batch})", bgc,
                 cid="convolution_c10")
    base = [lhs.dims[d] for d in dn.input_spatial_dimensions]
    window = [rhs.dims[d] for d in dn.kernel_spatial_dimensions]
    if any(w <= 0 for w in window):
        chk.fail("rhs", "must have positive spatial (window) dimensions", rhs,
                 cid="spec:ConvWithGeneralPadding")
    pads = resolve_padding(padding, base, window, window_strides, lhs_dilation, rhs_dilation)
    spatial = window_output_dims(chk, base, window, window_strides, pads, lhs_dilation, rhs_dilation,
                                 cid="convolution_c25")
    out = [0] * rank
    out[dn.output_batch_dimension] = batch // bgc
    out[dn.output_feature_dimension] = kout
    for d, s in zip(dn.output_spatial_dimensions, spatial):
        out[d] = s
    return Shape(preferred or lhs.element_type, out)


def conv_value(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn, feature_group_count,
               batch_group_count, result: Shape):
    """Reference: the spec's pseudo-code on exact sums (float64 / complex128 / 64-bit integers);
    feature groups and batch groups split lhs and the kernel's output features into that many
    separate convolutions whose results are concatenated along the output features."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    et = result.element_type
    wide = np.complex128 if et.is_complex else np.float64 if et.is_float else (
        np.uint64 if et.is_unsigned else np.int64)
    isp, ksp, osp = dn.input_spatial_dimensions, dn.kernel_spatial_dimensions, dn.output_spatial_dimensions
    x = np.transpose(lhs, [dn.input_batch_dimension, dn.input_feature_dimension, *isp]).astype(wide)
    w = np.transpose(rhs, [dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension, *ksp]).astype(wide)
    pads = resolve_padding(padding, x.shape[2:], w.shape[2:], window_strides, lhs_dilation, rhs_dilation)
    x = np_pad(x, [(0, 0, 0)] * 2 + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, lhs_dilation)], 0)
    w = np_pad(w, [(0, 0, 0)] * 2 + [(0, 0, d - 1) for d in rhs_dilation], 0)
    out_sp = tuple(result.dims[d] for d in osp)

    def plain(x, w):                        # [N, C, sp...] (*) [O, C, k...] -> [N, O, out_sp...]
        out = np.zeros((x.shape[0], w.shape[0]) + out_sp, wide)
        axes = list(range(1, w.ndim))
        for pos in np.ndindex(*out_sp):
            win = x[(slice(None), slice(None)) + tuple(
                slice(p * s, p * s + k) for p, s, k in zip(pos, window_strides, w.shape[2:]))]
            with np.errstate(all="ignore"):
                out[(slice(None), slice(None)) + pos] = np.tensordot(win, w, axes=(axes, axes))
        return out

    fgc, bgc = feature_group_count, batch_group_count
    if fgc > 1:
        cg, og = x.shape[1] // fgc, w.shape[0] // fgc
        out = np.concatenate([plain(x[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og]) for g in range(fgc)], 1)
    elif bgc > 1:
        nb, ob = x.shape[0] // bgc, w.shape[0] // bgc
        out = np.concatenate([plain(x[g * nb:(g + 1) * nb], w[g * ob:(g + 1) * ob]) for g in range(bgc)], 1)
    else:
        out = plain(x, w)
    order = [dn.output_batch_dimension, dn.output_feature_dimension, *osp]
    return np.transpose(out, [order.index(j) for j in range(len(order))]).astype(result.dtype)


_CONV_TAIL = (Attr("feature_group_count", Int(), 1), Attr("batch_group_count", Int(), 1),
              Attr("precision_config", Optional(PrecisionConfigKind()), None),
              Attr("preferred_element_type", Optional(ETypeKind()), None))


def _conv_dn(lhs):
    return default_conv_numbers(max(np.ndim(lhs) if not isinstance(lhs, Shape) else lhs.rank, 2))


def _conv_infer(chk, lhs, rhs, window_strides, padding, feature_group_count=1, batch_group_count=1,
                precision_config=None, preferred_element_type=None):
    chk.array("lhs", lhs, cid="convolution_i1")
    chk.array("rhs", rhs, cid="convolution_i2")
    n = max(lhs.rank - 2, 0)
    return conv_shape(chk, lhs, rhs, window_strides, padding, (1,) * n, (1,) * n, _conv_dn(lhs),
                      feature_group_count, batch_group_count, preferred_element_type)


def _conv_ref(lhs, rhs, window_strides, padding, feature_group_count=1, batch_group_count=1,
              precision_config=None, preferred_element_type=None, *, result):
    n = np.ndim(lhs) - 2
    return conv_value(lhs, rhs, window_strides, padding, (1,) * n, (1,) * n, _conv_dn(lhs),
                      feature_group_count, batch_group_count, result)


#: the constraints of the three convolution ops' shape rule (conv_shape), StableHLO's convolution
_CONV_CONSTRAINTS = {
    "convolution_i1": "`lhs` is a tensor or per-tensor quantized tensor",
    "convolution_i2": "`rhs` is a tensor or quantized tensor",
    "convolution_c1": "`N = rank(lhs) = rank(rhs)`",
    "convolution_c2": "`size(window_strides) = N - 2`",
    "convolution_c3": "`0 < window_strides`",
    "convolution_c4": "`shape(padding) = [N - 2, 2]`",
    "convolution_c5": "`size(lhs_dilation) = N - 2`",
    "convolution_c6": "`0 < lhs_dilation`",
    "convolution_c7": "`size(rhs_dilation) = N - 2`",
    "convolution_c8": "`0 < rhs_dilation`",
    "convolution_c10": "`dim(lhs, input_batch_dimension) % batch_group_count = 0`",
    "convolution_c11": "`dim(lhs, input_feature_dimension) % feature_group_count = 0`",
    "convolution_c12": "`size(input_spatial_dimensions) = N - 2`",
    "convolution_c13": "input_batch_dimension, input_spatial_dimensions and input_feature_dimension are "
                       "distinct dimensions of lhs",
    "convolution_c14": "`dim(rhs, kernel_input_feature_dimension) = dim(lhs, "
                       "input_feature_dimension) / feature_group_count`",
    "convolution_c15": "`dim(rhs, kernel_output_feature_dimension) % batch_group_count "
                       "= 0`",
    "convolution_c16": "`dim(rhs, kernel_output_feature_dimension) % "
                       "feature_group_count = 0`",
    "convolution_c17": "`size(kernel_spatial_dimensions) = N - 2`",
    "convolution_c18": "kernel_spatial_dimensions, kernel_input_feature_dimension and "
                       "kernel_output_feature_dimension are distinct dimensions of rhs",
    "convolution_c19": "`size(output_spatial_dimensions) = N - 2`",
    "convolution_c20": "output_batch_dimension, output_spatial_dimensions and output_feature_dimension "
                       "are distinct dimensions of the result",
    "convolution_c21": "`0 < feature_group_count`",
    "convolution_c22": "`0 < batch_group_count`",
    "convolution_c23": "`feature_group_count = 1 or batch_group_count = 1`",
    "convolution_c25": "padding removes no more than the (dilated) base size of a "
                       "spatial dimension",
    "convolution_c27": "`element_type(lhs) = element_type(rhs) = element_type(result)`",
    "spec:ConvWithGeneralPadding": "preferred_element_type holds the operands' values; "
                                   "operands of rank >= 2; windows of positive size",
}


register(OpDef("Conv", (Operand("lhs"), Operand("rhs"), Attr("window_strides", Ints()),
                        Attr("padding", kind_for(Padding))) + _CONV_TAIL,
               _conv_infer, _conv_ref, "contraction", "Conv (convolution)",
               doc="convolution with SAME or VALID padding; lhs [batch, feature, spatial...], "
                   "rhs [output feature, input feature, spatial...]",
               constraints=_CONV_CONSTRAINTS))


def _cwgp_infer(chk, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, feature_group_count=1,
                batch_group_count=1, precision_config=None, preferred_element_type=None):
    chk.array("lhs", lhs, cid="convolution_i1")
    chk.array("rhs", rhs, cid="convolution_i2")
    return conv_shape(chk, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, _conv_dn(lhs),
                      feature_group_count, batch_group_count, preferred_element_type)


def _cwgp_ref(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, feature_group_count=1,
              batch_group_count=1, precision_config=None, preferred_element_type=None, *, result):
    return conv_value(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, _conv_dn(lhs),
                      feature_group_count, batch_group_count, result)


register(OpDef("ConvWithGeneralPadding", (Operand("lhs"), Operand("rhs"), Attr("window_strides", Ints()),
                                          Attr("padding", WindowPaddingKind(allow_enum=False)),
                                          Attr("lhs_dilation", Ints()), Attr("rhs_dilation", Ints())) + _CONV_TAIL,
               _cwgp_infer, _cwgp_ref, "contraction", "ConvWithGeneralPadding (convolution)",
               doc="convolution with explicit (low, high) padding (negative cuts), lhs and rhs "
                   "dilation, feature and batch groups; the spec's default layout",
               constraints=_CONV_CONSTRAINTS))


def _cgd_infer(chk, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count=1, batch_group_count=1, precision_config=None, preferred_element_type=None):
    chk.array("lhs", lhs, cid="convolution_i1")
    chk.array("rhs", rhs, cid="convolution_i2")
    return conv_shape(chk, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                      feature_group_count, batch_group_count, preferred_element_type)


def _cgd_ref(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
             feature_group_count=1, batch_group_count=1, precision_config=None, preferred_element_type=None, *,
             result):
    return conv_value(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                      feature_group_count, batch_group_count, result)


register(OpDef("ConvGeneralDilated", (Operand("lhs"), Operand("rhs"), Attr("window_strides", Ints()),
                                      Attr("padding", WINDOW_PADDING), Attr("lhs_dilation", Ints()),
                                      Attr("rhs_dilation", Ints()),
                                      Attr("dimension_numbers", kind_for(ConvolutionDimensionNumbers))) + _CONV_TAIL,
               _cgd_infer, _cgd_ref, "contraction", "ConvWithGeneralPadding (convolution)",
               doc="ConvWithGeneralPadding with ConvolutionDimensionNumbers: any layout of batch, feature "
                   "and spatial dimensions (NHWC/HWIO, ...); padding may also be SAME or VALID",
               constraints=_CONV_CONSTRAINTS))
