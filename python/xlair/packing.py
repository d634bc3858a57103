"""Packed parameters: a run of argument leaves passed as one buffer per element type.

IREE's invoke costs ~0.35 us a buffer argument (a buffer-view assert, its buffer, a buffer
assert, and a copy when the program's body is one dispatch of many bindings) and filling its
argument list ~0.17 us more; a program of 50 small leaves spent 26 of its 48 us a call there
(bench/NOTES.md section 20).  A program compiled with `pack=(first, count)` has a second entry
point, `main_packed`, that takes the leaves [first, first + count) as one 1-D buffer per
element type (the leaves' elements one after another, in the order of `groups`), and returns
the results of those shapes in that order (`out_run`: a training step's new state) packed the
same way; `main`, the entry point of one buffer a leaf, copies its leaves into such buffers,
calls it and slices the packed results apart (IREE inlines the call; the dispatches of the
two copies of the body are formed alike and merged).  `xla.device_put` of a pytree keeps the leaves so packed
beside their own buffers (arrays.Pack); the call path hands a program a pack whose leaves are
exactly its run, and makes the packed results a new Pack whose Arrays have no buffers of
their own until one is needed (runtime._call_path).

This module is the run side's part (the layout of a pack); building the packed entry points
is the compile side's, in packed_entry.py.
"""
from __future__ import annotations

import functools

from .device import layout

#: the entry point that takes packed leaves
PACKED_FN = "main_packed"
#: a run of fewer leaves is not packed (the saving is ~0.5 us a leaf)
MIN_LEAVES = 8
#: nor a run of more bytes: a pack is a second copy of its leaves (arrays.Pack), and the
#: per-leaf cost matters less beside the work of large arrays
MAX_BYTES = 1 << 22


@functools.lru_cache(maxsize=256)
def groups(shapes: tuple) -> tuple:
    """The packed layout of leaves of these shapes (a tuple of array Shapes): per element
    type, in the order of its first leaf, (element type, total elements, ((leaf index,
    offset, elements), ...))."""
    order: dict = {}
    for i, s in enumerate(shapes):
        n = 1
        for d in s.dims:
            n *= d
        members = order.setdefault(s.element_type, [])
        offset = members[-1][1] + members[-1][2] if members else 0
        members.append((i, offset, n))
    return tuple((et, m[-1][1] + m[-1][2], tuple(m)) for et, m in order.items())


_KEYS: dict = {}


def layout_key(shapes: tuple) -> int:
    """A small integer naming the packed layout of leaves of these shapes (one per distinct
    sequence of element types and dimensions in the process): the call path compares two
    layouts by one integer comparison."""
    k = tuple((str(s.element_type), tuple(s.dims)) for s in shapes)
    return _KEYS.setdefault(k, len(_KEYS))


def packable(shapes) -> bool:
    """Whether leaves of these shapes are worth packing: at least MIN_LEAVES arrays, no token
    or tuple, at most MAX_BYTES in all."""
    shapes = list(shapes)
    if len(shapes) < MIN_LEAVES or any(s.is_tuple or s.is_token for s in shapes):
        return False
    return sum(layout(s)[2] for s in shapes) <= MAX_BYTES
