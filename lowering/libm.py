"""f64 math functions that IREE's CPU backend cannot link (it has no libm for f64 sin, cos,
tan, tanh, cbrt, atan, atan2) or expands without care (expm1 and log1p as exp(x) - 1 and
log(1 + x), which cancel near 0), written as arith code; and F32 sin, cos and tan for targets
whose own are accurate only near 0 (Vulkan).

The pipeline lowers complex arithmetic to real arithmetic first
(`convert-complex-to-standard`), so these patterns also serve c128.  The coefficients are
the Taylor series of sin, cos and atan, truncated where the next term is below 2^-60 on the
reduced interval; the reduction of sin/cos/tan subtracts multiples of pi/2 split in six
parts of 20 bits (Cody and Waite), exact for |x| < 2^33, and beyond reads the bits of 2/pi
it needs from a table (Payne and Hanek), in integers of the argument's width.
"""
from __future__ import annotations

from decimal import Decimal, getcontext
from functools import lru_cache, partial
from math import factorial, frexp

import numpy as np

from xlair.dialect.ir import arith, ir, math, rewrite, scf, tensor

from .registry import float_const as _fc, int_const as _int

CF = arith.CmpFPredicate
CI = arith.CmpIPredicate

getcontext().prec = 60
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628")


def _split(value: Decimal, bits: int, n: int):
    """value = p_1 + ... + p_n, the first n-1 parts of `bits` significant bits (so k * p_i is
    exact for |k| < 2**(53 - bits)), the last the rounded rest."""
    parts, rest = [], value
    for _ in range(n - 1):
        f = float(rest)
        scale = 2.0 ** (bits - frexp(f)[1])
        a = round(f * scale) / scale
        parts.append(a)
        rest -= Decimal(a)
    parts.append(float(rest))
    return parts


PIO2 = _split(_PI / 2, 20, 6)      # exact reduction for |k| < 2**33
REDUCE_LIMIT = 2.0 ** 33           # Payne-Hanek beyond (`payne_hanek`)
TWO_OVER_PI = float(2 / _PI)
PI, PI_2, PI_4 = float(_PI), float(_PI / 2), float(_PI / 4)
TAN_PI_8 = float(Decimal(2).sqrt() - 1)
SIN_C = [(-1) ** n / factorial(2 * n + 1) for n in range(1, 9)]      # x^3 .. x^17
COS_C = [(-1) ** n / factorial(2 * n) for n in range(1, 10)]         # x^2 .. x^18
ATAN_C = [(-1) ** n / (2 * n + 1) for n in range(1, 24)]             # t^3 .. t^47


def _f64():
    return ir.F64Type.get()


def c(v: float) -> ir.Value:
    return _fc(_f64(), v)


def _horner(z, coeffs):
    acc = _fc(z.type, coeffs[-1])
    for k in reversed(coeffs[:-1]):
        acc = arith.addf(_fc(z.type, k), arith.mulf(z, acc))
    return acc


def _sign_bit(x):
    i64 = ir.IntegerType.get_signless(64)
    return arith.cmpi(CI.slt, arith.bitcast(i64, x), arith.constant(i64, ir.IntegerAttr.get(i64, 0)))


def _reduce_pio2(x):
    """(r, q, finite): x = k*pi/2 + r, |r| <= pi/4, q = k mod 4 (i64); Cody-Waite below
    REDUCE_LIMIT, Payne-Hanek above.  Non-finite x give r = 0 and finite false."""
    i64 = ir.IntegerType.get_signless(64)
    ax = math.absf(x)
    finite = arith.cmpf(CF.OLT, ax, c(float("inf")))
    near = arith.cmpf(CF.OLT, ax, c(REDUCE_LIMIT))
    xs = arith.select(near, x, c(0.0))
    k = math.roundeven(arith.mulf(xs, c(TWO_OVER_PI)))
    r = xs
    for part in PIO2:
        r = arith.subf(r, arith.mulf(k, c(part)))
    q = arith.andi(arith.fptosi(i64, k), arith.constant(i64, ir.IntegerAttr.get(i64, 3)))
    # an F16/BF16/F32 argument widened (elementwise._widened) is reduced in 32-bit integers
    owner = x.owner.operation if isinstance(x, ir.OpResult) else None
    narrow = owner.operands[0] if owner is not None and owner.name == "arith.extf" else None
    if narrow is not None and narrow.type.width < 32:
        narrow = arith.extf(ir.F32Type.get(), narrow)
    if narrow is not None:
        far_r, far_q = payne_hanek(arith.select(finite, narrow, _fc(narrow.type, 0.0)), x.type)
        far_q = arith.extui(i64, far_q)
    else:
        far_r, far_q = payne_hanek(arith.select(finite, x, c(0.0)))
    return arith.select(near, r, far_r), arith.select(near, q, far_q), finite


# ----------------------------------------------------------------------------------------
# Payne-Hanek reduction: x * 2/pi mod 4 in integers, for any finite F32 or F64 x
# ----------------------------------------------------------------------------------------
def _two_over_pi(bits: int) -> int:
    """floor(2/pi * 2^bits), from pi by Machin's formula in integers (64 guard bits)."""
    g = bits + 64
    one = 1 << g

    def arccot(k):            # arccot(k) * 2^g, the alternating series in 1/k
        total = term = one // k
        n, sign = 1, -1
        while term:
            term //= k * k
            n += 2
            total += sign * (term // n)
            sign = -sign
        return total
    pi = 4 * (4 * arccot(5) - arccot(239))
    return (1 << (bits + 1 + g)) // pi


#: per float width w: (mantissa bits, exponent bias).  The table is 2/pi's bits after its
#: point, w zero bits first, in words of w bits: the 3w-bit window the reduction reads starts
#: at the bit of 2/pi whose product with x's lowest bit is worth 2 (earlier bits give
#: multiples of 4), the table's bit e - bias - mbits - 2 + w for x's biased exponent e.
_PH = {32: (23, 127), 64: (52, 1023)}


def _first_bit_offset(w: int) -> int:
    """e minus the table's bit where x's window starts (e x's biased exponent)."""
    mbits, bias = _PH[w]
    return bias + mbits + 2 - w


def _last_word(w: int) -> int:
    """The word of the table where the largest finite x's window starts."""
    return (2 * _PH[w][1] - _first_bit_offset(w)) // w


@lru_cache(maxsize=None)
def _pio2_table(w: int) -> tuple[int, ...]:
    count = _last_word(w) + 4                 # the window's 3 words and the next (its shift)
    n = _two_over_pi(w * (count - 1))
    mask = (1 << w) - 1
    return tuple((n >> (w * (count - 1 - k))) & mask for k in range(count))


#: a table read at at most this many places (indices k) is read by selects, a longer one by
#: tensor.extract (a gather).  Measured (Xeon, AVX-512), sin of f32[4M] on the CPU: 4.75 ms
#: without Payne-Hanek; F32's 5 places: 11.3 ms by gathers, 7.5-8.5 by selects; F64's 17
#: places: 15.3 ms by gathers, 16.0 by selects (bench/NOTES.md section 41)
SELECT_PLACES = 8


def _table_words(words: tuple[int, ...], k, n: int, k_max: int) -> list:
    """[words[k], ..., words[k + n - 1]] for an index value k in [0, k_max] of the words'
    integer type, from a constant table."""
    it = k.type
    if k_max < SELECT_PLACES:
        at = [arith.cmpi(CI.eq, k, _int(it, j)) for j in range(1, k_max + 1)]
        out = []
        for i in range(n):
            v = _int(it, words[i])
            for j, here in enumerate(at, 1):
                v = arith.select(here, _int(it, words[j + i]), v)
            out.append(v)
        return out
    table_t = ir.RankedTensorType.get([len(words)], it)
    table = arith.constant(table_t, ir.DenseElementsAttr.get(
        np.array(words, dtype=f"uint{it.width}").view(f"int{it.width}"), type=table_t))
    return [tensor.extract(table, [arith.index_cast(ir.IndexType.get(), arith.addi(k, _int(it, i)))])
            for i in range(n)]


def _mul_high(a, b):
    """The high word of the 2w-bit product of the unsigned w-bit integers a and b, from their
    w/2-bit halves' four products in w bits (no wider type: GPUs have no 128-bit integers).
    (arith.mului_extended, which IREE's CPU code generation lowers only on 1-D vectors:
    "failed to legalize operation 'arith.mului_extended' that was explicitly marked illegal"
    on vector<1x16xi32>, the sin of a broadcast product.)"""
    it = a.type
    h = it.width // 2
    k = partial(_int, it)
    mask, sh = k((1 << h) - 1), k(h)
    a0, a1, b0, b1 = arith.andi(a, mask), arith.shrui(a, sh), arith.andi(b, mask), arith.shrui(b, sh)
    p01, p10 = arith.muli(a0, b1), arith.muli(a1, b0)
    mid = arith.addi(arith.addi(arith.shrui(arith.muli(a0, b0), sh), arith.andi(p01, mask)), arith.andi(p10, mask))
    return arith.addi(arith.addi(arith.muli(a1, b1), arith.shrui(p01, sh)),
                      arith.addi(arith.shrui(p10, sh), arith.shrui(mid, sh)))


def payne_hanek(x, rt=None):
    """(r, q) for a finite F32 or F64 x: x = k pi/2 + r, |r| <= pi/4, q = k mod 4, in the
    float's own integer width w (no wider type: GPUs have no 128-bit integers).

    `rt`: the float type of r (an F64 r of an F32 x: the F64 functions of a widened F32).
    x = m 2^E (m the integer mantissa).  The window W of 3w bits of 2/pi read at bit E - 1
    (`_table_word` of a constant table: one word and the next, shifted) gives
    x 2/pi = m W 2^(2-3w) mod 4 up to 2^-(3w-2-mantissa): m W mod 2^3w from the products
    m w0 (its low word), m w1 and m w2 (_mul_high), whose top two bits are q and the rest
    the signed fraction f in [-1/2, 1/2) after rounding to the nearest k.  f is read as a
    float sum of three pieces (the first two exact, summed exactly), then times pi/2 in two
    parts.  About 2w - 2 - mantissa significant bits are left where x is nearest a multiple of
    pi/2 (F64's worst case loses about 61 bits of the 126 here)."""
    ft = x.type
    w = ft.width
    mbits, bias = _PH[w]
    rt = rt or ft
    it = ir.IntegerType.get_signless(w)

    k, fc = partial(_int, it), partial(_fc, ft)
    bits = arith.bitcast(it, math.absf(x))
    e = arith.shrui(bits, k(mbits))
    m = arith.ori(arith.andi(bits, k((1 << mbits) - 1)), k(1 << mbits))
    # the window's first bit in the table, at least 0 (smaller x, whose result the caller does
    # not take, read the first words)
    p = arith.maxsi(arith.subi(e, k(_first_bit_offset(w))), k(0))
    word = arith.shrui(p, k(w.bit_length() - 1))
    sh = arith.andi(p, k(w - 1))
    t = _table_words(_pio2_table(w), word, 4, _last_word(w))
    back = arith.subi(k(w - 1), sh)              # the next word's bits: >> 1 >> (w - 1 - sh)
    win = [arith.ori(arith.shli(t[i], sh), arith.shrui(arith.shrui(t[i + 1], k(1)), back)) for i in range(3)]
    lo0 = arith.muli(m, win[0])
    lo1, hi1 = arith.muli(m, win[1]), _mul_high(m, win[1])
    hi2 = _mul_high(m, win[2])
    p1 = arith.addi(hi2, lo1)
    carry = arith.extui(it, arith.cmpi(CI.ult, p1, hi2))
    p2 = arith.addi(arith.addi(hi1, lo0), carry)
    f_hi = arith.ori(arith.shli(p2, k(2)), arith.shrui(p1, k(w - 2)))
    f_lo = arith.shli(p1, k(2))
    q = arith.andi(arith.addi(arith.shrui(p2, k(w - 2)), arith.shrui(f_hi, k(w - 1))), k(3))
    # |f| in integers (a negative f read in pieces would cancel its leading ones in floats)
    below = arith.cmpi(CI.slt, f_hi, k(0))
    f_lo_neg = arith.subi(k(0), f_lo)
    f_hi_neg = arith.addi(arith.xori(f_hi, k(-1)), arith.extui(it, arith.cmpi(CI.eq, f_lo, k(0))))
    f_hi = arith.select(below, f_hi_neg, f_hi)
    f_lo = arith.select(below, f_lo_neg, f_lo)
    half = w // 2
    rc = partial(_fc, rt)
    a = arith.mulf(arith.uitofp(rt, arith.shrui(f_hi, k(half))), rc(2.0 ** -half))
    b = arith.mulf(arith.uitofp(rt, arith.andi(f_hi, k((1 << half) - 1))), rc(2.0 ** -w))
    hi, lo = _two_sum(a, b)
    lo = arith.addf(lo, arith.mulf(arith.uitofp(rt, f_lo), rc(2.0 ** (-2 * w))))
    p_hi, p_lo = _split(_PI / 2, _PH[rt.width][0] + 1, 2)
    r = arith.addf(arith.mulf(hi, rc(p_hi)), arith.addf(arith.mulf(hi, rc(p_lo)), arith.mulf(lo, rc(p_hi))))
    neg = arith.cmpf(CF.OLT, x, fc(0.0))
    r = arith.select(arith.xori(neg, below), arith.negf(r), r)
    q = arith.select(neg, arith.andi(arith.subi(k(0), q), k(3)), q)
    return r, q


def _sin_cos_kernel(r):
    """(sin r, cos r) for |r| <= pi/4 by their Taylor series, in r's type (F32: to r^13 and
    r^12, the next terms below 2^-28 of the result)."""
    ft = r.type
    n_sin, n_cos = (len(SIN_C), len(COS_C)) if ft.width == 64 else (6, 6)
    z = arith.mulf(r, r)
    s = arith.addf(r, arith.mulf(arith.mulf(r, z), _horner(z, SIN_C[:n_sin])))
    co = arith.addf(_fc(ft, 1.0), arith.mulf(z, _horner(z, COS_C[:n_cos])))
    return s, co


def _q_is(q, v):
    return arith.cmpi(CI.eq, q, _int(q.type, v))


def _by_quadrant(name: str, x, s, co, q, finite):
    """sin, cos or tan of x = k pi/2 + r from s = sin r, co = cos r and q = k mod 4; NaN
    where x is not finite, and sin/tan keep the sign of a zero x."""
    ft = x.type

    fc = partial(_fc, ft)
    if name == "sin":
        v = arith.select(_q_is(q, 0), s, arith.select(_q_is(q, 1), co,
                         arith.select(_q_is(q, 2), arith.negf(s), arith.negf(co))))
    elif name == "cos":
        v = arith.select(_q_is(q, 0), co, arith.select(_q_is(q, 1), arith.negf(s),
                         arith.select(_q_is(q, 2), arith.negf(co), s)))
    else:
        odd = _q_is(arith.andi(q, _int(q.type, 1)), 1)
        v = arith.select(odd, arith.negf(arith.divf(co, s)), arith.divf(s, co))
    if name != "cos":
        v = arith.select(arith.cmpf(CF.OEQ, x, fc(0.0)), x, v)
    return arith.select(finite, v, fc(float("nan")))


def _f64_trig(name):
    def emit(x):
        r, q, finite = _reduce_pio2(x)
        s, co = _sin_cos_kernel(r)
        return _by_quadrant(name, x, s, co, q, finite)
    emit.__name__ = name
    return emit


sin, cos, tan = _f64_trig("sin"), _f64_trig("cos"), _f64_trig("tan")


#: the F16 / BF16 / F32 sin, cos and tan whose argument xlair reduces first
#: (TargetDescription.reduce_trig)
_REDUCED = {"math.sin": "sin", "math.cos": "cos", "math.tan": "tan"}


def reduce_trig_arguments(module) -> None:
    """Every F16, BF16 and F32 math.sin, math.cos and math.tan of the module as sin and cos of
    the argument reduced to [-pi/4, pi/4] by `payne_hanek`, by their series, in F32.  Vulkan's
    SPIR-V Sin and Cos need only be accurate on [-pi, pi]: lavapipe's sin(5e8) was 8.1e8,
    sin(6e30) -inf, and F16 sin(-34080) 0 (-0.0029)."""
    found = []

    def visit(op):
        if op.name in _REDUCED and str(op.results[0].type) in ("f32", "f16", "bf16"):
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    for op in found:
        x = op.operands[0]
        ft = ir.F32Type.get()
        with ir.InsertionPoint(op), op.location:
            narrow = x.type
            if str(narrow) != "f32":          # F16 / BF16: in F32, rounded once
                x = arith.extf(ft, x)
            fc = partial(_fc, ft)
            ax = math.absf(x)
            finite = arith.cmpf(CF.OLT, ax, fc(float("inf")))
            near = arith.cmpf(CF.OLE, ax, fc(PI_4))
            r, q = payne_hanek(arith.select(finite, x, fc(0.0)))
            r = arith.select(near, x, r)
            q = arith.select(near, _int(q.type, 0), q)
            v = _by_quadrant(_REDUCED[op.name], x, *_sin_cos_kernel(r), q, finite)
            if str(narrow) != "f32":
                v = arith.truncf(narrow, v)
        op.results[0].replace_all_uses_with(v)
        op.erase()


def tanh(x):
    a = math.absf(x)
    t = math.expm1(arith.mulf(c(2.0), a))
    v = arith.divf(t, arith.addf(t, c(2.0)))
    v = arith.select(arith.cmpf(CF.OGT, a, c(22.0)), c(1.0), v)
    return math.copysign(v, x)


EXPM1_C = [1.0 / factorial(k) for k in range(2, 18)]    # x^2/2! .. x^17/17!: below 2^-60 for |x| <= ln2/2
LN2_2 = 0.34657359027997264


def expm1(x):
    """exp(x) - 1 without cancellation: the Taylor series for |x| <= ln2/2, else Kahan's
    (u - 1) * x / log(u) with u = exp(x) (log(u) rounds the same way as u - 1)."""
    small = arith.cmpf(CF.OLE, math.absf(x), c(LN2_2))
    series = arith.addf(x, arith.mulf(arith.mulf(x, x), _horner(x, EXPM1_C)))
    u = math.exp(x)
    um1 = arith.subf(u, c(1.0))
    kahan = arith.mulf(um1, arith.divf(x, math.log(u)))                       # ratio first: no overflow
    big = arith.select(arith.cmpf(CF.OEQ, u, c(float("inf"))), u, kahan)      # overflow: inf
    big = arith.select(arith.cmpf(CF.OEQ, um1, c(-1.0)), um1, big)              # exp underflow: -1
    v = arith.select(small, series, big)
    v = arith.select(arith.cmpf(CF.OEQ, x, c(0.0)), x, v)                       # keep the sign of zero
    return arith.select(arith.cmpf(CF.UNO, x, x), x, v)


def log1p(x):
    """log(1 + x) without cancellation: Kahan's log(u) * x / (u - 1) with u = 1 + x."""
    u = arith.addf(c(1.0), x)
    v = arith.mulf(math.log(u), arith.divf(x, arith.subf(u, c(1.0))))       # ratio first: no overflow
    exact = arith.ori(arith.cmpf(CF.OEQ, u, c(1.0)), arith.cmpf(CF.OEQ, x, c(0.0)))   # tiny x, +-0
    v = arith.select(exact, x, v)
    edge = arith.ori(arith.cmpf(CF.OEQ, u, c(float("inf"))), arith.cmpf(CF.OLE, u, c(0.0)))
    v = arith.select(edge, math.log(u), v)                  # x = inf, x = -1 (-inf), x < -1 (NaN)
    return arith.select(arith.cmpf(CF.UNO, x, x), x, v)


LN2_HI = 6.93147180369123816490e-01     # 32 significant bits: k * LN2_HI is exact for |k| < 2^21
LN2_LO = 1.90821492927058770002e-10
SQRT2 = 1.4142135623730951
ATANH_C = [2.0 / (2 * n + 1) for n in range(1, 14)]     # 2 atanh(s) = 2s + sum 2 s^(2n+1) / (2n+1)


def _i64c(v: int) -> ir.Value:
    return _int(ir.IntegerType.get_signless(64), v)


def _two_sum(a, b):
    hi = arith.addf(a, b)
    bb = arith.subf(hi, a)
    return hi, arith.addf(arith.subf(a, arith.subf(hi, bb)), arith.subf(b, bb))


def log_dd(x):
    """log(x) for a positive normal x as hi + lo, about 2^-100 relative: x = m 2^k with m in
    [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1) carried with its error."""
    i64 = ir.IntegerType.get_signless(64)
    bits = arith.bitcast(i64, x)
    k = arith.subi(arith.andi(arith.shrui(bits, _i64c(52)), _i64c(0x7FF)), _i64c(1023))
    m = arith.bitcast(_f64(), arith.ori(arith.andi(bits, _i64c((1 << 52) - 1)), _i64c(0x3FF << 52)))
    big = arith.cmpf(CF.OGT, m, c(SQRT2))
    m = arith.select(big, arith.mulf(m, c(0.5)), m)
    k = arith.select(big, arith.addi(k, _i64c(1)), k)
    kf = arith.sitofp(_f64(), k)
    f = arith.subf(m, c(1.0))                                   # exact
    u_hi = arith.addf(c(2.0), f)
    u_lo = arith.subf(f, arith.subf(u_hi, c(2.0)))              # exact (|2| >= |f|)
    s = arith.divf(f, u_hi)
    r = arith.subf(math.fma(arith.negf(s), u_hi, f), arith.mulf(s, u_lo))
    s_lo = arith.divf(r, u_hi)
    z = arith.mulf(s, s)
    tail = arith.mulf(arith.mulf(s, z), _horner(z, ATANH_C))
    # the tail's slope times s_lo (the tail is taken at s alone): d/ds 2 atanh(s) - 2 = 2 s^2 / (1 - s^2)
    tail = arith.addf(tail, arith.divf(arith.mulf(arith.mulf(c(2.0), z), s_lo), arith.subf(c(1.0), z)))
    hi, lo = _two_sum(arith.mulf(kf, c(LN2_HI)), arith.mulf(c(2.0), s))
    lo = arith.addf(lo, arith.addf(arith.addf(arith.mulf(kf, c(LN2_LO)), arith.mulf(c(2.0), s_lo)), tail))
    l_hi = arith.addf(hi, lo)
    return l_hi, arith.subf(lo, arith.subf(l_hi, hi))


def _dd_mul(a, b):
    (ah, al), (bh, bl) = a, b
    p = arith.mulf(ah, bh)
    e = arith.addf(math.fma(ah, bh, arith.negf(p)), arith.addf(arith.mulf(ah, bl), arith.mulf(al, bh)))
    hi = arith.addf(p, e)
    return hi, arith.subf(e, arith.subf(hi, p))


POW_INT_BITS = 11       # integral exponents up to 2^11 - 1 by binary powering in double-double


def _pow_int(x, y):
    """x^y for an integral |y| < 2^POW_INT_BITS: binary powering in double-double (rounded once)."""
    i64 = ir.IntegerType.get_signless(64)
    n = arith.fptosi(i64, math.absf(y))
    acc, base = (c(1.0), c(0.0)), (x, c(0.0))
    for i in range(POW_INT_BITS):
        bit = arith.cmpi(CI.ne, arith.andi(arith.shrui(n, _i64c(i)), _i64c(1)), _i64c(0))
        prod = _dd_mul(acc, base)
        acc = (arith.select(bit, prod[0], acc[0]), arith.select(bit, prod[1], acc[1]))
        if i + 1 < POW_INT_BITS:
            base = _dd_mul(base, base)
    hi, lo = acc
    pos = arith.addf(hi, lo)
    q = arith.divf(c(1.0), hi)                                  # 1 / (hi + lo), one Newton step
    r = arith.subf(math.fma(arith.negf(q), hi, c(1.0)), arith.mulf(q, lo))
    neg = math.fma(q, r, q)
    v = arith.select(arith.cmpf(CF.OLT, y, c(0.0)), neg, pos)
    ok = arith.andi(arith.cmpf(CF.OLT, math.absf(hi), c(float("inf"))), arith.cmpf(CF.ONE, hi, c(0.0)))
    ok = arith.andi(ok, arith.cmpf(CF.OLT, math.absf(v), c(float("inf"))))
    return v, ok


def pow_positive(x, y):
    """x^y for a positive normal x.  Integral |y| < 2048: binary powering in double-double
    (10000^10 is 1e40 exactly); otherwise exp(y log x) with log x and the product carried in
    double-double, so only exp's own rounding remains (math.powf's exp(y log x) in plain f64
    loses |y log x| ulps)."""
    l_hi, l_lo = log_dd(x)
    t_hi = arith.mulf(y, l_hi)
    t_lo = arith.addf(math.fma(y, l_hi, arith.negf(t_hi)), arith.mulf(y, l_lo))
    e = math.exp(t_hi)
    r = math.fma(e, t_lo, e)
    finite = arith.cmpf(CF.OLT, math.absf(e), c(float("inf")))
    r = arith.select(finite, r, e)                               # overflow: inf (not inf * 0)
    integral = arith.andi(arith.cmpf(CF.OEQ, math.floor(y), y),
                          arith.cmpf(CF.OLT, math.absf(y), c(float(1 << POW_INT_BITS))))
    yi = arith.select(integral, y, c(0.0))
    v, ok = _pow_int(x, yi)
    return arith.select(arith.andi(integral, ok), v, r)


def cbrt(x):
    a = math.absf(x)
    y = math.powf(a, c(1.0 / 3.0))
    y3 = arith.mulf(arith.mulf(y, y), y)
    y = arith.subf(y, arith.divf(arith.subf(y3, a), arith.mulf(c(3.0), arith.mulf(y, y))))
    special = arith.ori(arith.cmpf(CF.OEQ, a, c(0.0)), arith.cmpf(CF.UEQ, a, c(float("inf"))))
    y = arith.select(special, a, y)
    return math.copysign(y, x)


def _atan_pos(a):
    """atan(a) for a >= 0 (or NaN)."""
    big = arith.cmpf(CF.OGT, a, c(1.0))
    b = arith.select(big, arith.divf(c(1.0), a), a)
    mid = arith.cmpf(CF.OGT, b, c(TAN_PI_8))
    t = arith.select(mid, arith.divf(arith.subf(b, c(1.0)), arith.addf(b, c(1.0))), b)
    z = arith.mulf(t, t)
    at = arith.addf(t, arith.mulf(arith.mulf(t, z), _horner(z, ATAN_C)))
    at = arith.select(mid, arith.addf(c(PI_4), at), at)
    return arith.select(big, arith.subf(c(PI_2), at), at)


def atan(x):
    return math.copysign(_atan_pos(math.absf(x)), x)


def atan2(y, x):
    ay, ax = math.absf(y), math.absf(x)
    t = _atan_pos(arith.divf(ay, ax))
    both_zero = arith.andi(arith.cmpf(CF.OEQ, ay, c(0.0)), arith.cmpf(CF.OEQ, ax, c(0.0)))
    t = arith.select(both_zero, c(0.0), t)
    inf = c(float("inf"))
    both_inf = arith.andi(arith.cmpf(CF.OEQ, ay, inf), arith.cmpf(CF.OEQ, ax, inf))
    t = arith.select(both_inf, c(PI_4), t)
    t = arith.select(_sign_bit(x), arith.subf(c(PI), t), t)
    return math.copysign(t, y)


def while_loop(inits, cond, body):
    """scf.while: `cond(*vals) -> i1` and `body(*vals) -> vals`; returns the final values."""
    types = [v.type for v in inits]
    w = scf.WhileOp(types, list(inits))
    before = w.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        scf.ConditionOp(cond(*before.arguments), list(before.arguments))
    after = w.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.YieldOp(list(body(*after.arguments)))
    return list(w.results)


def fmod(x, y):
    """Exact fmod: subtract ay * 2^k (largest first); each subtraction is exact (Sterbenz)."""
    ax, ay = math.absf(x), math.absf(y)
    inf = c(float("inf"))
    bad = arith.ori(arith.ori(arith.cmpf(CF.UEQ, ay, c(0.0)), arith.cmpf(CF.UEQ, ax, inf)),
                    arith.cmpf(CF.UNO, x, y))
    trivial = arith.ori(bad, arith.cmpf(CF.OLT, ax, ay))        # also y = inf
    r0 = arith.select(trivial, c(0.0), ax)
    d0 = arith.select(trivial, c(1.0), ay)
    half = c(0.5)
    (d,) = while_loop([d0], lambda d: arith.cmpf(CF.OLE, d, arith.mulf(r0, half)),
                      lambda d: [arith.mulf(d, c(2.0))])
    r, _ = while_loop([r0, d], lambda r, d: arith.cmpf(CF.OGE, d, d0),
                      lambda r, d: [arith.select(arith.cmpf(CF.OGE, r, d), arith.subf(r, d), r),
                                    arith.mulf(d, half)])
    r = arith.select(trivial, ax, r)
    r = math.copysign(r, x)
    return arith.select(bad, c(float("nan")), r)


F64_MATH = {"arith.remf": fmod, "math.sin": sin, "math.cos": cos, "math.tan": tan, "math.tanh": tanh,
            "math.cbrt": cbrt, "math.atan": atan, "math.atan2": atan2, "math.expm1": expm1,
            "math.log1p": log1p}


def _pattern(fn):
    def rewrite_op(op, rewriter):
        op = op.operation
        if str(op.results[0].type) != "f64":
            return True
        with rewriter.ip, op.location:
            v = fn(*op.operands)
        rewriter.replace_op(op, [v])
        return False
    return rewrite_op


def f64_patterns() -> rewrite.FrozenRewritePatternSet:
    ps = rewrite.RewritePatternSet()
    for name, fn in F64_MATH.items():
        ps.add(name, _pattern(fn))
    return ps.freeze()
