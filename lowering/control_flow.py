"""Lowering of Call, Map, While and Conditional (Sort lives in lowering/sort.py).

While and Conditional move their computations' ops into scf.while / scf.if / scf.index_switch
regions; the loop state and branch results travel as builtin-typed leaves (tuples flattened),
so the state stays in SSA values across iterations."""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.ir import arith, func, ir, scf
from xlair.dialect.types import Shape

from .registry import (affine_map, barrier, builtin_leaves, empty, extract_scalar, from_builtin_leaves,
                       generic, index, lowers, splice_region, to_builtin)
from .scalar import emit_region


@lowers("xla.call")
def lower_call(lw):
    callee = lw.attr("computation")
    args = lw.args["args"]
    leaves = [v for a in args for v in builtin_leaves(a, Shape.from_mlir(a.type))]
    out = lw.result_shape
    call = func.CallOp([s.builtin_mlir() for s in out.leaves()], ir.FlatSymbolRefAttr.get(callee), leaves)
    return from_builtin_leaves(list(call.results), out)


@lowers("xla.map", scalar_regions=True)
def lower_map(lw):
    out = lw.result_shape
    n = out.rank
    ident = affine_map(n, list(range(n)))
    operands = lw.value("operands")
    statics = lw.value("static_operands")
    maps = [ident] * len(operands) + [affine_map(n, [])] * len(statics)

    def body(*scalars):
        return emit_region(lw.args["computation"], list(scalars[:-1]), lw.op.name)
    return generic(operands + statics, maps, [empty(out)], [ident], ["parallel"] * n, body)[0]


class _Anchor:
    """A placeholder op marking where spliced ops go; erased once the terminator exists."""

    def __init__(self):
        self.op = ir.Operation.create("xla.anchor")

    def done(self):
        self.op.erase()


@lowers("xla.while")
def lower_while(lw):
    """`if cond(init) { do { s = body(s) } while (cond(s)) } else { init }`.

    The do-while form keeps the loop's exit value from ever being its entry value.  IREE 3.13
    frees a loop-carried transient buffer when the loop exits ("dealloca origin"); when a loop
    ran zero iterations that buffer was the entry value, which other ops (another loop sharing
    the same constant init) still read: the CPU runtime then failed with "transient buffer has
    not been committed".  Each iteration still evaluates the condition once.

    Each of the scf.if's results leaves through a util.optimization_barrier, so that
    canonicalization keeps it; `unwrap_read_loop_results` then removes the barriers of the
    results something reads.  When nothing reads the loop's state (JAX's LU pivot loop:
    `lu_factor`, `det` and `slogdet` drop the permutation), canonicalization would otherwise
    leave an scf.if without results around the scf.while, and IREE 3.13's stream pipeline
    fails on that form with "maximum iteration count exceeded in fixed point pipeline" when
    the loop body holds a barrier or a call (see docs/iree-limits.md)."""
    state_shape = lw.result_shape
    init = lw.args["init"]
    inits = builtin_leaves(init, state_shape)
    types = [v.type for v in inits]
    entry_test = lw.op.operation.clone()          # a second copy of the condition computation
    anchor = _Anchor()
    (pred,) = splice_region(entry_test.regions[0], [init], anchor.op)
    anchor.done()
    branch = scf.IfOp(extract_scalar(to_builtin(pred)), types, has_else=True)
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp(inits)
    with ir.InsertionPoint(branch.then_block):
        w = scf.WhileOp(types, inits)
        before = w.before.blocks.append(*types)
        with ir.InsertionPoint(before):
            state = from_builtin_leaves(list(before.arguments), state_shape)
            anchor = _Anchor()
            (new_state,) = splice_region(lw.args["body"], [state], anchor.op)
            (again,) = splice_region(lw.args["condition"], [new_state], anchor.op)
            with ir.InsertionPoint(anchor.op):
                scf.ConditionOp(extract_scalar(to_builtin(again)), builtin_leaves(new_state, state_shape))
            anchor.done()
        after = w.after.blocks.append(*types)
        with ir.InsertionPoint(after):
            scf.YieldOp(list(after.arguments))
        scf.YieldOp(list(w.results))
    entry_test.erase()
    return from_builtin_leaves([_keep_result(v) for v in branch.results], state_shape)


_KEEP = "xlair.loop_result"


def _keep_result(v: ir.Value) -> ir.Value:
    # one barrier per value: IREE's stream-refine-usage gives each operand of a barrier its
    # own resource lifetime but the results one, and fails to verify a barrier of a returned
    # (external) value and a constant one: "all of {operands, results} have same type"
    b = barrier(v)
    b.owner.attributes[_KEEP] = ir.UnitAttr.get()
    return b


def unwrap_read_loop_results(module: ir.Module) -> None:
    """After canonicalization: a While's result that something reads loses its barrier (a
    read barrier hides the value's origin from IREE: on Vulkan, a constant initial value that
    left an inner loop through one and was carried by an outer loop was freed as if it had
    been allocated, "queue_dealloca buffer was not returned by queue_alloca"); an unread one
    keeps it, so the scf.if keeps that result."""
    found = []

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if op.name == "util.optimization_barrier" and _KEEP in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    for op in found:
        del op.attributes[_KEEP]
        res = op.results[0]
        if any(True for _ in res.uses):
            res.replace_all_uses_with(op.operands[0])
            op.erase()


def _branch(block, region, operand, out: Shape):
    """Fill an scf region's block with one branch computation applied to `operand`."""
    with ir.InsertionPoint(block):
        anchor = _Anchor()
        (res,) = splice_region(region, [operand], anchor.op)
        scf.YieldOp(builtin_leaves(res, out))
        anchor.done()


@lowers("xla.conditional")
def lower_conditional(lw):
    out = lw.result_shape
    types = [s.builtin_mlir() for s in out.leaves()]
    regions = lw.args["branch_computations"]
    operands = lw.args["branch_operands"]
    sel = extract_scalar(lw.value("branch_index"))
    if lw.shape("branch_index").element_type.is_pred:        # (true, false)
        op = scf.IfOp(sel, types, has_else=True)
        _branch(op.then_block, regions[0], operands[0], out)
        _branch(op.else_block, regions[1], operands[1], out)
        return from_builtin_leaves(list(op.results), out)
    if len(regions) == 1:                                    # the only branch always runs
        anchor = _Anchor()
        (res,) = splice_region(regions[0], [operands[0]], anchor.op)
        anchor.done()
        return res
    # a chain of scf.if on `index == k` (IREE 3.13 mishandles scf.index_switch with tensor
    # results); indices out of range fall through to the last branch
    return from_builtin_leaves(_chain(sel, regions, operands, out, types, 0), out)


def _chain(sel, regions, operands, out, types, k):
    if k == len(regions) - 1:
        return None
    i32 = ir.IntegerType.get_signless(32)
    is_k = arith.cmpi(arith.CmpIPredicate.eq, sel, arith.constant(i32, ir.IntegerAttr.get(i32, k)))
    op = scf.IfOp(is_k, types, has_else=True)
    _branch(op.then_block, regions[k], operands[k], out)
    if k + 1 == len(regions) - 1:
        _branch(op.else_block, regions[k + 1], operands[k + 1], out)
    else:
        with ir.InsertionPoint(op.else_block):
            rest = _chain(sel, regions, operands, out, types, k + 1)
            scf.YieldOp(rest)
    return list(op.results)
