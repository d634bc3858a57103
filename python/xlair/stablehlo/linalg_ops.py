"""Converters of the numerical library: triangular_solve, cholesky, fft, batch_norm_*.
"""
from __future__ import annotations

from xlair.dialect.attrs import FftType, Transpose
from xlair.dialect.ir import ir

from .attrs import _bool, _enum, _ints
from .scope import converter


# -- numerical library -------------------------------------------------------------------------
@converter("stablehlo.triangular_solve")
def _c_trsolve(s, op):
    return [s.emit("triangular_solve", a=s.get(op.operands[0]), b=s.get(op.operands[1]),
                   left_side=_bool(op, "left_side", False), lower=_bool(op, "lower", False),
                   unit_diagonal=_bool(op, "unit_diagonal", False),
                   transpose_a=Transpose[_enum(op.attributes["transpose_a"])])]


@converter("stablehlo.cholesky")
def _c_cholesky(s, op):
    return [s.emit("cholesky", a=s.get(op.operands[0]), lower=_bool(op, "lower", False))]


@converter("stablehlo.fft")
def _c_fft(s, op):
    return [s.emit("fft", operand=s.get(op.operands[0]), fft_type=FftType[_enum(op.attributes["fft_type"])],
                   fft_length=_ints(op.attributes["fft_length"]))]


def _bn_attrs(op):
    return dict(epsilon=ir.FloatAttr(op.attributes["epsilon"]).value,
                feature_index=ir.IntegerAttr(op.attributes["feature_index"]).value)


@converter("stablehlo.batch_norm_training")
def _c_bn_training(s, op):
    x, scale, offset = (s.get(v) for v in op.operands)
    return s.unpack(s.emit("batch_norm_training", operand=x, scale=scale, offset=offset, **_bn_attrs(op)), 3)


@converter("stablehlo.batch_norm_inference")
def _c_bn_inference(s, op):
    x, scale, offset, mean, var = (s.get(v) for v in op.operands)
    return [s.emit("batch_norm_inference", operand=x, scale=scale, offset=offset, mean=mean, variance=var,
                   **_bn_attrs(op))]


@converter("stablehlo.batch_norm_grad")
def _c_bn_grad(s, op):
    x, scale, mean, var, grad = (s.get(v) for v in op.operands)
    return s.unpack(s.emit("batch_norm_grad", operand=x, scale=scale, mean=mean, variance=var, grad_output=grad,
                           **_bn_attrs(op)), 3)
