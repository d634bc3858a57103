"""Lowering of Call, Map, While and Conditional (Sort lives in lowering/sort.py).

While and Conditional move their computations' ops into scf.while / scf.if / scf.index_switch
regions; the loop state and branch results travel as builtin-typed leaves (tuples flattened),
so the state stays in SSA values across iterations.  A While that counts (JAX's fori_loop and
scan: `mark_counted_loops` finds them before the patterns run) becomes an scf.for over a trip
count computed once, with nothing read back from the device per trip."""
from __future__ import annotations

import numpy as np

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.core import find_function, functions
from xlair.dialect.ir import arith, func, ir, passmanager, scf, tensor
from xlair.dialect.types import Shape, is_tensor

from .cost import op_work
from .registry import (Anchor, affine_map, barrier, builtin_leaves, const_int, defining_op, empty, extract_scalar,
                       fill, from_builtin_leaves, generic, has_effects, index, lowers, nested_ops, options,
                       scalar_const, splice_region, to_builtin)
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
    if _COUNTED in lw.op.attributes:
        k, is_leaf, b, *pairs = ir.DenseI64ArrayAttr(lw.op.attributes[_COUNTED])
        steps = dict(zip(pairs[0::2], pairs[1::2]))
        return _lower_counted(lw, (k, ("leaf", b) if is_leaf else b, steps), inits)
    entry_test = lw.op.operation.clone()          # a second copy of the condition computation
    anchor = Anchor()
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
            anchor = Anchor()
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


# ----------------------------------------------------------------------------------------
# counted loops: JAX's fori_loop and scan
# ----------------------------------------------------------------------------------------
def _gte_index(v: ir.Value, arg: ir.Value) -> int | None:
    """k when `v` is get_tuple_element(arg, k)."""
    op = defining_op(v)
    if op is None or op.name != "xla.get_tuple_element" or op.operands[0] != arg:
        return None
    return ir.IntegerAttr(op.attributes["index"]).value


def _splat_int(v: ir.Value) -> int | None:
    op = defining_op(v)
    if op is None or op.name != "xla.constant":
        return None
    a = op.attributes["value"]
    if not isinstance(a, ir.DenseIntElementsAttr):
        return None
    return int(a[0]) if a.is_splat else None


def _int_scalar(s: Shape) -> bool:
    """An integer scalar whose values an i64 holds (u64 does not fit)."""
    et = s.element_type if not s.is_tuple else None
    return et is not None and s.rank == 0 and et.is_integer and et.bits <= 64 and \
        not (et.is_unsigned and et.bits == 64)


def _step(v: ir.Value, b_arg: ir.Value, e: int) -> int | None:
    """c when `v` is `state[e] + c` (c an integer constant), in either order."""
    add = defining_op(v)
    if add is None or add.name != "xla.add":
        return None
    for a, c in (add.operands, reversed(list(add.operands))):
        if _gte_index(a, b_arg) == e and (step := _splat_int(c)) is not None:
            return step
    return None


def counted_loop(op: ir.Operation, state: Shape):
    """`(k, bound, steps)` when a While counts: its state is a tuple whose element k, an
    integer scalar, the condition compares `state[k] < bound` (or `bound > state[k]`) and
    the body returns as `state[k] + 1`, with `bound` a constant (an int) or an element j of
    the state the body returns unchanged (`("leaf", j)`).  Such a loop runs max(0, bound -
    state[k]) times: JAX's fori_loop and scan.  `steps` maps the other integer scalars the
    body advances by a constant (`state[e] + c`: fori_loop's own index beside scan's) to
    their step: at trip t they hold `state[e] + t * c`.  None otherwise."""
    if not state.is_tuple:
        return None
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    c_arg, b_arg = cond.arguments[0], body.arguments[0]
    cmp = defining_op(list(cond.operations)[-1].operands[0])
    if cmp is None or cmp.name not in ("xla.lt", "xla.gt"):
        return None
    counter, bound = cmp.operands if cmp.name == "xla.lt" else reversed(list(cmp.operands))
    k = _gte_index(counter, c_arg)
    ret = defining_op(list(body.operations)[-1].operands[0])
    if k is None or not _int_scalar(state.tuple_shapes[k]) or ret is None or ret.name != "xla.tuple" \
            or _step(ret.operands[k], b_arg, k) != 1:
        return None
    steps = {e: c for e, s in enumerate(state.tuple_shapes)
             if e != k and _int_scalar(s) and (c := _step(ret.operands[e], b_arg, e)) is not None}
    c = _splat_int(bound)
    if c is not None:
        return k, c, steps
    j = _gte_index(bound, c_arg)
    if j is not None and j != k and _gte_index(ret.operands[j], b_arg) == j:
        return k, ("leaf", j), steps
    return None


_COUNTED = "xlair.counted"


def mark_counted_loops(module: ir.Module) -> None:
    """Before the patterns run (they lower a While's body ops before the While itself): every
    counted While (`counted_loop`) gets `xlair.counted = [k, 0, bound, e, c, ...]` or `[k, 1,
    j, e, c, ...]`, the pairs its other stepped scalars.  None with the pass option
    `counted=off`."""
    from .registry import options
    if options().counted == "off":
        return

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if op.name == "xla.while":
            c = counted_loop(op, Shape.from_mlir(op.results[0].type))
            if c is not None:
                k, bound, steps = c
                head = [k, 1, bound[1]] if isinstance(bound, tuple) else [k, 0, bound]
                op.attributes[_COUNTED] = ir.DenseI64ArrayAttr.get(head + [x for e in sorted(steps) for x in (e, steps[e])])
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)


def _leaf_index(state: Shape, k: int) -> int:
    """The position among the state's leaves of its (scalar) tuple element k."""
    return sum(len(s.leaves()) for s in state.tuple_shapes[:k])


def _lower_counted(lw, counted, inits):
    """A counted While as `scf.for` over max(0, bound - counter) trips on the host: no
    condition is evaluated and nothing is read back per iteration.  Inside the body the
    counter, and every other scalar the body steps by a constant, is the host value `start +
    t * step` at trip t (so a DynamicSlice at it slices at a host index), and after the loop
    it is `start + trips * step`.

    The loop sits in an `scf.if` on `trips > 0`, and the first iteration is peeled off before
    the scf.for, which runs the others.  IREE 3.13's VM miscompiles a branch that passes one
    buffer to two block arguments (iree-org/iree#24753: the register allocator moves one
    copy, and the other argument arrives null: "indirect buffer reference slot 0 is out
    range of the declared binding capacity of the command buffer 0" at the first
    copy_buffer).  Entering a loop whose carried arrays IREE packed into one allocation does
    that (the flax GRU and LSTM gradients: ten stacked residuals started from one zero
    constant); the values the peeled body yields come from separate buffers, as on the
    back-edge.  Peeling also keeps the exit value of the loop from ever being an entry value
    that others read (see lower_while).  The peeled trip's results enter the loop through
    util.optimization_barrier: fed straight in, IREE's stream partitioning failed on flax's
    Dropout (threefry's five rounds) with "circular dependency: input operation uses
    partition output"."""
    state_shape = lw.result_shape
    k, bound, steps = counted
    steps = {k: 1, **steps}                            # tuple element -> its step per trip
    at = {_leaf_index(state_shape, e): (state_shape.tuple_shapes[e].element_type, c) for e, c in steps.items()}
    i64, idx = ir.IntegerType.get_signless(64), ir.IndexType.get()

    def wide(v, et):                    # an integer of type et, widened to i64
        if et.bits == 64:
            return v
        return arith.extui(i64, v) if et.is_unsigned else arith.extsi(i64, v)

    starts = {leaf: wide(extract_scalar(inits[leaf]), et) for leaf, (et, _) in at.items()}
    ck = _leaf_index(state_shape, k)
    et = at[ck][0]
    start = starts[ck]
    if isinstance(bound, int):          # an unsigned splat may read as a negative number
        stop = arith.constant(i64, bound + (1 << et.bits) if et.is_unsigned and bound < 0 else bound)
    else:
        stop = wide(extract_scalar(inits[_leaf_index(state_shape, bound[1])]), et)
    more = arith.cmpi(arith.CmpIPredicate.sgt, stop, start)
    trips = arith.select(more, arith.subi(stop, start), arith.constant(i64, 0))
    carried = [v for i, v in enumerate(inits) if i not in at]

    def values_at(t):
        """The stepped scalars at trip t (an i64): start + t * step, wrapped to their type."""
        out = {}
        for leaf, (e, c) in at.items():
            v = starts[leaf] if c == 0 else arith.addi(starts[leaf], t if c == 1 else arith.muli(t, arith.constant(i64, c)))
            v = v if e.bits == 64 else arith.trunci(ir.IntegerType.get_signless(e.bits), v)
            out[leaf] = tensor.from_elements(inits[leaf].type, [v])
        return out

    def merge(rest, known):
        it = iter(rest)
        return [known[i] if i in known else next(it) for i in range(len(inits))]

    def trip(region, leaves, t):
        """One trip: the body's ops spliced here; its result leaves but the stepped ones."""
        state = from_builtin_leaves(merge(leaves, values_at(t)), state_shape)
        anchor = Anchor()
        (new_state,) = splice_region(region, [state], anchor.op)
        with ir.InsertionPoint(anchor.op):
            out = builtin_leaves(new_state, state_shape)
        anchor.done()
        return [v for i, v in enumerate(out) if i not in at]

    branch = scf.IfOp(more, [v.type for v in carried], has_else=True)
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp(carried)
    with ir.InsertionPoint(branch.then_block):
        peeled = lw.op.operation.clone()                 # a second copy of the body
        first = [barrier(v) for v in trip(peeled.regions[1], carried, arith.constant(i64, 0))]
        peeled.erase()
        loop = scf.ForOp(index(1), arith.index_cast(idx, trips), index(1), first)
        with ir.InsertionPoint(loop.body):
            iv = arith.index_cast(i64, loop.induction_variable)
            scf.YieldOp(trip(lw.args["body"], list(loop.inner_iter_args), iv))
        scf.YieldOp(list(loop.results))
    res = [_keep_result(v) for v in branch.results]
    return from_builtin_leaves(merge(res, values_at(trips)), state_shape)


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


_EVENED = "xlair.evened"


def _uneven(op: ir.Operation) -> bool:
    """An scf.while whose regions take different types: canonicalization drops the argument of
    a state leaf the loop never reads (the do-while's body overwrites it) from the `before`
    region, while the `after` region still receives it from scf.condition."""
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    return [a.type for a in before.arguments] != [a.type for a in after.arguments]


def _forwarded(op: ir.Operation) -> list[int] | None:
    """For an scf.while in lower_while's do-while form (its `after` region yields some of its
    arguments as they are, each once): for each argument of the `before` region, the position
    of the `after` region's argument that feeds it; None for another form."""
    after = op.regions[1].blocks[0]
    ops = [o.operation for o in after.operations]
    args = list(after.arguments)
    if len(ops) != 1:
        return None
    pos = []
    for v in ops[0].operands:
        k = next((i for i, a in enumerate(args) if a == v), None)
        if k is None or k in pos:
            return None
        pos.append(k)
    return pos


def _even_out(op: ir.Operation, pos: list[int]) -> None:
    """The loop rebuilt with its `after` region's signature on both regions: each state value
    the body overwrites gets its `before` argument back, entering the loop as a tensor.empty
    (never read: the body sets it before anything reads it)."""
    types = [a.type for a in op.regions[1].blocks[0].arguments]
    old = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        inits = [op.operands[pos.index(j)] if j in pos else empty(t) for j, t in enumerate(types)]
        w = scf.WhileOp(types, inits)
        before = w.before.blocks.append(*types)
        for i, a in enumerate(old.arguments):
            a.replace_all_uses_with(before.arguments[pos[i]])
        with ir.InsertionPoint(before):
            anchor = Anchor()
        for o in list(old.operations):
            o.operation.move_before(anchor.op)
        anchor.done()
        after = w.after.blocks.append(*types)
        with ir.InsertionPoint(after):
            scf.YieldOp(list(after.arguments))
    w.operation.attributes[_EVENED] = ir.UnitAttr.get()
    for r, n in zip(op.results, w.results):
        r.replace_all_uses_with(n)
    op.erase()


def even_out_loops(module: ir.Module) -> dict[str, ir.Operation]:
    """After canonicalization: every uneven scf.while (_uneven) of lower_while's form evened
    out (_even_out), so that lowering/device_loops.py can move it onto the device like any
    other loop.  IREE's canonicalizations make it uneven again later, harmless inside a
    dispatch region but not on the host (uneven_loops_to_cfg).  Returns a detached copy of
    each function holding such a loop, as it is now, for uneven_loops_to_cfg."""
    copies = {}
    for name, f in functions(module).items():
        found = []

        def visit(op):
            op = op.operation if hasattr(op, "operation") else op
            if op.name == "scf.while" and _uneven(op):
                pos = _forwarded(op)
                if pos is not None and all(is_tensor(a.type) for a in op.regions[1].blocks[0].arguments):
                    found.append((op, pos))
            return ir.WalkResult.ADVANCE
        f.walk(visit)
        for op, pos in found:
            _even_out(op, pos)
        if found:
            copies[name] = f.clone()
    return copies


# ----------------------------------------------------------------------------------------
# host loops in chunks: a read of the condition every loop_chunk trips
# ----------------------------------------------------------------------------------------
#: the mark of the counted chunk of a While run in chunks (xlair.compile: IREE refusing it
#: compiles the program again with loops=host)
CHUNK_ATTR = "xlair.loop_chunk"
#: a trip's work (elements of the tensors its ops make) up to which a While is run in chunks:
#: the wasted trips of the last chunk cost work, the saved reads latency
CHUNK_MAX_WORK = 1 << 22
#: ops a trip of a chunked loop may hold: no side effect (a host call is a func.call of a
#: declaration, the generator's state a util global) and no loop without a bound (the trips
#: past the loop's end run its body on its final state)
_CHUNK_OPS = ("arith.", "math.", "complex.", "tensor.", "linalg.", "iree_linalg_ext.", "bufferization.alloc_tensor",
              "scf.for", "scf.if", "scf.index_switch", "scf.yield", "scf.condition", "func.call", "func.return",
              "util.optimization_barrier", "flow.dispatch.region", "flow.return")


def _trip_work(ops, funcs: dict, seen: tuple = ()) -> int | None:
    """Elements of the tensors the ops make (their nested ops' and called functions' too; an
    scf.for's body times its trips), or None when one of them may not run in a chunk
    (_CHUNK_OPS) or a tensor or trip count is not static."""
    work = 0
    for o in ops:
        o = o.operation
        name = o.name
        if not name.startswith(_CHUNK_OPS):
            return None
        for r in o.results:
            if is_tensor(r.type):
                t = ir.RankedTensorType(r.type)
                if not t.has_static_shape:
                    return None
                work += int(np.prod(t.shape, dtype=np.int64))
        times = 1
        if name == "scf.for":
            bounds = [const_int(v) for v in list(o.operands)[:3]]
            if None in bounds or bounds[2] <= 0:
                return None
            times = max(0, -(-(bounds[1] - bounds[0]) // bounds[2]))
        elif name == "func.call":
            callee = ir.FlatSymbolRefAttr(o.attributes["callee"]).value
            f = funcs.get(callee)
            if f is None or callee in seen or not len(f.regions[0].blocks):
                return None
            inner = _trip_work(f.regions[0].blocks[0].operations, funcs, seen + (callee,))
            if inner is None:
                return None
            work += inner
        if name.startswith(("linalg.", "iree_linalg_ext.")):
            if any(x.name == "scf.while" for x in nested_ops(o)):    # a GPU's device loop: no bound either
                return None
            continue            # a body of scalars
        for region in o.regions:
            for block in region.blocks:
                inner = _trip_work(block.operations, funcs, seen)
                if inner is None:
                    return None
                work += times * inner
    return work


def _chunkable(w: ir.Operation, funcs: dict) -> tuple | None:
    """(the tensor<i1> the trip's condition is read from, the forwarding of lower_while's
    do-while form) when the scf.while may run in chunks, else None."""
    pos = _forwarded(w)
    before, after = w.regions[0].blocks[0], w.regions[1].blocks[0]
    if pos is None or not all(is_tensor(a.type) and ir.RankedTensorType(a.type).has_static_shape
                              for a in after.arguments):
        return None
    ops = [o.operation for o in before.operations]
    read = defining_op(ops[-1].operands[0])
    if read is None or read.name != "tensor.extract" or read.parent != ops[-1].parent or \
            ir.RankedTensorType(read.operands[0].type).rank != 0:
        return None
    work = _trip_work(ops[:-1], funcs)
    if work is None or work > CHUNK_MAX_WORK:
        return None
    return read, pos


def _keep_if(go: ir.Value, new: ir.Value, old: ir.Value) -> ir.Value:
    """new where the 0-d i1 tensor `go` holds true, else old (element-wise)."""
    rank = ir.RankedTensorType(new.type).rank
    ident = affine_map(rank, list(range(rank)))
    (out,) = generic([go, new, old], [affine_map(rank, []), ident, ident], [empty(new.type)], [ident],
                     ["parallel"] * rank, lambda g, n, o, _: arith.select(g, n, o))
    return out


def _chunk(w: ir.Operation, read: ir.Operation, pos: list[int], most: int) -> None:
    """The scf.while rebuilt to run its trip (its `before` region: lower_while's body then
    condition) in chunks: an scf.for of n trips between two reads of the condition, n carried
    by the loop on the host (1, 2, 4, ... up to `most`: a short loop wastes few trips, a long
    one reads once every `most`).  A trip after the condition failed keeps the state as it was
    (_keep_if), so the loop's results are the While's."""
    before, after = w.regions[0].blocks[0], w.regions[1].blocks[0]
    ops = [o.operation for o in before.operations]
    cond = ops[-1]
    types = [a.type for a in after.arguments]
    again = read.operands[0]
    i1, idx = ir.IntegerType.get_signless(1), ir.IndexType.get()
    loc = w.location
    with ir.InsertionPoint(w), loc:
        nw = scf.WhileOp(types + [idx], list(w.operands) + [index(1)])
        nb = nw.before.blocks.append(*[a.type for a in before.arguments], idx)
        na = nw.after.blocks.append(*types, idx)
    for name in list(w.attributes):
        nw.operation.attributes[name] = w.attributes[name]
    with ir.InsertionPoint(nb), loc:
        trips = nb.arguments[-1]
        # a state leaf the trip overwrites starts each chunk as zeros, never kept (an empty
        # tensor there, read by the first trip's choice, made lavapipe lose its device)
        inits = [None] * len(types)
        go = arith.constant(ir.RankedTensorType.get([], i1),
                            ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i1), ir.BoolAttr.get(True)))
        for i in range(len(before.arguments)):
            inits[pos[i]] = nb.arguments[i]
        for j, t in enumerate(types):
            if inits[j] is None:
                shape = Shape.from_mlir(t)
                inits[j] = fill(shape, scalar_const(shape.element_type, 0))
        loop = scf.ForOp(index(0), trips, index(1), inits + [go])
    loop.operation.attributes[CHUNK_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), most)
    body = loop.body
    state, going = list(body.arguments)[1:-1], body.arguments[-1]
    with ir.InsertionPoint(body), loc:
        anchor = Anchor()
    for o in ops[:-1]:
        o.move_before(anchor.op)
    # the moved ops read the state of the chunk's trip
    for i, a in enumerate(before.arguments):
        a.replace_all_uses_with(state[pos[i]])
    with ir.InsertionPoint(anchor.op), loc:
        # (a leaf the trip passes on as it is needs no choice)
        kept = [old if new == old else _keep_if(going, new, old) for new, old in zip(list(cond.operands)[1:], state)]
        (still,) = generic([going, again], [affine_map(0, [])] * 2, [empty(again.type)], [affine_map(0, [])], [],
                           lambda g, a, _: arith.andi(g, a))
        scf.YieldOp(kept + [still])
    anchor.done()
    results = list(loop.results)
    with ir.InsertionPoint(nb), loc:
        more = arith.minui(arith.muli(trips, index(2)), index(most))
        scf.ConditionOp(tensor.extract(results[-1], []), results[:-1] + [more])
    with ir.InsertionPoint(na), loc:
        scf.YieldOp([na.arguments[p] for p in pos] + [na.arguments[-1]])
    for r, n in zip(w.results, nw.results):
        r.replace_all_uses_with(n)
    cond.erase()
    if not any(True for _ in read.results[0].uses):
        read.erase()
    w.erase()


def chunk_host_loops(module: ir.Module) -> None:
    """After lowering/device_loops.py, on targets with a loop_chunk (lowering/targets.py): each
    While left on the host (an scf.while outside dispatch regions and linalg bodies) whose trip
    has no side effect, no loop without a bound and at most CHUNK_MAX_WORK of work reads its
    condition back once every loop_chunk trips (_chunk), not every trip."""
    trips = options().desc.loop_chunk
    if trips <= 1 or options().loops != "device":
        return
    funcs = functions(module)
    for f in funcs.values():
        found = []

        def visit(op):
            op = op.operation if hasattr(op, "operation") else op
            # (not a GPU's device loop in a linalg.generic's body, device_loops.py)
            if op.name == "scf.while" and _on_host(op, f) and not _within(op, f, "linalg.generic"):
                found.append(op)
            return ir.WalkResult.ADVANCE
        f.walk(visit)
        for w in found:
            got = _chunkable(w, funcs)
            if got is not None:
                _chunk(w, *got, trips)


def _within(op: ir.Operation, f: ir.Operation, name: str) -> bool:
    """Whether `op` is nested in an op named `name` inside function `f`."""
    p = op.parent
    while p is not None and p != f:
        if p.name == name:
            return True
        p = p.parent
    return False


def _on_host(op: ir.Operation, f: ir.Operation) -> bool:
    return not _within(op, f, "flow.dispatch.region")


def _convertible(f: ir.Operation) -> tuple[bool, bool]:
    """(whether function `f` holds an uneven or evened scf.while outside dispatch regions,
    whether every scf op of it outside a linalg.generic is nested in scf ops only: IREE's
    iree-top-level-scf-to-cfg converts all of those, and a region of another op (a dispatch
    region) must keep its single block)."""
    uneven, safe = False, True

    def visit(op):
        nonlocal uneven, safe
        op = op.operation if hasattr(op, "operation") else op
        if op.name == "scf.while" and (_EVENED in op.attributes or _uneven(op)) and _on_host(op, f):
            uneven = True
        if op.name.startswith("scf."):
            p = op.parent
            while p is not None and p != f:
                if p.name == "linalg.generic":
                    break
                if not p.name.startswith("scf."):
                    safe = False
                    break
                p = p.parent
        return ir.WalkResult.ADVANCE
    f.walk(visit)
    return uneven, safe


def uneven_loops_to_cfg(module: ir.Module, copies: dict[str, ir.Operation] | None = None) -> None:
    """After lowering/device_loops.py: a function holding an uneven or evened scf.while left on
    the host has its scf ops turned into branches between blocks (IREE's
    iree-top-level-scf-to-cfg; linalg.generic bodies are left as they are).  IREE 3.13's
    stream conversion gives both regions of an scf.while the signature of its operands, and
    its canonicalizations make an evened loop uneven again: on an uneven loop it failed to
    verify ("region branch point has 4 operands, but region successor needs 2 inputs") or
    crashed in ScfWhileOpConversion (jax.scipy.optimize.minimize's line search, lax.betainc, a
    `while err > tol` loop; docs/iree-limits.md); a branch does not.  IREE's pass would also
    turn the loops of a dispatch region into blocks: a function with both takes back its copy
    from before device_loops (`copies`, from even_out_loops), its loops all on the host."""
    copies = copies or {}
    pm = None
    for name, f in functions(module).items():
        uneven, safe = _convertible(f)
        if uneven and not safe and name in copies:
            ir.InsertionPoint(f).insert(copies[name])
            f.erase()
            f = copies[name]
            uneven, safe = _convertible(f)
        if uneven and safe:
            pm = pm or passmanager.PassManager.parse("func.func(iree-top-level-scf-to-cfg)")
            pm.run(f)


def _branch_leaves(region, operand, out: Shape) -> list[ir.Value]:
    """One branch computation applied to `operand` at the insertion point: its result's
    builtin-typed leaves."""
    anchor = Anchor()
    (res,) = splice_region(region, [operand], anchor.op)
    leaves = builtin_leaves(res, out)
    anchor.done()
    return leaves


def _branch(block, region, operand, out: Shape):
    """Fill an scf region's block with one branch computation applied to `operand`."""
    with ir.InsertionPoint(block):
        scf.YieldOp(_branch_leaves(region, operand, out))


#: the work (lowering/cost.py op_work, all branches together) up to which a Conditional
#: computes every branch and selects its results element-wise (`_selected`), instead of
#: branching on the host.  A host branch reads its predicate back from a GPU (a round trip),
#: and IREE 3.13's VM passed one buffer to two block arguments where a branch yields two
#: results of one allocation (iree-org/iree#24753: "%r2 may be null", every form failed on
#: CUDA, ROCm and Vulkan for the JVP of a lax.switch; docs/iree-limits.md).  XLA's
#: ConditionalToSelect does the same for cheap branches
SELECT_MAX_WORK = 1 << 16


def _branch_work(ops, seen: set) -> int | None:
    """The work of a branch's ops (their regions and the functions they call included), or
    None where a branch holds a While (it may not end when the branch is not taken)."""
    work = 0
    for o in ops:
        o = getattr(o, "operation", o)
        if o.name == "xla.while":
            return None
        if o.name == "xla.call":
            callee = ir.FlatSymbolRefAttr(o.attributes["computation"]).value
            f = find_function(o, callee)
            if f is None or callee in seen:
                return None
            inner = _branch_work(f.regions[0].blocks[0].operations, seen | {callee})
            if inner is None:
                return None
            work += inner
        elif o.name.startswith("xla."):
            work += op_work(o)
        for region in o.regions:
            for block in region.blocks:
                inner = _branch_work(block.operations, seen)
                if inner is None:
                    return None
                work += inner
    return work


_SELECT = "xlair.select"


def _selectable(op: ir.Operation) -> bool:
    """Whether a Conditional (its branches still `xla` ops) is small, without effects
    (lowering/registry.py has_effects: one walk of its branches and the functions they call)
    or loops, and has more than one branch and no token result."""
    if len(op.regions) < 2 or any(s.is_token for s in Shape.from_mlir(op.results[0].type).leaves()) \
            or has_effects(op):
        return False
    work = 0
    for region in op.regions:
        w = _branch_work(region.blocks[0].operations, set())
        if w is None:
            return False
        work += w
    return work <= SELECT_MAX_WORK


def mark_select_conditionals(module: ir.Module) -> None:
    """Before the patterns run (they lower a branch's ops, its loops included, before the
    Conditional itself): every `_selectable` Conditional gets `xlair.select`."""
    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if op.name == "xla.conditional" and _selectable(op):
            op.attributes[_SELECT] = ir.UnitAttr.get()
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)


def _selected(lw, regions, operands, out: Shape) -> list[ir.Value]:
    """A Conditional marked by mark_select_conditionals as every branch computed and its
    results chosen element-wise by the branch index (an index out of range takes the last
    branch, as the spec's does)."""
    results = [_branch_leaves(region, operand, out) for region, operand in zip(regions, operands)]
    pick = to_builtin(lw.value("branch_index"))
    is_pred = lw.shape("branch_index").element_type.is_pred
    chosen = []
    for k, s in enumerate(out.leaves()):
        n = len(s.dims)
        ident, scalar = affine_map(n, list(range(n))), affine_map(n, [])

        def body(i, *vals):
            if is_pred:                              # (true, false)
                return arith.select(i, vals[0], vals[1])
            v = vals[-2]                             # the last branch: any other index
            for j in range(len(vals) - 3, -1, -1):
                k_ = arith.constant(i.type, ir.IntegerAttr.get(i.type, j))
                v = arith.select(arith.cmpi(arith.CmpIPredicate.eq, i, k_), vals[j], v)
            return v
        leaves = [r[k] for r in results]
        chosen.append(generic([pick] + leaves, [scalar] + [ident] * len(leaves), [empty(s)], [ident],
                              ["parallel"] * n, body)[0])
    return chosen


@lowers("xla.conditional")
def lower_conditional(lw):
    out = lw.result_shape
    types = [s.builtin_mlir() for s in out.leaves()]
    regions = lw.args["branch_computations"]
    operands = lw.args["branch_operands"]
    if _SELECT in lw.op.attributes:
        return from_builtin_leaves(_selected(lw, regions, operands, out), out)
    sel = extract_scalar(lw.value("branch_index"))
    if lw.shape("branch_index").element_type.is_pred:        # (true, false)
        op = scf.IfOp(sel, types, has_else=True)
        _branch(op.then_block, regions[0], operands[0], out)
        _branch(op.else_block, regions[1], operands[1], out)
        return from_builtin_leaves(list(op.results), out)
    if len(regions) == 1:                                    # the only branch always runs
        anchor = Anchor()
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
