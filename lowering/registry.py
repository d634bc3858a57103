"""The table of lowering patterns: `@lowers("xla.add")` -> a Python rewrite pattern.

A pattern receives a `Lower` context for the matched op.  Operands come in as values of
builtin types (`ui32` tensors become `i32` tensors through `unrealized_conversion_cast`,
folded away at the end of the pipeline); a pattern returns builtin-typed replacement
values and the context casts them back to the op's `xla` result type.

Ops whose regions are scalar computations (Reduce, Map, Sort, ...) lower their regions
themselves, through `scalar.emit_region`; patterns therefore skip ops that sit directly in
such a region.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from typing import Callable, Sequence

import numpy as np

from xlair.dialect.checks import XlaError
from xlair.dialect.core import OpDef, find_function, location_str, lookup
from xlair.dialect.ir import arith, ir, linalg, tensor
from xlair.dialect.types import is_tensor, ElementType, Shape

from .targets import DESCRIPTIONS, TargetDescription, describe

PATTERNS: dict[str, Callable] = {}


# ----------------------------------------------------------------------------------------
# pass options
# ----------------------------------------------------------------------------------------
#: The targets a lowering may be specialised for (xlair.targets names them to users).
TARGET_NAMES = tuple(DESCRIPTIONS)


@dataclasses.dataclass(frozen=True)
class Options:
    """The options of xlair's passes (`xla-to-linalg{target=cpu}`).  `target` picks the
    target's description (`desc`, lowering/targets.py: its limits, loops, precision, IREE
    workarounds and kernels); None lowers for no target in particular (the portable forms,
    with the CPU's numerics).  `counted=off` keeps counted
    While loops in the general form (lowering/control_flow.py; the runtime's fallback when
    IREE's VM fails on a counted loop, docs/iree-limits.md).  `loops=host` keeps every loop
    driven by the host (lowering/device_loops.py moves small ones onto the CPU device; the
    compiler's fallback when IREE refuses one).  `vectors=256` says the CPU's widest vectors are
    256 bits (no AVX-512: an AMD Zen 3's, x86-64-v3), where some forms lower differently
    (lowering/contraction.py: convolutions); xlair.compile sets it from the chip's features.
    `barriers=outside-loops` leaves the target's reduction barriers (its description's
    reduction_barriers) out of loop bodies: the compiler's form when IREE's VM would read a
    null buffer in the loop (docs/iree-limits.md, python/xlair/vmcode.py).
    `linalg` says which linear-algebra custom calls xla-expand-linalg turns into device code
    (lowering/linalg_expand.py): auto, device (all it can) or host (none).  `products` says
    how F32 matrix products are computed (lowering/contraction.py): auto (the description's
    f32_products), f32, or bf16x3 (three BF16 products summed in F32)."""
    target: str | None = None
    counted: str = "on"
    loops: str = "device"
    vectors: str = "512"
    barriers: str = "all"
    linalg: str = "auto"
    products: str = "auto"

    @property
    def desc(self) -> TargetDescription:
        """The target's description (lowering/targets.py): what patterns ask of the target."""
        return describe(self.target)

    @property
    def f32_products(self) -> str:
        """How F32 matrix products are computed: the `products` option, else the target's."""
        return self.desc.f32_products if self.products == "auto" else self.products


_OPTIONS: contextvars.ContextVar = contextvars.ContextVar("xlair_pass_options", default=Options())


def options() -> Options:
    """The options of the pass running now, as its patterns see them."""
    return _OPTIONS.get()


@contextlib.contextmanager
def running_with(opts: Options):
    """Run a pass (and the patterns it applies) with its options."""
    token = _OPTIONS.set(opts)
    try:
        yield
    finally:
        _OPTIONS.reset(token)
#: ops whose regions hold scalar computations, lowered by their own pattern.
SCALAR_REGION_OPS: set[str] = set()


def lowers(*names: str, scalar_regions: bool = False):
    """Register `fn(lw: Lower) -> value | [values]` as the lowering of each named op."""
    def deco(fn):
        for n in names:
            if n in PATTERNS:
                raise RuntimeError(f"two lowerings of {n}")
            PATTERNS[n] = fn
            if scalar_regions:
                SCALAR_REGION_OPS.add(n)
        return fn
    return deco


# ----------------------------------------------------------------------------------------
# types and casts
# ----------------------------------------------------------------------------------------
def builtin_type(shape: Shape) -> ir.Type:
    """The type an xla array shape has after lowering (unsigned -> signless)."""
    return shape.builtin_mlir()


def value_of(x) -> ir.Value:
    """The single result of an op built by a helper that returns the op rather than its value."""
    if isinstance(x, ir.Value):
        return x
    if isinstance(x, ir.OpResultList):
        return x[0]
    return value_of(x.results[0])


def cast(v: ir.Value, t: ir.Type) -> ir.Value:
    v = value_of(v)
    if v.type == t:
        return v
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[t], operands=[v]).result


def to_builtin(v: ir.Value) -> ir.Value:
    t = v.type
    if is_tensor(t) or str(t) == "!xla.token":
        s = Shape.from_mlir(t)
        return cast(v, builtin_type(s))
    return v


def in_loop_body(op: ir.Operation) -> bool:
    """Whether `op` sits in the body of a While (an xla.while, or an scf loop once lowered)."""
    parent = op.parent
    while parent is not None:
        if parent.name in ("xla.while", "scf.while", "scf.for"):
            return True
        parent = parent.parent
    return False


def in_scalar_region(op: ir.Operation) -> bool:
    parent = op.parent
    return parent is not None and parent.name in SCALAR_REGION_OPS


# ----------------------------------------------------------------------------------------
# the context a pattern works in
# ----------------------------------------------------------------------------------------
class Lower:
    """What a lowering pattern sees of the op it rewrites."""

    def __init__(self, op: ir.Operation, rewriter, opdef: OpDef):
        self.op = op
        self.rewriter = rewriter
        self.opdef = opdef
        self.args = opdef.unpack(op)
        self.result_shape = Shape.from_mlir(op.results[0].type)

    # operands ------------------------------------------------------------------------------
    def shape(self, name_or_value) -> Shape | list[Shape]:
        v = self.args[name_or_value] if isinstance(name_or_value, str) else name_or_value
        if isinstance(v, list):
            return [Shape.from_mlir(x.type) for x in v]
        return Shape.from_mlir(v.type)

    def value(self, name: str):
        """An operand (or list of operands) as builtin-typed values."""
        v = self.args[name]
        if isinstance(v, list):
            return [to_builtin(x) for x in v]
        return to_builtin(v)

    def attr(self, name: str):
        return self.args[name]

    @property
    def result_type(self) -> ir.Type:
        return builtin_type(self.result_shape)

    def fail(self, param: str, rule: str, got=None, show_got=True):
        self.opdef.check(location_str(self.op.location)).fail(param, rule, got, show_got=show_got)


# ----------------------------------------------------------------------------------------
# small builders used by many patterns
# ----------------------------------------------------------------------------------------
def set_compilation_info(op: ir.Operation, lowering_config: str, translation_info: str) -> None:
    """Give one linalg op xlair's own tile sizes for IREE's code generation: an
    `iree_codegen.compilation_info` (the attribute IREE documents for overriding its
    heuristics) of a lowering config and a translation info, both in IREE's attribute syntax.
    It reaches IREE's code where the op is its dispatch's root and survives IREE's fusion (a
    matmul; not an element-wise op, which IREE's fusion makes anew)."""
    op.attributes["compilation_info"] = ir.Attribute.parse(
        f"#iree_codegen.compilation_info<lowering_config = {lowering_config}, translation_info = {translation_info}>")


def set_cpu_tiles(op: ir.Operation, config: str, pipeline: str) -> None:
    """Tile sizes for IREE's CPU code generation (set_compilation_info): the
    `#iree_cpu.lowering_config<config>` and IREE's CPU `pipeline`.  IREE does not data-tile an
    op that carries one."""
    set_compilation_info(op, f"#iree_cpu.lowering_config<{config}>",
                         f"#iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<{pipeline}>>")


def barrier(*vs: ir.Value):
    """The values through one util.optimization_barrier: IREE forms no dispatch across it (the
    lowering's way to keep a value out of a fusion that IREE's codegen gets wrong).  One value
    gives one value, several a list."""
    res = list(ir.Operation.create("util.optimization_barrier", results=[v.type for v in vs],
                                   operands=list(vs)).results)
    return res[0] if len(vs) == 1 else res


def empty(shape_or_type, dims=None) -> ir.Value:
    if isinstance(shape_or_type, Shape):
        t = builtin_type(shape_or_type)
    else:
        t = shape_or_type
    rt = ir.RankedTensorType(t)
    return tensor.empty(list(rt.shape), rt.element_type)


def int_const(t: ir.Type, v: int) -> ir.Value:
    """An integer constant of the MLIR integer type `t`, `v` taken modulo 2**width (so an
    unsigned value past the signed range is its two's complement bits)."""
    w = ir.IntegerType(t).width
    v = int(v) & ((1 << w) - 1)
    return arith.constant(t, ir.IntegerAttr.get(t, v - (1 << w) if w > 1 and v >> (w - 1) else v))


def float_const(t: ir.Type, v: float) -> ir.Value:
    """A float constant of the MLIR float type `t` (`v` rounded to it)."""
    return arith.constant(t, ir.FloatAttr.get(t, float(v)))


def scalar_const(et: ElementType, value) -> ir.Value:
    """A scalar constant of an xla element type, as a builtin-typed value."""
    t = et.builtin_type()
    if et.is_complex:
        from xlair.dialect.ir import complex_d
        ft = et.component.builtin_type()
        v = complex(value)
        return complex_d.create_(t, arith.constant(ft, v.real), arith.constant(ft, v.imag))
    if et.is_pred:
        return arith.constant(t, ir.IntegerAttr.get(t, int(bool(value))))
    if et.is_integer:
        return int_const(t, value)
    return float_const(t, np.asarray(value, et.dtype).astype(np.float64))


#: the mark of a C128 fill (fill()); distinct_c128_fills numbers them
C128_FILL = "xlair.c128_fill"


def fill(shape: Shape, scalar: ir.Value) -> ir.Value:
    """A tensor of `shape` with every element `scalar`.  C128 through a linalg.generic: IREE
    3.13 turns a linalg.fill into a splat of the element's bits, and has no 128-bit splat.
    Such a generic is a dispatch of its own, not cloned into its reader's as a fill is; marked
    C128_FILL, so that each reader keeps its own (distinct_c128_fills)."""
    if shape.element_type.name == "c128":           # from two F64 fills
        from xlair.dialect.ir import complex_d
        return fill_c128(shape, complex_d.re(scalar), complex_d.im(scalar))
    return value_of(linalg.fill(scalar, outs=[empty(shape)]))


def fill_c128(shape: Shape, re_s: ir.Value, im_s: ir.Value) -> ir.Value:
    """A C128 tensor of `shape` with every element re_s + i im_s (F64 scalars), as fill()
    makes it."""
    part = shape.with_type(shape.element_type.component)
    made = complex_of(*(value_of(linalg.fill(x, outs=[empty(part)])) for x in (re_s, im_s)))
    made.owner.attributes[C128_FILL] = ir.UnitAttr.get()
    return made


_CONSTANTS = ("xla.constant", "arith.constant")


def is_constant_scalar(v: ir.Value) -> bool:
    """Whether the rank-0 tensor `v` is a constant: one, or an xla.complex of two (as the
    builder, the importer and lowering/emit.py make complex constants)."""
    d = defining_op(v)
    return d is not None and (d.name in _CONSTANTS or d.name == "xla.complex" and all(
        getattr(defining_op(x), "name", None) in _CONSTANTS for x in d.operands))


def scalar_parts(v: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The (re, im) scalars of the complex scalar tensor `v`: its constant parts where it is an
    xla.complex of two constants, else the parts of its element."""
    from xlair.dialect.ir import complex_d
    d = defining_op(v)
    if d is not None and d.name == "xla.complex" and is_constant_scalar(v):
        re, im = (extract_scalar(x) for x in d.operands)
        return re, im
    s = extract_scalar(v)
    return complex_d.re(s), complex_d.im(s)


def complex_fill(shape: Shape, v: ir.Value) -> ir.Value:
    """A complex tensor of `shape` with every element the element of the rank-0 tensor `v`
    (read on the host: for constants, see is_constant_scalar)."""
    return fill_c128(shape, *barrier(*scalar_parts(v)))


def complex_parts(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The planar (re, im) tensors of a complex tensor: one generic."""
    from xlair.dialect.ir import complex_d
    rt = ir.RankedTensorType(x.type)
    n, ft = rt.rank, ir.ComplexType(rt.element_type).element_type
    ident = affine_map(n, list(range(n)))
    re, im = generic([x], [ident], [tensor.empty(list(rt.shape), ft)] * 2, [ident, ident], ["parallel"] * n,
                     lambda v, _r, _i: [complex_d.re(v), complex_d.im(v)])
    return re, im


def complex_of(re: ir.Value, im: ir.Value) -> ir.Value:
    """The complex tensor of planar (re, im) tensors: one generic."""
    from xlair.dialect.ir import complex_d
    rt = ir.RankedTensorType(re.type)
    n, ct = rt.rank, ir.ComplexType.get(rt.element_type)
    ident = affine_map(n, list(range(n)))
    return generic([re, im], [ident, ident], [tensor.empty(list(rt.shape), ct)], [ident], ["parallel"] * n,
                   lambda a, b, _o: [complex_d.create_(ct, a, b)])[0]


def distinct_c128_fills(module: ir.Module) -> None:
    """Each C128 fill numbered, so that CSE (xlair's and IREE's) does not merge two.  Merged,
    one fill outside a loop was the initial value of a reduction in the loop and of one before
    it (a While's peeled trip): IREE 3.13 updated the reduction's initial value in place, in
    the fill's buffer, so the loop's second trip started its sums from the first trip's
    results (`x + x.sum(-1).sum()` in a fori_loop of C128, docs/iree-limits.md)."""
    found = []

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if C128_FILL in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    i64 = ir.IntegerType.get_signless(64)
    for k, op in enumerate(found):
        op.attributes[C128_FILL] = ir.IntegerAttr.get(i64, k)


def broadcast_scalar(shape: Shape, v: ir.Value) -> ir.Value:
    """A tensor of `shape` with every element the element of the rank-0 tensor `v`, read on
    the device (fill(extract_scalar(v)) reads it on the host)."""
    n = shape.rank
    ident = affine_map(n, list(range(n)))
    return generic([v], [affine_map(n, [])], [empty(shape)], [ident], ["parallel"] * n, lambda a, _out: [a])[0]


def extract_scalar(v: ir.Value) -> ir.Value:
    """The element of a rank-0 tensor."""
    return tensor.extract(v, [])


def affine_map(n_dims: int, exprs: Sequence) -> ir.AffineMap:
    """A map from `n_dims` loop dimensions: an expr is an int (a loop dim), None (constant 0)
    or an AffineExpr."""
    out = []
    for e in exprs:
        if e is None:
            out.append(ir.AffineConstantExpr.get(0))
        elif isinstance(e, int):
            out.append(ir.AffineDimExpr.get(e))
        else:
            out.append(e)
    return ir.AffineMap.get(n_dims, 0, out)


def has_effects(op, seen: set | None = None) -> bool:
    """Whether running `op` (its regions and the functions it calls) has an effect beyond its
    results: a side-effecting op (CustomCall, Infeed, Send, Rng..., ...) or a collective."""
    found = []
    seen = set() if seen is None else seen

    def visit(o):
        o = getattr(o, "operation", o)
        d = lookup(o.name)
        if d is not None and (d.side_effecting or d.family == "collectives"):
            found.append(o)
            return ir.WalkResult.INTERRUPT
        if o.name == "xla.call":
            callee = ir.FlatSymbolRefAttr(o.attributes["computation"]).value
            if callee not in seen:
                seen.add(callee)
                f = find_function(o, callee)
                if f is None or has_effects(f, seen):
                    found.append(o)
                    return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op.walk(visit)
    return bool(found)


def generic(inputs: Sequence[ir.Value], input_maps: Sequence[ir.AffineMap], outs: Sequence[ir.Value],
            out_maps: Sequence[ir.AffineMap], iterators: Sequence[str], body: Callable) -> list[ir.Value]:
    """A linalg.generic; `body(*scalars)` (input scalars then output scalars) returns the
    yielded values."""
    maps = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in list(input_maps) + list(out_maps)])
    its = ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in iterators])
    g = linalg.GenericOp([o.type for o in outs], list(inputs), list(outs), maps, its)
    etypes = [ir.ShapedType(v.type).element_type for v in list(inputs) + list(outs)]
    blk = g.regions[0].blocks.append(*etypes)
    with ir.InsertionPoint(blk):
        res = body(*blk.arguments)
        linalg.YieldOp(list(res) if isinstance(res, (list, tuple)) else [res])
    return list(g.results)


def _no_elements(op: ir.Operation) -> bool:
    t = op.results[0].type
    return is_tensor(t) and any(d == 0 for d in ir.RankedTensorType(t).shape)


def _wrap(name: str, fn: Callable):
    opdef = lookup(name)

    def pattern(op, rewriter):
        op = op.operation
        if in_scalar_region(op):
            return True  # lowered with the region that holds it
        with rewriter.ip, op.location:
            if opdef is not None and not opdef.side_effecting and _no_elements(op):
                # a result without elements needs no computation (and spares IREE and MLIR
                # their zero-size corner cases)
                rewriter.replace_op(op, [cast(empty(Shape.from_mlir(op.results[0].type)), op.results[0].type)])
                return False
            try:
                lw = Lower(op, rewriter, opdef) if opdef else None
                res = fn(lw) if opdef else fn(op, rewriter)
            except XlaError as e:
                raise e.at(location_str(op.location)) from None
            if res is None:  # the pattern declined
                return True
            vals = list(res) if isinstance(res, (list, tuple)) else [res]
            vals = [cast(v, r.type) for v, r in zip(vals, op.results)]
        rewriter.replace_op(op, vals)
        return False
    return pattern


def index(v: int) -> ir.Value:
    t = ir.IndexType.get()
    return arith.constant(t, ir.IntegerAttr.get(t, v))


def loop_index(dim: int) -> ir.Value:
    """`linalg.index` of a loop dimension, inside a linalg.generic body."""
    return linalg.IndexOp(dim).result


def extract_slice(v: ir.Value, offsets, sizes, strides=None) -> ir.Value:
    rt = ir.RankedTensorType(v.type)
    strides = strides or [1] * len(offsets)
    t = ir.RankedTensorType.get(list(sizes), rt.element_type)
    return tensor.ExtractSliceOp(t, v, [], [], [], list(offsets), list(sizes), list(strides)).result


def insert_slice(src: ir.Value, dst: ir.Value, offsets, strides=None) -> ir.Value:
    sizes = list(ir.RankedTensorType(src.type).shape)
    strides = strides or [1] * len(offsets)
    return tensor.InsertSliceOp(src, dst, [], [], [], list(offsets), sizes, list(strides)).result


def reassociation(groups) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def reshape(v: ir.Value, dims) -> ir.Value:
    """Row-major reshape of a tensor to static `dims`: collapse to 1-D, then expand."""
    rt = ir.RankedTensorType(v.type)
    src, dims, et = list(rt.shape), list(dims), rt.element_type
    if src == dims:
        return v
    flat = v
    if len(src) > 1:
        n = int(np.prod(src, dtype=np.int64))
        flat = tensor.CollapseShapeOp(ir.RankedTensorType.get([n], et), v,
                                      reassociation([list(range(len(src)))])).result
    flat_rank = ir.RankedTensorType(flat.type).rank
    if list(ir.RankedTensorType(flat.type).shape) == dims:
        return flat
    if not dims:
        return tensor.CollapseShapeOp(ir.RankedTensorType.get([], et), flat, reassociation([])).result
    groups = [list(range(len(dims)))] if flat_rank == 1 else []
    return tensor.ExpandShapeOp(ir.RankedTensorType.get(dims, et), flat, reassociation(groups), [],
                                dims).result


def dynamic_offsets(values) -> tuple[list, list]:
    """(dynamic offset values, static offsets with the dynamic marker) for index values."""
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    vals, static = [], []
    for v in values:
        if isinstance(v, int):
            static.append(v)
        else:
            vals.append(v)
            static.append(dyn)
    return vals, static


def tuple_of(lw: Lower, values) -> ir.Value:
    """An xla.tuple of lowered values (cast back to xla types), to stand for a tuple result;
    get_tuple_element of it folds away in the pipeline."""
    shapes = lw.result_shape.tuple_shapes
    vals = [cast(v, s.to_mlir()) for v, s in zip(values, shapes)]
    return ir.Operation.create("xla.tuple", results=[lw.result_shape.to_mlir()], operands=vals).result


def tuple_rebuild(shape: Shape, leaves_iter) -> ir.Value:
    """xla.tuple ops rebuilding a value of `shape` from an iterator of its (xla-typed) leaves."""
    if not shape.is_tuple:
        return next(leaves_iter)
    parts = [tuple_rebuild(s, leaves_iter) for s in shape.tuple_shapes]
    return ir.Operation.create("xla.tuple", results=[shape.to_mlir()], operands=parts).result


def tuple_leaves(value: ir.Value, shape: Shape) -> list[ir.Value]:
    """get_tuple_element ops taking a value of `shape` apart into its (xla-typed) leaves."""
    if not shape.is_tuple:
        return [value]
    out = []
    i64 = ir.IntegerType.get_signless(64)
    for i, s in enumerate(shape.tuple_shapes):
        e = ir.Operation.create("xla.get_tuple_element", results=[s.to_mlir()], operands=[value],
                                attributes={"index": ir.IntegerAttr.get(i64, i)}).result
        out.extend(tuple_leaves(e, s))
    return out


def builtin_leaves(value: ir.Value, shape: Shape) -> list[ir.Value]:
    """The leaves of an xla value as builtin-typed values (what flows through scf, func.call)."""
    return [to_builtin(v) for v in tuple_leaves(value, shape)]


def from_builtin_leaves(values, shape: Shape) -> ir.Value:
    """An xla value of `shape` from builtin-typed leaf values (casts back, rebuilds tuples)."""
    leaves = [cast(v, s.to_mlir()) for v, s in zip(values, shape.leaves())]
    return tuple_rebuild(shape, iter(leaves))


class Anchor:
    """A placeholder op marking where spliced ops go (made at the insertion point); erased
    once they are in place."""

    def __init__(self):
        self.op = ir.Operation.create("xla.anchor")

    def done(self):
        self.op.erase()


def splice_region(region: ir.Region, args, anchor: ir.Operation) -> list[ir.Value]:
    """Move a computation region's ops before `anchor`, its block arguments replaced by `args`
    (xla-typed values); returns the values its xla.return returned."""
    block = region.blocks[0]
    for a, v in zip(block.arguments, args):
        a.replace_all_uses_with(v)
    ops = [op.operation for op in block.operations]
    ret = ops[-1]
    for op in ops[:-1]:
        op.move_before(anchor)
    return list(ret.operands)


def inline_body(call: ir.Operation, block: ir.Block) -> None:
    """A call replaced by a function body's ops (`block`, whose terminator returns the call's
    results): they move before the call, its arguments replaced by the call's operands."""
    ops = [o.operation for o in block.operations]
    for o in ops[:-1]:
        o.move_before(call)
    for a, v in zip(block.arguments, call.operands):
        a.replace_all_uses_with(v)
    for r, v in zip(call.results, ops[-1].operands):
        r.replace_all_uses_with(v)
    call.erase()


def nested_ops(op: ir.Operation) -> list[ir.Operation]:
    """Every op inside `op`'s regions, at any depth."""
    out: list[ir.Operation] = []
    op.walk(lambda x: out.append(x.operation) or ir.WalkResult.ADVANCE)     # post-order: `op` last
    return out[:-1]


def const_int(v: ir.Value) -> int | None:
    """The value of an integer (or index) arith.constant, or None for another value."""
    d = defining_op(v)
    if d is None or d.name != "arith.constant" or not isinstance(d.attributes["value"], ir.IntegerAttr):
        return None
    return ir.IntegerAttr(d.attributes["value"]).value


def defining_op(v: ir.Value) -> ir.Operation | None:
    """The operation that defines `v` (None for a block argument)."""
    src = getattr(v.owner, "operation", v.owner)
    return src if isinstance(src, ir.Operation) else None


def module_of(op: ir.Operation) -> ir.Operation:
    """The top-level op holding `op` (the module, once it is in one)."""
    top = op
    while top.parent is not None:
        top = top.parent
    return top


def declare_global(op: ir.Operation, name: str, t: ir.Type, initial: ir.Attribute):
    """Declare the private mutable `util.global @name` of type `t` in `op`'s module, once.
    Returns the module's block when this call declared it (for the caller's other one-time
    declarations), None when it existed already or `op` is in no module."""
    module = module_of(op)
    if module.name != "builtin.module":
        return None
    block = module.regions[0].blocks[0]
    for o in block.operations:
        if o.operation.name == "util.global" and ir.StringAttr(o.operation.attributes["sym_name"]).value == name:
            return None
    with ir.Location.unknown(), ir.InsertionPoint.at_block_begin(block):
        ir.Operation.create("util.global", attributes={
            "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private"),
            "type": ir.TypeAttr.get(t), "is_mutable": ir.UnitAttr.get(), "initial_value": initial})
    return block


def xla_op(name: str, operands, result: Shape, **attrs) -> ir.Value:
    """Create an xla op (for xla-to-xla rewrites); attributes are encoded by the op's record."""
    opdef = lookup("xla." + name)
    attributes = {p.name: p.attr.to_attr(attrs[p.name]) for p in opdef.attr_params
                  if attrs.get(p.name) is not None}
    return ir.Operation.create(opdef.mlir_name, results=[result.to_mlir()], operands=list(operands),
                               attributes=attributes).result
