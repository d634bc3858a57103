"""Regression tests of op bugs found by the StableHLO conformance suites (docs/conformance.md),
each against values derived by hand or from C's / numpy's definitions."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import xlair as xla
from xlair import ops


def _unary_comp(fn, shape):
    b = xla.Builder("f")
    p = b.parameter(0, shape)
    fn(b, p)
    return b.build()


def test_bf16_constants_keep_inf_nan_and_subnormals(target, covers):
    """A bf16 literal printed with hex elements (0x7F80) was read back as f32 bit patterns."""
    covers.add(target, "xla.constant")
    vals = np.array([0.1, np.inf, -np.inf, 9.18355e-41, -0.0, 3.140625], ml_dtypes.bfloat16)
    b = xla.Builder("c")
    ops.constant(b, vals)
    ops.constant(b, np.array(np.inf, ml_dtypes.bfloat16))
    c1 = b.build()
    b = xla.Builder("c")
    ops.tuple(b, [ops.constant(b, vals), ops.constant(b, np.full(3, np.nan, ml_dtypes.bfloat16))])
    comp = b.build()
    for got in (xla.interpret(comp), xla.compile(comp, target=target)()):
        np.testing.assert_array_equal(got[0].view(np.uint16), vals.view(np.uint16))
        assert np.isnan(got[1].astype(np.float32)).all()
    assert xla.interpret(c1) == np.inf and xla.compile(c1, target=target)() == np.inf


def test_complex_keeps_infinite_and_signed_zero_parts(target, covers):
    """complex(re, im) must not compute re + 1j * im (1j * inf is nan + inf j)."""
    covers.add(target, "xla.complex")
    re = np.array([1.0, np.nan, -0.0, np.inf], np.float32)
    im = np.array([np.inf, -0.0, 2.5, np.nan], np.float32)
    b = xla.Builder("c")
    ops.complex(b.parameter(0, xla.Shape(xla.F32, (4,))), b.parameter(1, xla.Shape(xla.F32, (4,))))
    comp = b.build()
    for got in (xla.interpret(comp, re, im), xla.compile(comp, target=target)(re, im)):
        np.testing.assert_array_equal(got.real.view(np.uint32), re.view(np.uint32))
        np.testing.assert_array_equal(got.imag.view(np.uint32), im.view(np.uint32))


def test_pow_follows_c_on_negative_bases_and_special_values(target, covers):
    """Pow lowered to math.powf gave NaN for a negative base with an integer exponent
    ((-2)^2) and NaN for pow(-1, inf), pow(1, nan); C's pow (and XLA's) is the reference."""
    covers.add(target, "xla.pow")
    vals = [-np.inf, -3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.inf, np.nan, 2.5, -2.5]
    pairs = np.array(list(itertools.product(vals, vals)))
    for dt, et in ((np.float32, xla.F32), (np.float64, xla.F64)):
        if dt == np.float64 and target != "cpu":
            continue                        # no f64 pow on GPUs (xlair.targets.LIMITATIONS)
        a, e = pairs[:, 0].astype(dt), pairs[:, 1].astype(dt)
        b = xla.Builder("pow")
        ops.pow(b.parameter(0, xla.Shape(et, a.shape)), b.parameter(1, xla.Shape(et, a.shape)))
        comp = b.build()
        got = xla.compile(comp, target=target)(a, e)
        with np.errstate(all="ignore"):
            want = np.power(a.astype(np.float64), e.astype(np.float64)).astype(dt)   # rounded once
        both_nan = np.isnan(got) & np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        # f32 on the CPU is computed in f64 and rounded once; f64 within 2 ULP (exact for
        # integral exponents: double-double powering)
        rtol = (0 if dt == np.float32 else 4.5e-16) if target == "cpu" else 1e-6
        np.testing.assert_allclose(np.where(both_nan, 0, got), np.where(both_nan, 0, want), rtol=rtol, atol=0)
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))
    if target != "cpu":
        return
    b = xla.Builder("pow32")
    ops.pow(b.parameter(0, xla.Shape(xla.F32, (4,))), b.parameter(1, xla.Shape(xla.F32, (4,))))
    got = xla.compile(b.build(), target=target)(np.array([-2, -2, 5, -8], np.float32),
                                                np.array([2, 3, 2, -1], np.float32))
    np.testing.assert_array_equal(got, np.array([4, -8, 25, -0.125], np.float32))   # exact, not 25.000002
    b = xla.Builder("pow64")
    ops.pow(b.parameter(0, xla.Shape(xla.F64, (3,))), b.parameter(1, xla.Shape(xla.F64, (3,))))
    got = xla.compile(b.build(), target=target)(np.array([10000.0, 10.0, 0.1]), np.array([10.0, -22.0, 2.0]))
    np.testing.assert_array_equal(got, [1e40, 1e-22, 0.1 * 0.1])      # correctly rounded (StableHLO's test)


def test_bitcast_convert_type_of_pred_and_complex_as_xla(target, covers):
    """XLA stores PRED in a byte and bitcasts complex values to complex values of the same
    width; xla.bitcast_convert_type rejected both (JAX emits identity bitcasts of them)."""
    covers.add(target, "xla.bitcast_convert_type")
    cases = [
        (np.array([True, False, True]), xla.U8, np.array([1, 0, 1], np.uint8)),
        (np.array([0, 1, 2], np.int8), xla.PRED, np.array([False, True, True])),
        (np.array([[1, 0, 0, 0, 0, 0, 0, 1], [0] * 8], bool), xla.S64, np.array([1 + 2 ** 56, 0], np.int64)),
        (np.array([1 + 2j, -0.5j], np.complex64), xla.C64, np.array([1 + 2j, -0.5j], np.complex64)),
    ]
    for x, et, want in cases:
        b = xla.Builder("bitcast")
        ops.bitcast_convert_type(b.parameter(0, xla.Shape(x.dtype, x.shape)), et)
        comp = b.build()
        for got in (xla.interpret(comp, x), xla.compile(comp, target=target)(x)):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


def test_complex_atan2_as_xla(target, covers):
    """XLA's Atan2 takes complex operands (-i log((x + i y) / sqrt(x^2 + y^2))); xla.atan2 took
    floats only.  Expected values: XLA:CPU (jax 0.10.2) on the same inputs."""
    covers.add(target, "xla.atan2")
    for dt, et in ((np.complex64, xla.C64), (np.complex128, xla.C128)):
        if dt == np.complex128 and target != "cpu":
            continue
        y = np.array([1 + 1j, 2 + 0j], dt)
        x = np.array([1 + 0j, 1 - 1j], dt)
        b = xla.Builder("atan2")
        ops.atan2(b.parameter(0, xla.Shape(et, (2,))), b.parameter(1, xla.Shape(et, (2,))))
        comp = b.build()
        want = np.array([1.01722197 + 0.40235948j] * 2)
        for got in (xla.interpret(comp, y, x), xla.compile(comp, target=target)(y, x)):
            np.testing.assert_allclose(got, want, rtol=2e-6)


def _ulp(a, b):
    """ULP distance of two same-typed float arrays (both finite)."""
    it = np.dtype(f"i{a.dtype.itemsize}")
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    big = np.int64(1) << np.int64(a.dtype.itemsize * 8 - 1)
    ia = np.where(ia < 0, big - ia, ia)          # a monotonic integer line through +-0
    ib = np.where(ib < 0, big - ib, ib)
    return np.abs(ia - ib)


def test_transcendentals_within_3_ulp_on_the_cpu(target, covers):
    """IREE's F32 sin/cos/tan were off by up to ~5e6 ULP (tiny and large arguments), cbrt and
    tanh by 4-11; its F64 expm1/log1p (exp(x) - 1, log(1 + x)) and so tanh lost all precision
    near 0.  Reference: numpy in F64 (within 1 ULP), rounded to the type."""
    if target != "cpu":
        return                              # GPUs keep their own F32 functions
    covers.add(target, "xla.sin", "xla.cos", "xla.tan", "xla.tanh", "xla.cbrt", "xla.atan2", "xla.expm1",
               "xla.log1p")
    rng = np.random.default_rng(7)
    n = 4096
    x = np.concatenate([rng.uniform(-6, 6, n // 2), rng.standard_normal(n // 4) * 1e-3,
                        rng.uniform(-100, 100, n - n // 2 - n // 4)])
    fns = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "cbrt": np.cbrt,
           "expm1": np.expm1, "log1p": lambda v: np.log1p(np.abs(v))}
    for dt, et, names in ((np.float32, xla.F32, ["sin", "cos", "tan", "tanh", "cbrt"]),
                          (np.float64, xla.F64, ["tanh", "expm1", "log1p"])):
        xs = x.astype(dt)
        b = xla.Builder("t")
        p = b.parameter(0, xla.Shape(et, (n,)))
        ap = ops.abs(p)
        outs = [getattr(ops, nm)(ap if nm == "log1p" else p) for nm in names] + [ops.atan2(p, ops.sin(p))]
        ops.tuple(b, outs)
        got = xla.compile(b.build(), target=target)(xs)
        xw = xs.astype(np.float64)
        refs = [fns[nm](xw) for nm in names] + [np.arctan2(xw, np.sin(xw))]
        for nm, g, r in zip(names + ["atan2"], got, refs):
            r = r.astype(dt)
            worst = int(_ulp(g, r).max())
            assert worst <= 3, f"{dt.__name__} {nm}: {worst} ULP"


def test_f32_exp_within_1_ulp_on_the_cpu(target, covers):
    """IREE's expansion of F32 exp was off by up to 5 ULP near overflow (exp(88.71045)); xlair's
    own F32 exp (lowering/elementwise.py `_exp_f32`) is within 1 ULP on every F32 in [-110, 89],
    tanh, which uses it, too; logistic, 1 / (1 + exp(-x)), within 2 (every F32 in [-30, 30]).
    Reference: numpy in F64, rounded to F32; a subnormal result may come out 0 (the CPU runtime
    flushes them)."""
    if target != "cpu":
        return                              # GPUs keep their own F32 exp
    covers.add(target, "xla.exp", "xla.logistic", "xla.tanh")
    bits = lambda lo, hi, step: np.arange(np.float32(lo).view(np.uint32), np.float32(hi).view(np.uint32),
                                          step, dtype=np.uint32).view(np.float32)
    x = np.concatenate([bits(0, 89, 4099), -bits(0, 110, 4099), bits(88.7, 88.73, 1), -bits(87.3, 87.35, 1),
                        np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 3.4e38, -3.4e38])])
    n = x.size
    b = xla.Builder("exp")
    p = b.parameter(0, xla.Shape(xla.F32, (n,)))
    ops.tuple(b, [ops.exp(p), ops.logistic(p), ops.tanh(p)])
    got = xla.compile(b.build(), target=target)(x)
    xw = x.astype(np.float64)
    with np.errstate(all="ignore"):
        refs = [r.astype(np.float32) for r in (np.exp(xw), 1 / (1 + np.exp(-xw)), np.tanh(xw))]
    for nm, g, r in zip(("exp", "logistic", "tanh"), got, refs):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(r), err_msg=nm)
        ok = ~np.isnan(r) & ~((np.abs(r) < np.finfo(np.float32).tiny) & (g == 0))
        u = _ulp(g[ok], r[ok])
        assert int(u.max()) <= (2 if nm == "logistic" else 1), f"{nm}: {int(u.max())} ULP at {x[ok][np.argmax(u)]!r}"


def test_ceil_and_floor_of_subnormals(target, covers):
    """IREE's CPU runtime flushes subnormal inputs to zero, so ceil(2^-149) came out 0, not 1."""
    covers.add(target, "xla.ceil", "xla.floor")
    x = np.array([0x00000001, 0x80000001, 0x007FFFFF, 0x3F000000, 0x80000000], np.uint32).view(np.float32)
    b = xla.Builder("round")
    p = b.parameter(0, xla.Shape(xla.F32, x.shape))
    ops.tuple(b, [ops.ceil(p), ops.floor(p)])
    c, f = xla.compile(b.build(), target=target)(x)
    np.testing.assert_array_equal(c, np.ceil(x))
    if target == "cpu":                      # lavapipe loses the sign of a zero result
        np.testing.assert_array_equal(np.signbit(c), np.signbit(np.ceil(x)))   # ceil(-tiny) = -0
    np.testing.assert_array_equal(f, np.floor(x))


def test_f64_pow_within_2_ulp(target, covers):
    """F64 pow was exp(y log x) in plain f64 (16 ULP off at 10000^10); now double-double.
    Reference: numpy's pow (glibc, correctly rounded in practice), 2 ULP allowed."""
    if target != "cpu":
        return
    covers.add(target, "xla.pow")
    rng = np.random.default_rng(3)
    n = 2000
    x = np.concatenate([rng.uniform(0, 10, n // 2), rng.uniform(0.6, 1.5, n // 2)])
    y = np.concatenate([rng.uniform(-10, 10, n // 2), rng.uniform(-400, 400, n // 2)])
    b = xla.Builder("pow")
    ops.pow(b.parameter(0, xla.Shape(xla.F64, (n,))), b.parameter(1, xla.Shape(xla.F64, (n,))))
    got = xla.compile(b.build(), target=target)(x, y)
    want = np.power(x, y)
    ok = np.isfinite(want) & (want > 1e-300)
    assert int(_ulp(got[ok], want[ok]).max()) <= 2


def test_fft_of_a_constant(target, covers):
    """IREE 3.13 hoisted the FFT of a constant into an initializer and computed it wrong (the
    imaginary part came out equal to the real part); xlair compiles without that hoisting.
    Expected values: numpy.fft."""
    covers.add(target, "xla.fft")
    for dt, et in ((np.complex64, xla.C64), (np.complex128, xla.C128)):
        if dt == np.complex128 and target != "cpu":
            continue
        x = np.array([1 + 2j, 3 - 4j, 0.5 + 0j], dt)
        b = xla.Builder("fft_const")
        ops.fft(ops.constant(b, x), xla.FftType.FFT, [3])
        got = xla.compile(b.build(), target=target)()
        np.testing.assert_allclose(got, np.fft.fft(x.astype(np.complex128)), rtol=1e-5, atol=1e-5)


def test_padded_reduce_window_over_c128(target, covers):
    """A cumulative sum of C128 (reduce_window over the whole prefix, padded with the init
    value): IREE 3.13 has no 128-bit splat for the complex<f64> fill, so xlair builds such
    fills from two F64 ones.  Expected values: numpy.cumsum."""
    if target != "cpu":
        pytest.skip("C128 arithmetic runs on the CPU target only")
    covers.add(target, "xla.reduce_window")
    x = np.array([1 + 2j, 3 - 4j, 0.5 + 0.25j, -2 + 1j, 1e10 + 0j], np.complex128)
    b = xla.Builder("cumsum_c128")
    p = b.parameter(0, xla.Shape(xla.C128, (5,)))
    add = xla.Builder("add")
    ops.add(add.parameter(0, xla.Shape(xla.C128, ())), add.parameter(1, xla.Shape(xla.C128, ())))
    ops.reduce_window(p, ops.constant(b, np.complex128(0)), add.build(), [5], [1], [(4, 0)])
    got = xla.compile(b.build(), target=target)(x)
    np.testing.assert_array_equal(got, np.cumsum(x))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_exp_family_of_constant_nan(target, covers, dtype):
    """exp, expm1, logistic and tanh of a constant NaN are NaN: IREE's F16/F32 exp folded a
    constant NaN to inf or 0 (tanh(NaN) was 0, logistic(NaN) 0 or 1), while the same code gave
    NaN on a parameter.  Both are checked against numpy's definitions."""
    covers.add(target, "xla.exp", "xla.expm1", "xla.logistic", "xla.tanh")
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.5, -2.0], dtype)
    b = xla.Builder("exp_family")
    p = b.parameter(0, xla.Shape(np.dtype(dtype), x.shape))
    c = ops.constant(b, x)
    fns = [ops.exp, ops.expm1, ops.logistic, ops.tanh]
    ops.tuple(b, [f(v) for f in fns for v in (c, p)])
    got = xla.compile(b.build(), target=target)(x)
    with np.errstate(over="ignore"):
        wants = [np.exp(x), np.expm1(x), 1 / (1 + np.exp(-x)), np.tanh(x)]
    for k, want in enumerate(wants):
        for g in got[2 * k:2 * k + 2]:
            np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64), rtol=2e-3)
