"""Random (mostly ill-formed) calls of every registered op: random operands, attributes of
random values of each attribute kind, random computations, and outright garbage.  The only
acceptable outcomes are a well-formed op or an XlaError."""
from __future__ import annotations

import dataclasses
import random
import traceback

import numpy as np

import xlair as xla
from xlair import ops as O
from xlair._opgen import python_name
from xlair.dialect import attrs as A
from xlair.dialect.core import all_ops
from xlair.dialect.types import ALL_TYPES, F32, PRED, S32, Shape

_COMPS = None


def _computations():
    global _COMPS
    if _COMPS is None:
        out = []
        for et in (F32, S32, PRED):
            b = xla.Builder("bin")
            x, y = b.parameter(0, Shape(et, ())), b.parameter(1, Shape(et, ()))
            (O.and_ if et == PRED else O.add)(x, y)
            out.append(b.build())
        b = xla.Builder("lt")
        O.lt(b.parameter(0, Shape(F32, ())), b.parameter(1, Shape(F32, ())))
        out.append(b.build())
        b = xla.Builder("unary")
        O.neg(b.parameter(0, Shape(F32, (2,))))
        out.append(b.build())
        b = xla.Builder("pair")
        x = b.parameter(0, Shape.tuple([Shape(S32, ()), Shape(F32, ())]))
        O.lt(O.get_tuple_element(x, 0), O.constant(b, np.int32(3)))
        out.append(b.build())
        _COMPS = out
    return _COMPS


GARBAGE = [None, "x", 1.5, -3, (1, "a"), [[1], [2, 3]], {"a": 1}, object(), np.zeros((2, 2)), float("nan"), 10**20]


def _shape(rng):
    if rng.random() < 0.1:
        return Shape.tuple([Shape(rng.choice(ALL_TYPES), (rng.randint(0, 3),))])
    return Shape(rng.choice(ALL_TYPES), tuple(rng.randint(0, 4) for _ in range(rng.randint(0, 3))))


def _attr_value(rng, kind):
    if rng.random() < 0.08:
        return rng.choice(GARBAGE)
    if isinstance(kind, A.Optional):
        return None if rng.random() < 0.3 else _attr_value(rng, kind.inner)
    if isinstance(kind, A.Int):
        return rng.randint(-2, 5)
    if isinstance(kind, A.Bool):
        return rng.random() < 0.5
    if isinstance(kind, A.Float):
        return rng.uniform(-1, 1)
    if isinstance(kind, A.Str):
        return rng.choice(["", "abc", "check.x"])
    if isinstance(kind, A.Ints):
        return [rng.randint(-1, 4) for _ in range(rng.randint(0, 4))]
    if isinstance(kind, A.IntLists):
        n = kind.inner_len or rng.randint(0, 3)
        return [[rng.randint(-2, 3) for _ in range(n)] for _ in range(rng.randint(0, 3))]
    if isinstance(kind, A.ETypeKind):
        return rng.choice(ALL_TYPES)
    if isinstance(kind, A.ShapeKind):
        return _shape(rng)
    if isinstance(kind, A.EnumKind):
        return rng.choice(list(kind.cls))
    if isinstance(kind, A.Literal):
        return np.asarray(rng.choice([1, 2.5, True, [1, 2]]))
    if kind is A.PADDING_CONFIG:
        return [(rng.randint(-2, 2), rng.randint(-2, 2), rng.randint(-1, 2)) for _ in range(rng.randint(0, 3))]
    if isinstance(kind, A.RecordKind):
        kw = {}
        for f in dataclasses.fields(kind.cls):
            kw[f.name] = _attr_value(rng, f.metadata["kind"])
        try:
            return kind.cls(**kw)
        except (xla.XlaError, TypeError, ValueError):
            return kw
    return rng.choice(GARBAGE)


def random_call(rng: random.Random):
    """One random call of a random op: ('accepted' | 'rejected' | 'wrong_exception', detail)."""
    opdef = rng.choice(all_ops())
    b = xla.Builder("calls")
    pool = [b.parameter(i, _shape(rng)) for i in range(rng.randint(1, 4))]
    kwargs = {}
    for p in opdef.params:
        if p.optional and rng.random() < 0.3:
            continue
        if p.kind == "operand":
            v = rng.choice(pool) if rng.random() > 0.05 else rng.choice(GARBAGE)
        elif p.kind == "operands":
            v = [rng.choice(pool) for _ in range(rng.randint(0, 3))]
        elif p.kind in ("computation", "callee"):
            v = rng.choice(_computations()) if rng.random() > 0.05 else rng.choice(GARBAGE)
        elif p.kind == "computations":
            v = [rng.choice(_computations()) for _ in range(rng.randint(0, 3))]
        else:
            v = _attr_value(rng, p.attr)
        kwargs[p.name] = v
    fn = getattr(O, python_name(opdef))
    try:
        if opdef.takes_builder:
            fn(b, **kwargs)
        elif opdef.bind is not None:
            fn(*kwargs.values())
        else:
            fn(**kwargs)
        b.build()
        return "accepted", None
    except xla.XlaError:
        return "rejected", None
    except Exception as e:  # noqa: BLE001
        return "wrong_exception", f"{opdef.name}: {type(e).__name__}: {e} | {traceback.format_exc()[-600:]}"
