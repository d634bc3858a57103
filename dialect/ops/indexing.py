"""DynamicSlice, DynamicUpdateSlice, Gather and Scatter."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..attrs import Bool, GatherDimensionNumbers, Ints, ScatterDimensionNumbers, kind_for
from ..checks import XlaError
from ..core import Attr, Comp, OpDef, Operand, Operands, register
from ..types import INTEGERS, Shape
from .reduction import check_reducer


def _check_starts(chk, operand, start_indices):
    if len(start_indices) != operand.rank:
        chk.fail("start_indices", f"must have one scalar per operand dimension ({operand})",
                 list(start_indices))
    for i, s in enumerate(start_indices):
        chk.scalar(f"start_indices[{i}]", s, INTEGERS, "integer")
        if s.element_type != start_indices[0].element_type:
            chk.fail(f"start_indices[{i}]", f"must have the type of start_indices[0] "
                     f"({start_indices[0].element_type})", s)


def clamp_starts(starts, dims, sizes):
    """The spec's clamp: start = clamp(start, 0, dim - size), per dimension."""
    out = []
    for s, d, z in zip(starts, dims, sizes):
        s = int(np.asarray(s).astype(np.int64)) if np.asarray(s).dtype.kind == "i" else int(np.asarray(s))
        out.append(min(max(s, 0), d - z))
    return out


def _ds_infer(chk, operand, start_indices, size_indices):
    chk.array("operand", operand)
    _check_starts(chk, operand, start_indices)
    chk.length("size_indices", size_indices, operand.rank, f"one per dimension of {operand}")
    for i, (z, d) in enumerate(zip(size_indices, operand.dims)):
        if not 0 <= z <= d:
            chk.fail("size_indices", f"must be in [0, dimension size] per dimension ({operand})",
                     list(size_indices))
    return operand.with_dims(size_indices)


def _ds_ref(operand, start_indices, size_indices, *, result):
    starts = clamp_starts(start_indices, operand.shape, size_indices)
    return operand[tuple(slice(s, s + z) for s, z in zip(starts, size_indices))].copy()


register(OpDef("DynamicSlice", (Operand("operand"), Operands("start_indices"), Attr("size_indices", Ints())),
               _ds_infer, _ds_ref, "indexing", "DynamicSlice",
               doc="slice of size_indices at run-time start indices (clamped into bounds)"))


def _dus_infer(chk, operand, update, start_indices):
    chk.array("operand", operand)
    chk.array("update", update)
    chk.same_element_type("operand", operand, "update", update)
    if update.rank != operand.rank:
        chk.fail("update", f"must have the rank of operand ({operand})", update)
    for d, (u, o) in enumerate(zip(update.dims, operand.dims)):
        if u > o:
            chk.fail("update", f"must fit in operand ({operand}) in every dimension", update)
    _check_starts(chk, operand, start_indices)
    return operand


def _dus_ref(operand, update, start_indices, *, result):
    starts = clamp_starts(start_indices, operand.shape, update.shape)
    out = np.array(operand, copy=True)
    out[tuple(slice(s, s + z) for s, z in zip(starts, update.shape))] = update
    return out


register(OpDef("DynamicUpdateSlice", (Operand("operand"), Operand("update"), Operands("start_indices")),
               _dus_infer, _dus_ref, "indexing", "DynamicUpdateSlice",
               doc="operand with update written at run-time start indices (clamped into bounds)"))


# ----------------------------------------------------------------------------------------
# Gather and Scatter
# ----------------------------------------------------------------------------------------
def _ascending_in(chk, param, dims, rank, what):
    chk.dims_in_range(param, dims, rank, what)
    if any(b <= a for a, b in zip(dims, dims[1:])):
        chk.fail(param, "must be in ascending order without repeats", list(dims))


def _index_vector(chk, param, indices: Shape, index_vector_dim: int, prefix: str):
    """Size of the index vectors and the batch dimensions of the (start/scatter) indices."""
    chk.element_type(param, indices, INTEGERS, "integer")
    if not isinstance(index_vector_dim, int) or isinstance(index_vector_dim, bool) \
            or not 0 <= index_vector_dim <= indices.rank:
        chk.fail(f"{prefix}.index_vector_dim", f"must be in [0, rank of {param}] = [0, {indices.rank}]",
                 index_vector_dim)
    if index_vector_dim == indices.rank:
        return 1, list(indices.dims)
    return indices.dims[index_vector_dim], [d for i, d in enumerate(indices.dims) if i != index_vector_dim]


def _check_batching(chk, prefix, op_name, op_dims, ind_name, ind_dims, operand: Shape, indices: Shape,
                    index_vector_dim, indices_param):
    _ascending_in(chk, f"{prefix}.{op_name}", op_dims, operand.rank, "the operand's")
    chk.dims_in_range(f"{prefix}.{ind_name}", ind_dims, indices.rank, f"{indices_param}'s")
    chk.unique(f"{prefix}.{ind_name}", ind_dims)
    if index_vector_dim in ind_dims:
        chk.fail(f"{prefix}.{ind_name}", f"must not contain index_vector_dim ({index_vector_dim})", list(ind_dims))
    if len(op_dims) != len(ind_dims):
        chk.fail(f"{prefix}.{ind_name}", f"must have as many dimensions as {op_name} ({list(op_dims)})",
                 list(ind_dims))
    for a, b in zip(op_dims, ind_dims):
        if operand.dims[a] != indices.dims[b]:
            chk.fail(f"{prefix}.{ind_name}", f"must pair dimensions of equal size: operand dimension {a} has "
                     f"{operand.dims[a]}, {indices_param} dimension {b} has {indices.dims[b]}", list(ind_dims))


def _integer_lists(chk, p: str, dn) -> None:
    """Every list field of a dimension-numbers record is a sequence of integers."""
    for f in dataclasses.fields(dn):
        v = getattr(dn, f.name)
        if f.name != "index_vector_dim" and not (isinstance(v, (list, tuple)) and all(
                isinstance(d, int) and not isinstance(d, bool) for d in v)):
            chk.fail(f"{p}.{f.name}", "must be a sequence of integers", v)


def _gather_infer(chk, operand, start_indices, dimension_numbers, slice_sizes, indices_are_sorted=False,
                  unique_indices=False):
    chk.array("operand", operand)
    chk.array("start_indices", start_indices)
    dn = dimension_numbers
    p = "dimension_numbers"
    _integer_lists(chk, p, dn)
    k, batch = _index_vector(chk, "start_indices", start_indices, dn.index_vector_dim, p)
    out_rank = len(batch) + len(dn.offset_dims)
    _ascending_in(chk, f"{p}.offset_dims", dn.offset_dims, out_rank, "the result's")
    _ascending_in(chk, f"{p}.collapsed_slice_dims", dn.collapsed_slice_dims, operand.rank, "the operand's")
    _check_batching(chk, p, "operand_batching_dims", dn.operand_batching_dims, "start_indices_batching_dims",
                    dn.start_indices_batching_dims, operand, start_indices, dn.index_vector_dim, "start_indices")
    both = set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims)
    if both:
        chk.fail(f"{p}.operand_batching_dims", "must not overlap collapsed_slice_dims", sorted(both))
    if len(dn.start_index_map) != k:
        chk.fail(f"{p}.start_index_map", f"must have one entry per index vector element ({k}, dimension "
                 f"{dn.index_vector_dim} of {start_indices})", list(dn.start_index_map))
    chk.dims_in_range(f"{p}.start_index_map", dn.start_index_map, operand.rank)
    chk.unique(f"{p}.start_index_map", dn.start_index_map)
    both = set(dn.start_index_map) & set(dn.operand_batching_dims)
    if both:
        chk.fail(f"{p}.start_index_map", "must not map to operand_batching_dims", sorted(both))
    want = len(dn.offset_dims) + len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims)
    if operand.rank != want:
        chk.fail("operand", f"must have rank len(offset_dims) + len(collapsed_slice_dims) + "
                 f"len(operand_batching_dims) = {want}", operand)
    chk.length("slice_sizes", slice_sizes, operand.rank, f"one per dimension of {operand}")
    for i, (z, d) in enumerate(zip(slice_sizes, operand.dims)):
        if not 0 <= z <= d:
            chk.fail("slice_sizes", f"must be in [0, dimension size] per dimension ({operand})", list(slice_sizes))
    for d in tuple(dn.collapsed_slice_dims) + tuple(dn.operand_batching_dims):
        if slice_sizes[d] != 1:
            chk.fail("slice_sizes", f"must be 1 in collapsed and batching dimensions (dimension {d})",
                     list(slice_sizes))
    gone = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = [slice_sizes[d] for d in range(operand.rank) if d not in gone]
    out, bi, oi = [], iter(batch), iter(offsets)
    for i in range(out_rank):
        out.append(next(oi) if i in dn.offset_dims else next(bi))
    return Shape(operand.element_type, out)


def _as_int(v) -> int:
    return int(np.asarray(v).astype(np.uint64 if np.asarray(v).dtype.kind == "u" else np.int64))


def _gather_ref(operand, start_indices, dimension_numbers, slice_sizes, indices_are_sorted=False,
                unique_indices=False, *, result):
    """For every batch index: the index vector, scattered into a full start by start_index_map
    (batch coordinates for operand_batching_dims) and clamped so the slice fits; the slice,
    with collapsed and batching dimensions dropped, fills the offset dimensions."""
    dn = dimension_numbers
    x = np.asarray(operand)
    idx = np.asarray(start_indices)
    ivd = dn.index_vector_dim
    if ivd == idx.ndim:
        idx = idx[..., None]
    idx = np.moveaxis(idx, ivd, -1)                 # [batch..., K]
    batch_shape = idx.shape[:-1]
    ind_batch_dims = [d for d in range(np.ndim(start_indices) + (dn.index_vector_dim == np.ndim(start_indices)))
                      if d != ivd]
    gone = sorted(set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims))
    out = np.empty(result.dims, x.dtype)
    batch_out = [i for i in range(len(result.dims)) if i not in dn.offset_dims]
    for g in np.ndindex(*batch_shape):
        start = [0] * x.ndim
        for k, d in enumerate(dn.start_index_map):
            start[d] = _as_int(idx[g + (k,)])
        for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[od] = g[ind_batch_dims.index(idim)]
        start = [min(max(s, 0), n - z) for s, n, z in zip(start, x.shape, slice_sizes)]
        piece = x[tuple(slice(s, s + z) for s, z in zip(start, slice_sizes))]
        piece = piece.reshape([z for d, z in enumerate(slice_sizes) if d not in gone])
        sel = [slice(None)] * len(result.dims)
        for i, gi in zip(batch_out, g):
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
               doc="stitch together slices of operand at run-time start indices (clamped into bounds)"))


def _scatter_infer(chk, operands, scatter_indices, updates, update_computation, dimension_numbers,
                   indices_are_sorted=False, unique_indices=False):
    n = len(operands)
    if n < 1:
        chk.fail("operands", "must have at least one array (N >= 1)", [])
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s)
        if s.dims != operands[0].dims:
            chk.fail(f"operands[{i}]", f"must have the dimensions of operands[0] ({operands[0]})", s)
    if len(updates) != n:
        chk.fail("updates", f"must have one array per operand ({n})", updates)
    for i, (s, u) in enumerate(zip(operands, updates)):
        chk.array(f"updates[{i}]", u)
        chk.same_element_type(f"operands[{i}]", s, f"updates[{i}]", u)
        if u.dims != updates[0].dims:
            chk.fail(f"updates[{i}]", f"must have the dimensions of updates[0] ({updates[0]})", u)
    chk.array("scatter_indices", scatter_indices)
    operand, upd, ind = operands[0], updates[0], scatter_indices
    dn = dimension_numbers
    p = "dimension_numbers"
    _integer_lists(chk, p, dn)
    k, batch = _index_vector(chk, "scatter_indices", ind, dn.index_vector_dim, p)
    _ascending_in(chk, f"{p}.update_window_dims", dn.update_window_dims, upd.rank, "the updates'")
    _ascending_in(chk, f"{p}.inserted_window_dims", dn.inserted_window_dims, operand.rank, "the operand's")
    _check_batching(chk, p, "input_batching_dims", dn.input_batching_dims, "scatter_indices_batching_dims",
                    dn.scatter_indices_batching_dims, operand, ind, dn.index_vector_dim, "scatter_indices")
    both = set(dn.inserted_window_dims) & set(dn.input_batching_dims)
    if both:
        chk.fail(f"{p}.input_batching_dims", "must not overlap inserted_window_dims", sorted(both))
    want = len(dn.update_window_dims) + len(dn.inserted_window_dims) + len(dn.input_batching_dims)
    if operand.rank != want:
        chk.fail("operands", f"must have rank len(update_window_dims) + len(inserted_window_dims) + "
                 f"len(input_batching_dims) = {want}", operand)
    if len(dn.scatter_dims_to_operand_dims) != k:
        chk.fail(f"{p}.scatter_dims_to_operand_dims", f"must have one entry per index vector element ({k}, "
                 f"dimension {dn.index_vector_dim} of {ind})", list(dn.scatter_dims_to_operand_dims))
    chk.dims_in_range(f"{p}.scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, operand.rank)
    chk.unique(f"{p}.scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims)
    both = set(dn.scatter_dims_to_operand_dims) & set(dn.input_batching_dims)
    if both:
        chk.fail(f"{p}.scatter_dims_to_operand_dims", "must not map to input_batching_dims", sorted(both))
    if upd.rank != len(dn.update_window_dims) + len(batch):
        chk.fail("updates", f"must have rank len(update_window_dims) + scatter batch dimensions = "
                 f"{len(dn.update_window_dims) + len(batch)}", upd)
    gone = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    bounds = [operand.dims[d] for d in range(operand.rank) if d not in gone]
    for k_, d in enumerate(dn.update_window_dims):
        if upd.dims[d] > bounds[k_]:
            chk.fail("updates", f"window dimension {d} (size {upd.dims[d]}) must not exceed operand dimension "
                     f"{[x for x in range(operand.rank) if x not in gone][k_]} ({bounds[k_]})", upd)
    scatter_dims = [d for d in range(upd.rank) if d not in dn.update_window_dims]
    for d, b in zip(scatter_dims, batch):
        if upd.dims[d] != b:
            chk.fail("updates", f"scatter dimension {d} must have the size of the matching scatter_indices "
                     f"dimension ({b})", upd)
    check_reducer(chk, "update_computation", update_computation, [s.element_type for s in operands])
    return operands[0] if n == 1 else Shape.tuple(list(operands))


def _scatter_ref(operands, scatter_indices, updates, update_computation, dimension_numbers,
                 indices_are_sorted=False, unique_indices=False, *, result):
    """Updates in row-major order of their scatter dimensions; a window whose start puts any
    part of it out of bounds is skipped whole; each window combined through the computation
    (current value first), all its elements at once."""
    dn = dimension_numbers
    n = len(operands)
    outs = [np.array(x, copy=True) for x in operands]
    ups = [np.asarray(u) for u in updates]
    idx = np.asarray(scatter_indices)
    ivd = dn.index_vector_dim
    rank_i = idx.ndim
    if ivd == idx.ndim:
        idx = idx[..., None]
    idx = np.moveaxis(idx, ivd, -1)
    ind_batch_dims = [d for d in range(rank_i + (ivd == rank_i)) if d != ivd]
    R = outs[0].ndim
    gone = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    window_operand_dims = [d for d in range(R) if d not in gone]
    wsize = [1] * R
    for d, ud in zip(window_operand_dims, dn.update_window_dims):
        wsize[d] = ups[0].shape[ud]
    scatter_dims = [d for d in range(ups[0].ndim) if d not in dn.update_window_dims]
    for g in np.ndindex(*idx.shape[:-1]):
        start = [0] * R
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] = _as_int(idx[g + (k,)])
        for od, idim in zip(dn.input_batching_dims, dn.scatter_indices_batching_dims):
            start[od] = g[ind_batch_dims.index(idim)]
        if any(s < 0 or s + w > D for s, w, D in zip(start, wsize, outs[0].shape)):
            continue
        region = tuple(slice(s, s + w) for s, w in zip(start, wsize))
        sel = [slice(None)] * ups[0].ndim
        for d, gi in zip(scatter_dims, g):
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
                   "computation (out-of-bounds windows skipped)"))
