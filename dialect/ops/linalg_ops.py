"""Numerical-library ops: BatchNormTraining, BatchNormInference, BatchNormGrad, Cholesky,
TriangularSolve and Fft.

The shape rules follow XLA's shape inference for these ops (InferBatchNorm*Shape,
InferCholeskyShape, InferTriangularSolveShape, InferFftShape); the references are the
straightforward float64 / complex128 numpy readings of the spec (plain loops for Cholesky and
TriangularSolve, numpy.fft for Fft), independent of the lowering.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Bool, Float, FftType, Int, Ints, Transpose, kind_for
from ..core import Attr, OpDef, Operand, register
from ..types import BF16, C64, C128, F16, F32, F64, FLOATS, Shape

LINALG_TYPES = (F32, F64, C64, C128)
_LINALG_WHAT = "F32, F64, C64 or C128"
#: TriangularSolve also takes F16 and BF16 (as XLA does; solved in F32 and rounded once).
TRSOLVE_TYPES = (F16, BF16) + LINALG_TYPES
_TRSOLVE_WHAT = "F16, BF16, F32, F64, C64 or C128"


def _wide(x) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


# ----------------------------------------------------------------------------------------
# batch normalization
# ----------------------------------------------------------------------------------------
def _bn_operand(chk, operand: Shape, feature_index: int, *, op: str) -> int:
    """Operand and feature_index rules shared by the three BatchNorm ops (`op`: the StableHLO op
    whose ids they cite); returns the feature count."""
    chk.array("operand", operand, cid=f"{op}_i1")
    if operand.rank < 1:
        chk.fail("operand", "must have rank >= 1 (an n dimensional array)", operand, cid=f"{op}_c1")
    chk.element_type("operand", operand, FLOATS, "floating-point", cid=f"{op}_i1")
    if feature_index < 0:
        chk.fail("feature_index", "must be a non-negative number", feature_index, cid=f"{op}_c1")
    if feature_index >= operand.rank:
        chk.fail("feature_index", f"must be the index of a dimension of operand, smaller than its "
                 f"rank {operand.rank}", feature_index, cid=f"{op}_c1")
    return operand.dims[feature_index]


def _bn_vector(chk, name: str, s: Shape, operand: Shape, features: int, *, cids: tuple):
    """scale, offset, mean, variance: 1 dimensional arrays of the feature count, operand's type;
    `cids`: the ids of (the input's kind, its element type, its size)."""
    kind, etype, size = cids
    chk.array(name, s, cid=kind)
    if s.rank != 1:
        chk.fail(name, "must be a 1 dimensional array", s, cid=kind)
    chk.same_element_type("operand", operand, name, s, cid=etype)
    if s.dims[0] != features:
        chk.fail(name, f"must have the feature count of operand ({features}) elements", s, cid=size)


def _bn_cids(op: str, **rules) -> dict:
    """{vector operand: (input id, element type id, size id)} of a BatchNorm op."""
    return {name: (f"{op}_{i}", f"{op}_c2", f"{op}_{c}") for name, (i, c) in rules.items()}


_BN_TRAINING = _bn_cids("batch_norm_training", scale=("i2", "c3"), offset=("i3", "c4"))
_BN_INFERENCE = _bn_cids("batch_norm_inference", scale=("i2", "c3"), offset=("i3", "c4"), mean=("i4", "c5"),
                         variance=("i5", "c6"))
_BN_GRAD = _bn_cids("batch_norm_grad", scale=("i2", "c5"), mean=("i3", "c4"), variance=("i4", "c4"))


def _bn_training_infer(chk, operand, scale, offset, epsilon, feature_index):
    n = _bn_operand(chk, operand, feature_index, op="batch_norm_training")
    _bn_vector(chk, "scale", scale, operand, n, cids=_BN_TRAINING["scale"])
    _bn_vector(chk, "offset", offset, operand, n, cids=_BN_TRAINING["offset"])
    vec = Shape(operand.element_type, (n,))
    return Shape.tuple([operand, vec, vec])


def _bn_axes(x: np.ndarray, feature_index: int):
    return tuple(d for d in range(x.ndim) if d != feature_index)


def _bn_view(v, x: np.ndarray, feature_index: int):
    shape = [1] * x.ndim
    shape[feature_index] = -1
    return _wide(v).reshape(shape)


def _bn_training_ref(operand, scale, offset, epsilon, feature_index, *, result):
    x = _wide(operand)
    axes = _bn_axes(x, feature_index)
    mean = x.mean(axis=axes)
    mu = _bn_view(mean, x, feature_index)
    var = ((x - mu) ** 2).mean(axis=axes)
    sd = np.sqrt(_bn_view(var, x, feature_index) + epsilon)
    y = _bn_view(scale, x, feature_index) * (x - mu) / sd + _bn_view(offset, x, feature_index)
    dt = result.tuple_shapes[0].dtype
    return y.astype(dt), mean.astype(dt), var.astype(dt)


register(OpDef("BatchNormTraining",
               (Operand("operand"), Operand("scale"), Operand("offset"), Attr("epsilon", Float()),
                Attr("feature_index", Int())),
               _bn_training_infer, _bn_training_ref, "linalg_ops", "BatchNormTraining",
               doc="normalize over all dimensions but feature_index; returns (output, batch_mean, batch_var)",
               constraints={
                   "batch_norm_training_i1": "operand is a floating-point array",
                   "batch_norm_training_i2": "scale is a 1 dimensional array",
                   "batch_norm_training_i3": "offset is a 1 dimensional array",
                   "batch_norm_training_c1": "`0 <= feature_index < rank(operand)`",
                   "batch_norm_training_c2": "the vector operands have the element type of operand",
                   "batch_norm_training_c3": "`size(scale) = dim(operand, feature_index)`",
                   "batch_norm_training_c4": "`size(offset) = dim(operand, feature_index)`",
               }))


def _bn_inference_infer(chk, operand, scale, offset, mean, variance, epsilon, feature_index):
    n = _bn_operand(chk, operand, feature_index, op="batch_norm_inference")
    for name, s in (("scale", scale), ("offset", offset), ("mean", mean), ("variance", variance)):
        _bn_vector(chk, name, s, operand, n, cids=_BN_INFERENCE[name])
    return operand


def _bn_inference_ref(operand, scale, offset, mean, variance, epsilon, feature_index, *, result):
    x = _wide(operand)
    v = lambda a: _bn_view(a, x, feature_index)  # noqa: E731
    y = v(scale) * (x - v(mean)) / np.sqrt(v(variance) + epsilon) + v(offset)
    return y.astype(result.dtype)


register(OpDef("BatchNormInference",
               (Operand("operand"), Operand("scale"), Operand("offset"), Operand("mean"),
                Operand("variance"), Attr("epsilon", Float()), Attr("feature_index", Int())),
               _bn_inference_infer, _bn_inference_ref, "linalg_ops", "BatchNormInference",
               doc="normalize with the given mean and variance along feature_index",
               constraints={
                   "batch_norm_inference_i1": "operand is a floating-point array",
                   "batch_norm_inference_i2": "scale is a 1 dimensional array",
                   "batch_norm_inference_i3": "offset is a 1 dimensional array",
                   "batch_norm_inference_i4": "mean is a 1 dimensional array",
                   "batch_norm_inference_i5": "variance is a 1 dimensional array",
                   "batch_norm_inference_c1": "`0 <= feature_index < rank(operand)`",
                   "batch_norm_inference_c2": "the vector operands have the element type of operand",
                   "batch_norm_inference_c3": "`size(scale) = dim(operand, feature_index)`",
                   "batch_norm_inference_c4": "`size(offset) = dim(operand, feature_index)`",
                   "batch_norm_inference_c5": "`size(mean) = dim(operand, feature_index)`",
                   "batch_norm_inference_c6": "`size(variance) = dim(operand, feature_index)`",
               }))


def _bn_grad_infer(chk, operand, scale, mean, variance, grad_output, epsilon, feature_index):
    n = _bn_operand(chk, operand, feature_index, op="batch_norm_grad")
    for name, s in (("scale", scale), ("mean", mean), ("variance", variance)):
        _bn_vector(chk, name, s, operand, n, cids=_BN_GRAD[name])
    chk.array("grad_output", grad_output, cid="batch_norm_grad_i5")
    chk.same_shape("operand", operand, "grad_output", grad_output, cid="batch_norm_grad_c3")
    vec = Shape(operand.element_type, (n,))
    return Shape.tuple([operand, vec, vec])


def _bn_grad_ref(operand, scale, mean, variance, grad_output, epsilon, feature_index, *, result):
    x, dy = _wide(operand), _wide(grad_output)
    axes = _bn_axes(x, feature_index)
    v = lambda a: _bn_view(a, x, feature_index)  # noqa: E731
    xc = x - v(mean)
    ve = v(variance) + epsilon
    count = x.size // max(x.shape[feature_index], 1) if x.size else 0
    c = (dy * xc / ve).sum(axis=axes) / max(count, 1)
    dy_mean = dy.sum(axis=axes) / max(count, 1)
    dx = v(scale) / np.sqrt(ve) * (dy - v(dy_mean) - v(c) * xc)
    dscale = (dy * xc / np.sqrt(ve)).sum(axis=axes)
    doffset = dy.sum(axis=axes)
    dt = result.tuple_shapes[0].dtype
    return dx.astype(dt), dscale.astype(dt), doffset.astype(dt)


register(OpDef("BatchNormGrad",
               (Operand("operand"), Operand("scale"), Operand("mean"), Operand("variance"),
                Operand("grad_output"), Attr("epsilon", Float()), Attr("feature_index", Int())),
               _bn_grad_infer, _bn_grad_ref, "linalg_ops", "BatchNormGrad",
               doc="gradients of batch norm: (grad_operand, grad_scale, grad_offset)",
               constraints={
                   "batch_norm_grad_i1": "operand is a floating-point array",
                   "batch_norm_grad_i2": "scale is a 1 dimensional array",
                   "batch_norm_grad_i3": "mean is a 1 dimensional array",
                   "batch_norm_grad_i4": "variance is a 1 dimensional array",
                   "batch_norm_grad_i5": "grad_output is an array",
                   "batch_norm_grad_c1": "`0 <= feature_index < rank(operand)`",
                   "batch_norm_grad_c2": "the vector operands have the element type of operand",
                   "batch_norm_grad_c3": "`operand`, `grad_output` and `grad_operand` have the same "
                                         "shape",
                   "batch_norm_grad_c4": "mean and variance have the feature count of operand elements",
                   "batch_norm_grad_c5": "`size(scale) = dim(operand, feature_index)`",
               }))


# ----------------------------------------------------------------------------------------
# Cholesky
# ----------------------------------------------------------------------------------------
def _matrix_operand(chk, name: str, s: Shape, types=LINALG_TYPES, what=_LINALG_WHAT, *, cids: tuple):
    """`cids`: the ids of (the input's kind and element type, its rank)."""
    kind, rank = cids
    chk.array(name, s, cid=kind)
    chk.element_type(name, s, types, what, cid=kind)
    if s.rank < 2:
        chk.fail(name, "must have rank >= 2 (a matrix or a batch of matrices)", s, cid=rank)


def _cholesky_infer(chk, a, lower=True):
    _matrix_operand(chk, "a", a, cids=("cholesky_i1", "cholesky_c2"))
    if a.dims[-1] != a.dims[-2]:
        chk.fail("a", "must have square minor two dimensions (equal sizes)", a, cid="cholesky_c3")
    return a


def read_triangle(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrix defined by one triangle of `a` (the other triangle is ignored)."""
    a = _wide(a)
    t = np.tril(a) if lower else np.triu(a)
    d = np.diagonal(t, axis1=-2, axis2=-1)
    h = t + np.conj(np.swapaxes(t, -1, -2))
    idx = np.arange(a.shape[-1])
    h[..., idx, idx] = d.real if a.dtype.kind == "c" else d
    return h


def _cholesky_ref(a, lower=True, *, result):
    """Column-by-column Cholesky-Crout in float64/complex128 (NaNs where a is not positive definite);
    the triangle not returned is zero."""
    h = read_triangle(a, lower)
    n = h.shape[-1]
    L = np.zeros_like(h)
    with np.errstate(all="ignore"):
        for j in range(n):
            s = h[..., j, j] - np.sum(L[..., j, :j] * np.conj(L[..., j, :j]), axis=-1)
            d = np.sqrt(s.real) if h.dtype.kind == "c" else np.sqrt(s)
            L[..., j, j] = d
            below = h[..., j + 1:, j] - np.einsum("...ik,...k->...i", L[..., j + 1:, :j], np.conj(L[..., j, :j]))
            L[..., j + 1:, j] = below / d[..., None]
    out = L if lower else np.conj(np.swapaxes(L, -1, -2))
    return out.astype(result.dtype)


register(OpDef("Cholesky", (Operand("a"), Attr("lower", Bool(), True)),
               _cholesky_infer, _cholesky_ref, "linalg_ops", "Cholesky",
               doc="Cholesky factor of (a batch of) Hermitian positive definite matrices",
               constraints={
                   "cholesky_i1": "a is a floating-point or complex array",
                   "cholesky_c2": "`2 <= rank(a)`",
                   "cholesky_c3": "`dim(a, -2) = dim(a, -1)`",
               }))


# ----------------------------------------------------------------------------------------
# TriangularSolve
# ----------------------------------------------------------------------------------------
def _trsolve_infer(chk, a, b, left_side, lower, unit_diagonal, transpose_a):
    _matrix_operand(chk, "a", a, TRSOLVE_TYPES, _TRSOLVE_WHAT,
                    cids=("triangular_solve_i1", "triangular_solve_c2"))
    _matrix_operand(chk, "b", b, TRSOLVE_TYPES, _TRSOLVE_WHAT,
                    cids=("triangular_solve_i2", "triangular_solve_c2"))
    chk.same_element_type("a", a, "b", b, cid="triangular_solve_c1")
    if a.rank != b.rank:
        chk.fail("b", f"must have the rank of a ({a})", b, cid="triangular_solve_c2")
    if a.dims[-1] != a.dims[-2]:
        chk.fail("a", "must have square minor two dimensions ([..., M, M])", a, cid="triangular_solve_c3")
    m = a.dims[-1]
    shared = b.dims[-2] if left_side else b.dims[-1]
    if shared != m:
        where = "[..., M, K] (left_side)" if left_side else "[..., K, M] (not left_side)"
        chk.fail("b", f"must have shape {where} with M = {m} from a", b, cid="triangular_solve_c3")
    if a.dims[:-2] != b.dims[:-2]:
        chk.fail("b", f"must have the batch dimensions of a {list(a.dims[:-2])}", b,
                 cid="triangular_solve_c3")
    return b


def op_a(a: np.ndarray, lower: bool, unit_diagonal: bool, transpose_a: Transpose) -> np.ndarray:
    """op(a) in float64/complex128, built from the triangle the spec says is read."""
    a = _wide(a)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    if transpose_a is Transpose.TRANSPOSE:
        t = np.swapaxes(t, -1, -2)
    elif transpose_a is Transpose.ADJOINT:
        t = np.conj(np.swapaxes(t, -1, -2))
    return t


def _substitute(t: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve t x = b for triangular t (lower or upper, found from its zeros) by substitution."""
    m = t.shape[-1]
    upper = not np.any(np.tril(t, -1))
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype=b.dtype)
    order = range(m - 1, -1, -1) if upper else range(m)
    with np.errstate(all="ignore"):
        for i in order:
            s = b[..., i, :] - np.einsum("...k,...kc->...c", t[..., i, :], x)
            x[..., i, :] = s / t[..., i, i][..., None]
    return x


def _trsolve_ref(a, b, left_side, lower, unit_diagonal, transpose_a, *, result):
    t = op_a(a, lower, unit_diagonal, transpose_a)
    bw = _wide(b)
    if left_side:                         # op(a) x = b
        x = _substitute(t, bw)
    else:                                 # x op(a) = b  <=>  op(a)^T x^T = b^T
        x = np.swapaxes(_substitute(np.swapaxes(t, -1, -2), np.swapaxes(bw, -1, -2)), -1, -2)
    return x.astype(result.dtype)


register(OpDef("TriangularSolve",
               (Operand("a"), Operand("b"), Attr("left_side", Bool()), Attr("lower", Bool()),
                Attr("unit_diagonal", Bool()), Attr("transpose_a", kind_for(Transpose))),
               _trsolve_infer, _trsolve_ref, "linalg_ops", "TriangularSolve",
               doc="solve op(a) x = b (left_side) or x op(a) = b for triangular a",
               constraints={
                   "triangular_solve_i1": "a is a floating-point or complex array",
                   "triangular_solve_i2": "b is a floating-point or complex array",
                   "triangular_solve_c1": "`baseline_element_type(a) = baseline_element_type(b)`",
                   "triangular_solve_c2": "`2 <= rank(a) = rank(b) = R`",
                   "triangular_solve_c3": "a is [..., M, M]; b is [..., M, K] (left_side) or [..., K, "
                                          "M], with a's batch dimensions",
               }))


# ----------------------------------------------------------------------------------------
# Fft
# ----------------------------------------------------------------------------------------
_REAL_OF = {C64: F32, C128: F64}
_COMPLEX_OF = {F32: C64, F64: C128}


def _fft_infer(chk, operand, fft_type, fft_length):
    chk.array("operand", operand, cid="fft_i1")
    k = len(fft_length)
    if not 1 <= k <= 3:
        chk.fail("fft_length", "must have 1, 2 or 3 entries (FFT of rank 1-3)", list(fft_length),
                 cid="fft_c3")
    chk.non_negative("fft_length", fft_length, cid="spec:Fft")
    if operand.rank < k:
        chk.fail("operand", f"must have at least the rank of the FFT ({k})", operand, cid="fft_c1")
    inner = operand.dims[-k:]
    et = operand.element_type
    if fft_type in (FftType.FFT, FftType.IFFT, FftType.IRFFT):
        if et not in (C64, C128):
            chk.fail("operand", f"must have complex (C64 or C128) element type for {fft_type.name}", operand,
                     cid="fft_c2")
    else:
        if et not in (F32, F64):
            chk.fail("operand", "must have F32 or F64 element type for RFFT", operand, cid="fft_c2")
    if fft_type in (FftType.FFT, FftType.IFFT, FftType.RFFT):
        if tuple(inner) != tuple(fft_length):
            chk.fail("fft_length", f"must match the innermost dimensions of operand {list(inner)} "
                     f"for {fft_type.name}", list(fft_length),
                     cid="fft_c4" if fft_type is FftType.RFFT else "spec:Fft")
        if fft_type is FftType.RFFT:
            n = fft_length[-1]
            return Shape(_COMPLEX_OF[et], operand.dims[:-1] + ((n // 2 + 1) if n else 0,))
        return operand
    # IRFFT
    if tuple(inner[:-1]) != tuple(fft_length[:-1]):
        chk.fail("fft_length", f"must match all but the innermost of the innermost dimensions of operand "
                 f"{list(inner)} for IRFFT", list(fft_length), cid="fft_c5")
    n = fft_length[-1]
    want = (n // 2 + 1) if n else 0
    if inner[-1] != want:
        chk.fail("operand", f"must have innermost dimension fft_length[-1] // 2 + 1 = {want} for IRFFT",
                 operand, cid="fft_c5")
    return Shape(_REAL_OF[et], operand.dims[:-1] + (n,))


def _fft_ref(operand, fft_type, fft_length, *, result):
    x = _wide(operand)
    k = len(fft_length)
    axes = tuple(range(x.ndim - k, x.ndim))
    if result.size == 0 or x.size == 0:
        return np.zeros(result.dims, result.dtype)
    if fft_type is FftType.FFT:
        y = np.fft.fftn(x, axes=axes)
    elif fft_type is FftType.IFFT:
        y = np.fft.ifftn(x, axes=axes)
    elif fft_type is FftType.RFFT:
        y = np.fft.rfftn(x, s=fft_length, axes=axes)
    else:
        y = np.fft.irfftn(x, s=fft_length, axes=axes)
    return y.astype(result.dtype)


register(OpDef("Fft", (Operand("operand"), Attr("fft_type", kind_for(FftType)), Attr("fft_length", Ints())),
               _fft_infer, _fft_ref, "linalg_ops", "Fft",
               doc="forward/inverse complex and real FFTs over the 1-3 innermost axes",
               constraints={
                   "fft_i1": "`operand` is a tensor of floating-point or complex type",
                   "fft_c1": "`size(fft_length) <= rank(operand)`",
                   "fft_c2": "operand is complex for FFT, IFFT and IRFFT, F32 or F64 for RFFT",
                   "fft_c3": "`1 <= size(fft_length) <= 3`",
                   "fft_c4": "the innermost dimensions of a real operand (RFFT) are fft_length",
                   "fft_c5": "IRFFT: operand's innermost dimensions are fft_length but the last, which"
                             " is fft_length[-1] // 2 + 1",
                   "spec:Fft": "fft_length is not negative; FFT and IFFT: the innermost dimensions of "
                               "operand are fft_length",
               }))
