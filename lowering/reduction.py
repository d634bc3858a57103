"""Lowering of Reduce: one linalg.reduce over all operands, its body the computation's
scalar code (init values on the left, as the spec says)."""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.ir import ir, linalg

from .registry import empty, extract_scalar, fill, lowers, tuple_of
from .scalar import emit_region


@lowers("xla.reduce", scalar_regions=True)
def lower_reduce(lw):
    shapes = lw.shape("operands")
    inputs = lw.value("operands")
    inits = lw.value("init_values")
    dims = sorted(lw.attr("dimensions"))
    outs = lw.result_shape.leaves()
    accs = [fill(o, extract_scalar(i)) for o, i in zip(outs, inits)]
    n = len(inputs)
    red = linalg.ReduceOp([a.type for a in accs], inputs, accs, dims)
    etypes = [ir.RankedTensorType(v.type).element_type for v in inputs + accs]
    block = red.regions[0].blocks.append(*etypes)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        res = emit_region(lw.args["computation"], args[n:] + args[:n], lw.op.name)
        linalg.YieldOp(res)
    results = list(red.results)
    return results[0] if n == 1 else tuple_of(lw, results)
