"""Converters of random-number ops: rng, rng_bit_generator.
"""
from __future__ import annotations

from xlair.dialect.attrs import RandomAlgorithm
from xlair.dialect.checks import XlaError

from .attrs import _enum, _result_shape
from .scope import converter


@converter("stablehlo.rng")
def _c_rng(s, op):
    a, b = s.get(op.operands[0]), s.get(op.operands[1])
    dist = _enum(op.attributes["rng_distribution"])
    shape = _result_shape(op)
    if dist == "UNIFORM":
        return [s.emit("rng_uniform", a=a, b=b, shape=shape)]
    if dist == "NORMAL":
        return [s.emit("rng_normal", mu=a, sigma=b, shape=shape)]
    raise XlaError(f"rng_distribution must be UNIFORM or NORMAL; got {dist}")


@converter("stablehlo.rng_bit_generator")
def _c_rbg(s, op):
    algo = {"DEFAULT": RandomAlgorithm.RNG_DEFAULT, "THREE_FRY": RandomAlgorithm.RNG_THREE_FRY,
            "PHILOX": RandomAlgorithm.RNG_PHILOX}[_enum(op.attributes["rng_algorithm"])]
    r = s.emit("rng_bit_generator", algorithm=algo, initial_state=s.get(op.operands[0]), shape=_result_shape(op, 1))
    return s.unpack(r, 2)
