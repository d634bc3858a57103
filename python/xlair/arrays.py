"""`xla.Array`: an array that stays in an IREE device buffer (made by `xla.device_put`,
runtime.py).

    x = xla.device_put(np.ones((4, 4), np.float32))   # copied to the CPU device once
    y = exe(x, w)                                      # Arrays in: Arrays out, no copies
    np.asarray(y)                                      # read back to numpy here

An executable (or `xla.jit`) called with at least one `Array` among its argument leaves
returns its result leaves as Arrays, left where the program wrote them; numpy arguments of
the same call are copied in as usual.  An Array is immutable: a program that could update an
argument's buffer in place (IREE does so for a DynamicUpdateSlice of a parameter, see
lowering/aliasing.py) gets a copy of that Array instead, so an Array holds the same values for
its whole life.
"""
from __future__ import annotations

from operator import is_

import numpy as np

from xlair.dialect.types import Shape

from .device import from_device, layout, mapped, to_device
from .packing import groups, layout_key


class Array:
    """An array in a device buffer (an IREE buffer view) on one target's device.  Read it with
    `np.asarray(a)`; `shape`, `dtype`, `ndim`, `size`, `nbytes` and `xla_shape` describe it
    without reading it.  A leaf of a program's packed results (xlair.packing) has no buffer of
    its own (`_bv` None) until one is needed: its values are in its Pack's buffers."""

    __slots__ = ("_bv", "_shape", "_device", "_target", "shape", "dtype", "_pack")

    def __init__(self, bv, shape: Shape, device, target, dims: tuple | None = None, dtype=None):
        self._bv = bv
        self._shape = shape
        self._device = device
        self._target = target
        #: the dimensions (a tuple) and the numpy dtype: plain attributes, read on every call
        #: that takes the array (xlair.jit's signature key); given by a caller that keeps them
        #: (a program's call path), else from the shape
        self.shape = tuple(shape.dims) if dims is None else dims
        self.dtype = layout(shape)[0] if dtype is None else dtype
        #: the Pack the array belongs to (an `xla.device_put` pytree's, or a program's packed
        #: results: xlair.packing), if any
        self._pack = None

    @property
    def xla_shape(self) -> Shape:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape.dims)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return layout(self._shape)[2]

    @property
    def target(self) -> str:
        """The name of the target whose device holds the array ("cpu", "vulkan", ...)."""
        return self._target.name

    def __array__(self, dtype=None, copy=None):
        bv = self._bv
        if bv is None:       # a leaf of a program's packed results, read in its group
            a = self._pack.leaf(self).copy()
        elif self._target.name == "cpu" and bv.byte_length == (lay := layout(self._shape))[2] > 0:
            # host memory, mapped as it is and copied: 1.3 us for a small array where
            # from_device's general path took 5 (a typed key result is read so every call)
            a = mapped(bv, lay).copy()
        else:
            a = from_device(self._device, bv, self._shape, copy=True)
        return a if dtype is None else a.astype(dtype, copy=False)

    # a one-element array as a Python number, as numpy and jax.Array do
    def __float__(self) -> float:
        return float(np.asarray(self))

    def __int__(self) -> int:
        return int(np.asarray(self))

    def __complex__(self) -> complex:
        return complex(np.asarray(self))

    def __bool__(self) -> bool:
        return bool(np.asarray(self))

    def block_until_ready(self) -> "Array":
        """The array (xlair's calls return when their results are written)."""
        return self

    def __len__(self) -> int:
        if not self._shape.dims:
            raise TypeError("len() of an unsized xla.Array")
        return self._shape.dims[0]

    def __repr__(self) -> str:
        return f"xla.Array({np.asarray(self)!r}, {self._shape}, target={self.target!r})"

    def buffer_for(self, device, host_memory: bool, fresh: bool):
        """The buffer view to hand a program running on `device`: this array's own, or a copy
        when the program may write it (`fresh`) or the array lives on another device (CPU
        devices share host memory, so any CPU device takes any CPU array)."""
        host = host_memory and self._target.backend == "llvm-cpu"
        if self._bv is None:       # a leaf of packed results: a buffer of its own, once
            self._bv = to_device(self._device, self._pack.leaf(self), self._shape)
        if (device is self._device or host) and not fresh:
            return self._bv
        # a copy: on the CPU straight from the mapped buffer, else read back first
        src = mapped(self._bv, layout(self._shape)) if host else np.asarray(self)
        return to_device(device, src, self._shape)


#: the count of Packs made in the process: xlair.jit looks for packed leaves among a call's
#: arguments when it has changed
packs_made = 0


class Pack:
    """The leaves of one `xla.device_put` pytree (Arrays of host-memory targets, each in a
    buffer of its own) also packed: one 1-D buffer per element type, laid out as
    `xlair.packing.groups` says.  A program compiled to take those leaves packed (its
    signature's "packed") is handed these buffers instead of its leaves one by one
    (runtime._call_path).  Arrays are immutable, so the copies stay equal."""

    __slots__ = ("members", "key", "buffers", "_where")

    def __init__(self, members: tuple, device, values: list):
        """The pack of `members` (new Arrays of a host-memory device) holding `values`, their
        values as numpy arrays (xla.device_put)."""
        shapes = tuple(a._shape for a in members)
        buffers = []
        for et, total, parts in groups(shapes):
            dtype = layout(Shape(et, ()))[0]
            flat = np.concatenate([np.asarray(values[i], dtype).reshape(-1) for i, _, _ in parts]) \
                if parts else np.zeros(0, dtype)
            buffers.append(to_device(device, flat, Shape(et, (total,))))
        self._adopt(members, layout_key(shapes), buffers)
        global packs_made
        packs_made += 1

    @classmethod
    def of_results(cls, members: tuple, key: int, buffers: list) -> "Pack":
        """The pack of a program's packed results: `members` new Arrays without buffers of
        their own, `buffers` the groups the program returned (of layout `key`).  (Not counted
        in packs_made: a program compiled for the pack it was given takes these too.)"""
        p = cls.__new__(cls)
        p._adopt(members, key, buffers)
        return p

    def _adopt(self, members: tuple, key: int, buffers: list) -> None:
        self.members, self.key, self.buffers, self._where = members, key, buffers, None
        for a in members:
            a._pack = self

    def leaf(self, a: Array) -> np.ndarray:
        """A numpy view of member `a`'s values in its group (host memory; valid while the
        view lives)."""
        if self._where is None:    # member -> (group, offset, elements), on first use
            shapes = tuple(m._shape for m in self.members)
            self._where = {id(self.members[i]): (g, total, offset, n)
                           for g, (_, total, parts) in enumerate(groups(shapes)) for i, offset, n in parts}
        g, total, offset, n = self._where[id(a)]
        group = mapped(self.buffers[g], (a.dtype, (total,), total * a.dtype.itemsize))
        return group[offset:offset + n].reshape(a.shape)


def pack_run(leaves) -> tuple | None:
    """(first, count) of the first run of argument leaves that are all the members of one
    Pack, in order, or None."""
    for i, a in enumerate(leaves):
        p = a._pack if type(a) is Array else None
        if p is not None and p.members[0] is a and len(leaves) - i >= len(p.members) and \
                all(map(is_, p.members, leaves[i:i + len(p.members)])):
            return i, len(p.members)
    return None
