"""The one error type of xlair and the checks shared by the ops' shape rules.

Every message reads `'xla.<op>' <parameter> <rule>; got <value>`, so a user can find the
op, the argument and the spec's rule without reading a stack trace.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from .types import ElementType, Shape


from .errors import XlaError  # noqa: F401  (the one error type; re-exported)


def show(v) -> str:
    """How a value appears after `got` in an error message."""
    if isinstance(v, (Shape, ElementType)):
        return repr(v)
    if isinstance(v, np.ndarray):
        return np.array2string(v, separator=", ") if v.size <= 16 else f"array{list(v.shape)}"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(show(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) or len(v) != 1 else f"({inner},)"
    if isinstance(v, str):
        return repr(v)
    return str(v)


class Check:
    """Raises XlaErrors on behalf of one op: `chk.fail('dimensions', 'must not repeat', dims)`."""

    def __init__(self, op: str, location: str | None = None):
        self.op = op
        self.location = location

    def fail(self, param: str, rule: str, got=None, *, show_got: bool = True):
        msg = f"'xla.{self.op}' {param} {rule}"
        if show_got:
            msg += f"; got {show(got)}"
        raise XlaError(msg, op=self.op, param=param, location=self.location)

    # -- operand kinds ---------------------------------------------------------------
    def array(self, param: str, s: Shape) -> Shape:
        if not isinstance(s, Shape) or not s.is_array:
            self.fail(param, "must be an array", s)
        return s

    def token(self, param: str, s: Shape) -> Shape:
        if not s.is_token:
            self.fail(param, "must be a token", s)
        return s

    def scalar(self, param: str, s: Shape, types: Iterable[ElementType] | None = None,
               what: str = "") -> Shape:
        self.array(param, s)
        if s.rank != 0:
            self.fail(param, f"must be a scalar{' of ' + what if what else ''}", s)
        if types is not None:
            self.element_type(param, s, types, what)
        return s

    def element_type(self, param: str, s: Shape, types: Iterable[ElementType], what: str) -> Shape:
        self.array(param, s)
        if s.element_type not in tuple(types):
            self.fail(param, f"must have {what} element type", s)
        return s

    def same_element_type(self, p1: str, s1: Shape, p2: str, s2: Shape):
        if s1.element_type != s2.element_type:
            self.fail(p2, f"must have the element type of {p1} ({s1.element_type})", s2)

    def same_shape(self, p1: str, s1: Shape, p2: str, s2: Shape):
        if s1 != s2:
            self.fail(p2, f"must have the shape of {p1} ({s1})", s2)

    def rank(self, param: str, s: Shape, rank: int, what: str = ""):
        if s.rank != rank:
            self.fail(param, f"must have rank {rank}{what}", s)

    # -- integer lists ---------------------------------------------------------------------
    def dims_in_range(self, param: str, dims: Sequence[int], rank: int, what: str = "the operand's"):
        if not isinstance(dims, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                          for d in dims):
            self.fail(param, "must be a sequence of integers", dims)
        for d in dims:
            if not 0 <= d < rank:
                self.fail(param, f"must be dimensions of {what} rank {rank}, in [0, {rank})", list(dims))

    def unique(self, param: str, dims: Sequence[int]):
        if len(set(dims)) != len(dims):
            self.fail(param, "must not repeat", list(dims))

    def ascending(self, param: str, dims: Sequence[int]):
        if any(b <= a for a, b in zip(dims, dims[1:])):
            self.fail(param, "must be in ascending order without repeats", list(dims))

    def permutation(self, param: str, perm: Sequence[int], rank: int):
        if sorted(perm) != list(range(rank)):
            self.fail(param, f"must be a permutation of [0, {rank})", list(perm))

    def length(self, param: str, values: Sequence, n: int, what: str):
        if len(values) != n:
            self.fail(param, f"must have {n} elements ({what})", list(values))

    def non_negative(self, param: str, values: Sequence[int]):
        if any(v < 0 for v in values):
            self.fail(param, "must not be negative", list(values))

    def positive(self, param: str, values: Sequence[int]):
        if any(v <= 0 for v in values):
            self.fail(param, "must be positive", list(values))


# element-type classes used by the op tables
def types_of(*kinds: str) -> tuple[ElementType, ...]:
    from .types import ALL_TYPES
    return tuple(t for t in ALL_TYPES if t.kind in kinds)
