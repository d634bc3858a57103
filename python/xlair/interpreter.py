"""The numpy reference interpreter: runs any xla module op by op with each record's
`reference`.  It is the oracle of the tests and `--interpret` for users."""
from __future__ import annotations

import numpy as np

from xlair.dialect.checks import XlaError
from xlair.dialect.core import RETURN, location_str, lookup
from xlair.dialect.ir import context, ir, lock
from xlair.dialect.types import Shape

from .computation import Computation
from .values import check_args


def interpret(comp: Computation, *args):
    """Evaluate a computation on host values; tuples come back as Python tuples."""
    sig = comp.program_shape
    vals = check_args(sig.params, args, f"computation {comp.name}")
    with lock, context():
        return _Interp(comp.module).call("main", vals)


class _Interp:
    def __init__(self, module: ir.Module):
        self.funcs = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
                      for op in module.body.operations if op.operation.name == "func.func"}

    def call(self, name: str, args):
        f = self.funcs.get(name)
        if f is None:
            raise XlaError(f"no function @{name} in the module")
        return self.block(f.regions[0].blocks[0], args)

    def function(self, name: str):
        def run(*args):
            return self.call(name, list(args))
        return run

    def region(self, region: ir.Region):
        """A computation region as a Python callable.  With `batch=dims`, a scalar computation
        runs on arrays of shape `dims` at once (every value gains those leading dimensions)."""
        def run(*args, batch=()):
            return self.block(region.blocks[0], list(args), tuple(batch))
        return run

    def block(self, block: ir.Block, args, batch=()):
        env = {a: v for a, v in zip(block.arguments, args)}
        for op in block.operations:
            op = op.operation
            name = op.name
            if name in (RETURN, "func.return"):
                outs = [env[v] for v in op.operands]
                return outs[0] if len(outs) == 1 else tuple(outs)
            env[op.results[0]] = self.op(op, env, batch)
        raise XlaError("block has no terminator")

    def op(self, op: ir.Operation, env, batch=()):
        opdef = lookup(op.name)
        if opdef is None:
            raise XlaError(f"the interpreter does not know '{op.name}'", location=location_str(op.location))
        if opdef.reference is None:
            raise XlaError(f"'{op.name}' has no reference semantics", location=location_str(op.location))
        args = opdef.unpack(op)
        kw = {}
        for p in opdef.params:
            v = args[p.name]
            if p.is_operand:
                kw[p.name] = [env[x] for x in v] if p.variadic else env[v]
            elif p.is_region:
                kw[p.name] = [self.region(r) for r in v] if p.variadic else self.region(v)
            elif p.is_callee:
                kw[p.name] = self.function(v)
            else:
                kw[p.name] = v
        extra = {"interp": self} if getattr(opdef.reference, "wants_interp", False) else {}
        result = _batched(Shape.from_mlir(op.results[0].type), batch)
        try:
            out = opdef.reference(**kw, result=result, **extra)
        except XlaError as e:
            raise e.at(location_str(op.location)) from None
        return _conform(out, result)


def _batched(shape: Shape, batch) -> Shape:
    if not batch:
        return shape
    if shape.is_tuple:
        return Shape.tuple([_batched(s, batch) for s in shape.tuple_shapes])
    return shape if shape.is_token else Shape(shape.element_type, tuple(batch) + shape.dims)


def _conform(v, shape: Shape):
    if shape.is_tuple:
        return tuple(_conform(x, s) for x, s in zip(v, shape.tuple_shapes))
    if shape.is_token:
        return np.zeros((), np.bool_)
    a = np.asarray(v, dtype=shape.dtype)
    if a.shape == shape.dims:
        return a
    if a.size == shape.size:
        return a.reshape(shape.dims)
    return np.broadcast_to(a, shape.dims)   # a constant in a batched scalar computation
