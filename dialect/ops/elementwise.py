"""Element-wise ops: binary arithmetic, comparisons, unary functions, Select, Clamp,
ConvertElementType, BitcastConvertType.  Families are tables, a line per op.

Defined values where the spec says "implementation defined" (documented in
docs/semantics.md and tested):
- integer x / 0 = -1 (all bits set), x % 0 = x; INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0;
- shifts by >= the bit width (or negative amounts): ShiftLeft and ShiftRightLogical give 0,
  ShiftRightArithmetic gives the sign fill (0 or -1);
- integer Pow with a negative exponent: 1 for base 1, +-1 for base -1, 0 otherwise;
- float -> integer conversion truncates toward zero and saturates; NaN converts to 0;
- Max/Min propagate NaN; complex Max/Min order by real part, then imaginary part.
"""
from __future__ import annotations

import numpy as np

from ..attrs import ETypeKind, Int, Ints, Optional
from ..checks import spec_id, types_of
from ..core import Attr, OpDef, Operand, register
from ..types import (BF16, C64, C128, COMPLEX, F32, F64, FLOATS, INTEGERS, PRED, SIGNED,
                     UNSIGNED, Shape)
from .common import broadcast_binary, expand_operand
from .dynamic import same_as_operands

NUM = INTEGERS + FLOATS + COMPLEX            # arithmetic types
REAL = INTEGERS + FLOATS                     # ordered types
INT_PRED = (PRED,) + INTEGERS
ANY = (PRED,) + NUM
FLOAT_CPLX = FLOATS + COMPLEX
SEC_BIN = "Element-wise binary arithmetic operations"
SEC_CMP = "Element-wise comparison operations"
SEC_UN = "Element-wise unary functions"

#: the StableHLO op of each seed: its constraint ids (`add_i1`, `add_c1`, ...) are the ones the
#: seed's rule cites (docs/errors.md)
STABLEHLO = {
    "Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Rem": "remainder",
    "Max": "maximum", "Min": "minimum", "LogicalAnd": "and", "LogicalOr": "or", "Pow": "power",
    "Atan2": "atan2", "And": "and", "Or": "or", "Xor": "xor", "ShiftLeft": "shift_left",
    "ShiftRightLogical": "shift_right_logical", "ShiftRightArithmetic": "shift_right_arithmetic",
    "Complex": "complex",
    "Abs": "abs", "Ceil": "ceil", "Floor": "floor", "Cos": "cosine", "Sin": "sine", "Tan": "tan",
    "Exp": "exponential", "Expm1": "exponential_minus_one", "Log": "log", "Log1p": "log_plus_one",
    "Logistic": "logistic", "Tanh": "tanh", "Sqrt": "sqrt", "Rsqrt": "rsqrt", "Cbrt": "cbrt",
    "Imag": "imag", "Real": "real", "IsFinite": "is_finite", "PopulationCount": "popcnt",
    "Clz": "count_leading_zeros", "Neg": "negate", "Sign": "sign",
    "RoundNearestAfz": "round_nearest_afz", "RoundNearestEven": "round_nearest_even",
}


def _words(types) -> str:
    kinds = []
    for k, name in (("pred", "PRED"), ("sint", "signed integer"), ("uint", "unsigned integer"),
                    ("float", "floating-point"), ("complex", "complex")):
        if any(t.kind == k for t in types):
            kinds.append(name)
    return " or ".join(kinds) if len(kinds) < 3 else ", ".join(kinds[:-1]) + " or " + kinds[-1]


# ----------------------------------------------------------------------------------------
# numpy reference semantics
# ----------------------------------------------------------------------------------------
def _int_div(a, b):
    a, b = np.broadcast_arrays(a, b)
    dt = a.dtype
    if dt.kind == "u":
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, np.array(np.iinfo(dt).max, dt), a // safe).astype(dt)
    info = np.iinfo(dt)
    bad = (b == 0) | ((a == info.min) & (b == -1))
    sa = np.where(bad, 1, a).astype(np.int64)
    sb = np.where(bad, 1, b).astype(np.int64)
    q = (np.abs(sa) // np.abs(sb)) * np.sign(sa) * np.sign(sb)
    q = np.where(b == 0, -1, np.where(bad, info.min, q))
    return q.astype(dt)


def _int_rem(a, b):
    a, b = np.broadcast_arrays(a, b)
    dt = a.dtype
    if dt.kind == "u":
        return np.where(b == 0, a, a % np.where(b == 0, 1, b)).astype(dt)
    info = np.iinfo(dt)
    bad = (b == 0) | ((a == info.min) & (b == -1))
    sa = np.where(bad, 1, a).astype(np.int64)
    sb = np.where(bad, 1, b).astype(np.int64)
    r = np.fmod(sa, sb)
    r = np.where(b == 0, a, np.where(bad, 0, r))
    return r.astype(dt)


def _div(a, b):
    if a.dtype.kind in "iu":
        return _int_div(a, b)
    with np.errstate(all="ignore"):
        return (a / b).astype(a.dtype)


def _rem(a, b):
    if a.dtype.kind in "iu":
        return _int_rem(a, b)
    with np.errstate(all="ignore"):
        return np.fmod(a, b).astype(a.dtype)


def _lexi(pick_max):
    def f(a, b):
        if a.dtype.kind == "c":
            gt = (a.real > b.real) | ((a.real == b.real) & (a.imag > b.imag))
            nan = np.isnan(a.real) | np.isnan(a.imag) | np.isnan(b.real) | np.isnan(b.imag)
            r = np.where(gt if pick_max else ~gt & ~((a.real == b.real) & (a.imag == b.imag)), a, b)
            return np.where(nan, np.array(complex("nan+nanj"), a.dtype), r).astype(a.dtype)
        if a.dtype == np.bool_:
            return (a | b) if pick_max else (a & b)
        return (np.maximum if pick_max else np.minimum)(a, b).astype(a.dtype)
    return f


def _int_pow(a, b):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dt = a.dtype
    base = a.astype(np.uint64)          # arithmetic modulo 2**64, truncated to dt at the end
    e = np.where(b < 0, 0, b).astype(np.uint64)
    acc = np.ones(a.shape, np.uint64)
    with np.errstate(over="ignore"):
        for _ in range(dt.itemsize * 8):
            acc = np.where((e & np.uint64(1)) == 1, acc * base, acc)
            base = base * base
            e = e >> np.uint64(1)
    res = acc.astype(dt)
    if dt.kind == "i":
        neg = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0)).astype(dt)
        res = np.where(b < 0, neg, res)
    return np.asarray(res, dt)


def _pow(a, b):
    if a.dtype.kind in "iu":
        return _int_pow(a, b)
    with np.errstate(all="ignore"):
        return np.power(a, b).astype(a.dtype)


def _shift(kind):
    def f(a, b):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        dt = a.dtype
        bits = dt.itemsize * 8
        udt, sdt = np.dtype(f"u{dt.itemsize}"), np.dtype(f"i{dt.itemsize}")
        amount = b.astype(udt)
        big = amount >= bits
        s = np.where(big, 0, amount).astype(udt)
        if kind == "left":
            r = np.where(big, 0, a.astype(udt) << s)
        elif kind == "logical":
            r = np.where(big, 0, a.astype(udt) >> s)
        else:
            r = a.astype(sdt) >> np.where(big, bits - 1, s).astype(sdt)
        return np.asarray(r).astype(udt).astype(dt)
    return f


def _atan2(a, b):
    """atan2(y=a, x=b); for complex values XLA's -i log((x + i y) / sqrt(x^2 + y^2))."""
    with np.errstate(all="ignore"):
        if a.dtype.kind == "c":
            return (-1j * np.log((b + 1j * a) / np.sqrt(b * b + a * a))).astype(a.dtype)
        return np.arctan2(a, b).astype(a.dtype)


def _complex(a, b):
    """real + i imag, component by component (a + 1j * b would turn 1j * inf into nan + inf j
    and lose the sign of a zero imaginary part)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    out = np.empty(a.shape, C64.dtype if a.dtype == np.float32 else C128.dtype)
    out.real, out.imag = a, b
    return out


def _total_key(x):
    """Map floats to integers whose order is the spec's total order."""
    if not is_float_dtype(x.dtype):
        return x
    nbytes = x.dtype.itemsize
    si = np.dtype(f"i{nbytes}")
    bits = np.asarray(x, order="C").view(si).astype(np.int64)
    mask = (1 << (nbytes * 8 - 1)) - 1
    return np.where(bits < 0, -(bits & mask) - 1, bits)


def _cmp(fn, total=False):
    def f(lhs, rhs, broadcast_dimensions=None, *, result):
        a = expand_operand(lhs, result.dims, broadcast_dimensions if lhs.ndim < len(result.dims) else None)
        b = expand_operand(rhs, result.dims, broadcast_dimensions if rhs.ndim < len(result.dims) else None)
        if total:
            a, b = _total_key(a), _total_key(b)
        with np.errstate(all="ignore"):
            return np.asarray(fn(a, b), dtype=np.bool_)
    return f


def _binary_ref(fn):
    def f(lhs, rhs, broadcast_dimensions=None, *, result):
        a = expand_operand(lhs, result.dims, broadcast_dimensions if lhs.ndim < len(result.dims) else None)
        b = expand_operand(rhs, result.dims, broadcast_dimensions if rhs.ndim < len(result.dims) else None)
        with np.errstate(all="ignore"):
            return np.asarray(fn(np.asarray(a), np.asarray(b)), dtype=result.dtype).reshape(result.dims)
    return f


# ----------------------------------------------------------------------------------------
# binary ops:  seed, allowed operand types, result (None: operand type), reference
# ----------------------------------------------------------------------------------------
BINARY = [
    ("Add", ANY, None, lambda a, b: (a | b) if a.dtype == np.bool_ else a + b),
    ("Sub", NUM, None, lambda a, b: a - b),
    ("Mul", ANY, None, lambda a, b: (a & b) if a.dtype == np.bool_ else a * b),
    ("Div", NUM, None, _div),
    ("Rem", REAL, None, _rem),
    ("Max", ANY, None, _lexi(True)),
    ("Min", ANY, None, _lexi(False)),
    ("LogicalAnd", (PRED,), None, lambda a, b: a & b),
    ("LogicalOr", (PRED,), None, lambda a, b: a | b),
    ("Pow", NUM, None, _pow),
    ("Atan2", FLOAT_CPLX, None, _atan2),
    ("And", INT_PRED, None, lambda a, b: a & b),
    ("Or", INT_PRED, None, lambda a, b: a | b),
    ("Xor", INT_PRED, None, lambda a, b: a ^ b),
    ("ShiftLeft", INTEGERS, None, _shift("left")),
    ("ShiftRightLogical", INTEGERS, None, _shift("logical")),
    ("ShiftRightArithmetic", INTEGERS, None, _shift("arith")),
    ("Complex", (F32, F64), "complex", _complex),
]

COMPARE = [
    ("Eq", ANY, np.equal, False), ("Ne", ANY, np.not_equal, False),
    ("Ge", (PRED,) + REAL, np.greater_equal, False), ("Gt", (PRED,) + REAL, np.greater, False),
    ("Le", (PRED,) + REAL, np.less_equal, False), ("Lt", (PRED,) + REAL, np.less, False),
    ("EqTotalOrder", (PRED,) + REAL, np.equal, True), ("NeTotalOrder", (PRED,) + REAL, np.not_equal, True),
    ("GeTotalOrder", (PRED,) + REAL, np.greater_equal, True), ("GtTotalOrder", (PRED,) + REAL, np.greater, True),
    ("LeTotalOrder", (PRED,) + REAL, np.less_equal, True), ("LtTotalOrder", (PRED,) + REAL, np.less, True),
]


def _binary_cids(seed, section) -> tuple[str, str, str, str]:
    """Ids of (lhs's element type, rhs's, one element type, broadcasting) of a binary seed."""
    n = "compare" if section == SEC_CMP else STABLEHLO[seed]
    return f"{n}_i1", f"{n}_i2", f"{n}_c1", spec_id(section)


def _binary_constraints(seed, types, section) -> dict:
    lt, rt, same, bcast = _binary_cids(seed, section)
    return {lt: f"lhs has a {_words(types)} element type",
            rt: f"rhs has a {_words(types)} element type",
            same: "lhs and rhs have one element type",
            bcast: "lhs and rhs have one shape up to XLA's broadcasting (a scalar, "
                   "broadcast_dimensions, size-1 dimensions)"}


def _binary_infer(seed, types, result_kind, section):
    lt, rt, same, bcast = _binary_cids(seed, section)

    def infer(chk, lhs, rhs, broadcast_dimensions=None):
        chk.element_type("lhs", lhs, types, _words(types), cid=lt)
        chk.element_type("rhs", rhs, types, _words(types), cid=rt)
        chk.same_element_type("lhs", lhs, "rhs", rhs, cid=same)
        dims = broadcast_binary(chk, lhs, rhs, broadcast_dimensions, cid=bcast)
        et = lhs.element_type
        if result_kind == "pred":
            et = PRED
        elif result_kind == "complex":
            et = C64 if et == F32 else C128
        return Shape(et, dims)
    return infer


BIN_PARAMS = (Operand("lhs"), Operand("rhs"), Attr("broadcast_dimensions", Optional(Ints()), None))

for _seed, _types, _res, _fn in BINARY:
    register(OpDef(_seed, BIN_PARAMS, _binary_infer(_seed, _types, _res, SEC_BIN), _binary_ref(_fn),
                   "elementwise", SEC_BIN, dynamic=same_as_operands,
                   doc=f"element-wise {_seed} of two {_words(_types)} arrays",
                   constraints=_binary_constraints(_seed, _types, SEC_BIN)))

for _seed, _types, _fn, _total in COMPARE:
    register(OpDef(_seed, BIN_PARAMS, _binary_infer(_seed, _types, "pred", SEC_CMP), _cmp(_fn, _total),
                   "elementwise", SEC_CMP, dynamic=same_as_operands,
                   doc=f"element-wise {_seed}{' (total order)' if _total else ''}, PRED result",
                   constraints=_binary_constraints(_seed, _types, SEC_CMP)))


# ----------------------------------------------------------------------------------------
# unary ops:  seed, allowed types, result ('same' | 'pred' | 'real'), reference
# ----------------------------------------------------------------------------------------
def _sign(x):
    if x.dtype.kind == "c":
        mag = np.abs(x)
        with np.errstate(all="ignore"):
            return np.where(mag == 0, x, x / np.where(mag == 0, 1, mag)).astype(x.dtype)
    if x.dtype.kind == "u":
        return (x != 0).astype(x.dtype)
    if x.dtype.kind == "i":
        return np.sign(x).astype(x.dtype)
    one = np.ones_like(x)
    return np.where(x > 0, one, np.where(x < 0, -one, x)).astype(x.dtype)


def _round_afz(x):
    t = np.trunc(x)
    frac = np.abs(x - t)
    return np.where(frac >= 0.5, t + np.sign(x), t).astype(x.dtype)


def _popcnt(x):
    return np.bitwise_count(x.astype(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


def _clz(x):
    bits = x.dtype.itemsize * 8
    u = x.astype(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    n = np.full(u.shape, bits, np.int64)
    for i in range(bits):
        n = np.where((u >> np.uint64(i)) & np.uint64(1) == 1, bits - 1 - i, n)
    return n.astype(x.dtype)


def _logistic(x):
    with np.errstate(all="ignore"):
        one = np.ones((), x.dtype)
        return (one / (one + np.exp(-x))).astype(x.dtype)


def _rsqrt(x):
    with np.errstate(all="ignore"):
        return (np.ones((), x.dtype) / np.sqrt(x)).astype(x.dtype)


def _real_part(x):
    return np.real(x).copy() if x.dtype.kind == "c" else x.copy()


def _imag_part(x):
    return np.imag(x).copy() if x.dtype.kind == "c" else np.zeros_like(x)


UNARY = [
    ("Abs", SIGNED + FLOATS + COMPLEX, "real", np.abs),
    ("Ceil", FLOATS, "same", np.ceil),
    ("Floor", FLOATS, "same", np.floor),
    ("Cos", FLOAT_CPLX, "same", np.cos),
    ("Sin", FLOAT_CPLX, "same", np.sin),
    ("Tan", FLOAT_CPLX, "same", np.tan),
    ("Exp", FLOAT_CPLX, "same", np.exp),
    ("Expm1", FLOAT_CPLX, "same", np.expm1),
    ("Log", FLOAT_CPLX, "same", np.log),
    ("Log1p", FLOAT_CPLX, "same", np.log1p),
    ("Logistic", FLOAT_CPLX, "same", _logistic),
    ("Tanh", FLOAT_CPLX, "same", np.tanh),
    ("Sqrt", FLOAT_CPLX, "same", np.sqrt),
    ("Rsqrt", FLOAT_CPLX, "same", _rsqrt),
    ("Cbrt", FLOATS, "same", np.cbrt),
    ("Imag", FLOAT_CPLX, "real", _imag_part),
    ("Real", FLOAT_CPLX, "real", _real_part),
    ("IsFinite", FLOATS, "pred", np.isfinite),
    ("LogicalNot", (PRED,), "same", np.logical_not),
    ("Not", INT_PRED, "same", np.invert),
    ("PopulationCount", INTEGERS, "same", _popcnt),
    ("Clz", INTEGERS, "same", _clz),
    ("Neg", NUM, "same", np.negative),
    ("Sign", SIGNED + UNSIGNED + FLOATS + COMPLEX, "same", _sign),
    ("RoundNearestAfz", FLOATS, "same", _round_afz),
    ("RoundNearestEven", FLOATS, "same", np.rint),
]


def _unary_cid(seed) -> str:
    """The id of a unary seed's one rule (its operand's element type): StableHLO's `<op>_i1`;
    Not and LogicalNot (StableHLO's `not` has no numbered input rule) cite the spec."""
    return f"{STABLEHLO[seed]}_i1" if seed in STABLEHLO else spec_id(SEC_UN)


def _unary_infer(seed, types, result_kind):
    cid = _unary_cid(seed)

    def infer(chk, operand):
        chk.element_type("operand", operand, types, _words(types), cid=cid)
        et = operand.element_type
        if result_kind == "pred":
            et = PRED
        elif result_kind == "real":
            et = et.component
        return operand.with_type(et)
    return infer


def _unary_ref(fn):
    def f(operand, *, result):
        with np.errstate(all="ignore"):
            return np.asarray(fn(np.asarray(operand)), dtype=result.dtype).reshape(result.dims)
    return f


for _seed, _types, _res, _fn in UNARY:
    register(OpDef(_seed, (Operand("operand"),), _unary_infer(_seed, _types, _res), _unary_ref(_fn),
                   "elementwise", SEC_UN, dynamic=same_as_operands,
                   doc=f"element-wise {_seed} of a {_words(_types)} array",
                   constraints={_unary_cid(_seed): f"operand has a {_words(_types)} element type"}))


# ----------------------------------------------------------------------------------------
# Select, Clamp
# ----------------------------------------------------------------------------------------
def _select_infer(chk, pred, on_true, on_false):
    if on_true != on_false:
        chk.fail("on_false", f"must have the shape of on_true ({on_true})", on_false, cid="select_c2")
    if on_true.is_tuple or on_true.is_token:
        chk.scalar("pred", pred, (PRED,), "PRED", cid="spec:Select")
        return on_true
    chk.element_type("pred", pred, (PRED,), "PRED", cid="select_i1")
    if pred.rank != 0 and pred.dims != on_true.dims:
        chk.fail("pred", f"must be a scalar or have the dimensions of on_true ({on_true})", pred,
                 cid="select_c1")
    return on_true


def _select_ref(pred, on_true, on_false, *, result):
    if isinstance(on_true, tuple):
        return on_true if bool(pred) else on_false
    return np.where(pred, on_true, on_false).astype(result.dtype)


register(OpDef("Select", (Operand("pred"), Operand("on_true"), Operand("on_false")),
               _select_infer, _select_ref, "elementwise", "Select", dynamic=same_as_operands,
               constraints={"select_i1": "pred is a PRED array",
                            "select_c1": "pred is a scalar or has the dimensions of on_true",
                            "select_c2": "on_true and on_false have one shape",
                            "spec:Select": "pred selecting between tuples (or tokens) is a PRED scalar"},
               doc="element-wise choice between on_true and on_false by a PRED array or scalar"))


def _clamp_infer(chk, min, operand, max):
    chk.array("operand", operand, cid="clamp_i2")
    for name, s, i, c in (("min", min, "clamp_i1", "clamp_c1"), ("max", max, "clamp_i3", "clamp_c2")):
        chk.array(name, s, cid=i)
        chk.same_element_type("operand", operand, name, s, cid="clamp_c3")
        if s.rank != 0 and s.dims != operand.dims:
            chk.fail(name, f"must be a scalar or have the shape of operand ({operand})", s, cid=c)
    if operand.element_type in COMPLEX:
        chk.fail("operand", "must have an ordered (non-complex) element type", operand, cid="spec:Clamp")
    return operand


def _clamp_ref(min, operand, max, *, result):
    return _lexi(False)(_lexi(True)(np.broadcast_to(min, operand.shape), operand),
                        np.broadcast_to(max, operand.shape)).astype(result.dtype)


register(OpDef("Clamp", (Operand("min"), Operand("operand"), Operand("max")),
               _clamp_infer, _clamp_ref, "elementwise", "Clamp", dynamic=same_as_operands,
               constraints={"clamp_i1": "min is an array", "clamp_i2": "operand is an array",
                            "clamp_i3": "max is an array",
                            "clamp_c1": "min is a scalar or has the shape of operand",
                            "clamp_c2": "max is a scalar or has the shape of operand",
                            "clamp_c3": "min, operand and max have one element type",
                            "spec:Clamp": "operand's element type is ordered (not complex)"},
               doc="min(max(min, operand), max), with scalar min/max allowed"))


# ----------------------------------------------------------------------------------------
# ConvertElementType, BitcastConvertType
# ----------------------------------------------------------------------------------------
def _convert_infer(chk, operand, new_element_type):
    chk.array("operand", operand, cid="convert_i1")
    if operand.element_type.is_complex and not new_element_type.is_complex:
        chk.fail("new_element_type", f"must be complex when operand is complex ({operand}); "
                 "use Real/Imag/Abs", new_element_type, cid="spec:ConvertElementType")
    return operand.with_type(new_element_type)


def is_float_dtype(dt) -> bool:
    return np.dtype(dt).kind == "f" or np.dtype(dt) == BF16.dtype


def convert_value(x: np.ndarray, dst) -> np.ndarray:
    """XLA's element conversion: float->int truncates toward zero and saturates, NaN -> 0."""
    x = np.asarray(x)
    dt = dst.dtype
    if dst.is_pred:
        return x != 0
    if dst.is_integer and is_float_dtype(x.dtype):
        info = np.iinfo(dt)
        f = x.astype(np.float64)
        f = np.trunc(np.where(np.isnan(f), 0.0, f))
        hi, lo = f >= float(info.max), f <= float(info.min)
        out = np.where(hi | lo, 0.0, f).astype(dt)
        out[hi] = info.max
        out[lo] = info.min
        return out
    with np.errstate(all="ignore"):
        if dst == BF16 and x.dtype not in (np.float32, BF16.dtype):
            # XLA reaches BF16 through F32 (as the lowering does: narrow_float): jax.jit on
            # XLA:CPU converts the F64 1 + 2^-8 + 2^-40 to 1.0, rounding twice, where ml_dtypes
            # 0.7 rounds once, to 1.0078125
            x = x.astype(np.float32)
        return x.astype(dt)


def _convert_ref(operand, new_element_type, *, result):
    return convert_value(operand, new_element_type).reshape(result.dims)


register(OpDef("ConvertElementType", (Operand("operand"), Attr("new_element_type", ETypeKind())),
               _convert_infer, _convert_ref, "elementwise", "ConvertElementType", dynamic=same_as_operands,
               constraints={"convert_i1": "operand is an array",
                            "spec:ConvertElementType": "a complex operand converts to a complex type"},
               doc="element-wise static_cast to new_element_type"))


def bitcast_bits(t) -> int:
    """Width of an element for BitcastConvertType: XLA stores PRED in a byte, so it is 8 here."""
    return 8 if t.is_pred else t.bits


def _bitcast_infer(chk, operand, new_element_type):
    chk.array("operand", operand, cid="bitcast_convert_i1")
    src, dst = operand.element_type, new_element_type
    if src.is_complex != dst.is_complex:
        chk.fail("new_element_type", f"must be complex exactly when operand is ({src}): XLA does not "
                 "bitcast between complex and real types", dst, cid="bitcast_convert_c2")
    sb, db = bitcast_bits(src), bitcast_bits(dst)
    if sb == db:
        return operand.with_type(dst)
    if src.is_complex:
        chk.fail("new_element_type", f"must have the width of operand's complex type ({src}); complex "
                 "values bitcast only to complex values of the same width", dst,
                 cid="spec:BitcastConvertType")
    if sb > db:
        return Shape(dst, operand.dims + (sb // db,))
    ratio = db // sb
    if operand.rank == 0 or operand.dims[-1] != ratio:
        chk.fail("operand", f"must have a last dimension of size {ratio} "
                 f"({db}/{sb} bits) to bitcast to {dst}", operand, cid="bitcast_convert_c1")
    return Shape(dst, operand.dims[:-1])


def _bitcast_ref(operand, new_element_type, *, result):
    a = np.asarray(np.asarray(operand), order="C")
    if not a.size:
        return np.zeros(result.dims, result.dtype)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)                      # a PRED byte holds 0 or 1
    if result.element_type.is_pred:
        return a.reshape(-1).view(np.uint8).reshape(result.dims) != 0
    return a.reshape(-1).view(result.dtype).reshape(result.dims).copy()


register(OpDef("BitcastConvertType", (Operand("operand"), Attr("new_element_type", ETypeKind())),
               _bitcast_infer, _bitcast_ref, "elementwise", "BitcastConvertType",
               constraints={"bitcast_convert_i1": "operand is an array",
                            "bitcast_convert_c1": "to a wider type, operand's last dimension is the "
                                                  "ratio of the widths",
                            "bitcast_convert_c2": "operand is complex exactly when the new type is",
                            "spec:BitcastConvertType": "complex bitcasts only to complex of its width"},
               doc="reinterpret bits; differing widths add or remove a minor dimension (PRED is a byte; "
                   "complex only to complex of the same width)"))


# ----------------------------------------------------------------------------------------
# ReducePrecision
# ----------------------------------------------------------------------------------------
SRC_BITS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}   # (exponent, mantissa)


def _rp_infer(chk, operand, exponent_bits, mantissa_bits):
    chk.element_type("operand", operand, FLOATS, "floating-point", cid="reduce_precision_i1")
    if exponent_bits < 1:
        chk.fail("exponent_bits", "must be at least 1 (to tell zero from infinity)", exponent_bits,
                 cid="reduce_precision_c2")
    if mantissa_bits < 0:
        chk.fail("mantissa_bits", "must not be negative", mantissa_bits, cid="reduce_precision_c3")
    return operand


def _rp_ref(operand, exponent_bits, mantissa_bits, *, result):
    """Round to `mantissa_bits` (ties to even), then +-inf above the reduced format's range and
    +-0 below its smallest normal; NaN kept.  Computed exactly in float64."""
    x = np.asarray(operand)
    src_e, src_m = SRC_BITS[result.element_type.name]
    v = x.astype(np.float64)
    out = v.copy()
    finite = np.isfinite(v) & (v != 0)
    if mantissa_bits < src_m:
        # the spacing of values with `mantissa_bits` bits at x's binade (the source format's
        # subnormal spacing below its smallest normal), then round to a multiple: ties to even
        _, e = np.frexp(np.where(finite, v, 1.0))        # |v| in [2**(e-1), 2**e)
        src_emin = 2 - (1 << (src_e - 1))
        quantum = np.ldexp(1.0, np.maximum(e - 1, src_emin) - mantissa_bits)
        out = np.where(finite, np.rint(v / quantum) * quantum, out)
    if exponent_bits < src_e:
        emax = (1 << (exponent_bits - 1)) - 1
        emin = 1 - emax
        mag = np.abs(out)
        big = np.isfinite(out) & (mag >= 2.0 ** (emax + 1))
        small = (mag < 2.0 ** emin) & np.isfinite(out)
        out = np.where(big, np.copysign(np.inf, out), out)
        out = np.where(small, np.copysign(0.0, out), out)
    out = np.where(np.isnan(v), v, out)
    return out.astype(result.dtype)


register(OpDef("ReducePrecision", (Operand("operand"), Attr("exponent_bits", Int()), Attr("mantissa_bits", Int())),
               _rp_infer, _rp_ref, "elementwise", "ReducePrecision", dynamic=same_as_operands,
               constraints={"reduce_precision_i1": "operand has a floating-point element type",
                            "reduce_precision_c2": "1 <= exponent_bits",
                            "reduce_precision_c3": "0 <= mantissa_bits"},
               doc="round to a narrower float format (exponent_bits, mantissa_bits) and back"))
