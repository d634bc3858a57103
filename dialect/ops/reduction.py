"""Reduce, ReduceWindow and SelectAndScatter (ReducePrecision joins this family later), and the
window rules (padding, dilation, output size) that the convolutions share."""
from __future__ import annotations

import itertools

import numpy as np

from ..attrs import AttrKind, IntLists, Ints, Optional, Padding
from ..checks import XlaError
from ..core import Attr, Comp, OpDef, Operand, Operands, register
from ..ir import ir
from ..types import PRED, Shape
from .dynamic import DynamicContext


def check_reducer(chk, param: str, sig, types, what: str = "", *, cid: str) -> Shape:
    """A computation of type (T_0..T_{N-1}, T_0..T_{N-1}) -> Collate(T_0..T_{N-1})."""
    n = len(types)
    want = tuple(Shape(t, ()) for t in types) * 2
    if len(sig.params) != 2 * n:
        chk.fail(param, f"must take {2 * n} scalar parameters {list(want)}{what}", sig, cid=cid)
    if sig.params != want:
        chk.fail(param, f"must have parameters {list(want)}{what}", sig, cid=cid)
    result = want[0] if n == 1 else Shape.tuple(want[:n])
    if sig.result != result:
        chk.fail(param, f"must return {result}{what}", sig, cid=cid)
    return result


def _reduce_infer(chk, operands, init_values, computation, dimensions):
    n = len(operands)
    if n < 1:
        chk.fail("operands", "must have at least one array (N >= 1)", [], cid="reduce_c3")
    if len(init_values) != n:
        chk.fail("init_values", f"must have one scalar per operand ({n})", init_values, cid="reduce_c3")
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s, cid="reduce_i1")
        if s.dims != operands[0].dims:
            chk.fail(f"operands[{i}]", f"must have the dimensions of operands[0] ({operands[0]})", s,
                     cid="reduce_c1")
    for i, (s, init) in enumerate(zip(operands, init_values)):
        chk.scalar(f"init_values[{i}]", init, cid="reduce_i2")
        chk.same_element_type(f"operands[{i}]", s, f"init_values[{i}]", init, cid="reduce_c2")
    rank = operands[0].rank
    chk.dims_in_range("dimensions", dimensions, rank, cid="reduce_c4")
    chk.unique("dimensions", dimensions, cid="reduce_c5")
    check_reducer(chk, "computation", computation, [s.element_type for s in operands], cid="reduce_c6")
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


def _reduce_dynamic(ctx: DynamicContext) -> dict:
    """Elements beyond the size of a reduced dynamic dimension are read as the init value (the
    spec's rule); the kept dimensions keep their sizes (those of the first operand)."""
    dims = ctx.args["dimensions"]
    ds = ctx.sizes("operands")
    for i, d in enumerate(ds):
        for dim, size in d.items():
            if dim in dims:
                ctx.mask("operands", i, dim, size, "init_values")
    kept = [i for i in range(ctx.shape("operands")[0].rank) if i not in dims]
    return {kept.index(dim): size for dim, size in ds[0].items() if dim in kept}


register(OpDef("Reduce", (Operands("operands"), Operands("init_values"), Comp("computation"),
                          Attr("dimensions", Ints())),
               _reduce_infer, _reduce_ref, "reduction", "Reduce",
               doc="reduce one or more arrays over dimensions with a computation (init on the left)",
               dynamic=_reduce_dynamic,
               constraints={
                   "reduce_i1": "`inputs` is a variadic number of tensors or per-tensor quantized "
                                "tensors",
                   "reduce_i2": "`init_values` is a variadic number of 0-dimensional tensors or per-"
                                "tensor quantized tensors",
                   "reduce_c1": "`same(shape(inputs...))`",
                   "reduce_c2": "`element_type(inputs...) = element_type(init_values...)`",
                   "reduce_c3": "`0 < size(inputs) = size(init_values) = size(results) = N`",
                   "reduce_c4": "`0 <= dimensions < rank(inputs[0])`",
                   "reduce_c5": "`is_unique(dimensions)`",
                   "reduce_c6": "computation has type (E0, ..., EN-1, E0, ..., EN-1) -> (E0, ..., "
                                "EN-1) of scalars",
               }))


# ----------------------------------------------------------------------------------------
# windows: shared by ReduceWindow, SelectAndScatter and the convolutions
# ----------------------------------------------------------------------------------------
class WindowPaddingKind(AttrKind):
    """`Padding.SAME` / `Padding.VALID` (or their names), or explicit (low, high) pairs, one
    per windowed dimension.  Stored as a string attribute or an array of i64 pairs."""
    what = "Padding.SAME, Padding.VALID or a sequence of (low, high) pairs"

    def __init__(self, allow_enum: bool = True, allow_pairs: bool = True):
        self.allow_enum, self.allow_pairs = allow_enum, allow_pairs
        if not allow_enum:
            self.what = "a sequence of (low, high) pairs"
        elif not allow_pairs:
            self.what = "Padding.SAME or Padding.VALID"

    def normalize(self, chk, param, v):
        if self.allow_enum:
            if isinstance(v, Padding):
                return v
            if isinstance(v, str) and v.upper() in Padding.__members__:
                return Padding[v.upper()]
        if self.allow_pairs and not isinstance(v, (str, Padding)):
            try:
                return IntLists(2).normalize(chk, param, v)
            except XlaError:
                pass
        self._bad(chk, param, v)

    def to_attr(self, v):
        if isinstance(v, Padding):
            return ir.StringAttr.get(v.name)
        return IntLists(2).to_attr(v)

    def from_attr(self, a):
        if a.typeid == ir.StringAttr.static_typeid:
            return Padding[ir.StringAttr(a).value]
        return IntLists(2).from_attr(a)


WINDOW_PADDING = WindowPaddingKind()


def dilated(size: int, dilation: int) -> int:
    """Size of a dimension after placing dilation - 1 holes between its elements."""
    return 0 if size == 0 else (size - 1) * dilation + 1


def same_padding(in_dims, window, strides) -> tuple:
    """XLA's MakePadding(kSame): the output is ceil(in / stride); the padding that needs,
    split evenly, the odd element high."""
    out = []
    for n, w, s in zip(in_dims, window, strides):
        o = -(-n // s)
        need = max(0, (o - 1) * s + w - n)
        out.append((need // 2, need - need // 2))
    return tuple(out)


def resolve_padding(padding, in_dims, window, strides, base_dilations=None, window_dilations=None) -> tuple:
    """(low, high) pairs of a window padding; SAME is computed on the dilated sizes."""
    n = len(in_dims)
    if padding is Padding.VALID:
        return ((0, 0),) * n
    if padding is Padding.SAME:
        bd = base_dilations or (1,) * n
        wd = window_dilations or (1,) * n
        return same_padding([dilated(d, b) for d, b in zip(in_dims, bd)],
                            [dilated(w, d) for w, d in zip(window, wd)], strides)
    return tuple(tuple(p) for p in padding)


def check_window(chk, rank: int, what: str, window_dimensions, window_strides, padding,
                 base_dilations=None, window_dilations=None, names=None, *, cids: dict):
    """Lengths and signs of a window's parameters (one entry per windowed dimension); `cids`
    gives each parameter's (length, sign) constraint ids, `padding` its length's."""
    names = names or {}
    for param, vals in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                        ("base_dilations", base_dilations), ("window_dilations", window_dilations)):
        if vals is None:
            continue
        length, sign = cids[param]
        param = names.get(param, param)
        chk.length(param, vals, rank, what, cid=length)
        chk.positive(param, vals, cid=sign)
    if not isinstance(padding, Padding):
        chk.length(names.get("padding", "padding"), padding, rank, what, cid=cids["padding"])


def window_output_dims(chk, base, window, strides, pads, base_dilations=None, window_dilations=None,
                       pad_param: str = "padding", *, cid: str) -> tuple:
    """Number of valid window positions per dimension (the spec's rule: the window moves over
    the dilated, padded base by its stride and stops once it no longer fits)."""
    n = len(base)
    bd = base_dilations or (1,) * n
    wd = window_dilations or (1,) * n
    out = []
    for i in range(n):
        lo, hi = pads[i]
        padded = lo + dilated(base[i], bd[i]) + hi
        if padded < 0:
            chk.fail(pad_param, f"must not remove more than the (dilated) base size {dilated(base[i], bd[i])} "
                     f"of dimension {i}", [list(p) for p in pads], cid=cid)
        w = dilated(window[i], wd[i])
        out.append(0 if w > padded else (padded - w) // strides[i] + 1)
    return tuple(out)


def np_pad(x, triples, value) -> np.ndarray:
    """Reference padding: interior padding first, then edge padding (negative edges cut)."""
    x = np.asarray(x)
    grown, place = [], []
    for n, (lo, hi, it) in zip(x.shape, triples):
        core = dilated(n, it + 1)
        grown.append(max(lo, 0) + core + max(hi, 0))
        place.append(slice(max(lo, 0), max(lo, 0) + core, it + 1))
    out = np.full(grown, value, dtype=x.dtype)
    out[tuple(place)] = x
    cut = tuple(slice(max(-lo, 0), g - max(-hi, 0)) for g, (lo, hi, _) in zip(grown, triples))
    return out[cut]


# -- ReduceWindow ----------------------------------------------------------------------------
_RW_WINDOW = {"window_dimensions": ("reduce_window_c4", "reduce_window_c5"),
              "window_strides": ("reduce_window_c6", "reduce_window_c7"),
              "base_dilations": ("reduce_window_c8", "reduce_window_c9"),
              "window_dilations": ("reduce_window_c10", "reduce_window_c11"), "padding": "reduce_window_c12"}
def _reduce_window_infer(chk, operands, init_values, computation, window_dimensions, window_strides,
                         padding, base_dilations=None, window_dilations=None):
    n = len(operands)
    if n < 1:
        chk.fail("operands", "must have at least one array (N >= 1)", [], cid="reduce_window_c1")
    if len(init_values) != n:
        chk.fail("init_values", f"must have one scalar per operand ({n})", init_values,
                 cid="reduce_window_c1")
    for i, s in enumerate(operands):
        chk.array(f"operands[{i}]", s, cid="reduce_window_i1")
        if s.dims != operands[0].dims:
            chk.fail(f"operands[{i}]", f"must have the dimensions of operands[0] ({operands[0]})", s,
                     cid="reduce_window_c2")
    for i, (s, init) in enumerate(zip(operands, init_values)):
        chk.scalar(f"init_values[{i}]", init, cid="reduce_window_i2")
        chk.same_element_type(f"operands[{i}]", s, f"init_values[{i}]", init, cid="reduce_window_c3")
    base = operands[0].dims
    check_window(chk, len(base), f"one per dimension of {operands[0]}", window_dimensions, window_strides,
                 padding, base_dilations, window_dilations, cids=_RW_WINDOW)
    check_reducer(chk, "computation", computation, [s.element_type for s in operands],
                  cid="reduce_window_c13")
    pads = resolve_padding(padding, base, window_dimensions, window_strides, base_dilations, window_dilations)
    out = window_output_dims(chk, base, window_dimensions, window_strides, pads, base_dilations,
                             window_dilations, cid="reduce_window_c15")
    outs = [Shape(s.element_type, out) for s in operands]
    return outs[0] if n == 1 else Shape.tuple(outs)


def _reduce_window_ref(operands, init_values, computation, window_dimensions, window_strides, padding,
                       base_dilations=None, window_dilations=None, *, result):
    """Pad (with the init values, holes of the base dilation too), then fold every window
    element into the accumulators in row-major window order, all windows at once."""
    n = len(operands)
    x0 = np.asarray(operands[0])
    rank = x0.ndim
    bd = base_dilations or (1,) * rank
    wd = window_dilations or (1,) * rank
    pads = resolve_padding(padding, x0.shape, window_dimensions, window_strides, bd, wd)
    padded = [np_pad(x, [(lo, hi, b - 1) for (lo, hi), b in zip(pads, bd)], np.asarray(v))
              for x, v in zip(operands, init_values)]
    out_dims = result.leaves()[0].dims
    accs = [np.broadcast_to(np.asarray(v), out_dims).copy() for v in init_values]
    if 0 in out_dims:
        return accs[0] if n == 1 else tuple(accs)
    for w in itertools.product(*[range(k) for k in window_dimensions]):
        sl = tuple(slice(w[i] * wd[i], w[i] * wd[i] + (out_dims[i] - 1) * window_strides[i] + 1,
                         window_strides[i]) for i in range(rank))
        r = computation(*accs, *[p[sl] for p in padded], batch=out_dims)
        accs = list(r) if n > 1 else [r]
    return accs[0] if n == 1 else tuple(accs)


def _reduce_window_bind(operands=None, init_values=None, computation=None, window_dimensions=None,
                        window_strides=None, padding=None, base_dilations=None, window_dilations=None,
                        **aliases):
    """reduce_window(operands, init_values, computation, window_dimensions, window_strides,
    padding, base_dilations=None, window_dilations=None); `operand=` and `init_value=` (the
    seed's names) are accepted for the first two."""
    args = dict(operands=operands, init_values=init_values, computation=computation,
                window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                base_dilations=base_dilations, window_dilations=window_dilations)
    for alias, name in (("operand", "operands"), ("init_value", "init_values")):
        if alias in aliases:
            if args[name] is not None:
                raise TypeError(f"both {alias} and {name} given")
            args[name] = aliases.pop(alias)
    if aliases:
        raise TypeError(f"unexpected keyword argument {next(iter(aliases))!r}")
    return {k: v for k, v in args.items() if v is not None}


register(OpDef("ReduceWindow", (Operands("operands"), Operands("init_values"), Comp("computation"),
                                Attr("window_dimensions", Ints()), Attr("window_strides", Ints()),
                                Attr("padding", WINDOW_PADDING),
                                Attr("base_dilations", Optional(Ints()), None),
                                Attr("window_dilations", Optional(Ints()), None)),
               _reduce_window_infer, _reduce_window_ref, "reduction", "ReduceWindow",
               bind=_reduce_window_bind,
               doc="reduce every window of one or more arrays (padding SAME/VALID or (low, high) "
                   "pairs, base and window dilations) with a computation, init on the left",
               constraints={
                   "reduce_window_i1": "`inputs` is a variadic number of tensors or per-tensor "
                                       "quantized tensors",
                   "reduce_window_i2": "`init_values` is a variadic number of 0-dimensional tensors or"
                                       " per-tensor quantized tensors",
                   "reduce_window_c1": "`0 < size(inputs) = size(init_values) = size(results) = N`",
                   "reduce_window_c2": "`same(shape(inputs...))`",
                   "reduce_window_c3": "`element_type(inputs...) = element_type(init_values...)`",
                   "reduce_window_c4": "`size(window_dimensions) = rank(inputs[0])`",
                   "reduce_window_c5": "`0 < window_dimensions`",
                   "reduce_window_c6": "`size(window_strides) = rank(inputs[0])`",
                   "reduce_window_c7": "`0 < window_strides`",
                   "reduce_window_c8": "`size(base_dilations) = rank(inputs[0])`",
                   "reduce_window_c9": "`0 < base_dilations`",
                   "reduce_window_c10": "`size(window_dilations) = rank(inputs[0])`",
                   "reduce_window_c11": "`0 < window_dilations`",
                   "reduce_window_c12": "`shape(padding) = [rank(inputs[0]), 2]`",
                   "reduce_window_c13": "computation has type (E0, ..., EN-1, E0, ..., EN-1) -> (E0, "
                                        "..., EN-1) of scalars",
                   "reduce_window_c15": "the window fits the padded, dilated base (padding removes no "
                                        "more than the base)",
               }))


# -- SelectAndScatter ------------------------------------------------------------------------
def _select_and_scatter_infer(chk, operand, select, window_dimensions, window_strides, padding, source,
                              init_value, scatter):
    chk.array("operand", operand, cid="select_and_scatter_i1")
    t = operand.element_type
    check_window(chk, operand.rank, f"one per dimension of {operand}", window_dimensions, window_strides,
                 padding, cids={"window_dimensions": ("select_and_scatter_c4", "select_and_scatter_c5"),
                                "window_strides": ("select_and_scatter_c6", "select_and_scatter_c7"),
                                "padding": "select_and_scatter_c8"})
    scalar = Shape(t, ())
    if len(select.params) != 2 or select.params != (scalar, scalar):
        chk.fail("select", f"must take two scalar parameters [{scalar}, {scalar}] (the operand's type)", select,
                 cid="select_and_scatter_c9")
    if select.result != Shape(PRED, ()):
        chk.fail("select", "must return a PRED scalar", select, cid="select_and_scatter_c9")
    pads = resolve_padding(padding, operand.dims, window_dimensions, window_strides)
    out = window_output_dims(chk, operand.dims, window_dimensions, window_strides, pads,
                             cid="select_and_scatter_c2")
    chk.array("source", source, cid="select_and_scatter_i2")
    chk.same_element_type("operand", operand, "source", source, cid="select_and_scatter_c1")
    if source.dims != out:
        chk.fail("source", f"must have the shape of the ReduceWindow of operand over the window "
                 f"({Shape(t, out)})", source, cid="select_and_scatter_c2")
    chk.scalar("init_value", init_value, cid="select_and_scatter_i3")
    chk.same_element_type("operand", operand, "init_value", init_value, cid="select_and_scatter_c3")
    check_reducer(chk, "scatter", scatter, [t], cid="select_and_scatter_c10")
    return operand


def _select_and_scatter_ref(operand, select, window_dimensions, window_strides, padding, source, init_value,
                            scatter, *, result):
    """For every source element (row-major): walk its window in row-major order over the
    operand's own elements (padding is never selected), keep the current pick unless
    select(pick, element) is false; then output[pick] = scatter(output[pick], source)."""
    x = np.asarray(operand)
    src = np.asarray(source)
    pads = resolve_padding(padding, x.shape, window_dimensions, window_strides)
    out = np.full(x.shape, np.asarray(init_value), dtype=x.dtype)
    if src.size == 0 or x.size == 0:
        return out
    rank = x.ndim
    pick_val = np.zeros(src.shape, x.dtype)
    pick_pos = np.full(src.shape + (rank,), -1, np.int64)
    have = np.zeros(src.shape, bool)
    grid = np.indices(src.shape) if rank else np.zeros((0,), np.int64)
    for w in itertools.product(*[range(k) for k in window_dimensions]):
        pos = np.stack([grid[i] * window_strides[i] + w[i] - pads[i][0] for i in range(rank)], -1) \
            if rank else np.zeros((0,), np.int64)
        inside = np.all((pos >= 0) & (pos < np.array(x.shape, np.int64)), axis=-1) if rank else np.bool_(True)
        cur = x[tuple(np.clip(pos[..., i], 0, x.shape[i] - 1) for i in range(rank))]
        keep = np.asarray(select(pick_val, cur, batch=src.shape), bool)
        take = inside & (~have | ~keep)
        pick_val = np.where(take, cur, pick_val)
        pick_pos = np.where(take[..., None], pos, pick_pos)
        have = have | inside
    for s in np.ndindex(*src.shape):
        if have[s]:
            p = tuple(int(i) for i in pick_pos[s])
            out[p] = scatter(out[p], src[s])
    return out


register(OpDef("SelectAndScatter", (Operand("operand"), Comp("select"), Attr("window_dimensions", Ints()),
                                    Attr("window_strides", Ints()), Attr("padding", WINDOW_PADDING),
                                    Operand("source"), Operand("init_value"), Comp("scatter")),
               _select_and_scatter_infer, _select_and_scatter_ref, "reduction", "SelectAndScatter",
               doc="select one element per window of operand, scatter source onto the selections",
               constraints={
                   "select_and_scatter_i1": "`operand` is a tensor or per-tensor quantized tensor",
                   "select_and_scatter_i2": "`source` is a tensor or per-tensor quantized tensor",
                   "select_and_scatter_i3": "`init_value` is a 0-dimensional tensor or per-tensor "
                                            "quantized tensor",
                   "select_and_scatter_c1": "`element_type(operand) = element_type(source)`",
                   "select_and_scatter_c2": "source has the shape of the windows over the padded "
                                            "operand",
                   "select_and_scatter_c3": "`element_type(init_value) = element_type(operand)`",
                   "select_and_scatter_c4": "`size(window_dimensions) = rank(operand)`",
                   "select_and_scatter_c5": "`0 < window_dimensions`",
                   "select_and_scatter_c6": "`size(window_strides) = rank(operand)`",
                   "select_and_scatter_c7": "`0 < window_strides`",
                   "select_and_scatter_c8": "`shape(padding) = [rank(operand), 2]`",
                   "select_and_scatter_c9": "select has type (E, E) -> PRED of scalars",
                   "select_and_scatter_c10": "scatter has type (E, E) -> E of scalars",
               }))
