"""Random xla programs for differential fuzzing (compiled vs the reference interpreter) and
random ill-formed calls (which must raise XlaError and nothing else).

Well-formed programs grow a pool of values: each step picks an op generator, which draws
operands from the pool and attributes within the op's constraints.  Floats start as small
integers, so sums, products, dots, max/min and data movement stay exact; a value that went
through a transcendental function is marked inexact, and discontinuous ops (compare, floor,
sign, conversions to integers, ...) only ever see exact values - a rounding difference
between two correct implementations can then never flip a branch.
"""
from __future__ import annotations

import dataclasses
import random
from typing import Callable

import numpy as np

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import (BF16, F16, F32, F64, PRED, S8, S32, S64, U8, U32, Shape)

INT_TYPES = [S8, S32, S64, U8, U32]
FLOAT_TYPES = [F32, F64, F16, BF16]
TYPES = INT_TYPES + FLOAT_TYPES + [PRED]
MAX_ABS = 1 << 10          # exact values are kept below this magnitude
EXACT_LIMIT = {"bf16": 128.0, "f16": 1024.0}    # integers these types hold exactly (with margin)


PRECISION = ["bf16", "f16", "f32", "f64"]          # coarsest first


@dataclasses.dataclass
class Val:
    op: xla.Op
    exact: bool            # computed without rounding (integers, or integer-valued floats)
    bound: float           # a bound of |value|
    prec: str = "f64"      # the coarsest float type on the path that made it (for tolerances:
    #                        f16/bf16 intermediates may be kept in f32, as XLA allows)

    @property
    def shape(self) -> Shape:
        return self.op.shape

    @property
    def et(self):
        return self.op.shape.element_type


@dataclasses.dataclass
class _Hypo:
    """A would-be parameter, to test a generator's predicate before creating it."""
    shape: Shape
    exact: bool = True
    bound: float = 8.0

    @property
    def et(self):
        return self.shape.element_type


class Gen:
    def __init__(self, rng: random.Random, b: xla.Builder, params: list | None = None):
        self.rng = rng
        self.b = b
        self.pool: list[Val] = []
        self.params: list[tuple[Shape, np.ndarray]] = [] if params is None else params

    # -- values -----------------------------------------------------------------------------
    def dims(self, rank=None):
        rank = self.rng.randint(0, 3) if rank is None else rank
        return tuple(self.rng.randint(1, 4) for _ in range(rank))

    def new_param(self, et, dims) -> Val:
        shape = Shape(et, dims)
        nprng = np.random.default_rng(self.rng.randrange(1 << 30))
        if et.is_pred:
            value = nprng.random(dims) < 0.5
        elif et.is_unsigned:
            value = nprng.integers(0, 9, dims).astype(et.dtype)
        else:
            value = nprng.integers(-8, 9, dims).astype(et.dtype)
        op = self.b.parameter(len(self.params), shape)
        self.params.append((shape, np.asarray(value, et.dtype)))
        v = Val(op, True, 8.0)
        self.pool.append(v)
        return v

    def pick(self, pred: Callable[[Val], bool] = lambda v: True, et=None, dims=None) -> Val:
        """A value of the pool satisfying `pred` (and the element type / dims given), or a new
        parameter that does."""
        def ok(v):
            return (v.shape.is_array and all(d >= 1 for d in v.shape.dims) and pred(v)
                    and (et is None or v.et == et) and (dims is None or v.shape.dims == tuple(dims)))
        cands = [v for v in self.pool if ok(v)]
        if cands and self.rng.random() < 0.85:
            return self.rng.choice(cands)
        for _ in range(50):
            t = et or self.rng.choice(TYPES)
            d = tuple(dims) if dims is not None else self.dims()
            if ok(_Hypo(Shape(t, d))):
                return self.new_param(t, d)
        raise IndexError("no value fits")          # the generator gives up on this op

    def add(self, op: xla.Op, exact: bool, bound: float, *srcs: Val) -> Val:
        limit = EXACT_LIMIT.get(op.shape.element_type.name, MAX_ABS) if op.shape.is_array else MAX_ABS
        precs = [v.prec for v in srcs] + ([op.shape.element_type.name] if op.shape.element_type.is_float else [])
        prec = min(precs, key=PRECISION.index) if precs else "f64"
        v = Val(op, exact and bound < limit, bound, prec)
        self.pool.append(v)
        return v


# ----------------------------------------------------------------------------------------
# op generators: each returns the new Val (or None when it does not apply)
# ----------------------------------------------------------------------------------------
def _numeric(v):
    return not v.et.is_pred


def g_binary_arith(g: Gen):
    name = g.rng.choice(["add", "sub", "mul", "max", "min"])
    a = g.pick(lambda v: _numeric(v) and (v.bound < 64 or name in ("max", "min")))
    b = g.pick(lambda v: v.bound < 64 or name in ("max", "min"), et=a.et, dims=a.shape.dims)
    if name == "mul":
        bound = a.bound * b.bound
    elif name in ("add", "sub"):
        bound = a.bound + b.bound
    else:
        bound = max(a.bound, b.bound)
    if a.et.is_unsigned and name == "sub":
        name = "add"
    return g.add(getattr(O, name)(a.op, b.op), a.exact and b.exact, bound, a, b)


def g_broadcast_binary(g: Gen):
    a = g.pick(lambda v: _numeric(v) and v.shape.rank >= 1 and v.bound < 64)
    k = g.rng.randrange(a.shape.rank)
    vec = g.pick(lambda v: v.bound < 64, et=a.et, dims=(a.shape.dims[k],))
    name = g.rng.choice(["add", "max", "min", "mul"])
    bound = a.bound * vec.bound if name == "mul" else a.bound + vec.bound
    return g.add(getattr(O, name)(a.op, vec.op, [k]), a.exact and vec.exact, bound, a, vec)


def g_int_bits(g: Gen):
    a = g.pick(lambda v: v.et.is_integer)
    b = g.pick(et=a.et, dims=a.shape.dims)
    name = g.rng.choice(["and_", "or_", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic",
                         "div", "rem"])
    return g.add(getattr(O, name)(a.op, b.op), True, float(np.iinfo(a.et.dtype).max))


def g_unary_smooth(g: Gen):
    a = g.pick(lambda v: v.et.is_float and v.bound < 64)
    name = g.rng.choice(["tanh", "logistic", "sin", "cos", "exp"])
    if name == "exp" and a.bound > 8:
        name = "tanh"
    bound = np.exp(a.bound) if name == "exp" else 1.0
    return g.add(getattr(O, name)(a.op), False, float(bound), a)


def g_unary_exact(g: Gen):
    a = g.pick(lambda v: _numeric(v) and v.exact)
    name = g.rng.choice(["neg", "abs", "sign"] + (["floor", "ceil", "round_nearest_even", "round_nearest_afz"]
                                                  if a.et.is_float else ["not_", "population_count", "clz"]))
    if a.et.is_unsigned and name in ("neg", "abs"):
        name = "sign"
    if name in ("not_", "population_count", "clz"):
        return g.add(getattr(O, name)(a.op), True, float(np.iinfo(a.et.dtype).max))
    return g.add(getattr(O, name)(a.op), a.exact, a.bound, a)


def g_compare_select(g: Gen):
    a = g.pick(lambda v: v.exact and not v.et.is_pred)
    b = g.pick(lambda v: v.exact, et=a.et, dims=a.shape.dims)
    cmp = g.rng.choice(["eq", "ne", "lt", "le", "gt", "ge"] + (["lt_total_order", "ge_total_order"]
                                                              if a.et.is_float else []))
    p = getattr(O, cmp)(a.op, b.op)
    x = g.pick(et=None, dims=a.shape.dims)
    y = g.pick(et=x.et, dims=a.shape.dims)
    return g.add(O.select(p, x.op, y.op), x.exact and y.exact, max(x.bound, y.bound), x, y)


def g_clamp(g: Gen):
    x = g.pick(lambda v: _numeric(v))
    lo = g.pick(et=x.et, dims=())
    hi = g.pick(et=x.et, dims=())
    return g.add(O.clamp(lo.op, x.op, hi.op), x.exact and lo.exact and hi.exact, max(x.bound, lo.bound, hi.bound), x, lo, hi)


def g_convert(g: Gen):
    a = g.pick(lambda v: v.exact or True)
    dst = g.rng.choice(TYPES)
    if not a.exact and (dst.is_integer or dst.is_pred):
        dst = g.rng.choice(FLOAT_TYPES)
    if dst in (F16, BF16) and a.bound > 200:
        dst = F32
    exact = a.exact and (dst.is_float or dst.is_pred or a.et.is_pred or a.bound < 100)
    bound = a.bound if not dst.is_pred else 1.0
    if dst.is_integer and not a.et.is_pred:
        bound = max(bound, 256.0)
    return g.add(O.convert_element_type(a.op, dst), exact and (not dst.is_integer or a.bound < 100), bound, a)


def g_movement(g: Gen):
    a = g.pick(lambda v: v.shape.rank >= 1)
    r = a.shape.rank
    dims = a.shape.dims
    kind = g.rng.choice(["transpose", "rev", "slice", "reshape", "broadcast_in_dim", "pad", "concatenate",
                         "broadcast", "collapse", "dynamic_slice", "dynamic_update_slice", "iota_add"])
    if kind == "transpose":
        perm = list(range(r))
        g.rng.shuffle(perm)
        return g.add(O.transpose(a.op, perm), a.exact, a.bound, a)
    if kind == "rev":
        return g.add(O.rev(a.op, g.rng.sample(range(r), g.rng.randint(0, r))), a.exact, a.bound, a)
    if kind == "slice":
        start = [g.rng.randrange(d) for d in dims]
        limit = [g.rng.randint(s + 1, d) for s, d in zip(start, dims)]
        strides = [g.rng.randint(1, 2) for _ in dims]
        return g.add(O.slice(a.op, start, limit, strides), a.exact, a.bound, a)
    if kind == "reshape":
        n = int(np.prod(dims))
        new = [n] if g.rng.random() < 0.5 else [1, n]
        perm = list(range(r))
        g.rng.shuffle(perm)
        return g.add(O.reshape(a.op, perm, new), a.exact, a.bound, a)
    if kind == "broadcast_in_dim":
        out = list(dims) + [g.rng.randint(1, 3)]
        return g.add(O.broadcast_in_dim(a.op, out, list(range(r))), a.exact, a.bound, a)
    if kind == "broadcast":
        return g.add(O.broadcast(a.op, [g.rng.randint(1, 3)]), a.exact, a.bound, a)
    if kind == "collapse" and r >= 2:
        k = g.rng.randrange(r - 1)
        return g.add(O.collapse(a.op, [k, k + 1]), a.exact, a.bound, a)
    if kind == "pad":
        pv = g.pick(et=a.et, dims=())
        cfg = [(g.rng.randint(-1, 2), g.rng.randint(-1, 2), g.rng.randint(0, 1)) for _ in dims]
        try:
            return g.add(O.pad(a.op, pv.op, cfg), a.exact and pv.exact, max(a.bound, pv.bound), a, pv)
        except xla.XlaError:
            return None
    if kind == "concatenate":
        k = g.rng.randrange(r)
        other_dims = list(dims)
        other_dims[k] = g.rng.randint(1, 3)
        b = g.pick(et=a.et, dims=other_dims)
        return g.add(O.concatenate([a.op, b.op], k), a.exact and b.exact, max(a.bound, b.bound), a, b)
    if kind in ("dynamic_slice", "dynamic_update_slice"):
        starts = [g.pick(et=S32, dims=()) for _ in dims]
        if kind == "dynamic_slice":
            sizes = [g.rng.randint(1, d) for d in dims]
            return g.add(O.dynamic_slice(a.op, [s.op for s in starts], sizes), a.exact, a.bound, a)
        upd = g.pick(et=a.et, dims=[g.rng.randint(1, d) for d in dims])
        return g.add(O.dynamic_update_slice(a.op, upd.op, [s.op for s in starts]), a.exact and upd.exact,
                     max(a.bound, upd.bound), a, upd)
    if kind == "iota_add" and _numeric(a):
        return g.add(O.add(a.op, O.iota(g.b, Shape(a.et, dims), g.rng.randrange(r))), a.exact, a.bound + 4, a)
    return None


def _scalar_comp(name, et):
    b = xla.Builder(f"{name}_{et.name}")
    getattr(O, name)(b.parameter(0, Shape(et, ())), b.parameter(1, Shape(et, ())))
    return b.build()


def g_reduce(g: Gen):
    a = g.pick(lambda v: v.shape.rank >= 1 and (v.exact or v.bound < 64) and (not v.et.is_pred))
    name = g.rng.choice(["add", "max", "min"])
    r = a.shape.rank
    dims = g.rng.sample(range(r), g.rng.randint(1, r))
    init = {"add": 0, "max": -8, "min": 8}[name]
    if a.et.is_unsigned and name == "max":
        init = 0
    n = int(np.prod([a.shape.dims[d] for d in dims]))
    bound = a.bound * n if name == "add" else max(a.bound, 8)
    return g.add(O.reduce(a.op, O.constant(g.b, np.asarray(init).astype(a.et.dtype)), _scalar_comp(name, a.et), dims),
                 a.exact, bound, a)


def g_dot(g: Gen):
    a = g.pick(lambda v: v.shape.rank in (1, 2) and _numeric(v) and v.bound < 32 and not v.et in (S8, U8))
    k = a.shape.dims[-1]
    b = g.pick(lambda v: v.bound < 32, et=a.et, dims=(k, g.rng.randint(1, 3)) if g.rng.random() < 0.6 else (k,))
    bound = a.bound * b.bound * k
    return g.add(O.dot(a.op, b.op), a.exact and b.exact, bound, a, b)


def g_sort(g: Gen):
    a = g.pick(lambda v: v.shape.rank >= 1 and v.exact and not v.et.is_pred)
    d = g.rng.randrange(a.shape.rank)
    b = xla.Builder("cmp")
    x, y = b.parameter(0, Shape(a.et, ())), b.parameter(1, Shape(a.et, ()))
    g.rng.choice([O.lt, O.gt])(x, y)
    return g.add(O.sort([a.op], b.build(), d, True), a.exact, a.bound, a)


def g_call_map(g: Gen):
    """Call or Map of a small element-wise computation (one shared function per computation)."""
    a = g.pick(lambda v: _numeric(v) and v.exact and v.bound < 64)
    name = g.rng.choice(["add", "max", "mul"])
    sub = _scalar_comp(name, a.et) if g.rng.random() < 0.5 else None
    if sub is not None:
        b2 = g.pick(lambda v: v.exact and v.bound < 64, et=a.et, dims=a.shape.dims)
        bound = a.bound * b2.bound if name == "mul" else a.bound + b2.bound
        return g.add(O.map([a.op, b2.op], sub, list(range(a.shape.rank))), True, bound, a, b2)
    cb = xla.Builder("callee")
    x = cb.parameter(0, a.shape)
    getattr(O, name)(x, x)
    bound = a.bound * a.bound if name == "mul" else 2 * a.bound
    return g.add(O.call(cb.build(), [a.op]), a.exact, bound, a)


def g_while(g: Gen):
    """A counted loop adding a value to an accumulator n times."""
    a = g.pick(lambda v: _numeric(v) and v.exact and v.bound < 16 and not v.et.is_unsigned)
    n = g.rng.randint(0, 4)
    st = Shape.tuple([Shape(S32, ()), a.shape, a.shape])
    cb = xla.Builder("cond")
    s = cb.parameter(0, st)
    O.lt(O.get_tuple_element(s, 0), O.constant(cb, np.int32(n)))
    bb = xla.Builder("body")
    s = bb.parameter(0, st)
    O.tuple(bb, [O.add(O.get_tuple_element(s, 0), O.constant(bb, np.int32(1))),
                 O.add(O.get_tuple_element(s, 1), O.get_tuple_element(s, 2)), O.get_tuple_element(s, 2)])
    w = O.while_(cb.build(), bb.build(), O.tuple(g.b, [O.constant(g.b, np.int32(0)), a.op, a.op]))
    return g.add(O.get_tuple_element(w, 1), a.exact, a.bound * (n + 1), a)


def g_conditional(g: Gen):
    a = g.pick(lambda v: _numeric(v) and v.exact and v.bound < 64)
    sel = g.pick(lambda v: v.exact and v.bound < 64, et=S32, dims=())
    branches = []
    for name in g.rng.sample(["neg", "abs", "sign"], g.rng.randint(1, 3)):
        if a.et.is_unsigned:
            name = "sign"
        bb = xla.Builder(f"branch_{name}")
        getattr(O, name)(bb.parameter(0, a.shape))
        branches.append(bb.build())
    return g.add(O.conditional(sel.op, branches, [a.op] * len(branches)), a.exact, a.bound, a)


GENERATORS = [g_binary_arith, g_broadcast_binary, g_int_bits, g_unary_smooth, g_unary_exact, g_compare_select,
              g_clamp, g_convert, g_movement, g_movement, g_reduce, g_dot, g_sort, g_call_map, g_while,
              g_conditional]


def random_program(seed: int, builder: xla.Builder, params: list, n_ops: int | None = None) -> list[Val]:
    """Add one random program's ops to `builder` (parameters appended to the shared `params`);
    returns the values it produced."""
    rng = random.Random(seed)
    g = Gen(rng, builder, params)
    start = len(g.pool)
    g.new_param(rng.choice(TYPES), g.dims())
    made = []
    target = n_ops or rng.randint(1, 20)
    tries = 0
    while len(made) < target and tries < target * 10:
        tries += 1
        gen_fn = rng.choice(GENERATORS)
        try:
            v = gen_fn(g)
        except IndexError:
            v = None
        if v is not None:
            made.append(v)
    return made or g.pool[start:]
