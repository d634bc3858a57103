"""Lowering of Sort (record in dialect/ops/control_flow.py).

On the CPU, every strategy is O(n log n) or better, in hand-written kernels (lowering/kernels.py):
- a comparator that is a plain or total-order less-than / greater-than of one operand (the
  common case): a stable LSD radix sort of order-preserving integer keys (8-bit digits for keys
  up to 16 bits, 11-bit ones above), one workgroup a row; a lone long row of 32- or 64-bit keys
  is first split by its top 12 bits into buckets that are then sorted in parallel;
- any other comparator: a stable bottom-up merge sort moving the values, the comparator inlined.
Short rows (under KERNEL_MIN) and other targets: a rank sort in two linalg generics (O(n^2)
per row, parallel over every element).
"""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.ir import arith, func, ir, memref, scf
from xlair.dialect.types import Shape

from .kernels import dispatch, workgroup_id
from .libm import while_loop
from .registry import barrier, lowers, options, reshape, tuple_of
from .scalar import emit_region
from .shape import transpose

KERNEL_MIN = 64          # shorter sort dimensions use the rank sort
CI = arith.CmpIPredicate
CF = arith.CmpFPredicate


# ----------------------------------------------------------------------------------------
# small builders for kernel code
# ----------------------------------------------------------------------------------------
def idx(v: int) -> ir.Value:
    t = ir.IndexType.get()
    return arith.constant(t, ir.IntegerAttr.get(t, v))


def iconst(t: ir.Type, v: int) -> ir.Value:
    bits = ir.IntegerType(t).width
    v &= (1 << bits) - 1
    if v >= 1 << (bits - 1):
        v -= 1 << bits
    return arith.constant(t, ir.IntegerAttr.get(t, v))


def loop(lb, ub, step, inits, body):
    """scf.for; `body(iv, *iter_args)` returns the next iter_args (or None without any)."""
    f = scf.ForOp(lb, ub, step, list(inits))
    with ir.InsertionPoint(f.body):
        res = body(f.induction_variable, *f.inner_iter_args)
        scf.YieldOp(list(res) if res else [])
    return list(f.results)


def if_(cond, types, then_fn, else_fn):
    op = scf.IfOp(cond, list(types), has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.YieldOp(list(then_fn() or []))
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp(list(else_fn() or []))
    return list(op.results)


# ----------------------------------------------------------------------------------------
# comparator analysis
# ----------------------------------------------------------------------------------------
_DIRECTION = {"xla.lt": (False, False), "xla.gt": (True, False),
              "xla.lt_total_order": (False, True), "xla.gt_total_order": (True, True)}


def fast_path(region: ir.Region, shapes) -> tuple[int, bool, bool] | None:
    """(key operand, descending, total order) when the comparator is one compare of one
    operand's pair of parameters; None otherwise."""
    block = region.blocks[0]
    ops = [op.operation for op in block.operations]
    if len(ops) != 2 or ops[1].name != "xla.return" or ops[0].name not in _DIRECTION:
        return None
    cmp, ret = ops
    if ret.operands[0] != cmp.results[0]:
        return None
    args = list(block.arguments)
    try:
        a, b = (args.index(v) for v in cmp.operands)
    except ValueError:
        return None
    descending, total = _DIRECTION[cmp.name]
    if a // 2 != b // 2 or a == b:
        return None
    if a % 2 == 1:                      # comparator(y, x): the other direction
        descending = not descending
    k = a // 2
    et = shapes[k].element_type
    if not (et.is_integer or et.is_float):
        return None
    return k, descending, total


# ----------------------------------------------------------------------------------------
# the pattern
# ----------------------------------------------------------------------------------------
@lowers("xla.sort", scalar_regions=True)
def lower_sort(lw):
    shapes = lw.shape("operands")
    values = lw.value("operands")
    rank = shapes[0].rank
    d = lw.attr("dimension") % rank
    n = shapes[0].dims[d]
    region = lw.args["comparator"]
    stable = lw.attr("is_stable")
    if n <= 1:          # one element per row is sorted (IREE miscompiles such sorts after slices)
        outs = list(values)
        return outs[0] if len(outs) == 1 else tuple_of(lw, outs)
    kernel_ok = options().desc.cpu_kernels and n >= KERNEL_MIN and all(
        s.element_type.is_integer or s.element_type.is_float for s in shapes)
    perm = [i for i in range(rank) if i != d] + [d]
    inv = [perm.index(i) for i in range(rank)]
    rows = shapes[0].size // n
    flat = [reshape(transpose(v, s, perm), [rows, n]) for v, s in zip(values, shapes)]
    if not kernel_ok:
        sorted_ = rank_sort(lw, flat, shapes, rows, n, region)
    else:
        fp = fast_path(region, shapes)
        if fp is not None:
            sorted_ = radix_sort(lw, flat, shapes, rows, n, *fp)
        else:
            sorted_ = merge_sort(lw, flat, shapes, rows, n, region)
    outs = []
    for v, s in zip(sorted_, shapes):
        t_dims = [s.dims[p] for p in perm]
        outs.append(transpose(reshape(v, t_dims), Shape(s.element_type, t_dims), inv))
    return outs[0] if len(outs) == 1 else tuple_of(lw, outs)


# ----------------------------------------------------------------------------------------
# portable: a rank sort in two linalg generics (any target, O(n^2) per row)
# ----------------------------------------------------------------------------------------
def rank_sort(lw, flat, shapes, rows, n, region):
    """rank[r, i] counts the elements that sort before x[r, i] (equal ones before it count
    when they come earlier: stable); out[r, p] is the x[r, i] whose rank is p.  Both are
    parallel reductions, so any target runs them; short rows and GPU targets take this road."""
    from .registry import affine_map, empty, fill, generic, loop_index, scalar_const
    i32 = ir.IntegerType.get_signless(32)
    i1 = ir.IntegerType.get_signless(1)
    k = len(flat)
    at_i = affine_map(3, [0, 1])
    at_j = affine_map(3, [0, 2])
    true = None
    # the operands as they are: a producer fused into the n x n count would run n times per
    # element, and IREE 3.13 failed to vectorize the count of a folded producer (sort of
    # xor(x, x): "vector.multi_reduction reduction dimension out of range"; found by the fuzzer)
    flat = barrier(*flat) if len(flat) > 1 else [barrier(flat[0])]

    def count(*args):
        nonlocal true
        xi = [args[2 * q] for q in range(k)]
        xj = [args[2 * q + 1] for q in range(k)]
        acc = args[-1]
        (j_first,) = emit_region(region, [v for q in range(k) for v in (xj[q], xi[q])], lw.op.name)
        (i_first,) = emit_region(region, [v for q in range(k) for v in (xi[q], xj[q])], lw.op.name)
        one = arith.constant(i1, ir.IntegerAttr.get(i1, 1))
        tie = arith.andi(arith.xori(j_first, one), arith.xori(i_first, one))
        earlier = arith.cmpi(CI.ult, loop_index(2), loop_index(1))
        before = arith.ori(j_first, arith.andi(tie, earlier))
        return arith.addi(acc, arith.extui(i32, before))
    ins, maps = [], []
    for v in flat:
        ins += [v, v]
        maps += [at_i, at_j]
    zero = arith.constant(i32, ir.IntegerAttr.get(i32, 0))
    ranks = generic(ins, maps, [fill(Shape("s32", (rows, n)), zero)], [affine_map(3, [0, 1])],
                    ["parallel", "parallel", "reduction"], count)[0]

    def place(rank_i, x, acc):
        hit = arith.cmpi(CI.eq, rank_i, arith.index_cast(i32, loop_index(1)))
        return arith.select(hit, x, acc)
    # one generic per operand (IREE 3.13 drops an output of the multi-result form)
    return [generic([ranks, v], [at_j, at_j], [fill(Shape(s.element_type, (rows, n)), scalar_const(s.element_type, 0))],
                    [affine_map(3, [0, 1])], ["parallel", "parallel", "reduction"], place)[0]
            for v, s in zip(flat, shapes)]


# ----------------------------------------------------------------------------------------
# radix sort kernel (one key operand, plain or total-order comparison)
# ----------------------------------------------------------------------------------------
def _key(v, et, kt, descending, total):
    """Order-preserving unsigned integer key of a value."""
    bits = et.bits
    sign = iconst(kt, 1 << (bits - 1))
    if et.is_float:
        b = arith.bitcast(kt, v)
        if not total:   # a plain comparison: -0 and +0 are equal keys
            b = arith.select(arith.cmpf(CF.OEQ, v, arith.constant(v.type, ir.FloatAttr.get(v.type, 0.0))),
                             iconst(kt, 0), b)
        mask = arith.ori(arith.shrsi(b, iconst(kt, bits - 1)), sign)
        key = arith.xori(b, mask)
    elif et.is_signed:
        key = arith.xori(v, sign)
    else:
        key = v
    return arith.xori(key, iconst(kt, -1)) if descending else key


def _unkey(key, et, kt, descending):
    bits = et.bits
    if descending:
        key = arith.xori(key, iconst(kt, -1))
    sign = iconst(kt, 1 << (bits - 1))
    if et.is_float:
        top = arith.cmpi(CI.slt, key, iconst(kt, 0))         # top bit set: a non-negative float
        b = arith.select(top, arith.xori(key, sign), arith.xori(key, iconst(kt, -1)))
        return arith.bitcast(et.builtin_type(), b)
    return arith.xori(key, sign) if et.is_signed else key


def _digits(bits: int, width: int) -> list[tuple[int, int]]:
    """(shift, bits) of the radix digits of the low `bits` bits of a key, least significant
    first, each at most `width` bits wide and as even as can be."""
    count = -(-bits // width)
    sizes = [bits // count + (1 if p < bits % count else 0) for p in range(count)]
    return [(sum(sizes[:p]), s) for p, s in enumerate(sizes)]


TOP_BITS = 12           # the most significant digit, by which a lone long row is split
SPLIT_MIN = 1 << 14     # a lone row at least this long with 32- or 64-bit keys is split
SPLIT_WAYS = 2          # workgroups counting and splitting it (IREE's CPU workers here)


def radix_sort(lw, flat, shapes, rows, n, key_index, descending, total):
    """LSD radix sort of order-preserving integer keys, one workgroup a row.

    A lone long row (32- or 64-bit keys) is first split by its most significant digit
    (TOP_BITS): SPLIT_WAYS workgroups count its digits in their share of the row, then move
    each element to its digit's bucket (stable); 2^TOP_BITS workgroups then sort one bucket
    each by the lower digits, in cache and on every core.

    Values move (with several operands: keys and the source index, the operands gathered at
    the end); keys are made from values on the fly.  A plain float comparison sees -0 and +0 as
    equal: both get +0's key, and the run of zeros of the result is refilled afterwards with
    the zeros of the input in their order (stable)."""
    et = shapes[key_index].element_type
    kt = ir.IntegerType.get_signless(et.bits)
    i32 = ir.IntegerType.get_signless(32)
    k = len(flat)
    single = k == 1
    row_of = lambda t: ir.RankedTensorType.get([rows, n], t)  # noqa: E731
    key_of = lambda v: _key(v, et, kt, descending, total)  # noqa: E731
    results = [v.type for v in flat]
    if rows == 1 and n >= SPLIT_MIN and et.bits >= 32:
        top = (et.bits - TOP_BITS, TOP_BITS)
        nb = 1 << TOP_BITS
        share = -(-n // SPLIT_WAYS)
        x = flat[key_index]

        def part(w):
            lo = arith.muli(w, idx(share))
            return lo, arith.minui(arith.addi(lo, idx(share)), idx(n))

        def count(ins, outs, _kmod):
            w = workgroup_id(0)
            lo, hi = part(w)
            _histograms(outs[0], [w], [top], lo, hi, lambda i: key_of(memref.load(ins[0], [idx(0), i])), kt)
        (hist,) = dispatch(lw.op, "radix_count", [x], [ir.RankedTensorType.get([SPLIT_WAYS, 1, nb], i32)],
                           [SPLIT_WAYS], count)
        moved = [row_of(et.builtin_type())] if single else [row_of(kt), row_of(i32)]
        bounds_t = ir.RankedTensorType.get([nb + 1], i32)

        def split(ins, outs, _kmod):
            x_m, hist_m = ins
            bounds, offs = outs[-2], outs[-1]
            w = workgroup_id(0)
            lo, hi = part(w)
            c0, c1, r0 = idx(0), idx(1), idx(0)

            # bucket b starts at acc, this share's part of it after the earlier shares'; every
            # workgroup computes the same bounds and writes them (the same values)
            def offsets(b, acc):
                counts = [memref.load(hist_m, [idx(s), r0, b]) for s in range(SPLIT_WAYS)]
                mine = acc
                for s in range(SPLIT_WAYS):
                    mine = arith.addi(mine, arith.select(arith.cmpi(CI.ult, idx(s), w), counts[s], iconst(i32, 0)))
                memref.store(mine, offs, [w, b])
                memref.store(acc, bounds, [b])
                total_b = counts[0]
                for c in counts[1:]:
                    total_b = arith.addi(total_b, c)
                return [arith.addi(acc, total_b)]
            (end,) = loop(c0, idx(nb), c1, [iconst(i32, 0)], offsets)
            memref.store(end, bounds, [idx(nb)])

            def move(i):
                v = memref.load(x_m, [r0, i])
                key = key_of(v)
                d = _digit(key, *top, kt)
                pos = memref.load(offs, [w, d])
                memref.store(arith.addi(pos, iconst(i32, 1)), offs, [w, d])
                at = arith.index_cast(ir.IndexType.get(), pos)
                if single:
                    memref.store(v, outs[0], [r0, at])
                else:
                    memref.store(key, outs[0], [r0, at])
                    memref.store(arith.index_cast(i32, i), outs[1], [r0, at])
            loop(lo, hi, c1, [], move)
        moved = dispatch(lw.op, "radix_split", [x, hist], moved + [bounds_t, ir.RankedTensorType.get([SPLIT_WAYS, nb], i32)],
                         [SPLIT_WAYS], split)
        items, bounds = moved[:-2], moved[-2]
        digits = _digits(et.bits - TOP_BITS, 11)

        def buckets(ins, outs, _kmod):
            b = workgroup_id(0)
            bnd = ins[len(items)]
            lo = arith.index_cast(ir.IndexType.get(), memref.load(bnd, [b]))
            hi = arith.index_cast(ir.IndexType.get(), memref.load(bnd, [arith.addi(b, idx(1))]))
            gathered = ins[len(items) + 1:]
            if single:
                load_key = lambda i: key_of(memref.load(ins[0], [idx(0), i]))  # noqa: E731
                load_pay = None
            else:
                load_key = lambda i: memref.load(ins[0], [idx(0), i])  # noqa: E731
                load_pay = lambda i: memref.load(ins[1], [idx(0), i])  # noqa: E731
            if_(arith.cmpi(CI.ult, lo, hi), [],
                lambda: _lsd(outs, k, single, kt, et, descending, total, idx(0), [b], lo, hi, digits,
                             load_key, load_pay, ins[0] if single else None, gathered), lambda: None)
        inputs = list(items) + [bounds] + ([] if single else list(flat))
        res = dispatch(lw.op, "radix_buckets", inputs, results + _lsd_scratch(rows, n, kt, single, nb, digits),
                       [nb], buckets)
        return res[:k]
    digits = _digits(et.bits, 8 if et.bits <= 16 else 11)

    def whole(ins, outs, _kmod):
        row = workgroup_id(0)
        x = ins[key_index]
        _lsd(outs, k, single, kt, et, descending, total, row, [row], idx(0), idx(n), digits,
             lambda i: key_of(memref.load(x, [row, i])), None if single else (lambda i: arith.index_cast(i32, i)),
             x if single else None, ins)
    res = dispatch(lw.op, "radix_sort", flat, results + _lsd_scratch(rows, n, kt, single, rows, digits),
                   [rows], whole)
    return res[:k]


def _lsd_scratch(rows, n, kt, single, hists, digits):
    """Buffers of _lsd: keys (and source indices) between passes, one histogram set per workgroup."""
    i32 = ir.IntegerType.get_signless(32)
    nscr = min(len(digits) - 1, 2)
    out = [ir.RankedTensorType.get([rows, n], kt)] * nscr
    if not single:
        out += [ir.RankedTensorType.get([rows, n], i32)] * nscr
    width = max(b for _, b in digits)
    return out + [ir.RankedTensorType.get([hists, len(digits), 1 << width], i32)]


def _digit(key, shift, bits, kt):
    return arith.index_castui(ir.IndexType.get(), arith.andi(arith.shrui(key, iconst(kt, shift)),
                                                             iconst(kt, (1 << bits) - 1)))


def _histograms(hist, hrow, digits, lo, hi, load_key, kt, extra=None, extra_init=()):
    """Clear and count the histogram of each digit over [lo, hi) in hist[*hrow, pass, digit];
    `extra(key, *acc)` carries more counts through the sweep."""
    i32 = ir.IntegerType.get_signless(32)
    c0, c1 = idx(0), idx(1)
    cps = [idx(p) for p in range(len(digits))]
    zero32, one32 = iconst(i32, 0), iconst(i32, 1)
    for cp, (_, bits) in zip(cps, digits):
        def clear(b, cp=cp):
            memref.store(zero32, hist, [*hrow, cp, b])
        loop(c0, idx(1 << bits), c1, [], clear)

    def count(i, *acc):
        key = load_key(i)
        for cp, (shift, bits) in zip(cps, digits):
            dg = _digit(key, shift, bits, kt)
            memref.store(arith.addi(memref.load(hist, [*hrow, cp, dg]), one32), hist, [*hrow, cp, dg])
        return extra(key, *acc) if extra else None
    return loop(lo, hi, c1, list(extra_init), count)


def _lsd(outs, k, single, kt, et, descending, total, row, hrow, lo, hi, digits, load_key, load_pay, values, gathered):
    """Sort the items [lo, hi) of `row` by `digits` (LSD, stable) into the results outs[:k].
    The first pass reads `load_key(i)` (and `load_pay(i)`, the source index with several
    operands); the last writes the value back from its key (one operand) or gathers each operand
    at the source index.  `values` (one operand, plain float comparison) is where the zeros are
    refilled from."""
    i32 = ir.IntegerType.get_signless(32)
    index = ir.IndexType.get()
    results, rest = outs[:k], outs[k:]
    nscr = min(len(digits) - 1, 2)
    kbufs, pbufs, hist = rest[:nscr], rest[nscr:-1][:nscr], rest[-1]
    c0, c1 = idx(0), idx(1)
    one32 = iconst(i32, 1)
    zero_fix = single and et.is_float and not total
    if zero_fix:
        ft = et.builtin_type()
        fzero = arith.constant(ft, ir.FloatAttr.get(ft, 0.0))
        zk = _key(fzero, et, kt, descending, total)

        def zero_counts(key, below, zeros):     # keys before +0's, and zeros
            return [arith.addi(below, arith.select(arith.cmpi(CI.ult, key, zk), c1, c0)),
                    arith.addi(zeros, arith.select(arith.cmpi(CI.eq, key, zk), c1, c0))]
        counts = _histograms(hist, hrow, digits, lo, hi, load_key, kt, zero_counts, [c0, c0])
    else:
        _histograms(hist, hrow, digits, lo, hi, load_key, kt)
    for p, (shift, bits) in enumerate(digits):
        cp = idx(p)
        first, last = p == 0, p == len(digits) - 1

        def prefix(b, acc, cp=cp):
            h = memref.load(hist, [*hrow, cp, b])
            memref.store(acc, hist, [*hrow, cp, b])
            return [arith.addi(acc, h)]
        loop(c0, idx(1 << bits), c1, [arith.index_cast(i32, lo)], prefix)

        def place(i, p=p, cp=cp, first=first, last=last, shift=shift, bits=bits):
            key = load_key(i) if first else memref.load(kbufs[(p - 1) % 2], [row, i])
            if not single:
                pay = load_pay(i) if first else memref.load(pbufs[(p - 1) % 2], [row, i])
            dg = _digit(key, shift, bits, kt)
            pos = memref.load(hist, [*hrow, cp, dg])
            memref.store(arith.addi(pos, one32), hist, [*hrow, cp, dg])
            at = arith.index_cast(index, pos)
            if not last:
                memref.store(key, kbufs[p % 2], [row, at])
                if not single:
                    memref.store(pay, pbufs[p % 2], [row, at])
            elif single:
                memref.store(_unkey(key, et, kt, descending), results[0], [row, at])
            else:
                src = arith.index_cast(index, pay)
                for xin, out in zip(gathered, results):
                    memref.store(memref.load(xin, [row, src]), out, [row, at])
        loop(lo, hi, c1, [], place)
    if zero_fix:
        below, zeros = counts
        start = arith.addi(lo, below)

        def refill():
            def step(i, j):
                v = memref.load(values, [row, i])
                is_zero = arith.cmpf(CF.OEQ, v, fzero)
                at = arith.addi(start, j)
                cur = memref.load(results[0], [row, at])
                memref.store(arith.select(is_zero, v, cur), results[0], [row, at])
                return [arith.addi(i, c1), arith.addi(j, arith.select(is_zero, c1, c0))]
            while_loop([lo, c0], lambda i, j: arith.cmpi(CI.ult, j, zeros), step)
        if_(arith.cmpi(CI.ugt, zeros, c0), [], refill, lambda: None)


# ----------------------------------------------------------------------------------------
# merge sort kernel (any comparator)
# ----------------------------------------------------------------------------------------
RUN = 8     # rows are first sorted in runs of RUN elements by insertion sort


def merge_sort(lw, flat, shapes, rows, n, region):
    """Stable bottom-up merge sort moving the operands' values themselves (sequential memory
    access), after an insertion sort of short runs; the comparator is a private function of
    the kernel, inlined by LLVM."""
    etypes = [s.element_type.builtin_type() for s in shapes]
    k = len(flat)
    result_types = [v.type for v in flat] + [v.type for v in flat] * 2
    i1 = ir.IntegerType.get_signless(1)

    def body(ins, outs, kmod):
        results, scratch = outs[:k], outs[k:]
        bufs = [scratch[:k], scratch[k:]]
        cmp_name = f"cmp_{id(kmod) & 0xffffff:x}"
        with ir.InsertionPoint.at_block_begin(kmod.regions[0].blocks[0]):
            ftype = ir.FunctionType.get([t for t in etypes for _ in (0, 1)], [i1])
            f = func.FuncOp(cmp_name, ftype, visibility="private")
            blk = f.add_entry_block()
            with ir.InsertionPoint(blk):
                (c,) = emit_region(region, list(blk.arguments), lw.op.name)
                func.ReturnOp([c])

        def less(a, b):              # comparator(a, b) on tuples of operand values
            args = [x for pair in zip(a, b) for x in pair]
            return func.CallOp([i1], ir.FlatSymbolRefAttr.get(cmp_name), args).result

        row = workgroup_id(0)
        c0, c1, cn = idx(0), idx(1), idx(n)

        def load(mems, i):
            return [memref.load(m, [row, i]) for m in mems]

        def store(vals, mems, i):
            for v, m in zip(vals, mems):
                memref.store(v, m, [row, i])

        def copy_in(i):
            store(load(ins, i), bufs[0], i)
        loop(c0, cn, c1, [], copy_in)

        def sort_run(s):
            e = arith.minui(arith.addi(s, idx(RUN)), cn)

            def insert(i):
                v = load(bufs[0], i)

                def cond(j):
                    prev = arith.subi(j, c1)
                    safe = arith.maxui(prev, s)
                    return arith.andi(arith.cmpi(CI.ugt, j, s), less(v, load(bufs[0], safe)))

                def shift(j):
                    prev = arith.subi(j, c1)
                    store(load(bufs[0], prev), bufs[0], j)
                    return [prev]
                (j,) = while_loop([i], cond, shift)
                store(v, bufs[0], j)
            loop(arith.addi(s, c1), e, c1, [], insert)
        loop(c0, cn, idx(RUN), [], sort_run)
        widths = []
        w = RUN
        while w < n:
            widths.append(w)
            w *= 2
        last = idx(n - 1)
        src = bufs[0]
        for p, w in enumerate(widths):
            dst = results if p == len(widths) - 1 else bufs[(p + 1) % 2]

            def run_pair(lo, src=src, dst=dst, w=w):
                mid = arith.minui(arith.addi(lo, idx(w)), cn)
                hi = arith.minui(arith.addi(lo, idx(2 * w)), cn)
                lv0 = load(src, arith.minui(lo, last))
                rv0 = load(src, arith.minui(mid, last))

                def cond(i, j, kk, *vals):
                    return arith.cmpi(CI.ult, kk, hi)

                def step(i, j, kk, *vals):
                    lv, rv = list(vals[:k]), list(vals[k:])
                    left_done = arith.cmpi(CI.uge, i, mid)
                    right_ok = arith.cmpi(CI.ult, j, hi)
                    take_r = arith.ori(left_done, arith.andi(right_ok, less(rv, lv)))
                    store([arith.select(take_r, r, l_) for r, l_ in zip(rv, lv)], dst, kk)
                    i2 = arith.select(take_r, i, arith.addi(i, c1))
                    j2 = arith.select(take_r, arith.addi(j, c1), j)
                    nl = load(src, arith.minui(i2, last))
                    nr = load(src, arith.minui(j2, last))
                    lv2 = [arith.select(take_r, a, b) for a, b in zip(lv, nl)]
                    rv2 = [arith.select(take_r, b, a) for a, b in zip(rv, nr)]
                    return [i2, j2, arith.addi(kk, c1)] + lv2 + rv2
                while_loop([lo, mid, lo] + lv0 + rv0, cond, step)
            loop(c0, cn, idx(2 * w), [], run_pair)
            src = dst
        if not widths:
            def copy_out(i):
                store(load(bufs[0], i), results, i)
            loop(c0, cn, c1, [], copy_out)
    res = dispatch(lw.op, "merge_sort", flat, result_types, [rows], body)
    return res[:k]
