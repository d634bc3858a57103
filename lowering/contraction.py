"""Lowering of Dot and DotGeneral: operands are brought to [batch, M, K] x [batch, K, N]
(transpose + reshape) so the contraction is always linalg.matmul / linalg.batch_matmul,
the named ops IREE's data tiling and microkernels are tuned for.  Convolutions go to the
linalg convolution ops (see below)."""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.attrs import DotDimensionNumbers
from xlair.dialect.ir import arith, complex_d, ir, linalg, math
from xlair.dialect.ops.reduction import dilated, resolve_padding
from xlair.dialect.types import BF16, F16, F32, Shape

from .elementwise import convert_scalar, convert_tensor
from .reduction import fitted_pads, pad_tensor, window_expr
from .registry import (affine_map, barrier, defining_op, empty, extract_slice, fill, generic, lowers, options,
                       reshape, scalar_const, set_compilation_info, set_cpu_tiles, value_of)
from .scalar import SCALAR
from .shape import transpose


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def _regroup(v: ir.Value, dims, groups, expand: bool = False) -> ir.Value:
    """Collapse (or expand back) consecutive dimension groups; empty groups add no dimension."""
    from xlair.dialect.ir import tensor
    from .registry import reassociation
    et = ir.RankedTensorType(v.type).element_type
    reassoc, i = [], 0
    for g in groups:
        if g:
            reassoc.append(list(range(i, i + len(g))))
            i += len(g)
    if all(len(r) == 1 for r in reassoc) and len(reassoc) == len(dims):
        return v
    collapsed = [_prod(dims[d] for d in r) for r in reassoc]
    if expand:
        return tensor.ExpandShapeOp(ir.RankedTensorType.get(list(dims), et), v, reassociation(reassoc), [],
                                    list(dims)).result
    return tensor.CollapseShapeOp(ir.RankedTensorType.get(collapsed, et), v, reassociation(reassoc)).result


_NAMED = {  # (batch, lhs free, rhs free) present -> linalg named op (by name: IREE's linalg
    # module is imported when a lowering first needs it, not by xlair-opt's start)
    (False, True, True): "matmul", (False, True, False): "matvec",
    (False, False, True): "vecmat", (False, False, False): "dot",
    (True, True, True): "batch_matmul", (True, True, False): "batch_matvec",
    (True, False, True): "batch_vecmat",
}


def lower_dot_general(lw, dn: DotDimensionNumbers):
    """Transpose to [batch, lhs free, contracting] x [batch, contracting, rhs free], collapse
    each group to one dimension (an empty group to none, so no unit dimensions appear), and
    contract with the named op for the groups present (matmul, matvec, vecmat, dot and their
    batch forms); complex types and the rest use a contraction generic.  F16 / BF16 operands
    of an F32 product stay as they are, summed in F32; F32 products on a target whose
    `f32_products` is bf16x3 are three BF16 products (`_bf16x3`)."""
    lhs_s, rhs_s, out = lw.shape("lhs"), lw.shape("rhs"), lw.result_shape
    et = out.element_type
    lb, rb = list(dn.lhs_batch_dimensions), list(dn.rhs_batch_dimensions)
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    lfree = [d for d in range(lhs_s.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs_s.rank) if d not in rb and d not in rc]
    nb, nm, nk, nn = len(lb), len(lfree), len(lc), len(rfree)
    k = _prod(lhs_s.dims[d] for d in lc)             # the contracted size
    if k == 0:                                        # an empty sum
        return fill(out, scalar_const(et, 0))
    has = (nb > 0, nm > 0, nn > 0)
    name = _NAMED.get(has) if nk > 0 and k > 1 and not et.is_complex else None   # (batch only: none)
    named = getattr(linalg, name) if name else None
    # the type the operands are multiplied in: the result's, or F16 / BF16 operands of an F32
    # result as they are (their products are exact in F32: the same sums, without converting)
    ot = lhs_s.element_type
    cet = ot if named is not None and et == F32 and ot in (F16, BF16) and rhs_s.element_type == ot else et
    # (the target's bf16_matmul_widened: Vulkan) BF16 operands or results: the product in F32,
    # each converted operand and the F32 product a dispatch of their own, so that no matmul
    # dispatch reads or writes a BF16 buffer
    widen = named is not None and options().desc.bf16_matmul_widened and BF16 in (ot, rhs_s.element_type, et)
    if widen:
        cet = F32
    lhs = _widened(lw.value("lhs"), lhs_s, cet, widen)
    rhs = _widened(lw.value("rhs"), rhs_s, cet, widen)
    lhs_t = _shared_transposed(lw, "lhs", transpose(lhs, lhs_s.with_type(cet), lb + lfree + lc), lhs)
    rhs_t = _shared_transposed(lw, "rhs", transpose(rhs, rhs_s.with_type(cet), rb + rc + rfree), rhs)
    ldims = [lhs_s.dims[d] for d in lb + lfree + lc]
    rdims = [rhs_s.dims[d] for d in rb + rc + rfree]
    if k == 1:
        # nothing to sum: a broadcast product over the output (IREE's data tiling breaks on
        # K = 1 contractions fed by reductions); its operands read from dispatches of their
        # own where the target's broadcast_product_barriers says so
        no = nb + nm + nn
        amap = affine_map(no, list(range(nb + nm)) + [None] * nk)
        bmap = affine_map(no, list(range(nb)) + [None] * nk + list(range(nb + nm, no)))
        mul = SCALAR["xla.mul"]
        if options().desc.broadcast_product_barriers:
            lhs_t, rhs_t = barrier(lhs_t), barrier(rhs_t)
        return generic([lhs_t, rhs_t], [amap, bmap], [empty(out)], [affine_map(no, list(range(no)))],
                       ["parallel"] * no, lambda x, y, _o: mul([x, y], [et, et], et))[0]
    a = _regroup(lhs_t, ldims, [range(nb), range(nb, nb + nm), range(nb + nm, nb + nm + nk)])
    b = _regroup(rhs_t, rdims, [range(nb), range(nb, nb + nk), range(nb + nk, nb + nk + nn)])
    odims = [ir.RankedTensorType(a.type).shape[0]] if nb else []
    if nm:
        odims.append(_prod(lhs_s.dims[d] for d in lfree))
    if nn:
        odims.append(_prod(rhs_s.dims[d] for d in rfree))
    # (the target's batch_m_multiple: ROCm) a small batched product's M padded with zero rows
    m_cut = None
    mult = options().desc.batch_m_multiple
    if named is not None and nb and nm and mult and odims[1] < 16 and odims[1] % mult:
        m_cut, m_pad = odims[1], -(-odims[1] // mult) * mult
        a_t = ir.RankedTensorType(a.type)
        a = pad_tensor(a, Shape.from_mlir(a_t), [(0, 0, 0), (0, m_pad - m_cut, 0), (0, 0, 0)],
                       scalar_const(cet, 0))
        odims = [odims[0], m_pad] + odims[2:]
    if named is not None:
        # F16 / BF16 products are summed in F32 and rounded once at the end, as XLA does (its
        # CPU backend computes them in F32); IREE's GPU codegen also fails on a BF16-accumulating
        # matmul ("'func.func' op failed to distribute", CUDA and ROCm)
        acc = F32 if widen or (cet in (F16, BF16) and (et == F32 or options().desc.f32_accumulation)) else et
        init = fill(Shape(acc, odims), scalar_const(acc, 0))
        if not widen and _in_bf16x3(lw, cet):
            res = _bf16x3(named, a, b, init)
        else:
            res = _product(named, a, b, init, cet, acc)
        if widen and acc != et:
            res = barrier(res)
        res = convert_tensor(res, Shape(acc, odims), et)
    else:
        init = fill(Shape(et, odims), scalar_const(et, 0))
        # loop dimensions: [b] [m] [n] [k], each present or not
        pos, i = {}, 0
        for key, present in (("b", nb), ("m", nm), ("n", nn), ("k", nk)):
            if present:
                pos[key] = i
                i += 1
        amap = affine_map(i, [pos[k] for k in ("b", "m", "k") if k in pos])
        bmap = affine_map(i, [pos[k] for k in ("b", "k", "n") if k in pos])
        omap = affine_map(i, [pos[k] for k in ("b", "m", "n") if k in pos])
        its = ["reduction" if k == "k" else "parallel" for k in pos]
        add, mul = SCALAR["xla.add"], SCALAR["xla.mul"]
        res = generic([a, b], [amap, bmap], [init], [omap], its,
                      lambda x, y, acc: add([acc, mul([x, y], [et, et], et)], [et, et], et))[0]
    if m_cut is not None:
        res = extract_slice(res, [0] * len(odims), [odims[0], m_cut] + odims[2:])
    res = _regroup(res, list(out.dims), [range(nb), range(nb, nb + nm), range(nb + nm, nb + nm + nn)],
                   expand=True)
    if named is not None and OWN in lw.op.attributes and ((nm and nn) or options().desc.bf16_matmul_widened):
        res = barrier(res)
    return res


def _bf16_parts(v: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """An F32 tensor as BF16 tensors: hi = bf16(v), lo = bf16(v - hi), which together hold 16
    of v's 24 significant bits, and hi with its infinities and NaNs as 0 (`fin`; lo is 0
    there too), for the products with the other operand's lo: an infinity in a cross term
    would meet that lo's zeros (inf * 0 = NaN where the exact product is infinite)."""
    t = ir.RankedTensorType(v.type)
    s = Shape.from_mlir(t)
    n = t.rank
    ident = affine_map(n, list(range(n)))
    zero = scalar_const(BF16, 0.0)

    def parts(x, _hi, _fin, _lo):
        hi = convert_scalar(x, F32, BF16)
        wide = convert_scalar(hi, BF16, F32)
        lo = convert_scalar(arith.subf(x, wide), F32, BF16)
        finite = arith.cmpf(arith.CmpFPredicate.ONE, math.absf(wide), scalar_const(F32, float("inf")))
        return [hi, arith.select(finite, hi, zero), arith.select(finite, lo, zero)]
    hi, fin, lo = generic([v], [ident], [empty(s.with_type(BF16)) for _ in range(3)], [ident] * 3,
                          ["parallel"] * n, parts)
    return hi, fin, lo


def _in_bf16x3(lw, ct) -> bool:
    """Whether an op's F32 products (a dot's or a convolution's, summed in `ct`) are computed
    as three BF16 products (`_bf16x3`): the `products` option or the target's f32_products
    says bf16x3, and the op's precision config does not ask HIGHEST (XLA's full F32)."""
    return ct == F32 and options().f32_products == "bf16x3" and \
        "HIGHEST" not in (lw.attr("precision_config") or ())


def _bf16x3(named, a: ir.Value, b: ir.Value, init: ir.Value) -> ir.Value:
    """The F32 product a.b (`named(a, b, outs=[init])`: a matmul, a batch matmul or a
    convolution) as three BF16 products summed in F32, the small ones first:
    lo(a).hi(b) + hi(a).lo(b) + hi(a).hi(b) (lo.lo, below F32's precision, is left out; the
    cross terms take the finite high parts: an infinity or NaN is in the last term alone)."""
    (ahi, afin, alo), (bhi, bfin, blo) = _bf16_parts(a), _bf16_parts(b)
    res = init
    for x, y in ((alo, bfin), (afin, blo), (ahi, bhi)):
        res = _product(named, x, y, res, BF16, F32)
    return res


def _product(named, a: ir.Value, b: ir.Value, init: ir.Value, et, acc) -> ir.Value:
    """`named(a, b, outs=[init])`, its products in `et` summed in `acc`; a linalg.matmul
    [m, k] x [k, n] gets the target's tile sizes where they divide it (the CPU's AVX2 tiles,
    `_set_cpu_matmul_tiles`; the GPU's mma.sync tiles, `_set_mma_tiles`): the one place where a
    product's tiles are decided."""
    res = value_of(named(a, b, outs=[init]))
    if named is linalg.matmul:
        m, n = ir.RankedTensorType(res.type).shape
        k = ir.RankedTensorType(a.type).shape[1]
        _set_cpu_matmul_tiles(res.owner, m, n, k, et)
        _set_mma_tiles(res.owner, m, n, k, et, acc)
    return res


#: the discardable attribute mark_own_products sets on a product that is kept a dispatch of its own
OWN = "xlair.own_dispatch"


def _shared_transposed(lw, name: str, t: ir.Value, src: ir.Value) -> ir.Value:
    """An operand transposed for the product, kept out of its producer's dispatch (CPU) when
    the operand is read by other ops too.  IREE otherwise fuses the transpose and the data
    tiling's set_encoding into the producer as a second result and fails: "One or more
    operations with large vector sizes (32768 bytes) were found" (the attention probabilities
    of a flax SelfAttention under jax.grad, read by p @ v and, transposed, by the gradient of v)."""
    if t is src or not options().desc.cpu_kernels or sum(1 for _ in lw.value(name).uses) < 2:
        return t
    return barrier(t)


def _forks(v: ir.Value) -> bool:
    """Whether a value, or a value computed from it by a chain of element-wise ops, is read by
    more than one op."""
    from xlair.dialect.core import lookup
    for _ in range(256):
        uses = [getattr(u.owner, "operation", u.owner) for u in v.uses]
        if len(uses) != 1:
            return len(uses) > 1
        d = lookup(uses[0].name)
        if d is None or d.family != "elementwise" or len(uses[0].results) != 1:
            return False
        v = uses[0].results[0]
    return False


def _holds_bf16(module: ir.Module) -> bool:
    """Whether an op of the module reads or makes a BF16 tensor."""
    found = []

    def visit(op):
        op = getattr(op, "operation", op)
        if any("bf16" in str(v.type) for v in (*op.operands, *op.results)):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return bool(found)


def mark_own_products(module: ir.Module) -> None:
    """Marks (OWN) each Dot / DotGeneral whose product lower_dot_general keeps a dispatch of
    its own, before any op is lowered (the patterns run in no fixed order, so a lowering cannot
    see its users as xla ops).  By the target's description:
    - cpu_kernels: a product that feeds a chain of element-wise ops that forks.  On the CPU,
      IREE's data tiling fuses such a chain into the matmul's dispatch as one multi-result
      element-wise op and sizes its result tiles on the stack: "'func.func' op exceeded stack
      allocation limit of 32768 bytes" (an optax Adam update of a 784x256 weight gradient:
      116 KB for two results, 231 KB for three; a flax Dense 128->512 and gelu under jax.grad:
      100 KB).  A chain that does not fork (bias, activation) still fuses into the matmul.
    - bf16_matmul_widened: every product of a module that holds BF16 tensors.  IREE's SPIR-V
      code cannot read or write BF16 in a matmul's dispatch ("failed to legalize operation
      'vector.bitcast'"), and it fuses element-wise consumers into the matmul, with the BF16
      reads of their other operands (JAX's nn_test testDotProductAttentionBiasGradient on
      xlair_vulkan: a BF16 bias converted and added to the scaled F32 scores)."""
    desc = options().desc
    bf16 = desc.bf16_matmul_widened and _holds_bf16(module)
    if not (desc.cpu_kernels or bf16):
        return
    unit = ir.UnitAttr.get(module.context)

    def visit(op):
        op = getattr(op, "operation", op)
        if op.name in ("xla.dot_general", "xla.dot") and (bf16 or (desc.cpu_kernels and _forks(op.results[0]))):
            op.attributes[OWN] = unit
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)


@lowers("xla.dot")
def lower_dot(lw):
    lhs = lw.shape("lhs")
    return lower_dot_general(lw, DotDimensionNumbers((lhs.rank - 1,), (0,)))


@lowers("xla.dot_general")
def lower_dot_general_op(lw):
    return lower_dot_general(lw, lw.attr("dimension_numbers"))


# ----------------------------------------------------------------------------------------
# convolutions
# ----------------------------------------------------------------------------------------
# Operands are brought to a channels-last form, lhs [N, spatial..., C] (padded and dilated
# with zeros: tensor.pad, or a strided insert for lhs dilation), rhs [spatial..., I, O]; then
#   groups 1               -> linalg.conv_{1d_nwc_wcf, 2d_nhwc_hwcf, 3d_ndhwc_dhwcf}
#   depthwise (I == 1)     -> linalg.depthwise_conv_{1d_nwc_wc(m), 2d_nhwc_hwc(m), 3d_ndhwc_dhwc(m)}
#   other feature groups   -> linalg.conv_2d_nhwgc_gfhwc (2-D)
# with strides and rhs dilation as the named ops' attributes; the spec's default layout
# [N, C, spatial...] x [O, I, spatial...] with groups 1 goes to conv_{1d_ncw_fcw,
# 2d_nchw_fchw, 3d_ncdhw_fcdhw} without transposes.  Batch groups, complex numbers and other
# spatial ranks use one linalg.generic.  f16/bf16 accumulate in f32.
_CONV_NAMED = {1: "conv_1d_nwc_wcf", 2: "conv_2d_nhwc_hwcf", 3: "conv_3d_ndhwc_dhwcf"}
_CONV_NCHW = {1: "conv_1d_ncw_fcw", 2: "conv_2d_nchw_fchw", 3: "conv_3d_ncdhw_fcdhw"}
_DEPTHWISE = {1: "depthwise_conv_1d_nwc_wc", 2: "depthwise_conv_2d_nhwc_hwc", 3: "depthwise_conv_3d_ndhwc_dhwc"}


def _conv_args(lw):
    from xlair.dialect.ops.contraction import default_conv_numbers
    lhs_s = lw.shape("lhs")
    name = lw.op.name
    n = lhs_s.rank - 2
    dn = lw.attr("dimension_numbers") if name == "xla.conv_general_dilated" else default_conv_numbers(lhs_s.rank)
    ones = (1,) * n
    ld = lw.attr("lhs_dilation") if name != "xla.conv" else ones
    rd = lw.attr("rhs_dilation") if name != "xla.conv" else ones
    st = lw.attr("window_strides")
    base = [lhs_s.dims[d] for d in dn.input_spatial_dimensions]
    window = [lw.shape("rhs").dims[d] for d in dn.kernel_spatial_dimensions]
    pads = resolve_padding(lw.attr("padding"), base, window, st, ld, rd)
    return dn, list(st), list(pads), list(ld), list(rd), lw.attr("feature_group_count"), lw.attr("batch_group_count")


@lowers("xla.conv", "xla.conv_with_general_padding", "xla.conv_general_dilated")
def lower_conv(lw):
    dn, st, pads, ld, rd, fgc, bgc = _conv_args(lw)
    lhs_s, rhs_s, out = lw.shape("lhs"), lw.shape("rhs"), lw.result_shape
    et = out.element_type
    ct = F32 if et in (F16, BF16) else et                  # what the products are summed in
    n = lhs_s.rank - 2
    zero = scalar_const(ct, 0)
    if out.size == 0:
        return fill(out, scalar_const(et, 0))
    own = options().desc.conv_convert_dispatch
    lhs = _widened(lw.value("lhs"), lhs_s, ct, own)
    rhs = _widened(lw.value("rhs"), rhs_s, ct, own)
    lhs_s, rhs_s = lhs_s.with_type(ct), rhs_s.with_type(ct)
    isp, ksp, osp = list(dn.input_spatial_dimensions), list(dn.kernel_spatial_dimensions), list(dn.output_spatial_dimensions)
    osz = [out.dims[d] for d in osp]
    base = [lhs_s.dims[d] for d in isp]
    pads = fitted_pads(base, pads, ld, osz, [rhs_s.dims[d] for d in ksp], st, rd)
    sp_pad = [(lo, hi, d - 1) for (lo, hi), d in zip(pads, ld)]
    named = not ct.is_complex and 1 <= n <= 3
    if (named and fgc == 1 and bgc == 1 and [dn.input_batch_dimension, dn.input_feature_dimension] + isp == list(range(n + 2))
            and [dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension] + ksp == list(range(n + 2))
            and [dn.output_batch_dimension, dn.output_feature_dimension] + osp == list(range(n + 2))):
        x = pad_tensor(lhs, lhs_s, [(0, 0, 0)] * 2 + sp_pad, zero)
        acc = fill(out.with_type(ct), zero)
        res = _conv_named(lw, getattr(linalg, _CONV_NCHW[n]), x, rhs, acc, ct, st, rd)
        return convert_tensor(res, out.with_type(ct), et)
    # channels last
    lperm = [dn.input_batch_dimension] + isp + [dn.input_feature_dimension]
    rperm = ksp + [dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension]
    x = transpose(lhs, lhs_s, lperm)
    xs = Shape(ct, [lhs_s.dims[d] for d in lperm])
    x = pad_tensor(x, xs, [(0, 0, 0)] + sp_pad + [(0, 0, 0)], zero)
    xs = xs.with_dims([xs.dims[0]] + [lo + dilated(s, d) + hi for s, (lo, hi), d in zip(xs.dims[1:-1], pads, ld)]
                      + [xs.dims[-1]])
    w = transpose(rhs, rhs_s, rperm)
    ws = Shape(ct, [rhs_s.dims[d] for d in rperm])
    N, C = xs.dims[0], xs.dims[-1]
    K, I, O = list(ws.dims[:n]), ws.dims[n], ws.dims[n + 1]
    cl_out = Shape(ct, [out.dims[dn.output_batch_dimension]] + osz + [O])   # [N', spatial..., O]
    res = None
    if named and bgc == 1 and fgc == 1 and options().desc.conv_patches and _patches_pay(N, osz, K, C, options().vectors):
        res = _conv_as_matmul(x, xs, w, ws, cl_out, st, rd)
    elif named and bgc == 1 and fgc == 1:
        wide = _padded_features(O)
        if wide != O:
            w = pad_tensor(w, ws, [(0, 0, 0)] * (n + 1) + [(0, wide - O, 0)], zero)
        acc = fill(cl_out.with_dims(list(cl_out.dims[:-1]) + [wide]), zero)
        res = _conv_named(lw, getattr(linalg, _CONV_NAMED[n]), x, w, acc, ct, st, rd)
        if wide != O:
            res = pad_tensor(res, cl_out.with_dims(list(cl_out.dims[:-1]) + [wide]),
                             [(0, 0, 0)] * (n + 1) + [(0, O - wide, 0)], zero)
    elif named and bgc == 1 and I == 1 and not (options().desc.depthwise_3d_generic and n == 3 and O != fgc):
        # depthwise: every group one input feature.  (IREE 3.13's SPIR-V code for
        # depthwise_conv_3d_ndhwc_dhwcm leaves half the outputs zero: the generic there.)
        M = O // fgc
        if M == 1:
            wk = reshape(w, K + [C])
            acc = fill(cl_out, zero)
            res = value_of(getattr(linalg, _DEPTHWISE[n])(x, wk, outs=[acc], strides=st, dilations=rd))
        else:
            wk = reshape(w, K + [C, M])
            acc = fill(Shape(ct, [N] + osz + [C, M]), zero)
            res = value_of(getattr(linalg, _DEPTHWISE[n] + "m")(x, wk, outs=[acc], strides=st, dilations=rd))
            res = reshape(res, cl_out.dims)
    elif named and bgc == 1 and n == 2:                    # grouped 2-D convolution
        G, F = fgc, O // fgc
        xg = reshape(x, list(xs.dims[:-1]) + [G, C // G])
        wg = transpose(reshape(w, K + [I, G, F]), Shape(ct, K + [I, G, F]), [3, 4, 0, 1, 2])   # [G, F, kh, kw, I]
        acc = fill(Shape(ct, [N] + osz + [G, F]), zero)
        res = value_of(linalg.conv_2d_nhwgc_gfhwc(xg, wg, outs=[acc], strides=st, dilations=rd))
        res = reshape(res, cl_out.dims)
    if res is None:
        res = _conv_generic(x, xs, w, ws, cl_out, st, rd, fgc, bgc)
    res = convert_tensor(res, cl_out, et)
    order = [dn.output_batch_dimension] + osp + [dn.output_feature_dimension]
    return transpose(res, cl_out.with_type(et), [order.index(j) for j in range(n + 2)])


def _conv_named(lw, op, x: ir.Value, w: ir.Value, acc: ir.Value, ct, st, rd) -> ir.Value:
    """A named convolution of groups 1 (`op`) summed in `ct`, its F32 products as three BF16
    products where the op is computed so (`_in_bf16x3`: the tensor cores then run it, as
    XLA:GPU runs an F32 convolution at DEFAULT precision in TF32)."""
    def conv(a, b, outs):
        return op(a, b, outs=outs, strides=st, dilations=rd)
    if _in_bf16x3(lw, ct):
        return _bf16x3(conv, x, w, acc)
    return value_of(conv(x, w, [acc]))


#: the most bytes of patches a convolution is lowered through (see _patches_pay)
MAX_PATCH_BYTES = 64 << 20


def _patches_pay(N: int, out_spatial, window, C: int, vectors: str = "512") -> bool:
    """Whether a convolution runs as a matmul over patches (_conv_as_matmul), the patches at most
    MAX_PATCH_BYTES (f32): when its window covers at least as many positions as its output has,
    the form of JAX's weight gradients (the window is the image, the output the kernel: IREE's
    convolution codegen ran a 16x28x28x32 -> 64 3x3 weight gradient at ~2.5 GFLOP/s, 94 ms
    against XLA:CPU's 11.6); when it has few input features (C < 4: an image model's first
    layer); and always on a CPU whose vectors are 256 bits (`vectors=256`, no AVX-512), where
    IREE's convolution code is 2-4x slower than the patches' matmul.  Measured (AMD Zen 4, code
    for x86-64-v3 / for znver4), ms a call: conv2d 1x56x56x64 3x3x64x64 4.28 -> 1.85 (znver4:
    named 1.14, patches 1.54); cnn_forward 0.257 -> 0.068 (znver4 0.127 -> 0.046, its first
    layer of 1 feature); cnn_sgd_step 1.03 -> 0.34; resnet_block_train 0.383 -> 0.161 (znver4
    named 0.147, patches 0.163); resnet_block_eval 0.197 -> 0.073 (bench/NOTES.md section 19)."""
    q, k = _prod(out_spatial), _prod(window)
    if N * q * k * C * 4 > MAX_PATCH_BYTES:
        return False
    return k >= q or C < 4 or vectors == "256"


def _conv_as_matmul(x, xs: Shape, w, ws: Shape, out: Shape, st, rd) -> ir.Value:
    """A channels-last convolution (lhs [N, P..., C] padded, rhs [K..., C, O], result
    [N, Q..., O]) as patches[n, q..., k..., c] = lhs[n, q * st + k * rd, c] and one matmul
    [N * Q, K * C] x [K * C, O]: each output element sums the same products in the same
    order (window position, then feature)."""
    n = len(st)
    ct = out.element_type
    N, C = xs.dims[0], xs.dims[-1]
    K, O = list(ws.dims[:n]), ws.dims[n + 1]
    Q = list(out.dims[1:-1])
    loops = 1 + 2 * n + 1
    dq, dk = list(range(1, 1 + n)), list(range(1 + n, 1 + 2 * n))
    xmap = affine_map(loops, [0] + [window_expr(dq[i], dk[i], st[i], rd[i]) for i in range(n)] + [loops - 1])
    patches = generic([x], [xmap], [empty(Shape(ct, [N] + Q + K + [C]))], [affine_map(loops, list(range(loops)))],
                      ["parallel"] * loops, lambda a, _o: a)[0]
    a = reshape(patches, [N * _prod(Q), _prod(K) * C])
    b = reshape(w, [_prod(K) * C, O])
    res = _product(linalg.matmul, a, b, fill(Shape(ct, [N * _prod(Q), O]), scalar_const(ct, 0)), ct, ct)
    return reshape(res, out.dims)


#: The vector tile of an f32 matmul in AVX2 code (_set_cpu_matmul_tiles): 4 rows by 16 columns,
#: eight 256-bit accumulators, the B row loaded as two vectors and each A element broadcast.
AVX2_MATMUL_TILE = (4, 16)
#: The most result elements one workgroup of such a matmul computes.
MATMUL_GROUP_ELEMENTS = 4096
#: The most bytes of the B operand one workgroup reads (its K x columns panel): half the L2
#: cache of an AMD Zen 3 or Zen 4 core.
MATMUL_PANEL_BYTES = 512 * 1024


def _set_cpu_matmul_tiles(op: ir.Operation, m: int, n: int, k: int, et) -> None:
    """Give an f32 linalg.matmul [m, k] x [k, n] in AVX2 code (`vectors=256`) xlair's own tile
    sizes (registry set_cpu_tiles) where they divide the matmul; leave the rest to IREE.  A
    workgroup computes at most 64 rows by 256 columns.  IREE 3.13 tiles such a matmul 64x64
    per workgroup and 8x8 per vector tile (8 accumulators, each A element broadcast 8 times
    to 1 load of B): in x86-64-v3 code on an AMD Zen 4, 256x784x512 took
    1.35-1.55 ms (best rounds, 2 cores) and 784x256x512 1.53-1.58, where a 4x16 vector tile
    (8 accumulators, 4 broadcasts to 2 loads) in workgroups that divide the matmul, with a B
    panel within MATMUL_PANEL_BYTES, took 1.22-1.26 and 1.12-1.14 (XLA:CPU with AVX2 1.26-1.27;
    bench/NOTES.md section 26).  A 4x16 tile in 64x64 workgroups that do not divide 784 rows
    took 4.3 ms, so sizes that do not divide are left to IREE.  Only matmuls below
    the CPU's data_tiling_work (lowering/targets.py): IREE does not data-tile an op that carries a compilation_info, and its
    micro-kernel is the faster one from there (1024^3: 12.2 ms tiled, 21.5-22.7 with these
    tiles)."""
    opts = options()
    tm, tn = AVX2_MATMUL_TILE
    if not opts.desc.cpu_kernels or opts.vectors != "256" or et != F32 or m % tm or n % tn \
            or m * n * k >= opts.desc.data_tiling_work or k == 0:
        return
    wn = max(d for d in range(tn, min(n, 256) + 1, tn)
             if n % d == 0 and (k * d * 4 <= MATMUL_PANEL_BYTES or d == tn))
    wm = max(d for d in range(tm, min(m, 64) + 1, tm)
             if m % d == 0 and (d * wn <= MATMUL_GROUP_ELEMENTS or d == tm))
    set_cpu_tiles(op, f"distribution = [{wm}, {wn}, 0], vector_common_parallel = [{tm}, {tn}, 0], "
                  "vector_reduction = [0, 0, 1]", "DoubleTilingExpert")


#: NVIDIA's mma.sync tile (rows, columns, K) and IREE's name for it, by operand type
_MMA = {BF16: (16, 8, 16, "NV_MMA_SYNC_F32_16x8x16_BF16"), F16: (16, 8, 16, "NV_MMA_SYNC_F32_16x8x16_F16")}


def _set_mma_tiles(op: ir.Operation, m: int, n: int, k: int, et, acc) -> None:
    """Give a BF16 / F16 linalg.matmul [m, k] x [k, n] summed in F32 the target's mma_tiles
    (lowering/targets.py) where they divide it: a workgroup of `threads` (warps two rows of
    warps by the rest) computes rows x columns of the result, K at a time, with IREE's
    TileAndFuse pipeline on mma.sync and its operands promoted to workgroup memory, as IREE's
    own configuration does with its own sizes."""
    tiles = options().desc.mma_tiles
    if tiles is None or et not in _MMA or acc != F32:
        return
    wm, wn, wk, threads, stages = tiles
    im, inn, ik, kind = _MMA[et]
    warps = threads // 32
    wy = 2 if warps > 1 else 1
    wx = warps // wy
    if m % wm or n % wn or k % wk or wm % (wy * im) or wn % (wx * inn) or wk % ik:
        return
    set_compilation_info(
        op, f"#iree_gpu.lowering_config<{{convert_acc_gemm, mma_kind = #iree_gpu.mma_layout<{kind}>, "
            f"promote_operands = [0, 1], reduction = [0, 0, {wk // ik}], subgroup = [{wm // (wy * im)}, "
            f"{wn // (wx * inn)}, 0], workgroup = [{wm}, {wn}, 0]}}>",
        f"#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [{threads}, 1, 1] "
        f"subgroup_size = 32, {{gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = {stages}, "
        "no_reduce_shared_memory_bank_conflicts = false, use_igemm_convolution = false>}>")


def _padded_features(O: int) -> int:
    """The output features a channels-last convolution is computed with (the target's
    conv_feature_multiple).  On ROCm, IREE 3.13's
    implicit-GEMM path pads a feature count that is not a multiple of 16 up to its MFMA tile,
    and LLVM's AMDGPULowerBufferFatPointers then crashes on some shapes (a ResNet block's 8
    features over 4x10x10: 12 of 60 shapes swept, docs/iree-limits.md); computed with zero
    weights up to a multiple of 16 and cut back, none of the 60 crashed."""
    k = options().desc.conv_feature_multiple
    if k > 1 and O > 4 and O % k:
        return -(-O // k) * k
    return O


def _widened(x: ir.Value, s: Shape, ct, own: bool) -> ir.Value:
    """A contraction's operand converted to the type the products are computed in.  With `own`
    a converted operand stays a dispatch of its own: for convolutions on the targets whose
    conv_convert_dispatch is set (IREE's SPIR-V codegen folds the conversion into the
    convolution and gets it wrong: u8 -> f32, and f16 -> f32 at strides (2, 3), wrong sums
    measured on lavapipe), and for BF16 matmuls where bf16_matmul_widened is."""
    y = convert_tensor(x, s, ct)
    if own and y is not x:
        y = barrier(y)
    return y


def _conv_generic(x, xs: Shape, w, ws: Shape, out: Shape, st, rd, fgc, bgc):
    """Any convolution as one linalg.generic over (n, out spatial..., g, o | kernel spatial..., c)
    with G = feature or batch groups: lhs [N, P..., G, C/G] or [G, N/G, P..., C],
    rhs [K..., I, G, O/G], result [N', Q..., G, O/G]."""
    n = len(st)
    ct = out.element_type
    N, C = xs.dims[0], xs.dims[-1]
    K, I, O = list(ws.dims[:n]), ws.dims[n], ws.dims[n + 1]
    P = list(xs.dims[1:-1])
    Q = list(out.dims[1:-1])
    G = max(fgc, bgc)
    if bgc > 1:
        xg = reshape(x, [G, N // G] + P + [C])
    else:
        xg = reshape(x, [N] + P + [G, C // G])
    wg = reshape(w, K + [I, G, O // G])
    loops = 1 + n + 2 + n + 1
    dn_, dq, dg, do = 0, list(range(1, 1 + n)), 1 + n, 2 + n
    dk, dc = list(range(3 + n, 3 + 2 * n)), 3 + 2 * n
    sp = [window_expr(dq[i], dk[i], st[i], rd[i]) for i in range(n)]
    xmap = affine_map(loops, ([dg, dn_] + sp + [dc]) if bgc > 1 else ([dn_] + sp + [dg, dc]))
    wmap = affine_map(loops, dk + [dc, dg, do])
    omap = affine_map(loops, [dn_] + dq + [dg, do])
    acc = fill(Shape(ct, [out.dims[0]] + Q + [G, O // G]), scalar_const(ct, 0))
    add, mul = SCALAR["xla.add"], SCALAR["xla.mul"]

    def body(a, b, c):
        return add([c, mul([a, b], [ct, ct], ct)], [ct, ct], ct)
    res = generic([xg, wg], [xmap, wmap], [acc], [omap], ["parallel"] * (3 + n) + ["reduction"] * (n + 1), body)[0]
    return reshape(res, out.dims)


# ----------------------------------------------------------------------------------------
# transpose(dot) -> the transposed product (an xla-to-xla rewrite run by xla-simplify)
# ----------------------------------------------------------------------------------------
def transposed_dot_dims(dn: DotDimensionNumbers, lhs_rank: int, rhs_rank: int, perm) -> DotDimensionNumbers | None:
    """The dimension numbers of dot_general(rhs, lhs) whose result is transpose(dot_general(lhs,
    rhs), perm), or None when `perm` is not such a transpose.  A dot_general's result is
    [batch, lhs free, rhs free]; with the operands swapped it is [batch, rhs free, lhs free],
    so the permutations this covers keep the batch dimensions first and swap the two free
    groups, each group in its own order (a matrix product's [1, 0] among them)."""
    nb = len(dn.lhs_batch_dimensions)
    nm = lhs_rank - nb - len(dn.lhs_contracting_dimensions)
    nn = rhs_rank - nb - len(dn.rhs_contracting_dimensions)
    if nm == 0 or nn == 0:
        return None
    if list(perm) != list(range(nb)) + list(range(nb + nm, nb + nm + nn)) + list(range(nb, nb + nm)):
        return None
    return DotDimensionNumbers(dn.rhs_contracting_dimensions, dn.lhs_contracting_dimensions,
                               dn.rhs_batch_dimensions, dn.lhs_batch_dimensions)


def _swapped_dot(src, perm):
    """The attributes of dot_general(b, a) equal to transpose(src, perm) for the dot `src` =
    dot(a, b) (see transposed_dot_dims), or None when there is no such product."""
    from xlair.dialect.core import lookup
    lhs, rhs = src.operands[0], src.operands[1]
    lrank, rrank = ir.RankedTensorType(lhs.type).rank, ir.RankedTensorType(rhs.type).rank
    dn_param = next(p for p in lookup("xla.dot_general").attr_params if p.name == "dimension_numbers")
    if src.name == "xla.dot":
        dn = DotDimensionNumbers((max(lrank - 1, 0),), (0,))
    else:
        dn = dn_param.attr.from_attr(src.attributes["dimension_numbers"])
    swapped = transposed_dot_dims(dn, lrank, rrank, perm)
    if swapped is None:
        return None
    attrs = {"dimension_numbers": dn_param.attr.to_attr(swapped)}
    if "preferred_element_type" in src.attributes:
        attrs["preferred_element_type"] = src.attributes["preferred_element_type"]
    return attrs


def _only_use(v) -> bool:
    return sum(1 for _ in v.uses) == 1


def _sink_transpose(op, rewriter, src, perm) -> bool:
    """transpose(f(x1, ..., xn)) -> f(transpose(x1), ..., transpose(xn)) for an element-wise f
    (operands of the result's shape, the transpose its only use) of which some xi is a
    foldable product: the transposes of the products then fold into them.  JAX's Cholesky
    transposes (a @ a.T + c * eye) this way; with the transpose outside the sum, IREE fuses
    transpose, matmul and the iota-built addend into one dispatch and crashes in
    MaterializeDeviceEncodingPass with data tiling on (regression test:
    test_materialize_device_encoding_crash_transposed_matmul_plus_iota)."""
    from xlair.dialect.core import lookup
    d = lookup(src.name) if src.name.startswith("xla.") else None
    if d is None or d.family != "elementwise" or len(src.results) != 1 or not _only_use(src.results[0]):
        return True
    dims = list(ir.RankedTensorType(src.results[0].type).shape)
    if any(list(ir.RankedTensorType(v.type).shape) != dims for v in src.operands):
        return True
    if "broadcast_dimensions" in src.attributes and \
            list(ir.DenseI64ArrayAttr(src.attributes["broadcast_dimensions"])) not in ([], list(range(len(dims)))):
        return True
    dots = [o for o in map(defining_op, src.operands)
            if o is not None and o.name in ("xla.dot_general", "xla.dot") and _only_use(o.results[0])
            and _swapped_dot(o, perm) is not None]
    if not dots:
        return True
    attrs = {a.name: a.attr for a in src.attributes}
    with rewriter.ip, op.location:
        ins = []
        for v in src.operands:
            t = ir.RankedTensorType(v.type)
            tt = ir.RankedTensorType.get([t.shape[p] for p in perm], t.element_type)
            ins.append(ir.Operation.create("xla.transpose", results=[tt], operands=[v],
                                           attributes={"permutation": op.attributes["permutation"]},
                                           loc=op.location).results[0])
        new = ir.Operation.create(src.name, results=[op.results[0].type], operands=ins, attributes=attrs,
                                  loc=src.location)
    rewriter.replace_op(op, [new.results[0]])
    rewriter.erase_op(src)
    return False


def fold_transpose_of_dot(op, rewriter):
    """transpose(dot_general(a, b)) -> dot_general(b, a) when that is the same array (see
    transposed_dot_dims) and the transpose is the product's only use.  JAX's gradients emit
    this pair for every weight gradient; lowered as it stands, IREE fuses the linalg.transpose
    into the matmul's dispatch, reads the result tile transposed, and on the CPU fails with
    "exceeded stack allocation limit" (regression test:
    test_exceeded_stack_allocation_limit_transposed_matmul).  A transpose of an element-wise
    op of such a product is first moved onto the operands (_sink_transpose)."""
    src = defining_op(op.operands[0])
    perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    if src is None:
        return True
    if src.name not in ("xla.dot_general", "xla.dot"):
        return _sink_transpose(op, rewriter, src, perm)
    if not _only_use(src.results[0]):
        return True
    attrs = _swapped_dot(src, perm)
    if attrs is None:
        return True
    with rewriter.ip:
        new = ir.Operation.create("xla.dot_general", results=[op.results[0].type],
                                  operands=[src.operands[1], src.operands[0]], attributes=attrs, loc=src.location)
    rewriter.replace_op(op, [new.results[0]])
    rewriter.erase_op(src)
    return False
