"""Shape rules of BatchNorm*, Cholesky, TriangularSolve, Fft and the Rng ops: every constraint
raises XlaError at build time (`'xla.<op>' <parameter> <rule>; got <value>`)."""
import numpy as np
import pytest

import xlair as xla
from xlair_testing import check_rule
from xlair import C64, C128, F16, F32, F64, PRED, S32, U32, U64, Shape
from xlair import ops as O

FT, RA, TR = xla.FftType, xla.RandomAlgorithm, xla.Transpose


def _b():
    b = xla.Builder("bad")
    p = {
        "x": b.parameter(0, Shape(F32, (2, 3, 4))),
        "v3": b.parameter(1, Shape(F32, (3,))),
        "v4": b.parameter(2, Shape(F32, (4,))),
        "m": b.parameter(3, Shape(F32, (4, 4))),
        "mb": b.parameter(4, Shape(F32, (2, 4, 4))),
        "r": b.parameter(5, Shape(F32, (4, 3))),
        "i": b.parameter(6, Shape(S32, (4, 4))),
        "c": b.parameter(7, Shape(C64, (2, 8))),
        "h": b.parameter(8, Shape(C64, (2, 5))),
        "s": b.parameter(9, Shape(F32, ())),
        "si": b.parameter(10, Shape(S32, ())),
        "k2": b.parameter(11, Shape(U64, (2,))),
        "k3": b.parameter(12, Shape(U64, (3,))),
        "ku": b.parameter(13, Shape(U32, (4,))),
        "f16": b.parameter(14, Shape(F16, (4, 4))),
        "x3": b.parameter(15, Shape(F32, (2, 8))),
        "vd": b.parameter(16, Shape(F64, (3,))),
        "t": b.parameter(17, Shape.tuple([Shape(F32, (2,))])),
        "sp": b.parameter(18, Shape(PRED, ())),
        "cm": b.parameter(19, Shape(C128, (4, 4))),
    }
    return b, p


BNT = "batch_norm_training"
BNI = "batch_norm_inference"
BNG = "batch_norm_grad"

CASES = [
    # BatchNormTraining
    (BNT, lambda b, p: O.batch_norm_training(p["x"], p["v3"], p["v3"], 1e-3, 3),
     "'xla.batch_norm_training' feature_index must be the index of a dimension of operand, smaller than its rank 3; got 3"),
    (BNT, lambda b, p: O.batch_norm_training(p["x"], p["v3"], p["v3"], 1e-3, -1),
     "'xla.batch_norm_training' feature_index must be a non-negative number; got -1"),
    (BNT, lambda b, p: O.batch_norm_training(p["i"], p["v4"], p["v4"], 1e-3, 0),
     "'xla.batch_norm_training' operand must have floating-point element type"),
    (BNT, lambda b, p: O.batch_norm_training(p["s"], p["v3"], p["v3"], 1e-3, 0),
     "'xla.batch_norm_training' operand must have rank >= 1"),
    (BNT, lambda b, p: O.batch_norm_training(p["x"], p["v4"], p["v3"], 1e-3, 1),
     "'xla.batch_norm_training' scale must have the feature count of operand (3) elements; got f32[4]"),
    (BNT, lambda b, p: O.batch_norm_training(p["x"], p["v3"], p["m"], 1e-3, 1),
     "'xla.batch_norm_training' offset must be a 1 dimensional array; got f32[4,4]"),
    (BNT, lambda b, p: O.batch_norm_training(p["x"], p["vd"], p["v3"], 1e-3, 1),
     "'xla.batch_norm_training' scale must have the element type of operand (F32); got f64[3]"),
    (BNT, lambda b, p: O.batch_norm_training(p["x"], p["v3"], p["v3"], "eps", 1),
     "'xla.batch_norm_training' epsilon must be a number; got 'eps'"),
    (BNT, lambda b, p: O.batch_norm_training(p["x"], p["t"], p["v3"], 1e-3, 1),
     "'xla.batch_norm_training' scale must be an array"),
    # BatchNormInference
    (BNI, lambda b, p: O.batch_norm_inference(p["x"], p["v3"], p["v3"], p["v3"], p["v4"], 1e-3, 1),
     "'xla.batch_norm_inference' variance must have the feature count of operand (3) elements; got f32[4]"),
    (BNI, lambda b, p: O.batch_norm_inference(p["x"], p["v3"], p["v3"], p["vd"], p["v3"], 1e-3, 1),
     "'xla.batch_norm_inference' mean must have the element type of operand (F32)"),
    (BNI, lambda b, p: O.batch_norm_inference(p["x"], p["v3"], p["v3"], p["v3"], p["v3"], 1e-3, 5),
     "'xla.batch_norm_inference' feature_index must be the index of a dimension of operand"),
    (BNI, lambda b, p: O.batch_norm_inference(p["x"], p["v3"], p["v3"], p["v3"], p["v3"], 1e-3, 1.5),
     "'xla.batch_norm_inference' feature_index must be an integer; got 1.5"),
    # BatchNormGrad
    (BNG, lambda b, p: O.batch_norm_grad(p["x"], p["v3"], p["v3"], p["v3"], p["m"], 1e-3, 1),
     "'xla.batch_norm_grad' grad_output must have the shape of operand (f32[2,3,4]); got f32[4,4]"),
    (BNG, lambda b, p: O.batch_norm_grad(p["x"], p["v3"], p["v4"], p["v3"], p["x"], 1e-3, 1),
     "'xla.batch_norm_grad' mean must have the feature count of operand (3) elements"),
    (BNG, lambda b, p: O.batch_norm_grad(p["x"], p["v3"], p["v3"], p["v3"], p["x"], 1e-3, 3),
     "'xla.batch_norm_grad' feature_index must be the index of a dimension of operand"),
    (BNG, lambda b, p: O.batch_norm_grad(p["c"], p["v3"], p["v3"], p["v3"], p["c"], 1e-3, 0),
     "'xla.batch_norm_grad' operand must have floating-point element type"),
    # Cholesky
    ("cholesky", lambda b, p: O.cholesky(p["v3"]),
     "'xla.cholesky' a must have rank >= 2 (a matrix or a batch of matrices); got f32[3]"),
    ("cholesky", lambda b, p: O.cholesky(p["r"]),
     "'xla.cholesky' a must have square minor two dimensions (equal sizes); got f32[4,3]"),
    ("cholesky", lambda b, p: O.cholesky(p["i"]),
     "'xla.cholesky' a must have F32, F64, C64 or C128 element type; got s32[4,4]"),
    ("cholesky", lambda b, p: O.cholesky(p["f16"]),
     "'xla.cholesky' a must have F32, F64, C64 or C128 element type; got f16[4,4]"),
    ("cholesky", lambda b, p: O.cholesky(p["m"], lower=1),
     "'xla.cholesky' lower must be a bool; got 1"),
    # TriangularSolve
    ("triangular_solve", lambda b, p: O.triangular_solve(p["r"], p["r"], True, True, False, TR.NO_TRANSPOSE),
     "'xla.triangular_solve' a must have square minor two dimensions ([..., M, M]); got f32[4,3]"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["m"], p["r"], False, True, False, TR.NO_TRANSPOSE),
     "'xla.triangular_solve' b must have shape [..., K, M] (not left_side) with M = 4 from a; got f32[4,3]"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["m"], O.transpose(p["r"], [1, 0]), True, True, False,
                                                         TR.NO_TRANSPOSE),
     "'xla.triangular_solve' b must have shape [..., M, K] (left_side) with M = 4 from a; got f32[3,4]"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["mb"], p["r"], True, True, False, TR.NO_TRANSPOSE),
     "'xla.triangular_solve' b must have the rank of a (f32[2,4,4]); got f32[4,3]"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["mb"], O.reshape(p["mb"], [4, 2, 4]), True, True, False,
                                                         TR.NO_TRANSPOSE),
     "'xla.triangular_solve' b must have shape [..., M, K] (left_side) with M = 4 from a; got f32[4,2,4]"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["mb"], O.reshape(p["mb"], [1, 4, 8]), True, True, False,
                                                         TR.NO_TRANSPOSE),
     "'xla.triangular_solve' b must have the batch dimensions of a [2]; got f32[1,4,8]"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["m"], p["cm"], True, True, False, TR.NO_TRANSPOSE),
     "'xla.triangular_solve' b must have the element type of a (F32); got c128[4,4]"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["i"], p["i"], True, True, False, TR.NO_TRANSPOSE),
     "'xla.triangular_solve' a must have F16, BF16, F32, F64, C64 or C128 element type"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["v4"], p["v4"], True, True, False, TR.NO_TRANSPOSE),
     "'xla.triangular_solve' a must have rank >= 2"),
    ("triangular_solve", lambda b, p: O.triangular_solve(p["m"], p["m"], True, True, False, "CONJUGATE"),
     "'xla.triangular_solve' transpose_a must be a Transpose (NO_TRANSPOSE, TRANSPOSE, ADJOINT); got 'CONJUGATE'"),
    # Fft
    ("fft", lambda b, p: O.fft(p["x3"], FT.FFT, [8]),
     "'xla.fft' operand must have complex (C64 or C128) element type for FFT; got f32[2,8]"),
    ("fft", lambda b, p: O.fft(p["c"], FT.RFFT, [8]),
     "'xla.fft' operand must have F32 or F64 element type for RFFT; got c64[2,8]"),
    ("fft", lambda b, p: O.fft(p["x3"], FT.IRFFT, [8]),
     "'xla.fft' operand must have complex (C64 or C128) element type for IRFFT; got f32[2,8]"),
    ("fft", lambda b, p: O.fft(p["c"], FT.FFT, []),
     "'xla.fft' fft_length must have 1, 2 or 3 entries (FFT of rank 1-3); got []"),
    ("fft", lambda b, p: O.fft(O.reshape(p["c"], [1, 1, 2, 8]), FT.FFT, [1, 1, 2, 8]),
     "'xla.fft' fft_length must have 1, 2 or 3 entries (FFT of rank 1-3); got [1, 1, 2, 8]"),
    ("fft", lambda b, p: O.fft(p["c"], FT.FFT, [1, 2, 8]),
     "'xla.fft' operand must have at least the rank of the FFT (3); got c64[2,8]"),
    ("fft", lambda b, p: O.fft(p["c"], FT.IFFT, [4]),
     "'xla.fft' fft_length must match the innermost dimensions of operand [8] for IFFT; got [4]"),
    ("fft", lambda b, p: O.fft(p["x3"], FT.RFFT, [3, 8]),
     "'xla.fft' fft_length must match the innermost dimensions of operand [2, 8] for RFFT; got [3, 8]"),
    ("fft", lambda b, p: O.fft(p["h"], FT.IRFFT, [10]),
     "'xla.fft' operand must have innermost dimension fft_length[-1] // 2 + 1 = 6 for IRFFT; got c64[2,5]"),
    ("fft", lambda b, p: O.fft(p["h"], FT.IRFFT, [3, 8]),
     "'xla.fft' fft_length must match all but the innermost of the innermost dimensions of operand [2, 5] for IRFFT; got [3, 8]"),
    ("fft", lambda b, p: O.fft(p["h"], FT.IRFFT, [-8]),
     "'xla.fft' fft_length must not be negative; got [-8]"),
    ("fft", lambda b, p: O.fft(p["c"], "DCT", [8]),
     "'xla.fft' fft_type must be a FftType (FFT, IFFT, RFFT, IRFFT); got 'DCT'"),
    # RngUniform
    ("rng_uniform", lambda b, p: O.rng_uniform(p["s"], p["si"], Shape(F32, (3,))),
     "'xla.rng_uniform' b must have the element type of a (F32); got s32[]"),
    ("rng_uniform", lambda b, p: O.rng_uniform(p["v3"], p["s"], Shape(F32, (3,))),
     "'xla.rng_uniform' a must be a scalar; got f32[3]"),
    ("rng_uniform", lambda b, p: O.rng_uniform(p["s"], p["v3"], Shape(F32, (3,))),
     "'xla.rng_uniform' b must be a scalar; got f32[3]"),
    ("rng_uniform", lambda b, p: O.rng_uniform(p["s"], p["s"], Shape(F64, (3,))),
     "'xla.rng_uniform' shape must have the element type of the parameters (F32); got f64[3]"),
    ("rng_uniform", lambda b, p: O.rng_uniform(p["s"], p["s"], Shape(F32, (-1,))),
     "'xla.rng_uniform' shape must not be negative; got [-1]"),
    ("rng_uniform", lambda b, p: O.rng_uniform(O.convert_element_type(p["s"], C64),
                                               O.convert_element_type(p["s"], C64), Shape(C64, (2,))),
     "'xla.rng_uniform' a must have PRED, integer or floating-point element type; got c64[]"),
    ("rng_uniform", lambda b, p: O.rng_uniform(p["s"], p["s"], (3,)),
     "'xla.rng_uniform' shape must be an xla.Shape; got (3,)"),
    ("rng_uniform", lambda b, p: O.rng_uniform(p["s"], p["s"], Shape.tuple([Shape(F32, (2,))])),
     "'xla.rng_uniform' shape must be an array"),
    # RngNormal
    ("rng_normal", lambda b, p: O.rng_normal(p["si"], p["si"], Shape(S32, (3,))),
     "'xla.rng_normal' mu must have floating-point element type; got s32[]"),
    ("rng_normal", lambda b, p: O.rng_normal(p["s"], p["v3"], Shape(F32, (3,))),
     "'xla.rng_normal' sigma must be a scalar; got f32[3]"),
    ("rng_normal", lambda b, p: O.rng_normal(p["s"], O.convert_element_type(p["s"], F64), Shape(F32, (3,))),
     "'xla.rng_normal' sigma must have the element type of mu (F32); got f64[]"),
    ("rng_normal", lambda b, p: O.rng_normal(p["s"], p["s"], Shape(F16, (3,))),
     "'xla.rng_normal' shape must have the element type of the parameters (F32); got f16[3]"),
    # RngBitGenerator
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator(RA.RNG_THREE_FRY, p["k3"], Shape(U32, (4,))),
     "'xla.rng_bit_generator' initial_state must have shape u64[2] for RNG_THREE_FRY; got u64[3]"),
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator(RA.RNG_PHILOX, p["ku"], Shape(U32, (4,))),
     "'xla.rng_bit_generator' initial_state must have shape u64[2] or u64[3] for RNG_PHILOX; got u32[4]"),
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator(RA.RNG_DEFAULT, p["v3"], Shape(U32, (4,))),
     "'xla.rng_bit_generator' initial_state must have shape u64[2] or u64[3] for RNG_DEFAULT; got f32[3]"),
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator(RA.RNG_PHILOX, p["k2"], Shape(PRED, (4,))),
     "'xla.rng_bit_generator' shape must have integer or floating-point element type; got pred[4]"),
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator(RA.RNG_PHILOX, p["k2"], Shape(C64, (4,))),
     "'xla.rng_bit_generator' shape must have integer or floating-point element type; got c64[4]"),
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator(RA.RNG_PHILOX, p["k2"], Shape(U32, (-4,))),
     "'xla.rng_bit_generator' shape must not be negative; got [-4]"),
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator("MERSENNE", p["k2"], Shape(U32, (4,))),
     "'xla.rng_bit_generator' algorithm must be a RandomAlgorithm (RNG_DEFAULT, RNG_THREE_FRY, RNG_PHILOX); got 'MERSENNE'"),
    ("rng_bit_generator", lambda b, p: O.rng_bit_generator(RA.RNG_PHILOX, p["t"], Shape(U32, (4,))),
     "'xla.rng_bit_generator' initial_state must be an array"),
]


@pytest.mark.parametrize("op,call,message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(op, call, message):
    check_rule(call, _b, op, message, "test_shape_rules_numerics.py")


def test_text_ir_is_verified():
    """The same rules guard modules parsed from text (the verifier reads the same records)."""
    text = """
    func.func @main(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
      %r = "xla.cholesky"(%a) {lower = true} : (tensor<4x3xf32>) -> tensor<4x3xf32>
      return %r : tensor<4x3xf32>
    }"""
    with pytest.raises(xla.XlaError, match="'xla.cholesky' a must have square minor two dimensions"):
        xla.Computation.from_text(text)


def test_good_calls_infer_the_spec_shapes():
    b, p = _b()
    assert O.fft(p["x3"], FT.RFFT, [8]).shape == Shape(C64, (2, 5))
    assert O.fft(p["x3"], FT.RFFT, [2, 8]).shape == Shape(C64, (2, 5))
    assert O.fft(p["h"], FT.IRFFT, [8]).shape == Shape(F32, (2, 8))
    assert O.fft(p["h"], FT.IRFFT, [9]).shape == Shape(F32, (2, 9))
    assert O.fft(p["c"], FT.IFFT, [2, 8]).shape == Shape(C64, (2, 8))
    t = O.batch_norm_training(p["x"], p["v3"], p["v3"], 0.1, 1).shape
    assert t == Shape.tuple([Shape(F32, (2, 3, 4)), Shape(F32, (3,)), Shape(F32, (3,))])
    g = O.batch_norm_grad(p["x"], p["v4"], p["v4"], p["v4"], p["x"], 0.1, 2).shape
    assert g == Shape.tuple([Shape(F32, (2, 3, 4)), Shape(F32, (4,)), Shape(F32, (4,))])
    assert O.triangular_solve(p["m"], O.transpose(p["r"], [1, 0]), False, False, True, TR.ADJOINT).shape == \
        Shape(F32, (3, 4))
    r = O.rng_bit_generator(RA.RNG_PHILOX, p["k3"], Shape(F64, (2, 2))).shape
    assert r == Shape.tuple([Shape(U64, (3,)), Shape(F64, (2, 2))])
    assert O.rng_uniform(p["sp"], p["sp"], Shape(PRED, (5,))).shape == Shape(PRED, (5,))
    assert np.dtype(O.rng_normal(p["s"], p["s"], Shape(F32, (2, 3))).shape.dtype) == np.float32
