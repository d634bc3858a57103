"""Computations and control flow: Call, Map, While, Conditional, Sort."""
from __future__ import annotations

import functools

import numpy as np

from ..attrs import Bool, Int, Ints
from ..core import Attr, Callee, Comp, Comps, OpDef, Operand, Operands, register
from ..types import PRED, S32, Shape


def _sig_params(chk, param, sig, want, what, *, cid: str):
    if len(sig.params) != len(want) or tuple(sig.params) != tuple(want):
        chk.fail(param, f"must take parameters {list(want)}{what}", sig, cid=cid)


# -- Call ------------------------------------------------------------------------------------
def _call_infer(chk, computation, args):
    if tuple(args) != tuple(computation.params):
        chk.fail("args", f"must match the parameters of the computation {computation}", list(args),
                 cid="spec:Call")
    return computation.result


def _call_ref(computation, args, *, result):
    return computation(*args)


def _call_bind(computation, args=()):
    """call(computation, args) or call(builder, computation, args) (args may be empty)."""
    return {"computation": computation, "args": list(args) if isinstance(args, (list, tuple)) else [args]}


register(OpDef("Call", (Callee("computation"), Operands("args")), _call_infer, _call_ref,
               "control_flow", "Call", bind=_call_bind,
               doc="invoke a computation with arguments (one shared function per computation)",
               constraints={
                   "spec:Call": "args have the types of the computation's parameters",
               }))


# -- Map -------------------------------------------------------------------------------------
def _map_infer(chk, operands, computation, dimensions, static_operands=()):
    if len(operands) < 1:
        chk.fail("operands", "must have at least one array", [], cid="map_c2")
    first = operands[0]
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s, cid="map_i1")
        if s.dims != first.dims:
            chk.fail(f"operands[{i}]", f"must have the dimensions of operands[0] ({first})", s, cid="map_c1")
    if list(dimensions) != list(range(first.rank)):
        chk.fail("dimensions", f"must be every dimension in order, [0, {first.rank}) (XLA maps over all "
                 "dimensions)", list(dimensions), cid="map_c3")
    for i, s in enumerate(static_operands):
        chk.scalar(f"static_operands[{i}]", s, cid="spec:Map")
    want = [Shape(s.element_type, ()) for s in operands] + list(static_operands)
    _sig_params(chk, "computation", computation, want, "", cid="map_c4")
    res = computation.result
    if not res.is_array or res.rank != 0:
        chk.fail("computation", "must return a scalar", computation, cid="map_c4")
    return Shape(res.element_type, first.dims)


def _map_ref(operands, computation, dimensions, static_operands=(), *, result):
    return computation(*[np.asarray(x) for x in operands], *static_operands, batch=result.dims)


def _map_bind(operands, computation, dimensions, static_operands=()):
    return {"operands": operands, "computation": computation, "dimensions": dimensions,
            "static_operands": list(static_operands)}


register(OpDef("Map", (Operands("operands"), Comp("computation"), Attr("dimensions", Ints()),
                       Operands("static_operands")),
               _map_infer, _map_ref, "control_flow", "Map", bind=_map_bind,
               doc="a scalar computation applied element-wise over N arrays (plus static scalar operands)",
               constraints={
                   "map_i1": "operands are arrays",
                   "map_c1": "`shape(inputs...) = shape(result)`",
                   "map_c2": "`0 < size(inputs) = N`",
                   "map_c3": "`dimensions = range(rank(inputs[0]))`",
                   "map_c4": "computation takes a scalar of each operand's element type (then the "
                             "static operands) and returns a scalar",
                   "spec:Map": "static_operands are scalars",
               }))


# -- While -----------------------------------------------------------------------------------
def _while_infer(chk, condition, body, init):
    _sig_params(chk, "condition", condition, [init], " (the type of init)", cid="while_c1")
    if condition.result != Shape(PRED, ()):
        chk.fail("condition", "must return a PRED scalar", condition, cid="while_c1")
    _sig_params(chk, "body", body, [init], " (the type of init)", cid="while_c2")
    if body.result != init:
        chk.fail("body", f"must return the type of init ({init})", body, cid="while_c2")
    return init


def _while_ref(condition, body, init, *, result):
    state = init
    while bool(condition(state)):
        state = body(state)
    return state


register(OpDef("While", (Comp("condition"), Comp("body"), Operand("init")),
               _while_infer, _while_ref, "control_flow", "While",
               doc="run body while condition holds, from init; returns the last state",
               constraints={
                   "while_c1": "condition has type (T) -> PRED scalar, T the type of init",
                   "while_c2": "body has type (T) -> T, T the type of init",
               }))


# -- Conditional -----------------------------------------------------------------------------
def _cond_infer(chk, branch_index, branch_computations, branch_operands):
    chk.scalar("branch_index", branch_index, (PRED, S32), "PRED or S32", cid="case_i1")
    n = len(branch_computations)
    if n < 1:
        chk.fail("branch_computations", "must have at least one computation", [], cid="case_c1")
    if branch_index.element_type == PRED and n != 2:
        chk.fail("branch_computations", "must be two computations (true, false) for a PRED predicate", n,
                 cid="spec:Conditional")
    if len(branch_operands) != n:
        chk.fail("branch_operands", f"must have one operand per branch computation ({n})",
                 len(branch_operands), cid="spec:Conditional")
    for i, (c, o) in enumerate(zip(branch_computations, branch_operands)):
        _sig_params(chk, f"branch_computations[{i}]", c, [o], f" (the type of branch_operands[{i}])",
                    cid="spec:Conditional")
    res = branch_computations[0].result
    for i, c in enumerate(branch_computations):
        if c.result != res:
            chk.fail(f"branch_computations[{i}]", f"must return the type of branch_computations[0] ({res})", c,
                     cid="case_c3")
    return res


def _cond_ref(branch_index, branch_computations, branch_operands, *, result):
    n = len(branch_computations)
    idx = np.asarray(branch_index)
    if idx.dtype == np.bool_:
        k = 0 if bool(idx) else 1            # (true_computation, false_computation)
    else:
        k = int(idx)
        k = k if 0 <= k < n else n - 1       # out of range: the last branch
    return branch_computations[k](branch_operands[k])


def _cond_bind(*args, **kw):
    """conditional(pred, true_operand, true_computation, false_operand, false_computation) or
    conditional(branch_index, branch_computations, branch_operands)."""
    if len(args) + len(kw) == 5:
        names = ["pred", "true_operand", "true_computation", "false_operand", "false_computation"]
        v = dict(zip(names, args))
        v.update(kw)
        missing = [n for n in names if n not in v]
        if missing:
            raise TypeError(f"missing {missing}")
        return {"branch_index": v["pred"], "branch_computations": [v["true_computation"], v["false_computation"]],
                "branch_operands": [v["true_operand"], v["false_operand"]]}
    names = ["branch_index", "branch_computations", "branch_operands"]
    v = dict(zip(names, args))
    v.update(kw)
    if set(v) != set(names):
        raise TypeError("takes (pred, true_operand, true_computation, false_operand, false_computation) "
                        "or (branch_index, branch_computations, branch_operands)")
    return v


register(OpDef("Conditional", (Operand("branch_index"), Comps("branch_computations"),
                               Operands("branch_operands")),
               _cond_infer, _cond_ref, "control_flow", "Conditional", bind=_cond_bind,
               doc="run one branch computation chosen by a PRED (true, false) or an S32 index "
                   "(out of range: the last)",
               constraints={
                   "case_i1": "branch_index is a PRED or S32 scalar",
                   "case_c1": "`0 < size(branches)`",
                   "case_c3": "`same(output_types(branches...))`",
                   "spec:Conditional": "a PRED branch_index has two branch computations; one operand "
                                       "per branch computation, of its parameter's type",
               }))


# -- Sort ------------------------------------------------------------------------------------
def sort_dimension(chk, dimension: int, rank: int) -> int:
    if not -rank <= dimension < rank:
        chk.fail("dimension", f"must be a dimension of the operands' rank {rank}, in [-{rank}, {rank})", dimension,
                 cid="sort_c4")
    return dimension % rank


def _sort_infer(chk, operands, comparator, dimension=-1, is_stable=False):
    if len(operands) < 1:
        chk.fail("operands", "must have at least one array", [], cid="sort_c1")
    first = operands[0]
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s, cid="sort_i1")
        if s.dims != first.dims:
            chk.fail(f"operands[{i}]", f"must have the dimensions of operands[0] ({first})", s, cid="sort_c3")
    if first.rank == 0:
        chk.fail("operands", "must have rank >= 1", first, cid="sort_c4")
    sort_dimension(chk, dimension, first.rank)
    want = [Shape(s.element_type, ()) for s in operands for _ in (0, 1)]
    _sig_params(chk, "comparator", comparator, want, " (two scalars per operand)", cid="sort_c5")
    if comparator.result != Shape(PRED, ()):
        chk.fail("comparator", "must return a PRED scalar", comparator, cid="sort_c5")
    return first if len(operands) == 1 else Shape.tuple(operands)


#: rows of at most this many elements are sorted by the reference from a table of the
#: comparator's answers for every pair of their elements, computed in batched calls; longer rows
#: ask the comparator once a comparison
SORT_TABLE_MAX = 2048
_SORT_BATCH = 1 << 20       # the most pairs one batched comparator call computes


class _Before:
    """A sort key: element i goes before element j when the comparator says so (`<` is the one
    question Python's sort asks)."""
    __slots__ = ("i", "before")

    def __init__(self, i, before):
        self.i, self.before = i, before

    def __lt__(self, other):
        return self.before(self.i, other.i)


def _sort_ref(operands, comparator, dimension=-1, is_stable=False, *, result):
    """Each row along `dimension` in the order of Python's stable sort, which asks only whether
    an element goes before another: comparator(x_i, x_j, y_i, y_j, ...) of the operands.  A stable
    order is also a valid unstable one."""
    xs = [np.asarray(x) for x in operands]
    d = dimension % xs[0].ndim
    moved = [np.moveaxis(x, d, -1) for x in xs]
    n = moved[0].shape[-1]
    if n <= 1 or moved[0].size == 0:
        outs = [x.copy() for x in xs]
        return outs[0] if len(outs) == 1 else tuple(outs)
    rows = [m.reshape(-1, n) for m in moved]
    outs = [r.copy() for r in rows]
    count = rows[0].shape[0]
    step = max(1, _SORT_BATCH // (n * n)) if n <= SORT_TABLE_MAX else 1
    for k0 in range(0, count, step):
        k1 = min(count, k0 + step)
        tables = _before_tables(comparator, [r[k0:k1] for r in rows]) if n <= SORT_TABLE_MAX else None
        for k in range(k0, k1):
            if tables is not None:
                t = tables[k - k0].tolist()
                before = lambda i, j, t=t: t[i][j]   # noqa: E731
            else:
                row = [r[k] for r in rows]
                before = functools.partial(_asks, comparator, row)
            order = sorted(range(n), key=lambda i, b=before: _Before(i, b))
            for o, r in zip(outs, rows):
                o[k] = r[k][order]
    outs = [np.moveaxis(o.reshape(m.shape), -1, d) for o, m in zip(outs, moved)]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _before_tables(comparator, rows) -> np.ndarray:
    """table[k, i, j]: does element i of row k go before its element j, for rows of n elements
    (n * n * len(rows) <= _SORT_BATCH, or one row), in batched comparator calls of at most
    _SORT_BATCH pairs."""
    count, n = rows[0].shape
    table = np.empty((count, n, n), bool)
    step = max(1, _SORT_BATCH // (count * n))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        shape = (count, i1 - i0, n)
        args = []
        for r in rows:
            args += [np.broadcast_to(r[:, i0:i1, None], shape), np.broadcast_to(r[:, None, :], shape)]
        table[:, i0:i1] = comparator(*args, batch=shape)
    return table


def _asks(comparator, row, i, j) -> bool:
    """Does element i of the row go before element j: one comparator call."""
    args = []
    for r in row:
        args += [r[i], r[j]]
    return bool(comparator(*args))


def _sort_bind(operands, comparator, dimension=-1, is_stable=False):
    return {"operands": operands, "comparator": comparator, "dimension": dimension, "is_stable": is_stable}


register(OpDef("Sort", (Operands("operands"), Comp("comparator"), Attr("dimension", Int(), -1),
                        Attr("is_stable", Bool(), False)),
               _sort_infer, _sort_ref, "control_flow", "Sort", bind=_sort_bind,
               doc="sort operands together along a dimension by a comparator computation",
               constraints={
                   "sort_i1": "operands are arrays",
                   "sort_c1": "`0 < size(inputs)`",
                   "sort_c3": "`same(shape(inputs...) + shape(results...))`",
                   "sort_c4": "operands have rank >= 1; `-R <= dimension < R`, where `R = "
                              "rank(operands[0])`",
                   "sort_c5": "comparator has type (E0, E0, ..., EN-1, EN-1) -> PRED scalar",
               }))
