"""The importer's state: `_Importer` (the functions of one module, each made a Computation
once), `_Scope` (one block rebuilt into one Builder) and the converter registry that `_Scope`
dispatches through (CONVERTERS, filled by `@converter` in the family modules; XLA_LACKS, filled
by `@xla_lacks`), with what is not supported and why.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from xlair.dialect.checks import XlaError
from xlair.dialect.core import REGISTRY
from xlair.dialect.ir import ir
from xlair.dialect.types import Shape

from ..builder import Builder, Op
from ..computation import Computation
from .attrs import Unsupported, _loc, constant_value, shape_of


# ----------------------------------------------------------------------------------------
# the importer
# ----------------------------------------------------------------------------------------
class _Importer:
    """Turns the functions of one module into Computations (each function once)."""

    def __init__(self, funcs: dict, num_partitions: int = 1, num_replicas: int | None = None):
        self.funcs = funcs
        self.num_partitions = num_partitions
        self.num_replicas = num_replicas
        self.done: dict[str, Computation] = {}
        self.active: list[str] = []

    def function(self, name: str) -> Computation:
        if name in self.done:
            return self.done[name]
        if name in self.active:
            raise Unsupported(f"@{name} calls itself (through {' -> '.join('@' + n for n in self.active)}); "
                              "XLA computations cannot recurse")
        f = self.funcs.get(name)
        if f is None:
            raise XlaError(f"func.call: no function @{name} in the module")
        if not f.regions[0].blocks:
            raise XlaError(f"@{name} is only declared (no body); xlair needs its definition")
        self.active.append(name)
        try:
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            block = f.regions[0].blocks[0]
            b = Builder(name)
            try:
                shapes = [shape_of(t, f"@{name} argument {i}") for i, t in enumerate(ftype.inputs)]
            except XlaError as e:
                loc = _loc(f)
                raise type(e)(e.message, op=e.op, location=f"{loc[0]}:{loc[1]}" if loc else None) from None
            params = [b.parameter(i, s) for i, s in enumerate(shapes)]
            scope = _Scope(self, b, dict(zip(block.arguments, params)), f"@{name}")
            results = scope.run(block)
            # no results: XLA's empty tuple (JAX compiles such functions: a jitted function
            # whose outputs are all its inputs or constants, effects alone)
            root = results[0] if len(results) == 1 else scope.emit("tuple", elements=results)
            comp = b.build(root, verify_ops=False)
        finally:
            self.active.pop()
        self.done[name] = comp
        return comp


class _Scope:
    """One block being rebuilt into one Builder: StableHLO values -> xla Op handles."""

    def __init__(self, importer: _Importer, builder: Builder, env: dict, what: str,
                 parent: "_Scope | None" = None, inline_calls: bool = False):
        self.importer, self.b, self.env, self.what = importer, builder, env, what
        self.parent = parent
        # in a scalar computation, calls are inlined: xlair lowers those computations to
        # straight-line scalar code inside the op that uses them
        self.inline_calls = inline_calls

    # -- values --------------------------------------------------------------------------
    def get(self, v: ir.Value) -> Op:
        op = self.env.get(v)
        if op is not None:
            return op
        owner = v.owner
        if isinstance(owner, ir.OpView) or isinstance(owner, ir.Operation):
            if owner.operation.name == "stablehlo.constant":   # re-made where it is used
                out = self._constant(owner.operation)
                self.env[v] = out
                return out
        raise Unsupported(f"a value defined outside the region of '{self.what}' is used inside it; "
                          "XLA's scalar computations cannot capture values", op=self.what)

    def emit(self, name: str, **args) -> Op:
        opdef = REGISTRY.get(name)
        if opdef is None:
            raise Unsupported(f"xla.{name} does not exist in xlair (yet)", op=name)
        return self.b.add(opdef, args)

    def unpack(self, op: Op, n: int) -> list:
        if n == 0:
            return []
        if n == 1:
            return [op]
        return [self.emit("get_tuple_element", tuple_data=op, index=i) for i in range(n)]

    def pack(self, ops: list) -> Op:
        """One value as itself; none or several as a tuple."""
        return ops[0] if len(ops) == 1 else self.emit("tuple", elements=list(ops))

    # -- blocks --------------------------------------------------------------------------
    def run(self, block: ir.Block) -> list:
        """Convert the block's ops; returns the Op handles of its terminator's operands."""
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "stablehlo.return"):
                return [self.get(v) for v in op.operands]
            self.convert(op)
        raise XlaError(f"the block of {self.what} has no terminator")

    def convert(self, op: ir.Operation) -> None:
        name = op.name
        fn = CONVERTERS.get(name)
        start = len(self.b._nodes)
        try:
            if fn is None:
                raise Unsupported(_unsupported_reason(name), op=name)
            lacks = XLA_LACKS.get(name)
            why = lacks(op) if lacks else None
            if why:
                raise Unsupported(f"'{name}' {why}", op=name)
            outs = fn(self, op)
            if len(outs) != len(op.results):
                raise XlaError(f"made {len(outs)} values for {len(op.results)} results")
            for i, (res, out) in enumerate(zip(op.results, outs)):
                want = shape_of(res.type, f"result {i}")
                if out.shape != want:
                    raise XlaError(f"result {i} is {want} in StableHLO but {out.shape} by the xla op's "
                                   "shape rule")
                self.env[res] = out
        except XlaError as e:
            if getattr(e, "located", False):       # raised (and located) by an op nested in a region
                raise
            cls = Unsupported if isinstance(e, Unsupported) else XlaError
            loc = _loc(op)
            err = cls(_prefix(name, e.message), op=name if cls is Unsupported else (e.op or name),
                      param=e.param, location=f"{loc[0]}:{loc[1]}" if loc else None)
            err.located = True
            raise err from None
        loc = _loc(op)
        if loc:
            for node in self.b._nodes[start:]:
                node.loc = loc

    def _constant(self, op: ir.Operation) -> Op:
        value = constant_value(op)
        if value.dtype.kind == "c":
            return self.emit("complex", lhs=self.emit("constant", value=np.array(value.real)),
                             rhs=self.emit("constant", value=np.array(value.imag)))
        return self.emit("constant", value=value)

    def constant_operand(self, v: ir.Value, what: str) -> np.ndarray:
        """The value of an operand that must be a constant (shape operands of dynamic ops)."""
        owner = v.owner
        if (isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "stablehlo.constant"):
            return constant_value(owner.operation)
        raise Unsupported(f"{what} is not a constant; xlair's shapes are static")

    # -- regions -------------------------------------------------------------------------
    def scalar_computation(self, region: ir.Region, what: str) -> Computation:
        """A region of scalar parameters (reduce, sort, scatter, map ...) as a Computation."""
        block = _single_block(region, what)
        b = Builder(what.replace("stablehlo.", ""))
        params = [b.parameter(i, shape_of(a.type, f"{what} region argument {i}"))
                  for i, a in enumerate(block.arguments)]
        sub = _Scope(self.importer, b, dict(zip(block.arguments, params)), what, self, inline_calls=True)
        res = sub.run(block)
        if not res:
            raise XlaError(f"the region of {what} returns no value")
        return b.build(sub.pack(res), verify_ops=False)

    def threaded_computation(self, region: ir.Region, what: str, state: list, captures: list,
                             pack_result: Callable | None) -> Computation:
        """A region whose parameter is one value: `state` shapes (bound to the block's
        arguments) then `captures` (values of the enclosing scope), a tuple unless one value.
        `pack_result(sub, results, params)` makes the root from the returned values."""
        block = _single_block(region, what)
        b = Builder(what.replace("stablehlo.", ""))
        shapes = [s for s in state] + [self.get(v).shape for v in captures]
        single = len(shapes) == 1
        p = b.parameter(0, shapes[0] if single else Shape.tuple(shapes))
        sub = _Scope(self.importer, b, {}, what, self)
        items = [p] if single else [sub.emit("get_tuple_element", tuple_data=p, index=i)
                                    for i in range(len(shapes))]
        if len(block.arguments) != len(state):
            raise XlaError(f"the region of {what} takes {len(block.arguments)} arguments; expected {len(state)}")
        for a, it in zip(block.arguments, items):
            sub.env[a] = it
        for v, it in zip(captures, items[len(state):]):
            sub.env[v] = it
        res = sub.run(block)
        root = pack_result(sub, res, items) if pack_result else sub.pack(res)
        return b.build(root, verify_ops=False)


def _single_block(region: ir.Region, what: str) -> ir.Block:
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise XlaError(f"a region of {what} must have one block; got {len(blocks)}")
    return blocks[0]


def _prefix(name: str, msg: str) -> str:
    return msg if msg.startswith(f"'{name}'") else f"'{name}': {msg}"


def free_values(regions) -> list:
    """Values used inside `regions` but defined outside them (constants excluded: they are
    re-made where they are used), in order of first use."""
    defined, used, order = set(), set(), []

    def walk_region(r):
        for blk in r.blocks:
            for a in blk.arguments:
                defined.add(a)
            for op in blk.operations:
                op = op.operation
                for v in op.operands:
                    if v not in used:
                        used.add(v)
                        order.append(v)
                for res in op.results:
                    defined.add(res)
                for sub in op.regions:
                    walk_region(sub)
    for r in regions:
        walk_region(r)
    out = []
    for v in order:
        if v in defined:
            continue
        owner = v.owner
        if isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "stablehlo.constant":
            continue
        out.append(v)
    return out


# ----------------------------------------------------------------------------------------
# the registry: one converter per StableHLO op
# ----------------------------------------------------------------------------------------
Converter = Callable[[_Scope, ir.Operation], list]
CONVERTERS: dict[str, Converter] = {}


def converter(*names):
    def deco(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return deco


# ----------------------------------------------------------------------------------------
# what is not (yet) supported, and why
# ----------------------------------------------------------------------------------------
#: StableHLO ops with no XLA counterpart at all.
NO_COUNTERPART = {
    "uniform_quantize": "quantized types are not XLA element types",
    "uniform_dequantize": "quantized types are not XLA element types",
    "einsum": "removed from StableHLO; XLA has no Einsum op (use dot_general)",
    "unary_einsum": "removed from StableHLO; XLA has no Einsum op",
    "torch_index_select": "removed from StableHLO; use gather",
    "trace": "removed from StableHLO",
    "cross-replica-sum": "removed from StableHLO",
    "compute_reshape_shape": "a shape computation on dynamic shapes",
    "cstr_reshapable": "a shape constraint on dynamic shapes",
}

#: StableHLO ops valid for operands that XLA's counterpart does not take (-> Unsupported):
#: name -> a function of the op that says why (None when XLA takes it), filled by `@xla_lacks`.
XLA_LACKS: dict[str, Callable[[ir.Operation], str | None]] = {}


def xla_lacks(name: str):
    """Register `fn(op)` as what XLA's counterpart of StableHLO op `name` does not take."""
    def deco(fn):
        XLA_LACKS[name] = fn
        return fn
    return deco


def _unsupported_reason(name: str) -> str:
    short = name.split(".", 1)[1] if name.startswith("stablehlo.") else None
    if short in NO_COUNTERPART:
        return f"'{name}' has no XLA counterpart: {NO_COUNTERPART[short]}"
    if name.startswith("interpreter."):
        return f"'{name}' belongs to StableHLO's reference interpreter, not to StableHLO programs"
    return f"'{name}' has no counterpart in xlair's xla dialect"
