"""Fft: FFT, IFFT, RFFT, IRFFT over 1-3 innermost axes, any length (powers of two, mixed radix,
direct DFT of a small prime, Bluestein for a large prime), against worked examples, the numpy
reference interpreter and float64 numpy.fft."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import C64, C128, F32, F64, Shape
from xlair_testing import run_and_compare

FT = xla.FftType
PAIRS = [(C64, F32), (C128, F64)]
REL = {"c64": 3e-6, "c128": 1e-13}


def _comp(fn, *shapes, name="fft"):
    b = xla.Builder(name)
    ps = [b.parameter(i, s) for i, s in enumerate(shapes)]
    fn(*ps)
    return b.build()


def _close(got, want, rel, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    scale = max(np.abs(want).max(), 1.0)
    err = np.abs(got.astype(np.complex128) - want).max() / scale
    assert err < rel, (what, err)


def test_fft_worked_examples(covers, target):
    covers.add(target, "xla.fft")
    comp = _comp(lambda c, r, h: O.tuple(c.builder, [
        O.fft(c, FT.FFT, [4]), O.fft(c, FT.IFFT, [4]), O.fft(r, FT.RFFT, [4]), O.fft(h, FT.IRFFT, [4]),
        O.fft(O.reshape(c, [2, 2]), FT.FFT, [2, 2])]),
        Shape(C64, (4,)), Shape(F32, (4,)), Shape(C64, (3,)), name="fft_examples")
    c = np.array([1, 2j, -1, 0], np.complex64)
    r = np.array([1, 2, 3, 4], np.float32)
    h = np.array([10, -2 + 2j, -2], np.complex64)
    want = (np.array([2j, 4, -2j, 0]),            # sum_j c_j (-i)^(jk)
            np.array([0.5j, 0, -0.5j, 1]),          # sum_j c_j i^(jk) / 4
            np.array([10, -2 + 2j, -2]),
            np.array([1, 2, 3, 4]),
            np.array([[2j, -2j], [2 + 2j, 2 - 2j]]))  # 2-D DFT of [[1, 2i], [-1, 0]]
    for label, got in (("interpreter", xla.interpret(comp, c, r, h)),
                       (target, xla.compile(comp, target=target)(c, r, h))):
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, 1e-6, f"{label}[{i}]")
        assert got[3].dtype == np.float32 and got[2].dtype == np.complex64


@pytest.mark.parametrize("ct,rt", PAIRS, ids=["c64", "c128"])
def test_fft_against_reference(covers, target, ct, rt):
    """Every FFT type on assorted shapes and 1, 2 or 3 axes: compiled against the interpreter."""
    covers.add(target, "xla.fft")
    rng = np.random.default_rng(7)
    cases = [((3, 16), 1), ((2, 12), 1), ((4, 7), 1), ((2, 97), 1), ((5, 6, 10), 2), ((2, 4, 6, 5), 3),
             ((1,), 1), ((3, 1), 1), ((2, 9, 8), 2), ((61,), 1)]
    b = xla.Builder(f"fft_{ct.name}")
    args, outs = [], []
    for dims, k in cases:
        lengths = list(dims[-k:])
        x = (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(ct.dtype)
        xr = rng.standard_normal(dims).astype(rt.dtype)
        half = list(dims)
        half[-1] = dims[-1] // 2 + 1
        xh = (rng.standard_normal(half) + 1j * rng.standard_normal(half)).astype(ct.dtype)
        p, pr, ph = (b.parameter(len(args) + i, Shape(v.dtype, v.shape)) for i, v in enumerate((x, xr, xh)))
        args += [x, xr, xh]
        outs += [O.fft(p, FT.FFT, lengths), O.fft(p, FT.IFFT, lengths), O.fft(pr, FT.RFFT, lengths),
                 O.fft(ph, FT.IRFFT, lengths)]
    O.tuple(b, outs)
    run_and_compare(b.build(), *args, target=target, scale=10)


@pytest.mark.parametrize("ct,rt", PAIRS, ids=["c64", "c128"])
@pytest.mark.parametrize("n", [4096, 1000, 1031, 60])
def test_fft_accuracy(covers, target, ct, rt, n):
    """Relative error against float64 numpy.fft: radix-8 stages (4096), mixed radix (1000 =
    8 * 125, 60), Bluestein (the prime 1031); forward and inverse round trip."""
    covers.add(target, "xla.fft")
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((3, n)) + 1j * rng.standard_normal((3, n))).astype(ct.dtype)
    xr = rng.standard_normal((3, n)).astype(rt.dtype)
    comp = _comp(lambda p, q: O.tuple(p.builder, [
        O.fft(p, FT.FFT, [n]), O.fft(O.fft(p, FT.FFT, [n]), FT.IFFT, [n]), O.fft(q, FT.RFFT, [n]),
        O.fft(O.fft(q, FT.RFFT, [n]), FT.IRFFT, [n])]),
        Shape(ct, (3, n)), Shape(rt, (3, n)), name=f"fft_acc_{n}")
    f, rt_trip, rf, rr = xla.compile(comp, target=target)(x, xr)
    x64, xr64 = x.astype(np.complex128), xr.astype(np.float64)
    rel = REL[ct.name] * np.log2(n)
    _close(f, np.fft.fft(x64), rel, "FFT")
    _close(rt_trip, x64, rel, "IFFT(FFT)")
    _close(rf, np.fft.rfft(xr64), rel, "RFFT")
    _close(rr, xr64, rel, "IRFFT(RFFT)")
    assert rr.dtype == rt.dtype and rf.dtype == ct.dtype


def test_fft_multi_axis_accuracy(covers, target):
    covers.add(target, "xla.fft")
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 64, 48)).astype(np.float32)
    comp = _comp(lambda p: O.tuple(p.builder, [O.fft(p, FT.RFFT, [64, 48]),
                                               O.fft(O.fft(p, FT.RFFT, [2, 64, 48]), FT.IRFFT, [2, 64, 48])]),
                 Shape(F32, (2, 64, 48)), name="fft_2d")
    f, back = xla.compile(comp, target=target)(x)
    _close(f, np.fft.rfftn(x.astype(np.float64), axes=(1, 2)), 3e-5, "RFFT2")
    _close(back, x, 3e-5, "IRFFT3(RFFT3)")


def test_fft_empty(covers, target):
    covers.add(target, "xla.fft")
    comp = _comp(lambda p, q: O.tuple(p.builder, [O.fft(p, FT.FFT, [8]), O.fft(q, FT.RFFT, [0])]),
                 Shape(C64, (0, 8)), Shape(F32, (3, 0)), name="fft_empty")
    a, r = xla.compile(comp, target=target)(np.zeros((0, 8), np.complex64), np.zeros((3, 0), np.float32))
    assert a.shape == (0, 8) and r.shape == (3, 0) and r.dtype == np.complex64
