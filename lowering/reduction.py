"""Lowering of Reduce, ReduceWindow and SelectAndScatter.

Reduce: one linalg.reduce over all operands, its body the computation's scalar code (init
values on the left, as the spec says).

ReduceWindow: the operands are padded with their init values (base dilation holes too);
a single add/max/min reduction of one operand becomes a linalg pooling op
(pooling_nwc/nhwc/ndhwc_sum/max/min[_unsigned]) over [N, window dims..., C], any other
computation a linalg.generic whose window loops are reductions.

SelectAndScatter (IREE has no lowering of its own for it): one linalg.generic walks each
window in row-major order and records the linear index of the selected operand element;
a second linalg.generic, over the operand, visits for every element the windows that can
hold it, in row-major order of the source, and folds in the source values of those that
selected it.  Both are parallel over their outputs, so no atomics and no host loops.
"""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.attrs import Padding
from xlair.dialect.ir import arith, ir, linalg, tensor
from xlair.dialect.ops.reduction import dilated, resolve_padding
from xlair.dialect.types import PRED, S64, Shape

from .registry import complex_of, complex_parts, defining_op, fill_c128, scalar_parts
from .registry import (affine_map, barrier, empty, extract_scalar, extract_slice, fill, generic, in_loop_body, index,
                       insert_slice, loop_index, lowers, options, reshape, scalar_const, set_cpu_tiles, tuple_of,
                       value_of)
from .scalar import emit_region
from .shape import transpose


def _init(out: Shape, init: ir.Value) -> ir.Value:
    """A reduction's accumulators, `init` everywhere.  A C128 init is filled from its parts, the
    constant ones where it is made of two: filled from its element read on the host, IREE 3.13
    made the init in a dispatch of its own and crashed reading its 128 bits back
    ("getTypeBitWidth", the eigenvectors of a real F64 matrix; docs/iree-limits.md)."""
    if out.element_type.name == "c128":
        return fill_c128(out, *scalar_parts(init))
    return fill(out, extract_scalar(init))


def _planar_sum(x: ir.Value, init: ir.Value, out: Shape, dims) -> ir.Value:
    """A complex sum as the sums of its real and imaginary parts, joined after a barrier: IREE
    3.13's GPU code for a complex sum fused with its consumer kept the complex accumulator in
    workgroup memory and crashed reading its bit width (ConvertToNVVMPass on CUDA,
    GPUDistributeSharedMemoryCopyPass on Vulkan; docs/iree-limits.md).  The same additions."""
    part = out.with_type(out.element_type.component)
    accs = [fill(part, s) for s in scalar_parts(init)]
    red = linalg.ReduceOp([a.type for a in accs], list(complex_parts(x)), accs, dims)
    ft = part.element_type.builtin_type()
    block = red.regions[0].blocks.append(ft, ft, ft, ft)
    with ir.InsertionPoint(block):
        a, b, acc_a, acc_b = block.arguments
        linalg.YieldOp([arith.addf(a, acc_a), arith.addf(b, acc_b)])
    return complex_of(*barrier(*red.results))


@lowers("xla.reduce", scalar_regions=True)
def lower_reduce(lw):
    shapes = lw.shape("operands")
    inputs = lw.value("operands")
    inits = lw.value("init_values")
    dims = sorted(lw.attr("dimensions"))
    outs = lw.result_shape.leaves()
    accs = [_init(o, i) for o, i in zip(outs, inits)]
    n = len(inputs)
    if any(shapes[0].dims[d] == 0 for d in dims):   # nothing to reduce: the init values (and no
        return accs[0] if n == 1 else tuple_of(lw, accs)   # empty linalg.reduce: IREE crashes on it)
    if (n == 1 and options().desc.complex_sums_planar and shapes[0].element_type.is_complex
            and binary_kind(lw.args["computation"]) == "add"):
        return _planar_sum(inputs[0], inits[0], outs[0], dims)
    if options().desc.reduction_barriers and not (options().barriers == "outside-loops" and in_loop_body(lw.op)):
        # IREE 3.13's CUDA / ROCm codegen fails on some element-wise producers fused into a
        # reduction (_breaks_fused_sum): such a reduction reads its operand from a dispatch of
        # its own.  (In a loop body, such barriers made IREE's VM read a null buffer in BFGS's
        # line search: xlair.compile then lowers the program with barriers=outside-loops,
        # docs/iree-limits.md.)
        kind = "all" if options().desc.reduction_barriers == "all" else \
            binary_kind(lw.args["computation"]) if n == 1 else None
        inputs = [barrier(x) if (kind in (None, "all") and defining_op(x) is not None)
                  or (kind == "add" and _breaks_fused_sum(x)) else x for x in inputs]
    red = linalg.ReduceOp([a.type for a in accs], inputs, accs, dims)
    etypes = [ir.RankedTensorType(v.type).element_type for v in inputs + accs]
    block = red.regions[0].blocks.append(*etypes)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        res = emit_region(lw.args["computation"], args[n:] + args[:n], lw.op.name)
        linalg.YieldOp(res)
    results = list(red.results)
    return results[0] if n == 1 else tuple_of(lw, results)


# ----------------------------------------------------------------------------------------
# helpers shared with the convolutions
# ----------------------------------------------------------------------------------------
def pad_tensor(x: ir.Value, src: Shape, triples, value: ir.Value) -> ir.Value:
    """`x` padded like xla.pad: interior padding, then edge padding (negative cuts), the new
    elements `value` (a builtin scalar).  tensor.pad where there is no interior padding."""
    triples = [tuple(t) for t in triples]
    if all(t == (0, 0, 0) for t in triples):
        return x
    out_dims = [lo + dilated(n, it + 1) + hi for n, (lo, hi, it) in zip(src.dims, triples)]
    out = src.with_dims(out_dims)
    if any(d < 0 for d in out_dims):
        raise ValueError(f"padding {triples} of {src} leaves a negative size")
    if all(it == 0 for _, _, it in triples) and src.element_type.name != "c128":   # see fill()
        cut_lo = [max(-lo, 0) for lo, _, _ in triples]
        keep = [n - max(-lo, 0) - max(-hi, 0) for n, (lo, hi, _) in zip(src.dims, triples)]
        if any(k <= 0 for k in keep) or 0 in src.dims:
            return fill(out, value)
        if keep != list(src.dims):
            x = extract_slice(x, cut_lo, keep)
        low = [max(lo, 0) for lo, _, _ in triples]
        high = [max(hi, 0) for _, hi, _ in triples]
        if not any(low) and not any(high):
            return x
        pad = tensor.PadOp(out.builtin_mlir(), x, [], [], low, high)
        blk = pad.regions[0].blocks.append(*[ir.IndexType.get()] * src.rank)
        with ir.InsertionPoint(blk):
            tensor.YieldOp(value)
        return pad.result
    result = fill(out, value)
    lo_keep, counts, offsets, strides = [], [], [], []
    for d, (lo, _hi, interior) in enumerate(triples):
        step = interior + 1
        n = src.dims[d]
        j0 = (-lo + step - 1) // step if lo < 0 else 0          # first element not cut away
        j1 = min(n - 1, (out_dims[d] - 1 - lo) // step) if out_dims[d] > 0 else -1
        if j1 < j0:
            return result                                       # every element is cut away
        lo_keep.append(j0)
        counts.append(j1 - j0 + 1)
        offsets.append(lo + j0 * step)
        strides.append(step)
    if counts != list(src.dims):
        x = extract_slice(x, lo_keep, counts)
    return insert_slice(x, result, offsets, strides)


def fitted_pads(base, pads, base_dilations, out, window, strides, window_dilations) -> list:
    """The (low, high) padding with `high` changed so the padded base ends where the last
    window does: elements no window reads are cut away.  (IREE folds unit dimensions of a
    windowed linalg op, after which a base longer than the windows reach fails its verifier;
    exact extents also spare the reads.)"""
    out_pads = []
    for n, (lo, _hi), b, o, w, s, d in zip(base, pads, base_dilations, out, window, strides, window_dilations):
        reach = (o - 1) * s + dilated(w, d)
        out_pads.append((lo, reach - lo - dilated(n, b)))
    return out_pads


def window_expr(d_out: int, d_win: int, stride: int, dilation: int) -> ir.AffineExpr:
    """d_out * stride + d_win * dilation, as an affine expression of two loop dimensions."""
    o = ir.AffineDimExpr.get(d_out)
    w = ir.AffineDimExpr.get(d_win)
    if stride != 1:
        o = ir.AffineMulExpr.get(o, ir.AffineConstantExpr.get(stride))
    if dilation != 1:
        w = ir.AffineMulExpr.get(w, ir.AffineConstantExpr.get(dilation))
    return ir.AffineAddExpr.get(o, w)


def _breaks_fused_sum(v: ir.Value) -> bool:
    """Whether IREE 3.13's CUDA / ROCm code generation fails on `v`'s producer fused into a sum
    of `v`: `v` computed last by a negation ("failed to get neutral element for reduction":
    IREE makes addf(acc, negf(x)) a subf) or by a product with a constant ("'func.func' op
    failed to distribute", where the constant does not vary along the summed dimensions;
    any constant is taken here).  Measured (tests/e2e/test_iree_rejections.py): these fail,
    LayerNorm's gradient among them; exp(x - c), (x - m)^2, x + c, x / c, -x through a
    transpose or a reshape, and max and min reductions of either compile fused.  Only these
    sums read their operand from a dispatch of their own (reduction_barriers); before, every
    reduction of a computed operand did, one more dispatch and pass over memory each."""
    op = defining_op(v)
    while op is not None and op.name in ("tensor.expand_shape", "tensor.collapse_shape"):
        op = defining_op(op.operands[0])
    if op is None:
        return False
    if op.name == "xla.neg":
        return True
    if op.name == "xla.mul":
        return any(_is_constant(x) for x in op.operands)
    if op.name != "linalg.generic":
        return False
    last = defining_op(_yielded(op, v))
    if last is None:
        return False
    if last.name == "arith.negf":
        return True
    return last.name == "arith.mulf" and any(_is_constant(x, op) for x in last.operands)


def _yielded(generic: ir.Operation, v: ir.Value) -> ir.Value:
    """The scalar a linalg.generic's body yields for its result `v` (or its only result)."""
    body = generic.regions[0].blocks[0]
    index = next((i for i, r in enumerate(generic.results) if r == v), 0)
    return list(body.operations)[-1].operands[index]


def _is_constant(x: ir.Value, generic: ir.Operation | None = None, depth: int = 0) -> bool:
    """Whether a value is a constant: defined by a constant or a fill, an element of such a
    tensor read by `generic` (a block argument of its body), or a broadcast of one."""
    if generic is not None and isinstance(x.owner, ir.Block) and x.owner.owner == generic:
        if x.arg_number >= len(generic.operands):
            return False
        x = generic.operands[x.arg_number]
    op = defining_op(x)
    if op is None or depth > 8:
        return False
    if op.name in ("arith.constant", "linalg.fill", "xla.constant", "xla.iota"):
        return True
    if op.name in ("xla.broadcast_in_dim", "xla.broadcast", "xla.reshape", "tensor.expand_shape",
                   "tensor.collapse_shape"):
        return _is_constant(op.operands[0], None, depth + 1)
    if op.name == "linalg.generic":
        last = _yielded(op, x)
        return isinstance(last.owner, ir.Block) and _is_constant(last, op, depth + 1)
    return False


def binary_kind(region: ir.Region) -> str | None:
    """'add', 'max' or 'min' when a computation is that one op applied to its two scalar
    parameters (in either order): what a linalg pooling op can express."""
    block = region.blocks[0]
    ops = [op.operation for op in block.operations]
    args = list(block.arguments)
    if len(ops) != 2 or len(args) != 2:
        return None
    op, ret = ops
    kinds = {"xla.add": "add", "xla.max": "max", "xla.min": "min"}
    if op.name not in kinds or len(op.operands) != 2 or ret.name != "xla.return":
        return None
    if set(op.operands) != set(args) or len(set(op.operands)) != 2 or list(ret.operands) != [op.results[0]]:
        return None
    if any(Shape.from_mlir(a.type).rank != 0 for a in args):
        return None
    return kinds[op.name]


def _pool_op(kind: str, nsp: int, et):
    """The linalg pooling builder for a reduction kind, window rank and element type, or None."""
    if et.is_pred or et.is_complex or not 1 <= nsp <= 3:
        return None
    layout = {1: "nwc", 2: "nhwc", 3: "ndhwc"}[nsp]
    name = {"add": "sum", "max": "max", "min": "min"}[kind]
    if et.is_unsigned and kind != "add":
        if nsp == 3:
            return None
        name += "_unsigned"
    return getattr(linalg, f"pooling_{layout}_{name}", None)


# ----------------------------------------------------------------------------------------
# ReduceWindow
# ----------------------------------------------------------------------------------------
def _window_params(lw, base):
    n = len(base)
    wd = list(lw.attr("window_dimensions"))
    st = list(lw.attr("window_strides"))
    bd = list(lw.attr("base_dilations") or [1] * n)
    wdl = list(lw.attr("window_dilations") or [1] * n)
    pads = resolve_padding(lw.attr("padding"), base, wd, st, bd, wdl)
    return wd, st, bd, wdl, pads


@lowers("xla.reduce_window", scalar_regions=True)
def lower_reduce_window(lw):
    shapes = lw.shape("operands")
    xs = lw.value("operands")
    inits = [extract_scalar(v) for v in lw.value("init_values")]
    base = shapes[0].dims
    rank = len(base)
    wd, st, bd, wdl, pads = _window_params(lw, base)
    outs = lw.result_shape.leaves()
    out_dims = outs[0].dims
    n_ops = len(xs)
    if 0 in out_dims:
        res = [fill(o, v) for o, v in zip(outs, inits)]
        return res[0] if n_ops == 1 else tuple_of(lw, res)
    pads = fitted_pads(base, pads, bd, out_dims, wd, st, wdl)
    triples = [(lo, hi, b - 1) for (lo, hi), b in zip(pads, bd)]
    padded = [pad_tensor(x, s, triples, v) for x, s, v in zip(xs, shapes, inits)]
    pshape = [lo + dilated(n, b) + hi for n, (lo, hi), b in zip(base, pads, bd)]
    region = lw.args["computation"]
    kind = binary_kind(region) if n_ops == 1 else None
    if kind is not None:
        res = _pooled(padded[0], shapes[0].with_dims(pshape), outs[0], inits[0], kind, wd, st, wdl)
        if res is not None:
            return res
    # the general form: one linalg.generic, window loops as reductions in row-major order
    loops = 2 * rank
    in_map = affine_map(loops, [window_expr(i, rank + i, st[i], wdl[i]) for i in range(rank)])
    win_map = affine_map(loops, [rank + i for i in range(rank)])
    out_map = affine_map(loops, list(range(rank)))
    window = empty(Shape(PRED, wd))
    accs = [fill(o, v) for o, v in zip(outs, inits)]

    def body(*args):
        vals, accs_ = list(args[:n_ops]), list(args[n_ops + 1:])
        return emit_region(region, accs_ + vals, lw.op.name)
    res = generic(padded + [window], [in_map] * n_ops + [win_map], accs, [out_map] * n_ops,
                  ["parallel"] * rank + ["reduction"] * rank, body)
    return res[0] if n_ops == 1 else tuple_of(lw, res)


def _pooled(x: ir.Value, src: Shape, out: Shape, init: ir.Value, kind, wd, st, wdl):
    """The pooling-op form: the windowed dimensions become the spatial dimensions of
    [N, spatial..., C]; the dimensions before them fold into N, those after into C."""
    rank = src.rank
    wdims = [i for i in range(rank) if wd[i] != 1 or st[i] != 1 or wdl[i] != 1 or src.dims[i] != out.dims[i]]
    if not wdims:
        wdims = [rank - 1] if rank else []
    if not 1 <= len(wdims) <= 3:
        return None
    build = _pool_op(kind, len(wdims), src.element_type)
    if build is None:
        return None
    contiguous = wdims == list(range(wdims[0], wdims[-1] + 1))
    if contiguous:
        perm = list(range(rank))
        before, after = list(range(wdims[0])), list(range(wdims[-1] + 1, rank))
    else:
        rest = [i for i in range(rank) if i not in wdims]
        perm = rest + wdims
        before, after = rest, []
    xt = transpose(x, src, perm)
    N = _prod(src.dims[i] for i in before)
    C = _prod(src.dims[i] for i in after)
    x4 = reshape(xt, [N] + [src.dims[i] for i in wdims] + [C])
    o4 = [N] + [out.dims[i] for i in wdims] + [C]
    acc = fill(out.with_dims(o4), init)
    window = empty(Shape(src.element_type, [wd[i] for i in wdims]))
    r = value_of(build(x4, window, outs=[acc], strides=[st[i] for i in wdims],
                       dilations=[wdl[i] for i in wdims]))
    _set_cpu_pool_tiles(r.owner, o4, [wd[i] for i in wdims], src.element_type)
    tdims = [out.dims[i] for i in perm]
    r = reshape(r, tdims)
    inv = [perm.index(i) for i in range(rank)]
    return transpose(r, out.with_dims(tdims), inv)


#: The output bytes of one workgroup of a pooling op on the CPU (_set_cpu_pool_tiles).
POOL_GROUP_BYTES = 128 * 1024
#: The most channels one vector tile of a pooling op holds, in bits (four AVX-512 registers).
POOL_TILE_BITS = 2048


def _set_cpu_pool_tiles(op: ir.Operation, o4: list, window: list, et) -> None:
    """Give a 2-D pooling op over [N, H, W, C] on the CPU xlair's own tile sizes (registry
    set_cpu_tiles) where its channels fill whole vectors; leave the rest to IREE.  IREE 3.13
    tiles a pooling op 8 output pixels by one vector of channels; that order ran the 2x2/2 max
    pool of f32[8,112,112,64] at 2.6-3.2 ms on one Zen 4 core (IREE's conv pipeline, memory
    barely used).  A tile of one output pixel by all its channels (up to POOL_TILE_BITS) reads
    each window row once, in order: 1.0 ms (x86-64-v3 code 3.0 -> 1.2 ms), two cores 2.1 ->
    0.8-1.1 ms median (XLA:CPU 1.0-1.1; bench/NOTES.md section 25).  A workgroup writes about
    POOL_GROUP_BYTES of output: rows of an image, or whole images when one is smaller."""
    opts = options()
    if not opts.desc.cpu_kernels or len(o4) != 4 or len(window) != 2 or et.is_pred or et.is_complex \
            or et.bits not in (8, 16, 32, 64):
        return
    n, h, w, c = o4
    lanes = int(opts.vectors) // et.bits
    if c == 0 or c % lanes:
        return
    ct = max(k for k in range(lanes, min(c, POOL_TILE_BITS // et.bits) + 1, lanes) if c % k == 0)
    row = w * c * et.bits // 8
    if h * row >= POOL_GROUP_BYTES:
        tn, th = 1, max(1, min(h, POOL_GROUP_BYTES // row))
    else:
        tn, th = max(1, min(n, POOL_GROUP_BYTES // (h * row))), h
    kw = window[1] if window[1] <= 4 else 1
    set_cpu_tiles(op, f"distribution = [{tn}, {th}, {w}, {c}, 0, 0], vector_common_parallel = [1, 1, 1, {ct}, 0, 0], "
                  f"vector_reduction = [0, 0, 0, 0, 1, {kw}]", "ConvTileAndDecomposeExpert")


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


# ----------------------------------------------------------------------------------------
# SelectAndScatter
# ----------------------------------------------------------------------------------------
def _scatter_tiled(lw, scatter: ir.Region, selected: ir.Value, src: ir.Value, op_shape: Shape, S: list, wd: list,
                   init: ir.Value, strides_lin: list) -> ir.Value:
    """Pass 2 of SelectAndScatter when the windows tile the operand exactly (strides equal to
    the window, no padding: a max pool's gradient): each operand element lies in one window, so
    it takes that window's source value when it is the element the window selected.  One
    parallel linalg.generic over the operand seen as [S0, W0, S1, W1, ...], with no division and
    no gather (the general form's reduction over window offsets was 36% of a CNN training
    step's dispatch time, for its 2x2 max pool's gradient).  CPU only: on Vulkan (lavapipe)
    4 of 648 elements of one case came out wrong (a generic of 8 loops; cause not isolated,
    docs/iree-limits.md), and CUDA and ROCm are not run here to check it."""
    rank = len(S)
    loops = 2 * rank
    i64 = ir.IntegerType.get_signless(64)
    CI = arith.CmpIPredicate
    window_map = affine_map(loops, [2 * i for i in range(rank)])

    def place(chosen, value, acc):
        lin = _i64(0)
        for i in range(rank):
            pos = arith.addi(arith.muli(loop_index(2 * i), index(wd[i])), loop_index(2 * i + 1))
            lin = arith.addi(lin, arith.muli(arith.index_cast(i64, pos), _i64(strides_lin[i])))
        new = emit_region(scatter, [acc, value], lw.op.name)[0]
        return arith.select(arith.cmpi(CI.eq, chosen, lin), new, acc)
    tiles = fill(op_shape.with_dims([d for n, w in zip(S, wd) for d in (n, w)]), init)
    res = generic([selected, src], [window_map, window_map], [tiles], [affine_map(loops, list(range(loops)))],
                  ["parallel"] * loops, place)[0]
    return reshape(res, list(op_shape.dims))


def _i64(v: int) -> ir.Value:
    t = ir.IntegerType.get_signless(64)
    return arith.constant(t, ir.IntegerAttr.get(t, v))


def _all(conds):
    out = None
    for c in conds:
        out = c if out is None else arith.andi(out, c)
    return out


@lowers("xla.select_and_scatter", scalar_regions=True)
def lower_select_and_scatter(lw):
    src_shape, op_shape = lw.shape("source"), lw.shape("operand")
    x, src = lw.value("operand"), lw.value("source")
    init = extract_scalar(lw.value("init_value"))
    D, S = list(op_shape.dims), list(src_shape.dims)
    rank = len(D)
    wd, st = list(lw.attr("window_dimensions")), list(lw.attr("window_strides"))
    pads = resolve_padding(lw.attr("padding"), D, wd, st)
    result = fill(op_shape, init)
    if 0 in S or 0 in D:
        return result
    CI = arith.CmpIPredicate
    i64 = ir.IntegerType.get_signless(64)
    idx_t = ir.IndexType.get()
    strides_lin = [_prod(D[i + 1:]) for i in range(rank)]

    # 1. the selected element of every window, as a linear index into the operand (-1: none)
    fit = fitted_pads(D, pads, [1] * rank, S, wd, st, [1] * rank)
    xp = pad_tensor(x, op_shape, [(lo, hi, 0) for lo, hi in fit], init)
    loops = 2 * rank
    in_map = affine_map(loops, [window_expr(i, rank + i, st[i], 1) for i in range(rank)])
    win_map = affine_map(loops, [rank + i for i in range(rank)])
    out_map = affine_map(loops, list(range(rank)))
    best_v = fill(src_shape.with_type(op_shape.element_type), init)
    best_i = fill(Shape(S64, S), _i64(-1))
    select = lw.args["select"]

    def pick(cur, _w, bv, bi):
        inside, lin = [], _i64(0)
        for i in range(rank):
            pos = arith.addi(arith.muli(loop_index(i), index(st[i])), loop_index(rank + i))
            if pads[i][0] != 0:
                pos = arith.subi(pos, index(pads[i][0]))
            if pads[i] != (0, 0):
                inside.append(arith.andi(arith.cmpi(CI.sge, pos, index(0)), arith.cmpi(CI.slt, pos, index(D[i]))))
            lin = arith.addi(lin, arith.muli(arith.index_cast(i64, pos), _i64(strides_lin[i])))
        keep = emit_region(select, [bv, cur], lw.op.name)[0]
        take = arith.ori(arith.cmpi(CI.slt, bi, _i64(0)), arith.xori(keep, arith.constant(ir.IntegerType.get_signless(1), 1)))
        if inside:
            take = arith.andi(take, _all(inside))
        return [arith.select(take, cur, bv), arith.select(take, lin, bi)]
    _, selected = generic([xp, empty(Shape(PRED, wd))], [in_map, win_map], [best_v, best_i], [out_map, out_map],
                          ["parallel"] * rank + ["reduction"] * rank, pick)

    # 2. every operand element folds in the source values of the windows that selected it,
    #    visiting them in row-major order of the source (window offsets in reverse)
    scatter = lw.args["scatter"]
    if options().desc.cpu_kernels and st == wd and all(p == (0, 0) for p in pads) and \
            D == [n * w for n, w in zip(S, wd)]:
        return _scatter_tiled(lw, scatter, selected, src, op_shape, S, wd, init, strides_lin)
    p_map = affine_map(loops, list(range(rank)))

    def gather(_w, acc):
        hits, sidx = [], []
        lin = _i64(0)
        for i in range(rank):
            p = loop_index(i)
            lin = arith.addi(lin, arith.muli(arith.index_cast(i64, p), _i64(strides_lin[i])))
            # source position s with s * stride + (W - 1 - v) - low = p
            num = arith.addi(p, loop_index(rank + i))
            shift = pads[i][0] - (wd[i] - 1)
            if shift:
                num = arith.addi(num, index(shift)) if shift > 0 else arith.subi(num, index(-shift))
            ok = arith.cmpi(CI.sge, num, index(0))
            numc = arith.maxsi(num, index(0))
            s = numc
            if st[i] != 1:
                ok = arith.andi(ok, arith.cmpi(CI.eq, arith.remsi(numc, index(st[i])), index(0)))
                s = arith.divsi(numc, index(st[i]))
            ok = arith.andi(ok, arith.cmpi(CI.slt, s, index(S[i])))
            hits.append(ok)
            sidx.append(arith.minsi(s, index(S[i] - 1)))
        chosen = tensor.extract(selected, sidx)
        value = tensor.extract(src, sidx)
        hit = arith.andi(_all(hits), arith.cmpi(CI.eq, chosen, lin)) if hits else arith.cmpi(CI.eq, chosen, lin)
        new = emit_region(scatter, [acc, value], lw.op.name)[0]
        return arith.select(hit, new, acc)
    rev_map = affine_map(loops, [rank + i for i in range(rank)])
    return generic([empty(Shape(PRED, wd))], [rev_map], [result], [p_map],
                   ["parallel"] * rank + ["reduction"] * rank, gather)[0]
