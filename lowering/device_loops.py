"""Loops on the device: a loop whose tensors are small runs as one dispatch (CPU target); so
does the whole body of a small program, or a loop with the small ops around it (_device_block).

After xla-to-linalg, a While (lowering/control_flow.py) is an scf.for when it counts, else an
scf.while, and the host drives it: IREE runs each trip's linalg ops as dispatches of their own, and every index the trip
computes on the device (a DynamicSlice's start) is read back before the next dispatch.  That
costs ~8 us a trip on the CPU, whatever the trip does.  JAX's `lu_pivots_to_permutation` (in
every jnp.linalg.solve, lu_factor, det) is such a loop: 255 trips swapping two elements of an
s32[256] for a 256x256 solve, ~2 ms where XLA:CPU's compiled loop takes microseconds.

`device_loops` moves such a loop into one `flow.dispatch.region`, where it runs as native code.
IREE's CPU codegen takes an scf.for of tensor.extract / tensor.insert in a dispatch region, but
refuses linalg ops under it ("write affecting operations on global resources are restricted to
workgroup distributed contexts"), so every linalg and iree_linalg_ext op of the loop body is
first rewritten into the scf.for nest of scalar reads and writes it stands for (the sequential
semantics of linalg: each iteration point reads its inputs and the output's current value and
writes its yield).  One-shot bufferization then needs each yielded tensor to live in its
iteration argument's buffer ("Yield operand is not equivalent to the corresponding iter
bbArg"): each trip reads a copy of its state and writes the new state back into the argument,
so the state is copied twice a trip (small, by the limits below), except a state only written,
once, and yielded (a scan's stacked outputs), which is updated in place (in the dispatch's
output buffer: its initial value is copied into a tensor the region makes, see _dispatch).

The scalar code is made to run fast: a chain of element-wise ops is computed where its last
op is read, element by element, with no tensor in between (_fused: an LSTM cell's gates are
one loop each); a contraction's loops run i, k, j (_loop_order) so that the innermost loop
updates a row; and xlair.compile turns on LLVM's loop vectorizer for such modules (IREE
leaves it off), which vectorizes those innermost loops.

A loop qualifies when every tensor in it has a static shape, every op of its body is one of
those below (scalar arith/math, tensor slicing and reshaping, linalg.generic and the named ops
(matmuls, pooling: whatever has indexing maps and a body), tensor.pad with static padding,
iree_linalg_ext.gather and scatter of whole trailing slices, scf.if), and the body is small:
at most MAX_WORK iteration points a trip (the code is scalar and single-threaded, where the
host loop's dispatches are vectorized and parallel; a While in the body counts WHILE_TRIPS
times) and at most MAX_BYTES of tensors made a
trip (a dispatch's temporaries live on its stack: IREE's CPU codegen allows 32 KB unless the
module asks for more, which it does above DEFAULT_STACK_BYTES, see STACK_ATTR), and its
dispatch binds at most the target's max_bindings buffers (over that, the tensors it reads from outside are
packed into one buffer per element type: _pack_reads).  Loops inside a loop that qualifies go with it;
of a loop that does not, the loops in its body are tried.  A function's whole body is tried
as one dispatch (_device_block) before its loops are tried one by one; a body past the bounds
runs each of its loops with the tiny ops around it as one (_segments).  A While's entry test
(lower_while's `if cond(init) { do-while }`) goes into its loop's dispatch (_move_guarded): on
the host it was a read back from the device a call.

On CUDA and ROCm (the target's device_loops "thread") a loop that qualifies within the bounds
of one GPU thread (THREAD_MAX_WORK, THREAD_MAX_BYTES) is scalarized the same way and becomes the
body of a linalg.generic instead of a dispatch region (_thread): IREE's GPU codegen gives a
dispatch without a linalg op no pipeline, and distributes the generic's points over threads,
each running the loop on its private copy of the state.  A function body without a loop or a
branch stays IREE's dispatches there.

Calls in a loop to the module's functions are inlined first (JAX calls jnp.where,
floor_divide and remainder as functions).  Two more forms IREE refuses are avoided on the
way: its dispatches store i1 tensors as i8 but it does not retype tensor.insert (the loop
holds its i1 tensors as i8 itself), and its CollapseDimensionsPass, folding unit dimensions,
moved a reshape out of an inner loop (the loop's tensors lose their unit dimensions first).
Each form is in docs/iree-limits.md.  Should IREE refuse another, xlair.compile compiles the
program again with `loops=host`.
"""
from __future__ import annotations

from xlair.dialect.core import enclosing_module, functions
from xlair.dialect.ir import arith, ir, linalg, scf, tensor
from xlair.dialect.types import is_tensor

from .bindings import element_wise
from .registry import (Anchor, const_int, defining_op, empty, extract_slice, generic, index, inline_body, insert_slice,
                       loop_index, nested_ops, options, reshape, splice_region)

#: iteration points of the ops of one trip (scalar code)
MAX_WORK = 1 << 16
#: the trips a While inside a loop's body counts for in its work (MAX_WORK): it has no trip
#: count, and a trip of at most MAX_WORK / WHILE_TRIPS points runs faster as scalar code than
#: as dispatches driven by the host (~8 us a trip; JAX's line search inside BFGS's loop)
WHILE_TRIPS = 8
#: bytes of the tensors one trip creates, the two copies of the state included: they live on
#: the dispatch's stack, and the bound is at or above what IREE allocates there (lstm_scan with
#: a 60 KB bound asked for 52,992 bytes; the GRU scan gradient's backward loop, 100,352 bytes
#: by both)
MAX_BYTES = 393216
#: Up to this bound, the stack IREE's CPU codegen allows by default (32 KB) holds them; above,
#: the module asks for more (stack_limit: the STACK_ATTR attribute, which xlair.compile turns
#: into `--iree-llvmcpu-stack-allocation-limit` and writes into the signature as "stack").
#: IREE's task workers run dispatches on 128 KB stacks by default (its `--task_worker_stack_size`),
#: xlair's on WORKER_STACK (python/xlair/device.py); local-sync runs them on the calling thread's.
DEFAULT_STACK_BYTES = 28672
#: A function body run as one dispatch (_device_block) is one trip: it saves its dispatches'
#: cost once a call, where a loop saves it every trip, and bodies of larger tensors are left to
#: IREE's vectorized, parallel dispatches.  Measured: fft_ops as one body at MAX_BYTES ran as
#: fast as in 2 dispatches (0.038 ms) and compiled in 1.9 s instead of 1.1 s.
BLOCK_BYTES = 57344
STACK_ATTR = "xlair.dispatch_stack"
#: The bounds of the GPU's form ("thread", _thread): one GPU thread runs the loop, a few
#: hundred times slower at scalar code than the device's parallel dispatches, and holds its
#: tensors in private memory (CUDA, ROCm: a thread's local memory).  A host trip costs 0.5-1 ms
#: on CUDA (a read back and a resubmission).
THREAD_MAX_WORK = 1 << 12
THREAD_MAX_BYTES = 1 << 14
#: the mark of a generic holding a loop in the "thread" form (IREE ignores it)
THREAD_ATTR = "xlair.thread_loop"


def stack_limit(nbytes: int) -> int:
    """The stack a module whose dispatches may take `nbytes` asks for: a power of two, at least
    64 KB, with a quarter more than `nbytes` to spare (IREE's frames beside the tensors)."""
    limit = 1 << 16
    while limit < nbytes + nbytes // 4:
        limit *= 2
    return limit


#: the most any module asks for (MAX_BYTES's)
MAX_STACK = stack_limit(MAX_BYTES)

#: calls inlined into one loop or function body, at most
MAX_INLINED = 4096

#: ops kept as they are (on tensors or scalars): IREE's dispatch codegen takes them
_KEPT = {"tensor.extract", "tensor.insert", "tensor.extract_slice", "tensor.insert_slice", "tensor.from_elements",
         "tensor.empty", "tensor.splat", "scf.yield", "scf.if", "util.optimization_barrier"}
_SCALAR_DIALECTS = ("arith.", "math.")
#: ops inside the bodies of linalg and linalg_ext ops (scalar code, moved as it is)
_NOT_IN_BODIES = ("func.", "flow.", "hal.", "stream.", "iree_linalg_ext.", "linalg.generic", "util.")


def _static(t: ir.Type) -> bool:
    if not isinstance(t, ir.RankedTensorType):
        return not isinstance(t, ir.ShapedType)
    return ir.RankedTensorType(t).has_static_shape


def _elements(t: ir.Type) -> int:
    return _product(ir.RankedTensorType(t).shape)


def _bytes(t: ir.Type) -> int:
    et = ir.RankedTensorType(t).element_type
    width = ir.IntegerType(et).width if isinstance(et, ir.IntegerType) else ir.FloatType(et).width \
        if isinstance(et, ir.FloatType) else 128
    return _elements(t) * max(1, width // 8)


# ----------------------------------------------------------------------------------------
# what a body op costs, or None when the loop cannot go on the device
# ----------------------------------------------------------------------------------------
#: linalg ops with a form of their own here (the others go by their indexing maps)
_OWN_FORM = ("linalg.fill", "linalg.broadcast", "linalg.transpose", "linalg.reduce")


def _maps(op) -> list[ir.AffineMap] | None:
    """A structured linalg op's indexing maps: a generic's, or a named op's (matmul and the
    pooling ops carry them once verified), or None."""
    for key in ("indexing_maps", "linalg.memoized_indexing_maps"):
        if key in op.attributes:
            return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes[key])]
    if op.name in _CONTRACTIONS:
        n, maps = _CONTRACTIONS[op.name]
        return [ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(d) for d in m]) for m in maps]
    return None


#: the indexing maps of the contractions built without them (loop dims, then each operand's)
_CONTRACTIONS = {
    "linalg.matmul": (3, [(0, 2), (2, 1), (0, 1)]),
    "linalg.batch_matmul": (4, [(0, 1, 3), (0, 3, 2), (0, 1, 2)]),
    "linalg.matvec": (2, [(0, 1), (1,), (0,)]),
    "linalg.vecmat": (2, [(1,), (1, 0), (0,)]),
    "linalg.batch_matvec": (3, [(0, 1, 2), (0, 2), (0, 1)]),
    "linalg.dot": (1, [(0,), (0,), ()]),
}


def _domain(maps, operands) -> list[int] | None:
    """A linalg.generic's loop ranges, from the operands' shapes where a map result is a
    plain loop dimension."""
    n = maps[0].n_dims
    dims = [None] * n
    for m, v in zip(maps, operands):
        shape = ir.RankedTensorType(v.type).shape if is_tensor(v.type) else []
        for r, e in enumerate(m.results):
            if isinstance(e, ir.AffineDimExpr):
                dims[ir.AffineDimExpr(e).position] = shape[r]
    return None if any(d is None for d in dims) else dims


def _body_ok(op: ir.Operation) -> bool:
    """Whether a linalg or linalg_ext op's body is scalar code that can be moved as it is."""
    return not any((o.name.startswith(_NOT_IN_BODIES) and o.name != "iree_linalg_ext.yield")
                   or any(is_tensor(r.type) for r in o.results) for o in nested_ops(op))


def _gather_scatter_geometry(op) -> tuple | None:
    """(index depth, slice rank) of an iree_linalg_ext gather or scatter whose indexed
    dimensions are the leading ones of the operand and whose slices are its trailing ones."""
    name = op.name
    if name == "iree_linalg_ext.gather":
        source, indices, out = op.operands[0], op.operands[1], op.operands[2]
        big, batch_of = source, out
    else:
        updates, indices, out = op.operands[0], op.operands[1], op.operands[2]
        big, batch_of = out, updates
    depth = ir.RankedTensorType(indices.type).shape[-1]
    batch = ir.RankedTensorType(indices.type).rank - 1
    dmap = list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"]))
    rank = ir.RankedTensorType(big.type).rank
    slice_rank = ir.RankedTensorType(batch_of.type).rank - batch
    if dmap != list(range(depth)) or rank - slice_rank != depth:
        return None
    if list(ir.RankedTensorType(big.type).shape[depth:]) != list(ir.RankedTensorType(batch_of.type).shape[batch:]):
        return None
    return depth, batch


def _work(op: ir.Operation) -> int | None:
    """Iteration points of a body op once scalarized (0 for ops kept as they are), or None."""
    name = op.name
    if name.startswith(_SCALAR_DIALECTS) or name in _KEPT:
        if name == "scf.if":
            return _region_work(op)
        return 0
    if name.startswith("linalg.") and name not in _OWN_FORM:
        maps = _maps(op)
        if maps is None or len(op.regions) != 1 or len(maps) != len(op.operands) \
                or len(op.regions[0].blocks[0].arguments) != len(op.operands):
            return None
        dims = _domain(maps, list(op.operands))
        if dims is None or not _body_ok(op):
            return None
        return _product(dims)
    if name in ("linalg.fill", "linalg.broadcast", "linalg.transpose", "tensor.pad", "tensor.expand_shape",
                "tensor.collapse_shape"):
        if name == "tensor.pad" and (len(op.operands) != 1 or not _pad_value(op)):
            return None
        return _elements(op.results[0].type)
    if name == "linalg.reduce":
        return _elements(op.operands[0].type) * (len(op.operands) // 2) if _body_ok(op) else None
    if name in ("iree_linalg_ext.gather", "iree_linalg_ext.scatter"):
        if _gather_scatter_geometry(op) is None or (name == "iree_linalg_ext.scatter" and not _body_ok(op)):
            return None
        return _elements(op.operands[0 if name == "iree_linalg_ext.scatter" else 2].type)
    if name in ("scf.for", "scf.while", "scf.condition"):
        return _region_work(op) if name != "scf.condition" else 0
    return None


def _product(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _region_work(op: ir.Operation, once: bool = False, single: ir.Operation | None = None) -> int | None:
    """The work of an op's regions: of all its trips for a loop in a loop body (an scf.for's
    trip count must then be a constant; a While's counts WHILE_TRIPS), of one (`once`) for the
    loop being moved; the loop `single` in them counts one trip (a guarded loop, _guarded)."""
    total = 0
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                o = o.operation
                w = _region_work(o, once=True) if single is not None and o == single else _work(o)
                if w is None or not all(_static(r.type) for r in o.results):
                    return None
                total += w
    if once:
        return total
    if op.name == "scf.for" and total:
        lb, ub, st = (const_int(v) for v in list(op.operands)[:3])
        if None in (lb, ub, st) or st <= 0:
            return None
        total *= max(0, -(-(ub - lb) // st))
    elif op.name == "scf.while":
        total *= WHILE_TRIPS             # a while loop in the body: trips unknown
    return total


def _pad_value(op) -> ir.Value | None:
    """The value a static tensor.pad pads with, when it is the same everywhere."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 1 or ops[0].operation.name != "tensor.yield":
        return None
    v = ops[0].operation.operands[0]
    if defining_op(v) is None and v.owner == block:
        return None
    return v


#: ops whose results are views or in-place updates of their operands
_NO_NEW_TENSOR = ("tensor.extract_slice", "tensor.insert_slice", "tensor.insert", "util.optimization_barrier")


def _made_bytes(op: ir.Operation) -> int:
    return sum(_bytes(r.type) for o in nested_ops(op) if o.name not in _NO_NEW_TENSOR and not _fused(o)
               for r in o.results if is_tensor(r.type))


def _do_while(loop: ir.Operation) -> bool:
    """Whether an scf.while has the do-while form of lower_while, which the moves here assume
    (_copied_state): its "after" region passes the state on as it is, and its condition
    forwards as many values as the state has.  (A loop of another form, its condition
    forwarding one value fewer, failed with an IndexError in _own_state: JAX's
    scipy.sparse.linalg.cg in lax_scipy_sparse_test.)"""
    after = loop.regions[1].blocks[0]
    ops = [o.operation for o in after.operations]
    before = loop.regions[0].blocks[0]
    condition = list(before.operations)[-1].operation
    return len(ops) == 1 and list(ops[0].operands) == list(after.arguments) and \
        len(condition.operands) == len(before.arguments) + 1


def _qualifies(loop: ir.Operation, max_bytes: int = MAX_BYTES, per_trip: int | None = None,
               max_work: int = MAX_WORK) -> bool:
    if loop.name not in ("scf.while", "scf.for") or \
            not all(_do_while(o) for o in [loop] + nested_ops(loop) if o.name == "scf.while"):
        return False
    state = list(loop.results)
    if not state or not all(is_tensor(v.type) and _static(v.type) for v in state):
        return False
    if per_trip is None:
        per_trip = _region_work(loop, once=True)
    if per_trip is None:
        return False
    if _form() == "thread":
        max_work, max_bytes = min(max_work, THREAD_MAX_WORK), min(max_bytes, THREAD_MAX_BYTES)
    return per_trip <= max_work and _trip_bytes(loop) <= max_bytes and _captures_static(loop) and \
        _bindings(loop) <= options().desc.max_bindings


def _trip_bytes(loop: ir.Operation) -> int:
    """The bound on the stack a trip of the loop takes as a dispatch: the tensors it makes and
    two copies of its state and of the state of each loop in it (_own_state)."""
    return _made_bytes(loop) + 2 * sum(_bytes(a.type) for o in [loop] + _inner_loops(loop)
                                       for a in _copied_state(o, o == loop)[0] if is_tensor(a.type))


def _inner_loops(loop: ir.Operation) -> list[ir.Operation]:
    """The loops in `loop` that carry tensors."""
    return [o for o in nested_ops(loop) if o.name in ("scf.for", "scf.while") and any(is_tensor(r.type) for r in o.results)]


def _ask_for_stack(loop: ir.Operation) -> None:
    """The module asks for more stack than IREE's default when the loop may need more
    (stack_limit; the largest of its loops' asks)."""
    need = _trip_bytes(loop)
    if need <= DEFAULT_STACK_BYTES:
        return
    attrs = enclosing_module(loop).attributes
    limit = stack_limit(need)
    if STACK_ATTR in attrs:
        limit = max(limit, ir.IntegerAttr(attrs[STACK_ATTR]).value)
    attrs[STACK_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), limit)


def _reads(op: ir.Operation) -> list[ir.Value]:
    """The tensors `op` reads from outside itself, each once (constants and empty tensors
    aside: IREE clones them into the dispatch.  An empty tensor packed as a read, the thread
    form's outputs among them, was a copy of no data: "'stream.async.alloca' op illegal for
    this phase of lowering", random_distributions on CUDA)."""
    out: list[ir.Value] = []
    for o in [op] + nested_ops(op):
        for v in o.operands:
            if is_tensor(v.type) and not _within(v, op) and \
                    getattr(defining_op(v), "name", None) not in ("arith.constant", "tensor.empty") \
                    and not any(v == w for w in out):
                out.append(v)
    return out


def _element_type(v: ir.Value) -> str:
    return str(ir.RankedTensorType(v.type).element_type)


#: the buffers a device loop's dispatch leaves for what IREE binds beside its reads and
#: results (a constant it made a buffer of: _pack_results)
BINDING_SLACK = 2


def _bindings(loop: ir.Operation) -> int:
    """The buffers the loop's dispatch would bind, at most: the tensors it reads from outside
    and its results; over the target's max_bindings, the reads are packed into one buffer per
    element type (_pack_reads), and in the dispatch form the results too (_pack_results).
    (More than the CPU's 32 failed when the module was loaded: "binding count 33 > 32; while
    invoking native function hal.command_buffer.dispatch".)"""
    reads, results = _reads(loop), list(loop.results)
    if len(reads) + len(results) <= options().desc.max_bindings - BINDING_SLACK:
        return len(reads) + len(results)
    packed = len({_element_type(v) for v in reads})
    return packed + (len(results) if _form() == "thread" else len({_element_type(v) for v in results})) \
        + BINDING_SLACK


def _pack_reads(region: ir.Operation) -> None:
    """A dispatch region that would bind more than max_bindings buffers reads one buffer per
    element type instead: the tensors it reads from outside, flattened and laid end to end
    before the region (a copy of each, a call), sliced and reshaped back at its top."""
    reads = _reads(region)
    if len(reads) + len(region.results) <= options().desc.max_bindings:
        return
    block = region.regions[0].blocks[0]
    inside = nested_ops(region)
    groups: dict[str, list[ir.Value]] = {}
    for v in reads:
        groups.setdefault(_element_type(v), []).append(v)
    for values in groups.values():
        if len(values) < 2:
            continue
        sizes = [_elements(v.type) for v in values]
        et = ir.RankedTensorType(values[0].type).element_type
        with ir.InsertionPoint(region), region.location:
            packed = empty(ir.RankedTensorType.get([sum(sizes)], et))
            for v, offset in zip(values, _offsets(sizes)):
                packed = insert_slice(reshape(v, [_elements(v.type)]), packed, [offset])
        with ir.InsertionPoint.at_block_begin(block), region.location:
            unpacked = [reshape(extract_slice(packed, [offset], [n]), list(ir.RankedTensorType(v.type).shape))
                        for v, n, offset in zip(values, sizes, _offsets(sizes))]
        for o in inside:
            for k, w in enumerate(o.operands):
                for v, u in zip(values, unpacked):
                    if w == v:
                        o.operands[k] = u


def _offsets(sizes: list[int]) -> list[int]:
    return [sum(sizes[:k]) for k in range(len(sizes))]


def _captures_static(loop: ir.Operation) -> bool:
    return all(_static(v.type) for o in [loop] + nested_ops(loop) for v in o.operands)


# ----------------------------------------------------------------------------------------
# scalar forms
# ----------------------------------------------------------------------------------------
def _nest(dims, accs, body) -> list[ir.Value]:
    """An scf.for nest over `dims` carrying the tensors `accs`; `body(ivs, accs)` builds one
    point and returns the new accs."""
    if not dims:
        return body([], accs)

    def level(k, ivs, accs):
        loop = scf.ForOp(index(0), index(dims[k]), index(1), accs)
        with ir.InsertionPoint(loop.body):
            ivs2 = ivs + [loop.induction_variable]
            inner = list(loop.inner_iter_args)
            new = body(ivs2, inner) if k == len(dims) - 1 else level(k + 1, ivs2, inner)
            scf.YieldOp(new)
        return list(loop.results)
    return level(0, [], accs)


def _tabulate(dims, dest: ir.Value, value_at) -> ir.Value:
    """`dest` with every element at `ivs` over `dims` set to `value_at(ivs)`."""
    return _nest(list(dims), [dest], lambda ivs, accs: [tensor.insert(value_at(ivs), accs[0], ivs)])[0]


def _expr(e: ir.AffineExpr, ivs) -> ir.Value:
    if isinstance(e, ir.AffineDimExpr):
        return ivs[ir.AffineDimExpr(e).position]
    if isinstance(e, ir.AffineConstantExpr):
        return index(ir.AffineConstantExpr(e).value)
    for kind, fn in ((ir.AffineAddExpr, arith.addi), (ir.AffineMulExpr, arith.muli), (ir.AffineModExpr, arith.remsi),
                     (ir.AffineFloorDivExpr, arith.floordivsi), (ir.AffineCeilDivExpr, arith.ceildivsi)):
        if isinstance(e, kind):
            b = kind(e)
            return fn(_expr(b.lhs, ivs), _expr(b.rhs, ivs))
    raise ValueError(f"affine expression {e}")


def _at(m: ir.AffineMap, ivs) -> list[ir.Value]:
    return [_expr(e, ivs) for e in m.results]


def _inline(region: ir.Region, args, ivs=None) -> list[ir.Value]:
    """A body's ops moved to the insertion point, its arguments replaced by `args` and
    linalg.index by the loop counters `ivs`; returns what it yields."""
    moved = [o.operation for o in region.blocks[0].operations][:-1]
    anchor = Anchor()
    res = splice_region(region, args, anchor.op)
    anchor.done()
    found = []

    def visit(o):
        if o.operation.name == "linalg.index":
            found.append(o.operation)
        return ir.WalkResult.ADVANCE
    for o in moved:
        o.walk(visit)
    for o in found:
        o.results[0].replace_all_uses_with(ivs[ir.IntegerAttr(o.attributes["dim"]).value])
        o.erase()
    return res


def _read(v: ir.Value, at, arg: ir.Value) -> ir.Value:
    """The element of `v` at `at` for the body argument `arg` (a scalar operand as it is;
    an argument without uses stands for itself)."""
    if not any(True for _ in arg.uses):
        return arg
    return _element(v, at) if is_tensor(v.type) else v


def _element(v: ir.Value, at) -> ir.Value:
    """The element of tensor `v` at `at`: computed right here when an op fused into its reader
    makes `v` (see _fused), else read from the tensor."""
    op = defining_op(v)
    if op is None or not _fused(op):
        return tensor.extract(v, at)
    args = list(op.regions[0].blocks[0].arguments)
    return _inline(op.regions[0], [_read(x, _at(m, at), a) for x, m, a in zip(op.operands, _maps(op), args)],
                   at)[0]


def _fused(op: ir.Operation) -> bool:
    """Whether an element-wise linalg.generic (one result, an identity output map) is computed
    inside the scalar loop of what reads it, element by element, instead of into a tensor of
    its own (_element).  Its result has one use, in the same block, as an input whose every
    element the reader reads once: by a permutation map of a generic or named op (a matmul's
    operands are read many times: not those), or as a linalg.reduce input.  A chain of them
    (an LSTM cell's gates) becomes one scalar loop with no temporaries.  (A contraction fused
    the same way, its reduction loop innermost around each element, was 3x slower in lstm_scan
    than the contraction's own loops, whose innermost loop LLVM vectorizes: see _loop_order.)"""
    if not element_wise(op):
        return False
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return False
    user, k = uses[0].owner.operation, uses[0].operand_number
    if user.parent != op.parent:
        return False
    if user.name == "linalg.reduce":
        if k >= len(user.operands) // 2:
            return False
    else:
        if user.name in _SCALARIZE or not user.name.startswith("linalg."):
            return False
        umaps = _maps(user)
        if umaps is None or k >= len(user.operands) - len(user.results) or not umaps[k].is_permutation:
            return False
    out = _maps(op)[-1]
    return list(out.results) == [ir.AffineDimExpr.get(d) for d in range(out.n_dims)] and _body_ok(op) and \
        _chain_below(op) < MAX_FUSED_CHAIN


#: the longest chain of element-wise ops computed inside one reader (_fused): _element recurses
#: once a link (a sum of 500 arguments, pmap_test's testManyArgs, made a chain of 500 and
#: lowering failed with "RecursionError: maximum recursion depth exceeded"); past it, an op is
#: computed into a tensor of its own and the chain starts again
MAX_FUSED_CHAIN = 64


def _chain_below(op: ir.Operation) -> int:
    """How many levels of single-use element-wise producers of the same block feed `op` (at
    most MAX_FUSED_CHAIN): a bound on the chain _fused would put inside op's reader."""
    level, depth = [op], 0
    while level and depth < MAX_FUSED_CHAIN:
        nxt = []
        for o in level:
            for v in o.operands:
                d = defining_op(v)
                if d is not None and d.parent == op.parent and element_wise(d) and \
                        len(list(d.results[0].uses)) == 1 and not any(d == x for x in nxt):
                    nxt.append(d)
        level, depth = nxt, depth + (1 if nxt else 0)
    return depth


def _generic(op) -> list[ir.Value]:
    maps = _maps(op)
    n_in = len(op.operands) - len(op.results)
    ins, outs = list(op.operands)[:n_in], list(op.operands)[n_in:]
    dims = _domain(maps, ins + outs)

    def body(ivs, accs):
        args = list(op.regions[0].blocks[0].arguments)
        out_at = [_at(m, ivs) for m in maps[n_in:]]
        # (an input the body does not read, a pooling op's window, is not read: it is often a
        # tensor.empty)
        vals = [_read(v, _at(m, ivs), a) for v, m, a in zip(ins + accs, maps, args)]
        ys = _inline(op.regions[0], vals, ivs)
        return [tensor.insert(y, a, at) for y, a, at in zip(ys, accs, out_at)]
    order = _loop_order(op, maps)
    if order == list(range(len(dims))):
        return _nest(dims, outs, body)

    def permuted(ivs, accs):
        at = [None] * len(dims)
        for d, iv in zip(order, ivs):
            at[d] = iv
        return body(at, accs)
    return _nest([dims[d] for d in order], outs, permuted)


def _loop_order(op, maps) -> list[int]:
    """The order of a linalg op's loops, outermost first: its own, except that a reduction's
    loops go just inside the loop of its result's last dimension when an operand is contiguous
    along that dimension too (matmul: i, k, j).  Each element still sums in the same order (the
    same results, bit for bit), and the innermost loop updates a row of the result from a row
    of an operand, which LLVM vectorizes (compile.py turns its loop vectorizer on for such
    modules), where a reduction innermost is a serial chain of float additions: lstm_scan
    278 -> 72 us a call."""
    out = maps[-1]
    n = out.n_dims
    identity = list(range(n))
    if not out.results or not isinstance(out.results[-1], ir.AffineDimExpr):
        return identity
    kept = {ir.AffineDimExpr(e).position for e in out.results if isinstance(e, ir.AffineDimExpr)}
    summed = [d for d in range(n) if d not in kept]
    last = ir.AffineDimExpr(out.results[-1]).position
    if not summed or not any(m.results and m.results[-1] == out.results[-1] for m in maps[:-1]):
        return identity
    return [d for d in range(n) if d in kept and d != last] + summed + [last]


def _own_form(op) -> list[ir.Value]:
    name = op.name
    if name == "linalg.fill":
        return [_tabulate(ir.RankedTensorType(op.results[0].type).shape, op.operands[1], lambda ivs: op.operands[0])]
    if name in ("linalg.broadcast", "linalg.transpose"):
        src, dst = op.operands[0], op.operands[1]
        rank = ir.RankedTensorType(dst.type).rank
        if name == "linalg.broadcast":
            added = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))

            def src_at(ivs):
                return [ivs[d] for d in range(rank) if d not in added]
        else:
            perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))

            def src_at(ivs):
                at = [None] * rank
                for j, p in enumerate(perm):
                    at[p] = ivs[j]
                return at
        return [_tabulate(ir.RankedTensorType(dst.type).shape, dst, lambda ivs: tensor.extract(src, src_at(ivs)))]
    if name == "linalg.reduce":
        half = len(op.operands) // 2
        ins, outs = list(op.operands)[:half], list(op.operands)[half:]
        red = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        dims = list(ir.RankedTensorType(ins[0].type).shape)

        def body(ivs, accs):
            out_at = [iv for d, iv in enumerate(ivs) if d not in red]
            vals = [_element(v, ivs) for v in ins] + [tensor.extract(a, out_at) for a in accs]
            ys = _inline(op.regions[0], vals)
            return [tensor.insert(y, a, out_at) for y, a in zip(ys, accs)]
        return _nest(dims, outs, body)
    raise AssertionError(name)


def _pad(op) -> list[ir.Value]:
    src = op.operands[0]
    low = list(ir.DenseI64ArrayAttr(op.attributes["static_low"]))
    value = _pad_value(op)
    filled = _tabulate(ir.RankedTensorType(op.results[0].type).shape, empty(op.results[0].type), lambda ivs: value)
    sizes = list(ir.RankedTensorType(src.type).shape)
    return [tensor.InsertSliceOp(src, filled, [], [], [], low, sizes, [1] * len(low)).result]


def _reshape(op) -> list[ir.Value]:
    """tensor.expand_shape and collapse_shape as copies.  IREE's CollapseDimensionsPass
    rewrites the reads of a reshape in a dispatch region and left a read of a loop's argument
    outside that loop ("operand #0 does not dominate this use")."""
    src, out = op.operands[0], op.results[0]
    groups = [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(g)] for g in ir.ArrayAttr(op.attributes["reassociation"])]
    expand = op.name == "tensor.expand_shape"
    big = ir.RankedTensorType((out if expand else src).type).shape

    def source_at(ivs):
        at = []
        if expand:                       # a source index from its group of result indices
            for g in groups:
                v = ivs[g[0]]
                for d in g[1:]:
                    v = arith.addi(arith.muli(v, index(big[d])), ivs[d])
                at.append(v)
        else:                            # the source indices of a group from one result index
            at = [index(0)] * len(big)    # (dims in no group have size 1)
            for j, g in enumerate(groups):
                v = ivs[j]
                for d in reversed(g):
                    at[d] = arith.remui(v, index(big[d])) if d != g[0] else v
                    v = arith.divui(v, index(big[d])) if d != g[0] else v
        return tensor.extract(src, at)
    return [_tabulate(ir.RankedTensorType(out.type).shape, empty(out.type), source_at)]


def _position(indices, depth, batch_ivs, slice_ivs) -> list[ir.Value]:
    """The operand position of a gather/scatter point: the index vector, then the slice."""
    pos = []
    for j in range(depth):
        i = tensor.extract(indices, batch_ivs + [index(j)])
        pos.append(arith.index_cast(ir.IndexType.get(), i))
    return pos + slice_ivs


def _gather(op) -> list[ir.Value]:
    source, indices, out = op.operands[:3]
    depth, batch = _gather_scatter_geometry(op)
    return [_tabulate(ir.RankedTensorType(out.type).shape, out,
                      lambda ivs: tensor.extract(source, _position(indices, depth, ivs[:batch], ivs[batch:])))]


def _scatter(op) -> list[ir.Value]:
    updates, indices, original = op.operands[:3]
    depth, batch = _gather_scatter_geometry(op)
    dims = list(ir.RankedTensorType(updates.type).shape)

    def body(ivs, accs):
        pos = _position(indices, depth, ivs[:batch], ivs[batch:])
        (y,) = _inline(op.regions[0], [tensor.extract(updates, ivs), tensor.extract(accs[0], pos)])
        return [tensor.insert(y, accs[0], pos)]
    return _nest(dims, [original], body)


_SCALARIZE = {"linalg.fill": _own_form, "linalg.broadcast": _own_form, "linalg.transpose": _own_form,
              "linalg.reduce": _own_form, "tensor.pad": _pad, "tensor.expand_shape": _reshape,
              "tensor.collapse_shape": _reshape,
              "iree_linalg_ext.gather": _gather, "iree_linalg_ext.scatter": _scatter}


#: ops that make their result out of nothing they are given (no destination operand)
_NO_DESTINATION = ("tensor.pad", "tensor.expand_shape", "tensor.collapse_shape")


def _fresh_destinations(o: ir.Operation, loop: ir.Operation, scalarized: bool, kept: list) -> None:
    """The tensor an op writes into made the op's own: a copy, unless the loop made it and
    nothing else reads it.  Written in place while something else still reads it (a state
    argument, a fill two matmuls start from), IREE's bufferization would copy it with a linalg
    op, which it then refuses in the dispatch ("write affecting operations on global resources
    are restricted to workgroup distributed contexts").  `kept`: the state arguments updated in
    place (see _copied_state)."""
    if scalarized:
        first = len(o.operands) - len(o.results) if o.name not in _NO_DESTINATION else len(o.operands)
    else:
        first = 1 if o.name in ("tensor.insert_slice", "tensor.insert") else len(o.operands)
    for k in range(first, len(o.operands) if scalarized else min(first + 1, len(o.operands))):
        v = o.operands[k]
        if not is_tensor(v.type) or (defining_op(v) is not None and _within(v, loop) and len(list(v.uses)) == 1) \
                or any(v == a for a in kept):
            continue
        with ir.InsertionPoint(o), o.location:
            o.operands[k] = _copy(v, empty(v.type))


def _scalarize_block(block: ir.Block, loop: ir.Operation, kept: list) -> None:
    fused = []
    for o in list(block.operations):
        o = o.operation
        if _fused(o):           # computed by its reader's scalar loop (_element)
            fused.append(o)
            continue
        fn = _SCALARIZE.get(o.name) or (_generic if o.name.startswith("linalg.") else None)
        _fresh_destinations(o, loop, fn is not None, kept)
        if fn is not None:
            with ir.InsertionPoint(o), o.location:
                new = fn(o)
            for r, v in zip(o.results, new):
                r.replace_all_uses_with(v)
            o.erase()
        elif o.name == "util.optimization_barrier":
            for r, v in zip(o.results, o.operands):
                r.replace_all_uses_with(v)
            o.erase()
        elif o.name == "scf.yield" and getattr(o.parent, "name", None) == "scf.if":
            _distinct_yields(o, loop)
        else:
            for region in o.regions:
                for b in region.blocks:
                    _scalarize_block(b, loop, kept)
    for o in reversed(fused):
        made = [defining_op(v) for v in o.operands]
        o.erase()
        for d in made:           # the tensor.empty it would have written into
            if d is not None and d.name == "tensor.empty" and not any(True for _ in d.results[0].uses):
                d.erase()


def _distinct_yields(o: ir.Operation, loop: ir.Operation) -> None:
    """A branch of an scf.if in a dispatch region yields each tensor once, and only tensors the
    region makes: a tensor it yields again, or one from outside `loop` (a parameter, a
    constant), is yielded as a copy.  IREE 3.13 miscompiled a branch (the else branch) that
    yielded one tensor as two results of a dispatch region that also had a scalar result: the
    module failed at run time with "buffer view byte length 8 exceeds backing buffer byte
    length 4" (jax.grad of jax.grad through lax.cond, lax_control_flow_test's testCondGrad2).
    A branch yielding a parameter while the other yields a tensor the dispatch made failed to
    compile, "incompatible buffer types on then/else branches" (IREE's bufferization: a
    binding's buffer and a local one are in different memory spaces; the JVP of lax.switch,
    lax_control_flow_test's testSwitchJVP)."""
    seen = set()
    for k, v in enumerate(list(o.operands)):
        if not is_tensor(v.type):
            continue
        if v in seen or not _within(v, loop):
            with ir.InsertionPoint(o), o.location:
                o.operands[k] = _copy(v, empty(v.type))
        seen.add(v)


def _copy(src: ir.Value, dest: ir.Value) -> ir.Value:
    return _tabulate(ir.RankedTensorType(src.type).shape, dest, lambda ivs: tensor.extract(src, ivs))


def _own_state(loop: ir.Operation, in_place: bool) -> None:
    """Each trip reads a copy of its state and writes the new state into the iteration
    argument (see the module docstring); with `in_place`, not the state only updated in place."""
    block = loop.regions[0].blocks[0]
    args, shift, yield_op = _copied_state(loop, in_place)
    uses = [[(getattr(u.owner, "operation", u.owner), u.operand_number) for u in a.uses] for a in args]
    with ir.InsertionPoint(list(block.operations)[0]), loop.location:
        copies = [_copy(a, empty(a.type)) if a_uses else None for a, a_uses in zip(args, uses)]
    for c, a_uses in zip(copies, uses):
        for owner, n in a_uses:
            owner.operands[n] = c
    for a in args:
        k = a.arg_number + shift
        with ir.InsertionPoint(yield_op), loop.location:
            yield_op.operands[k] = _copy(yield_op.operands[k], a)


def _copied_state(loop: ir.Operation, in_place: bool = True) -> tuple[list, int, ir.Operation]:
    """The state arguments a trip works on a copy of (all but those only updated in place),
    the shift from an argument's number to its operand in the terminator, and the terminator
    (of scf.for's body, or of scf.while's "before" region: the counter is argument 0 of the
    one, the condition operand 0 of the other's scf.condition)."""
    block = loop.regions[0].blocks[0]
    counter, condition = (1, 0) if loop.name == "scf.for" else (0, 1)
    terminator = list(block.operations)[-1].operation
    shift = condition - counter
    return ([a for a in list(block.arguments)[counter:]
             if not (in_place and _in_place(a, terminator, a.arg_number + shift))], shift, terminator)


def _in_place(arg: ir.Value, terminator: ir.Operation, k: int) -> bool:
    """Whether the state `arg` is only written into, once, and that is its new value (a scan's
    stacked outputs: a DynamicUpdateSlice at the counter), which bufferizes in place."""
    uses = list(arg.uses)
    if len(uses) != 1:
        return False
    owner = getattr(uses[0].owner, "operation", uses[0].owner)
    if owner.name not in ("tensor.insert_slice", "tensor.insert") or uses[0].operand_number != 1:
        return False
    after = list(owner.results[0].uses)
    return len(after) == 1 and getattr(after[0].owner, "operation", after[0].owner) == terminator \
        and after[0].operand_number == k


def _dispatch(loop: ir.Operation, in_place: list[int]) -> ir.Operation:
    """The loop moved into a flow.dispatch.region.  The initial value of each state argument
    updated in place (numbers `in_place`) is first copied into a tensor made in the region:
    given the value from outside, a read-only input of the dispatch, IREE's bufferization gave
    the loop a copy of it on the stack (the ten 10 KB stacked residuals of a GRU scan: 108 KB,
    over the 32 KB limit); made in the region, the loop's result is the dispatch's output
    buffer, written in place."""
    region, ret = _new_region(loop, list(loop.results), replaced=True)
    loop.move_before(ret)
    first = 2 if loop.name == "scf.for" else 0      # scf.for's operands: bounds, step, then state
    for k in in_place:
        init = loop.operands[first + k]
        with ir.InsertionPoint(loop), loop.location:
            loop.operands[first + k] = _copy(init, empty(init.type))
    for k, v in enumerate(loop.operands):
        d = defining_op(v)
        if d is not None and d.name == "tensor.empty" and not _within(v, region):
            with ir.InsertionPoint(loop), loop.location:
                loop.operands[k] = empty(v.type)
    return region


def _new_region(before: ir.Operation, values: list[ir.Value], replaced: bool = False) -> tuple[ir.Operation, ir.Operation]:
    """(a flow.dispatch.region before `before` returning `values`, its flow.return): the ops
    that make them are then moved in before the return.  `replaced`: the uses of `values`
    read the region's results instead (before the return is made, which reads them)."""
    with ir.InsertionPoint(before), before.location:
        region = ir.Operation.create("flow.dispatch.region", results=[v.type for v in values], operands=[],
                                     attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])},
                                     regions=2)
    if replaced:
        for v, r in zip(values, region.results):
            v.replace_all_uses_with(r)
    with ir.InsertionPoint(region.regions[0].blocks.append()), before.location:
        ret = ir.Operation.create("flow.return", operands=values)
    return region, ret


def _pack_results(region: ir.Operation) -> None:
    """A dispatch region whose results and reads (packed: _pack_reads) would bind more buffers
    than the target takes, less BINDING_SLACK, returns one buffer per element type instead:
    its results flattened and laid end to end at its end, sliced and reshaped back after it.
    (JAX's jet of a logistic, 31 results of a tiny block: its dispatch bound 33 on the CPU's
    32, one of them a constant IREE bound itself: "IREE formed dispatches binding more buffers
    than cpu takes".)"""
    results = list(region.results)
    if len(_reads(region)) + len(results) <= options().desc.max_bindings - BINDING_SLACK:
        return
    block = region.regions[0].blocks[0]
    ret = list(block.operations)[-1].operation
    values = list(ret.operands)
    groups: dict[str, list[int]] = {}
    for k, v in enumerate(values):
        groups.setdefault(_element_type(v), []).append(k)
    returned, where = [], {}            # where: result k -> (returned value, offset or None)
    with ir.InsertionPoint(ret), region.location:
        for ks in groups.values():
            if len(ks) == 1:
                where[ks[0]] = (len(returned), None)
                returned.append(values[ks[0]])
                continue
            sizes = [_elements(values[k].type) for k in ks]
            packed = empty(ir.RankedTensorType.get([sum(sizes)], ir.RankedTensorType(values[ks[0]].type).element_type))
            for k, n, offset in zip(ks, sizes, _offsets(sizes)):
                packed = insert_slice(reshape(values[k], [n]), packed, [offset])
                where[k] = (len(returned), offset)
            returned.append(packed)
    new, new_ret = _new_region(region, returned)
    for o in list(block.operations)[:-1]:
        o.operation.move_before(new_ret)
    with ir.InsertionPoint(region), region.location:
        for k, r in enumerate(results):
            i, offset = where[k]
            shape = list(ir.RankedTensorType(r.type).shape)
            r.replace_all_uses_with(new.results[i] if offset is None else
                                    reshape(extract_slice(new.results[i], [offset], [_product(shape)]), shape))
    region.erase()


def _i8(t: ir.Type) -> ir.Type | None:
    """The i8 form of an i1 tensor type (None for other types)."""
    if is_tensor(t) and ir.RankedTensorType(t).element_type == ir.IntegerType.get_signless(1):
        return ir.RankedTensorType.get(list(ir.RankedTensorType(t).shape), ir.IntegerType.get_signless(8))
    return None


def _cast_tensor(v: ir.Value, t: ir.Type, widen: bool) -> ir.Value:
    """`v` widened from i1 to i8 (`widen`) or narrowed back, element by element; a splat
    constant as the constant of type `t` (as a linalg op, IREE ran it as a dispatch of its own
    and read its one element back on the host: see _local_empties)."""
    et = ir.RankedTensorType(t).element_type
    d = defining_op(v)
    value = d.attributes["value"] if d is not None and d.name == "arith.constant" else None
    if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
        bit = ir.IntegerAttr(value.get_splat_value()).value & 1
        return arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(et, bit)))
    return _mapped(v, t, lambda x: arith.extui(et, x) if widen else arith.trunci(et, x))


def _mapped(v: ir.Value, t: ir.Type, fn) -> ir.Value:
    """A linalg.generic of `fn` applied to each element of `v`, into a new tensor of type `t`
    (v's shape)."""
    rank = ir.RankedTensorType(t).rank
    ident = ir.AffineMap.get_identity(rank)
    return generic([v], [ident], [empty(t)], [ident], ["parallel"] * rank, lambda x, _o: fn(x))[0]


def _once(made: list, v: ir.Value, make, loop: ir.Operation) -> ir.Value:
    """`make()` of a value from outside the loop, built before the loop once per value."""
    for w, m in made:
        if w == v:
            return m
    with ir.InsertionPoint(loop), loop.location:
        m = make()
    made.append((v, m))
    return m


def _local_empties(loop: ir.Operation) -> None:
    """A tensor.empty from outside the loop used in it is made anew where it is used (widened
    or reshaped at the loop's edge, it would be read uninitialized); so is a one-element fill
    with a constant (a reduction's initial value: IREE hoists the scalar read of a one-element
    tensor from outside a dispatch out of it, a read back on the host of a dispatch's result)."""
    for o in nested_ops(loop):
        for k, v in enumerate(o.operands):
            d = defining_op(v)
            if d is None or _within(v, loop):
                continue
            if d.name == "tensor.empty":
                with ir.InsertionPoint(o), o.location:
                    o.operands[k] = empty(v.type)
            elif _constant_fill(d):
                with ir.InsertionPoint(o), o.location:
                    o.operands[k] = linalg.fill(d.operands[0], outs=[empty(v.type)])


def _constant_fill(d: ir.Operation) -> bool:
    """Whether `d` fills a one-element tensor.empty with a constant (made again where it is used)."""
    return d.name == "linalg.fill" and _elements(d.results[0].type) == 1 and \
        all(getattr(defining_op(v), "name", None) == n for v, n in zip(d.operands, ("arith.constant", "tensor.empty")))


def _within(v: ir.Value, loop: ir.Operation) -> bool:
    """Whether `v` is defined inside `loop` (by an op in it, or as an argument of a block in it)."""
    d = defining_op(v)
    return _inside(v.owner.owner if d is None else d, loop)


def _inside(o: ir.Operation, loop: ir.Operation) -> bool:
    """Whether `o` is `loop` or an op in it."""
    while o is not None:
        if o == loop:
            return True
        o = o.parent
        if o is not None and o.name == "func.func":
            return False
    return False


def _retype(loop: ir.Operation, new_type, to_new, to_old, mended: tuple) -> list[tuple]:
    """Every tensor of the loop whose type `new_type` changes (None: unchanged) takes the new
    type: values from outside it through `to_new(value, type)` before it, its results through
    `to_old` after it, its constants made before it.  Returns the loop's ops named in `mended`
    with the types their operands had, for the caller to mend the ops that need more than a
    type."""
    known: dict = {}
    changes = new_type

    def new_type(t):                          # (the loop's values share a few types)
        if t not in known:
            known[t] = changes(t)
        return known[t]
    inside = nested_ops(loop) + [loop]
    for o in inside:                          # constants: made before the loop (pure)
        if o.name == "arith.constant" and new_type(o.results[0].type) is not None:
            o.move_before(loop)
    inside = [o for o in inside if o.name != "arith.constant" or new_type(o.results[0].type) is None]
    orig = [(o, [v.type for v in o.operands]) for o in inside if o.name in mended]
    made: list = []
    for o in inside:                          # values from outside, converted before the loop
        for k, v in enumerate(o.operands):
            t = new_type(v.type)
            if t is not None and not _within(v, loop):
                # (an empty tensor becomes an empty tensor of the new type: converted, it would
                # be read uninitialized, which IREE warns of)
                d = defining_op(v)
                fresh = d is not None and d.name == "tensor.empty" and not d.operands
                o.operands[k] = _once(made, v, (lambda: empty(t)) if fresh else (lambda: to_new(v, t)), loop)
    for o in inside:                          # the loop's own values
        for r in o.results:
            if new_type(r.type) is not None and o != loop:
                r.set_type(new_type(r.type))
        for region in o.regions:
            for b in region.blocks:
                for a in b.arguments:
                    if new_type(a.type) is not None:
                        a.set_type(new_type(a.type))
    for r in loop.results:                    # its results, converted back after it
        t = new_type(r.type)
        if t is not None:
            uses = [(getattr(u.owner, "operation", u.owner), u.operand_number) for u in r.uses]
            old = r.type
            r.set_type(t)
            with ir.InsertionPoint.after(loop), loop.location:
                back = to_old(r, old)
            for owner, n in uses:
                owner.operands[n] = back
    return orig


def _widen_i1(loop: ir.Operation) -> None:
    """Tensors of i1 in the loop held as i8.  IREE stores i1 tensors of a dispatch as i8 and
    rewrites the element type of linalg ops for that, but not of tensor.insert ("'tensor.insert'
    op failed to verify that scalar type matches element type of dest"): the loop does it
    itself, widening at its edges and at every scalar read and write."""
    i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
    inside = [o for o, _ in _retype(loop, _i8, lambda v, t: _cast_tensor(v, t, True),
                                    lambda v, t: _cast_tensor(v, t, False),
                                    ("tensor.extract", "tensor.insert", "tensor.from_elements", "tensor.splat"))]
    for o in inside:                          # i1 scalars read and written as i8
        name = o.name
        if name == "tensor.extract" and o.results[0].type == i1 and _i8(o.operands[0].type) is None \
                and ir.RankedTensorType(o.operands[0].type).element_type == i8:
            o.results[0].set_type(i8)
            with ir.InsertionPoint.after(o), o.location:
                narrow = arith.trunci(i1, o.results[0])
            for use in [(getattr(u.owner, "operation", u.owner), u.operand_number) for u in o.results[0].uses]:
                if use[0] != defining_op(narrow):
                    use[0].operands[use[1]] = narrow
        elif name in ("tensor.insert", "tensor.from_elements", "tensor.splat"):
            for k, v in enumerate(o.operands):
                if v.type == i1 and (name != "tensor.insert" or k == 0):
                    with ir.InsertionPoint(o), o.location:
                        o.operands[k] = arith.extui(i8, v)


def _squeezed(t: ir.Type) -> ir.Type | None:
    """A tensor type without its dimensions of size 1 (None if it has none)."""
    if not is_tensor(t) or 1 not in ir.RankedTensorType(t).shape:
        return None
    rt = ir.RankedTensorType(t)
    return ir.RankedTensorType.get([d for d in rt.shape if d != 1], rt.element_type)


def _keep(seq, keep):
    return [x for x, k in zip(seq, keep) if k]


def _squeeze_units(loop: ir.Operation) -> None:
    """The loop's tensors without their dimensions of size 1.  IREE's dispatch creation folds
    unit dimensions of a dispatch region's tensors by itself, and over scalar loops of tensor
    reads and writes its CollapseDimensionsPass then moved a reshape of a loop argument out of
    the loop ("operand #0 does not dominate this use"); with no unit dimensions left it has
    nothing to fold.  Reads and writes drop the indices of those dimensions; tensors from
    outside the loop are reshaped before it and its results after it."""
    def reshaped(v, t):
        return reshape(v, ir.RankedTensorType(t).shape)
    orig = _retype(loop, _squeezed, reshaped, reshaped,
                   ("tensor.extract", "tensor.insert", "tensor.extract_slice", "tensor.insert_slice"))
    for o, types in orig:                     # reads and writes by the kept indices
        ops = list(o.operands)
        with ir.InsertionPoint(o), o.location:
            if o.name == "tensor.extract":
                keep = [d != 1 for d in ir.RankedTensorType(types[0]).shape]
                new = tensor.ExtractOp(ops[0], _keep(ops[1:], keep)).result
            elif o.name == "tensor.insert":
                keep = [d != 1 for d in ir.RankedTensorType(types[1]).shape]
                new = tensor.InsertOp(ops[0], ops[1], _keep(ops[2:], keep)).result
            else:
                new = _slice(o, ops, types)
        o.results[0].replace_all_uses_with(new)
        o.erase()


def _slice(o: ir.Operation, ops, types) -> ir.Value:
    """An extract_slice or insert_slice rebuilt over the squeezed tensor (its big side)."""
    extract = o.name == "tensor.extract_slice"
    big = ir.RankedTensorType(types[0] if extract else types[1]).shape
    keep = [d != 1 for d in big]
    statics = [list(ir.DenseI64ArrayAttr(o.attributes[k]))
               for k in ("static_offsets", "static_sizes", "static_strides")]
    dyn = list(ops[1 if extract else 2:])
    lists = []
    for st in statics:                        # each static list with its dynamic operands
        vals = []
        for x in st:
            vals.append(dyn.pop(0) if x == ir.ShapedType.get_dynamic_size() else None)
        lists.append((_keep(st, keep), [v for v in _keep(vals, keep) if v is not None]))
    (so, do), (ss, ds), (st_, dt) = lists
    if extract:
        t = _squeezed(o.results[0].type) or o.results[0].type
        return tensor.ExtractSliceOp(t, ops[0], do, ds, dt, so, ss, st_).result
    return tensor.InsertSliceOp(ops[0], ops[1], do, ds, dt, so, ss, st_).result


def _move(loop: ir.Operation) -> None:
    thread = _form() == "thread"
    if not thread:
        _ask_for_stack(loop)
    _local_empties(loop)
    inner = _inner_loops(loop)
    copied = _copied_state(loop)[0]
    kept = [a for a in list(loop.regions[0].blocks[0].arguments) if not any(a == c for c in copied)]
    _scalarize_block(loop.regions[0].blocks[0], loop, kept)
    for o in inner:
        _own_state(o, False)
    _own_state(loop, True)
    _squeeze_units(loop)
    _widen_i1(loop)
    if thread:
        _pack_reads(_thread(loop))
        return
    region = _dispatch(loop, [a.arg_number for a in kept if is_tensor(a.type)])
    _pack_reads(region)
    _pack_results(region)


def _form() -> str | None:
    """The target's form of a device loop: "dispatch" or "thread" (lowering/targets.py)."""
    return options().desc.device_loops


def _thread(loop: ir.Operation) -> ir.Operation:
    """The loop moved into the body of a linalg.generic (the GPU's form: see THREAD_MAX_WORK).
    The generic has one parallel dimension of as many points as the largest result has
    elements, and one output per result, flattened (padded to that size: a point past a
    result's elements yields its last one); each point runs the whole loop on its own copy of
    the state and yields its element of each result, which are sliced and reshaped back after
    it.  The loop's initial state from outside is copied into tensors made in the body (given
    a tensor bound from outside, IREE's CUDA bufferization failed on the copy it made, "failed
    to bufferize op"), as are the empty tensors it starts from.  IREE distributes the generic's
    points over threads, and keeps each thread's tensors in its private memory (LLVMGPU).  The
    generic is marked THREAD_ATTR (xlair.compile: a device loop IREE refused is compiled again
    with loops=host)."""
    results = list(loop.results)
    sizes = [_elements(r.type) for r in results]
    points = max(sizes)
    loc = loop.location
    with ir.InsertionPoint(loop), loc:
        outs = [empty(ir.RankedTensorType.get([points], ir.RankedTensorType(r.type).element_type)) for r in results]
        ident = ir.AffineMap.get_identity(1)
        g = linalg.GenericOp([o.type for o in outs], [], outs,
                             ir.ArrayAttr.get([ir.AffineMapAttr.get(ident)] * len(outs)),
                             ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")]))
        g.operation.attributes[THREAD_ATTR] = ir.UnitAttr.get()
        block = g.regions[0].blocks.append(*[ir.RankedTensorType(o.type).element_type for o in outs])
        back = [reshape(extract_slice(v, [0], [n]), list(ir.RankedTensorType(r.type).shape)) if n != points
                else reshape(v, list(ir.RankedTensorType(r.type).shape)) for v, n, r in zip(g.results, sizes, results)]
    for r, v in zip(results, back):
        r.replace_all_uses_with(v)
    with ir.InsertionPoint(block), loc:
        point = loop_index(0)
    loop.move_after(defining_op(point))
    first = 3 if loop.name == "scf.for" else 0      # scf.for's operands: bounds, step, then state
    for k in range(first, len(loop.operands)):
        v = loop.operands[k]
        if not is_tensor(v.type):
            continue
        d = defining_op(v)
        with ir.InsertionPoint(loop), loc:
            loop.operands[k] = empty(v.type) if d is not None and d.name == "tensor.empty" else _copy(v, empty(v.type))
    with ir.InsertionPoint(block), loc:
        ys = []
        for r, n in zip(results, sizes):
            at = arith.minui(point, index(n - 1)) if n != points else point
            ivs = []
            for d in reversed(ir.RankedTensorType(r.type).shape):
                ivs.insert(0, arith.remui(at, index(d)))
                at = arith.divui(at, index(d))
            ys.append(tensor.extract(r, ivs))
        linalg.YieldOp(ys)
    _private_allocations(g.operation)
    return g.operation


def _private_allocations(g: ir.Operation) -> None:
    """Each empty tensor in the thread form's body made a `bufferization.alloc_tensor` of its
    own.  IREE's CSE merges equal `tensor.empty` ops into one, which the body's loops then all
    started from; its bufferization gave each a copy of that one, and CUDA's failed on a copy
    of such a copy ("failed to bufferize op": random_distributions' gamma sampler, threefry's
    tabulated tensors).  An allocation is not merged: each is a private buffer of its own."""
    for o in [o for o in nested_ops(g) if o.name == "tensor.empty" and not o.operands]:
        with ir.InsertionPoint(o), o.location:
            made = ir.Operation.create("bufferization.alloc_tensor", results=[o.results[0].type], operands=[],
                                       attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0, 0])})
        o.results[0].replace_all_uses_with(made.results[0])
        o.erase()


def _inline_calls(loop: ir.Operation, funcs: dict) -> None:
    """Calls in the loop to functions of the module, replaced by a copy of their bodies (JAX
    calls its library functions, jnp.where, floor_divide, remainder, from several places; IREE
    inlines them all anyway).  At most MAX_INLINED calls, so that functions calling each other
    end: calls left make the loop stay as it is."""
    def callee(o):
        f = funcs.get(ir.FlatSymbolRefAttr(o.attributes["callee"]).value) if o.name == "func.call" else None
        return f if f is not None and len(f.regions[0].blocks) == 1 else None
    for _ in range(MAX_INLINED):
        call = next((o for o in nested_ops(loop) if callee(o) is not None), None)
        if call is None:
            return
        body = callee(call).clone()
        inline_body(call, body.regions[0].blocks[0])
        body.erase()


def _one_trip(ops: list[ir.Operation], outs: list[ir.Value], before: ir.Operation) -> ir.Operation:
    """`ops` moved, in order, into an scf.for of one trip made before `before`, whose state is
    `outs` (each value once: with a value returned as several results of the dispatch, a call
    failed twice, "buffer view byte length 16 exceeds backing buffer byte length 4": one result
    given another's buffer); their uses after it read its results.  _undo_trip puts them back."""
    state: list[ir.Value] = []
    for v in outs:
        if not any(v == w for w in state):
            state.append(v)
    with ir.InsertionPoint(before), before.location:
        for_op = scf.ForOp(index(0), index(1), index(1), [empty(v.type) for v in state])
        with ir.InsertionPoint(for_op.body):
            yield_op = scf.YieldOp(state)
    loop = for_op.operation
    for o in ops:
        o.move_before(yield_op)
    for v, r in zip(state, loop.results):
        for owner, n in [(getattr(u.owner, "operation", u.owner), u.operand_number) for u in v.uses]:
            if not _inside(owner, loop):
                owner.operands[n] = r
    return loop


def _undo_trip(loop: ir.Operation) -> None:
    ops = [o.operation for o in loop.regions[0].blocks[0].operations]
    for o in ops[:-1]:
        o.move_before(loop)
    for r, v in zip(loop.results, ops[-1].operands):
        r.replace_all_uses_with(v)
    inits = list(loop.operands)[3:]
    loop.erase()
    for v in inits:
        defining_op(v).erase()


def _guarded(if_op: ir.Operation) -> ir.Operation | None:
    """The do-while of lower_while's `if cond(init) { do-while } else { init }` when the entry
    test is read back from the device (a tensor.extract of a rank-0 tensor): the scf.while."""
    d = defining_op(if_op.operands[0])
    if d is None or d.name != "tensor.extract" or len(d.operands) != 1 or not if_op.results:
        return None
    loops = [o.operation for o in if_op.regions[0].blocks[0].operations if o.operation.name in ("scf.for", "scf.while")]
    return loops[0] if len(loops) == 1 and loops[0].name == "scf.while" else None


def _test_ops(if_op: ir.Operation, test: ir.Operation) -> list[ir.Operation]:
    """The ops before `if_op` in its block that compute the tensor its entry test `test` reads
    and nothing else, in order.  They go into the dispatch with the test: IREE hoists a scalar
    read of a one-element tensor made outside a dispatch region out of it (its
    HoistUniformScalarCompute pass), which would read the test back on the host again."""
    taken: set[ir.Operation] = set()
    frontier = [defining_op(test.operands[0])]
    while frontier:
        d = frontier.pop()
        if d is None or d.name == "arith.constant" or d.block != if_op.block or _work(d) is None or d in taken:
            continue
        users = [getattr(u.owner, "operation", u.owner) for r in d.results for u in r.uses]
        if all(u == test or _inside(u, if_op) or u in taken for u in users):
            taken.add(d)
            frontier.extend(defining_op(v) for v in d.operands)
    return [o.operation for o in if_op.block.operations if o.operation in taken]


def _local_state(if_op: ir.Operation, loop: ir.Operation) -> list[tuple]:
    """The guarded loop's initial state, where the loop starts and where the scf.if yields it
    when the loop does not run, as copies made in the dispatch: given tensors bound from
    outside there, IREE's bufferization failed ("incompatible buffer types on then/else
    branches", bfgs_minimize: one branch yields a binding, the other the loop's buffer).
    The copies are linalg.generic ops, scalarized with the rest of the dispatch, and made
    before the dispatch qualifies, so that its bounds count them (_unlocal_state undoes them).
    (Made as scalar loops after qualifying, they were loops of the dispatch, counted by
    _trip_bytes at three times their size with their own state copies: jax.vmap of lax.igamma
    on f32[3,20,20] asked for more stack than the CPU's workers have, "its signature's "stack"
    must be ... below the 1048576 bytes ...; got 1048576".)  Returns what was replaced."""
    skip = list(if_op.regions[1].blocks[0].operations)[-1].operation
    replaced = []
    for op in (loop, skip):
        for k, v in enumerate(op.operands):
            if is_tensor(v.type) and not _within(v, if_op):
                with ir.InsertionPoint(op), op.location:
                    op.operands[k] = _mapped(v, v.type, lambda x: x)
                replaced.append((op, k, v))
    return replaced


def _unlocal_state(replaced: list[tuple]) -> None:
    for op, k, v in reversed(replaced):
        copy = defining_op(op.operands[k])
        op.operands[k] = v
        made = defining_op(copy.operands[1])
        copy.erase()
        made.erase()


def _move_guarded(if_op: ir.Operation, funcs: dict) -> bool:
    """A guarded do-while (_guarded) whose loop qualifies runs as one dispatch with its entry
    test: the test, the ops computing what it reads (_test_ops) and the scf.if wrapped in a loop
    of one trip, moved like a loop.  Left on the host, the test is a read back from the device
    before the loop's dispatch can start (seven a call in random_distributions: the rejection
    loops of jax.random's gamma, beta, dirichlet and poisson)."""
    loop = _guarded(if_op)
    if loop is None:
        return False
    _inline_calls(loop, funcs)
    if not _qualifies(loop):
        return False
    test = defining_op(if_op.operands[0])
    with ir.InsertionPoint(if_op), if_op.location:        # a read of its own, inside
        if_op.operands[0] = tensor.extract(test.operands[0], [])
    if not any(True for _ in test.results[0].uses):
        test.erase()
    test = defining_op(if_op.operands[0])
    return _move_segment(_test_ops(if_op, test) + [test, if_op], min_ops=0, max_bytes=MAX_BYTES)


def _visit(block: ir.Block, funcs: dict) -> None:
    for o in list(block.operations):
        o = o.operation
        if o.name in ("scf.for", "scf.while", "scf.if", "scf.index_switch"):
            if o.name != "scf.if" and o.name != "scf.index_switch":
                _inline_calls(o, funcs)
            if _qualifies(o):
                _move(o)
                continue
            if o.name == "scf.if" and _move_guarded(o, funcs):
                continue
            for region in o.regions:
                for b in region.blocks:
                    _visit(b, funcs)


#: a function body of at least this many ops that IREE would make dispatches of (and small,
#: by the bounds of a loop's trip) runs as one dispatch (_device_block)
MIN_BLOCK_OPS = 8
#: A body past MAX_WORK of many tiny ops (at most SMALL_OP_WORK iteration points an op IREE would
#: dispatch, on average) runs as one dispatch up to SMALL_OPS_WORK points and the loop bound on
#: bytes (MAX_BYTES): its dispatches cost more than its scalar code.  Device-resident, one
#: process: nnx_train_step (383 points an op, 135,594 in all, 46 dispatches) 0.069 -> 0.050 ms a
#: call, dropout_train (605 an op) 0.018 -> 0.012; bodies of larger ops did not gain
#: (nnx_mlp_grad, 1,311 an op: 0.028 -> 0.032; bf16_mlp, 6,211: 0.037 both).  Bodies within
#: MAX_WORK keep BLOCK_BYTES (with MAX_BYTES, fft_ops' functions ran no faster and compiled in
#: 2.3 s instead of 1.5), and so do bodies with a While loop, whose trips are not known
#: (random_distributions' body, its rejection loops counted once, ran as one dispatch: 0.047 ->
#: 1.8 ms a call; bench/NOTES.md section 25).
SMALL_OP_WORK = 768
SMALL_OPS_WORK = 1 << 18


def _dispatches(o: ir.Operation) -> bool:
    """Whether IREE makes a dispatch of `o` (or one with others: the ops a dispatch holds)."""
    return (o.name.startswith(("linalg.", "iree_linalg_ext.")) and o.name not in _BODY_OPS) or o.name in (
        "tensor.pad", "tensor.insert_slice", "tensor.extract_slice")


def _dispatch_count(ops: list[ir.Operation]) -> int:
    """The ops IREE would dispatch among `ops` and the ops nested in them."""
    return sum(1 for o in ops for x in [o] + nested_ops(o) if _dispatches(x))


#: ops of a linalg or linalg_ext op's body
_BODY_OPS = ("linalg.yield", "linalg.index", "iree_linalg_ext.yield")


#: the most iteration points of an op in a run of a body's ops (_segments), a loop aside.  A
#: run saves the dispatches of the loops in it and of the tiny ops around them (device-resident,
#: one process: random_distributions 0.134 -> 0.071 ms a call, dropout_train 0.041 -> 0.026);
#: larger ops are IREE's, fused, vectorized and on every core.  Runs of any ops did worse:
#: resnet_block_train 0.129 -> 0.188 with a bound of 4096; with 256, gpt_adamw_step 0.576 ->
#: 0.658 (chains of element-wise ops on 32 elements, which IREE fuses into a dispatch or two)
SEGMENT_OP_WORK = 256
#: A run holding a loop becomes one dispatch when IREE would dispatch two ops of it or more (the
#: loop's own count): fori_loop_newton's peeled first trip (3 element-wise ops) ran as a
#: dispatch of its own before the loop's, 6.7 -> 5.5 us a call device-resident; nine other
#: programs with loops unchanged (bench/NOTES.md section 25)
SEGMENT_MIN_OPS = 2


def _device_block(func: ir.Operation, funcs: dict) -> None:
    """A function body of small tensors (the bounds of one loop trip) that IREE would run as
    MIN_BLOCK_OPS dispatches or more, run as one: wrapped in a loop of one trip whose state is
    the function's results, and moved like a loop.  Each dispatch of a tiny program costs
    ~0.35 us on the CPU driver, more than its work (lax.associative_scan of 33 elements: 45
    dispatches, 16 us).  A body past the bounds runs as a few such dispatches (_segments)."""
    block = func.regions[0].blocks[0]
    ret = list(block.operations)[-1].operation
    if ret.name != "func.return":
        return
    _inline_calls(func, funcs)
    ops = [o.operation for o in block.operations]
    body = [o for o in ops[:-1] if o.name != "arith.constant"]
    outs = list(ret.operands)
    work = [_work(o) for o in body] if outs and all(is_tensor(v.type) and _static(v.type) for v in outs) \
        and not any(o.name == "flow.dispatch.region" for o in body) else [None]
    if _form() == "thread" and not any(x.name.startswith("scf.") for o in body for x in [o] + nested_ops(o)):
        return                  # (a GPU runs a body without loops or branches as IREE's dispatches)
    if None not in work:
        small = MAX_WORK < sum(work) <= SMALL_OP_WORK * _dispatch_count(body) and \
            not any(x.name == "scf.while" for o in body for x in [o] + nested_ops(o))
        if _move_segment(body, max_bytes=MAX_BYTES if small else BLOCK_BYTES,
                         max_work=SMALL_OPS_WORK if small else MAX_WORK):
            return
    for segment in _segments(body):
        _move_segment(segment, min_ops=SEGMENT_MIN_OPS)


def _move_segment(ops: list[ir.Operation], min_ops: int = MIN_BLOCK_OPS, max_bytes: int = BLOCK_BYTES,
                  max_work: int = MAX_WORK) -> bool:
    """Consecutive ops of a block (`min_ops` dispatches or more) run as one dispatch when they
    qualify (`max_bytes`, `max_work`): wrapped in a loop of one trip whose state is what they
    make that is read after them, and moved like a loop."""
    if _dispatch_count(ops) < min_ops:
        return False
    members = set(ops)
    outs = [r for o in ops for r in o.results if _read_outside(r, members)]
    if not outs or not all(is_tensor(v.type) and _static(v.type) for v in outs):
        return False
    after = list(ops[-1].block.operations)
    at = next(k for k, o in enumerate(after) if o.operation == ops[-1]) + 1
    guarded = [(o, inner) for o in ops if o.name == "scf.if" and (inner := _guarded(o)) is not None]
    work = [_run_work(o) for o in ops]
    if None in work:
        return False
    loop = _one_trip(ops, outs, after[at].operation)
    replaced = [r for if_op, inner in guarded for r in _local_state(if_op, inner)]
    if _qualifies(loop, max_bytes, per_trip=sum(work), max_work=max_work):
        _move(loop)
        return True
    _unlocal_state(replaced)
    _undo_trip(loop)
    return False


def _segments(body: list[ir.Operation]) -> list[list[ir.Operation]]:
    """A body past the bounds of one dispatch cut into runs of consecutive ops within them (in
    order; a run ends before an op it cannot take: one of more than SEGMENT_OP_WORK points but
    a loop, a loop updating its state in place, or one that is past the bounds alone), each run
    split again at an op whose scalar result is read after it (a loop's state is tensors); the
    runs that hold a loop."""
    runs: list[list[ir.Operation]] = [[]]
    work = made = 0
    for o in body:
        if _constant_fill(o) or (o.name == "tensor.empty" and not o.operands):
            continue                     # made again in each run that reads it (_local_empties)
        w = None if o.name.startswith("flow.") or _updates_in_place(o) else _run_work(o)
        b = _run_bytes(o)
        if w is None or w > (MAX_WORK if o.name.startswith("scf.") else SEGMENT_OP_WORK) \
                or b > BLOCK_BYTES or not all(_static(r.type) for r in o.results if is_tensor(r.type)):
            runs.append([])
            work = made = 0
            continue
        if work + w > MAX_WORK or made + b > BLOCK_BYTES:
            # a guarded loop starts the next run with its entry test and what the test reads
            # (_test_ops): read from the run before, IREE would hoist the read to the host
            test = defining_op(o.operands[0]) if o.name == "scf.if" and _guarded(o) is not None else None
            taken = set(_test_ops(o, test) + [test]) if test is not None else set()
            runs[-1], carried = [x for x in runs[-1] if x not in taken], [x for x in runs[-1] if x in taken]
            for x in carried:            # (they feed only the test: moved, the run is contiguous)
                x.move_before(o)
            runs.append(carried)
            work = sum(_run_work(x) for x in carried)
            made = sum(_run_bytes(x) for x in carried)
        runs[-1].append(o)
        work, made = work + w, made + b
    return [piece for run in runs for piece in _tensor_outs(run) if any(o.name.startswith("scf.") for o in piece)]


def _run_bytes(o: ir.Operation) -> int:
    """The bytes of the tensors `o` makes (its own results and those of the ops in it)."""
    return _made_bytes(o) + sum(_bytes(r.type) for r in o.results if is_tensor(r.type) and not _fused(o))


def _run_work(o: ir.Operation) -> int | None:
    """The work of an op in a run (_work), a guarded loop's counting one trip as in
    _move_guarded (with its test in the run, its dispatch reads nothing back)."""
    loop = _guarded(o) if o.name == "scf.if" else None
    return _work(o) if loop is None else _region_work(o, single=loop)


def _updates_in_place(o: ir.Operation) -> bool:
    """Whether `o` is a loop with state it updates in place (a scan's stacked outputs), which
    it keeps only moved on its own (inside another loop its state is copied each trip: the
    GRU scan gradient in a run of its function's ops, 0.27 -> 0.41 ms)."""
    if o.name not in ("scf.for", "scf.while"):
        return False
    block = o.regions[0].blocks[0]
    return len(_copied_state(o)[0]) < len(list(block.arguments)) - (1 if o.name == "scf.for" else 0)


def _tensor_outs(run: list[ir.Operation]) -> list[list[ir.Operation]]:
    """`run` split at each op with a result read after the run that is not a tensor."""
    members = set(run)
    for k, o in enumerate(run):
        if any(not is_tensor(r.type) and _read_outside(r, members) for r in o.results):
            return _tensor_outs(run[:k]) + _tensor_outs(run[k + 1:])
    return [run] if run else []


def _read_outside(v: ir.Value, members: set) -> bool:
    """Whether an op that is not in `members` or inside one of them reads `v`."""
    for u in v.uses:
        o = getattr(u.owner, "operation", u.owner)
        while o is not None and o not in members and o.name != "func.func":
            o = o.parent
        if o is None or o not in members:
            return True
    return False


def device_loops(module: ir.Module) -> None:
    """Every qualifying loop of the module's functions as one dispatch region, and every
    qualifying function body (_device_block)."""
    funcs = functions(module)
    # a function run whole as one dispatch takes its loops with it (each loop moved on its own
    # first, jax.random's threefry loops made 7 regions in the body and kept it from being one:
    # 73 dispatches); the body of @main first, while the functions it calls are as they were
    order = sorted(funcs, key=lambda name: name != "main")
    for name in order:
        if len(funcs[name].regions[0].blocks) == 1:
            _device_block(funcs[name], funcs)
    for f in funcs.values():
        if len(f.regions[0].blocks):
            _visit(f.regions[0].blocks[0], funcs)
    module.operation.verify()
