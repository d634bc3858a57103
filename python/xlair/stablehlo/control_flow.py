"""Converters of control flow and calls: sort, map, while, if, case, func.call, composite.
"""
from __future__ import annotations

from xlair.dialect.checks import XlaError
from xlair.dialect.ir import ir
from xlair.dialect.types import Shape

from ..builder import Builder, Op
from ..computation import Computation
from .attrs import Unsupported, _ints
from .scope import _Scope, _single_block, converter, free_values


# -- control flow -----------------------------------------------------------------------------
@converter("stablehlo.sort")
def _c_sort(s, op):
    vals = [s.get(v) for v in op.operands]
    comp = s.scalar_computation(op.regions[0], "stablehlo.sort")
    dim = ir.IntegerAttr(op.attributes["dimension"]).value if "dimension" in op.attributes else -1
    stable = bool(ir.BoolAttr(op.attributes["is_stable"]).value) if "is_stable" in op.attributes else False
    r = s.emit("sort", operands=vals, comparator=comp, dimension=dim, is_stable=stable)
    return s.unpack(r, len(vals))


@converter("stablehlo.map")
def _c_map(s, op):
    comp = s.scalar_computation(op.regions[0], "stablehlo.map")
    return [s.emit("map", operands=[s.get(v) for v in op.operands], computation=comp,
                   dimensions=_ints(op.attributes["dimensions"]), static_operands=[])]


@converter("stablehlo.while")
def _c_while(s, op):
    init = [s.get(v) for v in op.operands]
    n = len(init)
    caps = free_values([op.regions[0], op.regions[1]])
    state = [x.shape for x in init]

    def cond_root(sub, res, items):
        return res[0]

    def body_root(sub, res, items):
        return sub.pack(list(res) + items[n:])      # the captured values ride along unchanged
    cond = s.threaded_computation(op.regions[0], "stablehlo.while", state, caps, cond_root)
    body = s.threaded_computation(op.regions[1], "stablehlo.while", state, caps, body_root)
    r = s.emit("while", condition=cond, body=body, init=s.pack(init + [s.get(v) for v in caps]))
    total = n + len(caps)
    if total == 1:
        return [r]
    return [s.emit("get_tuple_element", tuple_data=r, index=i) for i in range(n)]


def _branches(s, op, index: Op, what: str):
    comps, operands = [], []
    for region in op.regions:
        caps = free_values([region])
        comps.append(s.threaded_computation(region, what, [], caps, None) if caps else
                     _no_arg_branch(s, region, what))
        operands.append(s.pack([s.get(v) for v in caps]) if caps else s.emit("tuple", elements=[]))
    r = s.emit("conditional", branch_index=index, branch_computations=comps, branch_operands=operands)
    return s.unpack(r, len(op.results))


def _no_arg_branch(s, region, what) -> Computation:
    block = _single_block(region, what)
    b = Builder(what.replace("stablehlo.", ""))
    b.parameter(0, Shape.tuple([]))
    sub = _Scope(s.importer, b, {}, what, s)
    res = sub.run(block)
    return b.build(sub.pack(res), verify_ops=False)


@converter("stablehlo.if")
def _c_if(s, op):
    return _branches(s, op, s.get(op.operands[0]), "stablehlo.if")


@converter("stablehlo.case")
def _c_case(s, op):
    return _branches(s, op, s.get(op.operands[0]), "stablehlo.case")


def _call(s, op, name: str):
    if s.inline_calls:
        return _inline(s, op, name)
    comp = s.importer.function(name)
    r = s.emit("call", computation=comp, args=[s.get(v) for v in op.operands])
    return s.unpack(r, len(op.results))


def _inline(s, op, name: str):
    imp = s.importer
    f = imp.funcs.get(name)
    if f is None or not f.regions[0].blocks:
        raise XlaError(f"func.call: no function @{name} with a body in the module")
    if name in imp.active:
        raise Unsupported(f"@{name} calls itself; XLA computations cannot recurse")
    block = f.regions[0].blocks[0]
    imp.active.append(name)
    try:
        sub = _Scope(imp, s.b, dict(zip(block.arguments, [s.get(v) for v in op.operands])), f"@{name}", s,
                     inline_calls=True)
        return sub.run(block)
    finally:
        imp.active.pop()


@converter("func.call")
def _c_call(s, op):
    return _call(s, op, ir.FlatSymbolRefAttr(op.attributes["callee"]).value)


@converter("stablehlo.composite")
def _c_composite(s, op):
    # A composite means its decomposition function.
    return _call(s, op, ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value)
