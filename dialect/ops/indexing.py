"""DynamicSlice and DynamicUpdateSlice (Gather and Scatter join this family later)."""
from __future__ import annotations

import numpy as np

from ..attrs import Ints
from ..core import Attr, OpDef, Operand, Operands, register
from ..types import INTEGERS


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
