"""Reduce (ReduceWindow, SelectAndScatter and ReducePrecision join this family later)."""
from __future__ import annotations

import itertools

import numpy as np

from ..attrs import Ints
from ..core import Attr, Comp, OpDef, Operands, register
from ..types import Shape


def check_reducer(chk, param: str, sig, types, what: str = "") -> Shape:
    """A computation of type (T_0..T_{N-1}, T_0..T_{N-1}) -> Collate(T_0..T_{N-1})."""
    n = len(types)
    want = tuple(Shape(t, ()) for t in types) * 2
    if len(sig.params) != 2 * n:
        chk.fail(param, f"must take {2 * n} scalar parameters {list(want)}{what}", sig)
    if sig.params != want:
        chk.fail(param, f"must have parameters {list(want)}{what}", sig)
    result = want[0] if n == 1 else Shape.tuple(want[:n])
    if sig.result != result:
        chk.fail(param, f"must return {result}{what}", sig)
    return result


def _reduce_infer(chk, operands, init_values, computation, dimensions):
    n = len(operands)
    if n < 1:
        chk.fail("operands", "must have at least one array (N >= 1)", [])
    if len(init_values) != n:
        chk.fail("init_values", f"must have one scalar per operand ({n})", init_values)
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s)
        if s.dims != operands[0].dims:
            chk.fail(f"operands[{i}]", f"must have the dimensions of operands[0] ({operands[0]})", s)
    for i, (s, init) in enumerate(zip(operands, init_values)):
        chk.scalar(f"init_values[{i}]", init)
        chk.same_element_type(f"operands[{i}]", s, f"init_values[{i}]", init)
    rank = operands[0].rank
    chk.dims_in_range("dimensions", dimensions, rank)
    chk.unique("dimensions", dimensions)
    check_reducer(chk, "computation", computation, [s.element_type for s in operands])
    keep = [operands[0].dims[d] for d in range(rank) if d not in dimensions]
    outs = [Shape(s.element_type, keep) for s in operands]
    return outs[0] if n == 1 else Shape.tuple(outs)


def _reduce_ref(operands, init_values, computation, dimensions, *, result):
    """Sequential left fold in row-major order, f(acc..., value...), all output positions at once."""
    n = len(operands)
    x0 = np.asarray(operands[0])
    keep = [d for d in range(x0.ndim) if d not in dimensions]
    red = sorted(dimensions)
    perm = keep + red
    xs = [np.transpose(np.asarray(x), perm) for x in operands]
    out_dims = tuple(x0.shape[d] for d in keep)
    accs = [np.broadcast_to(np.asarray(v), out_dims).copy() for v in init_values]
    for idx in itertools.product(*[range(x0.shape[d]) for d in red]):
        vals = [x[(Ellipsis,) + idx] for x in xs]
        r = computation(*accs, *vals, batch=out_dims)
        accs = list(r) if n > 1 else [r]
    return accs[0] if n == 1 else tuple(accs)


register(OpDef("Reduce", (Operands("operands"), Operands("init_values"), Comp("computation"),
                          Attr("dimensions", Ints())),
               _reduce_infer, _reduce_ref, "reduction", "Reduce",
               doc="reduce one or more arrays over dimensions with a computation (init on the left)"))
