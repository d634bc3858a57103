"""Every x86-64 CPU: the whole ConvertElementType matrix compiled for the portable levels
`x86-64-v3` (AVX2, what an AMD Zen 3 has) and baseline `x86-64` (SSE2, no AVX), run here and
compared bit for bit with numpy / ml_dtypes (the reference interpreter's conversions).

On a CPU without AVX512-BF16, LLVM's own f32 -> bf16 is a call to compiler-rt's __truncsfbf2,
which IREE's embedded linker does not have: every PRED / integer -> BF16 conversion failed to
link there ("iree-lld: error: undefined symbol: __truncsfbf2").  xlair rounds to BF16 with
integer ops (lowering/elementwise.py, narrow_float)."""
import re

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


#: lhs NHWC, rhs HWIO, out NHWC
_NHWC = xla.ConvolutionDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))


def _avx2_matmul_program():
    """Matmuls of the forms xlair's AVX2 tile sizes see (lowering/contraction.py
    _set_cpu_matmul_tiles), in this order: a plain product; a transposed one (JAX's weight
    gradient x.T @ g); one of 12 rows; one whose rows (6) and one whose columns (10) no vector
    tile divides; an F64 one; a convolution run as patches and a matmul; and one of 2^27
    multiply-adds, which IREE data-tiles."""
    shapes = [(F32, (256, 784)), (F32, (784, 512)), (F32, (256, 512)), (F32, (12, 20)), (F32, (20, 48)),
              (F32, (6, 32)), (F32, (32, 10)), (F64, (64, 32)), (F64, (32, 64)), (F32, (2, 10, 10, 8)),
              (F32, (3, 3, 8, 16)), (F32, (512, 512)), (F32, (8, 32))]
    b = xla.Builder("avx2_matmuls")
    p = [b.parameter(i, Shape(et, s)) for i, (et, s) in enumerate(shapes)]
    O.tuple(b, [O.dot(p[0], p[1]), O.dot_general(p[0], p[2], xla.DotDimensionNumbers((0,), (0,))),
                O.dot(p[3], p[4]), O.dot(p[5], p[6]), O.dot(p[12], p[6]),
                O.dot(p[7], p[8]), O.conv_general_dilated(p[9], p[10], [1, 1], "SAME", [1, 1], [1, 1], _NHWC),
                O.dot(p[11], p[11])])
    rng = np.random.default_rng(5)
    return b.build(), [rng.standard_normal(s).astype(et.dtype) for et, s in shapes]


def test_avx2_matmul_tiles_only_where_they_divide():
    """In AVX2 code an F32 matmul below the data-tiling size whose rows divide by 4 and columns
    by 16 carries xlair's tile sizes to IREE (4x16 vectors, workgroups that divide the matmul,
    a B panel within 512 KiB): hand-derived, 256x784x512 -> 32x128 workgroups (128 columns:
    784 x 256 x 4 bytes is past the panel; 32 rows: 32 x 128 = 4096 elements), x.T @ g
    (784x256x512) -> 16x256, 12x20x48 -> 12x48, the 3x3x8 convolution's patches
    (200x72x16) -> 40x16 (200 / 40 and 40 x 16 <= 4096; 64 does not divide 200).  The rest
    keep IREE's own: 6 rows, 10 columns, F64, 2^27 multiply-adds, and every matmul of code with
    AVX-512 or for Vulkan."""
    from xlair import cpus
    from xlair.compile import lower, needs_of
    from xlair.targets import target
    comp, _ = _avx2_matmul_program()
    avx2 = str(lower(comp, target_name="cpu", needs=needs_of(target("cpu"), cpus.flags_for("x86-64-v3"))))
    got = sorted(re.findall(r"distribution = \[(\d+), (\d+), 0\], vector_common_parallel = \[4, 16, 0\]", avx2))
    assert got == sorted([("32", "128"), ("16", "256"), ("12", "48"), ("40", "16")]), got
    assert avx2.count("linalg.matmul {compilation_info") == 4
    for text in (str(lower(comp, target_name="cpu", needs=needs_of(target("cpu"), cpus.flags_for("znver4")))),
                 str(lower(comp, target_name="vulkan"))):
        assert "compilation_info" not in text


def test_avx2_matmul_tiles_compute_the_products():
    """The same matmuls compiled for x86-64-v3 and run here, against numpy in F64 (within F32
    rounding of K products each: K x 4e-6 for inputs of unit variance; F64 within 1e-12)."""
    comp, a = _avx2_matmul_program()
    got = xla.compile(comp, "cpu", cpu="x86-64-v3")(*a)
    d = [x.astype(np.float64) for x in a]
    patches = np.pad(d[9], [(0, 0), (1, 1), (1, 1), (0, 0)])
    conv = sum(np.einsum("nhwc,co->nhwo", patches[:, i:i + 10, j:j + 10], d[10][i, j])
               for i in range(3) for j in range(3))
    want = [(d[0] @ d[1], 784), (d[0].T @ d[2], 256), (d[3] @ d[4], 20), (d[5] @ d[6], 32), (d[12] @ d[6], 32),
            (d[7] @ d[8], 32), (conv, 72), (d[11] @ d[11], 512)]
    for i, (g, (w, k)) in enumerate(zip(got, want)):
        assert g.dtype == (np.float64 if i == 5 else np.float32) and g.shape == w.shape, (i, g.dtype, g.shape)
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12 * k if i == 5 else 4e-6 * k, err_msg=f"product {i}")
