"""Lowering of DynamicSlice and DynamicUpdateSlice (start indices clamped into bounds as the
spec says, then tensor.extract_slice / tensor.insert_slice with dynamic offsets), Gather (a
linalg.generic reading the operand with tensor.extract) and Scatter (IREE's
iree_linalg_ext.scatter, see below)."""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.ir import arith, ir, tensor
from xlair.dialect.ops.index_geometry import GatherGeometry, ScatterGeometry, clamp_start
from xlair.dialect.types import S64, Shape

from .registry import (options, affine_map, barrier, dynamic_offsets, empty, extract_scalar, extract_slice, fill, generic, index,
                       insert_slice, loop_index, lowers, reshape, scalar_const, tuple_of)
from .scalar import emit_region
from .shape import transpose


class I64Arith:
    """The index geometry's start-index arithmetic (dialect/ops/index_geometry.py) on i64
    values holding integers of xla type `et`: a u64 is never negative, and huge ones compare
    (and clamp) high."""

    def __init__(self, et):
        self.u64 = et.is_unsigned and et.bits == 64

    @staticmethod
    def const(v: int) -> ir.Value:
        return _i64(v)

    def min(self, a, b):
        return arith.minui(a, b) if self.u64 else arith.minsi(a, b)

    def max(self, a, b):
        return a if self.u64 else arith.maxsi(a, b)

    @staticmethod
    def ule(a, b):
        return arith.cmpi(arith.CmpIPredicate.ule, a, b)


def to_i64(s: ir.Value, et) -> ir.Value:
    """An integer scalar of xla type `et` as i64 (sign- or zero-extended)."""
    if et.bits < 64:
        i64 = ir.IntegerType.get_signless(64)
        s = arith.extsi(i64, s) if et.is_signed else arith.extui(i64, s)
    return s


def as_index(s: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IndexType.get(), s)


def _offsets(lw, sizes):
    """The clamped starts, as indices; a constant 0 where the slice spans its dimension (the
    clamp's range is [0, 0]), so that a full-size slice or update folds away."""
    operand = lw.shape("operand")
    starts = lw.value("start_indices")
    types = [s.element_type for s in lw.shape("start_indices")]
    return [index(0) if d == z else as_index(clamp_start(to_i64(extract_scalar(v), et), d - z, I64Arith(et)))
            for v, et, d, z in zip(starts, types, operand.dims, sizes)]


# On the CPU the clamped starts are computed where IREE puts them (the host) and the slice is a
# tensor.extract_slice / insert_slice with dynamic offsets.  On the GPU targets each element
# computes them in the kernel instead, reading the start scalars there: with the host reading
# them mid-program, lavapipe intermittently returned the slice of an earlier call
# (test_dynamic_slices_clamp[vulkan-s32], 2 runs in 5; see docs/iree-limits.md).
@lowers("xla.dynamic_slice")
def lower_dynamic_slice(lw):
    sizes = list(lw.attr("size_indices"))
    if not options().desc.host_slice_offsets:
        n = len(sizes)

        def body(_o):
            return tensor.extract(lw.value("operand"),
                                  [arith.addi(o, loop_index(d)) for d, o in enumerate(_offsets(lw, sizes))])
        return generic([], [], [empty(lw.result_shape)], [affine_map(n, list(range(n)))], ["parallel"] * n,
                       body)[0]
    vals, static = dynamic_offsets(_offsets(lw, sizes))
    return tensor.ExtractSliceOp(lw.result_type, lw.value("operand"), vals, [], [], static, sizes,
                                 [1] * len(sizes)).result


@lowers("xla.dynamic_update_slice")
def lower_dynamic_update_slice(lw):
    sizes = list(lw.shape("update").dims)
    if not options().desc.host_slice_offsets:
        n = len(sizes)
        if 0 in sizes:
            return lw.value("operand")
        if sizes == list(lw.shape("operand").dims):     # (every start clamps to 0: n == 0 too)
            return lw.value("update")

        def body(x, _o):
            inside, at = None, []
            for d, o in enumerate(_offsets(lw, sizes)):
                rel = arith.subi(loop_index(d), o)          # where this element sits in the update
                ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, rel, index(0)),
                                arith.cmpi(arith.CmpIPredicate.slt, rel, index(sizes[d])))
                inside = ok if inside is None else arith.andi(inside, ok)
                at.append(arith.minsi(arith.maxsi(rel, index(0)), index(sizes[d] - 1)))
            return arith.select(inside, tensor.extract(lw.value("update"), at), x)
        ident = affine_map(n, list(range(n)))
        return generic([lw.value("operand")], [ident], [empty(lw.result_shape)], [ident], ["parallel"] * n,
                       body)[0]
    vals, static = dynamic_offsets(_offsets(lw, sizes))
    return tensor.InsertSliceOp(lw.value("update"), lw.value("operand"), vals, [], [], static, sizes,
                                [1] * len(sizes)).result


# ----------------------------------------------------------------------------------------
# Gather
# ----------------------------------------------------------------------------------------
@lowers("xla.gather")
def lower_gather(lw):
    """For the CPU, IREE's iree_linalg_ext.gather (vectorized by IREE into loads of whole
    slices: ~6x faster than the generic form on 10,000 rows of 64 floats) when some operand
    dimension is indexed; otherwise, and for targets whose IREE backend has no lowering of
    iree_linalg_ext.gather (SPIR-V: "failed to get lowering configuration"), one
    linalg.generic."""
    out = lw.result_shape
    if out.size == 0:
        return empty(out)
    dn = lw.attr("dimension_numbers")
    # (complex elements: IREE 3.13 vectorizes iree_linalg_ext.gather of complex<f32> into a
    # vector.transfer_read it then rejects, "'vector.transfer_read' op requires valid padding
    # vector elemental type": jnp.linalg.solve of a c64[256,256] permuting its right-hand side)
    if (dn.start_index_map or dn.operand_batching_dims) and options().desc.cpu_kernels \
            and not out.element_type.is_complex:
        return _linalg_ext_gather(lw)
    return _generic_gather(lw)


def _generic_gather(lw):
    """One linalg.generic over the result; its body reads the index vector of the batch
    position (tensor.extract, loop-invariant along the offset dimensions), clamps each start so
    the slice fits, and reads the operand element with tensor.extract."""
    x = lw.value("operand")
    geo, ar, read = _gather_geometry(lw)
    out = lw.result_shape

    def body(_o):
        def coord(t):
            return loop_index(geo.outer_batch_dim(t))
        pos = [None] * geo.rank
        for d in geo.index_map + geo.operand_batching:
            s = geo.slice_start(d, read(coord), coord, ar)
            pos[d] = as_index(s) if d in geo.index_map else s
        for od, o in zip(geo.window_operand_dims, geo.window_dims):
            pos[od] = loop_index(o) if pos[od] is None else arith.addi(pos[od], loop_index(o))
        return tensor.extract(x, [index(0) if p is None else p for p in pos])
    n = out.rank
    return generic([], [], [empty(out)], [affine_map(n, list(range(n)))], ["parallel"] * n, body)[0]


def index_reader(geo, idx: ir.Value, et):
    """read(coord): k -> element k (as i64) of the index vector in the indices tensor `idx` (of
    xla element type `et`) at the batch position coord(t) (t an indices dimension -> index)."""
    def read(coord):
        def at(k):
            return [index(p) if isinstance(p, int) else p for p in geo.index_position(k, coord)]
        return lambda k: to_i64(tensor.extract(idx, at(k)), et)
    return read


def _gather_geometry(lw):
    """The gather's geometry, its arithmetic and its index_reader."""
    ind = lw.shape("start_indices")
    geo = GatherGeometry.of(lw.attr("dimension_numbers"), lw.shape("operand"), ind, lw.attr("slice_sizes"))
    return geo, I64Arith(ind.element_type), index_reader(geo, lw.value("start_indices"), ind.element_type)


def _linalg_ext_gather(lw):
    """Gather as iree_linalg_ext.gather, which takes whole trailing slices at leading indexed
    dimensions:
      source   [indexed dims I..., other dims N...]   (operand transposed; the N dims cut to the
               slice, which always starts at 0 there)
      indices  [B * X slices, |I|]                     (B = the batch positions; X = indexed dims
               whose slice is wider than 1, spread out: start + offset; all flattened)
      result   [B * X slices, N slices...]             reshaped and transposed into XLA's order.
    Starts are clamped so the slice fits (XLA's rule) before IREE sees them."""
    operand = lw.shape("operand")
    x = lw.value("operand")
    geo, ar, read = _gather_geometry(lw)
    sizes = list(geo.slice_sizes)
    et = operand.element_type
    D, R = list(operand.dims), operand.rank
    ind_batch = geo.index_batch_dims
    B = geo.batch_sizes
    Bn = _prod(B)
    I = geo.indexed_dims
    X = [d for d in I if sizes[d] > 1]
    N = [d for d in range(R) if d not in I]
    i64 = ir.IntegerType.get_signless(64)

    # source
    perm = I + N
    src = transpose(x, operand, perm)
    sdims = [D[d] for d in perm]
    cut = [D[d] for d in I] + [sizes[d] for d in N]
    if cut != sdims:
        src = extract_slice(src, [0] * R, cut)

    # indices [B * X slices, |I|], built flat (row q = batch position, slice offset; delinearized
    # in the body): a reshape between this generic and the gather trips IREE's dispatch formation
    nx = _prod(sizes[d] for d in X)
    radix = B + [sizes[d] for d in X]

    def body(_o):
        q = loop_index(0)
        digits = []
        for k, r in enumerate(reversed(radix)):
            if k == len(radix) - 1:
                digits.append(q)                         # the outermost digit needs no remainder
            else:
                digits.append(arith.remui(q, index(r)) if r != 1 else index(0))
                q = arith.divui(q, index(r)) if r != 1 else q
        digits.reverse()                                 # [batch coords..., slice offsets...]

        def coord(t):
            return digits[ind_batch.index(t)]
        comps = []
        for d in I:
            v = geo.slice_start(d, read(coord), lambda t: arith.index_cast(i64, coord(t)), ar)
            if d in X:
                v = arith.addi(v, arith.index_cast(i64, digits[len(B) + X.index(d)]))
            comps.append(v)
        res = comps[-1]
        jl = loop_index(1)
        for j in range(len(comps) - 2, -1, -1):
            res = arith.select(arith.cmpi(arith.CmpIPredicate.eq, jl, index(j)), comps[j], res)
        return res
    indices = generic([], [], [empty(Shape(S64, [Bn * nx, len(I)]))], [affine_map(2, [0, 1])],
                      ["parallel"] * 2, body)[0]

    gdims = [Bn * nx] + [sizes[d] for d in N]
    g = ir.Operation.create("iree_linalg_ext.gather", results=[Shape(et, gdims).builtin_mlir()],
                            operands=[src, indices, empty(Shape(et, gdims))],
                            attributes={"dimension_map": ir.DenseI64ArrayAttr.get(list(range(len(I))))}).result
    # IREE 3.13 fails to compile a gather fused with a consumer that transposes it (its
    # reshape propagation builds a wrong expand_shape); keep the gather a dispatch of its own
    g = barrier(g)

    # into XLA's order: batch dims, then the slice dims that are offset dims of the result
    labels = [("b", t) for t in ind_batch] + [("o", d) for d in X] + [("o", d) for d in N]
    dims = B + [sizes[d] for d in X] + [sizes[d] for d in N]
    kept = geo.window_operand_dims
    keep = [i for i, (k, d) in enumerate(labels) if k == "b" or d in kept]
    labels = [labels[i] for i in keep] + [("o", d) for d in I if d not in X and d in kept]
    dims = [dims[i] for i in keep] + [1 for d in I if d not in X and d in kept]
    r = reshape(g, dims)
    return transpose(r, Shape(et, dims), [labels.index(w) for w in geo.outer_sources()])


# ----------------------------------------------------------------------------------------
# Scatter
# ----------------------------------------------------------------------------------------
# Scatter becomes IREE's iree_linalg_ext.scatter (the op IREE itself lowers stablehlo.scatter
# to: one dispatch, serial over the updates when indices may repeat, parallel over a window):
#   original  [indexed dims I..., other dims N...]   (operand transposed; the N dims cut to
#             the window, which always starts at 0 there)
#   updates   [B, X windows..., N windows...]         (B = all scatter dimensions, flattened
#             in row-major order; X = indexed dims whose window is wider than 1, spread out)
#   indices   [B, X windows..., |I|]                  (start + offset in each X dim)
# A window with any part out of bounds is skipped whole: its indices are sent to a scratch
# slab appended to the first indexed dimension and cut off afterwards.  The computation's
# region is (update, current) there; xla's is (current, update).  Several operands with a
# computation whose results each depend only on their own operand and update become one
# such op each; any other computation falls back to one linalg.generic over the operand that
# folds in, per element, every update window covering it (cost operand x updates).
def _leaf_deps(region: ir.Region) -> list[set] | None:
    """For each returned scalar of a computation, the block arguments it depends on."""
    block = region.blocks[0]
    deps: dict = {a: {i} for i, a in enumerate(block.arguments)}
    for op in block.operations:
        op = op.operation
        if op.name == "xla.return":
            out = []
            for v in op.operands:
                d = deps[v]
                out.extend(d if isinstance(d, list) else [d])
            return out
        ins = [deps[v] for v in op.operands]
        if op.name == "xla.tuple":
            deps[op.results[0]] = [set().union(*x) if isinstance(x, list) else x for x in ins]
        elif op.name == "xla.get_tuple_element":
            deps[op.results[0]] = ins[0][ir.IntegerAttr(op.attributes["index"]).value]
        else:
            acc = set()
            for x in ins:
                acc |= set().union(*x) if isinstance(x, list) else x
            for r in op.results:
                deps[r] = acc
    return None


class _ScatterPlan:
    """The index bookkeeping of one scatter, shared by both lowerings."""

    def __init__(self, lw):
        self.operand = lw.shape("operands")[0]
        self.upd = lw.shape("updates")[0]
        ind = lw.shape("scatter_indices")
        self.geo = geo = ScatterGeometry.of(lw.attr("dimension_numbers"), self.operand, ind, self.upd)
        self.ar = I64Arith(ind.element_type)
        self.read = index_reader(geo, lw.value("scatter_indices"), ind.element_type)
        self.D, self.R = list(geo.operand_dims), geo.rank
        self.ind_batch, self.scatter_dims = geo.index_batch_dims, geo.scatter_dims
        self.udim = geo.update_dim                                          # operand dim -> updates dim
        self.w, self.B = list(geo.window_sizes), geo.batch_sizes

    def start(self, d: int, batch_index) -> ir.Value | None:
        """The start of the window of batch position `batch_index(t)` (t a scatter_indices
        batch dimension -> index value) in operand dim d, as i64; None for an unindexed dim."""
        i64 = ir.IntegerType.get_signless(64)
        return self.geo.start(d, self.read(batch_index), lambda t: arith.index_cast(i64, batch_index(t)))

    def in_bounds(self, d: int, s: ir.Value) -> ir.Value:
        """0 <= start <= D - w (unsigned compare of the i64: negative starts are huge)."""
        return self.geo.in_bounds(d, s, self.ar)


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _i64(v: int) -> ir.Value:
    t = ir.IntegerType.get_signless(64)
    return arith.constant(t, ir.IntegerAttr.get(t, v))


@lowers("xla.scatter", scalar_regions=True)
def lower_scatter(lw):
    plan = _ScatterPlan(lw)
    xs = lw.value("operands")
    n = len(xs)
    if plan.upd.size == 0:
        return xs[0] if n == 1 else tuple_of(lw, xs)
    deps = _leaf_deps(lw.args["update_computation"])
    dense = options().desc.complex_scatter_dense and any(s.element_type.is_complex for s in lw.shape("operands"))
    if not dense and deps is not None and all(d <= {i, n + i} for i, d in enumerate(deps)):
        outs = [_linalg_ext_scatter(lw, plan, i) for i in range(n)]
    else:
        outs = _dense_scatter(lw, plan)
    return outs[0] if n == 1 else tuple_of(lw, outs)


#: the largest i64 index tensor computed inside the scatter's own dispatch (IREE's CPU
#: dispatches have 32 KB of stack)
FUSED_INDICES_MAX_BYTES = 16384


def _with_scratch(x: ir.Value, s: Shape, rows: int) -> ir.Value:
    """`x` with `rows` zero rows after its first dimension (the slab out-of-bounds updates
    land in), made by a linalg.generic reading `x` with tensor.extract.  Not tensor.pad: IREE
    3.13 makes that a fill and a copy of `x` into the padded buffer, and where its allocator
    gave the two one place of one transient buffer (a scatter in a loop of jax.experimental.
    ode's odeint), the copy had the same source and target range, which its HAL refuses at run
    time: "source and target ranges overlap within the same buffer" (docs/iree-limits.md)."""
    first = s.dims[0]
    zero = scalar_const(s.element_type, 0)

    def body(_o):
        i = loop_index(0)
        inside = arith.cmpi(arith.CmpIPredicate.ult, i, index(first))
        at = [arith.select(inside, i, index(0))] + [loop_index(d) for d in range(1, s.rank)]
        return arith.select(inside, tensor.extract(x, at), zero)
    out = Shape(s.element_type, [first + rows] + list(s.dims[1:]))
    return generic([], [], [empty(out)], [affine_map(s.rank, list(range(s.rank)))], ["parallel"] * s.rank, body)[0]


def _linalg_ext_scatter(lw, plan: _ScatterPlan, which: int) -> ir.Value:
    checked = plan.geo.checked_dims
    D, R, w = plan.D, plan.R, plan.w
    shapes = lw.shape("operands")
    et = shapes[which].element_type
    x = lw.value("operands")[which]
    u = lw.value("updates")[which]
    I = set(plan.geo.indexed_dims)
    if options().desc.scatter_indexed_windows:
        # IREE 3.13's SPIR-V codegen crashes (gpuDistributeSharedMemoryCopy) on a 64-bit
        # scatter into a cut-out window of a padded tensor: for GPU targets, dimensions whose
        # window is narrower than the operand are indexed (at 0) instead of cut
        I |= {d for d in range(R) if w[d] < D[d]}
    I = sorted(I)
    X = [d for d in I if w[d] > 1]
    N = [d for d in range(R) if d not in I]
    i64 = ir.IntegerType.get_signless(64)
    Bn = _prod(plan.B)

    # updates -> [Bn, X windows..., N windows...]; an indexed dimension's window of 1 that is
    # not an inserted dimension is a unit dimension of the updates: moved last, reshaped away
    units = [plan.udim[d] for d in I if d not in X and d in plan.udim]
    uperm = plan.scatter_dims + [plan.udim[d] for d in X] + [plan.udim[d] for d in N if d in plan.udim] + units
    ut = transpose(u, plan.upd.with_type(et), uperm)
    u2 = reshape(ut, [Bn] + [w[d] for d in X] + [w[d] for d in N])

    # original -> [I..., N...], scratch slab after the first indexed dimension, N cut to the window
    perm = I + N
    orig = transpose(x, shapes[which], perm)
    odims = [D[d] for d in perm]
    unit = not I
    if unit:                                                  # nothing indexed: a unit dim to index
        orig = reshape(orig, [1] + odims)
        odims = [1] + odims
        nI = 1
    else:
        nI = len(I)
    scratch = w[I[0]] if (checked and not unit) else 0         # batching starts always fit
    if scratch:
        orig = _with_scratch(orig, Shape(et, odims), scratch)
    pdims = list(odims)
    pdims[0] += scratch
    win = pdims[:nI] + [w[d] for d in N]
    sub = extract_slice(orig, [0] * len(pdims), win) if win != pdims else orig

    # indices [Bn, X windows..., nI]
    nb = len(plan.B)
    loops = nb + len(X) + 1
    ind_dims = plan.B + [w[d] for d in X] + [nI]
    if unit:
        indices = fill(Shape(S64, [Bn] + [w[d] for d in X] + [1]), _i64(0))
    else:
        def batch_index(t):
            return loop_index(plan.ind_batch.index(t))

        def body(_o):
            starts, ok = [], []
            for d in I:
                s = plan.start(d, batch_index)
                if s is None:                                # indexed only for the GPU form
                    s = _i64(0)
                if d in checked:
                    ok.append(plan.in_bounds(d, s))
                starts.append(s)
            valid = None
            for c in ok:
                valid = c if valid is None else arith.andi(valid, c)
            comps = []
            for j, d in enumerate(I):
                v = starts[j]
                if valid is not None:
                    v = arith.select(valid, v, _i64(D[d] if j == 0 else 0))
                if d in X:
                    v = arith.addi(v, arith.index_cast(i64, loop_index(nb + X.index(d))))
                comps.append(v)
            out = comps[-1]
            jl = loop_index(loops - 1)
            for j in range(len(comps) - 2, -1, -1):
                out = arith.select(arith.cmpi(arith.CmpIPredicate.eq, jl, index(j)), comps[j], out)
            return out
        indices = generic([], [], [empty(Shape(S64, ind_dims))], [affine_map(loops, list(range(loops)))],
                          ["parallel"] * loops, body)[0]
        indices = reshape(indices, [Bn] + ind_dims[nb:])
        if 8 * Shape(S64, ind_dims).size > FUSED_INDICES_MAX_BYTES:
            # made in a dispatch of their own: fused into the scatter's, IREE put them on its
            # stack ("exceeded stack allocation limit of 32768 bytes for function. Got 800000
            # bytes": 100,000 updates, random_lax_test's test_randint_narrow_int_bias)
            indices = barrier(indices)

    bt = ir.RankedTensorType(sub.type).element_type
    # (no util.optimization_barrier on the original: IREE then updates one buffer in place for
    # two scatters of the same operand - wrong results)
    op = ir.Operation.create("iree_linalg_ext.scatter", results=[sub.type], operands=[u2, indices, sub],
                             attributes={"dimension_map": ir.DenseI64ArrayAttr.get(list(range(nI))),
                                         "unique_indices": ir.BoolAttr.get(bool(lw.attr("unique_indices")))},
                             regions=1)
    blk = op.regions[0].blocks.append(bt, bt)
    comp = lw.args["update_computation"]
    n = len(lw.shape("operands"))
    with ir.InsertionPoint(blk):
        args = [scalar_const(s.element_type, 0) for s in lw.shape("operands")] * 2
        args[which], args[n + which] = blk.arguments[1], blk.arguments[0]
        res = emit_region(comp, args, lw.op.name)[which]
        ir.Operation.create("iree_linalg_ext.yield", operands=[res])
    res = op.results[0]
    if sub is not orig:
        res = insert_slice(res, orig, [0] * len(pdims))
    if scratch:
        res = extract_slice(res, [0] * len(pdims), odims)
    if unit:
        res = reshape(res, odims[1:])
        odims = odims[1:]
    return transpose(res, Shape(et, odims), [perm.index(d) for d in range(R)])


def _dense_scatter(lw, plan: _ScatterPlan) -> list:
    """Any scatter as one linalg.generic: parallel over the operand, the update windows as
    reduction loops in row-major order; an element takes the computation of every in-bounds
    window that covers it."""
    D, R, w = plan.D, plan.R, plan.w
    xs, us = lw.value("operands"), lw.value("updates")
    shapes = lw.shape("operands")
    n = len(xs)
    nb = len(plan.B)
    loops = R + nb
    i64 = ir.IntegerType.get_signless(64)
    CI = arith.CmpIPredicate
    comp = lw.args["update_computation"]

    def batch_index(t):
        return loop_index(R + plan.ind_batch.index(t))

    def body(*args):
        accs = list(args[1:])
        conds, uidx = [], [None] * plan.upd.rank
        for k, d in enumerate(plan.scatter_dims):
            uidx[d] = loop_index(R + k)
        for d in range(R):
            p = arith.index_cast(i64, loop_index(d))
            s = plan.start(d, batch_index)
            if s is not None and d in plan.geo.checked_dims:
                conds.append(plan.in_bounds(d, s))
            off = p if s is None else arith.subi(p, s)
            conds.append(arith.cmpi(CI.ult, off, _i64(w[d])))        # 0 <= off < w
            if d in plan.udim:
                offc = arith.minui(off, _i64(w[d] - 1))
                uidx[plan.udim[d]] = arith.index_cast(ir.IndexType.get(), offc)
        hit = conds[0]
        for c in conds[1:]:
            hit = arith.andi(hit, c)
        vals = [tensor.extract(u, uidx) for u in us]
        new = emit_region(comp, accs + vals, lw.op.name)
        return [arith.select(hit, a, b) for a, b in zip(new, accs)]
    ident = affine_map(loops, list(range(R)))
    batch_map = affine_map(loops, [R + k for k in range(nb)])
    span = empty(Shape(S64, plan.B))
    return generic([span], [batch_map], list(xs), [ident] * n, ["parallel"] * R + ["reduction"] * nb, body)
