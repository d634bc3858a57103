"""Every x86-64 CPU: the whole ConvertElementType matrix compiled for the portable levels
`x86-64-v3` (AVX2, what an AMD Zen 3 has) and baseline `x86-64` (SSE2, no AVX), run here and
compared bit for bit with numpy / ml_dtypes (the reference interpreter's conversions).

On a CPU without AVX512-BF16, LLVM's own f32 -> bf16 is a call to compiler-rt's __truncsfbf2,
which IREE's embedded linker does not have: every PRED / integer -> BF16 conversion failed to
link there ("iree-lld: error: undefined symbol: __truncsfbf2").  xlair rounds to BF16 with
integer ops (lowering/elementwise.py, narrow_float)."""
import ml_dtypes
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import ALL_TYPES, BF16, F16, F32, F64, S32, Shape

PORTABLE = ("x86-64-v3", "x86-64")

#: F32 bit patterns around BF16's and F16's rounding points: ties to even (down and up), just
#: above a tie, subnormal ties, the largest finite F32 (BF16 overflows to inf), F16's overflow
#: tie, a NaN with a payload, signed zeros.
_F32_BITS = [0x3F808000, 0x3F818000, 0x3F808001, 0xBF808000, 0x00008000, 0x00018000, 0x00000001,
             0x807FFFFF, 0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x477FF000, 0x477FEFFF, 0x33000000,
             0x33400000, 0x387FC000, 0x7FC12345, 0xFF812345, 0x80000000, 0x00000000, 0x7F800000]
#: F64 values: a BF16 tie broken only below F32's precision (XLA and ml_dtypes round through F32,
#: so it goes to even), F16 ties and subnormals, values beyond F32's range.
_F64 = [1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -11 + 2 ** -40, 65519.99, 65520.0, 2 ** -25, 2 ** -25 + 2 ** -40,
        3 * 2 ** -25, 1e300, -1e-300, 5e-324, 2.0 ** 128]


def _inputs(et, n: int = 64) -> np.ndarray:
    rng = np.random.default_rng(17)
    if et.is_pred:
        return rng.random(n) < 0.5
    if et.is_integer:
        info = np.iinfo(et.dtype)
        x = rng.integers(info.min, info.max, n, dtype=et.dtype, endpoint=True)
        edge = [info.min, info.max, 0, 1, 2 ** 24 + 1, 2 ** 24 + 3, 65504, 65520, 257, 259, 383, 385]
        edge = [v for v in edge if info.min <= v <= info.max]
        x[:len(edge)] = np.array(edge).astype(et.dtype)
        return x
    if et.is_complex:
        re, im = _inputs(et.component, n), _inputs(et.component, n)[::-1]
        return (re.astype(np.complex128) + 1j * im).astype(et.dtype)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(et.dtype)
    edge = np.array(_F32_BITS, np.uint32).view(np.float32).astype(np.float64)
    if et == F64:
        edge = np.concatenate([edge, _F64])
    with np.errstate(over="ignore"):
        x[:len(edge)] = edge.astype(et.dtype)
    x[len(edge):len(edge) + 4] = np.array([np.inf, -np.inf, 300.7, -2.5]).astype(et.dtype)
    return x


def _parts(a: np.ndarray) -> list:
    a = np.asarray(a).reshape(-1)
    return [a.real, a.imag] if a.dtype.kind == "c" else [a]


def _bits(part: np.ndarray) -> np.ndarray:
    """Bit patterns of a real array for an exact comparison, every NaN as one pattern."""
    if part.dtype.kind == "f" or part.dtype == ml_dtypes.bfloat16:
        b = part.view(f"u{part.dtype.itemsize}").astype(np.uint64)
        b[np.isnan(part.astype(np.float64))] = 1 << 63
        return b
    return part.astype(np.int64) if part.dtype != np.uint64 else part


def _subnormal(part: np.ndarray) -> np.ndarray:
    """Where a real array is subnormal: IREE's CPU runtime, like XLA:CPU, runs with
    flush-to-zero and denormals-are-zero, so those values may come out as zero."""
    if not (part.dtype.kind == "f" or part.dtype == ml_dtypes.bfloat16):
        return np.zeros(part.shape, bool)
    m = np.abs(part.astype(np.float64))
    return (m > 0) & (m < float(ml_dtypes.finfo(part.dtype).tiny))


def _check_exact(got, expected, x, what: str) -> None:
    """Bit for bit (each part of a complex number), except that a part whose input or expected
    value is subnormal, or whose input is subnormal as an F32 (BF16 is reached through F32),
    may be zero instead (the CPU's FTZ/DAZ)."""
    g, e = np.asarray(got), np.asarray(expected)
    assert g.dtype == e.dtype and g.shape == e.shape, f"{what}: {g.dtype}{g.shape}"
    xs = _parts(x)
    for i, (gp, ep) in enumerate(zip(_parts(g), _parts(e))):
        xp = xs[min(i, len(xs) - 1)]
        through_f32 = _subnormal(xp.astype(np.float32)) if xp.dtype.kind == "f" else False
        flushed = (_subnormal(xp) | _subnormal(ep) | through_f32) & (gp == 0)
        bad = np.flatnonzero((_bits(gp) != _bits(ep)) & ~flushed)
        assert bad.size == 0, (f"{what} differs at {bad[:5].tolist()}: input {x.reshape(-1)[bad[:3]]}, "
                               f"got {g.reshape(-1)[bad[:3]]}, expected {e.reshape(-1)[bad[:3]]}")


@pytest.mark.parametrize("src", ALL_TYPES, ids=[t.name for t in ALL_TYPES])
@pytest.mark.parametrize("cpu", PORTABLE)
def test_convert_matrix_on_portable_cpus(cpu, src, covers):
    """Every source type to every destination type, compiled for the portable CPU, run here,
    equal bit for bit to numpy's conversions (ml_dtypes for BF16)."""
    covers.add("cpu", "xla.convert_element_type")
    dsts = [t for t in ALL_TYPES if not (src.is_complex and not t.is_complex)]
    x = _inputs(src)
    b = xla.Builder(f"convert_{src.name}_{cpu.replace('-', '_')}")
    p = b.parameter(0, Shape(src, x.shape))
    O.tuple(b, [O.convert_element_type(p, t) for t in dsts])
    comp = b.build()
    with np.errstate(all="ignore"):
        expected = xla.interpret(comp, x)
    got = xla.compile(comp, "cpu", cpu=cpu)(x)
    for t, g, e in zip(dsts, got, expected):
        _check_exact(g, e, x, f"{cpu}: {src.name} -> {t.name}")


@pytest.mark.parametrize("cpu", PORTABLE)
def test_undefined_symbol_truncsfbf2(cpu):
    """Regression, issue 17: S32 -> BF16 compiled for a CPU without AVX512-BF16 failed with
    `iree-lld: error: undefined symbol: __truncsfbf2`.  The hand-derived roundings: 257 is a tie
    between 256 and 258 (to even: 256), 259 a tie between 258 and 260 (to even: 260), 2^24+1 is
    rounded to 2^24 by the conversion to F32 first."""
    b = xla.Builder("s32_to_bf16")
    O.convert_element_type(b.parameter(0, Shape(S32, (4,))), BF16)
    got = xla.compile(b.build(), "cpu", cpu=cpu)(np.array([257, 259, 2 ** 24 + 1, -3], np.int32))
    assert got.astype(np.float64).tolist() == [256.0, 260.0, 2.0 ** 24, -3.0]


@pytest.mark.parametrize("cpu", PORTABLE)
def test_bf16_and_f16_arithmetic_on_portable_cpus(cpu):
    """Element-wise BF16 / F16 programs (computed in F32 or F64 and rounded back) on the
    portable CPUs.  Sums and products of these narrow types are exact in F32, so they must equal
    numpy's once-rounded results bit for bit; quotients and exp within the suite's tolerance."""
    from xlair_testing import assert_close
    for et in (BF16, F16):
        x = np.linspace(-3, 3, 50).astype(et.dtype)
        y = np.linspace(0.5, 4, 50).astype(et.dtype)
        b = xla.Builder(f"arith_{et.name}")
        px, py = b.parameter(0, Shape(et, (50,))), b.parameter(1, Shape(et, (50,)))
        O.tuple(b, [O.add(px, py), O.mul(px, py), O.div(px, py), O.exp(px), O.convert_element_type(px, F32)])
        got = xla.compile(b.build(), "cpu", cpu=cpu)(x, y)
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        _check_exact(got[0], (xf + yf).astype(np.float32).astype(et.dtype), x, f"{cpu} {et.name} add")
        _check_exact(got[1], (xf * yf).astype(np.float32).astype(et.dtype), x, f"{cpu} {et.name} mul")
        assert_close(got[2], xf / yf, Shape(et, (50,)), f"{cpu} {et.name} div")
        assert_close(got[3], np.exp(xf), Shape(et, (50,)), f"{cpu} {et.name} exp")
        assert np.array_equal(got[4], x.astype(np.float32))
