"""Lowering of ReplicaId and the collectives (mirrors dialect/ops/collectives.py).

ReplicaId reads `util.global private mutable @xlair_replica_id : tensor<i32>` (0 until set),
which the runtime sets once per replica's VM context through the exported
`@xlair_set_replica(tensor<i32>)`; it costs no host call.

Each collective is a host call (lowering/side_effects.py `host_call`).  AllReduce describes
its computation for the host: `"computation": "add" | "mul" | "max" | "min" | "and" | "or" | "xor"`
when the region is that one op of its two parameters (numpy, or MPI's Allreduce, does it),
else the text of a module whose @main is the computation (xlair's interpreter runs it on whole
arrays).  CrossReplicaSum is described as an AllReduce with "add".
"""
from __future__ import annotations

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.core import RETURN
from xlair.dialect.ir import func, ir

from .registry import declare_global, lowers
from .side_effects import host_call

REPLICA_GLOBAL = "xlair_replica_id"
SET_REPLICA_FUNCTION = "xlair_set_replica"
_KINDS = {"xla.add": "add", "xla.mul": "mul", "xla.max": "max", "xla.min": "min", "xla.and": "and",
          "xla.or": "or", "xla.xor": "xor"}


def _i32() -> ir.Type:
    return ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))


def ensure_replica_global(op: ir.Operation) -> None:
    t = _i32()
    zero = ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0))
    block = declare_global(op, REPLICA_GLOBAL, t, zero)
    if block is None:
        return
    with ir.Location.unknown(), ir.InsertionPoint(block):
        f = func.FuncOp(SET_REPLICA_FUNCTION, ir.FunctionType.get([t], []))
        entry = f.add_entry_block()
        with ir.InsertionPoint(entry):
            ir.Operation.create("util.global.store", operands=[entry.arguments[0]],
                                attributes={"global": ir.FlatSymbolRefAttr.get(REPLICA_GLOBAL)})
            func.ReturnOp([])


@lowers("xla.replica_id")
def lower_replica_id(lw):
    ensure_replica_global(lw.op)
    return ir.Operation.create("util.global.load", results=[_i32()],
                               attributes={"global": ir.FlatSymbolRefAttr.get(REPLICA_GLOBAL)}).result


def computation_kind(region: ir.Region) -> str | None:
    """'add', 'max', ... when the computation is that one op of its two parameters."""
    block = region.blocks[0]
    ops = [o.operation for o in block.operations]
    if len(ops) != 2 or ops[0].name not in _KINDS or ops[1].name != RETURN:
        return None
    a, b = block.arguments
    args = list(ops[0].operands)
    if len(args) != 2 or not ((args[0] == a and args[1] == b) or (args[0] == b and args[1] == a)):
        return None
    bd = ops[0].attributes["broadcast_dimensions"] if "broadcast_dimensions" in ops[0].attributes else None
    if bd is not None and len(ir.DenseI64ArrayAttr(bd)):
        return None
    if not ops[1].operands[0] == ops[0].results[0]:
        return None
    return _KINDS[ops[0].name]


def computation_text(lw, region: ir.Region) -> str:
    """A module whose @main is a copy of the computation (the region itself stays untouched:
    the pattern driver still tracks its ops)."""
    block = region.blocks[0]
    ops = [o.operation for o in block.operations]
    for o in ops:
        if o.name == "xla.call":
            lw.fail("computation", "must not call other computations (the host runs it alone)", None,
                    show_got=False)
    ins = [a.type for a in block.arguments]
    ret = ops[-1]
    outs = [v.type for v in ret.operands]
    with ir.Location.unknown():
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("main", ir.FunctionType.get(ins, outs))
        entry = f.add_entry_block()
        mapping = list(zip(block.arguments, entry.arguments))

        def remap(v):
            for old, new in mapping:
                if old == v:
                    return new
            return v
        with ir.InsertionPoint(entry):
            for o in ops[:-1]:
                c = o.clone()
                for i, v in enumerate(list(c.operands)):
                    c.operands[i] = remap(v)
                mapping.extend(zip(o.results, c.results))
            func.ReturnOp([remap(v) for v in ret.operands])
    return str(m)


@lowers("xla.all_reduce", scalar_regions=True)
def lower_all_reduce(lw):
    region = lw.args["computation"]
    kind = computation_kind(region)
    return host_call(lw, {"computation": kind or computation_text(lw, region)})


@lowers("xla.cross_replica_sum")
def lower_cross_replica_sum(lw):
    return host_call(lw)


@lowers("xla.all_gather", "xla.all_to_all", "xla.collective_permute")
def lower_collective(lw):
    return host_call(lw)
