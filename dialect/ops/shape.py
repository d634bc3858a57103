"""Ops that make, move or regroup data without arithmetic: Constant, Iota, Broadcast,
BroadcastInDim, Reshape, Collapse, Transpose, Rev, Slice, Concatenate, Pad, Tuple,
GetTupleElement."""
from __future__ import annotations

import numpy as np

from ..attrs import PADDING_CONFIG, Int, Ints, Literal, Optional, ShapeKind
from ..checks import XlaError
from ..core import Attr, OpDef, Operand, Operands, register
from ..types import PRED, Shape, element_type
from .dynamic import DynamicError
from .elementwise import convert_value


def _prod(xs) -> int:
    return int(np.prod(xs, dtype=np.int64)) if len(xs) else 1


# -- Constant ------------------------------------------------------------------------------
def _constant_infer(chk, value):
    try:
        et = element_type(value.dtype)
    except TypeError:
        chk.fail("value", "must have an XLA element type", str(value.dtype), cid="spec:Constant")
    return Shape(et, value.shape)


register(OpDef("Constant", (Attr("value", Literal()),), _constant_infer,
               lambda value, *, result: np.array(value), "shape", "Constant",
               takes_builder=True, doc="an array literal",
               constraints={
                   "spec:Constant": "value has an XLA element type",
               }))


# -- Iota ------------------------------------------------------------------------------------
def _iota_infer(chk, shape, iota_dimension=0):
    chk.array("shape", shape, cid="spec:Iota")
    if shape.element_type == PRED:
        chk.fail("type", "must be an integer, floating-point or complex type", shape.element_type,
                 cid="spec:Iota")
    if shape.rank == 0:
        chk.fail("shape", "must have rank >= 1", shape, cid="iota_c1")
    chk.dims_in_range("iota_dimension", [iota_dimension], shape.rank, "the shape's", cid="iota_c1")
    chk.non_negative("shape", shape.dims, cid="spec:Iota")
    return shape


def _iota_ref(shape, iota_dimension=0, *, result):
    idx = np.arange(shape.dims[iota_dimension], dtype=np.int64)
    view = [1] * shape.rank
    view[iota_dimension] = shape.dims[iota_dimension]
    return np.broadcast_to(convert_value(idx, shape.element_type).reshape(view), shape.dims).copy()


def _iota_bind(type_or_shape, size=None, iota_dimension=0):
    """iota(b, type, size) or iota(b, shape, iota_dimension)."""
    if isinstance(type_or_shape, Shape):
        if size is not None:
            iota_dimension = size
        return {"shape": type_or_shape, "iota_dimension": iota_dimension}
    if size is None:
        return {"shape": type_or_shape, "iota_dimension": iota_dimension}   # rejected by the rule
    return {"shape": Shape(type_or_shape, (size,)) if _is_int(size) else size,
            "iota_dimension": iota_dimension}


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


register(OpDef("Iota", (Attr("shape", ShapeKind()), Attr("iota_dimension", Int(), 0)),
               _iota_infer, _iota_ref, "shape", "Iota", bind=_iota_bind, takes_builder=True,
               doc="iota(b, type, size) or iota(b, shape, iota_dimension): 0, 1, 2, ... along a dimension",
               constraints={
                   "iota_c1": "`0 <= iota_dimension < rank(output)`",
                   "spec:Iota": "the shape is an array of rank >= 1 with non-negative dimensions, of "
                                "an integer, floating-point or complex type",
               }))


# -- Broadcast, BroadcastInDim ---------------------------------------------------------------
def _broadcast_infer(chk, operand, broadcast_sizes):
    chk.array("operand", operand, cid="spec:Broadcast")
    chk.non_negative("broadcast_sizes", broadcast_sizes, cid="spec:Broadcast")
    return Shape(operand.element_type, tuple(broadcast_sizes) + operand.dims)


def _broadcast_dynamic(ctx):
    """The operand's dynamic sizes move to the minor dimensions."""
    k = len(ctx.args["broadcast_sizes"])
    return {i + k: s for i, s in ctx.sizes("operand").items()}


register(OpDef("Broadcast", (Operand("operand"), Attr("broadcast_sizes", Ints())),
               _broadcast_infer,
               lambda operand, broadcast_sizes, *, result: np.broadcast_to(operand, result.dims).copy(),
               "shape", "Broadcast", doc="new major dimensions of copies of operand", dynamic=_broadcast_dynamic,
               constraints={
                   "spec:Broadcast": "operand is an array; broadcast_sizes are not negative",
               }))


def _bid_infer(chk, operand, out_dim_size, broadcast_dimensions):
    chk.array("operand", operand, cid="broadcast_in_dim_i1")
    chk.non_negative("out_dim_size", out_dim_size, cid="spec:BroadcastInDim")
    if len(broadcast_dimensions) != operand.rank:
        chk.fail("broadcast_dimensions", f"must have one entry per operand dimension ({operand})",
                 list(broadcast_dimensions), cid="broadcast_in_dim_c2")
    chk.dims_in_range("broadcast_dimensions", broadcast_dimensions, len(out_dim_size), "the output's",
                      cid="broadcast_in_dim_c3")
    chk.unique("broadcast_dimensions", broadcast_dimensions, cid="broadcast_in_dim_c4")
    for i, d in enumerate(broadcast_dimensions):
        if operand.dims[i] not in (1, out_dim_size[d]):
            chk.fail("operand", f"dimension {i} (size {operand.dims[i]}) must be 1 or "
                     f"out_dim_size[{d}] ({out_dim_size[d]})", operand, cid="broadcast_in_dim_c5")
    return Shape(operand.element_type, out_dim_size)


def _bid_ref(operand, out_dim_size, broadcast_dimensions, *, result):
    order = np.argsort(broadcast_dimensions)
    x = np.transpose(operand, order) if operand.ndim else operand
    view = [1] * len(out_dim_size)
    for i in order:
        view[broadcast_dimensions[i]] = operand.shape[i]
    return np.broadcast_to(x.reshape(view), out_dim_size).copy()


def _bid_dynamic(ctx):
    """Operand dimension i's dynamic size lands on broadcast_dimensions[i]."""
    bd = ctx.args["broadcast_dimensions"]
    return {bd[i]: s for i, s in ctx.sizes("operand").items()}


register(OpDef("BroadcastInDim", (Operand("operand"), Attr("out_dim_size", Ints()),
                                  Attr("broadcast_dimensions", Ints())),
               _bid_infer, _bid_ref, "shape", "BroadcastInDim",
               doc="broadcast to out_dim_size, operand dimension i landing on broadcast_dimensions[i]",
               dynamic=_bid_dynamic,
               constraints={
                   "broadcast_in_dim_i1": "`operand` is a tensor or quantized tensor",
                   "broadcast_in_dim_c2": "`size(broadcast_dimensions) = rank(operand)`",
                   "broadcast_in_dim_c3": "`0 <= broadcast_dimensions < rank(result)`",
                   "broadcast_in_dim_c4": "`is_unique(broadcast_dimensions)`",
                   "broadcast_in_dim_c5": "each operand dimension is 1 or the size of its result dimension",
                   "spec:BroadcastInDim": "out_dim_size is not negative",
               }))


# -- Reshape, Collapse, Transpose, Rev -------------------------------------------------------
def _reshape_infer(chk, operand, dimensions, new_sizes):
    chk.array("operand", operand, cid="reshape_i1")
    if dimensions is not None:
        chk.permutation("dimensions", dimensions, operand.rank, cid="spec:Reshape")
    chk.non_negative("new_sizes", new_sizes, cid="spec:Reshape")
    if _prod(new_sizes) != operand.size:
        chk.fail("new_sizes", f"must have as many elements as operand ({operand}, {operand.size})",
                 list(new_sizes), cid="reshape_c2")
    return Shape(operand.element_type, new_sizes)


def _reshape_ref(operand, dimensions, new_sizes, *, result):
    x = np.transpose(operand, dimensions) if dimensions is not None else operand
    return np.reshape(x, new_sizes).copy()


def _reshape_bind(operand, dimensions=None, new_sizes=None):
    """reshape(operand, new_sizes) or reshape(operand, dimensions, new_sizes)."""
    if new_sizes is None:
        dimensions, new_sizes = None, dimensions
    return {"operand": operand, "dimensions": dimensions, "new_sizes": new_sizes}


register(OpDef("Reshape", (Operand("operand"), Attr("dimensions", Optional(Ints()), None),
                           Attr("new_sizes", Ints())),
               _reshape_infer, _reshape_ref, "shape", "Reshape", bind=_reshape_bind,
               doc="reshape(operand, new_sizes) or reshape(operand, dimensions, new_sizes)",
               constraints={
                   "reshape_i1": "`operand` is a tensor or quantized tensor",
                   "reshape_c2": "`size(operand) = size(result)`",
                   "spec:Reshape": "dimensions (when given) is a permutation of the operand's; "
                                   "new_sizes are not negative",
               }))


def _collapse_infer(chk, operand, dimensions):
    chk.array("operand", operand, cid="spec:Collapse")
    chk.dims_in_range("dimensions", dimensions, operand.rank, cid="spec:Collapse")
    if not dimensions or list(dimensions) != list(range(dimensions[0], dimensions[0] + len(dimensions))):
        chk.fail("dimensions", "must be an in-order, consecutive subset of the operand's dimensions",
                 list(dimensions), cid="spec:Collapse")
    a, b = dimensions[0], dimensions[-1] + 1
    return Shape(operand.element_type, operand.dims[:a] + (_prod(operand.dims[a:b]),) + operand.dims[b:])


register(OpDef("Collapse", (Operand("operand"), Attr("dimensions", Ints())), _collapse_infer,
               lambda operand, dimensions, *, result: np.reshape(operand, result.dims).copy(),
               "shape", "Collapse", doc="merge consecutive dimensions into one",
               constraints={
                   "spec:Collapse": "dimensions are an in-order, consecutive subset of the operand's "
                                    "dimensions",
               }))


def _transpose_infer(chk, operand, permutation):
    chk.array("operand", operand, cid="transpose_i1")
    chk.permutation("permutation", permutation, operand.rank, cid="transpose_c2")
    return Shape(operand.element_type, [operand.dims[p] for p in permutation])


def _transpose_dynamic(ctx):
    """The dynamic sizes move with their dimensions."""
    d = ctx.sizes("operand")
    return {i: d[p] for i, p in enumerate(ctx.args["permutation"]) if p in d}


register(OpDef("Transpose", (Operand("operand"), Attr("permutation", Ints())), _transpose_infer,
               lambda operand, permutation, *, result: np.transpose(operand, permutation).copy(),
               "shape", "Transpose", doc="permute dimensions: output dim i is operand dim permutation[i]",
               dynamic=_transpose_dynamic,
               constraints={
                   "transpose_i1": "`operand` is a tensor or quantized tensor",
                   "transpose_c2": "`permutation` is a permutation of `range(rank(operand))`",
               }))


def _rev_infer(chk, operand, dimensions):
    chk.array("operand", operand, cid="reverse_i1")
    chk.dims_in_range("dimensions", dimensions, operand.rank, cid="reverse_c3")
    chk.unique("dimensions", dimensions, cid="reverse_c2")
    return operand


register(OpDef("Rev", (Operand("operand"), Attr("dimensions", Ints())), _rev_infer,
               lambda operand, dimensions, *, result: np.flip(operand, tuple(dimensions)).copy(),
               "shape", "Rev (reverse)", doc="reverse the order of elements along dimensions",
               constraints={
                   "reverse_i1": "`operand` is a tensor or per-tensor quantized tensor",
                   "reverse_c2": "`is_unique(dimensions)`",
                   "reverse_c3": "`0 <= dimensions < rank(result)`",
               }))


# -- Slice, Concatenate, Pad -----------------------------------------------------------------
def _slice_infer(chk, operand, start_indices, limit_indices, strides=None):
    chk.array("operand", operand, cid="slice_i1")
    n = operand.rank
    chk.length("start_indices", start_indices, n, f"one per dimension of {operand}", cid="slice_c2")
    chk.length("limit_indices", limit_indices, n, f"one per dimension of {operand}", cid="slice_c2")
    strides = strides if strides is not None else (1,) * n
    chk.length("strides", strides, n, f"one per dimension of {operand}", cid="slice_c2")
    chk.non_negative("start_indices", start_indices, cid="slice_c3")
    chk.positive("strides", strides, cid="slice_c4")
    out = []
    for i, (s, l, st) in enumerate(zip(start_indices, limit_indices, strides)):
        if l < s:
            chk.fail("limit_indices", f"must be >= start_indices ({list(start_indices)})", list(limit_indices),
                     cid="slice_c3")
        if l > operand.dims[i]:
            chk.fail("limit_indices", f"must be <= the operand's dimensions ({operand})", list(limit_indices),
                     cid="slice_c3")
        out.append((l - s + st - 1) // st)
    return Shape(operand.element_type, out)


def _slice_ref(operand, start_indices, limit_indices, strides=None, *, result):
    strides = strides or (1,) * operand.ndim
    return operand[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))].copy()


def _slice_dynamic(ctx):
    """A sliced dynamic dimension (stride 1) gets clamp(size - start, 0, limit - start); one
    taken whole keeps its size."""
    a, operand = ctx.args, ctx.shape("operand")
    strides = a.get("strides") or [1] * operand.rank
    out = {}
    for i, s in ctx.sizes("operand").items():
        start, limit = a["start_indices"][i], a["limit_indices"][i]
        if start == 0 and limit == operand.dims[i] and strides[i] == 1:
            out[i] = s
        elif strides[i] == 1:
            out[i] = ctx.clamp_sub(s, start, limit - start)
        else:
            raise DynamicError("operand", f"must not be sliced with a stride along its dynamic dimension {i}")
    return out


register(OpDef("Slice", (Operand("operand"), Attr("start_indices", Ints()), Attr("limit_indices", Ints()),
                         Attr("strides", Optional(Ints()), None)),
               _slice_infer, _slice_ref, "shape", "Slice",
               doc="the sub-array [start, limit) with strides", dynamic=_slice_dynamic,
               constraints={
                   "slice_i1": "`operand` is a tensor or per-tensor quantized tensor",
                   "slice_c2": "`size(start_indices) = size(limit_indices) = size(strides) = "
                               "rank(operand)`",
                   "slice_c3": "`0 <= start_indices <= limit_indices <= shape(operand)`",
                   "slice_c4": "`0 < strides`",
               }))


def _concat_infer(chk, operands, dimension):
    if len(operands) < 1:
        chk.fail("operands", "must have at least one array (N >= 1)", [], cid="concatenate_c3")
    first = operands[0]
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s, cid="concatenate_i1")
        chk.same_element_type("operands[0]", first, f"operands[{i}]", s, cid="concatenate_c1")
        if s.rank != first.rank:
            chk.fail(f"operands[{i}]", f"must have the rank of operands[0] ({first})", s,
                     cid="concatenate_c2")
    if first.rank == 0:
        chk.fail("operands", "must not be scalars (rank-0 values cannot be concatenated)", first,
                 cid="concatenate_c4")
    chk.dims_in_range("dimension", [dimension], first.rank, cid="concatenate_c4")
    for i, s in enumerate(operands):
        for d in range(first.rank):
            if d != dimension and s.dims[d] != first.dims[d]:
                chk.fail(f"operands[{i}]", f"must match operands[0] ({first}) in every dimension "
                         f"but {dimension}", s, cid="concatenate_c2")
    dims = list(first.dims)
    dims[dimension] = sum(s.dims[dimension] for s in operands)
    return Shape(first.element_type, dims)


register(OpDef("Concatenate", (Operands("operands"), Attr("dimension", Int())), _concat_infer,
               lambda operands, dimension, *, result: np.concatenate(operands, axis=dimension),
               "shape", "Concatenate", doc="join arrays along a dimension",
               constraints={
                   "concatenate_i1": "`inputs` is a variadic number of tensors or per-tensor quantized"
                                     " tensors",
                   "concatenate_c1": "`same(element_type(inputs...))`",
                   "concatenate_c2": "`same(shape(inputs...))` except for `dim(inputs..., dimension)`",
                   "concatenate_c3": "`0 < size(inputs)`",
                   "concatenate_c4": "`0 <= dimension < rank(inputs[0])`",
               }))


def _pad_infer(chk, operand, padding_value, padding_config):
    chk.array("operand", operand, cid="pad_i1")
    chk.scalar("padding_value", padding_value, cid="pad_i2")
    chk.same_element_type("operand", operand, "padding_value", padding_value, cid="pad_c1")
    triples = padding_config.triples()
    if len(triples) != operand.rank:
        chk.fail("padding_config", f"must have one dimension per operand dimension ({operand})",
                 triples, cid="pad_c2")
    out = []
    for i, ((lo, hi, interior), d) in enumerate(zip(triples, operand.dims)):
        if interior < 0:
            chk.fail("padding_config", f"interior_padding must not be negative (dimension {i})", triples,
                     cid="pad_c3")
        size = lo + hi + d + max(d - 1, 0) * interior
        if size < 0:
            chk.fail("padding_config", f"must leave a non-negative size in dimension {i} "
                     f"(operand size {d} gives {size})", triples, cid="pad_c4")
        out.append(size)
    return Shape(operand.element_type, out)


def _pad_ref(operand, padding_value, padding_config, *, result):
    x = np.asarray(operand)
    for axis, (lo, hi, interior) in enumerate(padding_config.triples()):
        n = x.shape[axis]
        if interior and n > 1:
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * interior
            y = np.full(shape, padding_value, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[axis] = slice(None, None, interior + 1)
            y[tuple(idx)] = x
            x = y
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=padding_value)    # pad, then crop negative edges
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(idx)]
    return np.asarray(x).reshape(result.dims)


register(OpDef("Pad", (Operand("operand"), Operand("padding_value"), Attr("padding_config", PADDING_CONFIG)),
               _pad_infer, _pad_ref, "shape", "Pad",
               doc="edge (possibly negative) and interior padding with padding_value",
               constraints={
                   "pad_i1": "`operand` is a tensor or per-tensor quantized tensor",
                   "pad_i2": "`padding_value` is a 0-dimensional tensor or per-tensor quantized tensor",
                   "pad_c1": "`element_type(operand) = element_type(padding_value) = "
                             "element_type(result)`",
                   "pad_c2": "`size(edge_padding_low) = size(edge_padding_high) = "
                             "size(interior_padding) = rank(operand)`",
                   "pad_c3": "`0 <= interior_padding`",
                   "pad_c4": "every dimension of the result has a non-negative size",
               }))


# -- Tuple, GetTupleElement ------------------------------------------------------------------
def _tuple_bind(*args):
    """tuple(b, elements) as XlaBuilder, tuple(elements), or the elements themselves:
    tuple(x, y) (the Builder, when given first, is taken off before)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return {"elements": list(args[0])}
    if any(isinstance(a, (list, tuple)) for a in args):
        raise XlaError(f"elements must be one list of values (tuple(b, [x, y])) or the values themselves "
                       f"(tuple(x, y)); got {len(args)} arguments, a list among them", constraint="ir:operands")
    return {"elements": list(args)}


register(OpDef("Tuple", (Operands("elements"),), lambda chk, elements: Shape.tuple(elements),
               lambda elements, *, result: tuple(elements), "shape", "Tuple", bind=_tuple_bind,
               doc="a tuple of values of any shapes"))


def _gte_infer(chk, tuple_data, index):
    if not tuple_data.is_tuple:
        chk.fail("tuple_data", "must be a tuple", tuple_data, cid="get_tuple_element_i1")
    n = len(tuple_data.tuple_shapes)
    if not 0 <= index < n:
        chk.fail("index", f"must be in [0, {n}) for {tuple_data}", index, cid="get_tuple_element_c1")
    return tuple_data.tuple_shapes[index]


register(OpDef("GetTupleElement", (Operand("tuple_data"), Attr("index", Int())), _gte_infer,
               lambda tuple_data, index, *, result: tuple_data[index], "shape", "GetTupleElement",
               doc="element `index` of a tuple",
               constraints={
                   "get_tuple_element_i1": "`operand` is a tuple",
                   "get_tuple_element_c1": "`0 <= index < size(operand)`",
               }))
