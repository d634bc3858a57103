"""One small example of every registered op, for the tests that must touch every op (text round
trip, CUDA / ROCm artifacts per family).

`example(b, opdef)` builds the op in Builder `b` (creating the parameters it needs) and returns
its handle.  Ops whose arguments are only operands and defaulted attributes are built
generically: the first element type (and shape) the op's shape rule accepts.  Every other op
needs an entry in EXAMPLES; an op without one fails `example()` with `MissingExample`, naming
the op, so an op added to the registry cannot slip past these tests.
"""
from __future__ import annotations

import numpy as np

import xlair as xla
from xlair import ops as O
from xlair.dialect.core import all_ops
from xlair.dialect.types import (BF16, C64, F32, PRED, S32, U32, U64, Shape)

_CDN = xla.ConvolutionDimensionNumbers
NHWC = _CDN(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))


class MissingExample(LookupError):
    pass


def param(b: xla.Builder, shape: Shape, name: str = ""):
    """A new parameter of `b`, numbered after the existing ones."""
    n = getattr(b, "_example_params", 0)
    b._example_params = n + 1
    return b.parameter(n, shape, name or f"p{n}")


def scalar_comp(op: str, et=F32, n: int = 2) -> xla.Computation:
    c = xla.Builder(f"{op}_{et.name}")
    ps = [c.parameter(i, Shape(et, ())) for i in range(n)]
    getattr(O, op)(*ps)
    return c.build()


def _comp(name, shapes, fn) -> xla.Computation:
    c = xla.Builder(name)
    ps = [c.parameter(i, s) for i, s in enumerate(shapes)]
    fn(c, *ps)
    return c.build()


S = Shape
F23 = S(F32, (2, 3))
ADD = scalar_comp("add")
GE = scalar_comp("ge")

EXAMPLES = {
    # -- shape ------------------------------------------------------------------------------
    "broadcast": lambda b: O.broadcast(param(b, S(F32, (3,))), [2]),
    "broadcast_in_dim": lambda b: O.broadcast_in_dim(param(b, S(F32, (3,))), [2, 3], [1]),
    "collapse": lambda b: O.collapse(param(b, S(F32, (2, 3, 4))), [1, 2]),
    "concatenate": lambda b: O.concatenate([param(b, F23), param(b, F23)], 0),
    "constant": lambda b: O.constant(b, np.array([[1.5, -2.0], [0.0, 3.25]], np.float32)),
    "get_tuple_element": lambda b: O.get_tuple_element(param(b, S.tuple([F23, S(S32, ())])), 1),
    "iota": lambda b: O.iota(b, S(S32, (2, 4)), 1),
    "pad": lambda b: O.pad(param(b, F23), param(b, S(F32, ())), xla.PaddingConfig([(1, 0, 0), (0, 2, 1)])),
    "reshape": lambda b: O.reshape(param(b, F23), [3, 2]),
    "rev": lambda b: O.rev(param(b, F23), [1]),
    "slice": lambda b: O.slice(param(b, F23), [0, 1], [2, 3], [1, 1]),
    "transpose": lambda b: O.transpose(param(b, F23), [1, 0]),
    "tuple": lambda b: O.tuple(b, [param(b, F23), param(b, S(S32, ()))]),
    # -- element-wise with attributes or mixed operand types --------------------------------
    "bitcast_convert_type": lambda b: O.bitcast_convert_type(param(b, F23), U32),
    "convert_element_type": lambda b: O.convert_element_type(param(b, F23), BF16),
    "reduce_precision": lambda b: O.reduce_precision(param(b, F23), 5, 10),
    "select": lambda b: O.select(param(b, S(PRED, (2, 3))), param(b, F23), param(b, F23)),
    "clamp": lambda b: O.clamp(param(b, S(F32, ())), param(b, F23), param(b, S(F32, ()))),
    # -- contraction -------------------------------------------------------------------------
    "dot": lambda b: O.dot(param(b, F23), param(b, S(F32, (3, 4)))),
    "dot_general": lambda b: O.dot_general(param(b, S(F32, (2, 2, 3))), param(b, S(F32, (2, 3, 4))),
                                           xla.DotDimensionNumbers([2], [1], [0], [0])),
    "conv": lambda b: O.conv(param(b, S(F32, (1, 2, 5, 5))), param(b, S(F32, (3, 2, 3, 3))), [1, 1], "SAME"),
    "conv_with_general_padding": lambda b: O.conv_with_general_padding(
        param(b, S(F32, (1, 2, 5))), param(b, S(F32, (3, 2, 2))), [1], [(1, 0)], [1], [2]),
    "conv_general_dilated": lambda b: O.conv_general_dilated(
        param(b, S(F32, (1, 6, 6, 2))), param(b, S(F32, (3, 3, 2, 4))), [2, 2], [(1, 1), (1, 1)], [1, 1],
        [1, 1], NHWC),
    # -- indexing ----------------------------------------------------------------------------
    "dynamic_slice": lambda b: O.dynamic_slice(param(b, F23), [param(b, S(S32, ())), param(b, S(S32, ()))],
                                               [1, 2]),
    "dynamic_update_slice": lambda b: O.dynamic_update_slice(
        param(b, F23), param(b, S(F32, (1, 2))), [param(b, S(S32, ())), param(b, S(S32, ()))]),
    "gather": lambda b: O.gather(param(b, S(F32, (3, 4))), param(b, S(S32, (2, 1))),
                                 xla.GatherDimensionNumbers((1,), (0,), (0,), 1), [1, 4]),
    "scatter": lambda b: O.scatter(param(b, S(F32, (3, 4))), param(b, S(S32, (2, 1))), param(b, S(F32, (2, 4))),
                                   ADD, xla.ScatterDimensionNumbers((1,), (0,), (0,), 1)),
    # -- reduction ---------------------------------------------------------------------------
    "reduce": lambda b: O.reduce(param(b, F23), param(b, S(F32, ())), ADD, [1]),
    "reduce_window": lambda b: O.reduce_window(param(b, S(F32, (4, 6))), param(b, S(F32, ())), ADD, [2, 3],
                                               [2, 1], "VALID"),
    "select_and_scatter": lambda b: O.select_and_scatter(
        param(b, S(F32, (4, 6))), GE, [2, 3], [2, 3], "VALID", param(b, S(F32, (2, 2))),
        param(b, S(F32, ())), ADD),
    # -- control flow ------------------------------------------------------------------------
    "call": lambda b: O.call(scalar_comp("mul"), [param(b, S(F32, ())), param(b, S(F32, ()))]),
    "map": lambda b: O.map([param(b, F23), param(b, F23)], ADD, [0, 1]),
    "sort": lambda b: O.sort([param(b, S(F32, (5,))), param(b, S(S32, (5,)))],
                             _comp("lt", [S(F32, ()), S(F32, ()), S(S32, ()), S(S32, ())],
                                   lambda c, x, y, _i, _j: O.lt(x, y)), 0),
    "while": lambda b: O.while_(
        _comp("cond", [S.tuple([S(S32, ()), S(F32, (3,))])],
              lambda c, s: O.lt(O.get_tuple_element(s, 0), O.constant(c, np.int32(4)))),
        _comp("body", [S.tuple([S(S32, ()), S(F32, (3,))])],
              lambda c, s: O.tuple(c, [O.add(O.get_tuple_element(s, 0), O.constant(c, np.int32(1))),
                                       O.mul(O.get_tuple_element(s, 1), O.get_tuple_element(s, 1))])),
        O.tuple(b, [param(b, S(S32, ())), param(b, S(F32, (3,)))])),
    "conditional": lambda b: O.conditional(
        param(b, S(PRED, ())), param(b, S(F32, ())), _comp("neg", [S(F32, ())], lambda c, x: O.neg(x)),
        param(b, S(F32, ())), _comp("abs", [S(F32, ())], lambda c, x: O.abs(x))),
    # -- dynamic sizes -----------------------------------------------------------------------
    "get_dimension_size": lambda b: O.get_dimension_size(param(b, F23), 1),
    "set_dimension_size": lambda b: O.set_dimension_size(param(b, F23), param(b, S(S32, ())), 1),
    # -- linear algebra, FFT -----------------------------------------------------------------
    "cholesky": lambda b: O.cholesky(param(b, S(F32, (3, 3)))),
    "triangular_solve": lambda b: O.triangular_solve(param(b, S(F32, (3, 3))), param(b, S(F32, (3, 2))),
                                                     True, True, False, xla.Transpose.NO_TRANSPOSE),
    "fft": lambda b: O.fft(param(b, S(C64, (2, 6))), xla.FftType.FFT, [6]),   # 8 | n crashes IREE on GPUs
    "batch_norm_training": lambda b: O.batch_norm_training(param(b, S(F32, (2, 3, 4))), param(b, S(F32, (4,))),
                                                           param(b, S(F32, (4,))), 1e-3, 2),
    "batch_norm_inference": lambda b: O.batch_norm_inference(
        param(b, S(F32, (2, 3, 4))), param(b, S(F32, (4,))), param(b, S(F32, (4,))), param(b, S(F32, (4,))),
        param(b, S(F32, (4,))), 1e-3, 2),
    "batch_norm_grad": lambda b: O.batch_norm_grad(
        param(b, S(F32, (2, 3, 4))), param(b, S(F32, (4,))), param(b, S(F32, (4,))), param(b, S(F32, (4,))),
        param(b, S(F32, (2, 3, 4))), 1e-3, 2),
    # -- random ------------------------------------------------------------------------------
    "rng_bit_generator": lambda b: O.rng_bit_generator(xla.RandomAlgorithm.RNG_THREE_FRY,
                                                       param(b, S(U64, (2,))), S(U32, (2, 3))),
    "rng_uniform": lambda b: O.rng_uniform(param(b, S(F32, ())), param(b, S(F32, ())), S(F32, (2, 3))),
    "rng_normal": lambda b: O.rng_normal(param(b, S(F32, ())), param(b, S(F32, ())), S(F32, (2, 3))),
    # -- side effects and collectives -----------------------------------------------------------
    "after_all": lambda b: O.after_all(b, [O.after_all(b, []), param(b, S.token())]),
    "custom_call": lambda b: O.custom_call("myfunc", [param(b, S(F32, (2,))), param(b, F23)], S(F32, (3, 3))),
    "infeed": lambda b: O.infeed(b, S.tuple([F23, S(S32, ())]), token=param(b, S.token())),
    "outfeed": lambda b: O.outfeed(param(b, F23), token=param(b, S.token())),
    "send": lambda b: O.send(param(b, F23), 7, token=param(b, S.token())),
    "recv": lambda b: O.recv(b, F23, 7),
    "replica_id": lambda b: O.replica_id(b),
    "all_reduce": lambda b: O.all_reduce(param(b, F23), ADD, [[0, 1]], 3),
    "all_gather": lambda b: O.all_gather(param(b, F23), 1, 2),
    "all_to_all": lambda b: O.all_to_all(param(b, S(F32, (2, 4))), 1, 0, 2),
    "collective_permute": lambda b: O.collective_permute(param(b, F23), [(0, 1), (1, 0)]),
}

#: element types tried, in order, for ops built generically (the shape rule picks).
_GENERIC_TYPES = (F32, S32, PRED, C64, U32)


def _generic(b, d):
    """Operands of one shape and element type, defaulted attributes: the first element type the
    shape rule accepts; None when no plain form fits."""
    if d.takes_builder or any(not (p.kind == "operand" or (p.kind == "attr" and p.optional))
                              for p in d.params):
        return None
    fn = getattr(O, python_name(d))
    n = sum(p.kind == "operand" for p in d.params)
    for et in _GENERIC_TYPES:
        trial = xla.Builder("trial")
        try:
            fn(*[trial.parameter(i, S(et, (2, 3))) for i in range(n)])
        except xla.XlaError:
            continue
        return fn(*[param(b, S(et, (2, 3))) for _ in range(n)])
    return None


def python_name(d) -> str:
    from xlair._opgen import python_name as pn
    return pn(d)


def example(b: xla.Builder, d):
    """Build an example of op record `d` in `b`; returns its handle."""
    if d.name in EXAMPLES:
        return EXAMPLES[d.name](b)
    h = _generic(b, d)
    if h is None:
        raise MissingExample(f"no example of '{d.mlir_name}' in tests/op_examples.py (it takes "
                             f"{', '.join(f'{p.name}:{p.kind}' for p in d.params)}): add one to EXAMPLES")
    return h


def example_computation(d) -> xla.Computation:
    b = xla.Builder(f"example_{d.name}")
    example(b, d)
    return b.build()


def family_computation(family: str, exclude=()) -> xla.Computation:
    """One computation holding an example of every op of a family (a tuple of their results)."""
    b = xla.Builder(f"family_{family}")
    outs = [example(b, d) for d in all_ops() if d.family == family and d.name not in exclude]
    O.tuple(b, outs)
    return b.build()


def family_ops(family: str, exclude=()) -> list[str]:
    return [d.mlir_name for d in all_ops() if d.family == family and d.name not in exclude]


def example_inputs(comp: xla.Computation, seed: int = 0) -> list:
    """Random inputs for a computation's parameters: positive values (logs and square roots stay
    real), square float matrices symmetric positive definite (Cholesky, TriangularSolve)."""
    from xlair_testing import random_array
    rng = np.random.default_rng(seed)

    def one(s):
        if s.is_tuple:
            return tuple(one(t) for t in s.tuple_shapes)
        if s.element_type.is_float and s.rank == 2 and s.dims[0] == s.dims[1]:
            a = rng.uniform(-1, 1, s.dims)
            return (a @ a.T + s.dims[0] * np.eye(s.dims[0])).astype(s.dtype)
        return random_array(s.element_type, s.dims, rng, "positive")
    return [one(s) for s in comp.parameter_shapes]


def families() -> list[str]:
    return sorted({d.family for d in all_ops()})
