"""Building `xla` ops inside a pass: the lowering layer's small counterpart of xlair's Builder
(which lives a layer above and cannot be imported here).

`op(name, *operands, **attrs)` creates one op of the dialect at the current insertion point
from its record (dialect/ops/): the operands fill the record's operand parameters in order,
the attributes are normalised by their kinds and the result shape comes from the record's
shape rule, so an expansion builds only ops that verify.  `X` wraps a value with numpy-like
arithmetic (broadcasting by trailing dimensions, Python numbers as constants of the value's
element type), reductions, batched matrix products and a While over a list of values: what
the expanders of lowering/linalg_expand.py write their algorithms in.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from xlair.dialect.attrs import DotDimensionNumbers
from xlair.dialect.core import RETURN, lookup
from xlair.dialect.ir import ir
from xlair.dialect.types import PRED, S32, Shape


def op(name: str, *operands, **attrs) -> ir.Value:
    """One `xla.<name>` op (no regions) at the insertion point; its result."""
    d = lookup("xla." + name)
    chk = d.check()
    vals: list[ir.Value] = []
    groups, shapes = {}, {}
    rest = list(operands)
    for p in d.operand_params:
        v = rest.pop(0) if rest else attrs.pop(p.name)
        vs = [_value(x) for x in (v if p.variadic else [v])]
        groups[p.name] = vs
        vals.extend(vs)
        ss = [Shape.from_mlir(x.type) for x in vs]
        shapes[p.name] = ss if p.variadic else ss[0]
    mlir_attrs = {}
    for p in d.attr_params:
        v = attrs.pop(p.name, p.default if p.optional else None)
        v = None if v is None else p.attr.normalize(chk, p.name, v)
        shapes[p.name] = v
        if v is not None:
            mlir_attrs[p.name] = p.attr.to_attr(v)
    if rest or attrs:
        raise TypeError(f"xla.{name}: unexpected arguments {rest} {sorted(attrs)}")
    seg = d.segment_attr(groups)
    if seg is not None:
        mlir_attrs["operandSegmentSizes"] = seg
    result = d.infer(chk, **shapes)
    return ir.Operation.create(d.mlir_name, results=[result.to_mlir()], operands=vals,
                               attributes=mlir_attrs).result


def _value(x) -> ir.Value:
    return x.v if isinstance(x, X) else x


def _region_op(name: str, operands: list, results: list, arg_types: list, body: Callable, attrs=None,
               regions: int = 1) -> ir.Operation:
    """An op whose regions each take `arg_types` and return what `body(i, args)` gives."""
    o = ir.Operation.create("xla." + name, results=results, operands=operands, attributes=attrs or {},
                            regions=regions)
    for i, region in enumerate(o.regions):
        block = region.blocks.append(*arg_types)
        with ir.InsertionPoint(block):
            out = body(i, list(block.arguments))
            ir.Operation.create(RETURN, operands=[_value(v) for v in out])
    return o


class X:
    """An `xla` value with numpy-like operators (see the module's docstring)."""

    def __init__(self, v):
        self.v = _value(v)
        self.shape = Shape.from_mlir(self.v.type)

    # -- shape -------------------------------------------------------------------------
    @property
    def dims(self) -> tuple: return tuple(self.shape.dims)

    @property
    def et(self): return self.shape.element_type

    @property
    def rank(self) -> int: return len(self.dims)

    def const(self, value, dims: Sequence[int] = (), et=None) -> "X":
        """A constant of this value's element type (or `et`), broadcast to `dims`."""
        et = et or self.et
        return full(value, et, dims)

    def to(self, dims: Sequence[int]) -> "X":
        """Broadcast to `dims`, numpy's way (trailing dimensions line up)."""
        dims = tuple(dims)
        if self.dims == dims:
            return self
        off = len(dims) - self.rank
        keep = [i for i, d in enumerate(self.dims) if d == dims[off + i]]
        x = self
        if len(keep) != self.rank:           # size-1 dimensions broadcast: drop them first
            x = x.reshape([self.dims[i] for i in keep])
        return X(op("broadcast_in_dim", x, out_dim_size=list(dims), broadcast_dimensions=[off + i for i in keep]))

    def reshape(self, dims) -> "X":
        return X(op("reshape", self, new_sizes=list(dims)))

    def transpose(self, perm) -> "X":
        return X(op("transpose", self, permutation=list(perm)))

    @property
    def mT(self) -> "X":
        """The matrices transposed (the last two dimensions swapped)."""
        r = self.rank
        return self.transpose(list(range(r - 2)) + [r - 1, r - 2])

    def slice(self, starts, limits, strides=None) -> "X":
        kw = {"strides": list(strides)} if strides else {}
        return X(op("slice", self, start_indices=list(starts), limit_indices=list(limits), **kw))

    def diagonal(self, k: int = 0) -> "X":
        """Diagonal k (0 the main one, -1 the subdiagonal) of square matrices [..., n, n]:
        [..., n - |k|].  A strided slice of the flattened matrices: no mask, no iota and no
        sum (an iota shared by masked sums became an operand-less dispatch IREE 3.13 left
        outside its execution regions, docs/iree-limits.md), and a NaN elsewhere stays out."""
        *bt, n, _ = self.dims
        flat = self.reshape(bt + [n * n])
        first = k if k >= 0 else -k * n
        count = n - abs(k)
        return flat.slice([0] * len(bt) + [first], bt + [first + (count - 1) * (n + 1) + 1],
                          [1] * len(bt) + [n + 1])

    def pad(self, value, highs, lows=None) -> "X":
        from xlair.dialect.attrs import PaddingConfig, PaddingConfigDimension
        cfg = PaddingConfig([PaddingConfigDimension(lo, h, 0) for lo, h in zip(lows or [0] * len(highs), highs)])
        return X(op("pad", self, self.const(value), padding_config=cfg))

    def rev(self, dims) -> "X":
        """The elements reversed along `dims` (negative ones count from the end)."""
        return X(op("rev", self, dimensions=[d % self.rank for d in dims]))

    def astype(self, et) -> "X":
        return self if et == self.et else X(op("convert_element_type", self, new_element_type=et))

    # -- element-wise ------------------------------------------------------------------
    def _lift(self, other) -> "X":
        return other if isinstance(other, X) else self.const(other)

    def _bin(self, name: str, other, swap: bool = False) -> "X":
        a, b = self, self._lift(other)
        if swap:
            a, b = b, a
        dims = tuple(np.broadcast_shapes(a.dims, b.dims))
        return X(op(name, a.to(dims), b.to(dims)))

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    def __mod__(self, o): return self._bin("rem", o)
    def __neg__(self): return X(op("neg", self))
    def __and__(self, o): return self._bin("and", o)
    def __or__(self, o): return self._bin("or", o)
    def __invert__(self): return X(op("not", self))

    def eq(self, o): return self._bin("eq", o)
    def ne(self, o): return self._bin("ne", o)
    def lt(self, o): return self._bin("lt", o)
    def le(self, o): return self._bin("le", o)
    def gt(self, o): return self._bin("gt", o)
    def ge(self, o): return self._bin("ge", o)
    def maximum(self, o): return self._bin("max", o)
    def minimum(self, o): return self._bin("min", o)

    def abs(self): return X(op("abs", self))
    def real(self): return X(op("real", self)) if self.et.is_complex else self
    def imag(self): return X(op("imag", self))

    def conj(self) -> "X":
        """The complex conjugate (a real value itself)."""
        return X(op("complex", self.real(), -self.imag())) if self.et.is_complex else self

    def abs2(self) -> "X":
        """|x|^2, of the component type: re^2 + im^2 for a complex x."""
        if not self.et.is_complex:
            return self * self
        re, im = self.real(), self.imag()
        return re * re + im * im
    def sqrt(self): return X(op("sqrt", self))
    def sign(self): return X(op("sign", self))
    def isnan(self): return self.ne(self)

    # -- reductions and products ---------------------------------------------------------
    def _reduce(self, name: str, init, axes) -> "X":
        axes = sorted(a % self.rank for a in ([axes] if isinstance(axes, int) else axes))
        scalar = Shape(self.et, ())
        out = Shape(self.et, [d for i, d in enumerate(self.dims) if i not in axes])
        o = _region_op("reduce", [self.v, self.const(init).v], [out.to_mlir()], [scalar.to_mlir()] * 2,
                       lambda i, args: [op(name, args[0], args[1])],
                       {"dimensions": ir.DenseI64ArrayAttr.get(axes),
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])})
        return X(o.result)

    def sum(self, axes=-1): return self._reduce("add", 0, axes)
    def max(self, axes=-1): return self._reduce("max", -np.inf if self.et.is_float else np.iinfo(np.int32).min, axes)
    def min(self, axes=-1): return self._reduce("min", np.inf if self.et.is_float else np.iinfo(np.int32).max, axes)
    def any(self, axes=-1): return self._reduce("or", False, axes)

    def __matmul__(self, o: "X") -> "X":
        """Batched matrix product: [..., m, k] @ [..., k, n] (the same batch dimensions)."""
        b = self.rank - 2
        dn = DotDimensionNumbers((b + 1,), (b,), tuple(range(b)), tuple(range(b)))
        return X(op("dot_general", self, o, dimension_numbers=dn))


def full(value, et, dims: Sequence[int] = ()) -> X:
    """`value` of element type `et`, broadcast to `dims`.  A complex one is made of its real
    and imaginary parts, as the builder makes complex literals (MLIR's bindings cannot read back
    a complex dense attribute)."""
    v = np.array(value, dtype=Shape(et, ()).dtype)
    if v.dtype.kind == "c":
        c = X(op("complex", X(op("constant", value=np.array(v.real))), X(op("constant", value=np.array(v.imag)))))
    else:
        c = X(op("constant", value=v))
    return c.to(dims) if dims else c


def last(x: X) -> X:
    """x [...] as [..., 1]."""
    return x.reshape(list(x.dims) + [1])


def slice_at(x: X, k: X, axis: int) -> X:
    """x at index k (an S32 scalar, one for the whole batch) of `axis`, that axis dropped.  A
    dynamic slice, not a masked sum: C128 sums with one-element accumulators were miscompiled
    by IREE 3.13 (docs/iree-limits.md)."""
    ax = axis % x.rank
    zero = full(0, S32)
    starts = [k if d == ax else zero for d in range(x.rank)]
    sizes = [1 if d == ax else s for d, s in enumerate(x.dims)]
    return X(op("dynamic_slice", x, starts, size_indices=sizes)).reshape([s for d, s in enumerate(x.dims) if d != ax])


def cabs1(x: X) -> X:
    """|x|, or |re x| + |im x| of a complex x: the magnitude LAPACK compares where it picks
    pivots (i?amax) and tests for negligible elements."""
    return x.real().abs() + x.imag().abs() if x.et.is_complex else x.abs()


#: the most elements an iota of the device code is made as a constant table
IOTA_TABLE_MAX = 1024


def iota(dims: Sequence[int], dim: int, et=S32) -> X:
    """Indices along `dim`.  A small one is a constant table: an iota is an operand-less
    dispatch where IREE does not fuse it into each consumer, and IREE 3.13's stream
    partitioning left such a dispatch, shared by a loop's region and the code around it,
    outside every execution region ('streamable op expected to be in an execution region',
    docs/iree-limits.md); IREE clones a small constant into each dispatch reading it instead."""
    shape = Shape(et, tuple(dims))
    ax = dim % len(dims)
    if int(np.prod(dims)) <= IOTA_TABLE_MAX:
        along = np.arange(dims[ax]).reshape([-1 if d == ax else 1 for d in range(len(dims))])
        return X(op("constant", value=np.ascontiguousarray(np.broadcast_to(along, dims)).astype(shape.dtype)))
    return X(op("iota", shape=shape, iota_dimension=ax))


def where(pred: X, a, b) -> X:
    """select(pred, a, b), broadcast numpy's way; a Python number takes the other's type."""
    ref = a if isinstance(a, X) else b
    a, b = ref._lift(a), ref._lift(b)
    dims = tuple(np.broadcast_shapes(pred.dims, a.dims, b.dims))
    return X(op("select", pred.to(dims), a.to(dims), b.to(dims)))


def tuple_of(xs: Sequence[X]) -> ir.Value:
    return op("tuple", [x.v for x in xs])


def unpack(t: ir.Value, n: int) -> list[X]:
    return [X(op("get_tuple_element", t, index=i)) for i in range(n)]


def while_loop(state: Sequence[X], cond: Callable, body: Callable) -> list[X]:
    """XLA's While over a list of values: `cond(values) -> PRED scalar`, `body(values) -> values`."""
    init = tuple_of(state)
    n = len(state)
    o = _region_op("while", [init], [init.type], [init.type],
                   lambda i, args: [tuple_of(body(unpack(args[0], n)))] if i else [cond(unpack(args[0], n))],
                   regions=2)
    return unpack(o.result, n)


def counted(count: int, state: Sequence[X], body: Callable) -> list[X]:
    """`body(k, values) -> values` for k = 0 .. count - 1 (k an S32 scalar)."""
    out = while_loop([full(0, S32)] + list(state), lambda s: s[0].lt(count),
                     lambda s: [s[0] + 1] + list(body(s[0], s[1:])))
    return out[1:]


__all__ = ["X", "op", "full", "iota", "where", "tuple_of", "unpack", "while_loop", "counted", "PRED", "last",
           "slice_at", "cabs1"]
