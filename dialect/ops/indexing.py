"""DynamicSlice, DynamicUpdateSlice, Gather and Scatter."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..attrs import Bool, GatherDimensionNumbers, Ints, ScatterDimensionNumbers, kind_for
from ..checks import XlaError
from ..core import Attr, Comp, OpDef, Operand, Operands, register
from ..types import INTEGERS, Shape
from .index_geometry import GatherGeometry, ScatterGeometry, as_int, clamp_starts
from .reduction import check_reducer


def _check_starts(chk, operand, start_indices, *, op: str, count: str, kind: str, same: str):
    """start_indices: one integer scalar per operand dimension, of one type; `op`'s ids
    `count`, `kind` and `same` (StableHLO's dynamic_slice and dynamic_update_slice)."""
    if len(start_indices) != operand.rank:
        chk.fail("start_indices", f"must have one scalar per operand dimension ({operand})",
                 list(start_indices), cid=f"{op}_{count}")
    for i, s in enumerate(start_indices):
        chk.scalar(f"start_indices[{i}]", s, INTEGERS, "integer", cid=f"{op}_{kind}")
        if s.element_type != start_indices[0].element_type:
            chk.fail(f"start_indices[{i}]", f"must have the type of start_indices[0] "
                     f"({start_indices[0].element_type})", s, cid=f"{op}_{same}")


def _ds_infer(chk, operand, start_indices, size_indices):
    chk.array("operand", operand, cid="dynamic_slice_i1")
    _check_starts(chk, operand, start_indices, op="dynamic_slice", count="c2", kind="i2", same="c3")
    chk.length("size_indices", size_indices, operand.rank, f"one per dimension of {operand}",
               cid="dynamic_slice_c2")
    for i, (z, d) in enumerate(zip(size_indices, operand.dims)):
        if not 0 <= z <= d:
            chk.fail("size_indices", f"must be in [0, dimension size] per dimension ({operand})",
                     list(size_indices), cid="dynamic_slice_c4")
    return operand.with_dims(size_indices)


def _ds_ref(operand, start_indices, size_indices, *, result):
    starts = clamp_starts(start_indices, operand.shape, size_indices)
    return operand[tuple(slice(s, s + z) for s, z in zip(starts, size_indices))].copy()


register(OpDef("DynamicSlice", (Operand("operand"), Operands("start_indices"), Attr("size_indices", Ints())),
               _ds_infer, _ds_ref, "indexing", "DynamicSlice",
               doc="slice of size_indices at run-time start indices (clamped into bounds)",
               constraints={
                   "dynamic_slice_i1": "operand is an array",
                   "dynamic_slice_i2": "start_indices are integer scalars",
                   "dynamic_slice_c2": "one start index and one size per dimension of operand",
                   "dynamic_slice_c3": "`same(type(start_indices...))`",
                   "dynamic_slice_c4": "`0 <= slice_sizes <= shape(operand)`",
               }))


def _dus_infer(chk, operand, update, start_indices):
    chk.array("operand", operand, cid="dynamic_update_slice_i1")
    chk.array("update", update, cid="dynamic_update_slice_i2")
    chk.same_element_type("operand", operand, "update", update, cid="dynamic_update_slice_c2")
    if update.rank != operand.rank:
        chk.fail("update", f"must have the rank of operand ({operand})", update,
                 cid="dynamic_update_slice_c3")
    for d, (u, o) in enumerate(zip(update.dims, operand.dims)):
        if u > o:
            chk.fail("update", f"must fit in operand ({operand}) in every dimension", update,
                     cid="dynamic_update_slice_c6")
    _check_starts(chk, operand, start_indices, op="dynamic_update_slice", count="c4", kind="i3", same="c5")
    return operand


def _dus_ref(operand, update, start_indices, *, result):
    starts = clamp_starts(start_indices, operand.shape, update.shape)
    out = np.array(operand, copy=True)
    out[tuple(slice(s, s + z) for s, z in zip(starts, update.shape))] = update
    return out


register(OpDef("DynamicUpdateSlice", (Operand("operand"), Operand("update"), Operands("start_indices")),
               _dus_infer, _dus_ref, "indexing", "DynamicUpdateSlice",
               doc="operand with update written at run-time start indices (clamped into bounds)",
               constraints={
                   "dynamic_update_slice_i1": "operand is an array",
                   "dynamic_update_slice_i2": "update is an array",
                   "dynamic_update_slice_i3": "start_indices are integer scalars",
                   "dynamic_update_slice_c2": "`element_type(update) = element_type(operand)`",
                   "dynamic_update_slice_c3": "`rank(update) = rank(operand)`",
                   "dynamic_update_slice_c4": "`size(start_indices) = rank(operand)`",
                   "dynamic_update_slice_c5": "`same(type(start_indices...))`",
                   "dynamic_update_slice_c6": "`0 <= shape(update) <= shape(operand)`",
               }))


# ----------------------------------------------------------------------------------------
# Gather and Scatter
# ----------------------------------------------------------------------------------------
def _ascending_in(chk, param, dims, rank, what, *, cids: tuple):
    """`cids`: the ids of (in range, sorted without repeats)."""
    chk.dims_in_range(param, dims, rank, what, cid=cids[0])
    if any(b <= a for a, b in zip(dims, dims[1:])):
        chk.fail(param, "must be in ascending order without repeats", list(dims), cid=cids[1])


def _index_vector(chk, param, indices: Shape, index_vector_dim: int, prefix: str, *, cids: tuple):
    """Size of the index vectors and the batch dimensions of the (start/scatter) indices;
    `cids`: the ids of (integer indices, index_vector_dim in range)."""
    chk.element_type(param, indices, INTEGERS, "integer", cid=cids[0])
    if not isinstance(index_vector_dim, int) or isinstance(index_vector_dim, bool) \
            or not 0 <= index_vector_dim <= indices.rank:
        chk.fail(f"{prefix}.index_vector_dim", f"must be in [0, rank of {param}] = [0, {indices.rank}]",
                 index_vector_dim, cid=cids[1])
    if index_vector_dim == indices.rank:
        return 1, list(indices.dims)
    return indices.dims[index_vector_dim], [d for i, d in enumerate(indices.dims) if i != index_vector_dim]


def _check_batching(chk, prefix, op_name, op_dims, ind_name, ind_dims, operand: Shape, indices: Shape,
                    index_vector_dim, indices_param, *, cids: dict):
    """`cids`: the ids of the rules op_range, op_sorted, ind_range, ind_unique, ivd, count, sizes."""
    _ascending_in(chk, f"{prefix}.{op_name}", op_dims, operand.rank, "the operand's",
                  cids=(cids["op_range"], cids["op_sorted"]))
    chk.dims_in_range(f"{prefix}.{ind_name}", ind_dims, indices.rank, f"{indices_param}'s",
                      cid=cids["ind_range"])
    chk.unique(f"{prefix}.{ind_name}", ind_dims, cid=cids["ind_unique"])
    if index_vector_dim in ind_dims:
        chk.fail(f"{prefix}.{ind_name}", f"must not contain index_vector_dim ({index_vector_dim})", list(ind_dims),
                 cid=cids["ivd"])
    if len(op_dims) != len(ind_dims):
        chk.fail(f"{prefix}.{ind_name}", f"must have as many dimensions as {op_name} ({list(op_dims)})",
                 list(ind_dims), cid=cids["count"])
    for a, b in zip(op_dims, ind_dims):
        if operand.dims[a] != indices.dims[b]:
            chk.fail(f"{prefix}.{ind_name}", f"must pair dimensions of equal size: operand dimension {a} has "
                     f"{operand.dims[a]}, {indices_param} dimension {b} has {indices.dims[b]}", list(ind_dims),
                     cid=cids["sizes"])


#: the ids of _check_batching's rules for Gather and for Scatter
_GATHER_BATCHING = {"op_range": "gather_c11", "op_sorted": "gather_c10", "ind_range": "gather_c14",
                    "ind_unique": "gather_c13", "ivd": "gather_c15", "count": "gather_c16",
                    "sizes": "gather_c17"}
_SCATTER_BATCHING = {"op_range": "scatter_c13", "op_sorted": "scatter_c12", "ind_range": "scatter_c15",
                     "ind_unique": "scatter_c14", "ivd": "scatter_c16", "count": "scatter_c17",
                     "sizes": "scatter_c18"}


def _integer_lists(chk, p: str, dn) -> None:
    """Every list field of a dimension-numbers record is a sequence of integers."""
    for f in dataclasses.fields(dn):
        v = getattr(dn, f.name)
        if f.name != "index_vector_dim" and not (isinstance(v, (list, tuple)) and all(
                isinstance(d, int) and not isinstance(d, bool) for d in v)):
            chk.fail(f"{p}.{f.name}", "must be a sequence of integers", v, cid="ir:attributes")


def _gather_infer(chk, operand, start_indices, dimension_numbers, slice_sizes, indices_are_sorted=False,
                  unique_indices=False):
    chk.array("operand", operand, cid="gather_i1")
    chk.array("start_indices", start_indices, cid="gather_i2")
    dn = dimension_numbers
    p = "dimension_numbers"
    _integer_lists(chk, p, dn)
    k, batch = _index_vector(chk, "start_indices", start_indices, dn.index_vector_dim, p,
                             cids=("gather_i2", "gather_c2"))
    out_rank = len(batch) + len(dn.offset_dims)
    _ascending_in(chk, f"{p}.offset_dims", dn.offset_dims, out_rank, "the result's",
                  cids=("gather_c5", "gather_c4"))
    _ascending_in(chk, f"{p}.collapsed_slice_dims", dn.collapsed_slice_dims, operand.rank, "the operand's",
                  cids=("gather_c8", "gather_c7"))
    _check_batching(chk, p, "operand_batching_dims", dn.operand_batching_dims, "start_indices_batching_dims",
                    dn.start_indices_batching_dims, operand, start_indices, dn.index_vector_dim, "start_indices",
                    cids=_GATHER_BATCHING)
    both = set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims)
    if both:
        chk.fail(f"{p}.operand_batching_dims", "must not overlap collapsed_slice_dims", sorted(both),
                 cid="gather_c6")
    if len(dn.start_index_map) != k:
        chk.fail(f"{p}.start_index_map", f"must have one entry per index vector element ({k}, dimension "
                 f"{dn.index_vector_dim} of {start_indices})", list(dn.start_index_map), cid="gather_c3")
    chk.dims_in_range(f"{p}.start_index_map", dn.start_index_map, operand.rank, cid="gather_c19")
    chk.unique(f"{p}.start_index_map", dn.start_index_map, cid="gather_c18")
    both = set(dn.start_index_map) & set(dn.operand_batching_dims)
    if both:
        chk.fail(f"{p}.start_index_map", "must not map to operand_batching_dims", sorted(both),
                 cid="gather_c18")
    want = len(dn.offset_dims) + len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims)
    if operand.rank != want:
        chk.fail("operand", f"must have rank len(offset_dims) + len(collapsed_slice_dims) + "
                 f"len(operand_batching_dims) = {want}", operand, cid="gather_c1")
    chk.length("slice_sizes", slice_sizes, operand.rank, f"one per dimension of {operand}", cid="gather_c20")
    for i, (z, d) in enumerate(zip(slice_sizes, operand.dims)):
        if not 0 <= z <= d:
            chk.fail("slice_sizes", f"must be in [0, dimension size] per dimension ({operand})", list(slice_sizes),
                     cid="gather_c21")
    for d in tuple(dn.collapsed_slice_dims) + tuple(dn.operand_batching_dims):
        if slice_sizes[d] != 1:
            chk.fail("slice_sizes", f"must be 1 in collapsed and batching dimensions (dimension {d})",
                     list(slice_sizes), cid="gather_c9" if d in dn.collapsed_slice_dims else "gather_c12")
    return Shape(operand.element_type, GatherGeometry.of(dn, operand, start_indices, slice_sizes).result_dims)


def _gather_ref(operand, start_indices, dimension_numbers, slice_sizes, indices_are_sorted=False,
                unique_indices=False, *, result):
    """For every batch index: the index vector, scattered into a full start by start_index_map
    (batch coordinates for operand_batching_dims) and clamped so the slice fits; the slice,
    with collapsed and batching dimensions dropped, fills the offset dimensions."""
    x = np.asarray(operand)
    idx = np.asarray(start_indices)
    geo = GatherGeometry.of(dimension_numbers, x.shape, idx.shape, slice_sizes)
    out = np.empty(result.dims, x.dtype)
    for g in np.ndindex(*geo.batch_sizes):
        def coord(t):
            return g[geo.index_batch_dims.index(t)]
        start = geo.full_start(lambda k: as_int(idx[tuple(geo.index_position(k, coord))]), coord)
        piece = x[tuple(slice(s, s + z) for s, z in zip(start, slice_sizes))]
        piece = piece.reshape([slice_sizes[d] for d in geo.window_operand_dims])
        sel = [slice(None)] * len(result.dims)
        for i, gi in zip(geo.batch_outer_dims, g):
            sel[i] = gi
        out[tuple(sel)] = piece
    return out


_GATHER_FIELDS = ("offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
                  "operand_batching_dims", "start_indices_batching_dims")


def _gather_bind(operand, start_indices, *args, dimension_numbers=None, slice_sizes=None,
                 indices_are_sorted=False, unique_indices=False, offset_dims=None, collapsed_slice_dims=None,
                 start_index_map=None, index_vector_dim=None, operand_batching_dims=None,
                 start_indices_batching_dims=None):
    """gather(operand, start_indices, dimension_numbers, slice_sizes, indices_are_sorted=False,
    unique_indices=False); the GatherDimensionNumbers fields may instead be given as keywords
    (offset_dims=, collapsed_slice_dims=, start_index_map=, index_vector_dim=,
    operand_batching_dims=, start_indices_batching_dims=), index_vector_dim then defaulting
    to the last dimension of start_indices.  The spec's positional form gather(operand,
    start_indices, offset_dims, collapsed_slice_dims, slice_sizes, start_index_map) works too."""
    fields = dict(offset_dims=offset_dims, collapsed_slice_dims=collapsed_slice_dims,
                  start_index_map=start_index_map, index_vector_dim=index_vector_dim,
                  operand_batching_dims=operand_batching_dims,
                  start_indices_batching_dims=start_indices_batching_dims)
    if args and isinstance(args[0], (list, tuple, np.ndarray)):        # the spec's heading order
        if len(args) > 4:
            raise TypeError("the spec's form takes offset_dims, collapsed_slice_dims, slice_sizes, start_index_map")
        names = ("offset_dims", "collapsed_slice_dims", "slice_sizes", "start_index_map")
        for n, v in zip(names, args):
            if n == "slice_sizes":
                if slice_sizes is not None:
                    raise TypeError("slice_sizes given twice")
                slice_sizes = v
            else:
                if fields[n] is not None:
                    raise TypeError(f"{n} given twice (a sequence in the third position starts the spec's form "
                                    "offset_dims, collapsed_slice_dims, slice_sizes, start_index_map; give "
                                    "slice_sizes= by keyword)")
                fields[n] = v
        args = ()
    rest = ("dimension_numbers", "slice_sizes", "indices_are_sorted", "unique_indices")
    if len(args) > len(rest):
        raise TypeError(f"takes at most {2 + len(rest)} positional arguments")
    given = dict(zip(rest, args))
    for n in given:
        if (n == "dimension_numbers" and dimension_numbers is not None) or (n == "slice_sizes" and slice_sizes is not None):
            raise TypeError(f"{n} given twice")
    dimension_numbers = given.get("dimension_numbers", dimension_numbers)
    slice_sizes = given.get("slice_sizes", slice_sizes)
    indices_are_sorted = given.get("indices_are_sorted", indices_are_sorted)
    unique_indices = given.get("unique_indices", unique_indices)
    out = dict(operand=operand, start_indices=start_indices, indices_are_sorted=indices_are_sorted,
               unique_indices=unique_indices)
    dn = _record_from_fields(GatherDimensionNumbers, dimension_numbers, fields, start_indices)
    if dn is not None:
        out["dimension_numbers"] = dn
    if slice_sizes is not None:
        out["slice_sizes"] = slice_sizes
    return out


def _record_from_fields(cls, record, fields: dict, indices):
    """The dimension-numbers record: given whole, or built from its fields given as keywords."""
    present = {k: v for k, v in fields.items() if v is not None}
    if record is not None:
        if present:
            raise TypeError(f"give dimension_numbers or its fields ({', '.join(present)}), not both")
        return record
    if not present:
        return None
    if present.get("index_vector_dim") is None:
        rank = getattr(getattr(indices, "shape", None), "rank", None)
        present["index_vector_dim"] = max(rank - 1, 0) if rank is not None else 0
    try:
        return cls(**present)
    except XlaError as e:
        raise TypeError(str(e)) from None


register(OpDef("Gather", (Operand("operand"), Operand("start_indices"),
                          Attr("dimension_numbers", kind_for(GatherDimensionNumbers)), Attr("slice_sizes", Ints()),
                          Attr("indices_are_sorted", Bool(), False), Attr("unique_indices", Bool(), False)),
               _gather_infer, _gather_ref, "indexing", "Gather", bind=_gather_bind,
               doc="stitch together slices of operand at run-time start indices (clamped into bounds)",
               constraints={
                   "gather_i1": "operand is an array",
                   "gather_i2": "start_indices is an integer array",
                   "gather_c1": "`rank(operand) = size(offset_dims) + size(collapsed_slice_dims) + "
                                "size(operand_batching_dims)`",
                   "gather_c2": "`0 <= index_vector_dim <= rank(start_indices)`",
                   "gather_c3": "`size(start_index_map) = index_vector_dim < rank(start_indices) ? "
                                "dim(start_indices, index_vector_dim) : 1`",
                   "gather_c4": "`is_unique(offset_dims) and is_sorted(offset_dims)`",
                   "gather_c5": "`0 <= offset_dims < rank(result)`",
                   "gather_c6": "`is_unique(concatenate(collapsed_slice_dims, operand_batching_dims))`",
                   "gather_c7": "`is_sorted(collapsed_slice_dims)`",
                   "gather_c8": "`0 <= collapsed_slice_dims < rank(operand)`",
                   "gather_c9": "`slice_sizes[collapsed_slice_dims...] <= 1`",
                   "gather_c10": "`is_sorted(operand_batching_dims)`",
                   "gather_c11": "`0 <= operand_batching_dims < rank(operand)`",
                   "gather_c12": "`slice_sizes[operand_batching_dims...] <= 1`",
                   "gather_c13": "`is_unique(start_indices_batching_dims)`",
                   "gather_c14": "`0 <= start_indices_batching_dims < rank(start_indices)`",
                   "gather_c15": "`index_vector_dim not in start_indices_batching_dims`",
                   "gather_c16": "`size(operand_batching_dims) == size(start_indices_batching_dims)`",
                   "gather_c17": "`dim(operand, operand_batching_dims...) = dim(start_indices, "
                                 "start_indices_batching_dims...)`",
                   "gather_c18": "`is_unique(concatenate(start_index_map, operand_batching_dims))`",
                   "gather_c19": "`0 <= start_index_map < rank(operand)`",
                   "gather_c20": "`size(slice_sizes) = rank(operand)`",
                   "gather_c21": "`0 <= slice_sizes <= shape(operand)`",
               }))


def _scatter_infer(chk, operands, scatter_indices, updates, update_computation, dimension_numbers,
                   indices_are_sorted=False, unique_indices=False):
    n = len(operands)
    if n < 1:
        chk.fail("operands", "must have at least one array (N >= 1)", [], cid="scatter_c5")
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s, cid="scatter_i1")
        if s.dims != operands[0].dims:
            chk.fail(f"operands[{i}]", f"must have the dimensions of operands[0] ({operands[0]})", s,
                     cid="scatter_c1")
    if len(updates) != n:
        chk.fail("updates", f"must have one array per operand ({n})", updates, cid="scatter_c5")
    for i, (s, u) in enumerate(zip(operands, updates)):
        chk.array(f"updates[{i}]", u, cid="scatter_i3")
        chk.same_element_type(f"operands[{i}]", s, f"updates[{i}]", u, cid="scatter_c6")
        if u.dims != updates[0].dims:
            chk.fail(f"updates[{i}]", f"must have the dimensions of updates[0] ({updates[0]})", u,
                     cid="scatter_c3")
    chk.array("scatter_indices", scatter_indices, cid="scatter_i2")
    operand, upd, ind = operands[0], updates[0], scatter_indices
    dn = dimension_numbers
    p = "dimension_numbers"
    _integer_lists(chk, p, dn)
    k, batch = _index_vector(chk, "scatter_indices", ind, dn.index_vector_dim, p,
                             cids=("scatter_i2", "scatter_c22"))
    _ascending_in(chk, f"{p}.update_window_dims", dn.update_window_dims, upd.rank, "the updates'",
                  cids=("scatter_c8", "scatter_c7"))
    _ascending_in(chk, f"{p}.inserted_window_dims", dn.inserted_window_dims, operand.rank, "the operand's",
                  cids=("scatter_c11", "scatter_c10"))
    _check_batching(chk, p, "input_batching_dims", dn.input_batching_dims, "scatter_indices_batching_dims",
                    dn.scatter_indices_batching_dims, operand, ind, dn.index_vector_dim, "scatter_indices",
                    cids=_SCATTER_BATCHING)
    both = set(dn.inserted_window_dims) & set(dn.input_batching_dims)
    if both:
        chk.fail(f"{p}.input_batching_dims", "must not overlap inserted_window_dims", sorted(both),
                 cid="scatter_c9")
    want = len(dn.update_window_dims) + len(dn.inserted_window_dims) + len(dn.input_batching_dims)
    if operand.rank != want:
        chk.fail("operands", f"must have rank len(update_window_dims) + len(inserted_window_dims) + "
                 f"len(input_batching_dims) = {want}", operand, cid="scatter_c2")
    if len(dn.scatter_dims_to_operand_dims) != k:
        chk.fail(f"{p}.scatter_dims_to_operand_dims", f"must have one entry per index vector element ({k}, "
                 f"dimension {dn.index_vector_dim} of {ind})", list(dn.scatter_dims_to_operand_dims),
                 cid="scatter_c19")
    chk.dims_in_range(f"{p}.scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, operand.rank,
                      cid="scatter_c21")
    chk.unique(f"{p}.scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, cid="scatter_c20")
    both = set(dn.scatter_dims_to_operand_dims) & set(dn.input_batching_dims)
    if both:
        chk.fail(f"{p}.scatter_dims_to_operand_dims", "must not map to input_batching_dims", sorted(both),
                 cid="scatter_c20")
    if upd.rank != len(dn.update_window_dims) + len(batch):
        chk.fail("updates", f"must have rank len(update_window_dims) + scatter batch dimensions = "
                 f"{len(dn.update_window_dims) + len(batch)}", upd, cid="scatter_c4")
    geo = ScatterGeometry.of(dn, operand, ind, upd)
    for od, d in zip(geo.window_operand_dims, dn.update_window_dims):
        if upd.dims[d] > operand.dims[od]:
            chk.fail("updates", f"window dimension {d} (size {upd.dims[d]}) must not exceed operand dimension "
                     f"{od} ({operand.dims[od]})", upd, cid="scatter_c4")
    for d, b in zip(geo.scatter_dims, batch):
        if upd.dims[d] != b:
            chk.fail("updates", f"scatter dimension {d} must have the size of the matching scatter_indices "
                     f"dimension ({b})", upd, cid="scatter_c4")
    check_reducer(chk, "update_computation", update_computation, [s.element_type for s in operands],
                  cid="scatter_c23")
    return operands[0] if n == 1 else Shape.tuple(list(operands))


def _scatter_ref(operands, scatter_indices, updates, update_computation, dimension_numbers,
                 indices_are_sorted=False, unique_indices=False, *, result):
    """Updates in row-major order of their scatter dimensions; a window whose start puts any
    part of it out of bounds is skipped whole; each window combined through the computation
    (current value first), all its elements at once."""
    n = len(operands)
    outs = [np.array(x, copy=True) for x in operands]
    ups = [np.asarray(u) for u in updates]
    idx = np.asarray(scatter_indices)
    geo = ScatterGeometry.of(dimension_numbers, outs[0].shape, idx.shape, ups[0].shape)
    wsize = list(geo.window_sizes)
    for g in np.ndindex(*geo.batch_sizes):
        def coord(t):
            return g[geo.index_batch_dims.index(t)]
        start = [geo.start(d, lambda k: as_int(idx[tuple(geo.index_position(k, coord))]), coord)
                 for d in range(geo.rank)]
        if not all(geo.in_bounds(d, start[d]) for d in geo.checked_dims):
            continue
        region = tuple(slice(s or 0, (s or 0) + w) for s, w in zip(start, wsize))
        sel = [slice(None)] * ups[0].ndim
        for d, gi in zip(geo.scatter_dims, g):
            sel[d] = gi
        vals = [u[tuple(sel)].reshape(wsize) for u in ups]    # window dims keep their order
        cur = [o[region] for o in outs]
        r = update_computation(*cur, *vals, batch=tuple(wsize))
        r = list(r) if n > 1 else [r]
        for o, v in zip(outs, r):
            o[region] = v
    return outs[0] if n == 1 else tuple(outs)


def _scatter_bind(operands=None, scatter_indices=None, updates=None, update_computation=None, *args,
                  dimension_numbers=None, indices_are_sorted=False, unique_indices=False, operand=None,
                  update_window_dims=None, inserted_window_dims=None, scatter_dims_to_operand_dims=None,
                  index_vector_dim=None, input_batching_dims=None, scatter_indices_batching_dims=None):
    """scatter(operands, scatter_indices, updates, update_computation, dimension_numbers,
    indices_are_sorted=False, unique_indices=False); one operand/update may be given bare
    (`operand=` is accepted too); the ScatterDimensionNumbers fields may instead be keywords
    (update_window_dims=, inserted_window_dims=, scatter_dims_to_operand_dims=,
    index_vector_dim=, input_batching_dims=, scatter_indices_batching_dims=),
    index_vector_dim then defaulting to the last dimension of scatter_indices.  The spec's
    positional form scatter(operand, scatter_indices, updates, update_computation,
    index_vector_dim, update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims)
    works too."""
    if operand is not None:
        if operands is not None:
            raise TypeError("both operand and operands given")
        operands = operand
    fields = dict(update_window_dims=update_window_dims, inserted_window_dims=inserted_window_dims,
                  scatter_dims_to_operand_dims=scatter_dims_to_operand_dims, index_vector_dim=index_vector_dim,
                  input_batching_dims=input_batching_dims,
                  scatter_indices_batching_dims=scatter_indices_batching_dims)
    if args and isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):   # spec order
        if len(args) > 4:
            raise TypeError("the spec's form takes index_vector_dim, update_window_dims, inserted_window_dims, "
                            "scatter_dims_to_operand_dims")
        for n_, v in zip(("index_vector_dim", "update_window_dims", "inserted_window_dims",
                          "scatter_dims_to_operand_dims"), args):
            if fields[n_] is not None:
                raise TypeError(f"{n_} given twice")
            fields[n_] = v
        args = ()
    rest = ("dimension_numbers", "indices_are_sorted", "unique_indices")
    if len(args) > len(rest):
        raise TypeError(f"takes at most {4 + len(rest)} positional arguments")
    given = dict(zip(rest, args))
    if "dimension_numbers" in given and dimension_numbers is not None:
        raise TypeError("dimension_numbers given twice")
    dimension_numbers = given.get("dimension_numbers", dimension_numbers)
    out = dict(indices_are_sorted=given.get("indices_are_sorted", indices_are_sorted),
               unique_indices=given.get("unique_indices", unique_indices))
    for k, v in (("operands", operands), ("scatter_indices", scatter_indices), ("updates", updates),
                 ("update_computation", update_computation)):
        if v is not None:
            out[k] = v
    dn = _record_from_fields(ScatterDimensionNumbers, dimension_numbers, fields, scatter_indices)
    if dn is not None:
        out["dimension_numbers"] = dn
    return out


register(OpDef("Scatter", (Operands("operands"), Operand("scatter_indices"), Operands("updates"),
                           Comp("update_computation"),
                           Attr("dimension_numbers", kind_for(ScatterDimensionNumbers)),
                           Attr("indices_are_sorted", Bool(), False), Attr("unique_indices", Bool(), False)),
               _scatter_infer, _scatter_ref, "indexing", "Scatter", bind=_scatter_bind,
               doc="operand(s) with windows of updates combined in at run-time indices through a "
                   "computation (out-of-bounds windows skipped)",
               constraints={
                   "scatter_i1": "operands are arrays",
                   "scatter_i2": "scatter_indices is an integer array",
                   "scatter_i3": "updates are arrays",
                   "scatter_c1": "`same(shape(inputs...))`",
                   "scatter_c2": "`rank(inputs[0]) = size(update_window_dims) + "
                                 "size(inserted_window_dims) + size(input_batching_dims)`",
                   "scatter_c3": "`same(shape(updates...))`",
                   "scatter_c4": "updates have the shape combine(update_scatter_dim_sizes, "
                                 "update_window_dim_sizes): windows within the operand",
                   "scatter_c5": "`0 < size(inputs) = size(updates) = N`",
                   "scatter_c6": "`element_type(updates...) = element_type(inputs...)`",
                   "scatter_c7": "`is_unique(update_window_dims) and is_sorted(update_window_dims)`",
                   "scatter_c8": "`0 <= update_window_dims < rank(updates[0])`",
                   "scatter_c9": "`is_unique(concatenate(inserted_window_dims, input_batching_dims))`",
                   "scatter_c10": "`is_sorted(inserted_window_dims)`",
                   "scatter_c11": "`0 <= inserted_window_dims < rank(inputs[0])`",
                   "scatter_c12": "`is_sorted(input_batching_dims)`",
                   "scatter_c13": "`0 <= input_batching_dims < rank(inputs[0]))`",
                   "scatter_c14": "`is_unique(scatter_indices_batching_dims)`",
                   "scatter_c15": "`0 <= scatter_indices_batching_dims < rank(scatter_indices)`",
                   "scatter_c16": "`index_vector_dim not in scatter_indices_batching_dims`",
                   "scatter_c17": "`size(input_batching_dims) == size(scatter_indices_batching_dims)`",
                   "scatter_c18": "`dim(inputs[0], input_batching_dims...) = dim(scatter_indices, "
                                  "scatter_indices_batching_dims...)`",
                   "scatter_c19": "`size(scatter_dims_to_operand_dims) = index_vector_dim < "
                                  "rank(scatter_indices) ? dim(scatter_indices, index_vector_dim) : 1`",
                   "scatter_c20": "`is_unique(concatenate(scatter_dims_to_operand_dims, "
                                  "input_batching_dims))`",
                   "scatter_c21": "`0 <= scatter_dims_to_operand_dims < rank(inputs[0])`",
                   "scatter_c22": "`0 <= index_vector_dim <= rank(scatter_indices)`",
                   "scatter_c23": "update_computation has type (E0, ..., EN-1, E0, ..., EN-1) -> (E0, "
                                  "..., EN-1) of scalars",
               }))
