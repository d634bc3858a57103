"""The index geometry of Gather and Scatter, written once.

Which result (update) dimensions are batch dimensions and which are offset (window)
dimensions, how an index vector maps onto operand dimensions (start_index_map /
scatter_dims_to_operand_dims), which operand dimensions are collapsed (inserted) or batching
dimensions, and the clamp of a start index to [0, operand dim - slice size]: the shape rules
and numpy references of dialect/ops/indexing.py and the lowerings of lowering/indexing.py all
read these records.

The arithmetic on start indices is the caller's: an object with `const(int)`, `min(a, b)`,
`max(a, b)` and `ule(a, b)` (unsigned <=, of 64-bit values: a negative start is huge).  The
reference uses `INT` (Python ints); the lowering one that builds arith ops on i64 values.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np


class IntArith:
    """Start-index arithmetic on Python ints (the reference interpreter's)."""
    const = staticmethod(int)
    min = staticmethod(min)
    max = staticmethod(max)

    @staticmethod
    def ule(a, b):
        return 0 <= a <= b


INT = IntArith()


def as_int(v) -> int:
    """An integer scalar (numpy or Python) as a Python int, exactly (uint64 included)."""
    a = np.asarray(v)
    return int(a.astype(np.uint64 if a.dtype.kind == "u" else np.int64))


def clamp_start(start, bound: int, ar=INT):
    """The spec's clamp of a start index: clamp(start, 0, bound), bound = operand dim - size."""
    hi, lo = ar.const(bound), ar.const(0)
    return ar.max(ar.min(start, hi), lo)


def clamp_starts(starts, dims, sizes) -> list[int]:
    """DynamicSlice's and DynamicUpdateSlice's starts, clamped so the slice fits (on ints)."""
    return [clamp_start(as_int(s), d - z) for s, d, z in zip(starts, dims, sizes)]


@dataclasses.dataclass(frozen=True)
class _IndexGeometry:
    """What Gather and Scatter share, in neutral names:

    operand_dims     the operand's dimension sizes
    indices_dims     the (start/scatter) indices' dimension sizes
    index_vector_dim the indices dimension holding the index vectors (== rank: implicit, size 1)
    index_map        index vector element k -> operand dimension
    operand_batching / indices_batching   paired operand and indices batching dimensions
    dropped          operand dimensions absent from the window (collapsed / inserted)
    window_dims      dimensions of the result (the updates) that run over the window
    window_sizes     the window's size in every operand dimension (1 where dropped or batching)
    """
    operand_dims: tuple
    indices_dims: tuple
    index_vector_dim: int
    index_map: tuple
    operand_batching: tuple
    indices_batching: tuple
    dropped: tuple
    window_dims: tuple
    window_sizes: tuple

    # -- the indices ------------------------------------------------------------------------
    @property
    def index_batch_dims(self) -> list[int]:
        """The indices dimensions that are batch dimensions (all but index_vector_dim), in order."""
        return [t for t in range(len(self.indices_dims)) if t != self.index_vector_dim]

    @property
    def batch_sizes(self) -> list[int]:
        return [self.indices_dims[t] for t in self.index_batch_dims]

    @property
    def index_vector_size(self) -> int:
        ivd = self.index_vector_dim
        return 1 if ivd == len(self.indices_dims) else self.indices_dims[ivd]

    def index_position(self, k, coord: Callable) -> list:
        """The position in the indices of element k of the index vector of the batch position
        whose coordinate along indices dimension t is coord(t)."""
        return [k if t == self.index_vector_dim else coord(t) for t in range(len(self.indices_dims))]

    # -- the operand ------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.operand_dims)

    @property
    def indexed_dims(self) -> list[int]:
        """Operand dimensions whose start comes from the indices (index vector or batching)."""
        return sorted(set(self.index_map) | set(self.operand_batching))

    @property
    def window_operand_dims(self) -> list[int]:
        """Operand dimensions of the window (neither dropped nor batching), in order: the i-th
        is window_dims[i] of the result (the updates)."""
        gone = set(self.dropped) | set(self.operand_batching)
        return [d for d in range(self.rank) if d not in gone]

    def bound(self, d: int) -> int:
        """The largest start in operand dimension d at which the window fits."""
        return self.operand_dims[d] - self.window_sizes[d]

    def start(self, d: int, read: Callable, coord: Callable):
        """The start of the window in operand dimension d, unclamped: read(k), element k of the
        index vector, where index_map sends k to d; coord(t), the batch coordinate along
        indices dimension t, for a batching dimension paired with t; None elsewhere (0)."""
        if d in self.index_map:
            return read(self.index_map.index(d))
        if d in self.operand_batching:
            return coord(self.indices_batching[self.operand_batching.index(d)])
        return None

    # -- the result (the updates) -----------------------------------------------------------
    @property
    def outer_rank(self) -> int:
        return len(self.index_batch_dims) + len(self.window_dims)

    @property
    def batch_outer_dims(self) -> list[int]:
        """Result (updates) dimensions that are batch dimensions: the i-th runs along indices
        dimension index_batch_dims[i]."""
        return [i for i in range(self.outer_rank) if i not in self.window_dims]

    def outer_batch_dim(self, t: int) -> int:
        """The result (updates) dimension running along indices batch dimension t."""
        return self.batch_outer_dims[self.index_batch_dims.index(t)]

    def outer_sources(self) -> list[tuple[str, int]]:
        """What each result (updates) dimension runs along: ("b", indices dimension) or
        ("o", operand dimension)."""
        bi, oi = iter(self.index_batch_dims), iter(self.window_operand_dims)
        return [("o", next(oi)) if i in self.window_dims else ("b", next(bi)) for i in range(self.outer_rank)]


def _dims(shape_or_dims) -> tuple:
    return tuple(getattr(shape_or_dims, "dims", shape_or_dims))


@dataclasses.dataclass(frozen=True)
class GatherGeometry(_IndexGeometry):
    """Gather's geometry: the result's offset_dims run over the slice (slice_sizes), the others
    over the batch positions of start_indices; starts are clamped so the slice fits."""

    @classmethod
    def of(cls, dn, operand, start_indices, slice_sizes) -> "GatherGeometry":
        """From GatherDimensionNumbers and the operand's and start_indices' shapes (or dims)."""
        ind = _dims(start_indices)
        return cls(_dims(operand), ind, dn.index_vector_dim, tuple(dn.start_index_map),
                   tuple(dn.operand_batching_dims), tuple(dn.start_indices_batching_dims),
                   tuple(dn.collapsed_slice_dims), tuple(dn.offset_dims), tuple(slice_sizes))

    @property
    def slice_sizes(self) -> tuple:
        return self.window_sizes

    @property
    def result_dims(self) -> list[int]:
        sizes = {("b", t): n for t, n in zip(self.index_batch_dims, self.batch_sizes)}
        sizes.update({("o", d): self.window_sizes[d] for d in self.window_operand_dims})
        return [sizes[s] for s in self.outer_sources()]

    def slice_start(self, d: int, read: Callable, coord: Callable, ar=INT):
        """The start of the slice in operand dimension d (None: 0): an index vector element
        clamped into [0, operand dim - slice size]; a batch coordinate (always in bounds)."""
        return self.start(d, lambda k: clamp_start(read(k), self.bound(d), ar), coord)

    def full_start(self, read: Callable, coord: Callable, ar=INT) -> list:
        """slice_start of every operand dimension, 0 where the index does not reach."""
        return [ar.const(0) if s is None else s
                for s in (self.slice_start(d, read, coord, ar) for d in range(self.rank))]


@dataclasses.dataclass(frozen=True)
class ScatterGeometry(_IndexGeometry):
    """Scatter's geometry: the updates' update_window_dims run over the window, the others
    (the scatter dimensions) over the batch positions of scatter_indices; a window that does
    not fit is skipped whole."""

    @classmethod
    def of(cls, dn, operand, scatter_indices, updates) -> "ScatterGeometry":
        """From ScatterDimensionNumbers and the shapes (or dims) of an operand, the indices and
        an update (the updates' rank must be len(update_window_dims) + batch dimensions)."""
        od, ud = _dims(operand), _dims(updates)
        gone = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
        window = dict(zip([d for d in range(len(od)) if d not in gone], dn.update_window_dims))
        return cls(od, _dims(scatter_indices), dn.index_vector_dim, tuple(dn.scatter_dims_to_operand_dims),
                   tuple(dn.input_batching_dims), tuple(dn.scatter_indices_batching_dims),
                   tuple(dn.inserted_window_dims), tuple(dn.update_window_dims),
                   tuple(ud[window[d]] if d in window else 1 for d in range(len(od))))

    @property
    def scatter_dims(self) -> list[int]:
        """The updates' dimensions that are not window dimensions (the batch positions)."""
        return self.batch_outer_dims

    @property
    def update_dim(self) -> dict:
        """Operand window dimension -> the updates' dimension running over it."""
        return dict(zip(self.window_operand_dims, self.window_dims))

    @property
    def checked_dims(self) -> tuple:
        """Operand dimensions whose start comes from an index vector (batching starts always fit)."""
        return self.index_map

    def in_bounds(self, d: int, start, ar=INT):
        """0 <= start <= operand dim - window size (one unsigned compare of 64-bit values)."""
        return ar.ule(start, ar.const(self.bound(d)))
