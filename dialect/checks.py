"""The one error type of xlair and the checks shared by the ops' shape rules.

Every message reads `'xla.<op>' <parameter> <rule>; got <value> [<constraint id>]`, so a user
can find the op, the argument and the spec's rule without reading a stack trace.  The id
(also `XlaError.constraint`) is StableHLO's where the op maps to a StableHLO op and StableHLO
has the rule (`gather_c5`, `dot_general_c3`); the spec section's (`spec:RngBitGenerator`, see
`spec_id`) otherwise; `ir:<what>` (the table `IR_CONSTRAINTS`) for the rules of the IR form
common to every op.  Each op's record lists the ids its shape rule cites (`OpDef.constraints`);
docs/errors.md is generated from the records.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

import numpy as np

from .types import ElementType, Shape


from .errors import XlaError  # noqa: F401  (the one error type; re-exported)

#: the rules of the IR form shared by every op (checked by core.OpDef.unpack and verify.py)
IR_CONSTRAINTS = {
    "ir:mlir": "the module is valid MLIR (MLIR's own verifier)",
    "ir:op": "an `xla.*` op is an op of the dialect's registry",
    "ir:operands": "the operands number the op's array parameters (`operandSegmentSizes` gives "
                   "the lengths of several variadic groups)",
    "ir:regions": "the regions number the op's computation parameters",
    "ir:attributes": "every required attribute is present and of its parameter's kind",
    "ir:types": "operand, attribute and result types are XLA types",
    "ir:computation": "a computation region is one block ending in `xla.return` of one value",
    "ir:return": "`xla.return` ends the computation region of an xla op",
    "ir:callee": "a callee symbol names a function of the module",
    "ir:recursion": "no function calls itself, directly or through others (XLA computations do not recurse)",
    "ir:result": "the declared result type is the one the op's shape rule infers",
}


def spec_id(section: str) -> str:
    """The constraint id of a section of the spec (shared/spec/operation_semantics.md): its
    heading without a parenthesised note, in CamelCase (`Rev (reverse)` -> `spec:Rev`,
    `Element-wise unary functions` -> `spec:ElementWiseUnaryFunctions`)."""
    words = re.split(r"[^A-Za-z0-9]+", re.sub(r"\s*\(.*\)\s*$", "", section))
    return "spec:" + "".join(w[:1].upper() + w[1:] for w in words if w)


def cite(message: str, cid: str | None) -> str:
    """The one form an id takes in a message: a trailing ` [<id>]`."""
    return f"{message} [{cid}]" if cid else message


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

    def fail(self, param: str, rule: str, got=None, *, show_got: bool = True, cid: str | None = None):
        """Raise the XlaError of `param` breaking `rule` (constraint `cid`, see the module's doc)."""
        msg = f"'xla.{self.op}' {param} {rule}"
        if show_got:
            msg += f"; got {show(got)}"
        raise XlaError(cite(msg, cid), op=self.op, param=param, location=self.location, constraint=cid)

    # -- operand kinds ---------------------------------------------------------------
    def array(self, param: str, s: Shape, *, cid: str | None = None) -> Shape:
        if not isinstance(s, Shape) or not s.is_array:
            self.fail(param, "must be an array", s, cid=cid)
        return s

    def token(self, param: str, s: Shape, *, cid: str | None = None) -> Shape:
        if not s.is_token:
            self.fail(param, "must be a token", s, cid=cid)
        return s

    def scalar(self, param: str, s: Shape, types: Iterable[ElementType] | None = None,
               what: str = "", *, cid: str | None = None) -> Shape:
        self.array(param, s, cid=cid)
        if s.rank != 0:
            self.fail(param, f"must be a scalar{' of ' + what if what else ''}", s, cid=cid)
        if types is not None:
            self.element_type(param, s, types, what, cid=cid)
        return s

    def element_type(self, param: str, s: Shape, types: Iterable[ElementType], what: str, *,
                     cid: str | None = None) -> Shape:
        self.array(param, s, cid=cid)
        if s.element_type not in tuple(types):
            self.fail(param, f"must have {what} element type", s, cid=cid)
        return s

    def same_element_type(self, p1: str, s1: Shape, p2: str, s2: Shape, *, cid: str | None = None):
        if s1.element_type != s2.element_type:
            self.fail(p2, f"must have the element type of {p1} ({s1.element_type})", s2, cid=cid)

    def same_shape(self, p1: str, s1: Shape, p2: str, s2: Shape, *, cid: str | None = None):
        if s1 != s2:
            self.fail(p2, f"must have the shape of {p1} ({s1})", s2, cid=cid)

    def rank(self, param: str, s: Shape, rank: int, what: str = "", *, cid: str | None = None):
        if s.rank != rank:
            self.fail(param, f"must have rank {rank}{what}", s, cid=cid)

    # -- integer lists ---------------------------------------------------------------------
    def dims_in_range(self, param: str, dims: Sequence[int], rank: int, what: str = "the operand's", *,
                      cid: str | None = None):
        if not isinstance(dims, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                          for d in dims):
            self.fail(param, "must be a sequence of integers", dims, cid=cid)
        for d in dims:
            if not 0 <= d < rank:
                self.fail(param, f"must be dimensions of {what} rank {rank}, in [0, {rank})", list(dims),
                          cid=cid)

    def unique(self, param: str, dims: Sequence[int], *, cid: str | None = None):
        if len(set(dims)) != len(dims):
            self.fail(param, "must not repeat", list(dims), cid=cid)

    def ascending(self, param: str, dims: Sequence[int], *, cid: str | None = None):
        if any(b <= a for a, b in zip(dims, dims[1:])):
            self.fail(param, "must be in ascending order without repeats", list(dims), cid=cid)

    def permutation(self, param: str, perm: Sequence[int], rank: int, *, cid: str | None = None):
        if sorted(perm) != list(range(rank)):
            self.fail(param, f"must be a permutation of [0, {rank})", list(perm), cid=cid)

    def length(self, param: str, values: Sequence, n: int, what: str, *, cid: str | None = None):
        if len(values) != n:
            self.fail(param, f"must have {n} elements ({what})", list(values), cid=cid)

    def non_negative(self, param: str, values: Sequence[int], *, cid: str | None = None):
        if any(v < 0 for v in values):
            self.fail(param, "must not be negative", list(values), cid=cid)

    def positive(self, param: str, values: Sequence[int], *, cid: str | None = None):
        if any(v <= 0 for v in values):
            self.fail(param, "must be positive", list(values), cid=cid)


# element-type classes used by the op tables
def types_of(*kinds: str) -> tuple[ElementType, ...]:
    from .types import ALL_TYPES
    return tuple(t for t in ALL_TYPES if t.kind in kinds)


def require_floating(target: str, t: ElementType) -> None:
    """The linear-algebra calls' rule on their matrices' type (LAPACK's routines and XLA's
    decomposition targets, on the host or as device code): `target` names the custom call's
    target, `t` is its operand 0's element type."""
    if not t.is_floating:
        Check("custom_call").fail(f"{target} operand 0", "must have a floating-point or complex element type",
                                  t, cid=spec_id("CustomCall"))
