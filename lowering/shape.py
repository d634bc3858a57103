"""Lowering of the data-movement ops (mirrors dialect/ops/shape.py)."""
from __future__ import annotations

import numpy as np

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.attrs import literal_value
from xlair.dialect.ir import arith, ir, linalg, tensor
from xlair.dialect.types import S64, Shape

from .elementwise import convert_scalar
from .registry import (affine_map, barrier, broadcast_scalar, builtin_type, complex_fill, empty, extract_scalar,
                       extract_slice, fill, generic, index, is_constant_scalar, insert_slice, loop_index, lowers,
                       options, reassociation, reshape, value_of)


def dense_attr(array: np.ndarray, t: ir.Type) -> ir.Attribute:
    data = np.asarray(array, order="C")
    if data.dtype == np.bool_:
        data = data.astype(np.uint8)
    return ir.Attribute.parse(f'dense<"0x{data.tobytes().hex()}"> : {t}')


@lowers("xla.constant")
def lower_constant(lw):
    value = literal_value(lw.op.attributes["value"])
    return arith.ConstantOp(lw.result_type, dense_attr(value, lw.result_type)).result


@lowers("xla.iota")
def lower_iota(lw):
    out = lw.result_shape
    dim = lw.attr("iota_dimension")
    i64 = ir.IntegerType.get_signless(64)

    def body(_o):
        i = arith.index_cast(i64, loop_index(dim))
        return convert_scalar(i, S64, out.element_type)
    n = out.rank
    return generic([], [], [empty(out)], [affine_map(n, list(range(n)))], ["parallel"] * n, body)[0]


def broadcast_in_dim(x: ir.Value, src: Shape, out: Shape, bdims) -> ir.Value:
    """Broadcast `x` (shape src) to `out`, operand dim i landing on out dim bdims[i].  A complex
    constant scalar is a fill (complex_fill): broadcast, IREE 3.13 has no splat of it but a
    dispatch without operands, and where several arrays that start from it are updated in
    place (a scan's stacked complex outputs, in a loop's peeled trip) it copies it for each by
    running that dispatch again, then CSE merges the copies back into one buffer that every
    update writes (jax.experimental.ode's complex gradients wrong; docs/iree-limits.md)."""
    if src.rank == 0 and out.element_type.is_complex and options().desc.complex_constant_fills and \
            is_constant_scalar(x):
        return complex_fill(out, x)
    expanding = any(src.dims[i] == 1 and out.dims[d] != 1 for i, d in enumerate(bdims))
    if not expanding and list(bdims) == sorted(bdims):
        if src.rank == out.rank:
            return x
        added = [d for d in range(out.rank) if d not in bdims]
        return value_of(linalg.broadcast(x, outs=[empty(out)], dimensions=added))
    n = out.rank
    in_map = affine_map(n, [None if src.dims[i] == 1 and out.dims[d] != 1 else d
                            for i, d in enumerate(bdims)])
    return generic([x], [in_map], [empty(out)], [affine_map(n, list(range(n)))],
                   ["parallel"] * n, lambda a, _o: a)[0]


@lowers("xla.broadcast")
def lower_broadcast(lw):
    src, out = lw.shape("operand"), lw.result_shape
    k = out.rank - src.rank
    return broadcast_in_dim(lw.value("operand"), src, out, list(range(k, out.rank)))


@lowers("xla.broadcast_in_dim")
def lower_broadcast_in_dim(lw):
    return broadcast_in_dim(lw.value("operand"), lw.shape("operand"), lw.result_shape,
                            lw.attr("broadcast_dimensions"))


def transpose(x: ir.Value, src: Shape, perm) -> ir.Value:
    if list(perm) == list(range(len(perm))):
        return x
    out = Shape(src.element_type, [src.dims[p] for p in perm])
    return value_of(linalg.transpose(x, outs=[empty(out)], permutation=list(perm)))


@lowers("xla.transpose")
def lower_transpose(lw):
    return transpose(lw.value("operand"), lw.shape("operand"), lw.attr("permutation"))


@lowers("xla.reshape")
def lower_reshape(lw):
    x, src = lw.value("operand"), lw.shape("operand")
    dims = lw.attr("dimensions")
    if dims is not None:
        x = transpose(x, src, dims)
    return reshape(x, lw.result_shape.dims)


@lowers("xla.collapse")
def lower_collapse(lw):
    src = lw.shape("operand")
    dims = lw.attr("dimensions")
    groups, d = [], 0
    while d < src.rank:
        if d == dims[0]:
            groups.append(list(dims))
            d = dims[-1] + 1
        else:
            groups.append([d])
            d += 1
    return tensor.CollapseShapeOp(lw.result_type, lw.value("operand"), reassociation(groups)).result


@lowers("xla.rev")
def lower_rev(lw):
    src = lw.shape("operand")
    dims = set(lw.attr("dimensions"))
    n = src.rank
    x = lw.value("operand")
    if _strided_slice(x):
        # IREE fused the strided slice into the gather below and left a strided memref it could
        # not lower: "LLVM Translation failed for operation: builtin.unrealized_conversion_cast"
        # (x[::-2] in JAX: a strided Slice, then a Rev).  The slice stays a dispatch of its own.
        x = barrier(x)
    ident = affine_map(n, list(range(n)))

    # The element is read with tensor.extract rather than through an indexing map with a
    # reversed dimension: IREE's CPU codegen rejects a reversed dimension that ends up innermost
    # ("inferred input/output operand #0 has shape's dimension #0 to be greater than or equal
    # to 4, but found 3"), and a later transpose fused with the reverse can put it there
    # (transpose(rev(x, [0])), found by the fuzzer; with a consumer IREE 3.13 even crashed).
    def body(_o):
        idx = []
        for d in range(n):
            i = loop_index(d)
            idx.append(arith.subi(index(src.dims[d] - 1), i) if d in dims else i)
        return tensor.extract(x, idx)
    return generic([], [], [empty(src)], [ident], ["parallel"] * n, body)[0]


def _strided_slice(v: ir.Value) -> bool:
    """Whether `v` is a Slice with a stride other than 1 (as an xla op or already lowered)."""
    op = getattr(v.owner, "operation", v.owner)
    name = getattr(op, "name", "")
    if name == "xla.slice":
        strides = op.attributes["strides"] if "strides" in op.attributes else None
        return strides is not None and any(s != 1 for s in ir.DenseI64ArrayAttr(strides))
    if name == "tensor.extract_slice":
        return any(s != 1 for s in ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    return False


@lowers("xla.slice")
def lower_slice(lw):
    src = lw.shape("operand")
    starts = lw.attr("start_indices")
    strides = lw.attr("strides") or [1] * src.rank
    return extract_slice(lw.value("operand"), starts, lw.result_shape.dims, strides)


@lowers("xla.concatenate")
def lower_concatenate(lw):
    dim = lw.attr("dimension")
    out = lw.result_shape
    acc = empty(out)
    offset = 0
    for v, s in zip(lw.value("operands"), lw.shape("operands")):
        offsets = [0] * out.rank
        offsets[dim] = offset
        if s.size:
            acc = insert_slice(v, acc, offsets)
        offset += s.dims[dim]
    return acc


@lowers("xla.pad")
def lower_pad(lw):
    src, out = lw.shape("operand"), lw.result_shape
    x = lw.value("operand")
    pv = lw.value("padding_value")
    triples = lw.attr("padding_config").triples()
    if out.element_type.is_complex and src.size:
        return _pad_by_element(x, src, out, triples, pv)
    # a complex padding value broadcast on the device: extracted, IREE read it on the host and
    # failed ("'stream.yield' op used resource not listed in explicit captures": JAX's
    # convolution_matrix of complex64, linalg_test's testConvolutionMatrix)
    result = broadcast_scalar(out, pv) if out.element_type.is_complex else fill(out, extract_scalar(pv))
    lo_keep, counts, offsets, strides = [], [], [], []
    for d, (lo, _hi, interior) in enumerate(triples):
        step = interior + 1
        n = src.dims[d]
        j0 = (-lo + step - 1) // step if lo < 0 else 0     # first element not cut away
        j1 = min(n - 1, (out.dims[d] - 1 - lo) // step) if out.dims[d] > 0 else -1
        if j1 < j0:
            return result       # every element is cut away: all padding
        lo_keep.append(j0)
        counts.append(j1 - j0 + 1)
        offsets.append(lo + j0 * step)
        strides.append(step)
    if counts != list(src.dims):
        x = extract_slice(x, lo_keep, counts)
    return insert_slice(x, result, offsets, strides)


def _pad_by_element(x: ir.Value, src: Shape, out: Shape, triples, pv: ir.Value) -> ir.Value:
    """A pad as one generic over the result, each element the operand's element it shows or
    the padding value.  For complex types: padded as a broadcast of the value with the operand
    inserted into it, a pad of complex zeros after a loop over complex matrices came out wrong
    when read with the loop's result (IREE 3.13 on the CPU: the complex SVD's U, C128 5x3 and
    C64 4x3, docs/iree-limits.md); a complex broadcast is a dispatch of its own (no splat of
    its bits), whose buffer IREE then shared."""
    n = out.rank

    def body(p, _o):
        inside, at = None, []
        for d, (lo, _hi, interior) in enumerate(triples):
            step = interior + 1
            rel = arith.subi(loop_index(d), index(lo))         # the position among the dilated elements
            j = arith.divsi(rel, index(step)) if step > 1 else rel
            ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, rel, index(0)),
                            arith.cmpi(arith.CmpIPredicate.slt, j, index(src.dims[d])))
            if step > 1:
                ok = arith.andi(ok, arith.cmpi(arith.CmpIPredicate.eq, arith.remsi(rel, index(step)), index(0)))
            inside = ok if inside is None else arith.andi(inside, ok)
            at.append(arith.minsi(arith.maxsi(j, index(0)), index(src.dims[d] - 1)))
        if inside is None:                       # (rank 0)
            return tensor.extract(x, [])
        return arith.select(inside, tensor.extract(x, at), p)
    return generic([pv], [affine_map(n, [])], [empty(out)], [affine_map(n, list(range(n)))], ["parallel"] * n,
                   body)[0]
