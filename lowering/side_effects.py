"""Lowering of the side-effecting ops (mirrors dialect/ops/side_effects.py) and the host call
they all share (lowering/collectives.py uses it too).

A token becomes a `tensor<i1>` (always false): side-effecting calls take it and give a new one,
so a token orders them by data dependence; AfterAll joins tokens with a linalg `andi`.

`host_call(lw)` replaces an op by `func.call @xlair_host.<op>_<k>(operand leaves) -> result
leaves` of a private declaration (an import of the host module `xlair_host`, one function per
call site k, python/xlair/host.py).  Tuples travel as their leaves.  The call site is described
in the module attribute `xlair.host_calls` (a JSON string per site: op, name, attributes,
operand and result shapes), which the compiler puts into the executable's signature.  Calls of
imports have unknown side effects: MLIR and IREE keep them, in program order.
"""
from __future__ import annotations

import json

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.ir import arith, func, ir
from xlair.dialect.types import Shape

from .registry import affine_map, builtin_leaves, empty, from_builtin_leaves, generic, lowers, module_of

HOST_MODULE = "xlair_host"
HOST_CALLS_ATTR = "xlair.host_calls"


def _encode(v):
    if isinstance(v, Shape):
        return {"$shape": v.mlir_str()}
    if isinstance(v, (tuple, list)):
        return [_encode(x) for x in v]
    return v


def host_call(lw, extra: dict | None = None, op_name: str | None = None):
    """Replace the matched op by a call of a new host function; returns its xla-typed result."""
    op = lw.op
    module = module_of(op)
    attrs = module.attributes
    calls = list(ir.ArrayAttr(attrs[HOST_CALLS_ATTR])) if HOST_CALLS_ATTR in attrs else []
    k = len(calls)
    name = f"{op_name or lw.opdef.name}_{k}"
    operands, leaves = [], []
    for p in lw.opdef.operand_params:
        v = lw.args[p.name]
        vs = v if p.variadic else [v]
        shapes = [Shape.from_mlir(x.type) for x in vs]
        operands.append([p.name, [s.mlir_str() for s in shapes] if p.variadic else shapes[0].mlir_str()])
        for x, s in zip(vs, shapes):
            leaves.extend(builtin_leaves(x, s))
    out = lw.result_shape
    out_types = [s.builtin_mlir() for s in out.leaves()]
    desc = {"op": op_name or lw.opdef.name, "name": name,
            "attrs": {p.name: _encode(lw.args[p.name]) for p in lw.opdef.attr_params},
            "operands": operands, "result": out.mlir_str()}
    desc.update(extra or {})
    body = module.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        decl = func.FuncOp(f"{HOST_MODULE}.{name}", ir.FunctionType.get([v.type for v in leaves], out_types))
        decl.attributes["sym_visibility"] = ir.StringAttr.get("private")
    attrs[HOST_CALLS_ATTR] = ir.ArrayAttr.get(calls + [ir.StringAttr.get(json.dumps(desc))])
    call = func.CallOp(out_types, ir.FlatSymbolRefAttr.get(f"{HOST_MODULE}.{name}"), leaves)
    return from_builtin_leaves(list(call.results), out)


def host_calls_of(module: ir.Module) -> list[dict]:
    """The call-site descriptions a lowered module carries."""
    attrs = module.operation.attributes
    if HOST_CALLS_ATTR not in attrs:
        return []
    return [json.loads(ir.StringAttr(a).value) for a in ir.ArrayAttr(attrs[HOST_CALLS_ATTR])]


def token_constant() -> ir.Value:
    t = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    return arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.BoolAttr.get(False)))


@lowers("xla.after_all")
def lower_after_all(lw):
    toks = lw.value("operands")
    if not toks:
        return token_constant()
    if len(toks) == 1:
        return toks[0]
    out = empty(Shape.token().builtin_mlir())
    scalar_map = affine_map(0, [])

    def body(*bits):
        acc = bits[0]
        for b in bits[1:-1]:
            acc = arith.andi(acc, b)
        return acc
    return generic(toks, [scalar_map] * len(toks), [out], [scalar_map], [], body)[0]


@lowers("xla.custom_call", "xla.infeed", "xla.outfeed", "xla.send", "xla.recv")
def lower_host_op(lw):
    return host_call(lw)
