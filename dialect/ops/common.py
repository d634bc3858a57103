"""Shape rules and reference helpers shared by several op families."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..checks import Check
from ..types import Shape


def broadcast_binary(chk: Check, lhs: Shape, rhs: Shape, broadcast_dimensions,
                     lname: str = "lhs", rname: str = "rhs", *, cid: str) -> tuple[int, ...]:
    """Result dimensions of an element-wise binary op (XLA's broadcasting rules).

    Same rank: dimensions equal or one of them 1 (degenerate broadcasting).  Different ranks:
    one operand is a scalar, or `broadcast_dimensions` maps the lower-rank operand's
    dimensions (in increasing order) onto the higher-rank one's, followed by degenerate
    broadcasting.
    """
    chk.array(lname, lhs, cid=cid)
    chk.array(rname, rhs, cid=cid)
    bd = broadcast_dimensions
    if lhs.rank == rhs.rank and not bd:
        return _degenerate(chk, lhs.dims, rhs.dims, rname, lhs, rhs, cid)
    if bd is None or (len(bd) == 0 and min(lhs.rank, rhs.rank) == 0):
        if lhs.rank == 0:
            return rhs.dims
        if rhs.rank == 0:
            return lhs.dims
        chk.fail(rname, "must have the rank of lhs or be a scalar (or give broadcast_dimensions); "
                 f"lhs is {lhs}", rhs, cid=cid)
    small, large, sname = (lhs, rhs, lname) if lhs.rank < rhs.rank else (rhs, lhs, rname)
    if lhs.rank == rhs.rank:
        small, large, sname = rhs, lhs, rname
    if len(bd) != small.rank:
        chk.fail("broadcast_dimensions", f"must have one entry per dimension of {sname} "
                 f"(rank {small.rank})", list(bd), cid=cid)
    chk.dims_in_range("broadcast_dimensions", bd, large.rank, "the result's", cid=cid)
    if any(b <= a for a, b in zip(bd, bd[1:])):
        chk.fail("broadcast_dimensions", "must be strictly increasing", list(bd), cid=cid)
    out = list(large.dims)
    for i, d in enumerate(bd):
        s, l = small.dims[i], large.dims[d]
        if s == l or s == 1:
            continue
        if l == 1:
            out[d] = s
            continue
        chk.fail(sname, f"dimension {i} (size {s}) must be 1 or equal dimension {d} (size {l}) "
                 f"of {large}", small, cid=cid)
    return tuple(out)


def _degenerate(chk, a, b, rname, lhs, rhs, cid):
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            chk.fail(rname, f"must have the dimensions of lhs ({lhs}) up to size-1 dimensions", rhs,
                     cid=cid)
    return tuple(out)


def expand_operand(x: np.ndarray, out_dims: Sequence[int], broadcast_dimensions) -> np.ndarray:
    """numpy view of an operand broadcast to the result (reference semantics of the above)."""
    x = np.asarray(x)
    if x.ndim == len(out_dims) and not broadcast_dimensions:
        return np.broadcast_to(x, out_dims)
    if x.ndim == 0:
        return np.broadcast_to(x, out_dims)
    if x.ndim == len(out_dims) and list(broadcast_dimensions) == list(range(x.ndim)):
        return np.broadcast_to(x, out_dims)
    shape = [1] * len(out_dims)
    for i, d in enumerate(broadcast_dimensions):
        shape[d] = x.shape[i]
    return np.broadcast_to(x.reshape(shape), out_dims)


def normalize_dims(chk: Check, param: str, dims, rank: int, *, cid: str) -> tuple[int, ...]:
    chk.dims_in_range(param, dims, rank, cid=cid)
    chk.unique(param, dims, cid=cid)
    return tuple(dims)
