"""Lowering of element-wise ops: one scalar emitter per op (a table, like the records),
wrapped in one linalg.generic whose indexing maps carry the op's broadcasting, so chains
of element-wise ops fuse in IREE."""
from __future__ import annotations

import numpy as np

from xlair.dialect.ir import arith, complex_d, ir, linalg, math, scf
from xlair.dialect.types import F32, F64, S32, ElementType, Shape

import xlair.dialect.ops  # noqa: F401  (the records this file lowers)

from .registry import affine_map, empty, generic, int_const, lowers, options, scalar_const, value_of
from .scalar import SCALAR

CF = arith.CmpFPredicate
CI = arith.CmpIPredicate


# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------
def _c(et: ElementType, v) -> ir.Value:
    return scalar_const(et, v)


def _cmpi(pred, a, b): return arith.cmpi(pred, a, b)


def _cmpf(pred, a, b): return arith.cmpf(pred, a, b)


def _re(x): return complex_d.re(x)


def _im(x): return complex_d.im(x)


def _mk_complex(et: ElementType, re, im):
    return complex_d.create_(et.builtin_type(), re, im)


def v(fn):
    """An emitter from a function of the operand values alone."""
    return lambda args, in_types, out: fn(*args)


def _by_kind(float_fn=None, sint_fn=None, uint_fn=None, complex_fn=None, pred_fn=None):
    """An emitter dispatching on the kind of the first operand's element type; each entry is
    an emitter `(args, in_types, out) -> value`."""
    table = {"float": float_fn, "sint": sint_fn, "uint": uint_fn, "complex": complex_fn,
             "pred": pred_fn}

    def emit(args, in_types, out):
        fn = table[in_types[0].kind]
        if fn is None:   # excluded by the op's shape rule
            raise AssertionError(f"no {in_types[0].kind} emitter")
        return fn(args, in_types, out)
    return emit


# ----------------------------------------------------------------------------------------
# binary arithmetic
# ----------------------------------------------------------------------------------------
SCALAR["xla.add"] = _by_kind(v(arith.addf), v(arith.addi), v(arith.addi), v(complex_d.add), v(arith.ori))
SCALAR["xla.sub"] = _by_kind(v(arith.subf), v(arith.subi), v(arith.subi), v(complex_d.sub))
SCALAR["xla.mul"] = _by_kind(v(arith.mulf), v(arith.muli), v(arith.muli), v(complex_d.mul), v(arith.andi))
SCALAR["xla.logical_and"] = SCALAR["xla.and"] = v(arith.andi)
SCALAR["xla.logical_or"] = SCALAR["xla.or"] = v(arith.ori)
SCALAR["xla.xor"] = v(arith.xori)
def _complex_atan2(y, x):
    """XLA's complex atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2))."""
    from xlair.dialect.types import C64, C128
    et = C128 if "f64" in str(y.type) else C64
    num = complex_d.add(x, complex_d.mul(_c(et, 1j), y))
    den = complex_d.sqrt(complex_d.add(complex_d.mul(x, x), complex_d.mul(y, y)))
    return complex_d.mul(_c(et, -1j), complex_d.log(complex_d.div(num, den)))


SCALAR["xla.complex"] = lambda args, it, out: _mk_complex(out, args[0], args[1])


def _int_div_rem(args, in_types, out, rem: bool):
    a, b = args
    et = in_types[0]
    zero, one = _c(et, 0), _c(et, 1)
    b_zero = _cmpi(CI.eq, b, zero)
    if et.is_signed:
        overflow = arith.andi(_cmpi(CI.eq, a, _c(et, -(1 << (et.bits - 1)))), _cmpi(CI.eq, b, _c(et, -1)))
        safe = arith.select(arith.ori(b_zero, overflow), one, b)
        r = arith.remsi(a, safe) if rem else arith.divsi(a, safe)   # MIN/1 = MIN, MIN%1 = 0
    else:
        safe = arith.select(b_zero, one, b)
        r = arith.remui(a, safe) if rem else arith.divui(a, safe)
    return arith.select(b_zero, a if rem else _c(et, -1), r)


def _int_div(args, in_types, out): return _int_div_rem(args, in_types, out, False)


def _int_rem(args, in_types, out): return _int_div_rem(args, in_types, out, True)


SCALAR["xla.div"] = _by_kind(v(arith.divf), _int_div, _int_div, v(complex_d.div))
SCALAR["xla.rem"] = _by_kind(v(arith.remf), _int_rem, _int_rem)


def _complex_minmax(pick_max):
    def emit(args, in_types, out):
        a, b = args
        ar, ai, br, bi = _re(a), _im(a), _re(b), _im(b)
        gt = arith.ori(_cmpf(CF.OGT, ar, br), arith.andi(_cmpf(CF.OEQ, ar, br), _cmpf(CF.OGT, ai, bi)))
        lt = arith.ori(_cmpf(CF.OLT, ar, br), arith.andi(_cmpf(CF.OEQ, ar, br), _cmpf(CF.OLT, ai, bi)))
        r = arith.select(gt if pick_max else lt, a, b)
        nan = arith.ori(_cmpf(CF.UNO, ar, ai), _cmpf(CF.UNO, br, bi))
        return arith.select(nan, _c(out, complex("nan+nanj")), r)
    return emit


SCALAR["xla.max"] = _by_kind(v(arith.maximumf), v(arith.maxsi), v(arith.maxui), _complex_minmax(True), v(arith.ori))
SCALAR["xla.min"] = _by_kind(v(arith.minimumf), v(arith.minsi), v(arith.minui), _complex_minmax(False), v(arith.andi))


def _int_pow(args, in_types, out):
    """Square-and-multiply over the exponent's bits (a loop of `bits` trips)."""
    a, b = args
    et = in_types[0]
    idx = ir.IndexType.get()
    lb, ub, step = (arith.constant(idx, ir.IntegerAttr.get(idx, v)) for v in (0, et.bits, 1))
    one = _c(et, 1)
    e0 = arith.select(_cmpi(CI.slt, b, _c(et, 0)), _c(et, 0), b) if et.is_signed else b
    loop = scf.ForOp(lb, ub, step, [one, a, e0])
    with ir.InsertionPoint(loop.body):
        acc, base, e = loop.inner_iter_args
        odd = _cmpi(CI.eq, arith.andi(e, one), one)
        acc2 = arith.select(odd, arith.muli(acc, base), acc)
        scf.YieldOp([acc2, arith.muli(base, base), arith.shrui(e, one)])
    r = loop.results[0]
    if et.is_signed:
        neg_one = _c(et, -1)
        even = _cmpi(CI.eq, arith.andi(b, one), _c(et, 0))
        at_neg = arith.select(_cmpi(CI.eq, a, one), one,
                              arith.select(_cmpi(CI.eq, a, neg_one),
                                           arith.select(even, one, neg_one), _c(et, 0)))
        r = arith.select(_cmpi(CI.slt, b, _c(et, 0)), at_neg, r)
    return r


def _float_pow(args, in_types, out):
    """C's pow.  math.powf is only trusted on a non-negative base (IREE expands it as
    exp(y log x)): the sign of a negative base comes back for odd integer exponents, a finite
    negative base with a non-integer exponent gives NaN, pow(x, +-0) = 1 (NaN x too),
    pow(1, y) = 1 (NaN y too) and pow(-1, +-inf) = 1.  On the CPU, F16/BF16/F32 are computed
    in F64 (then rounded once: 5^2 = 25, not 25.000002); elsewhere in F32 (GPUs may lack F64)."""
    x, y = args
    et = in_types[0]
    w = F64 if et == F64 or options().desc.wide_math else F32
    if et != w:
        x, y = arith.extf(w.builtin_type(), x), arith.extf(w.builtin_type(), y)
    one, zero = _c(w, 1.0), _c(w, 0.0)
    ax = math.absf(x)
    if w == F64 and options().desc.wide_math:
        from .libm import pow_positive              # exp(y log x) in double-double
        inf = _c(w, float("inf"))
        normal = arith.andi(arith.andi(_cmpf(CF.OGE, ax, _c(w, 2.2250738585072014e-308)), _cmpf(CF.OLT, ax, inf)),
                            _cmpf(CF.OLT, math.absf(y), inf))
        safe = arith.select(normal, ax, one)
        y_safe = arith.select(normal, y, one)
        r = arith.select(normal, pow_positive(safe, y_safe), math.powf(ax, y))   # 0, inf, NaN: powf's rules
    else:
        r = math.powf(ax, y)
    integral = _cmpf(CF.OEQ, math.floor(y), y)                  # false for NaN, true for +-inf
    half = arith.mulf(y, _c(w, 0.5))
    odd = arith.andi(integral, _cmpf(CF.ONE, math.floor(half), half))
    negative = _cmpf(CF.OLT, math.copysign(one, x), zero)        # -0 included
    r = arith.select(arith.andi(negative, odd), arith.negf(r), r)
    finite_neg = arith.andi(_cmpf(CF.OLT, x, zero), _cmpf(CF.ONE, ax, _c(w, float("inf"))))
    not_integral = arith.xori(integral, arith.constant(ir.IntegerType.get_signless(1), 1))
    r = arith.select(arith.andi(finite_neg, not_integral), _c(w, float("nan")), r)
    inf_y = _cmpf(CF.OEQ, math.absf(y), _c(w, float("inf")))
    r = arith.select(arith.andi(_cmpf(CF.OEQ, ax, one), inf_y), one, r)
    r = arith.select(_cmpf(CF.OEQ, x, one), one, r)
    r = arith.select(_cmpf(CF.OEQ, y, zero), one, r)
    return r if et == w else narrow_float(r, et.builtin_type())




def _shift(kind):
    def emit(args, in_types, out):
        a, b = args
        et = in_types[0]
        big = _cmpi(CI.uge, b, _c(et, et.bits))
        if kind == "arith":
            return arith.shrsi(a, arith.select(big, _c(et, et.bits - 1), b))
        amount = arith.select(big, _c(et, 0), b)
        r = arith.shli(a, amount) if kind == "left" else arith.shrui(a, amount)
        return arith.select(big, _c(et, 0), r)
    return emit


SCALAR["xla.shift_left"] = _shift("left")
SCALAR["xla.shift_right_logical"] = _shift("logical")
SCALAR["xla.shift_right_arithmetic"] = _shift("arith")


# ----------------------------------------------------------------------------------------
# comparisons
# ----------------------------------------------------------------------------------------
_FPRED = {"eq": CF.OEQ, "ne": CF.UNE, "ge": CF.OGE, "gt": CF.OGT, "le": CF.OLE, "lt": CF.OLT}
_SPRED = {"eq": CI.eq, "ne": CI.ne, "ge": CI.sge, "gt": CI.sgt, "le": CI.sle, "lt": CI.slt}
_UPRED = {"eq": CI.eq, "ne": CI.ne, "ge": CI.uge, "gt": CI.ugt, "le": CI.ule, "lt": CI.ult}


def _total_key(x, et: ElementType):
    """Signed integer whose order is the spec's total order of floats."""
    it = ir.IntegerType.get_signless(et.bits)
    bits = arith.bitcast(it, x)
    sign = arith.shrsi(bits, arith.constant(it, ir.IntegerAttr.get(it, et.bits - 1)))
    mag = arith.constant(it, ir.IntegerAttr.get(it, (1 << (et.bits - 1)) - 1))
    return arith.xori(bits, arith.andi(sign, mag))


def _compare(direction, total):
    def emit(args, in_types, out):
        a, b = args
        et = in_types[0]
        if et.is_complex:
            return complex_d.eq(a, b) if direction == "eq" else complex_d.neq(a, b)
        if et.is_float:
            if total:
                return _cmpi(_SPRED[direction], _total_key(a, et), _total_key(b, et))
            return _cmpf(_FPRED[direction], a, b)
        preds = _SPRED if et.is_signed else _UPRED
        return _cmpi(preds[direction], a, b)
    return emit


for _d in ("eq", "ne", "ge", "gt", "le", "lt"):
    SCALAR[f"xla.{_d}"] = _compare(_d, False)
    SCALAR[f"xla.{_d}_total_order"] = _compare(_d, True)


# ----------------------------------------------------------------------------------------
# unary
# ----------------------------------------------------------------------------------------
def _float_or_complex(fop, cop, wide_float=False):
    return _by_kind(float_fn=_widened(fop) if wide_float else v(fop), complex_fn=_widened_complex(cop))


def _widened(fop):
    """A float emitter that computes F16/BF16/F32 in F64 on the CPU and rounds once.  IREE's
    F32 approximations of sin, cos, tan, tanh, cbrt and atan2 are off by up to millions of ULP
    (sin of large or tiny arguments); the F64 ones (lowering/libm.py) are within 3 ULP."""
    def emit(args, in_types, out):
        et = in_types[0]
        if et == F64 or not options().desc.wide_math:
            return fop(*args)
        w = F64.builtin_type()
        return narrow_float(fop(*[arith.extf(w, a) for a in args]), out.builtin_type())
    return emit


def _widened_complex(cop):
    """A complex emitter that computes C64 in C128 on the CPU and rounds once (the complex
    functions expand to the real ones above)."""
    def emit(args, in_types, out):
        et = in_types[0]
        if et.name == "c128" or not options().desc.wide_math:
            return cop(*args)
        from xlair.dialect.types import C64, C128
        w = F64.builtin_type()
        wide = [_mk_complex(C128, arith.extf(w, _re(a)), arith.extf(w, _im(a))) for a in args]
        r = cop(*wide)
        if out.is_complex:
            return _mk_complex(C64, arith.truncf(F32.builtin_type(), _re(r)), arith.truncf(F32.builtin_type(), _im(r)))
        return narrow_float(r, out.builtin_type())
    return emit


SCALAR["xla.pow"] = _by_kind(_float_pow, _int_pow, _int_pow, _widened_complex(complex_d.pow))
SCALAR["xla.atan2"] = _by_kind(_widened(math.atan2), complex_fn=_widened_complex(_complex_atan2))

def _nan_through(fop):
    """fop with a NaN operand passed through.  IREE expands F16/F32 math.exp and math.expm1
    into code whose constant folding turns NaN into 0 or inf (exp of a constant NaN was inf,
    tanh and logistic of one 0 or 1: found by the StableHLO conformance suite); at run time
    the same code gave NaN.  The select keeps folding and run time alike."""
    def emit(x):
        return arith.select(arith.cmpf(CF.UNO, x, x), x, fop(x))
    return emit


#: e^r = 1 + r + c2 r^2 + ... + c6 r^6 on |r| <= ln 2 / 2, F32 coefficients fitted here
#: (Lawson's iteration on a least-squares fit): relative error 3.8e-9 (bench/NOTES.md section 27)
_EXP_P = (1.0, 1.0, 0.4999999403953552, 0.1666652113199234, 0.04166838899254799,
          0.008368716575205326, 0.001381459878757596)
#: ln 2 = _LN2_HI + _LN2_LO; _LN2_HI has 16 significant bits, so n * _LN2_HI is exact for
#: every |n| < 2^8 the clamp allows
_LN2_HI, _LN2_LO = 0.693145751953125, 1.428606820309417232e-06
_SHIFTER = 12582912.0           # 1.5 * 2^23: x + it rounds x to an integer in the low bits
_EXP_LO, _EXP_HI = -110.0, 89.0  # exp is 0 below (subnormal results flushed or rounded), inf above


def _exp_f32(x):
    """F32 exp within 1 ULP, in F32 arithmetic (checked on every F32 in [-110, 89]): n =
    round(x / ln 2) by the shifter's rounding, r = x - n ln 2 in two FMAs (ln 2 in two parts),
    a degree-6 polynomial, and the scale 2^n applied as two powers of two, 2^(n >> 1) and
    2^(n - (n >> 1)), so that every n of the clamped range is exact (to inf above, to subnormal
    or 0 below) without a select.  The clamp passes NaN through (a compare with NaN is false).
    IREE's expansion of math.exp took 30 vector instructions an element and two clamps plus a
    select for NaN: 0.25 ms for f32[512,1024] in AVX2 code against XLA:CPU's 0.17-0.21."""
    def c(val): return _c(F32, val)

    def ic(val): return _c(S32, val)
    x = arith.select(arith.cmpf(CF.OLT, x, c(_EXP_LO)), c(_EXP_LO), x)
    x = arith.select(arith.cmpf(CF.OGT, x, c(_EXP_HI)), c(_EXP_HI), x)
    t = math.fma(x, c(1.4426950408889634), c(_SHIFTER))
    nf = arith.subf(t, c(_SHIFTER))
    r = math.fma(nf, c(-_LN2_LO), math.fma(nf, c(-_LN2_HI), x))
    p = c(_EXP_P[-1])
    for k in reversed(_EXP_P[:-1]):
        p = math.fma(p, r, c(k))
    n = arith.subi(arith.bitcast(S32.builtin_type(), t), ic(0x4B400000))   # the bits of 1.5 * 2^23
    half = arith.shrsi(n, ic(1))

    def two_to(e):
        return arith.bitcast(F32.builtin_type(), arith.shli(arith.addi(e, ic(127)), ic(23)))
    return arith.mulf(arith.mulf(p, two_to(half)), two_to(arith.subi(n, half)))


_math_exp = _nan_through(math.exp)


def _exp(x):
    """exp of a float value: F32 on the CPU by `_exp_f32`, the rest by math.exp."""
    if options().desc.wide_math and x.type == F32.builtin_type():
        return _exp_f32(x)
    return _math_exp(x)


for _name, _f, _cx, _wide in (("cos", math.cos, complex_d.cos, True), ("sin", math.sin, complex_d.sin, True),
                              ("tan", math.tan, complex_d.tan, True), ("exp", _exp, complex_d.exp, False),
                              ("expm1", _nan_through(math.expm1), complex_d.expm1, False), ("log", math.log, complex_d.log, False),
                              ("log1p", math.log1p, complex_d.log1p, False),
                              ("tanh", math.tanh, complex_d.tanh, True),
                              ("sqrt", math.sqrt, complex_d.sqrt, False), ("rsqrt", math.rsqrt, complex_d.rsqrt, False)):
    SCALAR[f"xla.{_name}"] = _float_or_complex(_f, _cx, _wide)

#: tanh(a) = a + a z P(z), z = a^2, on [0, 0.625]: a least-squares fit of relative error
#: 1.1e-9 (bench/NOTES.md)
_TANH_P = (-0.3333333240310655, 0.1333326794122221, -0.053954572836953575, 0.02174360792959791,
           -0.008284050311142706, 0.0022412362729909555)


def _tanh_f32(x):
    """F32 tanh within 1 ULP, in F32 (checked exhaustively on [0.5, 10) and on 4e8 samples of
    the rest): the odd polynomial above below 0.625, 1 - 2 / (exp(2a) + 1) up to 9.5, then
    1; the sign copied back.  The F64 route of `_widened` cost 10x more: the element-wise
    benchmark tanh(a*b+c)*exp(-a) on f32[4M] took 100-220 ms instead of 13-16 ms."""
    def c(val): return _c(F32, val)
    a = math.absf(x)
    z = arith.mulf(a, a)
    p = c(_TANH_P[-1])
    for k in reversed(_TANH_P[:-1]):
        p = arith.addf(arith.mulf(p, z), c(k))
    small = arith.addf(a, arith.mulf(arith.mulf(a, z), p))
    big = arith.subf(c(1.0), arith.divf(c(2.0), arith.addf(_exp(arith.mulf(a, c(2.0))), c(1.0))))
    t = arith.select(arith.cmpf(CF.OLT, a, c(0.625)), small, big)
    t = arith.select(arith.cmpf(CF.OGT, a, c(9.5)), c(1.0), t)        # NaN falls through both
    return math.copysign(t, x)


def _tanh(args, in_types, out):
    if in_types[0] == F32 and options().desc.wide_math:
        return _tanh_f32(args[0])
    return _widened(math.tanh)(args, in_types, out)


SCALAR["xla.tanh"] = _by_kind(float_fn=_tanh, complex_fn=_widened_complex(complex_d.tanh))

def _round_to_int(fop, up: bool):
    """ceil / floor, exact on subnormal operands too: IREE's CPU runtime flushes subnormal
    inputs to zero (FTZ/DAZ), which would make ceil(2^-149) 0 instead of 1.  A subnormal is
    recognised from its bits (zero exponent, nonzero fraction): ceil gives 1 or -0, floor
    +0 or -1."""
    def emit(args, in_types, out):
        x = args[0]
        et = in_types[0]
        it = ir.IntegerType.get_signless(et.bits)
        mant = {16: 10, 32: 23, 64: 52}[et.bits] if et.name != "bf16" else 7

        def ic(val):
            return int_const(it, val)
        bits = arith.bitcast(it, x)
        exp_mask = ((1 << (et.bits - 1)) - 1) & ~((1 << mant) - 1)
        frac_mask = (1 << mant) - 1
        sub = arith.andi(_cmpi(CI.eq, arith.andi(bits, ic(exp_mask)), ic(0)),
                         _cmpi(CI.ne, arith.andi(bits, ic(frac_mask)), ic(0)))
        neg = _cmpi(CI.slt, bits, ic(0))
        if up:
            tiny = arith.select(neg, _c(et, -0.0), _c(et, 1.0))
        else:
            tiny = arith.select(neg, _c(et, -1.0), _c(et, 0.0))
        return arith.select(sub, tiny, fop(x))
    return emit


SCALAR["xla.ceil"] = _round_to_int(math.ceil, True)
SCALAR["xla.floor"] = _round_to_int(math.floor, False)
SCALAR["xla.cbrt"] = _widened(math.cbrt)
SCALAR["xla.round_nearest_afz"] = v(math.round)
SCALAR["xla.round_nearest_even"] = v(math.roundeven)
SCALAR["xla.abs"] = _by_kind(v(math.absf), v(math.absi), None, v(complex_d.abs))
SCALAR["xla.real"] = _by_kind(float_fn=v(lambda x: x), complex_fn=v(_re))
SCALAR["xla.imag"] = _by_kind(float_fn=lambda a, i, o: _c(o, 0), complex_fn=v(_im))
SCALAR["xla.is_finite"] = lambda args, it, out: _cmpf(CF.ONE, math.absf(args[0]), _c(it[0], float("inf")))
SCALAR["xla.logical_not"] = lambda args, it, out: arith.xori(args[0], _c(it[0], 1))
SCALAR["xla.not"] = lambda args, it, out: arith.xori(args[0], _c(it[0], -1 if not it[0].is_pred else 1))
SCALAR["xla.population_count"] = lambda args, it, out: math.ctpop(args[0])
SCALAR["xla.clz"] = lambda args, it, out: math.ctlz(args[0])
def _ineg(args, in_types, out): return arith.subi(_c(in_types[0], 0), args[0])


SCALAR["xla.neg"] = _by_kind(v(arith.negf), _ineg, _ineg, v(complex_d.neg))


def _logistic(args, in_types, out):
    x = args[0]
    et = in_types[0]
    one = _c(et, 1)
    if et.is_complex:
        return complex_d.div(one, complex_d.add(one, complex_d.exp(complex_d.neg(x))))
    return arith.divf(one, arith.addf(one, _exp(arith.negf(x))))


SCALAR["xla.logistic"] = _logistic


def _sign(args, in_types, out):
    x = args[0]
    et = in_types[0]
    if et.is_complex:
        return complex_d.sign(x)
    if et.is_float:
        nonzero = _cmpf(CF.ONE, x, _c(et, 0))   # false for +-0 and NaN, which are kept
        return arith.select(nonzero, math.copysign(_c(et, 1), x), x)
    zero, one = _c(et, 0), _c(et, 1)
    if et.is_unsigned:
        return arith.select(_cmpi(CI.ne, x, zero), one, zero)
    return arith.select(_cmpi(CI.sgt, x, zero), one,
                        arith.select(_cmpi(CI.slt, x, zero), _c(et, -1), zero))


SCALAR["xla.sign"] = _sign


# ----------------------------------------------------------------------------------------
# select, clamp, conversions
# ----------------------------------------------------------------------------------------
SCALAR["xla.select"] = lambda args, it, out: arith.select(*args)


def _clamp(args, in_types, out):
    lo, x, hi = args
    t = in_types[1]
    return SCALAR["xla.min"]([SCALAR["xla.max"]([lo, x], [t, t], t), hi], [t, t], t)


SCALAR["xla.clamp"] = _clamp


def convert_tensor(x: ir.Value, s: Shape, et: ElementType) -> ir.Value:
    """The tensor x (of shape s) converted element by element to `et` as ConvertElementType
    converts (convert_scalar); x itself when it has that type already."""
    if s.element_type == et:
        return x
    n = s.rank
    ident = affine_map(n, list(range(n)))
    return generic([x], [ident], [empty(s.with_type(et))], [ident], ["parallel"] * n,
                   lambda a, _o: convert_scalar(a, s.element_type, et))[0]


def _f32_to_bf16(x: ir.Value) -> ir.Value:
    """An F32 rounded to BF16 (to nearest, ties to even) with integer ops on its bits, as XLA
    rounds: LLVM's own f32 -> bf16 is a call to compiler-rt's __truncsfbf2 on CPUs without
    AVX512-BF16, which IREE's embedded linker does not have, and AVX512-BF16's instruction
    treats subnormal inputs as zero.  Subnormals round like normals (the two formats share the
    exponent), a carry out of the mantissa reaches the next binade or infinity, and a NaN keeps
    its sign and top payload bits and becomes quiet."""
    i32, i16 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(16)
    bits = arith.bitcast(i32, x)
    c16 = _c(S32, 16)
    odd = arith.andi(arith.shrui(bits, c16), _c(S32, 1))
    rounded = arith.shrui(arith.addi(bits, arith.addi(_c(S32, 0x7FFF), odd)), c16)
    quiet_nan = arith.ori(arith.shrui(bits, c16), _c(S32, 0x40))
    r = arith.select(_cmpf(CF.UNO, x, x), quiet_nan, rounded)
    return arith.bitcast(ir.BF16Type.get(), arith.trunci(i16, r))


def _f64_to_f32_odd(x: ir.Value) -> ir.Value:
    """An F64 rounded to F32 to odd (toward zero, the last bit set when inexact), so that a
    second rounding to F16 gives the F64's own correctly rounded F16.  Without AVX512-FP16,
    IREE converts F64 to F16 through F32 with two roundings to nearest: 1 + 2^-11 + 2^-40 gave
    1.0 instead of 1.0009766 (numpy's, and an AVX512-FP16 machine's)."""
    i32 = ir.IntegerType.get_signless(32)
    y = arith.truncf(F32.builtin_type(), x)
    back = arith.extf(x.type, y)
    bits = arith.bitcast(i32, y)
    away = _cmpf(CF.OGT, math.absf(back), math.absf(x))       # rounded away from zero: step back
    toward_zero = arith.select(away, arith.subi(bits, _c(S32, 1)), bits)
    odd = arith.ori(toward_zero, _c(S32, 1))
    return arith.bitcast(F32.builtin_type(), arith.select(_cmpf(CF.UNE, back, x), odd, bits))


def narrow_float(x: ir.Value, t: ir.Type) -> ir.Value:
    """A float value rounded to the float type `t`, no wider than its own (ConvertElementType's
    rounding); x itself when it has that type.  BF16 is reached through F32, as XLA converts (an
    F64 is rounded to F32 first), then rounded with integer ops (_f32_to_bf16); the other types
    with arith.truncf, an F64 going to F16 by way of an F32 rounded to odd (_f64_to_f32_odd)."""
    if x.type == t:
        return x
    if t == ir.F16Type.get() and x.type == F64.builtin_type():
        return arith.truncf(t, _f64_to_f32_odd(x))
    if t != ir.BF16Type.get():
        return arith.truncf(t, x)
    f32 = F32.builtin_type()
    if x.type != f32:
        x = arith.truncf(f32, x) if ir.FloatType(x.type).width > 32 else arith.extf(f32, x)
    return _f32_to_bf16(x)


def convert_scalar(x: ir.Value, src: ElementType, dst: ElementType) -> ir.Value:
    """XLA's ConvertElementType of one element (float->int saturates, NaN -> 0)."""
    if src == dst or (src.builtin == dst.builtin and src.kind in ("sint", "uint") and dst.kind in ("sint", "uint")):
        return x
    dt = dst.builtin_type()
    if dst.is_pred:
        if src.is_complex:
            return arith.ori(convert_scalar(_re(x), src.component, dst), convert_scalar(_im(x), src.component, dst))
        if src.is_float:
            return _cmpf(CF.UNE, x, _c(src, 0))
        return _cmpi(CI.ne, x, _c(src, 0))
    if dst.is_complex:
        comp = dst.component
        if src.is_complex:
            return _mk_complex(dst, convert_scalar(_re(x), src.component, comp),
                               convert_scalar(_im(x), src.component, comp))
        return _mk_complex(dst, convert_scalar(x, src, comp), _c(comp, 0))
    if src.is_pred and dst.is_integer:
        return arith.extui(dt, x)
    if src.is_integer and dst.is_integer:
        if dst.bits > src.bits:
            return arith.extsi(dt, x) if src.is_signed else arith.extui(dt, x)
        return arith.trunci(dt, x) if dst.bits < src.bits else x
    if dst.name == "bf16" and not src.is_float:   # PRED or integer: to F32, then rounded
        return narrow_float(convert_scalar(x, src, F32), dt)
    if src.is_integer or src.is_pred:
        return arith.sitofp(dt, x) if src.is_signed else arith.uitofp(dt, x)
    if src.is_float and dst.is_float:
        if src.bits == dst.bits:  # f16 <-> bf16
            return narrow_float(arith.extf(F32.builtin_type(), x), dt)
        return arith.extf(dt, x) if dst.bits > src.bits else narrow_float(x, dt)
    # float -> integer: truncate toward zero, saturate, NaN -> 0
    if dst.is_signed:
        lo_v, hi_v = -float(2 ** (dst.bits - 1)), float(2 ** (dst.bits - 1))
        lo_i, hi_i = -(1 << (dst.bits - 1)), (1 << (dst.bits - 1)) - 1
    else:
        lo_v, hi_v, lo_i, hi_i = 0.0, float(2 ** dst.bits), 0, (1 << dst.bits) - 1
    with np.errstate(over="ignore"):
        hi_c = float(np.asarray(hi_v).astype(src.dtype))   # +inf where the type cannot hold it
    hi = _cmpf(CF.OGE, x, _c(src, hi_c))
    lo = _cmpf(CF.OLE, x, _c(src, lo_v))
    nan = _cmpf(CF.UNO, x, x)
    safe = arith.select(arith.ori(arith.ori(hi, lo), nan), _c(src, 0), x)
    r = arith.fptosi(dt, safe) if dst.is_signed else arith.fptoui(dt, safe)
    return arith.select(hi, _c(dst, hi_i), arith.select(lo, _c(dst, lo_i), r))


SCALAR["xla.convert_element_type"] = lambda args, it, out: convert_scalar(args[0], it[0], out)


def _pred_byte(v):
    """A PRED as the byte XLA stores it in (0 or 1)."""
    return arith.extui(ir.IntegerType.get_signless(8), v)


def _byte_pred(v):
    """A byte read as a PRED: nonzero is true."""
    return _cmpi(CI.ne, v, arith.constant(v.type, ir.IntegerAttr.get(v.type, 0)))


def _bitcast_same(args, in_types, out):
    x = args[0]
    src = in_types[0]
    if src.builtin == out.builtin:
        return x
    if src.is_pred:
        x = _pred_byte(x)
    if out.is_pred:
        return _byte_pred(x)                  # the 8-bit types are integers
    return x if x.type == out.builtin_type() else arith.bitcast(out.builtin_type(), x)


SCALAR["xla.bitcast_convert_type"] = _bitcast_same


# ----------------------------------------------------------------------------------------
# the tensor pattern: one linalg.generic per element-wise op
# ----------------------------------------------------------------------------------------
def operand_map(shape: Shape, out_dims, broadcast_dimensions) -> ir.AffineMap:
    """Indexing map of an operand broadcast to the result (mirrors common.expand_operand)."""
    n = len(out_dims)
    if shape.rank == 0:
        return affine_map(n, [])
    if shape.rank == n:       # broadcast_dimensions name the lower-rank operand's dimensions
        dims = list(range(n))
    else:
        dims = list(broadcast_dimensions)
    return affine_map(n, [None if shape.dims[i] == 1 and out_dims[d] != 1 else d
                          for i, d in enumerate(dims)])


def lower_elementwise(lw):
    name = lw.op.name
    emit = SCALAR[name]
    operands = [p.name for p in lw.opdef.operand_params]
    shapes = [lw.shape(n) for n in operands]
    values = [lw.value(n) for n in operands]
    out = lw.result_shape
    bd = lw.args.get("broadcast_dimensions")
    maps = [operand_map(s, out.dims, bd) for s in shapes]
    ident = affine_map(out.rank, list(range(out.rank)))
    in_types = [s.element_type for s in shapes]
    extra = (lw.args,) if getattr(emit, "attrs", False) else ()
    return generic(values, maps, [empty(out)], [ident], ["parallel"] * out.rank,
                   lambda *a: emit(list(a[:-1]), in_types, out.element_type, *extra))[0]


def _register_elementwise():
    from xlair.dialect.core import REGISTRY
    for d in REGISTRY.values():
        if d.family == "elementwise" and d.mlir_name in SCALAR and d.name not in (
                "bitcast_convert_type", "select"):
            lowers(d.mlir_name)(lower_elementwise)


_register_elementwise()


@lowers("xla.select")
def lower_select(lw):
    """Select of arrays is element-wise; Select of tuples (scalar pred) selects each leaf."""
    if not lw.result_shape.is_tuple:
        return lower_elementwise(lw)
    pred, on_true, on_false = (lw.args[n] for n in ("pred", "on_true", "on_false"))
    return _select_tree(pred, on_true, on_false, lw.result_shape)


def _select_tree(pred, a, b, shape):
    if not shape.is_tuple:
        return ir.Operation.create("xla.select", results=[shape.to_mlir()], operands=[pred, a, b]).result
    i64 = ir.IntegerType.get_signless(64)
    parts = []
    for i, s in enumerate(shape.tuple_shapes):
        idx = {"index": ir.IntegerAttr.get(i64, i)}
        ga, gb = (ir.Operation.create("xla.get_tuple_element", results=[s.to_mlir()], operands=[v],
                                      attributes=idx).result for v in (a, b))
        parts.append(_select_tree(pred, ga, gb, s))
    return ir.Operation.create("xla.tuple", results=[shape.to_mlir()], operands=parts).result


@lowers("xla.bitcast_convert_type")
def lower_bitcast(lw):
    src = lw.shape("operand")
    out = lw.result_shape
    x = lw.value("operand")
    s, d = src.element_type, out.element_type
    from xlair.dialect.ops.elementwise import bitcast_bits
    sb, db = bitcast_bits(s), bitcast_bits(d)
    if sb == db:
        return lower_elementwise(lw)
    wide_t = ir.IntegerType.get_signless(max(sb, db))
    narrow_t = ir.IntegerType.get_signless(min(sb, db))
    narrow_bits = min(sb, db)
    idx_t = ir.IndexType.get()
    if sb > db:
        # one input element -> `ratio` output elements along a new minor dimension
        n = out.rank
        in_map = affine_map(n, list(range(n - 1)))

        def body(v, _o):
            bits = v if s.is_integer else arith.bitcast(wide_t, v)
            k = arith.index_cast(wide_t, linalg.IndexOp(n - 1).result)
            sh = arith.muli(k, arith.constant(wide_t, ir.IntegerAttr.get(wide_t, narrow_bits)))
            part = arith.trunci(narrow_t, arith.shrui(bits, sh))
            if d.is_pred:
                return _byte_pred(part)
            return part if d.is_integer else arith.bitcast(d.builtin_type(), part)
        return generic([x], [in_map], [empty(out)], [affine_map(n, list(range(n)))],
                       ["parallel"] * n, body)[0]
    # `ratio` input elements along the minor dimension -> one output element
    n = src.rank
    acc_shape = Shape(out.element_type, out.dims)
    zero = arith.constant(wide_t, ir.IntegerAttr.get(wide_t, 0))
    init = value_of(linalg.fill(zero, outs=[empty(ir.RankedTensorType.get(list(out.dims), wide_t))]))

    def body(v, acc):
        bits = _pred_byte(v) if s.is_pred else v if s.is_integer else arith.bitcast(narrow_t, v)
        k = arith.index_cast(wide_t, linalg.IndexOp(n - 1).result)
        sh = arith.muli(k, arith.constant(wide_t, ir.IntegerAttr.get(wide_t, narrow_bits)))
        return arith.ori(acc, arith.shli(arith.extui(wide_t, bits), sh))
    packed = generic([x], [affine_map(n, list(range(n)))], [init], [affine_map(n, list(range(n - 1)))],
                     ["parallel"] * (n - 1) + ["reduction"], body)[0]
    if d.is_integer:
        return packed
    return generic([packed], [affine_map(n - 1, list(range(n - 1)))], [empty(acc_shape)],
                   [affine_map(n - 1, list(range(n - 1)))], ["parallel"] * (n - 1),
                   lambda v, _o: arith.bitcast(d.builtin_type(), v))[0]


def _reduce_precision(args, in_types, out, attrs):
    """XLA's bit-level ReducePrecision: round the mantissa to nearest even at the kept bit,
    then +-inf above the reduced exponent range and +-0 below it; NaN kept."""
    from xlair.dialect.ops.elementwise import SRC_BITS
    x = args[0]
    et = in_types[0]
    e_bits, m_bits = attrs["exponent_bits"], attrs["mantissa_bits"]
    src_e, src_m = SRC_BITS[et.name]
    it = ir.IntegerType.get_signless(et.bits)

    def c(v):
        return int_const(it, v)
    bits = arith.bitcast(it, x)
    if m_bits < src_m:
        shift = src_m - m_bits
        last = 1 << shift
        bias = arith.addi(arith.andi(arith.shrui(bits, c(shift)), c(1)), c((last >> 1) - 1))
        bits = arith.andi(arith.addi(bits, bias), c(~(last - 1) & ((1 << et.bits) - 1)))
    if e_bits < src_e:
        exp_mask = ((1 << src_e) - 1) << src_m
        sign_mask = 1 << (et.bits - 1)
        src_bias = (1 << (src_e - 1)) - 1
        red_bias = (1 << (e_bits - 1)) - 1
        exp = arith.andi(bits, c(exp_mask))
        over = arith.cmpi(CI.ugt, exp, c((src_bias + red_bias) << src_m))
        under = arith.cmpi(CI.ule, exp, c((src_bias - red_bias) << src_m))
        signed_zero = arith.andi(bits, c(sign_mask))
        signed_inf = arith.ori(signed_zero, c(exp_mask))
        bits = arith.select(over, signed_inf, arith.select(under, signed_zero, bits))
    r = arith.bitcast(et.builtin_type(), bits)
    return arith.select(_cmpf(CF.UNO, x, x), x, r)


_reduce_precision.attrs = True       # the emitter reads the op's attributes
SCALAR["xla.reduce_precision"] = _reduce_precision
lowers("xla.reduce_precision")(lower_elementwise)
